"""What a book's saved proof searches cost on disk, gzip (before 2026-12-08) against xz (now).

    python benchmarks/saved_search_size.py checkpoints/books/hex8-l4h64c-v5-own

``book prove`` keeps the solver's table of a search cut short in the book folder
(``book/carried.py``), and the book is committed with them, so each session's rewrite of its searches
is what the repository's history grows by. For every saved search of the book this reads the entries
(as stored, gzip or xz) and compresses the same bytes both ways as ``carried.save`` does now and did
before, with the CPU seconds each took; prints a line per search and the totals, and writes ``--json``
(default ``runs/bench/saved_search_size.json``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import lzma
import platform
import time
from pathlib import Path

from conhex_zero.book import carried


def measure(path: Path) -> dict:
    header, entries = carried.file_parts(path)
    body = json.dumps(header).encode() + b"\n" + entries
    start = time.process_time()
    as_gzip = len(gzip.compress(body, compresslevel=6))
    gzip_seconds = time.process_time() - start
    start = time.process_time()
    packed = lzma.compress(body, preset=6)
    xz_seconds = time.process_time() - start
    start = time.process_time()
    assert lzma.decompress(packed) == body
    return {"file": path.name, "entries": header["entries"], "raw_bytes": len(body), "gzip_bytes": as_gzip,
            "xz_bytes": len(packed), "gzip_seconds": round(gzip_seconds, 2), "xz_seconds": round(xz_seconds, 2),
            "xz_read_seconds": round(time.process_time() - start, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("book", type=Path, help="a book folder with saved searches (searches/*.xz or *.gz)")
    parser.add_argument("--json", default="runs/bench/saved_search_size.json", help="where the results go")
    args = parser.parse_args()
    files = carried.saved_files(args.book)
    if not files:
        raise SystemExit(f"{args.book} has no saved searches ({args.book / carried.FOLDER} is empty or absent)")
    rows = []
    for path in files:
        row = measure(path)
        rows.append(row)
        print(f"{row['file']}: {row['entries']:,} entries, gzip {row['gzip_bytes'] / 1e6:.2f} MB "
              f"({row['gzip_seconds']} CPU s), xz {row['xz_bytes'] / 1e6:.2f} MB ({row['xz_seconds']} CPU s)")
    total = {k: sum(r[k] for r in rows) for k in ("raw_bytes", "gzip_bytes", "xz_bytes")}
    print(f"{len(rows)} searches: gzip {total['gzip_bytes'] / 1e6:.1f} MB, xz {total['xz_bytes'] / 1e6:.1f} MB "
          f"({total['xz_bytes'] / total['gzip_bytes']:.0%} of gzip)")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": platform.processor() or platform.machine(),
                               "python": platform.python_version(), "book": str(args.book),
                               "searches": rows, "total": total}, indent=1) + "\n")
    print(f"written {out}")


if __name__ == "__main__":
    main()

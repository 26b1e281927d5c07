"""What a proof run harvested: a book's exact results against the book as it stood at a commit.

    python benchmarks/proof_harvest.py checkpoints/books/hex8-l4h64c-v5-own --since 00fdf31

A ``book prove`` run on a board whose table is held out (Hex 8x8) is judged by its rule, written and
committed before the run starts; this script reads the book at that commit (``git archive``, the
working tree untouched) and the book now, and reports:

- every position exact now and not then: how many are on the side the old book's value was on (a
  proof against it is a correction: the book's network had it wrong);
- the old book's *decided* claims that an exact result has met since (the margin rule of
  docs/analysis.md, checked where the truth became known): right or wrong, each named by its line;
- openings (one piece) proven since.

Prints them, and writes ``--json`` (default ``runs/bench/proof_harvest.json``).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

from conhex_zero.book.folder import open_book
from conhex_zero.book.prove import key_depth
from conhex_zero.book.store import BookError
from conhex_zero.games.game import parse_game


def book_at(commit: str, folder: Path, into: Path) -> Path:
    """The book folder as committed at ``commit``, extracted under ``into``; SystemExit saying why not."""
    folder = folder.resolve()
    try:
        top = Path(subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=folder, capture_output=True, text=True,
                                  check=True).stdout.strip())
        inside = folder.relative_to(top).as_posix()
        archive = subprocess.run(["git", "archive", "--format=tar", commit, inside], cwd=top, capture_output=True,
                                 check=True).stdout
    except (subprocess.CalledProcessError, FileNotFoundError, ValueError) as err:
        detail = getattr(err, "stderr", b"") or b""
        detail = detail.decode(errors="replace").strip() if isinstance(detail, bytes) else str(detail).strip()
        raise SystemExit(f"cannot read {folder} at {commit}: {detail or err}") from None
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / inside


def harvest(old, new) -> dict:
    """The comparison of two opened books of one game (``old``: at the rule's commit)."""
    name = parse_game(new.game).action_name

    def line(node) -> str:
        return " ".join(name(a) for a in node.line) or "the start"

    fresh = [(k, n) for k, n in new.book.nodes.items()
             if n.exact and k in old.book.nodes and not old.book.nodes[k].exact]
    on_side = {k for k, n in fresh if (old.book.nodes[k].value > 0) == (n.exact > 0)}
    against = [{"line": line(n), "old_value": round(old.book.nodes[k].value, 4), "exact": n.exact}
               for k, n in fresh if k not in on_side]
    met = [{"line": line(n), "old_value": round(old.book.nodes[k].value, 4), "exact": n.exact,
            "right": k in on_side}
           for k, n in fresh if old.book.decided(k)]
    proven = [{"line": line(n), "old_value": round(old.book.nodes[k].value, 4), "proven": n.proven}
              for k, n in new.book.nodes.items()
              if key_depth(k) == 1 and n.proven and k in old.book.nodes and not old.book.nodes[k].proven]
    return {"new_exact": len(fresh), "on_old_side": len(on_side), "against_old_side": against,
            "depths": sorted({key_depth(k) for k, _ in fresh}), "decided_claims_met": met,
            "decided_right": sum(m["right"] for m in met), "openings_proven": proven}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("book", type=Path, help="a book folder in a git checkout")
    parser.add_argument("--since", required=True, metavar="COMMIT", help="the commit of the run's rule")
    parser.add_argument("--json", default="runs/bench/proof_harvest.json", help="where the results go")
    args = parser.parse_args()
    try:
        new = open_book(args.book)
        with tempfile.TemporaryDirectory() as tmp:
            old = open_book(book_at(args.since, args.book, Path(tmp)))
            result = harvest(old, new)
    except (BookError, OSError) as err:
        raise SystemExit(f"cannot read the book: {err}") from None
    print(f"{args.book} since {args.since}: {result['new_exact']} new exact positions (pieces "
          f"{', '.join(map(str, result['depths'])) or '-'}), {result['on_old_side']} on the old book's side")
    for a in result["against_old_side"]:
        print(f"  against the old book: {a['line']} (old value {a['old_value']:+.3f}, exact {a['exact']:+d})")
    met = result["decided_claims_met"]
    print(f"decided claims met by an exact result: {len(met)}, right: {result['decided_right']}")
    for m in met:
        print(f"  {m['line']}: old value {m['old_value']:+.3f}, exact {m['exact']:+d}: {'right' if m['right'] else 'WRONG'}")
    for p in result["openings_proven"]:
        print(f"opening proven: {p['line']} (the player to move there {'wins' if p['proven'] > 0 else 'loses'}; "
              f"old value {p['old_value']:+.3f})")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": platform.processor() or platform.machine(), "python": platform.python_version(),
                               "book": str(args.book), "since": args.since, **result}, indent=1) + "\n")
    print(f"written {out}")


if __name__ == "__main__":
    main()

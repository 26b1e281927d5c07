"""Searches carried between runs: a proof search cut short, saved in its book for the next run.

An 8x8 Hex opening costs the native solver more CPU hours than one session has. ``book prove``
therefore saves the solver's table for a position whose search ran at least a few minutes and was
cut short (``BOOK/searches/<digest of the key>.gz``: a JSON header line, then the entries of
``NativeHexSolver.export_table``), every few minutes while it runs and when it stops; the next run
that tries the position loads them first and goes on where the last stopped, and a proof deletes the
file (its result is in the book). The entries are the ones with the most work below them: solved
ones are exact whatever the solver's settings, unsolved ones (proof numbers, must-play regions)
only guide the search, so a file made by an older build of the solver is still sound to load.
The header keeps the totals (runs, expansions, CPU seconds) so the book says what a search has
cost so far.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

FORMAT = "conhex-zero carried search 1"
FOLDER = "searches"


@dataclass
class Carried:
    """A saved search: its position's key, totals so far, and the solver's entries (bytes)."""

    key: str
    runs: int
    expansions: int
    seconds: float
    entries: bytes


def search_path(book_folder: Path, key: str) -> Path:
    return Path(book_folder) / FOLDER / (hashlib.sha256(key.encode()).hexdigest()[:20] + ".gz")


def load(book_folder: Path, key: str, holes: int, entry_bytes: int) -> Carried | None:
    """The saved search of ``key``, or None when there is none or it is not one this solver can
    load (another format, board or entry size, a damaged file: then it is set aside, never lost)."""
    path = search_path(book_folder, key)
    if not path.is_file():
        return None
    try:
        raw = gzip.decompress(path.read_bytes())
        line, _, data = raw.partition(b"\n")
        header = json.loads(line)
        ok = (header.get("format") == FORMAT and header.get("key") == key and header.get("holes") == holes
              and header.get("entry_bytes") == entry_bytes and header.get("byteorder") == sys.byteorder
              and len(data) == entry_bytes * int(header.get("entries", -1)))
    except (OSError, EOFError, ValueError, gzip.BadGzipFile):
        ok = False
    if not ok:
        try:
            path.replace(path.with_suffix(".unreadable"))
        except OSError:
            pass  # a read-only book: left where it is, and not loaded
        return None
    return Carried(key, int(header["runs"]), int(header["expansions"]), float(header["seconds"]), data)


def read(path: Path, holes: int, entry_bytes: int) -> Carried:
    """A saved search file by its path (a book's ``searches/*.gz``, or a copy of one from the book's
    history); ValueError saying why it cannot be loaded by a solver of ``holes`` holes."""
    try:
        raw = gzip.decompress(Path(path).read_bytes())
        line, _, data = raw.partition(b"\n")
        header = json.loads(line)
    except (OSError, EOFError, ValueError, gzip.BadGzipFile) as err:
        raise ValueError(f"{path} is not a saved search ({getattr(err, 'strerror', None) or err})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"{path} is not a saved search (no {FORMAT!r} header)")
    if header.get("holes") != holes:
        raise ValueError(f"{path} is a search of a board of {header.get('holes')} holes, not {holes}")
    if (header.get("entry_bytes") != entry_bytes or header.get("byteorder") != sys.byteorder
            or len(data) != entry_bytes * int(header.get("entries", -1))):
        raise ValueError(f"{path} was saved by another build of the solver or is cut short")
    return Carried(str(header.get("key", "")), int(header.get("runs", 0)), int(header.get("expansions", 0)),
                   float(header.get("seconds", 0.0)), data)


def save(book_folder: Path, carried: Carried, holes: int, entry_bytes: int) -> Path:
    """Writes the search (a whole new file replaces the old one at once: a run killed while it
    writes leaves the previous save)."""
    path = search_path(book_folder, carried.key)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"format": FORMAT, "key": carried.key, "holes": holes, "entry_bytes": entry_bytes,
              "byteorder": sys.byteorder, "entries": len(carried.entries) // entry_bytes, "runs": carried.runs,
              "expansions": carried.expansions, "seconds": round(carried.seconds, 1),
              "saved": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    partial = path.with_suffix(".partial")
    partial.write_bytes(gzip.compress(json.dumps(header).encode() + b"\n" + carried.entries, compresslevel=6))
    os.replace(partial, path)
    return path


def forget(book_folder: Path, key: str) -> None:
    """The position is settled: its saved search is of no more use."""
    search_path(book_folder, key).unlink(missing_ok=True)


def saved_searches(book_folder: Path) -> list[dict]:
    """The headers of a book's saved searches (for reports), most expensive first."""
    out = []
    for path in sorted((Path(book_folder) / FOLDER).glob("*.gz")):
        try:
            with gzip.open(path, "rb") as f:
                out.append(json.loads(f.readline()))
        except (OSError, EOFError, ValueError):
            continue
    return sorted(out, key=lambda h: -float(h.get("seconds", 0)))


def seconds_spent(headers: list[dict]) -> float:
    """The CPU seconds the saved searches ``headers`` (``saved_searches``) have cost so far."""
    return sum(float(h.get("seconds", 0)) for h in headers)


def cpu_time(seconds: float) -> str:
    """``1.4 CPU hours`` or, under six minutes, ``3 CPU minutes``."""
    if seconds >= 360:
        return f"{seconds / 3600:.1f} CPU hours"
    minutes = round(seconds / 60)
    return f"{minutes} CPU {'minute' if minutes == 1 else 'minutes'}"

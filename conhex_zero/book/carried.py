"""Searches carried between runs: a proof search cut short, saved in its book for the next run.

An 8x8 Hex opening costs the native solver more CPU hours than one session has. ``book prove``
therefore saves the solver's table for a position whose search ran at least a few minutes and was
cut short (``BOOK/searches/<digest of the key>.xz``: a JSON header line, then the entries of
``NativeHexSolver.export_table``, xz-compressed), every few minutes while it runs and when it stops; the next run
that tries the position loads them first and goes on where the last stopped, and a proof deletes the
file (its result is in the book). The entries are the ones with the most work below them: solved
ones are exact whatever the solver's settings, unsolved ones (proof numbers, must-play regions)
only guide the search, so a file made by an older build of the solver is still sound to load.
The header keeps the totals (runs, expansions, CPU seconds) so the book says what a search has
cost so far.

Files saved before 2026-12-08 are gzip (``<digest>.gz``, the same content): they load as they are,
and the next save of their search writes the ``.xz`` file in their place. xz (LZMA, preset 6) keeps
a 2^18-entry 8x8 search in about 1.8 MB where gzip took 3.0 (5 CPU s a save, one every ten minutes):
the searches a book carries are committed with it, so each session's rewrite of them is what the
repository's history grows by.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import lzma
import os
import struct
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from conhex_zero.console.words import plural

FORMAT = "conhex-zero carried search 1"
FOLDER = "searches"
SUFFIX = ".xz"
OLD_SUFFIX = ".gz"
"""Saved searches written before the move to xz (gzip, the same content): read, never written."""
XZ_MAGIC = b"\xfd7zXZ\x00"
_UNREADABLE = (OSError, EOFError, ValueError, gzip.BadGzipFile, lzma.LZMAError)


@dataclass
class Carried:
    """A saved search: its position's key, totals so far, and the solver's entries (bytes)."""

    key: str
    runs: int
    expansions: int
    seconds: float
    entries: bytes


def search_path(book_folder: Path, key: str) -> Path:
    """Where the search of ``key`` is saved (``save`` writes here)."""
    return Path(book_folder) / FOLDER / (hashlib.sha256(key.encode()).hexdigest()[:20] + SUFFIX)


def _saved_path(book_folder: Path, key: str) -> Path | None:
    """The file that holds the search of ``key``: the xz one, else one saved before as gzip, else None."""
    path = search_path(book_folder, key)
    for candidate in (path, path.with_suffix(OLD_SUFFIX)):
        if candidate.is_file():
            return candidate
    return None


def file_parts(path: Path) -> tuple[object, bytes]:
    """A saved search file's header (parsed JSON) and its entries' bytes, xz or gzip by its first
    bytes; one of ``_UNREADABLE`` where the file cannot be read that far."""
    raw = Path(path).read_bytes()
    line, _, data = (lzma.decompress(raw) if raw.startswith(XZ_MAGIC) else gzip.decompress(raw)).partition(b"\n")
    return json.loads(line), data


def load(book_folder: Path, key: str, holes: int, entry_bytes: int) -> Carried | None:
    """The saved search of ``key``, or None when there is none or it is not one this solver can
    load (another format, board or entry size, a damaged file: then it is set aside, never lost)."""
    path = _saved_path(book_folder, key)
    if path is None:
        return None
    try:
        header, data = file_parts(path)
        ok = (header.get("format") == FORMAT and header.get("key") == key and header.get("holes") == holes
              and header.get("entry_bytes") == entry_bytes and header.get("byteorder") == sys.byteorder
              and len(data) == entry_bytes * int(header.get("entries", -1)))
    except _UNREADABLE + (AttributeError, TypeError):
        ok = False
    if not ok:
        try:
            path.replace(path.with_suffix(".unreadable"))
        except OSError:
            pass  # a read-only book: left where it is, and not loaded
        return None
    return Carried(key, int(header["runs"]), int(header["expansions"]), float(header["seconds"]), data)


def read(path: Path, holes: int, entry_bytes: int) -> Carried:
    """A saved search file by its path (a book's ``searches/*.xz`` or ``*.gz``, or a copy of one from
    the book's history); ValueError saying why it cannot be loaded by a solver of ``holes`` holes."""
    try:
        header, data = file_parts(path)
    except _UNREADABLE as err:
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
    """Writes the search, xz-compressed (a whole new file replaces the old one at once: a run killed
    while it writes leaves the previous save; a gzip file saved before goes once the new one is in)."""
    path = search_path(book_folder, carried.key)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"format": FORMAT, "key": carried.key, "holes": holes, "entry_bytes": entry_bytes,
              "byteorder": sys.byteorder, "entries": len(carried.entries) // entry_bytes, "runs": carried.runs,
              "expansions": carried.expansions, "seconds": round(carried.seconds, 1),
              "saved": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    partial = path.with_suffix(".partial")
    entries = in_stone_order(carried.entries, entry_bytes)
    partial.write_bytes(lzma.compress(json.dumps(header).encode() + b"\n" + entries, preset=6))
    os.replace(partial, path)
    path.with_suffix(OLD_SUFFIX).unlink(missing_ok=True)
    return path


def in_stone_order(entries: bytes, entry_bytes: int) -> bytes:
    """The solver's saved records sorted by their stones (the first two 64-bit words): neighbours then
    share most of their bytes, and a 2^18-entry 8x8 search compresses to 3.7 MB instead of 5.7 with
    gzip (the order is the table's otherwise, and loading does not depend on it)."""
    import numpy as np

    if entry_bytes < 16 or entry_bytes % 8 or not entries or len(entries) % entry_bytes:
        return entries
    words = np.frombuffer(entries, dtype=np.uint64).reshape(-1, entry_bytes // 8)  # [E, W]
    order = np.lexsort((words[:, 1], words[:, 0]))  # [E]
    return words[order].tobytes()


def forget(book_folder: Path, key: str) -> None:
    """The position is settled: its saved search is of no more use (an xz file or an older gzip one)."""
    path = search_path(book_folder, key)
    path.unlink(missing_ok=True)
    path.with_suffix(OLD_SUFFIX).unlink(missing_ok=True)


RECORD = "=QQQQIIIB"
"""The leading fields of hexsolve.c's ``Saved`` record, in host byte order (padding follows)."""
UNSETTLED = 100_000_000
"""The solver's infinite proof number (``INF`` in hexsolve.c): a settled side."""


@dataclass(frozen=True)
class Root:
    """The root of a saved search: the filled position (the mover's stones, the opponent's, the mover)
    and its proof numbers: how many more positions, at the fewest, must be settled to prove a win
    for the player to move (``proof_number``) or a loss (``disproof_number``)."""

    mine: int
    theirs: int
    player: int
    proof_number: int
    disproof_number: int


def root_of(entries: bytes, entry_bytes: int) -> Root | None:
    """The search's root among its saved entries: the one with the most work below it (every
    expansion of a search is work below its root), or None when there are no entries. Entries are the
    solver's ``Saved`` records: four 64-bit words (stones, stones, proof set, must-play region), proof
    and disproof numbers and work (32 bits each), the mover (a byte), padding; host byte order."""
    import numpy as np

    if entry_bytes < struct.calcsize(RECORD) or not entries or len(entries) % entry_bytes:
        return None
    work = np.frombuffer(entries, dtype=np.uint8).reshape(-1, entry_bytes)[:, 40:44].copy().view(np.uint32)  # [E, 1]
    mine, theirs, _, _, pn, dn, _, player = struct.unpack_from(RECORD, entries, int(np.argmax(work)) * entry_bytes)
    return Root(mine, theirs, player, pn, dn)


def saved_searches(book_folder: Path) -> list[dict]:
    """The headers of a book's saved searches (for reports), most expensive first, each with its
    root's ``proof_number`` and ``disproof_number`` (None where the file cannot be read whole)."""
    out = []
    for path in saved_files(book_folder):
        try:
            header, data = file_parts(path)
            size, entries = header.get("entry_bytes"), int(header.get("entries", -1))
        except _UNREADABLE + (TypeError, AttributeError):
            continue
        root = root_of(data, size) if isinstance(size, int) and len(data) == size * entries else None
        header["proof_number"] = None if root is None else root.proof_number
        header["disproof_number"] = None if root is None else root.disproof_number
        out.append(header)
    return sorted(out, key=lambda h: -float(h.get("seconds", 0)))


def saved_files(book_folder: Path) -> list[Path]:
    """A book's saved search files, by name: the xz ones and any gzip ones saved before."""
    folder = Path(book_folder) / FOLDER
    return sorted([*folder.glob("*" + SUFFIX), *folder.glob("*" + OLD_SUFFIX)])


def numbers_text(header: dict) -> str:
    """``proof numbers 3,512 (a win for the player to move) and 17,480 (a loss)``, or '' when unknown."""
    pn, dn = header.get("proof_number"), header.get("disproof_number")
    if not isinstance(pn, int) or not isinstance(dn, int):
        return ""
    return f"proof numbers {pn:,} (a win for the player to move) and {dn:,} (a loss)"


def describe(header: dict) -> str:
    """``1.4 CPU hours, 3 runs; proof numbers ...``: a saved search's cost so far and its root's numbers."""
    runs = header.get("runs")
    numbers = numbers_text(header)
    return (f"{cpu_time(seconds_spent([header]))}, {plural(runs if isinstance(runs, int) else 0, 'run')}"
            + (f"; {numbers}" if numbers else ""))


def seconds_spent(headers: list[dict]) -> float:
    """The CPU seconds the saved searches ``headers`` (``saved_searches``) have cost so far."""
    return sum(float(h.get("seconds", 0)) for h in headers)


def cpu_time(seconds: float) -> str:
    """``1.4 CPU hours``, under six minutes ``3 CPU minutes``, under a minute and a half ``12 CPU seconds``."""
    if seconds >= 360:
        return f"{seconds / 3600:.1f} CPU hours"
    if seconds < 90:
        whole = round(seconds)
        return f"{whole} CPU {'second' if whole == 1 else 'seconds'}"
    minutes = round(seconds / 60)
    return f"{minutes} CPU {'minute' if minutes == 1 else 'minutes'}"

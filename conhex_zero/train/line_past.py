"""What a line holds past its carried state, and moving it aside (``LINE/dropped/``).

``carry.pt`` is the line's commit (``line.py``): the line goes on from the iteration it holds and
from the piece that wrote it. Anything of a later iteration or piece is work the line no longer
stands on: an older ``carry.pt`` checked out (the line rolled back), or a piece killed after writing
its files but before its ``carry.pt``. Left in place, such files would describe a model the line no
longer has: a checkpoint ``iter_0004.pt`` of the dropped work beside the new iteration 4, records,
metric lines and ladder entries of iterations about to be trained again, ``rate`` offering the
dropped checkpoints. A piece (and ``rate``) therefore moves them, before anything else is written,
into ``LINE/dropped/UTC-TIME-after-iteration-NNNN/`` (the same layout: ``checkpoints/``, ``logs/``,
``pieces.jsonl``, ``metrics.jsonl``, ``ladder.jsonl``, and ``why.txt``), says so in one line, and
loses nothing.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from conhex_zero.files.disk import write_text_atomic, writing
from conhex_zero.files.jsonl import append_jsonl, read_jsonl, rewrite_jsonl

DROPPED = "dropped"
"""The folder of a line that holds what was moved aside."""

_CHECKPOINT_NAME = re.compile(r"iter_(\d+)")


def checkpoint_iteration(name: str) -> int | None:
    """The iteration of a checkpoint's ladder name or file stem (``iter_0004``), else None."""
    found = _CHECKPOINT_NAME.fullmatch(name)
    return int(found.group(1)) if found else None


@dataclass
class Past:
    """What ``line`` holds past its carried state (``iteration``, written by piece ``piece``)."""
    iteration: int
    piece: int | None
    """The piece that wrote the carried state (None: a state from before lines had ids)."""
    checkpoints: list[Path] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)
    ladder: list[dict[str, Any]] = field(default_factory=list)
    kept: dict[Path, list[dict[str, Any]]] = field(default_factory=dict)
    """Each JSON-lines file's entries that stay (for those with entries past the state)."""

    def __bool__(self) -> bool:
        return bool(self.checkpoints or self.records or self.metrics or self.ladder
                    or (self.logs and (self.checkpoints or self.records or self.metrics)))

    def describe(self) -> str:
        """``2 checkpoints (iter_0004-iter_0005), 1 piece record, 2 metric lines, ...``."""
        parts = []
        if self.checkpoints:
            names = [p.stem for p in self.checkpoints]
            parts.append(_count(len(names), "checkpoint") + f" ({names[0]}" + (f"-{names[-1]})" if len(names) > 1 else ")"))
        for items, what in ((self.records, "piece record"), (self.metrics, "metric line"),
                            (self.ladder, "ladder entry"), (self.logs, "log")):
            if items:
                parts.append(_count(len(items), what))
        return ", ".join(parts)


def _count(n: int, what: str) -> str:
    plural = what[:-1] + "ies" if what.endswith("y") else what + "s"
    return f"{n} {what if n == 1 else plural}"


def is_past_entry(entry: dict[str, Any], iteration: int) -> bool:
    """A ladder entry of an iteration after ``iteration``, or one naming a checkpoint of such an
    iteration (a match that ``rate`` tagged with the other player's iteration)."""
    if _whole(entry.get("iteration")) > iteration:
        return True
    for key in ("name", "first", "second"):
        number = checkpoint_iteration(entry[key]) if isinstance(entry.get(key), str) else None
        if number is not None and number > iteration:
            return True
    return False


def _whole(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def find_past(line, iteration: int, piece: int | None) -> Past:
    """What ``line`` (a ``Line``) holds past the carried state at ``iteration``, written by piece
    ``piece``: checkpoints of later iterations, piece records that end later or come from a later
    piece, metric lines and ladder entries of later iterations (``is_past_entry``), and the logs of
    later pieces. Logs alone are not work past the state (``piece.py`` keeps the log an attempt that
    saved nothing left under another name); with other files they go with them."""
    past = Past(iteration, piece)
    past.checkpoints = [p for p in line.checkpoint_files() if (checkpoint_iteration(p.stem) or 0) > iteration]
    past.records = _split(past, line.pieces_file, lambda r: _whole(r.get("last_iteration")) > iteration
                          or (piece is not None and _whole(r.get("piece")) > piece))
    past.metrics = _split(past, line.metrics_file, lambda m: _whole(m.get("iteration")) > iteration)
    past.ladder = _split(past, line.ladder_file, lambda e: is_past_entry(e, iteration))
    if piece is not None:
        past.logs = [line.logs / f"piece-{n:03d}.log" for n in line.log_numbers() if n > piece]
    return past


def _split(past: Past, path: Path, is_past: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    """The entries of ``path`` past the state; those that stay go into ``past.kept``."""
    entries = read_jsonl(path) if path.is_file() else []
    dropped = [e for e in entries if is_past(e)]
    if dropped:
        past.kept[path] = [e for e in entries if not is_past(e)]
    return dropped


def set_aside(line, past: Past, note: Callable[[str], None], by: str) -> Path | None:
    """Move ``past`` out of ``line`` into a new folder of ``LINE/dropped/`` (returned; None when
    there is nothing to move), and say so in one line. The dropped lines are written there before
    the line's files are rewritten without them, so an interruption leaves them twice, never lost."""
    if not past:
        return None
    folder = _new_folder(line.path / DROPPED, past.iteration)
    with writing(line.path):
        folder.mkdir(parents=True)
        write_text_atomic(folder / "why.txt", _why(line, past, by))
        for source, entries in ((line.pieces_file, past.records), (line.metrics_file, past.metrics),
                                (line.ladder_file, past.ladder)):
            if entries:
                append_jsonl(folder / source.name, entries)
                rewrite_jsonl(source, past.kept[source])
        for files, sub in ((past.checkpoints, "checkpoints"), (past.logs, "logs")):
            if files:
                (folder / sub).mkdir()
                for path in files:
                    path.replace(folder / sub / path.name)
    note(f"note: {line.path} held work past its carried state (iteration {past.iteration}"
         f"{f', piece {past.piece}' if past.piece is not None else ''}), dropped: {past.describe()} moved into "
         f"{folder}")
    return folder


def _new_folder(root: Path, iteration: int) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    folder = root / f"{stamp}-after-iteration-{iteration:04d}"
    attempt = 1
    while folder.exists():
        attempt += 1
        folder = root / f"{stamp}-after-iteration-{iteration:04d}-{attempt}"
    return folder


def _why(line, past: Past, by: str) -> str:
    written = f" written by piece {past.piece}" if past.piece is not None else ""
    return (f"Dropped from the line {line.path.resolve().name} by {by} on "
            f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}: its carry.pt holds iteration {past.iteration}"
            f"{written}, and these files were of later iterations or pieces (an older carry.pt checked out, or a "
            f"piece stopped after writing its files but before its carry.pt). The line goes on from iteration "
            f"{past.iteration}; nothing here is read by it again.\n{past.describe()}\n")


def past_of(line, carry: dict[str, Any]) -> Past:
    """``find_past`` for a line's carried state ``carry``."""
    own = carry.get("line") if isinstance(carry.get("line"), dict) else None
    piece = _whole(own.get("piece")) if own else None
    return find_past(line, int(carry["iteration"]), piece)

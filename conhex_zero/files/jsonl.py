"""JSON-lines files (one object per line): read with line-numbered errors, append, rewrite atomically.

A process killed while appending leaves a torn last line: no newline at its end, and not valid
JSON. Reading skips such a line with a warning on standard error (the entry was never complete),
and appending first drops it, so a run killed mid-write can be resumed without editing its files.
A bad line anywhere else is damage, not an interrupted write: ``JsonlError`` names the file and
the line. Lines are parsed with bounds (``untrusted.loads_json``); a write that fails on a full disk
raises ``disk.DiskFullError`` naming it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from conhex_zero.files.disk import writing
from conhex_zero.files.untrusted import loads_json


class JsonlError(ValueError):
    """A line of a JSON-lines file is not a JSON object; says which file and line."""


def _warn(message: str) -> None:
    print(f"conhex-zero: warning: {message}", file=sys.stderr, flush=True)


def _torn_tail(data: bytes) -> int | None:
    """Where a torn last line starts (no newline at its end and not valid JSON), else None."""
    if not data or data.endswith(b"\n"):
        return None
    start = data.rfind(b"\n") + 1
    tail = data[start:]
    if not tail.strip():
        return None
    try:
        loads_json(tail.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return start
    return None  # complete JSON, only its newline is missing


def iter_jsonl(path: str | Path, warn: Callable[[str], None] = _warn) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each line of a JSON-lines file; blank lines are skipped, a torn
    last line is skipped with a warning, any other bad line raises ``JsonlError`` naming it."""
    path = Path(path)
    data = path.read_bytes()
    torn = _torn_tail(data)
    lines = (data[:torn] if torn is not None else data).split(b"\n")
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = loads_json(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise JsonlError(f"{path}:{number}: not a JSON object (bytes that are not UTF-8); fix or delete "
                             f"that line") from None
        except json.JSONDecodeError as err:
            raise JsonlError(f"{path}:{number}: not a JSON object ({err.msg}, column {err.colno}); fix or delete "
                             f"that line") from None
        if not isinstance(obj, dict):
            raise JsonlError(f"{path}:{number}: a JSON {type(obj).__name__}, not an object; fix or delete that line")
        yield number, obj
    if torn is not None:
        warn(f"{path}:{len(lines)}: skipped an unfinished last line (a write was interrupted)")


def read_jsonl(path: str | Path, warn: Callable[[str], None] = _warn) -> list[dict[str, Any]]:
    """The objects of a JSON-lines file (see ``iter_jsonl``)."""
    return [obj for _, obj in iter_jsonl(path, warn)]


def append_jsonl(path: str | Path, entries: Iterable[dict[str, Any]], warn: Callable[[str], None] = _warn,
                 sync: bool = False) -> None:
    """Append entries, one line each. A torn last line (an interrupted write) is dropped first, with
    a warning, so that the new lines do not run into it; a last line that is complete JSON without
    its newline gets the newline. ``sync``: flush the file to the disk before returning."""
    path = Path(path)
    with writing(path):  # a full disk: DiskFullError naming it (a torn line is dropped next time)
        _append(path, entries, warn, sync)


def _append(path: Path, entries: Iterable[dict[str, Any]], warn: Callable[[str], None], sync: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab+") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        if size:
            f.seek(max(0, size - 1))
            if f.read(1) != b"\n":
                f.seek(0)
                data = f.read()
                torn = _torn_tail(data)
                if torn is not None:
                    f.truncate(torn)
                    line = data.count(b"\n") + 1
                    warn(f"{path}:{line}: dropped an unfinished last line (a write was interrupted)")
                else:
                    f.write(b"\n")
        f.seek(0, os.SEEK_END)
        f.write("".join(json.dumps(e) + "\n" for e in entries).encode("utf-8"))
        if sync:
            f.flush()
            os.fsync(f.fileno())


def rewrite_jsonl(path: str | Path, entries: Iterable[dict[str, Any]]) -> None:
    """Replace the file's contents atomically (write to .tmp, rename)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with writing(path):
            tmp.write_text("".join(json.dumps(e) + "\n" for e in entries))
            os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise

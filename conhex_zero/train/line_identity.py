"""A line's identity, from all of its files (``line.py``).

The first piece of a line draws an id; ``carry.pt`` keeps it with the number of the piece that wrote
it, and the line's other files name it too: every piece record (``line_id``), every piece's log (its
first line, ``piece N of line PATH (id ID; ...)``) and every metric line a piece wrote (``line_id``).
A ``carry.pt`` whose id is not the one those files name is another line's state copied in, and is
refused naming both ids: the id is learnt from more than ``pieces.jsonl``, so a deleted or replaced
``pieces.jsonl`` does not let another line's state continue over this line's checkpoints and logs.
Files written before these ids (older logs and metric lines) name no line and are taken as this one's.
"""

from __future__ import annotations

import pickle
import re
from typing import Any, Callable

from conhex_zero.files.jsonl import read_jsonl
from conhex_zero.train.line import Line, LineError, new_line_id

_LOG_HEADER = re.compile(r"piece \d+ of line .* \(id ([0-9a-f]{16})[;)]")


def log_header(number: int, path: Any, line_id: str, origin: str) -> str:
    """The first line of a piece's log (``_LOG_HEADER`` reads the id back)."""
    return f"piece {number} of line {path} (id {line_id}; {origin})"


def ids_in_files(line: Line, records: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The line ids that ``records``, the logs and the metric lines name: ``{id: [where, ...]}``,
    where each ``where`` is a file of the line (``pieces.jsonl``, ``logs/piece-002.log``, ``metrics.jsonl``)."""
    found: dict[str, list[str]] = {}

    def add(line_id: Any, where: str) -> None:
        if isinstance(line_id, str) and where not in found.setdefault(line_id, []):
            found[line_id].append(where)

    for record in records:
        add(record.get("line_id"), line.pieces_file.name)
    for number in line.log_numbers():
        add(_logged_id(line.logs / f"piece-{number:03d}.log"), f"logs/piece-{number:03d}.log")
    if line.metrics_file.is_file():
        for entry in read_jsonl(line.metrics_file):
            add(entry.get("line_id"), line.metrics_file.name)
    return found


def _logged_id(path) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for _, text in zip(range(50), f):  # the header comes after at most a few notes
                if found := _LOG_HEADER.search(text):
                    return found.group(1)
    except OSError:
        return None
    return None


def _where(places: list[str]) -> str:
    shown = places[:3] + ([f"{len(places) - 3} more"] if len(places) > 3 else [])
    return ", ".join(shown)


def check_identity(line: Line, carry: dict, records: list[dict[str, Any]]) -> str | None:
    """The id of ``carry`` (None for a state from before ids), after checking that the line's other
    files name no other line (``LineError`` naming both ids otherwise)."""
    own = carry.get("line") if isinstance(carry.get("line"), dict) else None
    own_id = str(own.get("id")) if own is not None else None
    others = {i: w for i, w in ids_in_files(line, records).items() if i != own_id}
    if not others:
        return own_id
    other = max(others, key=lambda i: len(others[i]))
    if own_id is None:
        raise LineError(f"{line.carry_file} belongs to no line but the line's other files ({_where(others[other])}) "
                        f"to line {other}: another line's carry.pt copied in? Restore this line's own carry.pt")
    raise LineError(f"{line.carry_file} is line {own_id}'s state but the line's other files ({_where(others[other])}) "
                    f"are line {other}'s: the line's files were mixed (another line's carry.pt or pieces.jsonl "
                    f"copied in?): restore this line's own carry.pt")


def identity_of(line: Line, carry: dict | None, records: list[dict[str, Any]],
                note: Callable[[str], None]) -> dict[str, Any]:
    """The line's identity for the next piece: ``{"id": ..., "piece": N}`` with N the next piece's
    number. The id comes from carry.pt (a line made before ids: a new one, noted); the records, logs
    and metric lines must name the same line (``check_identity``). N follows the piece that wrote
    carry.pt (before ids: the records or logs, whichever is further), so a deleted pieces.jsonl never
    makes a piece reuse a number."""
    if carry is None:
        return {"id": new_line_id(), "piece": 1}
    own_id = check_identity(line, carry, records)
    if own_id is None:
        number = max([int(r.get("piece", 0)) for r in records] + line.log_numbers() + [0]) + 1
        identity = {"id": new_line_id(), "piece": number}
        note(f"note: {line.path} was made before lines had an id: it is line {identity['id']} from piece {number} on")
        return identity
    return {"id": own_id, "piece": int(carry["line"].get("piece", 0)) + 1}


def check_out_folder(out: Line, source: Line, identity: dict[str, Any]) -> None:
    """``--out`` must be an empty folder or a copy of this same line (an earlier ``--out`` of it):
    a piece never writes over another line's files (``LineError``)."""
    if out.path.resolve() == source.path.resolve() or out.is_empty():
        return
    other = None
    if out.carry_file.is_file():
        from conhex_zero.files.file_seal import SealError, peek

        try:  # the id alone, without torch (issue 58: this refusal cost 2.8-3.6 s of CPU)
            line = peek(out.carry_file, ("line",)).get("line")
            other = line.get("id") if isinstance(line, dict) else None
        except (SealError, OSError, ValueError, pickle.UnpicklingError):
            other = None
    if other != identity["id"]:
        what = f"line {other}" if other else "files that are not a copy of this line"
        raise LineError(f"--out {out.path} holds {what}: a piece of line {identity['id']} writes only into an "
                        f"empty folder or a copy of its own line; choose another --out")


def check_checkpoints(line: Line, records: list[dict[str, Any]]) -> None:
    """Each record's checkpoint, where the line holds it, is the model the record names (its
    ``checkpoint_digest``; records from before digests are not checked): ``LineError`` naming the
    file and both digests otherwise (a checkpoint replaced by hand, or copied in from another line)."""
    from conhex_zero.nn.checkpoint_files import CheckpointError, checkpoint_digest

    for record in records:
        recorded, name = record.get("checkpoint_digest"), record.get("checkpoint")
        if not isinstance(recorded, str) or not isinstance(name, str) or not (line.path / name).is_file():
            continue
        try:
            digest = checkpoint_digest(line.path / name)
        except CheckpointError as err:
            raise LineError(str(err)) from None
        if digest != recorded:
            raise LineError(f"{line.path / name} is not the model piece {record.get('piece')} recorded there (its "
                            f"digest is {digest}, the record's {recorded}): restore that file, or move it out of "
                            f"{line.checkpoints}")

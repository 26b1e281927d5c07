"""A match's records file, written game by game, from which a stopped match resumes.

Every game is appended as it ends: one complete JSON line (``GameRecord``), flushed to disk, so a
match stopped at any moment (Ctrl-C, a closed terminal, a machine taken back, an engine crashing)
keeps every finished game; a line cut short by a crash is skipped with a note when the file is
next read (and dropped when the next game is appended). Every record carries the match's settings
(``match_settings``: the players as named, what each checkpoint player's file held (a digest of
its bytes), the game, the seed, the number of games, the openings' length, the simulations of
checkpoint players, the rounds of ``--until-decided``); a records file holding games of another
match is refused, naming the first setting that differs: a checkpoint whose file has changed since
(retrained or replaced in place) is another player, so its old games are refused, naming it. The
default path is made of those settings, so the same command finds its own file again, and a
changed checkpoint gets a new one. Every game read back is replayed before it counts
(``record_check``, through ``read_match_records``'s ``check``).

Each record is sealed: ``digest``, 16 hex digits of the SHA-256 of its canonical JSON (``seal``),
settings included. A record edited by hand, or a line added by hand, no longer matches, and the
match refuses to resume, naming its line; a line deleted is a game the match plays again (as for a
damaged line); only a record rewritten and sealed again with this program's code passes (nothing
is signed with a secret). A records file is sealed or not as a whole (one sealed record makes every
record's digest required). A file whose records carry no digest at all (written before the seals,
or every digest deleted: issue 58 found that deleting one field a line let a game rewritten into a
loss count) is refused unless the caller allows it (``arena --unsealed-records``), naming why.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from conhex_zero.files.jsonl import append_jsonl, iter_jsonl

if TYPE_CHECKING:  # the records themselves need the result module (and torch); the checks below do not
    from conhex_zero.agents.match_result import GameRecord

SETTINGS_ORDER = ("players", "checkpoints", "game", "seed", "games", "sims", "opening_plies", "fixed_openings", "until_decided",
                  "round")


class MatchRecordsError(ValueError):
    """A records file that cannot continue this match; the message says why and what to do."""


def match_settings(players: list[str], game: str, seed: int, games: int, sims: int | None, opening_plies: int,
                   fixed_openings: bool, until_decided: bool, round_games: int,
                   checkpoints: Sequence[str | None] = (None, None)) -> dict[str, Any]:
    """The settings that make a match's games what they are (not how its result is shown);
    ``checkpoints``: per player, the digest of its checkpoint file's bytes
    (``checkpoint_files.checkpoint_digest``; None for players without one)."""
    return {"players": list(players), "checkpoints": list(checkpoints), "game": game, "seed": seed, "games": games, "sims": sims,
            "opening_plies": opening_plies, "fixed_openings": fixed_openings, "until_decided": until_decided,
            "round": round_games if until_decided else None}


def _slug(name: str) -> str:
    """A player's name as part of a file name: a checkpoint by its file's stem, its effort after it
    (``conhex-l4h64-seconds1``); anything else with its odd characters replaced."""
    m = re.fullmatch(r"(.+\.pt)(?::(sims|seconds)=([^:]+))?", name, flags=re.DOTALL)
    stem = Path(m.group(1)).stem + (f"-{m.group(2)}{m.group(3)}" if m.group(2) else "") if m else name
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", stem)[:40]


def default_records_path(settings: dict[str, Any], names: tuple[str, str]) -> Path:
    """``runs/arena/P1-vs-P2-GAME-sSEED-NNg.jsonl``, with a short digest of the other settings: the
    same match always gets the same file (and so resumes), another match another file."""
    import hashlib

    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:8]
    game = re.sub(r"[^A-Za-z0-9_.-]+", "_", settings["game"])[:40]
    return (Path("runs") / "arena" /
            f"{_slug(names[0])}-vs-{_slug(names[1])}-{game}-s{settings['seed']}-{settings['games']}g-{digest}.jsonl")


def _record(entry: dict[str, Any], where: str) -> "GameRecord":
    from conhex_zero.agents.match_result import GameRecord

    fields = {"index": int, "game": str, "seed": int, "first": str, "second": str, "moves": list, "opening": int,
              "winner": int, "winner_name": str, "result": str}
    for key, kind in fields.items():
        value = entry.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise MatchRecordsError(f"{where}: not an arena record of this version (field {key!r} is "
                                    f"{json.dumps(value)[:40]}); move the file away to start the match anew")
    known = set(GameRecord.__dataclass_fields__)
    return GameRecord(**{k: v for k, v in entry.items() if k in known})


def _changed_checkpoint(path: Path, theirs: dict[str, Any], ours: dict[str, Any]) -> str | None:
    """The refusal of a records file whose games a checkpoint played as another model (its file has
    changed since), naming the player; None when the checkpoints are the same."""
    if "checkpoints" not in theirs:
        return (f"{path} holds games recorded before the arena noted what each checkpoint file held (an older "
                f"version): it cannot tell whether the files still hold the models that played them; choose "
                f"another --records, or move it away to play the match anew")
    then, now = theirs.get("checkpoints"), ours.get("checkpoints")
    if then == now or theirs.get("players") != ours.get("players") or not isinstance(then, list) or len(then) != 2:
        return None
    k = next(k for k in range(2) if then[k] != now[k])
    name = ours["players"][k]
    return (f"{path} holds games that player {k + 1}, {name[:120]}, played as another model: its file has changed "
            f"since (sha256 {str(then[k])[:16]} then, {str(now[k])[:16]} now); a changed checkpoint is a new match "
            f"(without --records it gets its own file): choose another --records, or move the file away")


def _difference(theirs: dict[str, Any], ours: dict[str, Any]) -> str:
    for key in SETTINGS_ORDER:
        if theirs.get(key) != ours.get(key):
            return f"{key} {json.dumps(theirs.get(key))[:60]} there, {json.dumps(ours.get(key))[:60]} here"
    return "settings differ"


DIGEST_KEY = "digest"


def record_digest(entry: dict[str, Any]) -> str:
    """A record's seal: 16 hex digits of the SHA-256 of its canonical JSON (without ``digest``), the
    match's settings included."""
    body = {key: value for key, value in entry.items() if key != DIGEST_KEY}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def seal(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` with its ``digest``, as the arena writes it."""
    return {**{key: value for key, value in entry.items() if key != DIGEST_KEY}, DIGEST_KEY: record_digest(entry)}


def _check_digest(where: str, entry: dict[str, Any], sealed: bool | None) -> bool:
    """Whether the file's records are sealed (``sealed``: what the lines before said, None for the
    first); ``MatchRecordsError`` for a record that is not as the arena wrote it."""
    digest = entry.get(DIGEST_KEY)
    if digest is None:
        if sealed:
            raise MatchRecordsError(f"{where}: a record without its digest among sealed ones: written by hand, not by the "
                                    f"arena; delete that line to play the game again, or move the file away")
        return False
    if sealed is False:
        raise MatchRecordsError(f"{where}: a sealed record among unsealed ones (from before records were sealed): "
                                f"records of two versions; move the file away to start the match anew")
    if digest != record_digest(entry):
        raise MatchRecordsError(f"{where}: the record is not as the arena wrote it (its digest does not match: edited "
                                f"after it was written); delete that line to play the game again, or move the file "
                                f"away")
    return True


def read_match_records(path: str | Path, settings: dict[str, Any], warn: Callable[[str], None],
                       check: Callable[[list[tuple[str, GameRecord]]], None] | None = None,
                       allow_unsealed: bool = False) -> list[GameRecord]:
    """The finished games of this match in ``path`` (none when it does not exist), each index once;
    ``MatchRecordsError`` when the file holds games of another match or is not a records file.
    ``check`` gets every record read (with its file and line) before any counts, and raises
    ``MatchRecordsError`` for one that is not what it says (``record_check.check_records``).
    ``allow_unsealed``: read a file whose records carry no digest (else refused)."""
    path = Path(path)
    if not path.exists():
        return []
    if not path.is_file():
        raise MatchRecordsError(f"--records {path} is not a file")
    from conhex_zero.files.jsonl import JsonlError

    games: dict[int, GameRecord] = {}
    read: list[tuple[str, GameRecord]] = []
    sealed: bool | None = None  # whether the file's records carry digests (None: no record read yet)
    try:
        for number, entry in iter_jsonl(path, warn=warn):
            where = f"{path}:{number}"
            sealed = _check_digest(where, entry, sealed)
            theirs = entry.get("match")
            if not isinstance(theirs, dict):
                raise MatchRecordsError(f"{path} holds games that name no match settings (written by an older "
                                        f"version, or by hand): choose another --records, or move it away")
            if theirs != settings:
                raise _other_match(path, theirs, settings, _difference(theirs, settings))
            record = _record(entry, where)
            if not 0 <= record.index < settings["games"]:
                raise MatchRecordsError(f"{where}: game {record.index} is not a game of this {settings['games']}-game "
                                        f"match")
            games.setdefault(record.index, record)  # a game written twice counts once
            read.append((where, record))
    except JsonlError as err:
        raise MatchRecordsError(str(err)) from None
    if sealed is False and not allow_unsealed:
        raise _unsealed(path)
    if check is not None:
        check(read)
    return [games[i] for i in sorted(games)]


def _unsealed(path: Path) -> MatchRecordsError:
    """The refusal of a records file whose lines carry no digest (read only with --unsealed-records)."""
    return MatchRecordsError(f"{path}: its records carry no digest (written before records were sealed, or their "
                             f"digests deleted), so a changed game would not be noticed: give --unsealed-records to "
                             f"read them as they are, or move the file away to play the match anew")


def _other_match(path: Path, theirs: dict[str, Any], ours: dict[str, Any], difference: str) -> MatchRecordsError:
    """The refusal of records written by another match: a changed checkpoint named as such, else ``difference``."""
    changed = _changed_checkpoint(path, theirs, ours)
    if changed:
        return MatchRecordsError(changed)
    return MatchRecordsError(f"{path} holds games of another match ({difference}): "
                             f"choose another --records, or move the file away to play this match")


def preflight_records(path: str | Path, players: list[str], checkpoints: Sequence[str | None], settings: dict[str, Any],
                      allow_unsealed: bool = False) -> None:
    """The checks of ``read_match_records`` that need no game or model (issue 58: they came after
    torch, 2.1-3.1 s of CPU): every record's seal, the file sealed or not as a whole, and the
    settings known before the game is (``players``, ``checkpoints`` and the keys of ``settings``)
    the same as this match's. ``MatchRecordsError`` otherwise; the full read checks again."""
    path = Path(path)
    if not path.is_file():
        return
    from conhex_zero.files.jsonl import JsonlError

    ours = {"players": list(players), "checkpoints": list(checkpoints), **settings}
    sealed: bool | None = None
    try:
        for number, entry in iter_jsonl(path, warn=lambda _: None):
            sealed = _check_digest(f"{path}:{number}", entry, sealed)
            theirs = entry.get("match")
            if not isinstance(theirs, dict):
                continue  # the full read says so
            partial = {k: theirs.get(k) for k in ours}
            if partial != ours:
                raise _other_match(path, theirs, {**theirs, **ours}, _difference(partial, ours))
    except JsonlError as err:
        raise MatchRecordsError(str(err)) from None
    if sealed is False and not allow_unsealed:
        raise _unsealed(path)


def append_record(path: str | Path, record: "GameRecord") -> None:
    """One game appended as one complete line, sealed with its digest (``seal``), and flushed to the
    disk before the next game is played (a torn last line left by a crash is dropped first, with a
    warning)."""
    append_jsonl(path, [seal(record.to_json())])
    with open(path, "rb+") as f:
        os.fsync(f.fileno())

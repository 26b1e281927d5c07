"""The ladder file: every recorded result of a directory's players, one JSON object per line.

    {"type": "player", "name": "iter_0010", "kind": "checkpoint", "path": "...", "step": 320, ...}
    {"type": "result", "first": "iter_0010", "second": "random", "first_wins": 9, "second_wins": 1,
     "game": "hex-5", "time": 1795357795.2}

Results are per ordered pair (who moved first), so the rating fit can estimate the first-move
advantage. Lines are appended; ratings are always fitted over all of them. (Training tags its
lines with the iteration, and a resumed run drops the lines of iterations it redoes.)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conhex_zero.files.jsonl import JsonlError, append_jsonl, iter_jsonl, read_jsonl, rewrite_jsonl
from conhex_zero.ladder.ratings import Ratings, Result, fit

FILENAME = "ladder.jsonl"


@dataclass
class Ladder:
    path: Path
    players: dict[str, dict[str, Any]] = field(default_factory=dict)
    results: list[Result] = field(default_factory=list)

    @classmethod
    def open(cls, directory: str | Path) -> "Ladder":
        """The ladder of ``directory`` (a missing file is an empty ladder)."""
        path = Path(directory) / FILENAME
        ladder = cls(path)
        if path.is_dir():
            raise JsonlError(f"{path} is a directory, not a ladder file")
        if path.is_file():
            for number, entry in iter_jsonl(path):
                try:
                    _check_fields(entry)
                    if entry.get("type") == "player":
                        name = entry["name"]
                        if not isinstance(name, str):
                            raise TypeError("name")
                        ladder.players[name] = {**ladder.players.get(name, {}), **entry}
                    elif entry.get("type") == "result":
                        result = Result(entry["first"], entry["second"], _count(entry["first_wins"]),
                                        _count(entry["second_wins"]))
                        if not isinstance(result.first, str) or not isinstance(result.second, str):
                            raise TypeError("first, second")
                        ladder.results.append(result)
                except (KeyError, TypeError, ValueError) as err:
                    field_name = err.args[0] if err.args else "?"
                    raise JsonlError(f"{path}:{number}: not a ladder entry (bad or missing field {field_name!r}); "
                                     f"fix or delete that line") from None
        return ladder

    def _append(self, entries: list[dict[str, Any]]) -> None:
        append_jsonl(self.path, entries)

    def add_player(self, name: str, kind: str, **info: Any) -> None:
        entry = {"type": "player", "name": name, "kind": kind, **info}
        self.players[name] = {**self.players.get(name, {}), **entry}
        self._append([entry])

    def add_match(self, name1: str, name2: str, wins_by_colour: dict[str, list[int]], game: str,
                  **info: Any) -> None:
        """Record a match from ``MatchResult.wins_by_colour`` (player -> [wins first, wins second])."""
        w1_first, w1_second = wins_by_colour["player1"]
        w2_first, w2_second = wins_by_colour["player2"]
        now = time.time()
        entries = []
        # Games where player 1 moved first: player 1 won w1_first, player 2 (second) won w2_second.
        for first, second, fw, sw in ((name1, name2, w1_first, w2_second), (name2, name1, w2_first, w1_second)):
            if fw + sw:
                self.results.append(Result(first, second, fw, sw))
                entries.append({"type": "result", "first": first, "second": second, "first_wins": fw,
                                "second_wins": sw, "game": game, "time": now, **info})
        self._append(entries)

    def default_anchor(self) -> str:
        names = {r.first for r in self.results} | {r.second for r in self.results}
        if "random" in names:
            return "random"
        references = sorted(n for n in names if self.players.get(n, {}).get("kind") == "reference")
        if references:
            return references[0]
        if not names:
            raise ValueError(f"{self.path} holds no results")
        return sorted(names)[0]

    def fit(self, anchor: str | None = None) -> Ratings:
        if not self.results:
            raise ValueError(f"{self.path} holds no results yet")
        return fit(self.results, anchor or self.default_anchor())


_TEXT_FIELDS = ("type", "name", "kind", "path", "game", "first", "second")
_WHOLE_FIELDS = ("iteration", "step", "games")
_NUMBER_FIELDS = ("minutes", "time")


def _check_fields(entry: dict[str, Any]) -> None:
    """The fields that training, ``ladder`` and its picture read have their types (else ``TypeError``
    naming the field): text, whole numbers, finite numbers."""
    for key in _TEXT_FIELDS:
        if key in entry and not isinstance(entry[key], str):
            raise TypeError(key)
    for key in _WHOLE_FIELDS:
        if key in entry and (isinstance(entry[key], bool) or not isinstance(entry[key], int)):
            raise TypeError(key)
    for key in _NUMBER_FIELDS:
        if key in entry and (isinstance(entry[key], bool) or not isinstance(entry[key], (int, float))):
            raise TypeError(key)


def _count(value: Any) -> int:
    """A number of wins: a whole number, at least 0."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("first_wins, second_wins")
    return value


def trim(directory: str | Path, last_iteration: int) -> None:
    """Drop entries tagged with an iteration after ``last_iteration`` (work lost before a resume)."""
    path = Path(directory) / FILENAME
    if path.is_file():
        Ladder.open(directory)  # every line checked first: a bad one is an error naming it
        rewrite_jsonl(path, [e for e in read_jsonl(path) if e.get("iteration", 0) <= last_iteration])


def nearest(ratings: Ratings, candidates: list[str], around: float, k: int) -> list[str]:
    """The ``k`` candidates rated closest to ``around`` (a 'play your neighbours' schedule)."""
    rated = [c for c in candidates if c in ratings.elo]
    return sorted(rated, key=lambda n: abs(ratings.elo[n] - around))[:k]

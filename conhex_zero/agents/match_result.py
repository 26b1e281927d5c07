"""A match's games and what they say: one record per game, and the result computed from records.

``GameRecord`` is one game as the arena writes it (one JSON line of a records file): the players by
colour, every move, the opening's length, the winner, how it ended, the pieces the winner placed
(the scoring variant's measure) and how hard each side thought (``effort``: moves, seconds,
simulations a move and, for clock players, moves cut by the deadline). ``MatchResult`` holds a
match's records and counts, and is also built from records alone (``from_records``), so a match
resumed from its records file gives the result an uninterrupted one would.

The evidence of a match is its distinct games (``distinct.GameCanon``): a copy of a game (the same
moves up to symmetry, the same players in the same colours) adds nothing, so the score's interval,
the Elo difference and the ladder count each distinct game once.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from conhex_zero.agents.distinct import GameCanon
from conhex_zero.agents.scoring import ScoringSummary, score_pairs
from conhex_zero.ladder.ratings import score_to_elo, wilson


@dataclass
class GameRecord:
    index: int
    game: str
    seed: int
    first: str  # the player who moved first (colour X: top-bottom)
    second: str
    moves: list[str]  # every move from the empty board, random opening included
    opening: int  # how many of the moves were the random opening
    winner: int  # colour: 0 first, 1 second
    winner_name: str
    result: str  # "connection" or "forfeit: <reason>"
    plies: int | None = None  # the final position's ply (the swap counts as one); None: not recorded
    pieces: int | None = None  # the pieces the winner placed (the scoring variant's measure)
    effort: dict[str, dict[str, Any]] | None = None
    """How hard each side thought, by colour (``first``, ``second``): ``moves``, ``seconds`` (its
    share of the batched calls' time), ``sims`` and ``sims_min`` (simulations of its searches, in
    all and the least in a move; None for a player that does not search here, such as an external
    engine), ``cut`` (a clock player's moves cut short by the deadline; None for others)."""
    match: dict[str, Any] | None = None
    """The match's settings (players, game, seed, games, openings, ...): a resumed match checks its
    records file against them (``match_records``)."""

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None or k in ("winner",)}


def effort_summary(records: list["GameRecord"], players: tuple[str, str]) -> list[dict[str, Any]]:
    """Per player (player 1, player 2): moves, seconds per move, simulations a move (mean and the
    least in any move; None when it never searched here) and moves cut by a clock (None when it has
    none), from the games' ``effort``."""
    totals = [{"moves": 0, "seconds": 0.0, "sims": 0, "sims_moves": 0, "sims_min": None, "cut": None} for _ in players]
    for r in records:
        if not r.effort:
            continue
        p1_first = (r.first == players[0]) if players[0] != players[1] else r.index % 2 == 0
        for colour in ("first", "second"):
            e = r.effort.get(colour)
            if not e:
                continue
            k = 0 if (colour == "first") == p1_first else 1
            t = totals[k]
            t["moves"] += int(e.get("moves", 0))
            t["seconds"] += float(e.get("seconds", 0.0))
            if e.get("sims") is not None:
                t["sims"] += int(e["sims"])
                t["sims_moves"] += int(e.get("moves", 0))
                low = e.get("sims_min")
                t["sims_min"] = low if t["sims_min"] is None else min(t["sims_min"], low)
            if e.get("cut") is not None:
                t["cut"] = (t["cut"] or 0) + int(e["cut"])
    out = []
    for t in totals:
        out.append({"moves": t["moves"],
                    "seconds_per_move": t["seconds"] / t["moves"] if t["moves"] else None,
                    "sims_per_move": ({"mean": round(t["sims"] / t["sims_moves"], 1), "min": t["sims_min"]}
                                      if t["sims_moves"] else None),
                    "moves_cut": t["cut"]})
    return out


@dataclass
class MatchResult:
    game: str
    players: tuple[str, str]
    games: int
    wins: list[int]  # [player 1, player 2]
    wins_by_colour: dict[str, list[int]]  # player -> [wins moving first, wins moving second]
    lengths: list[int] = field(default_factory=list)
    records: list[GameRecord] = field(default_factory=list)
    rounds: int = 1
    decided: bool | None = None
    pieces: list[int] = field(default_factory=list)  # per game: pieces the winner placed (scoring variant)
    thinking_s: list[float] = field(default_factory=lambda: [0.0, 0.0])  # per player: seconds in act()
    moves_made: list[int] = field(default_factory=lambda: [0, 0])  # per player: moves chosen
    opening_plies: int = 0  # random plies of each opening (random pieces included)
    openings_available: int | None = None  # distinct openings of that length on the board (None: not counted)
    openings_repeat: bool = False  # the board had fewer distinct openings than pairs: some repeat
    _distinct: tuple[int, list[int]] | None = field(default=None, repr=False, compare=False)

    @property
    def seconds_per_move(self) -> list[float | None]:
        """Each player's thinking time per move (its batched calls' time over the moves they made)."""
        return [t / n if n else None for t, n in zip(self.thinking_s, self.moves_made)]

    # ------------------------------------------------------------ the evidence: distinct games
    def _canon(self) -> GameCanon:
        return GameCanon(self.game)

    def _action_lists(self, canon: GameCanon) -> list[list[int]]:
        return [[canon.game.parse_move(m) for m in r.moves] for r in self.records]

    def distinct_indices(self) -> list[int]:
        """The first game of each set of copies (same players in the same colours, same moves up to
        the board's colour-keeping symmetries), in order: the match's evidence."""
        if self._distinct is None or self._distinct[0] != len(self.records):
            canon = self._canon()
            seen: set = set()
            keep = []
            for g, (r, moves) in enumerate(zip(self.records, self._action_lists(canon))):
                key = (self._first_is_player1(r), canon.game_key(moves))
                if key not in seen:
                    seen.add(key)
                    keep.append(g)
            self._distinct = (len(self.records), keep)
        return self._distinct[1]

    @property
    def distinct_games(self) -> int:
        return len(self.distinct_indices())

    @property
    def distinct_openings(self) -> int:
        """Openings that differ up to symmetry (a pair's two games share one)."""
        canon = self._canon()
        return len({canon.opening_key(moves[:r.opening])
                    for r, moves in zip(self.records, self._action_lists(canon))})

    def _first_is_player1(self, r: GameRecord) -> bool:
        return r.first == self.players[0] if self.players[0] != self.players[1] else (r.index % 2 == 0)

    def distinct_wins_by_colour(self) -> dict[str, list[int]]:
        """``wins_by_colour`` over the distinct games only (what the ladder records)."""
        by = {"player1": [0, 0], "player2": [0, 0]}
        for g in self.distinct_indices():
            r = self.records[g]
            p1_first = self._first_is_player1(r)
            winner_is_p1 = (r.winner == 0) == p1_first
            mover = 0 if (r.winner == 0) else 1  # 0: the winner moved first
            by["player1" if winner_is_p1 else "player2"][mover] += 1
        return by

    @property
    def distinct_wins(self) -> list[int]:
        by = self.distinct_wins_by_colour()
        return [sum(by["player1"]), sum(by["player2"])]

    @property
    def score(self) -> float:
        """Player 1's share of the games played (copies included: the plain count)."""
        return self.wins[0] / self.games if self.games else 0.0

    @property
    def distinct_score(self) -> float:
        """Player 1's share of the distinct games: the estimate the interval and the Elo use."""
        n = self.distinct_games
        return self.distinct_wins[0] / n if n else 0.0

    @property
    def score_ci95(self) -> tuple[float, float]:
        """95% Wilson interval of the score, over the distinct games."""
        return wilson(self.distinct_wins[0], self.distinct_games)

    @property
    def elo(self) -> float:
        return score_to_elo(self.distinct_score)

    @property
    def elo_ci95(self) -> tuple[float, float]:
        low, high = self.score_ci95
        return score_to_elo(low), score_to_elo(high)

    @property
    def mean_length(self) -> float:
        return sum(self.lengths) / len(self.lengths) if self.lengths else 0.0

    @property
    def forfeits(self) -> int:
        return sum(r.result.startswith("forfeit") for r in self.records)

    def merge(self, other: "MatchResult") -> "MatchResult":
        by = {k: [a + b for a, b in zip(self.wins_by_colour[k], other.wins_by_colour[k])] for k in self.wins_by_colour}
        return MatchResult(self.game, self.players, self.games + other.games,
                           [a + b for a, b in zip(self.wins, other.wins)], by, self.lengths + other.lengths,
                           self.records + other.records, self.rounds + other.rounds, pieces=self.pieces + other.pieces,
                           thinking_s=[a + b for a, b in zip(self.thinking_s, other.thinking_s)],
                           moves_made=[a + b for a, b in zip(self.moves_made, other.moves_made)],
                           opening_plies=self.opening_plies, openings_available=self.openings_available,
                           openings_repeat=self.openings_repeat or other.openings_repeat)

    def scoring(self) -> ScoringSummary:
        """The games as scoring-variant pairs (games 2i and 2i + 1 of each round share an opening); a
        pair whose two games both copy an earlier pair's is left out, like any copied evidence."""
        distinct = set(self.distinct_indices())
        keep = [g for g in range(0, len(self.records) - 1, 2) if g in distinct or g + 1 in distinct]
        games = [g + k for g in keep for k in (0, 1)]
        return score_pairs([self.records[g].winner for g in games], [self.pieces[g] for g in games],
                           [tuple(self.records[g].moves[:self.records[g].opening]) for g in games],
                           [self._first_is_player1(self.records[g]) for g in games])

    def write_records(self, path: str | Path) -> Path:
        from conhex_zero.files.disk import write_text_atomic

        return write_text_atomic(path, "".join(json.dumps(r.to_json()) + "\n" for r in self.records))

    def effort(self) -> list[dict[str, Any]]:
        """How hard each player thought (``effort_summary``)."""
        return effort_summary(self.records, self.players)

    @classmethod
    def from_records(cls, game: str, players: tuple[str, str], records: list[GameRecord], **extra: Any) -> "MatchResult":
        """The result of the games ``records`` (in index order), as the match that played them all at
        once reports it; ``extra``: opening_plies, openings_available, openings_repeat, rounds, decided."""
        records = sorted(records, key=lambda r: r.index)
        wins = [0, 0]
        by = {"player1": [0, 0], "player2": [0, 0]}
        for r in records:
            p1_first = (r.first == players[0]) if players[0] != players[1] else r.index % 2 == 0
            p1_won = (r.winner == 0) == p1_first
            wins[0 if p1_won else 1] += 1
            by["player1" if p1_won else "player2"][0 if r.winner == 0 else 1] += 1
        summary = effort_summary(records, players)
        result = cls(game=game, players=players, games=len(records), wins=wins, wins_by_colour=by,
                     lengths=[r.plies if r.plies is not None else len(r.moves) for r in records], records=records,
                     pieces=[r.pieces or 0 for r in records],
                     thinking_s=[(s["seconds_per_move"] or 0.0) * s["moves"] for s in summary],
                     moves_made=[s["moves"] for s in summary], **extra)
        return result

    def to_json(self, records_path: str | Path | None = None) -> dict:
        def finite(x: float) -> float | None:
            return None if x in (float("inf"), float("-inf")) else round(x, 1)

        return {"game": self.game, "players": list(self.players), "games": self.games,
                "wins": self.wins, "score": self.score, "score_ci95": [round(x, 4) for x in self.score_ci95],
                "elo": finite(self.elo), "elo_ci95": [finite(x) for x in self.elo_ci95],
                "distinct_games": self.distinct_games, "distinct_openings": self.distinct_openings,
                "distinct_wins": self.distinct_wins, "distinct_score": self.distinct_score,
                "opening_plies": self.opening_plies, "openings_available": self.openings_available,
                "openings_repeat": self.openings_repeat,
                "wins_by_colour": {"player1": self.wins_by_colour["player1"],
                                   "player2": self.wins_by_colour["player2"]},
                "mean_length": self.mean_length, "forfeits": self.forfeits, "rounds": self.rounds,
                "seconds_per_move": [None if x is None else round(x, 5) for x in self.seconds_per_move],
                "sims_per_move": [e["sims_per_move"] for e in self.effort()],
                "moves_cut": [e["moves_cut"] for e in self.effort()],
                "decided": self.decided, "records": str(records_path) if records_path else None}

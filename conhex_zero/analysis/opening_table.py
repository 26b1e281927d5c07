"""The opening table that stands up: one model's analysis at several efforts, a second model's beside
it, and an empirical check of the openings that matter most.

* ``PositionAnalysis`` (``openings.py``) gives each opening's win chance for the first player at
  every effort searched (e.g. 200, 800 and 3,200 simulations), whether it is stable across them,
  and the swap decision (from the largest effort).
* A second model (another training line) analysed the same way: per opening its win chance, its
  stability and its swap decision, and whether the two models agree on the swap; the agreement
  that counts is over the openings stable for both (``agreement``).
* The check: self-play games of the model from an opening (the pie rule off after it, since the
  table's value is the one without a swap), at a strong setting with root noise so that games
  differ, counted over distinct games with a 95% Wilson interval. Where the interval excludes one
  half, it says who wins the opening in the model's own play, and the table's swap decision should
  say the same (``OpeningCheck.agrees``).

The openings checked (``openings_to_check``): the ``count`` groups rated best and the ``count``
rated worst for the first player, and every group whose swap decision differs between the models;
one symmetry group is one opening (its games are spread over the group's moves).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

import torch

from conhex_zero.agents.arena import play_match
from conhex_zero.agents.distinct import GameCanon
from conhex_zero.agents.match_openings import OpeningPlan
from conhex_zero.analysis.openings import MoveAnalysis, PositionAnalysis
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.ladder.ratings import wilson
from conhex_zero.nn.checkpoint import Checkpoint


@dataclass
class OpeningCheck:
    """Self-play games from one opening (a symmetry group), and what they say."""

    moves: list[str]
    """The group's openings (games spread over them)."""
    reason: str
    """Why it was checked: ``best``, ``worst`` or ``lines differ``."""
    table_win_rate: float
    """The table's win chance for the first player (largest effort)."""
    table_swap: bool
    games: int = 0
    """Distinct games (a repeat of an earlier game, up to symmetry, is counted once)."""
    played: int = 0
    first_wins: int = 0
    low: float = 0.0
    high: float = 1.0

    @property
    def verdict(self) -> str:
        """``first`` or ``second`` when the interval excludes one half, else ``undecided``."""
        return "first" if self.low > 0.5 else "second" if self.high < 0.5 else "undecided"

    @property
    def agrees(self) -> bool | None:
        """The table's swap decision (swap when the first player wins) against the games' verdict;
        None when the games do not decide."""
        return None if self.verdict == "undecided" else (self.verdict == "first") == self.table_swap

    def to_json(self) -> dict:
        data = asdict(self)
        data.update({"score": round(self.first_wins / self.games, 4) if self.games else None,
                     "low": round(self.low, 4), "high": round(self.high, 4), "table_win_rate":
                     round(self.table_win_rate, 4), "verdict": self.verdict, "agrees": self.agrees})
        return data


@dataclass
class OpeningTable:
    analysis: PositionAnalysis
    other: PositionAnalysis | None = None
    checks: list[OpeningCheck] = field(default_factory=list)
    check_sims: int = 0
    check_games: int = 0

    def other_move(self, move: str) -> MoveAnalysis | None:
        if self.other is None:
            return None
        return next((m for m in self.other.moves if m.move == move), None)

    def agreement(self) -> tuple[int, int]:
        """(openings whose swap decisions agree, openings stable for both models)."""
        agree = both = 0
        for m in self.analysis.moves:
            o = self.other_move(m.move)
            if o is None or m.swap is None or o.swap is None or not (m.stable and o.stable):
                continue
            both += 1
            agree += int(m.swap == o.swap)
        return agree, both

    def differing(self) -> list[MoveAnalysis]:
        """Openings whose swap decisions differ between the models."""
        out = []
        for m in self.analysis.moves:
            o = self.other_move(m.move)
            if o is not None and m.swap is not None and o.swap is not None and m.swap != o.swap:
                out.append(m)
        return out

    def check_summary(self) -> tuple[int, int, int]:
        """(openings checked, checks whose interval excludes one half, of those agreeing with the table)."""
        decided = [c for c in self.checks if c.agrees is not None]
        return len(self.checks), len(decided), sum(bool(c.agrees) for c in decided)

    def to_json(self) -> dict:
        data = self.analysis.to_json()
        key = "openings" if self.analysis.is_opening else "moves"
        if self.other is not None:
            for row in data[key]:
                o = self.other_move(row["move"])
                row.update({"other_win_rate": round(o.win_rate, 4) if o else None,
                            "other_stable": o.stable if o else None, "other_swap": o.swap if o else None,
                            "lines_agree": (o.swap == row["swap"]) if o and o.swap is not None else None})
            agree, both = self.agreement()
            data["other"] = {"checkpoint": self.other.checkpoint, "stable": self.other.stable_count,
                             "agree_on_stable": agree, "stable_in_both": both}
        if self.checks or self.check_games:
            checked, decided, agree = self.check_summary()
            data["checks"] = {"games_per_opening": self.check_games, "sims": self.check_sims, "checked": checked,
                              "decided": decided, "agree": agree, "openings": [c.to_json() for c in self.checks]}
        return data


def openings_to_check(analysis: PositionAnalysis, other: PositionAnalysis | None,
                      count: int = 10) -> list[tuple[list[MoveAnalysis], str]]:
    """The groups to check: ``count`` best, ``count`` worst, and those whose swap decisions differ."""
    groups = [g for g in analysis.groups() if g[0].swap is not None]
    chosen: dict[int, str] = {}
    for g in groups[:count]:
        chosen.setdefault(g[0].group, "best")
    for g in groups[::-1][:count]:
        chosen.setdefault(g[0].group, "worst")
    if other is not None:
        table = OpeningTable(analysis, other)
        for m in table.differing():
            chosen.setdefault(m.group, "lines differ")
    return [(g, chosen[g[0].group]) for g in groups if g[0].group in chosen]


def check_openings(env: VecEnv, checkpoint: Checkpoint, name: str, groups: list[tuple[list[MoveAnalysis], str]],
                   games: int, sims: int, seed: int = 0, progress: bool = True) -> list[OpeningCheck]:
    """``games`` self-play games (even) from each group's openings, all in one batch, the pie rule off
    after the opening; the model searches ``sims`` simulations a move with root Gumbel noise."""
    from conhex_zero.analysis.game_stats import noisy_player

    if games < 2 or games % 2:
        raise ValueError("games per opening: an even number, at least 2")
    game = replace(env.game, swap=False)
    play_env = VecEnv(game, env.device)
    pairs_each = games // 2
    rows, owner = [], []
    for k, (group, _) in enumerate(groups):
        for p in range(pairs_each):
            rows.append([group[p % len(group)].action])
            owner.append(k)
    if not rows:
        return []
    plan = OpeningPlan(torch.tensor(rows, dtype=torch.long), plies=1, available=None, repeats=False)
    player = noisy_player(play_env, checkpoint, name, sims, seed)
    match = play_match(play_env, player, player, 2 * len(rows), seed=seed, progress=progress, openings=plan)
    canon = GameCanon(game)
    seen: set = set()
    checks = [OpeningCheck(moves=[m.move for m in group], reason=reason, table_win_rate=group[0].win_rate,
                           table_swap=bool(group[0].swap)) for group, reason in groups]
    for index, record in enumerate(match.records):
        check = checks[owner[index // 2]]
        check.played += 1
        key = canon.game_key([game.parse_move(m) for m in record.moves])
        if key in seen:
            continue
        seen.add(key)
        check.games += 1
        check.first_wins += int(record.winner == 0)
    for check in checks:
        if check.games:
            check.low, check.high = wilson(check.first_wins, check.games)
    return checks

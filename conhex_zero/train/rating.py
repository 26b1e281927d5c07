"""Rating a line's checkpoints off the machine that trained them (``conhex-zero rate LINE``).

A piece on a lent GPU only checks its checkpoint (``eval.mode: check``): a match of a few dozen
games there costs minutes, since its search steps are sequential and too small to fill the device,
while self-play's thousands of games fill it. Any machine can rate the checkpoints later, for
example a CPU session in the background. For every checkpoint of the line, oldest first, it plays:

* each fixed reference of the line's ``eval.references`` (random, shipped checkpoints): ``games``;
* the line's previous checkpoint (its predecessor, e.g. the previous piece's): ``previous_games``;
* the ``neighbours`` other checkpoints rated nearest to it: ``previous_games`` each;

where the ladder holds no match of at least that many games between the two yet (so the command
can be run again at any time: after an interruption it plays what is missing, and with more
``--games`` it plays larger matches). Each match is appended to ``LINE/ladder.jsonl`` when it ends.
Then the ratings are fitted over the whole ladder and written into the line: each piece record's
``elo``, ``elo_stderr`` and ``scores`` (from the largest match against each opponent) with a
``rated`` note, and the rated iteration's metric line (``eval/...`` keys, as an evaluation inside
the run writes them, for ``conhex-zero curve``). These are derived from the ladder every time, so a
line whose pieces.jsonl or metrics.jsonl were copied back from a lent machine gets them again.
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from conhex_zero.files.jsonl import read_jsonl, rewrite_jsonl
from conhex_zero.ladder.ratings import Ratings, wilson
from conhex_zero.ladder.store import Ladder, nearest
from conhex_zero.train.config import TrainConfig
from conhex_zero.train.line import Line
from conhex_zero.train.line_past import checkpoint_iteration


@dataclass(frozen=True)
class RateOptions:
    games: int | None = None
    """Games against each fixed reference (None: the line's ``eval.games``)."""
    previous_games: int | None = None
    """Games against the previous checkpoint and each neighbour (None: ``eval.previous_games``)."""
    neighbours: int | None = None
    sims: int | None = None
    """Simulations a move of every network player (None: ``eval.sims``)."""
    references: tuple[str, ...] | None = None
    device: str = "cpu"
    progress: bool = True


@dataclass(frozen=True)
class Match:
    """A match as the ladder holds it, seen from ``first``: the games asked for, and the distinct
    games each side won (a connection game has no draws: ``wins + losses`` are its distinct games)."""
    first: str
    second: str
    games: int
    wins: int
    losses: int

    def turned(self) -> "Match":
        return Match(self.second, self.first, self.games, self.losses, self.wins)

    @property
    def score(self) -> list[float]:
        """[score, low, high]: the share of the distinct games won and its 95% Wilson interval."""
        n = self.wins + self.losses
        low, high = wilson(self.wins, n)
        return [round(self.wins / n, 3) if n else 0.0, round(low, 3), round(high, 3)]


@dataclass
class RateReport:
    played: list[tuple[Match, float]] = field(default_factory=list)
    """Every match this call played (seen from the rated checkpoint) and its seconds."""
    ratings: Ratings | None = None
    interrupted: bool = False


def ladder_matches(path: Path) -> list[Match]:
    """The ladder's matches: result lines grouped by their ``match`` id (older lines: their time and
    pair of players); a match's games are the number asked for when recorded, else its distinct games."""
    groups: dict[tuple, list[dict]] = {}
    for e in (read_jsonl(path) if path.is_file() else []):
        if e.get("type") == "result":
            key = (e["match"],) if "match" in e else (e.get("time"), frozenset((e["first"], e["second"])))
            groups.setdefault(key, []).append(e)
    matches = []
    for entries in groups.values():
        a, b = entries[0]["first"], entries[0]["second"]
        wins = sum(e["first_wins"] if e["first"] == a else e["second_wins"] for e in entries)
        losses = sum(e["second_wins"] if e["first"] == a else e["first_wins"] for e in entries)
        matches.append(Match(a, b, int(entries[0].get("games", wins + losses)), wins, losses))
    return matches


def largest(matches: list[Match], a: str, b: str) -> Match | None:
    """The largest match between ``a`` and ``b`` (by games asked for), seen from ``a``."""
    found = [m if m.first == a else m.turned() for m in matches if {m.first, m.second} == {a, b}]
    return max(found, key=lambda m: (m.games, m.wins + m.losses)) if found else None


def match_seed(base: int, name: str, opponent: str) -> int:
    """A match's seed, the same every time it is (re)played."""
    return (base * 1_000_003 + zlib.crc32(f"{name}|{opponent}".encode())) % (2**31)


class LineRater:
    """Rates the checkpoints of one line (see the module docstring)."""

    def __init__(self, line: Line, config: TrainConfig, options: RateOptions, log: Callable[[str], None] = print,
                 upto: int | None = None):
        """``upto``: the line's carried iteration; later checkpoints are dropped work, not rated."""
        ev = config.eval
        self.line, self.config, self.options, self.log = line, config, options, log
        self.games = options.games if options.games is not None else ev.games
        self.previous_games = options.previous_games if options.previous_games is not None else ev.previous_games
        self.neighbours = options.neighbours if options.neighbours is not None else ev.neighbours
        self.sims = options.sims if options.sims is not None else ev.sims
        self.references = tuple(options.references if options.references is not None else ev.references)
        self.names = [p.stem for p in line.checkpoint_files()
                      if upto is None or (checkpoint_iteration(p.stem) or 0) <= upto]

    def fixed_opponents(self, index: int) -> list[tuple[str, int]]:
        """The references and the predecessor of checkpoint ``index``, with the games each needs."""
        wanted = [(ref, self.games) for ref in self.references if self.games]
        if index and self.previous_games:
            wanted.append((self.names[index - 1], self.previous_games))
        return wanted

    def missing(self, name: str, wanted: list[tuple[str, int]]) -> list[tuple[str, int]]:
        matches = ladder_matches(self.line.ladder_file)
        return [(opp, n) for opp, n in wanted if (m := largest(matches, name, opp)) is None or m.games < n]

    def neighbours_of(self, name: str, ladder: Ladder) -> list[str]:
        """The ``neighbours`` other checkpoints rated nearest to ``name`` (its predecessor excluded)."""
        if not self.neighbours or name not in {r.first for r in ladder.results}:
            return []
        ratings = ladder.fit()
        index = self.names.index(name)
        others = [n for n in self.names if n != name and (not index or n != self.names[index - 1])]
        return nearest(ratings, others, ratings.elo[name], self.neighbours)

    # ------------------------------------------------------------------ playing
    def run(self) -> RateReport:
        """Play every missing match, then write the ratings into the line's records and metrics."""
        from conhex_zero.env.vec_env import VecEnv

        report = RateReport()
        env = VecEnv(self.config.game, self.options.device)
        ladder = Ladder.open(self.line.path)
        for ref in self.references:
            if ref not in ladder.players:
                ladder.add_player(ref, "reference")
        try:
            for index, name in enumerate(self.names):
                self._register(ladder, name)
                for opponent, games in self.missing(name, self.fixed_opponents(index)):
                    report.played.append(self._play(env, ladder, name, opponent, games))
                ladder = Ladder.open(self.line.path)
                for other in self.neighbours_of(name, ladder):
                    for opponent, games in self.missing(name, [(other, self.previous_games)]):
                        report.played.append(self._play(env, ladder, name, opponent, games))
        except KeyboardInterrupt:
            report.interrupted = True
        ladder = Ladder.open(self.line.path)
        if ladder.results:
            report.ratings = ladder.fit()
            write_ratings(self.line, self, report.ratings)
        return report

    def _register(self, ladder: Ladder, name: str) -> None:
        """The checkpoint's ladder entry, from its file's metadata (once)."""
        if ladder.players.get(name, {}).get("kind") == "checkpoint":
            return
        from conhex_zero.nn.checkpoint import load_checkpoint

        meta = load_checkpoint(self.line.checkpoints / f"{name}.pt").meta
        info = {k: meta[k] for k in ("iteration", "step", "games") if isinstance(meta.get(k), int)}
        if isinstance(meta.get("minutes"), (int, float)):
            info["minutes"] = round(float(meta["minutes"]), 3)
        ladder.add_player(name, "checkpoint", path=f"checkpoints/{name}.pt", **info)

    def _player(self, env, name: str, seed: int):
        from conhex_zero.agents.players import network_player
        from conhex_zero.train.evaluate import reference_player

        if name in self.names:
            return network_player(env, self.line.checkpoints / f"{name}.pt", self.sims, seed, name=name,
                                  backend="eager")  # a compile per rung would cost more than it gains
        return reference_player(name, env, self.sims, seed)

    def _play(self, env, ladder: Ladder, name: str, opponent: str, games: int) -> tuple[Match, float]:
        from conhex_zero.agents.arena import play_match

        seed = match_seed(self.config.seed, name, opponent)
        started = time.perf_counter()
        me, other = self._player(env, name, seed), self._player(env, opponent, seed + 1)
        me.name, other.name = name, opponent  # the ladder's names (a player of a file is named by its effort too)
        result = play_match(env, me, other, games, seed=seed, progress=self.options.progress,
                            opening_plies=self.config.eval.opening_plies)
        match_id = f"rate-{name}-{zlib.crc32(opponent.encode()):08x}-{games}"
        iteration = int(name.split("_")[1]) if name.startswith("iter_") else 0
        ladder.add_match(name, opponent, result.distinct_wins_by_colour(), env.game.spec, iteration=iteration,
                         match=match_id, games=games, sims=self.sims)
        wins, losses = result.distinct_wins
        match = Match(name, opponent, games, wins, losses)
        seconds = time.perf_counter() - started
        score = match.score
        self.log(f"{name} against {opponent}: {wins} of {wins + losses} distinct games ({score[0]:.2f}, 95% "
                 f"{score[1]:.2f}-{score[2]:.2f}) at {self.sims} simulations, {seconds / 60:.1f} min")
        return match, seconds


def opponent_key(rater: LineRater, name: str, opponent: str) -> str:
    """How a record's ``scores`` and the metrics name an opponent: a reference as the run's own
    evaluation does (``evaluate.reference_key``), the predecessor as ``previous``."""
    from conhex_zero.train.evaluate import reference_key

    if opponent in rater.references:
        return reference_key(opponent)[len("eval/vs_"):]
    return "previous" if opponent in rater.names and rater.names.index(opponent) == rater.names.index(name) - 1 \
        else opponent


def write_ratings(line: Line, rater: LineRater, ratings: Ratings) -> list[str]:
    """Each rated checkpoint's Elo and scores into its piece record and its iteration's metric line
    (see the module docstring); returns the checkpoints written."""
    matches = ladder_matches(line.ladder_file)
    written: dict[str, dict[str, Any]] = {}
    for index, name in enumerate(rater.names):
        if name not in ratings.elo:
            continue
        opponents = [opp for opp, _ in rater.fixed_opponents(index)]
        scores = {opponent_key(rater, name, opp): m.score for opp in opponents if (m := largest(matches, name, opp))}
        written[name] = {"elo": round(ratings.elo[name], 1), "elo_stderr": round(ratings.stderr[name], 1),
                         "scores": scores}
    _write_records(line, written)
    _write_metrics(line, written, ratings)
    return list(written)


def _write_records(line: Line, written: dict[str, dict[str, Any]]) -> None:
    records = line.pieces()
    if not records:
        return
    import torch

    note = {"by": "conhex-zero rate", "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "torch": torch.__version__}
    for r in records:
        name = Path(str(r.get("checkpoint", ""))).stem
        if name in written:
            r.update(written[name])
            r["rated"] = note
    rewrite_jsonl(line.pieces_file, records)


def _write_metrics(line: Line, written: dict[str, dict[str, Any]], ratings: Ratings) -> None:
    if not line.metrics_file.is_file():
        return
    metrics = read_jsonl(line.metrics_file)
    for m in metrics:
        name = f"iter_{int(m.get('iteration', 0)):04d}"
        if name not in written:
            continue
        for key, (score, low, high) in written[name]["scores"].items():
            m.update({f"eval/vs_{key}/win_rate": score, f"eval/vs_{key}/win_rate_low": low,
                      f"eval/vs_{key}/win_rate_high": high})
        m.update({"eval/elo": ratings.elo[name], "eval/elo_stderr": ratings.stderr[name],
                  "eval/first_move_elo": ratings.first_move})
    rewrite_jsonl(line.metrics_file, metrics)

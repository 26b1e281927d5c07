"""Matches between two players, all games at once, with records a person can replay.

Games come in pairs that start from the same opening with colours exchanged: in game 2i player 1
moves first, in game 2i + 1 player 2 does. The openings are random plies (the game spec's random
pieces, ``random=K``, plus at least ``opening_plies`` moves; never a swap) drawn *without
replacement* by ``match_openings.plan_openings``: every pair gets its own opening, distinct up to
the board's symmetries, and the openings grow longer when the board has too few short ones, so the
games differ even between deterministic players. Every step, each player is asked for the moves
of the games where it is to move (one batched call each, with the games' move histories for
players that need them, such as external engines). A player may forfeit a game by answering -1
(with a reason in ``player.last_failures``): the other player wins it. Moves of our own players
are checked; an illegal one is a bug and raises.

The evidence of a match is its distinct games (``distinct.GameCanon``): a copy of a game (the same
moves up to symmetry, the same players in the same colours) adds nothing, so the score's interval,
the Elo difference and the ladder count each distinct game once. With distinct openings copies
arise only where the board runs out of openings or with ``fixed_openings``.

``play_until_decided`` plays rounds until the 99% interval of the score excludes one half.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from conhex_zero.agents.distinct import GameCanon
from conhex_zero.agents.match_openings import OpeningPlan, plan_openings
from conhex_zero.agents.players import Player
from conhex_zero.agents.scoring import ScoringSummary, pieces_placed, score_pairs
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.ladder.ratings import score_to_elo, wilson
from conhex_zero.progress import progress_bar
from conhex_zero.search import rng

EXPECTED_LENGTH = 0.6
"""Before any game of a match has ended, the progress bar expects each to last this fraction of the
board's holes (plies after the opening); finished games then give the estimate."""


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
        from conhex_zero.disk import write_text_atomic

        return write_text_atomic(path, "".join(json.dumps(asdict(r)) + "\n" for r in self.records))

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
                "decided": self.decided, "records": str(records_path) if records_path else None}


def play_match(env: VecEnv, player1: Player, player2: Player, games: int, seed: int = 0,
               progress: bool = True, opening_plies: int = 0, first_index: int = 0,
               openings: OpeningPlan | None = None, fixed_openings: bool = False) -> MatchResult:
    """Play ``games`` games between two players: pairs with colours exchanged over a shared opening.

    The pairs' openings are ``openings`` (a plan for at least this match's pairs, e.g. one round's
    slice of a longer match), else drawn for this match by ``plan_openings`` from ``seed``: distinct,
    at least the game's random pieces plus ``opening_plies`` long (exactly that with
    ``fixed_openings``, repeating where the board has too few)."""
    if games < 1:
        raise ValueError("a match needs at least one game")
    dev = env.device
    pairs = (games + 1) // 2
    if openings is None:
        openings = plan_openings(env.game, pairs, env.game.opening_plies + opening_plies,
                                 seed * 1_000_003 + 7_777_777, fixed=fixed_openings)
    if openings.pairs < pairs:
        raise ValueError(f"{openings.pairs} openings for {pairs} pairs")
    game_keys = rng.make_keys(seed * 1_000_003, games, device=dev)
    opening = openings.plies
    opening_moves = openings.rows(0, pairs).repeat_interleave(2, dim=0)[:games].to(dev)  # [G, plies]
    state = env.initial_state(games)
    for ply in range(opening):
        state = env.step(state, opening_moves[:, ply], check=True)
    history = [list(map(int, row)) for row in opening_moves.tolist()]
    thinking, moves_made = [0.0, 0.0], [0, 0]
    results = [""] * games
    p1_first = torch.arange(games, device=dev) % 2 == 0  # [G]
    players = (player1, player2)
    # The bar counts plies (moves by the players), so it moves during a long match, when games
    # still all run; its total is an estimate of the match's plies (games x expected length),
    # refined as games finish, so tqdm's time left is an estimate too.
    guess = max(1, round(EXPECTED_LENGTH * env.num_holes))  # plies per game after the opening, before any ended
    bar = progress_bar(total=games * guess, desc=f"{player1.name} vs {player2.name}", unit="ply", disable=not progress,
               leave=False, dynamic_ncols=True)
    bar.set_postfix_str(f"games 0/{games}", refresh=False)
    finished = 0
    played = 0  # plies played by the players (all games)
    # Players that serve a limited number of games at once (external engines: one process per game
    # for its whole length) get the games in chunks of that many; the others take all at once.
    limits = [int(p.max_parallel_games) for p in players if getattr(p, "max_parallel_games", None)]
    chunk = games if not limits else max(1, min(limits) - min(limits) % 2 if min(limits) > 1 else 1)
    active = torch.arange(games, device=dev) < chunk  # [G] games started so far
    while True:
        live = ~state.done & active
        if not bool(live.any()):
            if bool(active.all()):
                break
            started_games = int(active.sum())
            active = torch.arange(games, device=dev) < started_games + chunk  # the next chunk
            continue
        p1_to_move = (state.to_move == 0) == p1_first
        actions = torch.zeros(games, dtype=torch.long, device=dev)
        for k, player in enumerate(players):
            rows = (live & (p1_to_move if k == 0 else ~p1_to_move)).nonzero().squeeze(1)
            if rows.numel():
                keys = rng.fold(game_keys[rows], state.ply[rows])
                started = time.perf_counter()
                ids = {"games": [first_index + g for g in rows.tolist()]} if getattr(player, "per_game", False) else {}
                actions[rows] = player.act(state[rows], keys, history=[history[g] for g in rows.tolist()], **ids)
                thinking[k] += time.perf_counter() - started
                moves_made[k] += rows.numel()
                failures = getattr(player, "last_failures", {}) or {}
                for local, reason in failures.items():
                    results[int(rows[local])] = f"forfeit: {player.name}: {reason}"
        forfeit = live & (actions < 0)
        playing = (live & ~forfeit).nonzero().squeeze(1)
        env.check_actions(state[playing], actions[playing])  # our own players never move illegally
        if bool(forfeit.any()):
            state = state.with_winner(torch.where(forfeit, 1 - state.to_move, state.winner))
        for g, a in zip(playing.tolist(), actions[playing].tolist()):
            history[g].append(a)
        state = state.where(live, env.step(state, actions.clamp(min=0)))  # games not started wait
        moved = int(playing.numel())
        played += moved
        done_now = int(state.done.sum())
        if done_now != finished:  # re-estimate: unfinished games last as long as finished ones did, on average
            finished = done_now
            lengths = [len(h) - opening for h, d in zip(history, state.done.tolist()) if d]
            mean = sum(lengths) / len(lengths)
            left = sum(max(mean - (len(h) - opening), 1.0) for h, d in zip(history, state.done.tolist()) if not d)
            bar.total = max(played, round(played + left))
            bar.set_postfix_str(f"games {finished}/{games}", refresh=False)
        bar.total = max(bar.total, played + games - finished)  # every running game has a ply to go
        bar.update(moved)
    bar.total = bar.n  # exact at the end
    bar.close()
    winner_is_p1 = (state.winner == 0) == p1_first
    wins = [int(winner_is_p1.sum()), int((~winner_is_p1).sum())]
    by_colour = {
        "player1": [int((winner_is_p1 & p1_first).sum()), int((winner_is_p1 & ~p1_first).sum())],
        "player2": [int((~winner_is_p1 & ~p1_first).sum()), int((~winner_is_p1 & p1_first).sum())],
    }
    names = (player1.name, player2.name)
    records = []
    for g in range(games):
        first, second = (names[0], names[1]) if bool(p1_first[g]) else (names[1], names[0])
        w = int(state.winner[g])
        records.append(GameRecord(index=first_index + g, game=env.game.spec, seed=seed, first=first, second=second,
                                  moves=[env.game.action_name(a) for a in history[g]], opening=opening,
                                  winner=w, winner_name=(first, second)[w], result=results[g] or "connection"))
    return MatchResult(game=env.game.spec, players=names, games=games, wins=wins, wins_by_colour=by_colour,
                       lengths=state.ply.tolist(), records=records,
                       pieces=pieces_placed(state.holes, state.winner).tolist(),
                       thinking_s=thinking, moves_made=moves_made, opening_plies=opening,
                       openings_available=openings.available, openings_repeat=openings.repeats)


def play_until_decided(env: VecEnv, player1: Player, player2: Player, max_games: int, round_games: int,
                       seed: int = 0, progress: bool = True, opening_plies: int = 0,
                       fixed_openings: bool = False) -> MatchResult:
    """Rounds of ``round_games`` until the 99% Wilson interval of player 1's score (over the distinct
    games) excludes 1/2, or ``max_games`` are played; ``decided`` says which. The openings of all
    rounds are drawn at once, so no round repeats another's."""
    total: MatchResult | None = None
    pairs = [(min(round_games, max_games - start) + 1) // 2 for start in range(0, max_games, round_games)]
    plan = plan_openings(env.game, sum(pairs), env.game.opening_plies + opening_plies,
                         seed * 1_000_003 + 7_777_777, fixed=fixed_openings)
    played = 0
    round_no = 0
    while played < max_games:
        n = min(round_games, max_games - played)
        used = sum(pairs[:round_no])
        round_plan = OpeningPlan(plan.rows(used, pairs[round_no]), plan.plies, plan.available, plan.repeats)
        r = play_match(env, player1, player2, n, seed=seed + 7919 * round_no, progress=progress,
                       first_index=played, openings=round_plan)
        total = r if total is None else total.merge(r)
        played += n
        round_no += 1
        low, high = wilson(total.distinct_wins[0], total.distinct_games, z=2.576)
        if low > 0.5 or high < 0.5:
            total.decided = True
            return total
    assert total is not None
    total.decided = False
    return total

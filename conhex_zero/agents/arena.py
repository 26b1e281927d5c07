"""Matches between two players, all games at once, with records a person can replay.

Games come in pairs that start from the same opening with colours exchanged: in game 2i player 1
moves first, in game 2i + 1 player 2 does. The openings are random plies (the game spec's random
pieces, ``random=K``, plus at least ``opening_plies`` moves; never a swap) drawn *without
replacement* by ``match_openings.plan_openings``: every pair gets its own opening, distinct up to
the board's symmetries, and the openings grow longer when the board has too few short ones, so the
games differ even between deterministic players. Every step, each player is asked for the moves
of the games where it is to move (one batched call each, with the games' move histories for
players that need them, such as external engines). A player may forfeit a game by answering -1
(with a reason in ``player.last_failures``): the other player wins it. A player that serves a
limited number of games at once (``max_parallel_games``: an external engine's processes, a
timed player's pair) gets them in chunks of that many. Moves of our own players
are checked; an illegal one is a bug and raises.

The evidence of a match is its distinct games (``distinct.GameCanon``): a copy of a game (the same
moves up to symmetry, the same players in the same colours) adds nothing, so the score's interval,
the Elo difference and the ladder count each distinct game once. With distinct openings copies
arise only where the board runs out of openings or with ``fixed_openings``.

A match may be played in parts: ``only`` names the games to play now and ``done`` gives the records
of games played before (a match resumed from its records file, ``match_records``): game g always
gets the same opening, colours and random keys, so the games played now are the ones an
uninterrupted match would have played (exactly so between players whose moves do not depend on the
clock or on which games share their batch), and the result counts every game once.
``on_game_end`` receives each game's record as the game ends (the arena appends it to the records
file at once, so a stopped match keeps every finished game).

``play_until_decided`` plays rounds until the 99% interval of the score excludes one half.
"""

from __future__ import annotations

import time
from typing import Callable, Sequence

import torch

from conhex_zero.agents.match_openings import OpeningPlan, plan_openings
from conhex_zero.agents.match_result import GameRecord, MatchResult  # noqa: F401  (re-exported)
from conhex_zero.agents.players import Player
from conhex_zero.agents.scoring import pieces_placed
from conhex_zero.console.progress import progress_bar
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.ladder.ratings import wilson
from conhex_zero.search import rng

EXPECTED_LENGTH = 0.6
"""Before any game of a match has ended, the progress bar expects each to last this fraction of the
board's holes (plies after the opening); finished games then give the estimate."""


class _Effort:
    """How hard each side thought in each game of a batch: moves, seconds (a batched call's time
    shared out over its games), simulations (from a search player's ``last_effort``) and cuts."""

    def __init__(self, games: int):
        self.moves = torch.zeros(games, 2, dtype=torch.long)  # [G, colour]
        self.seconds = torch.zeros(games, 2, dtype=torch.float64)
        self.sims = torch.zeros(games, 2, dtype=torch.long)
        self.sims_min = torch.full((games, 2), -1, dtype=torch.long)
        self.searched = torch.zeros(games, 2, dtype=torch.bool)
        self.cut = torch.zeros(games, 2, dtype=torch.long)
        self.clock = [False, False]  # per player: a clock player (its cuts are counted)

    def add(self, rows: list[int], colours: list[int], seconds: float, efforts: list[tuple[int, bool]] | None) -> None:
        share = seconds / max(1, len(rows))
        for k, (g, c) in enumerate(zip(rows, colours)):
            self.moves[g, c] += 1
            self.seconds[g, c] += share
            if efforts is not None and k < len(efforts):
                sims, cut = efforts[k]
                self.searched[g, c] = True
                self.sims[g, c] += sims
                low = int(self.sims_min[g, c])
                self.sims_min[g, c] = sims if low < 0 else min(low, sims)
                self.cut[g, c] += int(cut)

    def record(self, g: int, clock_by_colour: tuple[bool, bool]) -> dict:
        out = {}
        for c, colour in enumerate(("first", "second")):
            searched = bool(self.searched[g, c])
            out[colour] = {"moves": int(self.moves[g, c]), "seconds": round(float(self.seconds[g, c]), 4),
                           "sims": int(self.sims[g, c]) if searched else None,
                           "sims_min": int(self.sims_min[g, c]) if searched else None,
                           "cut": int(self.cut[g, c]) if clock_by_colour[c] else None}
        return out


def _is_clock(player: Player) -> bool:
    return getattr(player, "seconds", None) is not None


def _counts(record: GameRecord, names: tuple[str, str], self_play: bool) -> bool:
    """Whether a finished game counts for the progress line: player 1 won it, or in self-play the
    first mover did (both players have one name there, so "player 1" would win every game)."""
    return record.winner == 0 if self_play else record.winner_name == names[0]


def progress_text(counted: int, finished: int, total: int, self_play: bool) -> str:
    """The progress line's postfix: games finished of the match's, and player 1's score so far
    (self-play: the first mover's wins) with its 95% Wilson interval."""
    text = f"games {finished}/{total}"
    if finished:
        low, high = wilson(counted, finished)
        label = "first player" if self_play else "score"
        text += f", {label} {counted}/{finished} ({low:.2f}-{high:.2f})"
    return text


def play_match(env: VecEnv, player1: Player, player2: Player, games: int, seed: int = 0,
               progress: bool = True, opening_plies: int = 0, first_index: int = 0,
               openings: OpeningPlan | None = None, fixed_openings: bool = False,
               only: Sequence[int] | None = None, done: Sequence[GameRecord] = (),
               on_game_end: Callable[[GameRecord], None] | None = None,
               match: dict | None = None) -> MatchResult:
    """Play ``games`` games between two players: pairs with colours exchanged over a shared opening.

    The pairs' openings are ``openings`` (a plan for at least this match's pairs, e.g. one round's
    slice of a longer match), else drawn for this match by ``plan_openings`` from ``seed``: distinct,
    at least the game's random pieces plus ``opening_plies`` long (exactly that with
    ``fixed_openings``, repeating where the board has too few). ``only`` (game numbers from 0) plays
    some of the games now, ``done`` are records of games played before (they are not played again),
    ``on_game_end`` gets each record as its game ends, and ``match`` (the match's settings) is written
    into every record."""
    if games < 1:
        raise ValueError("a match needs at least one game")
    dev = env.device
    pairs = (games + 1) // 2
    if openings is None:
        openings = plan_openings(env.game, pairs, env.game.opening_plies + opening_plies,
                                 seed * 1_000_003 + 7_777_777, fixed=fixed_openings)
    if openings.pairs < pairs:
        raise ValueError(f"{openings.pairs} openings for {pairs} pairs")
    finished_before = {r.index - first_index for r in done}
    chosen = [g for g in (range(games) if only is None else only) if g not in finished_before]
    extra = {"opening_plies": openings.plies, "openings_available": openings.available,
             "openings_repeat": openings.repeats}
    names = (player1.name, player2.name)
    if not chosen:
        return MatchResult.from_records(env.game.spec, names, list(done), **extra)
    index = torch.tensor(chosen, dtype=torch.long)
    G = len(chosen)
    game_keys = rng.make_keys(seed * 1_000_003, games, device=dev)[index.to(dev)]
    opening = openings.plies
    opening_moves = openings.rows(0, pairs)[index // 2].to(dev)  # [G, plies]: game g plays pair g // 2's
    state = env.initial_state(G)
    for ply in range(opening):
        state = env.step(state, opening_moves[:, ply], check=True)
    history = [list(map(int, row)) for row in opening_moves.tolist()]
    results = [""] * G
    p1_first = (index % 2 == 0).to(dev)  # [G]
    players = (player1, player2)
    effort = _Effort(G)
    records: dict[int, GameRecord] = {}
    clock = (_is_clock(player1), _is_clock(player2))
    # player 1's wins and the games; in self-play (one name twice) the first mover's wins instead
    self_play = names[0] == names[1]
    score = [sum(1 for r in done if _counts(r, names, self_play)), len(done)]

    def finish(g: int) -> None:
        first, second = (names[0], names[1]) if bool(p1_first[g]) else (names[1], names[0])
        w = int(state.winner[g])
        record = GameRecord(index=first_index + chosen[g], game=env.game.spec, seed=seed, first=first, second=second,
                            moves=[env.game.action_name(a) for a in history[g]], opening=opening, winner=w,
                            winner_name=(first, second)[w], result=results[g] or "connection",
                            plies=int(state.ply[g]), pieces=int(pieces_placed(state.holes[g:g + 1],
                                                                               state.winner[g:g + 1])[0]),
                            effort=effort.record(g, clock if bool(p1_first[g]) else clock[::-1]), match=match)
        records[g] = record
        score[0] += int(_counts(record, names, self_play))
        score[1] += 1
        if on_game_end is not None:
            on_game_end(record)

    # The bar counts plies (moves by the players), so it moves during a long match, when games
    # still all run; its total is an estimate of the match's plies (games x expected length),
    # refined as games finish, so tqdm's time left is an estimate too. Its postfix: games finished
    # and player 1's score so far with its 95% interval (in self-play the first mover's).
    guess = max(1, round(EXPECTED_LENGTH * env.num_holes))
    bar = progress_bar(total=G * guess, desc=f"{player1.name} vs {player2.name}", unit="ply", disable=not progress,
                       leave=False, dynamic_ncols=True)

    def postfix() -> None:
        bar.set_postfix_str(progress_text(score[0], score[1], len(done) + G, self_play), refresh=False)

    postfix()
    finished = 0
    played = 0  # plies played by the players (all games)
    # Players that serve a limited number of games at once (external engines: one process per game
    # for its whole length; timed players, which search one position after another: a pair) get the
    # games in chunks of that many; the others take all at once.
    limits = [int(p.max_parallel_games) for p in players if getattr(p, "max_parallel_games", None)]
    chunk = G if not limits else max(1, min(limits) - min(limits) % 2 if min(limits) > 1 else 1)
    active = torch.arange(G, device=dev) < chunk  # [G] games started so far
    try:
        while True:
            live = ~state.done & active
            if not bool(live.any()):
                if bool(active.all()):
                    break
                started_games = int(active.sum())
                active = torch.arange(G, device=dev) < started_games + chunk  # the next chunk
                continue
            p1_to_move = (state.to_move == 0) == p1_first
            actions = torch.zeros(G, dtype=torch.long, device=dev)
            for k, player in enumerate(players):
                rows = (live & (p1_to_move if k == 0 else ~p1_to_move)).nonzero().squeeze(1)
                if rows.numel():
                    keys = rng.fold(game_keys[rows], state.ply[rows])
                    started = time.perf_counter()
                    row_list = rows.tolist()
                    ids = {"games": [first_index + chosen[g] for g in row_list]} if getattr(player, "per_game", False) \
                        else {}
                    actions[rows] = player.act(state[rows], keys, history=[history[g] for g in row_list], **ids)
                    colours = state.to_move[rows].tolist()
                    effort.add(row_list, colours, time.perf_counter() - started, getattr(player, "last_effort", None))
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
            newly = (state.done & live).nonzero().squeeze(1).tolist()
            for g in newly:
                finish(g)
            if newly:  # re-estimate: unfinished games last as long as finished ones did, on average
                finished = len(records)
                lengths = [len(h) - opening for h, d in zip(history, state.done.tolist()) if d]
                mean = sum(lengths) / len(lengths)
                left = sum(max(mean - (len(h) - opening), 1.0) for h, d in zip(history, state.done.tolist()) if not d)
                bar.total = max(played, round(played + left))
                postfix()
            bar.total = max(bar.total, played + G - finished)  # every running game has a ply to go
            bar.update(moved)
        bar.total = bar.n  # exact at the end
    finally:
        bar.close()
    for g in range(G):  # games over before their first move (an opening that ends one) are records too
        if g not in records:
            finish(g)
    return MatchResult.from_records(env.game.spec, names, [*done, *records.values()], **extra)


def play_until_decided(env: VecEnv, player1: Player, player2: Player, max_games: int, round_games: int,
                       seed: int = 0, progress: bool = True, opening_plies: int = 0,
                       fixed_openings: bool = False, done: Sequence[GameRecord] = (),
                       on_game_end: Callable[[GameRecord], None] | None = None,
                       match: dict | None = None) -> MatchResult:
    """Rounds of ``round_games`` until the 99% Wilson interval of player 1's score (over the distinct
    games) excludes 1/2, or ``max_games`` are played; ``decided`` says which. The openings of all
    rounds are drawn at once, so no round repeats another's. ``done``: records of games played
    before (a resumed match); rounds they complete are not played again."""
    pairs = [(min(round_games, max_games - start) + 1) // 2 for start in range(0, max_games, round_games)]
    plan = plan_openings(env.game, sum(pairs), env.game.opening_plies + opening_plies,
                         seed * 1_000_003 + 7_777_777, fixed=fixed_openings)
    records = list(done)
    played = 0
    round_no = 0
    total: MatchResult | None = None
    while played < max_games:
        n = min(round_games, max_games - played)
        used = sum(pairs[:round_no])
        round_plan = OpeningPlan(plan.rows(used, pairs[round_no]), plan.plies, plan.available, plan.repeats)
        before = [r for r in records if played <= r.index < played + n]
        r = play_match(env, player1, player2, n, seed=seed + 7919 * round_no, progress=progress,
                       first_index=played, openings=round_plan, done=before, on_game_end=on_game_end, match=match)
        records = [x for x in records if not played <= x.index < played + n] + r.records
        played += n
        round_no += 1
        total = MatchResult.from_records(env.game.spec, (player1.name, player2.name), records,
                                         opening_plies=plan.plies, openings_available=plan.available,
                                         openings_repeat=plan.repeats, rounds=round_no)
        low, high = wilson(total.distinct_wins[0], total.distinct_games, z=2.576)
        if low > 0.5 or high < 0.5:
            total.decided = True
            return total
    assert total is not None
    total.decided = False
    return total

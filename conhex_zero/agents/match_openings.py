"""Openings for a match: distinct ones, drawn without replacement, longer when the short ones run out.

Each pair of games in a match starts from one opening (random plies, never a swap) with colours
exchanged. Two pairs that share an opening replay the same two games between deterministic players,
so copies would count as evidence twice. ``plan_openings`` therefore draws the pairs' openings
*without replacement* from the classes of distinct openings (positions up to the board's
colour-keeping symmetries, ``distinct.GameCanon``), and when the board has fewer distinct openings
of ``min_plies`` plies than the match has pairs, it uses the shortest longer openings that have
enough: Hex 5x5 has 13 distinct one-move openings and 300 two-move ones, so a 200-game match opens
every pair with two random moves. All pairs of a match get openings of one length, so no opening
is the beginning of another and the games are distinct by construction.

Where the classes are few (up to ``ENUMERATE_LIMIT`` placements), they are enumerated level by
level with the rules engine (legal moves only, positions that already end the game left out) and
a seeded permutation picks the pairs'; where they are many, random openings are drawn and kept
when new (rejection sampling, which finds them at once since they outnumber the pairs). A board
too small for ``pairs`` distinct openings at any length up to ``MAX_EXTRA_PLIES`` more (Hex 2x2,
or a fixed length) reuses its openings as evenly as it can, and the plan says so (``repeats``).
Each chosen opening is played as a random one of its symmetric images, so that players that are
not symmetric themselves see every orientation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from conhex_zero.agents.distinct import GameCanon
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.games.game import Game

ENUMERATE_LIMIT = 250_000
"""Enumerate the openings of a length when the board has at most this many stone placements of it."""
MAX_EXTRA_PLIES = 8
"""How many plies beyond ``min_plies`` an opening may grow to find enough distinct ones."""
SAMPLE_ROUNDS = 20
"""Batches of random openings drawn before giving up on a length (rejection sampling)."""


class OpeningError(ValueError):
    """No opening of the asked length fits the game (it would fill the board or end the game)."""


@dataclass(frozen=True)
class OpeningPlan:
    """The openings of a match's pairs."""

    moves: Tensor  # [P, plies] action ids, on the CPU
    plies: int
    available: int | None  # distinct openings of this length on the board (None: not counted, more than enough)
    repeats: bool  # the board has fewer distinct openings of this length than pairs: some repeat

    @property
    def pairs(self) -> int:
        return self.moves.shape[0]

    def rows(self, start: int, count: int) -> Tensor:
        """The openings of pairs ``start .. start + count - 1``."""
        return self.moves[start:start + count]


def stone_placements(game: Game, plies: int) -> int:
    """How many positions ``plies`` plies can make, ignoring legality beyond empty holes: the ways to
    choose the first player's holes and then the second player's."""
    turns = game.turn_table[:plies]
    first, second = int((turns == 0).sum()), int((turns == 1).sum())
    holes = game.num_holes
    if first + second > holes:
        return 0
    return math.comb(holes, first) * math.comb(holes - first, second)


def check_opening_length(game: Game, plies: int) -> None:
    """A one-line error when openings of ``plies`` plies cannot be played on ``game``."""
    if plies < 0:
        raise OpeningError("an opening has 0 or more plies")
    if plies >= game.num_holes:
        raise OpeningError(f"{game.spec}: an opening of {plies} plies would fill the board of {game.num_holes} {game.board.hole_word}s")


def _enumerate(env: VecEnv, canon: GameCanon, plies: int) -> list[tuple[int, ...]]:
    """One move list per class of running positions after ``plies`` plies (level by level)."""
    H = env.num_holes
    reps: list[tuple[int, ...]] = [()]
    states = env.initial_state(1)
    for _ply in range(plies):
        legal = env.legal_mask(states)[:, :H]  # [N, H]
        rows, actions = legal.nonzero(as_tuple=True)
        after = env.step(states[rows], actions)
        running = (~after.done).tolist()
        seen: dict = {}
        keep: list[int] = []
        for i, (row, action) in enumerate(zip(rows.tolist(), actions.tolist())):
            if not running[i]:
                continue
            moves = reps[row] + (action,)
            key = canon.opening_key(moves)
            if key not in seen:
                seen[key] = moves
                keep.append(i)
        reps = list(seen.values())
        if not reps:
            return []
        states = after[torch.tensor(keep, dtype=torch.long)]
    return reps


def _sample(env: VecEnv, canon: GameCanon, plies: int, wanted: int, generator: torch.Generator) -> list[tuple[int, ...]]:
    """Up to ``wanted`` distinct running openings of ``plies`` plies, drawn at random."""
    seen: dict = {}
    batch = max(256, 2 * wanted)
    for _round in range(SAMPLE_ROUNDS):
        state = env.initial_state(batch)
        moves = torch.zeros(batch, plies, dtype=torch.long)
        for ply in range(plies):
            action = env.random_actions(state, generator, swap=False)
            moves[:, ply] = action
            state = env.step(state, action)
        running = (~state.done).tolist()
        for row, ok in zip(moves.tolist(), running):
            if ok:
                seen.setdefault(canon.opening_key(row), tuple(row))
                if len(seen) >= wanted:
                    return list(seen.values())
    return list(seen.values())


def _choose(classes: list[tuple[int, ...]], pairs: int, generator: torch.Generator) -> list[tuple[int, ...]]:
    """``pairs`` classes in a random order, each used once while they last, then again as evenly as
    possible."""
    order: list[int] = []
    while len(order) < pairs:
        order += torch.randperm(len(classes), generator=generator).tolist()
    return [classes[i] for i in order[:pairs]]


def plan_openings(game: Game, pairs: int, min_plies: int, seed: int, fixed: bool = False) -> OpeningPlan:
    """Distinct openings for ``pairs`` pairs of games, at least ``min_plies`` plies long (exactly
    ``min_plies`` with ``fixed``), drawn from ``seed``. See the module docstring."""
    check_opening_length(game, min_plies)
    env = VecEnv(game, "cpu")
    canon = GameCanon(game)
    generator = torch.Generator().manual_seed(seed % 2**63)
    last_plies = min_plies if fixed else min(min_plies + MAX_EXTRA_PLIES, game.num_holes - 1)
    best: tuple[int, list[tuple[int, ...]]] | None = None  # the length with the most classes so far
    for plies in range(min_plies, last_plies + 1):
        placements = stone_placements(game, plies)
        if placements <= ENUMERATE_LIMIT:
            classes = _enumerate(env, canon, plies)
            available: int | None = len(classes)
        else:
            classes = _sample(env, canon, plies, pairs, generator)
            available = None if len(classes) >= pairs else len(classes)
        if classes and (best is None or len(classes) > len(best[1])):
            best = (plies, classes)
        if len(classes) >= pairs:
            return _plan(canon, plies, _choose(classes, pairs, generator), available, False, generator)
    if best is None:
        raise OpeningError(f"{game.spec}: every opening of {min_plies} plies ends the game")
    plies, classes = best
    return _plan(canon, plies, _choose(classes, pairs, generator), len(classes), True, generator)


def _plan(canon: GameCanon, plies: int, chosen: list[tuple[int, ...]], available: int | None, repeats: bool,
          generator: torch.Generator) -> OpeningPlan:
    """The chosen openings, each as a random one of its symmetric images."""
    images = torch.randint(len(canon), (len(chosen),), generator=generator).tolist()
    rows = [canon.map_moves(moves, k) for moves, k in zip(chosen, images)]
    moves = torch.tensor(rows, dtype=torch.long).reshape(len(chosen), plies)
    return OpeningPlan(moves=moves, plies=plies, available=available, repeats=repeats)

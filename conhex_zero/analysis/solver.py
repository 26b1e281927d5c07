"""Exact solver for small Hex boards (up to 4 x 4): the truth the openings analysis is checked against.

A memoised boolean negamax over bitboards (Python integers, bit ``r * n + c`` = hole id, as in
``games/hex.py``). A *threat* is an empty hole where one more stone connects a player's sides
(found by a bit-parallel flood fill from each side). Exact pruning rules keep the tree small:

* a player with a threat wins at once; against two threats of the opponent the player to move
  loses (one stone cannot block both), and against one the block is the only move;
* with no threats on the board, a move that makes two threats wins; and when the opponent has a
  move that would make two threats, the player to move must answer inside that move's *carrier*
  (the move and the threats it makes) or make a threat of their own: any other move loses;
* moves are tried centre first, and positions are memoised (Hex has no draws, so "the player to
  move wins" is a complete answer).

The solver reads only the board tables (sides from ``cell_sides``, adjacency checked against the
Hex grid), so any ``hex-N`` board works; it refuses boards that are not Hex or that are too big.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from conhex_zero.env.state import State
from conhex_zero.games.board import PLAYER_SIDES, BoardGraph
from conhex_zero.games.game import Game, parse_game

MAX_SOLVABLE_HOLES = 16
"""Largest board the solver accepts: 4 x 4 takes under a second; 5 x 5 did not finish within ten
minutes in pure Python (the pruning rules here are exact but local), so it is refused."""


class SolverError(ValueError):
    """The board cannot be solved by this solver (not Hex, or too big)."""


@dataclass(frozen=True)
class OpeningTruth:
    """The exact outcome of one opening: does the first player win when the second does not swap?"""

    action: int
    first_player_wins: bool


class HexSolver:
    """Exact game values for the positions of one small Hex board."""

    def __init__(self, board: BoardGraph, max_holes: int = MAX_SOLVABLE_HOLES):
        H = len(board.hole_names)
        n = int(round(H ** 0.5))
        if n * n != H or any(len(h) != 1 for h in board.cell_holes) or any(k != 1 for k in board.cell_need):
            raise SolverError(f"the exact solver handles Hex boards only, not {board.name}")
        if H > max_holes:
            raise SolverError(f"{board.name} has {H} holes: the exact solver stops at {max_holes} "
                              f"(hex-{int(max_holes ** 0.5)})")
        self.n, self.size = n, H
        self.full = (1 << H) - 1
        col0 = sum(1 << (r * n) for r in range(n))
        self.not_first_col = self.full & ~col0
        self.not_last_col = self.full & ~(col0 << (n - 1))
        self._check_grid(board)
        self.side_masks = [0, 0, 0, 0]  # [4] bitmask of the holes on each side
        for cell, sides in enumerate(board.cell_sides):
            for s in sides:
                self.side_masks[s] |= 1 << board.cell_holes[cell][0]
        centre = (n - 1) / 2
        self.order = sorted(range(H), key=lambda i: (abs(i % n - centre) + abs(i // n - centre), i))
        self.table: dict[tuple[int, int], bool] = {}
        self.nodes = 0

    def _check_grid(self, board: BoardGraph) -> None:
        grid = set()
        for i in range(self.size):
            nb = self._dilate(1 << i) & ~(1 << i)
            grid.update((min(i, j), max(i, j)) for j in range(self.size) if nb >> j & 1)
        if grid != set(board.adjacency):
            raise SolverError(f"{board.name}: adjacency is not the Hex grid's")

    def _dilate(self, m: int) -> int:
        """``m`` plus its neighbours: (c±1, r), (c, r±1), (c+1, r-1), (c-1, r+1)."""
        n = self.n
        right = (m << 1) & self.not_first_col
        left = (m >> 1) & self.not_last_col
        return (m | right | left | (m << n) | (m >> n) | (right >> n) | (left << n)) & self.full

    def _reach(self, stones: int, seed: int) -> int:
        """The stones connected to ``seed`` (a subset of ``stones``)."""
        reach = seed & stones
        while True:
            grown = self._dilate(reach) & stones
            if grown == reach:
                return reach
            reach = grown

    def threats(self, stones: int, empty: int, player: int) -> int:
        """Empty holes where one more stone connects ``player``'s two sides (bitmask)."""
        a, b = (self.side_masks[s] for s in PLAYER_SIDES[player])
        near_a = (self._dilate(self._reach(stones, a)) | a) & empty
        near_b = (self._dilate(self._reach(stones, b)) | b) & empty
        return near_a & near_b

    def connected(self, stones: int, player: int) -> bool:
        a, b = (self.side_masks[s] for s in PLAYER_SIDES[player])
        return bool(self._reach(stones, a) & b)

    def mover_wins(self, mine: int, theirs: int, player: int) -> bool:
        """Does ``player``, to move with stones ``mine`` against ``theirs``, win with perfect play?"""
        key = (mine, theirs) if player == 0 else (theirs | 1 << self.size, mine)
        hit = self.table.get(key)
        if hit is not None:
            return hit
        self.nodes += 1
        empty = self.full & ~(mine | theirs)
        result = self._search(mine, theirs, player, empty)
        self.table[key] = result
        return result

    def _search(self, mine: int, theirs: int, player: int, empty: int) -> bool:
        if self.threats(mine, empty, player):
            return True
        danger = self.threats(theirs, empty, 1 - player)
        if danger & (danger - 1):  # two threats: one cannot block both
            return False
        if danger:  # the block is forced
            return not self.mover_wins(theirs, mine | danger, 1 - player)
        # No threats on the board. A move that makes two threats wins; a move of the opponent that
        # would make two threats must be answered inside its carrier (the move and its threats),
        # unless we make a threat of our own first.
        must = empty
        forcing = 0
        for i in self.order:
            bit = 1 << i
            if not empty & bit:
                continue
            ours = self.threats(mine | bit, empty & ~bit, player)
            if ours & (ours - 1):
                return True
            if ours:
                forcing |= bit
            theirs_next = self.threats(theirs | bit, empty & ~bit, 1 - player)
            if theirs_next & (theirs_next - 1):
                must &= bit | theirs_next
        candidates = must | forcing
        return any(not self.mover_wins(theirs, mine | 1 << i, 1 - player)
                   for i in self.order if candidates >> i & 1)

    def winner(self, first: int, second: int, to_move: int) -> int:
        """The winner (0 first player, 1 second) with perfect play from a position."""
        if self.connected(first, 0):
            return 0
        if self.connected(second, 1):
            return 1
        mine, theirs = (first, second) if to_move == 0 else (second, first)
        return to_move if self.mover_wins(mine, theirs, to_move) else 1 - to_move

    def opening_truths(self) -> list[OpeningTruth]:
        """For every first move, whether the first player wins (second player to move, no swap)."""
        return [OpeningTruth(a, self.winner(1 << a, 0, 1) == 0) for a in range(self.size)]

    def state_winners(self, state: State) -> torch.Tensor:
        """``[B]`` the perfect-play winner of every position of an engine batch (``holes``: -1/0/1)."""
        holes = state.holes.cpu().tolist()
        to_move = state.to_move.cpu().tolist()
        out = []
        for row, p in zip(holes, to_move):
            first = sum(1 << i for i, v in enumerate(row) if v == 0)
            second = sum(1 << i for i, v in enumerate(row) if v == 1)
            out.append(self.winner(first, second, int(p)))
        return torch.tensor(out, dtype=torch.long)


def solver_for(game: str | Game) -> HexSolver | None:
    """A solver when the game is a Hex board small enough, else None."""
    game = parse_game(game)
    try:
        return HexSolver(game.board)
    except SolverError:
        return None

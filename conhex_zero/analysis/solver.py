"""Exact solver for small Hex boards (up to 5 x 5): the truth the openings analysis is checked against.

A depth-first AND/OR search (negamax over "does the player to move win?") on bitboards: Python
integers, bit ``r * n + c`` = hole id, as in ``games/hex.py``. Hex has no draws, so one boolean per
position is a complete answer; positions are memoised in a transposition table keyed by the stones
of both players and the player to move.

**Proof sets.** Every verdict comes with a *proof set*: a set ``S`` of empty holes such that the
winner still wins when the loser owns every empty hole outside ``S``. Because an extra stone never
hurts its owner in Hex (monotonicity), a proof set makes the verdict hold for a whole family of
positions, which gives an exact *must-play* rule (the one Benzene's solvers use): if the player to
move, ``A``, loses after playing ``x`` with proof ``S_x``, then every move ``y`` outside
``S_x + {x}`` loses too (fill the holes outside ``S_x`` with ``A``'s stones: the position after
``y`` and the one after ``x`` become the same position, which ``A`` loses). So after each refuted
move the candidates shrink to ``S_x``. The proof sets compose:

* ``A`` to move wins by ``z`` whose child has proof ``S``: the proof is ``S + {z}``;
* ``A`` to move loses: the union of the proofs of the searched moves and of the carriers that
  pruned the other moves (each pruned move lies outside one of them, so with ``A`` owning
  everything outside the union every move is still refuted).

**Virtual connections (static, exact).** A *pairing strategy* proves a connection without search:
the stones of a player are split into groups (a group touching a side is merged with that side);
two groups with two free common neighbours are joined by a *bridge*, and a group holding a stone on
the third row from a side is joined to that side by an edge template *IIIa* (the "ziggurat", eight
holes, checked by brute force in the tests) when its holes are free of the opponent's stones. When
the carriers of the links used are pairwise disjoint (they are reserved greedily, the link with the
fewest free common cells first), the owner answers every intrusion inside the same carrier, so

* a chain of links from side to side is a *virtual connection*: the owner wins whoever moves, and
  the union of the carriers is the proof set;
* a free, unreserved hole next to both sides' merged groups is a *key*: the owner to move wins by
  playing it (proof: carriers plus key); two keys are a virtual connection even against the move
  (the OR rule: take whichever key the opponent leaves), and one key of the opponent is a
  must-play region (the mover must play in the key or the carriers, or lose);
* one more stone is tried on every candidate move: a move after which the mover has a virtual
  connection (or two keys) wins at once, and the number of groups the move leaves orders the
  search (fewest first, then centre first). The ordering is the solver's main speed-up.

One-move threats (holes where one more stone connects a player's sides, found by a bit-parallel
flood fill) settle the rest: the mover's threat wins, two threats of the opponent lose, one must be
blocked. Every rule above only ever discards moves that provably lose or stops at a proven result,
so the search is exact; ``tests/test_openings.py`` checks it against an independent brute-force
solver (``tests/hex_solver.py``) on 2 x 2 to 4 x 4 and on random 4 x 4 and 5 x 5 positions.

**Measured** on this project's 2-core machine, shared with a training run (load about 5, so wall
time is about twice the CPU time), Python 3.11, one core::

    PYTHONPATH=. OMP_NUM_THREADS=1 python -c "from conhex_zero.analysis.solver import HexSolver;
      from conhex_zero.games.hex import hex_board;
      print(HexSolver(hex_board(5), book=False).winning_openings())"

took 28.3 s wall, 13.7 s CPU including the imports. The solve itself (``opening_truths``)
settles all 25 Hex 5 x 5 openings (no swap) in 11.8 s of CPU time (23.8 s wall; 13 openings
searched, the other 12 their half turns; 157,150 positions). Searching every opening on its own,
as the slow test does (``winner`` on each of the 25), takes 21.6 s of CPU time (43.6 s wall;
287,240 positions). 4 x 4 takes a tenth of a second. 6 x 6 is refused: neither its a1 opening
(ten minutes) nor c3 (seven minutes) finished. The first player wins 5 x 5 by opening on c3, b3,
d3, c2, c4, b2, d4, d2, b4, e2, a4, e1 or a5 (13 of 25; ``hex_openings.SOLVED_OPENINGS``, which
``book=True`` answers empty-board openings from, and which the slow test re-solves).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from conhex_zero.env.state import State
from conhex_zero.games.board import PLAYER_SIDES, BoardGraph

MAX_SOLVABLE_HOLES = 25
"""Largest board the solver accepts: 5 x 5 (all 25 openings in about 12 s of CPU time). 6 x 6
openings did not finish within minutes in pure Python, so 6 x 6 and larger are refused."""

# Edge template IIIa (the ziggurat) for a stone at (column c, row 2) and the top side: the holes
# (c + dc, r) that must be free of the opponent's stones. Two mirror forms. Other sides are reached
# by the board's symmetries (half turn, transpose, anti-transpose), which keep the Hex grid.
ZIGGURATS = (
    ((-1, 0), (0, 0), (1, 0), (2, 0), (-1, 1), (0, 1), (1, 1), (-1, 2)),
    ((0, 0), (1, 0), (2, 0), (3, 0), (0, 1), (1, 1), (2, 1), (1, 2)),
)


class SolverError(ValueError):
    """The board cannot be solved by this solver (not Hex, or too big)."""


def stone_masks(holes: list[int]) -> tuple[int, int]:
    """The first and the second player's stones as bitboards, from one engine row of ``holes``
    (-1 empty, 0 first player, 1 second)."""
    return (sum(1 << i for i, v in enumerate(holes) if v == 0), sum(1 << i for i, v in enumerate(holes) if v == 1))


class NodeBudgetSpent(Exception):
    """A search given ``winner_within``'s node budget did not finish within it."""


@dataclass(frozen=True)
class OpeningTruth:
    """The exact outcome of one opening: does the first player win when the second does not swap?"""

    action: int
    first_player_wins: bool


class HexSolver:
    """Exact game values for the positions of one small Hex board.

    ``book``: answer empty-board openings from the verified table ``hex_openings.SOLVED_OPENINGS``
    (when it has the board) instead of searching; ``book=False`` always searches.
    """

    def __init__(self, board: BoardGraph, max_holes: int = MAX_SOLVABLE_HOLES, book: bool = True):
        H = len(board.hole_names)
        n = int(round(H ** 0.5))
        if n * n != H or any(len(h) != 1 for h in board.cell_holes) or any(k != 1 for k in board.cell_need):
            raise SolverError(f"the exact solver handles Hex boards only, not {board.name}")
        if H > max_holes:
            raise SolverError(f"{board.name} has {H} holes: the exact solver stops at {max_holes} "
                              f"(hex-{int(max_holes ** 0.5)}); larger boards take far too long in pure Python")
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
        row0 = (1 << n) - 1
        if self.side_masks != [row0, row0 << (n * (n - 1)), col0, col0 << (n - 1)]:
            raise SolverError(f"{board.name}: sides are not the Hex board's (top, bottom, left, right)")
        self.player_sides = tuple((self.side_masks[a], self.side_masks[b]) for a, b in PLAYER_SIDES)
        centre = (n - 1) / 2
        self.order = sorted(range(H), key=lambda i: (abs(i % n - centre) + abs(i // n - centre), i))
        self.rank = [0] * H
        for k, i in enumerate(self.order):
            self.rank[i] = k
        self.templates = self._edge_templates()
        self.table: dict[int, int] = {}  # position key -> proof set << 1 | mover wins
        self.nodes = 0
        self.node_limit: int | None = None  # positions searched at which ``prove`` gives up (None: never)
        self.book: dict[int, bool] = {}
        if book:
            from conhex_zero.analysis.hex_openings import SOLVED_OPENINGS

            wins = SOLVED_OPENINGS.get(n)
            if wins is not None:
                self.book = {a: board.hole_names[a] in wins for a in range(H)}

    # --- geometry ------------------------------------------------------------------------------

    def _check_grid(self, board: BoardGraph) -> None:
        grid = set()
        for i in range(self.size):
            nb = self._dilate(1 << i) & ~(1 << i)
            grid.update((min(i, j), max(i, j)) for j in range(self.size) if nb >> j & 1)
        if grid != set(board.adjacency):
            raise SolverError(f"{board.name}: adjacency is not the Hex grid's")

    def _edge_templates(self) -> tuple[tuple[list[tuple[int, int]], ...], ...]:
        """``[player][0 or 1]``: (stone bit, carrier) of every ziggurat to that player's side a or b."""
        n, m = self.n, self.n - 1
        frames = (lambda c, r: (c, r), lambda c, r: (m - c, m - r),  # top, bottom
                  lambda c, r: (r, c), lambda c, r: (m - r, m - c))  # left, right
        per_side = []
        for f in frames:
            found = []
            for c in range(n):
                for shape in ZIGGURATS:
                    cells = [(c + dc, r) for dc, r in shape]
                    if n < 3 or not all(0 <= x < n for x, _ in cells):
                        continue
                    sc, sr = f(c, 2)
                    carrier = sum(1 << (y * n + x) for x, y in (f(*p) for p in cells))
                    found.append((1 << (sr * n + sc), carrier))
            per_side.append(found)
        return tuple((per_side[a], per_side[b]) for a, b in PLAYER_SIDES)

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
        a, b = self.player_sides[player]
        near_a = (self._dilate(self._reach(stones, a)) | a) & empty
        if not near_a:
            return 0
        near_b = (self._dilate(self._reach(stones, b)) | b) & empty
        return near_a & near_b

    def connected(self, stones: int, player: int) -> bool:
        a, b = self.player_sides[player]
        return bool(self._reach(stones, a) & b)

    # --- virtual connections -------------------------------------------------------------------

    def links(self, stones: int, empty: int, player: int) -> tuple[bool, int, int, int]:
        """A pairing strategy for ``player`` (see the module docstring).

        Returns ``(joined, carrier, keys, parts)``: ``joined`` when the two sides are virtually
        connected (then ``carrier`` is the union of the links' carriers); otherwise ``keys`` are the
        free holes next to both sides' merged groups, ``carrier`` the carriers those groups use, and
        ``parts`` the number of merged groups left (sides included: fewer is better connected).
        """
        side_a, side_b = self.player_sides[player]
        dilate, reach = self._dilate, self._reach
        ga, gb = reach(stones, side_a), reach(stones, side_b)
        if ga & gb:
            return True, 0, 0, 1
        members = [ga, gb]
        nbrs = [(dilate(ga) | side_a) & empty, (dilate(gb) | side_b) & empty]
        rest = stones & ~(ga | gb)
        while rest:
            g = reach(rest, rest & -rest)
            rest ^= g
            members.append(g)
            nbrs.append(dilate(g) & empty)
        carriers = [0] * len(members)
        alive = list(range(len(members)))
        ia, ib = 0, 1  # the groups holding side a and side b
        reserved = 0
        usable = empty | stones
        templates = self.templates[player]
        while True:
            # The bridge (two free common neighbours) with the fewest free common cells.
            bi = bj = -1
            best_count, best = 99, 0
            for x, i in enumerate(alive):
                free_i = nbrs[i] & ~reserved
                if not free_i & (free_i - 1):
                    continue
                for j in alive[x + 1:]:
                    common = free_i & nbrs[j]
                    if common & (common - 1):
                        k = common.bit_count()
                        if k < best_count:
                            bi, bj, best_count, best = i, j, k, common
                            if k == 2:
                                break
                if best_count == 2:
                    break
            if bi >= 0:
                low = best & -best
                best ^= low
                link = low | (best & -best)
            else:  # no bridge left: an edge template from a group to a side
                for edge, side_templates in ((ia, templates[0]), (ib, templates[1])):
                    for stone, carrier in side_templates:
                        if carrier & ~usable or carrier & reserved or members[edge] & stone:
                            continue
                        for j in alive:
                            if members[j] & stone:
                                bi, bj, link = edge, j, carrier & empty
                                break
                        if bi >= 0:
                            break
                    if bi >= 0:
                        break
                if bi < 0:
                    break
            reserved |= link
            nbrs[bi] |= nbrs[bj]
            members[bi] |= members[bj]
            carriers[bi] |= carriers[bj] | link
            alive.remove(bj)
            if bj == ia:
                ia = bi
            if bj == ib:
                ib = bi
            if ia == ib:
                return True, carriers[ia], 0, len(alive)
        return False, carriers[ia] | carriers[ib], nbrs[ia] & nbrs[ib] & ~reserved, len(alive)

    # --- search --------------------------------------------------------------------------------

    def prove(self, mine: int, theirs: int, player: int) -> tuple[bool, int]:
        """``(player to move wins, proof set)`` for ``player`` to move with ``mine`` against ``theirs``
        (neither side connected yet)."""
        key = mine | theirs << self.size | player << 2 * self.size
        hit = self.table.get(key)
        if hit is None:
            self.nodes += 1
            if self.node_limit is not None and self.nodes > self.node_limit:
                raise NodeBudgetSpent
            wins, proof = self._search(mine, theirs, player, self.full & ~(mine | theirs))
            self.table[key] = hit = proof << 1 | wins
        return bool(hit & 1), hit >> 1

    def mover_wins(self, mine: int, theirs: int, player: int) -> bool:
        """Does ``player``, to move with stones ``mine`` against ``theirs``, win with perfect play?"""
        return self.prove(mine, theirs, player)[0]

    def _search(self, mine: int, theirs: int, player: int, empty: int) -> tuple[bool, int]:
        opponent = 1 - player
        win = self.threats(mine, empty, player)
        if win:
            return True, win & -win
        danger = self.threats(theirs, empty, opponent)
        if danger & (danger - 1):  # two threats: one stone cannot block both
            return False, danger
        joined, carrier, keys, _ = self.links(mine, empty, player)
        if joined:
            return True, carrier
        if keys:
            return True, carrier | (keys & -keys)
        joined, their_carrier, their_keys, _ = self.links(theirs, empty, opponent)
        if joined:
            return False, their_carrier
        if their_keys & (their_keys - 1):
            return False, their_carrier | their_keys
        must, proof = empty, 0
        if danger:  # the block is forced
            must = proof = danger
        if their_keys:  # one key: play in it or in the carriers the connection uses
            must &= their_carrier | their_keys
            proof |= their_carrier | their_keys
        # One stone more on every candidate: an immediate virtual connection wins, and how well
        # connected the move leaves us orders the search.
        scored = []
        rank = self.rank
        for i in self.order:
            bit = 1 << i
            if must & bit:
                joined, carrier, keys, parts = self.links(mine | bit, empty & ~bit, player)
                if joined:
                    return True, carrier | bit
                if keys & (keys - 1):
                    return True, carrier | keys | bit
                scored.append((parts, not keys, rank[i], i))
        scored.sort()
        for *_, i in scored:
            bit = 1 << i
            if not must & bit:
                continue
            wins, child_proof = self.prove(theirs, mine | bit, opponent)
            if not wins:
                return True, child_proof | bit
            proof |= child_proof
            must &= child_proof  # every move outside the refutation's proof set loses as well
        return False, proof

    # --- positions -----------------------------------------------------------------------------

    def winner(self, first: int, second: int, to_move: int) -> int:
        """The winner (0 first player, 1 second) with perfect play from a position."""
        if self.connected(first, 0):
            return 0
        if self.connected(second, 1):
            return 1
        if self.book and second == 0 and to_move == 1 and first and not first & (first - 1):
            return 0 if self.book[first.bit_length() - 1] else 1
        mine, theirs = (first, second) if to_move == 0 else (second, first)
        return to_move if self.mover_wins(mine, theirs, to_move) else 1 - to_move

    def winner_within(self, first: int, second: int, to_move: int, max_nodes: int) -> int | None:
        """``winner``, or None when it needs more than ``max_nodes`` new positions searched. The
        table keeps only finished results, so what a stopped search proved is reused, never a guess."""
        self.nodes, self.node_limit = 0, max_nodes
        try:
            return self.winner(first, second, to_move)
        except NodeBudgetSpent:
            return None
        finally:
            self.node_limit = None

    def opening_truths(self, progress: Callable[[int], None] | None = None) -> list[OpeningTruth]:
        """For every first move, whether the first player wins (second player to move, no swap).

        An opening and its 180-degree turn (hole ``size - 1 - a``) have the same outcome, so only
        one of each pair is solved. ``progress(k)`` is called with 0 first and with k after the k-th
        of the ``size`` openings.
        """
        wins: dict[int, bool] = {}
        if progress is not None:
            progress(0)
        for a in range(self.size):
            twin = self.size - 1 - a
            wins[a] = wins[twin] if twin in wins else self.winner(1 << a, 0, 1) == 0
            if progress is not None:
                progress(a + 1)
        return [OpeningTruth(a, wins[a]) for a in range(self.size)]

    def winning_openings(self) -> set[int]:
        """First moves (hole ids) after which the first player wins (no swap)."""
        return {t.action for t in self.opening_truths() if t.first_player_wins}

    def state_winners(self, state: State, progress: Callable[[int], None] | None = None) -> torch.Tensor:
        """``[B]`` the perfect-play winner of every position of an engine batch (``holes``: -1/0/1).

        ``progress(k)`` is called with 0 before the first position and with k after the k-th."""
        return batch_winners(state, self.winner, progress)


def batch_winners(state: State, winner: Callable[[int, int, int], int | None],
                  progress: Callable[[int], None] | None = None) -> torch.Tensor:
    """``[B]`` ``winner(first, second, to_move)`` of every position of an engine batch, -1 where it
    gives None; ``progress(k)`` is called with 0 first and with k after the k-th position."""
    holes = state.holes.cpu().tolist()
    to_move = state.to_move.cpu().tolist()
    out = []
    if progress is not None:
        progress(0)
    for row, p in zip(holes, to_move):
        w = winner(*stone_masks(row), int(p))
        out.append(-1 if w is None else w)
        if progress is not None:
            progress(len(out))
    return torch.tensor(out, dtype=torch.long)

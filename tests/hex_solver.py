"""An exact solver for tiny Hex boards (memoised negamax over bitboards), independent of the engine.

Cell (column c, row r) is bit r * n + c; neighbours as in HexGui/OpenSpiel; the first player
connects the top and bottom rows. Fine up to 4 x 4 in pure Python.
"""

from __future__ import annotations

from functools import lru_cache


class HexSolver:
    def __init__(self, n: int):
        self.n = n
        self.cells = n * n
        self.nbr = []
        for r in range(n):
            for c in range(n):
                m = 0
                for dc, dr in ((-1, 0), (1, 0), (0, -1), (0, 1), (1, -1), (-1, 1)):
                    cc, rr = c + dc, r + dr
                    if 0 <= cc < n and 0 <= rr < n:
                        m |= 1 << (rr * n + cc)
                self.nbr.append(m)
        row = (1 << n) - 1
        col = sum(1 << (r * n) for r in range(n))
        self.sides = ((row, row << (n * (n - 1))), (col, col << (n - 1)))
        centre = (n - 1) / 2
        self.order = sorted(range(self.cells), key=lambda i: abs(i % n - centre) + abs(i // n - centre))

    def connected(self, stones: int, player: int) -> bool:
        start, goal = self.sides[player]
        frontier = stones & start
        seen = frontier
        while frontier:
            if frontier & goal:
                return True
            grow = 0
            f = frontier
            while f:
                low = f & -f
                grow |= self.nbr[low.bit_length() - 1]
                f ^= low
            frontier = grow & stones & ~seen
            seen |= frontier
        return False

    def mover_wins(self, first: int, second: int) -> bool:
        """Does the player to move win with perfect play? (first moves when counts are equal)."""
        return self._solve(first, second)

    @lru_cache(maxsize=None)
    def _solve(self, first: int, second: int) -> bool:
        p = 0 if bin(first).count("1") == bin(second).count("1") else 1
        mine, theirs = (first, second) if p == 0 else (second, first)
        empty = [i for i in self.order if not (first | second) >> i & 1]
        for i in empty:  # an immediate win
            if self.connected(mine | 1 << i, p):
                return True
        for i in empty:
            child = (first | 1 << i, second) if p == 0 else (first, second | 1 << i)
            if not self._solve(*child):
                return True
        return False

    def winning_openings(self) -> set[int]:
        """First moves (cell ids) after which the first player wins."""
        return {i for i in range(self.cells) if not self._solve(1 << i, 0)}

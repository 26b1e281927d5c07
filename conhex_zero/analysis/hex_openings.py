"""Known outcomes of the Hex openings: which first moves win for the first player (no swap).

Names follow ``games/hex.py``: column letter + row number, ``a1`` top-left, the first player
connects the top and bottom rows, cell (c, r) touches (c+1, r-1) and (c-1, r+1), so ``a1`` and the
bottom-right cell are the acute corners and the last cell of row 1 and the first of the last row
the obtuse ones. Every table is invariant under the 180-degree turn (the board's side-keeping
symmetry), which the tests check.
"""

from __future__ import annotations

SOLVED_OPENINGS: dict[int, frozenset[str]] = {
    5: frozenset({"e1", "b2", "c2", "d2", "e2", "b3", "c3", "d3", "a4", "b4", "c4", "d4", "a5"}),
}
"""Hex 5 x 5, solved by this package's exact solver (``analysis/solver.py``; the slow test in
``tests/test_openings.py`` solves all 25 openings again and compares). The other 12 openings lose:
the whole first and last rows except the obtuse corners e1 and a5, and a2, a3, e3, e4."""

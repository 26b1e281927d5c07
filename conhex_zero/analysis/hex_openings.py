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

PUBLISHED_OPENINGS: dict[int, frozenset[str]] = {
    7: frozenset({
        "g1", "c2", "e2", "f2", "g2", "b3", "c3", "d3", "e3", "f3", "a4", "b4", "c4", "d4", "e4", "f4", "g4",
        "b5", "c5", "d5", "e5", "f5", "b6", "c6", "e6", "a6", "a7",
    }),
}
"""Hex 7 x 7, from the literature (27 winning openings of 49; not re-solved here).

Source: R. Hayward, Y. Björnsson, M. Johanson, M. Kan, N. Po and J. van Rijswijck, "Solving 7x7
Hex: Virtual Connections and Game-State Reduction", Advances in Computer Games 10 (ACG 2003),
Kluwer 2004, IFIP vol. 135, pp. 261-278, which determined the outcome of all 49 openings (extended
as "Solving 7x7 Hex with domination, fill-in, and virtual connections", Theoretical Computer
Science 349(2):123-139, 2005). The authors' page http://webdocs.cs.ualberta.ca/~hayward/hex7trees
shows the value of each opening "by the player owning the north and south edges" in a figure and
lists, per opening, a winning reply for every losing one and a proof tree. The paper's own figure
could not be read here (only its abstract and the page's text were reachable), so no figure
number is cited.

The 49 values were transcribed from the regression test ``regression/solve-7x7.tst`` of Benzene,
the University of Alberta's Hex program (which re-solved every opening: "Solves each 7x7 position
and checks winner", ``play b <cell>`` then ``solve-state`` expecting black or white), as stored in
the GitHub mirrors ``apetresc/benzene`` (commit 41edf19ef044accc9e91d1525182418aa8812c1c, svn
revision 1536, 2008-07-09) and ``cgao3/benzene-vanilla-cmake`` (commit
f3dee970248a8bf01fd3855d374648c0b46a8e6f, revision 1722, 2008-10-31; the same values in its
``dfs-solve-7x7.tst`` and, for a1-d4, ``dfpn-solve-7x7.tst``). The rows a1-b3 of the authors' page
agree (losing a1 a2 a3 a5 b1 b2, winning a4 a6 a7 b3); the rest of that page could not be read
here, so the remaining rows rest on Benzene's tests alone.

Orientation: Benzene's conventions are this package's (``HexPoint.hpp``, ``HexColor.hpp``,
``ConstBoard.cpp``): cell names are column letter + row number from a1, neighbours (x±1, y),
(x, y±1), (x+1, y-1), (x-1, y+1), black moves first and is the vertical colour joining NORTH
(row 1) to SOUTH (row n). So black's winning openings are our first player's, with no mapping.
The set is invariant under the 180-degree turn, holds the whole short diagonal g1-a7 and the
centre d4, and none of the first row but the obtuse corner g1 (tests/test_hex_openings.py).
"""

"""n x n Hex as a ``BoardGraph``: every hole is its own cell (``need`` = 1).

Conventions are HexGui's and OpenSpiel's: ``a1`` is the top-left cell, letters count columns and
numbers rows, and hole id = row * n + column. Cell (column c, row r) touches (c-1, r), (c+1, r),
(c, r-1), (c, r+1), (c+1, r-1) and (c-1, r+1). Player 0 connects the top and bottom rows, player 1
the left and right columns. Symmetries: the 180-degree turn keeps the sides; the mirror in the long
diagonal a1-(n,n) (the classic swap move) and its turned twin exchange them.
"""

from __future__ import annotations

import math
from functools import lru_cache

from conhex_zero.games.board import AsciiLayout, BoardGraph

MIN_SIZE, MAX_SIZE = 2, 19
LETTERS = "abcdefghijklmnopqrs"


@lru_cache(maxsize=None)
def hex_board(n: int) -> BoardGraph:
    """The n x n Hex board, 2 <= n <= 19."""
    if not MIN_SIZE <= n <= MAX_SIZE:
        raise ValueError(f"Hex board size must be between {MIN_SIZE} and {MAX_SIZE}, got {n}")
    cells = [(c, r) for r in range(n) for c in range(n)]  # id = r * n + c
    idx = {p: i for i, p in enumerate(cells)}
    adjacency = set()
    for c, r in cells:
        for dc, dr in ((1, 0), (0, 1), (-1, 1)):
            q = (c + dc, r + dr)
            if q in idx:
                adjacency.add(tuple(sorted((idx[(c, r)], idx[q]))))
    sides = []
    for c, r in cells:
        s = []
        if r == 0:
            s.append(0)
        if r == n - 1:
            s.append(1)
        if c == 0:
            s.append(2)
        if c == n - 1:
            s.append(3)
        sides.append(tuple(s))
    m = n - 1
    maps = [
        ("identity", lambda c, r: (c, r)),
        ("rot180", lambda c, r: (m - c, m - r)),
        ("transpose", lambda c, r: (r, c)),
        ("antitranspose", lambda c, r: (m - r, m - c)),
    ]
    perms = tuple((name, tuple(idx[f(c, r)] for c, r in cells)) for name, f in maps)

    # Terminal picture: row r is shifted right by r characters, columns two characters apart.
    header = "    " + " ".join(LETTERS[:n])
    lines = [header]
    for r in range(n):
        lines.append(" " * r + f"{r + 1:>2}" + "  " + " ".join("." * n))
    lines.append(" " * (4 + n) + " ".join(LETTERS[:n]))
    hole_pos = tuple((1 + r, 4 + r + 2 * c) for c, r in cells)
    return BoardGraph(
        name=f"hex-{n}",
        hole_names=tuple(f"{LETTERS[c]}{r + 1}" for c, r in cells),
        hole_xy=tuple((c + r / 2, r * math.sqrt(3) / 2) for c, r in cells),
        hole_depth=tuple(min(c, r, m - c, m - r) for c, r in cells),
        cell_holes=tuple((i,) for i in range(n * n)),
        cell_need=(1,) * (n * n),
        cell_kind=("cell",) * (n * n),
        cell_sides=tuple(sides),
        adjacency=tuple(sorted(adjacency)),
        symmetry_hole_perms=perms,
        swap_symmetry="transpose",
        ascii=AsciiLayout(lines=tuple(lines), hole_pos=hole_pos, cell_pos=None),
    )

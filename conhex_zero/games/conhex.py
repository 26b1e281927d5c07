"""The ConHex board (Michail Antonow, 2002) as a ``BoardGraph``.

Transcribed from the published board (``shared/CONHEX_BOARD.md``): holes on an 11 x 11 grid named by
column letter A..K and row 1..11 counted from the top, 41 cells with their holes, sides and need.
Adjacency is "shares at least one hole" (edge cells along the frame share exactly one). The eight
symmetries of the square act on the grid; the 90-degree turns and the diagonal mirrors exchange the
players' sides. The swap (pie) rule mirrors the piece in the main diagonal (A1-K11).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable

from conhex_zero.games.board import SIDE_NAMES, AsciiLayout, BoardGraph, adjacency_from_shared_holes

GRID = 11
COLUMNS = "ABCDEFGHIJK"

# The printed board. o = hole, @ = the centre hole F6, + = frame point (not a hole), numbers = cells.
# Holes sit at line 1 + 2*row, column 4 + 6*col (row, col counted from 0).
_PICTURE = r"""
    A     B     C     D     E     F     G     H     I     J     K
 1  o-----------+-----------+-----------+-----------+-----------o
    |           |    01     |    02     |    03     |           |
 2  |    00     o-----o-----o-----o-----o-----o-----o    04     |
    |       /         |    06     |    07     |         \       |
 3  +-----o    05     o-----o-----o-----o-----o    08     o-----+
    |     |       /         |    11     |         \       |     |
 4  | 09  o-----o    10     o-----o-----o    12     o-----o 13  |
    |     |     |       /         |         \       |     |     |
 5  +-----o 14  o-----o    15     o    16     o-----o 17  o-----+
    |     |     |     |       /  20   \       |     |     |     |
 6  | 18  o-----o 19  o-----o     @     o-----o 21  o-----o 22  |
    |     |     |     |       \       /       |     |     |     |
 7  +-----o 23  o-----o    24     o    25     o-----o 26  o-----+
    |     |     |       \         |       /         |     |     |
 8  | 27  o-----o    28     o-----o-----o    30     o-----o 31  |
    |     |       \         |    29     |       /         |     |
 9  +-----o    32     o-----o-----o-----o-----o    35     o-----+
    |       \         |    33     |    34     |       /         |
10  |    36     o-----o-----o-----o-----o-----o-----o    40     |
    |           |    37     |    38     |    39     |           |
11  o-----------+-----------+-----------+-----------+-----------o
"""

# id  kind  sides  need  holes  (from CONHEX_BOARD.md)
_CELLS = """
 0  corner top+left     2  A1 C2 B3
 1  edge   top          2  C2 D2 E2
 2  edge   top          2  E2 F2 G2
 3  edge   top          2  G2 H2 I2
 4  corner top+right    2  K1 I2 J3
 5  inner  -            3  C2 D2 B3 D3 B4 C4
 6  inner  -            3  D2 E2 F2 D3 E3 F3
 7  inner  -            3  F2 G2 H2 F3 G3 H3
 8  inner  -            3  H2 I2 H3 J3 I4 J4
 9  edge   left         2  B3 B4 B5
10  inner  -            3  D3 E3 C4 E4 C5 D5
11  inner  -            3  E3 F3 G3 E4 F4 G4
12  inner  -            3  G3 H3 G4 I4 H5 I5
13  edge   right        2  J3 J4 J5
14  inner  -            3  B4 C4 B5 C5 B6 C6
15  inner  -            3  E4 F4 D5 F5 D6 E6
16  inner  -            3  F4 G4 F5 H5 G6 H6
17  inner  -            3  I4 J4 I5 J5 I6 J6
18  edge   left         2  B5 B6 B7
19  inner  -            3  C5 D5 C6 D6 C7 D7
20  centre -            3  F5 E6 F6 G6 F7
21  inner  -            3  H5 I5 H6 I6 H7 I7
22  edge   right        2  J5 J6 J7
23  inner  -            3  B6 C6 B7 C7 B8 C8
24  inner  -            3  D6 E6 D7 F7 E8 F8
25  inner  -            3  G6 H6 F7 H7 F8 G8
26  inner  -            3  I6 J6 I7 J7 I8 J8
27  edge   left         2  B7 B8 B9
28  inner  -            3  C7 D7 C8 E8 D9 E9
29  inner  -            3  E8 F8 G8 E9 F9 G9
30  inner  -            3  H7 I7 G8 I8 G9 H9
31  edge   right        2  J7 J8 J9
32  inner  -            3  B8 C8 B9 D9 C10 D10
33  inner  -            3  D9 E9 F9 D10 E10 F10
34  inner  -            3  F9 G9 H9 F10 G10 H10
35  inner  -            3  I8 J8 H9 J9 H10 I10
36  corner bottom+left  2  B9 C10 A11
37  edge   bottom       2  C10 D10 E10
38  edge   bottom       2  E10 F10 G10
39  edge   bottom       2  G10 H10 I10
40  corner bottom+right 2  J9 I10 K11
"""


def _grid_xy(name: str) -> tuple[int, int]:
    return COLUMNS.index(name[0]), int(name[1:]) - 1


def _grid_maps() -> list[tuple[str, Callable[[int, int], tuple[int, int]]]]:
    n = GRID - 1
    return [
        ("identity", lambda x, y: (x, y)),
        ("rot90", lambda x, y: (n - y, x)),
        ("rot180", lambda x, y: (n - x, n - y)),
        ("rot270", lambda x, y: (y, n - x)),
        ("mirror_lr", lambda x, y: (n - x, y)),
        ("mirror_tb", lambda x, y: (x, n - y)),
        ("transpose", lambda x, y: (y, x)),
        ("antitranspose", lambda x, y: (n - y, n - x)),
    ]


@lru_cache(maxsize=None)
def conhex_board() -> BoardGraph:
    """The published ConHex board: 69 holes, 41 cells."""
    rows = [line.split() for line in _CELLS.strip().splitlines()]
    cell_names = [r[4:] for r in rows]
    # Holes in reading order: by row from the top, then by column.
    hole_names = sorted({h for names in cell_names for h in names}, key=lambda n: _grid_xy(n)[::-1])
    index = {n: i for i, n in enumerate(hole_names)}
    xy = [_grid_xy(n) for n in hole_names]
    cell_holes = tuple(tuple(index[h] for h in names) for names in cell_names)
    cell_sides = tuple(
        tuple(sorted(SIDE_NAMES.index(s) for s in r[2].split("+"))) if r[2] != "-" else () for r in rows
    )
    by_xy = {p: i for i, p in enumerate(xy)}
    perms = tuple((name, tuple(by_xy[f(x, y)] for x, y in xy)) for name, f in _grid_maps())

    lines = _PICTURE.strip("\n").splitlines()
    hole_pos = tuple((1 + 2 * y, 4 + 6 * x) for x, y in xy)
    for (line, col), name in zip(hole_pos, hole_names):
        if lines[line][col] not in "o@":
            raise AssertionError(f"picture has no hole at {name}")
    cell_pos: dict[int, tuple[int, int]] = {}
    for ln, text in enumerate(lines[1:], start=1):
        for m in re.finditer(r"(?<![0-9])(\d\d)(?![0-9])", text):
            if m.start() >= 4:  # the first four columns hold the row numbers
                cell_pos[int(m.group(1))] = (ln, m.start())
    return BoardGraph(
        name="conhex",
        hole_names=tuple(hole_names),
        hole_xy=tuple((float(x), float(y)) for x, y in xy),
        hole_depth=tuple(min(x, y, GRID - 1 - x, GRID - 1 - y) for x, y in xy),
        cell_holes=cell_holes,
        cell_need=tuple(int(r[3]) for r in rows),
        cell_kind=tuple(r[1] for r in rows),
        cell_sides=cell_sides,
        adjacency=adjacency_from_shared_holes(cell_holes),
        symmetry_hole_perms=perms,
        swap_symmetry="transpose",
        ascii=AsciiLayout(
            lines=tuple(lines),
            hole_pos=hole_pos,
            cell_pos=tuple(cell_pos[c] for c in range(len(cell_holes))),
        ),
    )

"""Terminal pictures of positions, drawn from a board's ``AsciiLayout``.

Pieces: ``X`` first player (connects top and bottom), ``O`` second player (left and right), ``.``
an empty hole. Conquered cells show ``XX`` / ``OO`` at their label; unconquered cells show their id
(``cell_ids=True``) or stay blank. With ``color=True`` the marks get ANSI colours.
"""

from __future__ import annotations

from typing import Sequence

from conhex_zero.games.board import BoardGraph

PIECES = {-1: ".", 0: "X", 1: "O"}
PLAYER_NAMES = ("X", "O")
PLAYER_GOALS = ("top-bottom", "left-right")
_ANSI = {0: "\033[1;31m", 1: "\033[1;34m"}
_RESET = "\033[0m"


def render_board(board: BoardGraph, holes: Sequence[int], cells: Sequence[int] | None = None,
                 cell_ids: bool = False, color: bool = False, last: int | None = None) -> str:
    """The board picture for hole owners ``holes`` [H] and cell owners ``cells`` [C] (-1/0/1).

    ``last`` marks the hole of the last move with brackets where the picture leaves room.
    """
    layout = board.ascii
    grid = [list(line) for line in layout.lines]
    marks: dict[tuple[int, int], int] = {}  # (line, col) -> owner, for colouring
    for h, (ln, col) in enumerate(layout.hole_pos):
        owner = int(holes[h])
        grid[ln][col] = PIECES[owner]
        if owner >= 0:
            marks[(ln, col)] = owner
    if layout.cell_pos is not None:
        for c, (ln, col) in enumerate(layout.cell_pos):
            owner = -1 if cells is None else int(cells[c])
            if owner >= 0:
                text = PIECES[owner] * 2
                marks[(ln, col)] = marks[(ln, col + 1)] = owner
            else:
                text = f"{c:02d}" if cell_ids else "  "
            grid[ln][col:col + 2] = list(text)
    if last is not None and 0 <= last < board.num_holes:
        ln, col = layout.hole_pos[last]
        if col > 0 and col + 1 < len(grid[ln]) and grid[ln][col - 1] == " " and grid[ln][col + 1] == " ":
            grid[ln][col - 1], grid[ln][col + 1] = "[", "]"
    if not color:
        return "\n".join("".join(row).rstrip() for row in grid)
    out = []
    for ln, row in enumerate(grid):
        out.append("".join(_ANSI[marks[(ln, col)]] + ch + _RESET if (ln, col) in marks else ch
                           for col, ch in enumerate(row)).rstrip())
    return "\n".join(out)


def status_line(to_move: int, ply: int, winner: int) -> str:
    """One line saying whose turn it is or who won."""
    if winner >= 0:
        return f"{PLAYER_NAMES[winner]} wins ({PLAYER_GOALS[winner]} connected) after {ply} plies"
    return f"{PLAYER_NAMES[to_move]} to move ({PLAYER_GOALS[to_move]}), ply {ply + 1}"

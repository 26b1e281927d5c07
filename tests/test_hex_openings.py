"""The tables of known Hex opening outcomes (analysis/hex_openings.py): well formed, in this
package's coordinates, and consistent with the exact solver where it can check them."""

import pytest

from conhex_zero.analysis.hex_openings import PUBLISHED_OPENINGS, SOLVED_OPENINGS
from conhex_zero.analysis.solver import HexSolver
from conhex_zero.games.hex import hex_board


def turned(name, n):
    """The hole's image under the 180-degree turn of the n x n board."""
    c, r = ord(name[0]) - ord("a"), int(name[1:]) - 1
    return f"{chr(ord('a') + n - 1 - c)}{n - r}"


def transposed(name):
    """The hole's image in the long diagonal (which exchanges the players' sides)."""
    c, r = ord(name[0]) - ord("a"), int(name[1:]) - 1
    return f"{chr(ord('a') + r)}{c + 1}"


TABLES = [(n, wins) for n, wins in SOLVED_OPENINGS.items()] + [(n, wins) for n, wins in PUBLISHED_OPENINGS.items()]


@pytest.mark.parametrize("n, wins", TABLES, ids=[f"hex{n}" for n, _ in TABLES])
def test_tables_are_well_formed(n, wins):
    names = set(hex_board(n).hole_names)
    assert wins <= names and 0 < len(wins) < len(names)  # every opening classified: the rest lose
    assert {turned(m, n) for m in wins} == wins  # the half turn keeps both players' sides
    # Known on every solved size: the whole short diagonal (obtuse corner to obtuse corner) wins.
    assert {f"{chr(ord('a') + n - 1 - r)}{r + 1}" for r in range(n)} <= wins
    # The transpose exchanges the players, so the table is not invariant under it: a table read in
    # the wrong orientation would show here as the first row winning instead of the first column.
    assert {transposed(m) for m in wins} != wins


def test_published_7x7_table():
    wins = PUBLISHED_OPENINGS[7]
    assert len(hex_board(7).hole_names) == 49 and len(wins) == 27
    assert "d4" in wins
    # On the first player's own first row only the obtuse corner wins; on the opponent's first
    # column a4, a6 and a7 win. (Hayward et al.'s page: a1 a2 a3 a5 b1 b2 lose, a4 a6 a7 b3 win.)
    assert {m for m in wins if m.endswith("1")} == {"g1"}
    assert {m for m in wins if m.startswith("a")} == {"a4", "a6", "a7"}
    assert {"a1", "a2", "a3", "a5", "b1", "b2"}.isdisjoint(wins) and {"a4", "a6", "a7", "b3"} <= wins


def test_solver_agrees_with_the_tables_where_it_is_quick():
    # 5x5: the book's table against a fresh search of a few openings.
    board = hex_board(5)
    solver = HexSolver(board, book=False)
    for name in ("c3", "a1", "e5", "d1"):
        a = board.hole_names.index(name)
        assert (solver.winner(1 << a, 0, 1) == 0) == (name in SOLVED_OPENINGS[5])

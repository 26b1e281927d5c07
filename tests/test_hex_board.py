"""n x n Hex tables: names, ids, adjacency as in HexGui/OpenSpiel, sides, symmetries."""

import pytest

from conhex_zero.games.hex import hex_board


@pytest.mark.parametrize("n", [2, 3, 5, 11, 19])
def test_counts(n):
    b = hex_board(n)
    assert b.num_holes == b.num_cells == n * n
    assert len(b.adjacency) == 3 * n * n - 4 * n + 1
    assert all(len(h) == 1 and need == 1 for h, need in zip(b.cell_holes, b.cell_need))
    for side in range(4):
        assert b.side_masks[side].sum() == n


def test_names_and_ids():
    b = hex_board(11)
    assert b.hole_names[0] == "a1"  # top-left
    assert b.hole_names[10] == "k1"  # top-right: letters count columns
    assert b.hole_names[11] == "a2"  # id = row * n + column
    assert b.hole_names[120] == "k11"


def test_neighbours_follow_the_convention():
    n = 5
    b = hex_board(n)
    idx = lambda c, r: r * n + c  # noqa: E731
    c, r = 2, 2
    expected = {idx(c - 1, r), idx(c + 1, r), idx(c, r - 1), idx(c, r + 1), idx(c + 1, r - 1), idx(c - 1, r + 1)}
    assert set(b.neighbours[idx(c, r)]) == expected
    # Acute corners (a1 and the opposite one) have 2 neighbours, obtuse corners 3.
    assert len(b.neighbours[idx(0, 0)]) == 2 and len(b.neighbours[idx(n - 1, n - 1)]) == 2
    assert len(b.neighbours[idx(n - 1, 0)]) == 3 and len(b.neighbours[idx(0, n - 1)]) == 3


def test_sides():
    b = hex_board(4)
    top = [b.hole_names[c] for c in range(16) if 0 in b.cell_sides[c]]
    left = [b.hole_names[c] for c in range(16) if 2 in b.cell_sides[c]]
    assert top == ["a1", "b1", "c1", "d1"]
    assert left == ["a1", "a2", "a3", "a4"]


def test_symmetries():
    b = hex_board(6)
    syms = {s.name: s for s in b.symmetries}
    assert {n for n, s in syms.items() if s.exchanges_sides} == {"transpose", "antitranspose"}
    assert not syms["rot180"].exchanges_sides
    # The swap mirrors a stone in the long diagonal: b3 <-> c2.
    t = syms["transpose"]
    assert b.hole_names[t.hole_perm[b.hole_index["b3"]]] == "c2"


@pytest.mark.parametrize("n", [0, 1, 20])
def test_bad_sizes(n):
    with pytest.raises(ValueError, match="between 2 and 19"):
        hex_board(n)

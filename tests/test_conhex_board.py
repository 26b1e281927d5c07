"""Every count of the ConHex board specification (CONHEX_BOARD.md), checked on the tables."""

import math
import random
from collections import Counter, deque

import numpy as np
import pytest

from conhex_zero.games.board import PLAYER_SIDES, SIDE_NAMES
from conhex_zero.games.conhex import conhex_board
from helpers import connects

B = conhex_board()
NAME = {n: i for i, n in enumerate(B.hole_names)}


def cells_of_kind(kind):
    return [c for c, k in enumerate(B.cell_kind) if k == kind]


def test_hole_and_cell_counts():
    assert B.num_holes == 69
    assert B.num_cells == 41


def test_cell_kinds_sizes_and_need():
    sizes = Counter((k, len(h), n) for k, h, n in zip(B.cell_kind, B.cell_holes, B.cell_need))
    assert sizes == {("corner", 3, 2): 4, ("edge", 3, 2): 12, ("inner", 6, 3): 24, ("centre", 5, 3): 1}
    # In general a cell is conquered with at least half of its holes.
    for holes, need in zip(B.cell_holes, B.cell_need):
        assert need == math.ceil(len(holes) / 2)


def test_centre_cell_has_the_centre_hole():
    (centre,) = cells_of_kind("centre")
    assert centre == 20
    assert {B.hole_names[h] for h in B.cell_holes[centre]} == {"F5", "E6", "F6", "G6", "F7"}


def test_holes_lie_on_three_cells_except_corners_and_centre():
    per_hole = {B.hole_names[h]: len(cs) for h, cs in enumerate(B.hole_cells)}
    ones = {n for n, k in per_hole.items() if k == 1}
    assert ones == {"A1", "K1", "A11", "K11", "F6"}
    assert sum(k == 3 for k in per_hole.values()) == 64
    assert set(per_hole.values()) == {1, 3}


def test_hole_names_follow_the_grid():
    # Row 2 from the printed board: C2 .. I2 are holes; B2 and J2 are not.
    row2 = [n for n in B.hole_names if n[1:] == "2"]
    assert row2 == ["C2", "D2", "E2", "F2", "G2", "H2", "I2"]
    assert "B2" not in NAME and "A2" not in NAME and "F1" not in NAME
    # Holes are numbered in reading order (rows from the top).
    assert B.hole_names[0] == "A1" and B.hole_names[1] == "K1" and B.hole_names[-1] == "K11"
    assert B.hole_names[NAME["F6"]] == "F6" and B.hole_xy[NAME["F6"]] == (5.0, 5.0)


def test_each_side_has_five_cells_three_edge_two_corner():
    for s, name in enumerate(SIDE_NAMES):
        cells = np.flatnonzero(B.side_masks[s])
        kinds = Counter(B.cell_kind[c] for c in cells)
        assert len(cells) == 5, name
        assert kinds == {"edge": 3, "corner": 2}, name


def test_corner_cells_count_for_both_players():
    for c in cells_of_kind("corner"):
        sides = B.cell_sides[c]
        assert len(sides) == 2
        owners = {0 if s in PLAYER_SIDES[0] else 1 for s in sides}
        assert owners == {0, 1}, f"corner cell {c} must serve both players"


def test_adjacency_is_sharing_a_hole():
    expected = set()
    for i in range(B.num_cells):
        for j in range(i + 1, B.num_cells):
            if set(B.cell_holes[i]) & set(B.cell_holes[j]):
                expected.add((i, j))
    assert set(B.adjacency) == expected
    assert len(B.adjacency) == 104


def test_edge_cells_along_the_frame_share_one_hole():
    shared = set(B.cell_holes[1]) & set(B.cell_holes[2])
    assert [B.hole_names[h] for h in shared] == ["E2"]
    assert (1, 2) in B.adjacency


def test_neighbour_counts_by_kind():
    degree = {}
    for c, kind in enumerate(B.cell_kind):
        degree.setdefault(kind, set()).add(len(B.neighbours[c]))
    assert degree == {"inner": {6}, "edge": {4}, "centre": {4}, "corner": {3}}


def test_rings_from_the_outside():
    dist = {c: 0 for c in range(B.num_cells) if B.cell_sides[c]}
    queue = deque(dist)
    while queue:
        c = queue.popleft()
        for n in B.neighbours[c]:
            if n not in dist:
                dist[n] = dist[c] + 1
                queue.append(n)
    rings = Counter(dist.values())
    assert [rings[r] for r in range(5)] == [16, 12, 8, 4, 1]
    assert dist[20] == 4


def test_symmetries_of_the_square():
    syms = {s.name: s for s in B.symmetries}
    assert len(syms) == 8
    exchanging = {n for n, s in syms.items() if s.exchanges_sides}
    assert exchanging == {"rot90", "rot270", "transpose", "antitranspose"}
    # Every symmetry maps holes to holes and cells to cells with the same size and need.
    for s in B.symmetries:
        for c in range(B.num_cells):
            img = s.cell_perm[c]
            assert {s.hole_perm[h] for h in B.cell_holes[c]} == set(B.cell_holes[img])
    # A 90-degree turn maps the top/bottom player's sides onto the left/right player's.
    r = syms["rot90"]
    assert {r.side_perm[0], r.side_perm[1]} == {2, 3}
    assert B.swap_symmetry == "transpose"
    assert B.hole_names[syms["transpose"].hole_perm[NAME["C2"]]] == "B3"


def connected(owners, player):
    return connects(B, owners, player)


@pytest.mark.parametrize("seed", range(4))
def test_every_full_colouring_has_exactly_one_connecting_player(seed):
    rng = random.Random(seed)
    for _ in range(2500):
        bias = rng.random()
        owners = [0 if rng.random() < bias else 1 for _ in range(B.num_cells)]
        assert connected(owners, 0) != connected(owners, 1), owners


def test_a_side_exchanging_symmetry_exchanges_the_connecting_player():
    rng = random.Random(7)
    rot = B.symmetry("rot90")
    for _ in range(500):
        owners = [rng.randrange(2) for _ in range(B.num_cells)]
        image = [None] * B.num_cells
        for c, o in enumerate(owners):
            image[rot.cell_perm[c]] = 1 - o
        assert connected(owners, 0) == connected(image, 1)

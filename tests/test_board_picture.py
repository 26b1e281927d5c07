"""Board pictures: cell outlines derived from the board data tile the board; heatmaps are written as
PNG or SVG of exactly the requested size."""

import math
import struct
import xml.etree.ElementTree as ET
from collections import Counter

import numpy as np
import pytest
from matplotlib.path import Path as MplPath

from conhex_zero.games.game import parse_game
from conhex_zero.viz.board_picture import (cell_outlines, draw_board_map, edge_segments, frame_segments,
                                           polygon_area)

CONHEX = parse_game("conhex").board


def _xy(name: str) -> tuple[float, float]:
    """Grid point of a ConHex name (holes and frame points alike): A1 = (0, 0), K11 = (10, 10)."""
    return float("ABCDEFGHIJK".index(name[0])), float(int(name[1:]) - 1)


def _cyclic(poly) -> list[tuple[float, float]]:
    pts = [(float(x), float(y)) for x, y in np.round(poly, 9)]
    k = pts.index(min(pts))
    return pts[k:] + pts[:k]


@pytest.mark.parametrize("cell, corners", [
    (0, "A1 C1 C2 B3 A3"),        # corner cell: pentagon reaching two frame lines
    (1, "C1 E1 E2 C2"),           # top edge cell: rectangle up to the frame
    (5, "C2 D2 D3 C4 B4 B3"),     # inner hexagon
    (20, "F5 G6 F7 E6"),          # the centre diamond (F6 lies inside)
])
def test_conhex_outlines_of_named_cells(cell, corners):
    poly = cell_outlines(CONHEX)[cell]
    assert polygon_area(poly) > 0
    expected = np.array([_xy(n) for n in corners.split()])
    if polygon_area(expected) < 0:
        expected = expected[::-1]
    assert _cyclic(poly) == _cyclic(expected)


def _shared_pairs(outlines) -> set[tuple[int, int]]:
    pairs = set()
    for cells in edge_segments(outlines).values():
        assert len(cells) <= 2, "an edge lies on three outlines: outlines overlap"
        if len(cells) == 2:
            pairs.add(tuple(sorted(cells)))
    return pairs


def _coverage(outlines, points) -> np.ndarray:
    """[P] how many outlines contain each point."""
    return sum(MplPath(p).contains_points(points).astype(int) for p in outlines)


def test_conhex_outlines_tile_the_frame_square():
    outlines = cell_outlines(CONHEX)
    assert len(outlines) == 41
    areas = [polygon_area(p) for p in outlines]
    assert min(areas) > 0 and sum(areas) == pytest.approx(100.0)  # the 10 x 10 frame square
    allv = np.concatenate(outlines)
    assert allv.min() == 0 and allv.max() == 10
    points = np.random.default_rng(0).uniform(0.001, 9.999, size=(4000, 2))
    assert (_coverage(outlines, points) == 1).all()
    # Cells that share a side are exactly the adjacent cells (which on ConHex share a hole).
    assert _shared_pairs(outlines) == set(CONHEX.adjacency)


def test_conhex_frame_sides_lie_on_the_frame_lines():
    lines = {0: (1, 0.0), 1: (1, 10.0), 2: (0, 0.0), 3: (0, 10.0)}  # side -> (axis, coordinate)
    length = {s: 0.0 for s in lines}
    for seg, side in frame_segments(CONHEX, cell_outlines(CONHEX)):
        axis, value = lines[side]
        assert (seg[:, axis] == value).all()
        length[side] += float(np.linalg.norm(seg[1] - seg[0]))
    assert length == {0: 10.0, 1: 10.0, 2: 10.0, 3: 10.0}


@pytest.mark.parametrize("n", [4, 5])
def test_hex_outlines_are_tiling_hexagons(n):
    board = parse_game(f"hex-{n}").board
    outlines = cell_outlines(board)
    xy = np.asarray(board.hole_xy)
    for poly, centre in zip(outlines, xy):
        assert poly.shape == (6, 2) and polygon_area(poly) == pytest.approx(math.sqrt(3) / 2)
        assert np.allclose(np.linalg.norm(poly - centre, axis=1), 1 / math.sqrt(3))
    assert sum(polygon_area(p) for p in outlines) == pytest.approx(n * n * math.sqrt(3) / 2)
    lo, hi = np.concatenate(outlines).min(axis=0), np.concatenate(outlines).max(axis=0)
    points = np.random.default_rng(1).uniform(lo, hi, size=(4000, 2))
    assert _coverage(outlines, points).max() == 1  # no overlaps
    near = np.random.default_rng(2).uniform(-0.45, 0.45, size=(n * n, 2)) + xy  # inside each hexagon
    assert (_coverage(outlines, near) == 1).all()
    assert _shared_pairs(outlines) == set(board.adjacency)
    # The perimeter has 8n - 2 hexagon edges; the edge at each obtuse corner faces top or bottom best.
    sides = Counter(side for _, side in frame_segments(board, outlines))
    assert sides == {0: 2 * n, 1: 2 * n, 2: 2 * n - 1, 3: 2 * n - 1}


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize("spec", ["conhex", "hex-5"])
@pytest.mark.parametrize("size", [(640, 480), (800, 800)])
def test_heatmap_png_and_svg_have_the_requested_size(tmp_path, spec, size):
    game = parse_game(spec)
    H, C = game.num_holes, game.num_cells
    values = np.linspace(-1.0, 1.0, H)
    values[[0, H // 2]] = np.nan  # e.g. illegal moves
    labels = [None if np.isnan(v) else f"{v:.2f}" for v in values]
    stones = np.full(H, -1)
    stones[H // 2] = 0
    owners = np.full(C, -1)
    owners[0] = 1
    kwargs = dict(hole_values=values, hole_labels=labels, title=f"{spec} test", colorbar_label="value",
                  size=size, stones=stones, cell_owners=owners, highlight=[1])
    png = draw_board_map(game, tmp_path / "map.png", **kwargs)
    assert _png_size(png.read_bytes()) == size
    svg = draw_board_map(spec, tmp_path / "sub" / "map.svg", cell_values=np.linspace(0, 1, C), **kwargs)
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    assert (root.get("width"), root.get("height")) == (str(size[0]), str(size[1]))
    view = [float(v) for v in root.get("viewBox").split()]
    assert view[2] / view[3] == pytest.approx(size[0] / size[1], rel=1e-3)
    assert svg.stat().st_size > 10_000


def test_bad_arguments_are_rejected(tmp_path):
    with pytest.raises(ValueError, match=r"\.png or \.svg"):
        draw_board_map("hex-3", tmp_path / "map.jpg")
    with pytest.raises(ValueError, match="hole_values needs 9"):
        draw_board_map("hex-3", tmp_path / "map.png", hole_values=[0.5] * 8)
    with pytest.raises(ValueError, match="stones"):
        draw_board_map("hex-3", tmp_path / "map.png", stones=[2] * 9)
    assert not list(tmp_path.iterdir())

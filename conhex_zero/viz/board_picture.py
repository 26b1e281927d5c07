"""Heatmaps drawn on the real board picture (PNG or SVG), for ``openings`` and ``report``.

The picture is derived from the board data alone (``BoardGraph``), never from a game's name:

* ``cell_outlines`` gives each cell a polygon in ``hole_xy`` coordinates. A board whose cells are
  single holes with ``need`` 1 (Hex) gets the pointy-top regular hexagon around each hole; any other
  board (ConHex) gets the convex hull of the cell's holes plus their projections onto the frame lines
  of the sides the cell lies on. On both boards the outlines tile the board: neighbouring cells share
  edges, and the outer boundary is the frame, which is coloured by the player who owns each side.
* ``draw_board_map`` draws cells, frame, holes (filled by a colour scale from per-hole values, hollow
  where a value is NaN), move names, optional per-hole labels, pieces, conquered cells, highlighted
  holes, a colour bar and a legend, and saves a PNG or SVG of exactly the requested pixel size.

Drawing uses matplotlib's object API (``Figure``), so no pyplot state or backend switch is touched.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from conhex_zero.games.board import BoardGraph
from conhex_zero.games.game import Game, parse_game

PLAYER_COLOURS: tuple[str, str] = ("#b2182b", "#2166ac")  # dark red (first), blue (second)
PLAYER_LIGHT: tuple[str, str] = ("#f4c7c3", "#c6dbef")  # conquered-cell fills
PLAYER_LABELS: tuple[str, str] = ("first player (top-bottom)", "second player (left-right)")
SIDE_OWNER: tuple[int, ...] = (0, 0, 1, 1)  # side id (top, bottom, left, right) -> player
_SIDE_NORMALS = np.array([[0.0, -1.0], [0.0, 1.0], [-1.0, 0.0], [1.0, 0.0]])  # [4, 2], y points down
CELL_FILL, CELL_EDGE, HIGHLIGHT = "#f3efe6", "#8a8478", "#f5a800"
DPI = 100
_EPS = 1e-9


# ------------------------------------------------------------------------------------ outlines
def _convex_hull(points: np.ndarray) -> np.ndarray:
    """Convex hull ``[K, 2]`` of ``[N, 2]`` points, counter-clockwise (positive shoelace area),
    collinear points dropped (Andrew's monotone chain)."""
    pts = sorted({(round(float(x), 9), round(float(y), 9)) for x, y in points})
    if len(pts) <= 2:
        return np.asarray(pts, dtype=float)

    def cross(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower: list[tuple[float, float]] = []
    upper: list[tuple[float, float]] = []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= _EPS:
            lower.pop()
        lower.append(p)
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= _EPS:
            upper.pop()
        upper.append(p)
    return np.asarray(lower[:-1] + upper[:-1], dtype=float)


def polygon_area(poly: np.ndarray) -> float:
    """Signed shoelace area of a ``[K, 2]`` polygon (positive for the order ``cell_outlines`` uses)."""
    x, y = poly[:, 0], poly[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def is_hex_like(board: BoardGraph) -> bool:
    """True for Hex-like boards: every cell is one hole, taken with one piece."""
    return all(len(hs) == 1 for hs in board.cell_holes) and all(n == 1 for n in board.cell_need)


def cell_outlines(board: BoardGraph) -> list[np.ndarray]:
    """One polygon ``[K, 2]`` per cell in ``hole_xy`` coordinates, vertices in positive (shoelace)
    order, which is clockwise on screen because y points down.

    Cells of one hole with need 1 get a pointy-top regular hexagon of circumradius 1/sqrt(3) around
    the hole (with Hex's ``hole_xy`` these tile the rhombus). Other cells get the convex hull of their
    holes together with each hole's projection onto the frame line of every side the cell lies on
    (top: y = min y of all holes, bottom: max y, left: min x, right: max x).
    """
    xy = np.asarray(board.hole_xy, dtype=float)  # [H, 2]
    if is_hex_like(board):
        r = 1.0 / math.sqrt(3.0)
        angles = np.deg2rad([-90.0, -30.0, 30.0, 90.0, 150.0, 210.0])  # top vertex first
        hexagon = r * np.stack([np.cos(angles), np.sin(angles)], axis=1)  # [6, 2]
        return [xy[hs[0]] + hexagon for hs in board.cell_holes]
    lo, hi = xy.min(axis=0), xy.max(axis=0)  # [2] each: (x_left, y_top), (x_right, y_bottom)
    frame_line = ((1, lo[1]), (1, hi[1]), (0, lo[0]), (0, hi[0]))  # side -> (axis, coordinate)
    out = []
    for holes, sides in zip(board.cell_holes, board.cell_sides):
        pts = [xy[list(holes)]]  # [n, 2] each
        for s in sides:
            p = xy[list(holes)].copy()
            axis, value = frame_line[s]
            p[:, axis] = value
            pts.append(p)
        out.append(_convex_hull(np.concatenate(pts)))
    return out


Segment = tuple[tuple[float, float], tuple[float, float]]


def edge_segments(outlines: Sequence[np.ndarray]) -> dict[Segment, list[int]]:
    """Outline edges cut at every outline vertex lying on them: segment (sorted end points) -> the
    cells whose outline contains it. Shared segments have two cells, frame segments one."""
    verts = np.unique(np.round(np.concatenate(outlines), 9), axis=0)  # [V, 2]
    out: dict[Segment, list[int]] = {}
    for c, poly in enumerate(outlines):
        for a, b in zip(poly, np.roll(poly, -1, axis=0)):
            d = b - a
            t = ((verts - a) @ d) / float(d @ d)  # [V] position along the edge
            off = np.abs((verts[:, 0] - a[0]) * d[1] - (verts[:, 1] - a[1]) * d[0]) / math.hypot(*d)
            cuts = np.sort(np.concatenate([[0.0, 1.0], t[(off < 1e-7) & (t > 1e-7) & (t < 1 - 1e-7)]]))
            for t0, t1 in zip(cuts[:-1], cuts[1:]):
                p = tuple(np.round(a + t0 * d, 6) + 0.0)
                q = tuple(np.round(a + t1 * d, 6) + 0.0)
                out.setdefault((min(p, q), max(p, q)), []).append(c)
    return out


def frame_segments(board: BoardGraph, outlines: Sequence[np.ndarray]) -> list[tuple[np.ndarray, int]]:
    """The board's outer boundary as ``([2, 2] segment, side id)`` pairs, the side id -1 for a
    boundary piece of a cell on no side. A piece of a cell on two sides (a corner) goes to the side
    whose outward direction best matches the piece's outward normal."""
    centre = {c: poly.mean(axis=0) for c, poly in enumerate(outlines)}
    out = []
    for (p, q), cells in edge_segments(outlines).items():
        if len(cells) != 1:
            continue
        c = cells[0]
        seg = np.array([p, q])  # [2, 2]
        d = seg[1] - seg[0]
        normal = np.array([d[1], -d[0]]) / math.hypot(*d)
        if normal @ (seg.mean(axis=0) - centre[c]) < 0:
            normal = -normal
        sides = board.cell_sides[c]
        side = max(sides, key=lambda s: float(normal @ _SIDE_NORMALS[s])) if sides else -1
        out.append((seg, side))
    return out


# ------------------------------------------------------------------------------------- drawing
def _values(name: str, values: Sequence[float] | np.ndarray | None, n: int) -> np.ndarray | None:
    if values is None:
        return None
    arr = np.asarray(values, dtype=float).reshape(-1)
    if arr.shape[0] != n:
        raise ValueError(f"{name} needs {n} entries, got {arr.shape[0]}")
    return arr


def _players(name: str, values: Sequence[int] | np.ndarray | None, n: int) -> np.ndarray | None:
    if values is None:
        return None
    arr = np.asarray(values).reshape(-1)
    if arr.shape[0] != n or not np.isin(arr, (-1, 0, 1)).all():
        raise ValueError(f"{name} needs {n} entries, each -1 (none), 0 (first) or 1 (second player)")
    return arr.astype(int)


def _colour_range(arrays: list[np.ndarray], vmin: float | None, vmax: float | None) -> tuple[float, float]:
    """Colour-scale limits: given ones kept; otherwise the data range, symmetric about 0 when the data
    have both signs (so a diverging map's middle colour means 0)."""
    data = np.concatenate([a[np.isfinite(a)] for a in arrays]) if arrays else np.zeros(0)
    lo = vmin if vmin is not None else (float(data.min()) if data.size else 0.0)
    hi = vmax if vmax is not None else (float(data.max()) if data.size else 1.0)
    if vmin is None and vmax is None and lo < 0 < hi:
        lo, hi = -max(-lo, hi), max(-lo, hi)
    if hi <= lo:
        lo, hi = (lo - 0.5, hi + 0.5) if vmin is None and vmax is None else (lo, lo + 1.0)
    return lo, hi


def _text_colour(rgba: Sequence[float]) -> str:
    r, g, b = rgba[:3]
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.55 else "white"


def draw_board_map(game: Game | BoardGraph | str, path: str | Path, *,
                   hole_values: Sequence[float] | np.ndarray | None = None,
                   cell_values: Sequence[float] | np.ndarray | None = None,
                   hole_labels: Sequence[str | None] | None = None,
                   title: str = "", colorbar_label: str = "",
                   vmin: float | None = None, vmax: float | None = None, cmap: str = "PuOr_r",
                   size: tuple[int, int] = (800, 800),
                   stones: Sequence[int] | np.ndarray | None = None,
                   cell_owners: Sequence[int] | np.ndarray | None = None,
                   highlight: Iterable[int] | None = None, highlight_label: str = "highlighted") -> Path:
    """Draw the board with optional heatmaps and save it as PNG or SVG (by ``path``'s suffix).

    Args:
        game: a ``Game``, a spec string such as ``hex-11`` or a ``BoardGraph``.
        hole_values: ``[H]`` floats colouring the holes; NaN = no value (drawn hollow and grey).
        cell_values: ``[C]`` floats colouring the cells, on the same colour scale as ``hole_values``
            (NaN = no value: the plain light fill).
        hole_labels: ``[H]`` short texts (or None) written under each hole's name, e.g. ``0.62``.
        vmin, vmax: colour-scale limits; by default the data range, symmetric about 0 when the data
            have both signs. The default map is diverging orange (high) / purple (low), chosen so as
            not to be confused with the players' red and blue.
        size: ``(width, height)`` in pixels; a PNG has exactly this size, an SVG has these as its
            ``width``/``height`` (unitless, i.e. px) with the drawing scaled into them by ``viewBox``.
        stones: ``[H]`` ints, -1 empty, 0 first player's piece, 1 second player's.
        cell_owners: ``[C]`` ints, -1 open, else the player who conquered the cell (light fill; this
            takes precedence over ``cell_values``).
        highlight: hole ids to circle; ``highlight_label`` names them in the legend.
    Returns the path written.
    """
    from matplotlib import colormaps, rc_context
    from matplotlib.cm import ScalarMappable
    from matplotlib.collections import LineCollection, PatchCollection
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Circle, Polygon

    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in ("png", "svg"):
        raise ValueError(f"cannot write a board picture to {str(path)!r}: use a .png or .svg file name")
    width, height = (int(v) for v in size)
    if width < 200 or height < 200:
        raise ValueError(f"picture size {size} is too small (at least 200 x 200 pixels)")
    board = game if isinstance(game, BoardGraph) else parse_game(game).board
    H, C = board.num_holes, board.num_cells
    hv = _values("hole_values", hole_values, H)  # [H] or None
    cv = _values("cell_values", cell_values, C)  # [C] or None
    st = _players("stones", stones, H)  # [H] or None
    own = _players("cell_owners", cell_owners, C)  # [C] or None
    if hole_labels is not None and len(hole_labels) != H:
        raise ValueError(f"hole_labels needs {H} entries, got {len(hole_labels)}")
    marked = sorted({int(h) for h in (() if highlight is None else highlight)})
    if any(not 0 <= h < H for h in marked):
        raise ValueError(f"highlight holes must be in 0..{H - 1}")
    has_scale = hv is not None or cv is not None
    lo, hi = _colour_range([a for a in (hv, cv) if a is not None], vmin, vmax)
    norm, cm = Normalize(lo, hi), colormaps[cmap]

    # Layout in pixels: title above, legend below, colour bar right of the board, all centred.
    xy = np.asarray(board.hole_xy, dtype=float)  # [H, 2]
    outlines = cell_outlines(board)
    spacing = 1.0  # smallest distance between two holes
    if H > 1:
        d = np.linalg.norm(xy[:, None] - xy[None], axis=-1) + np.eye(H) * 1e9  # [H, H]
        spacing = float(d.min())
    r = (0.43 if is_hex_like(board) else 0.4) * spacing  # hole marker radius
    extent = np.concatenate([np.concatenate(outlines), xy - 1.4 * r, xy + 1.4 * r])  # [V + 2H, 2]
    (x0, y0), (x1, y1) = extent.min(axis=0) - 0.1 * spacing, extent.max(axis=0) + 0.1 * spacing
    s = max(0.7, min(width, height) / 800.0)  # text and band sizes follow the picture size
    nan_holes = hv is not None and bool(np.isnan(hv).any())
    margin, title_h = 12 * s, (44 * s if title else 0.0)
    legend_h = (60 if nan_holes or marked else 36) * s  # one or two rows of two entries
    cbar_w = 100 * s if has_scale else 0.0
    avail_w, avail_h = width - 2 * margin - cbar_w, height - 2 * margin - title_h - legend_h
    ppu = min(avail_w / (x1 - x0), avail_h / (y1 - y0))  # pixels per board unit
    bw, bh = ppu * (x1 - x0), ppu * (y1 - y0)
    left = (width - bw - cbar_w) / 2
    bottom = (height - bh - title_h - legend_h) / 2 + legend_h

    def pt(units: float) -> float:  # a length in board units as a font size / line width in points
        return units * ppu * 72.0 / DPI

    with rc_context({"svg.hashsalt": "conhex-zero", "font.family": "DejaVu Sans"}):
        fig = Figure(figsize=(width / DPI, height / DPI), dpi=DPI, facecolor="white")
        ax = fig.add_axes((left / width, bottom / height, bw / width, bh / height))
        ax.set_xlim(x0, x1)
        ax.set_ylim(y1, y0)  # y points down, as in hole_xy
        ax.set_axis_off()

        # Cells: light fill, or the value colour, or the conqueror's light colour.
        fills = []
        for c in range(C):
            if own is not None and own[c] >= 0:
                fills.append(PLAYER_LIGHT[own[c]])
            elif cv is not None and np.isfinite(cv[c]):
                fills.append(cm(norm(cv[c])))
            else:
                fills.append(CELL_FILL)
        ax.add_collection(PatchCollection([Polygon(p, closed=True) for p in outlines], facecolors=fills,
                                          edgecolors=CELL_EDGE, linewidths=max(0.4, pt(0.025)),
                                          joinstyle="round", zorder=1))
        # Frame: each side in its owner's colour.
        frame = frame_segments(board, outlines)
        for side_player in (-1, 0, 1):
            segs = [seg for seg, side in frame if (SIDE_OWNER[side] if side >= 0 else -1) == side_player]
            if segs:
                colour = PLAYER_COLOURS[side_player] if side_player >= 0 else "#555555"
                ax.add_collection(LineCollection(segs, colors=colour, linewidths=pt(0.14),
                                                 capstyle="round", zorder=2))

        # Holes: markers, names, labels, pieces, highlights. One text size for all names, one for
        # all labels, fitted to the longest so that it stays inside its marker.
        longest_name = max(2, max(len(n) for n in board.hole_names))
        longest_label = max([len(t) for t in hole_labels or () if t] or [1])
        name_fs = min(0.3 * spacing, 1.6 * r / (0.66 * longest_name))
        label_fs = min(0.27 * spacing, 1.75 * r / (0.58 * longest_label))
        for h in range(H):
            x, y = xy[h]
            style = "solid"
            if st is not None and st[h] >= 0:  # a piece
                face, edge, lw, text, radius = PLAYER_COLOURS[st[h]], "white", pt(0.04), "white", r * 1.08
            elif hv is not None and np.isfinite(hv[h]):
                face, edge, lw = cm(norm(hv[h])), "#333333", pt(0.025)
                text, radius = _text_colour(face), r
            elif hv is not None:  # no value: hollow, grey, dashed, smaller
                face, edge, lw, text, radius = "none", "#9a9a9a", pt(0.025), "#8c8c8c", 0.85 * r
                style = "dashed"
            else:
                face, edge, lw, text, radius = "white", "#555555", pt(0.025), "#222222", r
            ax.add_patch(Circle((x, y), radius, facecolor=face, edgecolor=edge, linewidth=lw,
                                linestyle=style, zorder=4))
            if h in marked:
                ax.add_patch(Circle((x, y), r * 1.25, facecolor="none", edgecolor=HIGHLIGHT,
                                    linewidth=pt(0.09), zorder=5))
            name = board.hole_names[h]
            label = hole_labels[h] if hole_labels is not None else None
            if label:
                ax.text(x, y - 0.28 * r, name, ha="center", va="center", fontsize=pt(0.78 * name_fs),
                        color=text, zorder=6)
                ax.text(x, y + 0.36 * r, label, ha="center", va="center", fontsize=pt(label_fs),
                        color=text, fontweight="bold", zorder=6)
            else:
                ax.text(x, y, name, ha="center", va="center", fontsize=pt(name_fs), color=text, zorder=6)

        # Title, colour bar, legend.
        if title:
            fig.text((left + bw / 2) / width, (bottom + bh + title_h * 0.45) / height, title,
                     ha="center", va="center", fontsize=14 * s, fontweight="bold")
        if has_scale:
            cax = fig.add_axes(((left + bw + 18 * s) / width, (bottom + 0.1 * bh) / height,
                                16 * s / width, 0.8 * bh / height))
            cb = fig.colorbar(ScalarMappable(norm=norm, cmap=cm), cax=cax)
            cb.ax.tick_params(labelsize=9 * s, width=0.6 * s, length=3 * s)
            cb.outline.set_linewidth(0.6 * s)
            if colorbar_label:
                cb.set_label(colorbar_label, fontsize=10 * s)
        handles = [Line2D([], [], color=PLAYER_COLOURS[p], lw=5 * s, label=PLAYER_LABELS[p]) for p in (0, 1)]
        if nan_holes:
            handles.append(Line2D([], [], ls="", marker="o", ms=11 * s, mfc="none", mec="#9a9a9a",
                                  label="no value"))
        if marked:
            handles.append(Line2D([], [], ls="", marker="o", ms=12 * s, mfc="none", mec=HIGHLIGHT,
                                  mew=2.5 * s, label=highlight_label))
        fig.legend(handles=handles, loc="upper center", ncol=2, frameon=False, fontsize=10 * s,
                   bbox_to_anchor=((left + bw / 2) / width, (bottom - 2 * s) / height),
                   handlelength=2.0, columnspacing=2.0, labelspacing=0.4)

        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=DPI, facecolor="white",
                    metadata={"Date": None} if fmt == "svg" else None)
    data = buf.getvalue()
    if fmt == "svg":
        data = _svg_pixel_size(data.decode("utf-8"), width, height).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _svg_pixel_size(svg: str, width: int, height: int) -> str:
    """Give the root ``<svg>`` element ``width``/``height`` in pixels (matplotlib writes points); the
    existing ``viewBox`` keeps the drawing scaled to fit."""
    m = re.search(r"<svg\b[^>]*>", svg)
    if m is None:
        raise RuntimeError("matplotlib wrote an SVG without a root element")
    tag = re.sub(r'\bwidth="[^"]*"', f'width="{width}"', m.group(0), count=1)
    tag = re.sub(r'\bheight="[^"]*"', f'height="{height}"', tag, count=1)
    return svg[:m.start()] + tag + svg[m.end():]

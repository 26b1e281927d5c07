"""The board's drawing as plain JSON: what the browser page (``play.server``), the book's page
(``play.book_browser``) and the static book pages (``book.pages``) draw from."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from conhex_zero.games.board import PLAYER_SIDES, SIDE_NAMES
from conhex_zero.games.game import Game
from conhex_zero.games.render import PLAYER_GOALS, PLAYER_NAMES


@lru_cache(maxsize=16)
def board_geometry(game: Game) -> dict[str, Any]:
    """Everything the page needs to draw ``game``'s board, as plain JSON types (cached per game)."""
    from conhex_zero.viz.board_picture import (PLAYER_COLOURS, PLAYER_LIGHT, SIDE_OWNER, is_hex_like,
                                               cell_outlines, frame_segments)

    board = game.board
    xy = np.asarray(board.hole_xy, dtype=float)  # [H, 2]
    outlines = cell_outlines(board)  # C x [K, 2]
    frame = frame_segments(board, outlines)  # [(segment [2, 2], side id)]
    spacing = 1.0  # smallest distance between two holes
    if board.num_holes > 1:
        d = np.linalg.norm(xy[:, None] - xy[None], axis=-1) + np.eye(board.num_holes) * 1e9  # [H, H]
        spacing = float(d.min())
    radius = (0.43 if is_hex_like(board) else 0.4) * spacing
    frame_width = 0.14 * spacing
    pts = np.concatenate(outlines + [xy - radius, xy + radius])
    pad = 0.12 * spacing + frame_width
    (x0, y0), (x1, y1) = pts.min(axis=0) - pad, pts.max(axis=0) + pad

    def r(v: float) -> float:
        return round(float(v), 4) + 0.0

    return {
        "hole_xy": [[r(x), r(y)] for x, y in xy],
        "hole_radius": r(radius),
        "spacing": r(spacing),
        "cells": [{"points": [[r(x), r(y)] for x, y in poly], "holes": list(holes), "need": need}
                  for poly, holes, need in zip(outlines, board.cell_holes, board.cell_need)],
        "frame": [{"points": [[r(x), r(y)] for x, y in seg], "side": side,
                   "side_name": SIDE_NAMES[side] if side >= 0 else None,
                   "player": SIDE_OWNER[side] if side >= 0 else None} for seg, side in frame],
        "frame_width": r(frame_width),
        "view_box": [r(x0), r(y0), r(x1 - x0), r(y1 - y0)],
        "hex_like": is_hex_like(board),
        "players": [{"name": PLAYER_NAMES[p], "goal": PLAYER_GOALS[p],
                     "sides": [SIDE_NAMES[s] for s in PLAYER_SIDES[p]],
                     "colour": PLAYER_COLOURS[p], "light": PLAYER_LIGHT[p]} for p in (0, 1)],
    }

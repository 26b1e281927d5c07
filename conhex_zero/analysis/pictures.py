"""Pictures of analyses: the openings heatmap on the board, game-length histograms, first-player
win rates with their intervals. Board pictures come from ``viz.board_picture``; charts are
matplotlib figures written without pyplot state (PNG or SVG by the file's suffix)."""

from __future__ import annotations

import math
from pathlib import Path

from conhex_zero.analysis.openings import PositionAnalysis
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.viz.board_picture import PLAYER_COLOURS, draw_board_map


def draw_openings_map(analysis: PositionAnalysis, env: VecEnv, state: State, path: str | Path,
                      size: tuple[int, int] = (900, 900)) -> Path:
    """Each analysed move's win % for the mover, on the board (the fairest opening circled)."""
    H = env.num_holes
    values = [math.nan] * H
    labels: list[str | None] = [None] * H
    for m in analysis.moves:
        if m.action < H:
            values[m.action] = 100 * m.win_rate
            labels[m.action] = f"{100 * m.win_rate:.0f}" + ("" if m.stable else "?")  # ?: undecided
    fair = {m.action for g in analysis.fairest(1) for m in g} if analysis.is_opening else set()
    who = "first player" if analysis.mover == 0 else "second player"
    title = (f"{analysis.game}: the {who}'s win % after each {'opening' if analysis.is_opening else 'move'}"
             f"\n{Path(analysis.checkpoint).name}, {analysis.sims} simulations x {analysis.repeats}")
    stones = state.holes[0].tolist()
    cells = state.cells[0].tolist()
    return draw_board_map(
        env.game, path, hole_values=values, hole_labels=labels, title=title,
        colorbar_label=f"{who}'s win % (second player does not swap)" if analysis.is_opening else f"{who}'s win %",
        vmin=0.0, vmax=100.0, size=size, stones=stones if any(s >= 0 for s in stones) else None,
        cell_owners=cells if any(c >= 0 for c in cells) else None,
        highlight=sorted(fair) or None, highlight_label="fairest opening")


def _figure(size: tuple[int, int]):
    from matplotlib.figure import Figure

    dpi = 100
    return Figure(figsize=(size[0] / dpi, size[1] / dpi), dpi=dpi)


def draw_length_histogram(series: dict[str, list[int]], path: str | Path, title: str,
                          size: tuple[int, int] = (800, 450)) -> Path:
    """Overlaid histograms of game lengths (pieces placed), one per named series."""
    path = Path(path)
    fig = _figure(size)
    ax = fig.add_subplot()
    values = [v for vs in series.values() for v in vs]
    if values:
        bins = range(min(values), max(values) + 2)
        colours = ["#b2182b", "#2166ac", "#7f7f7f", "#1b9e77"]
        for (name, lengths), colour in zip(series.items(), colours):
            if lengths:
                ax.hist(lengths, bins=bins, alpha=0.55, color=colour, density=True,
                        label=f"{name} (n={len(lengths)}, mean {sum(lengths) / len(lengths):.1f})")
        ax.legend(fontsize=9)
    ax.set_xlabel("pieces placed when the game ended")
    ax.set_ylabel("fraction of games")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, format=path.suffix.lstrip(".").lower())
    return path


def draw_rates(rows: list[tuple[str, float, float, float]], path: str | Path, title: str,
               size: tuple[int, int] = (800, 400)) -> Path:
    """Horizontal bars of rates with 95% intervals: rows of (label, rate, low, high), rates in [0, 1]."""
    path = Path(path)
    fig = _figure(size)
    ax = fig.add_subplot()
    ys = list(range(len(rows)))[::-1]
    for y, (label, rate, lo, hi) in zip(ys, rows):
        ax.barh(y, 100 * rate, color=PLAYER_COLOURS[0], alpha=0.75, height=0.6)
        below, above = max(0.0, rate - lo), max(0.0, hi - rate)  # never negative, even by rounding
        ax.errorbar(100 * rate, y, xerr=[[100 * below], [100 * above]], color="black", capsize=4)
        ax.text(100 * hi + 1, y, f"{100 * rate:.1f}%", va="center", fontsize=9)
    ax.axvline(50, color="#555555", ls="--", lw=1)
    ax.set_yticks(ys, [r[0] for r in rows])
    ax.set_xlim(0, 110)
    ax.set_xlabel("first player's win % (bars: 95% interval)")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, format=path.suffix.lstrip(".").lower())
    return path

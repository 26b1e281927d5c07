"""Minimal SVG line charts (axes, grid, legend, shaded intervals): no plotting dependency.

Enough for training curves in a README; the output is a standalone SVG document.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf")


@dataclass
class Series:
    name: str
    x: list[float]
    y: list[float]
    low: list[float] = field(default_factory=list)  # optional interval, same length as y
    high: list[float] = field(default_factory=list)


def _ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values (steps of 1, 2, 2.5 or 5 times a power of ten) in [lo, hi]."""
    if not hi > lo:
        return [lo]
    raw = (hi - lo) / count
    mag = 10.0 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 2.5, 5, 10)), key=lambda s: abs((hi - lo) / s - count))
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    return [round(k * step, 10) for k in range(first, last + 1)]


def line_chart(series: list[Series], title: str, x_label: str, y_label: str,
               y_range: tuple[float, float] | None = None, width: int = 720, height: int = 400) -> str:
    left, right, top, bottom = 64, 180, 40, 52
    pw, ph = width - left - right, height - top - bottom
    xs = [x for s in series for x in s.x] or [0.0, 1.0]
    x0, x1 = min(xs), max(xs)
    if x1 == x0:
        x1 = x0 + 1
    if y_range is None:
        ys = [y for s in series for y in (s.y + s.low + s.high)] or [0.0, 1.0]
        y_range = (min(ys), max(ys) if max(ys) > min(ys) else min(ys) + 1)
    y0, y1 = y_range

    def px(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * pw

    def py(y: float) -> float:
        return top + (1 - (y - y0) / (y1 - y0)) * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left + pw / 2}" y="22" text-anchor="middle" font-size="15">{escape(title)}</text>']
    for t in _ticks(y0, y1):
        out.append(f'<line x1="{left}" y1="{py(t):.1f}" x2="{left + pw}" y2="{py(t):.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{left - 6}" y="{py(t) + 4:.1f}" text-anchor="end">{t:g}</text>')
    for t in _ticks(x0, x1):
        out.append(f'<line x1="{px(t):.1f}" y1="{top}" x2="{px(t):.1f}" y2="{top + ph}" stroke="#f0f0f0"/>')
        out.append(f'<text x="{px(t):.1f}" y="{top + ph + 16}" text-anchor="middle">{t:g}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>')
    out.append(f'<text x="{left + pw / 2}" y="{height - 12}" text-anchor="middle">{escape(x_label)}</text>')
    out.append(f'<text transform="translate(16 {top + ph / 2}) rotate(-90)" text-anchor="middle">'
               f'{escape(y_label)}</text>')
    for i, s in enumerate(series):
        colour = PALETTE[i % len(PALETTE)]
        if s.low and s.high and len(s.low) == len(s.x):
            band = [f"{px(x):.1f},{py(h):.1f}" for x, h in zip(s.x, s.high)]
            band += [f"{px(x):.1f},{py(lo):.1f}" for x, lo in reversed(list(zip(s.x, s.low)))]
            out.append(f'<polygon points="{" ".join(band)}" fill="{colour}" fill-opacity="0.15" stroke="none"/>')
        points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(s.x, s.y))
        out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for x, y in zip(s.x, s.y):
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.5" fill="{colour}"/>')
        ly = top + 14 + 20 * i
        out.append(f'<line x1="{left + pw + 14}" y1="{ly - 4}" x2="{left + pw + 34}" y2="{ly - 4}" '
                   f'stroke="{colour}" stroke-width="3"/>')
        out.append(f'<text x="{left + pw + 40}" y="{ly}">{escape(s.name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"

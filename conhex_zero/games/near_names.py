"""Which move names are nearest a mistyped one, for "did you mean" hints.

A typo is measured by its edit distance (insertions, deletions, substitutions and swaps of two
neighbouring characters, each counting one): ``f7x``, ``F6F`` and ``6f`` are one edit from
``f7``, ``f6`` and ``f6``. The names at the smallest distance are kept when that distance is small
(one or two edits, and fewer than the text has characters unless the text looks like a
coordinate, a letter and a number), and among them those nearest on the board, by the column
letter and row number the text holds (``z9`` on ConHex: K9, the nearest hole of row 9).
"""

from __future__ import annotations

import re
from typing import Sequence

MAX_EDITS = 2
"""Texts further than this many edits from every name get no suggestion."""

_COORDINATE = re.compile(r"([a-z])\s*(\d{1,2})")


def edit_distance(a: str, b: str) -> int:
    """The optimal-string-alignment distance: insertions, deletions, substitutions and
    transpositions of neighbouring characters, each one edit."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, start=1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], prev2[j - 2] + 1)
        prev2, prev = prev, row
    return prev[len(b)]


def _coordinate(text: str) -> tuple[int, int] | None:
    """(column, row) of the first letter-and-number in ``text`` (``a1`` is (0, 1)), or None."""
    m = _COORDINATE.search(text)
    return None if m is None else (ord(m.group(1)) - ord("a"), int(m.group(2)))


def nearest_names(text: str, names: Sequence[str], limit: int = 4) -> list[str]:
    """The names nearest ``text`` (case-insensitive), at most ``limit``: board order among equals
    for a text without a coordinate, else nearest first (then by name); none when every name is
    far (see the module docstring)."""
    typed = re.sub(r"\s+", "", text.lower())
    if not typed or len(typed) > 12:
        return []
    distances = [edit_distance(typed, name.lower()) for name in names]
    best = min(distances, default=MAX_EDITS + 1)
    where = _coordinate(typed)
    if best > MAX_EDITS or (best >= len(typed) and where is None):
        return []
    close = [name for name, d in zip(names, distances) if d == best]
    if where is None:
        return close[:limit]
    col, row = where

    def apart(name: str) -> tuple[int, int]:
        spot = _coordinate(name.lower())
        if spot is None:
            return (1 << 30, 1 << 30)
        dc, dr = abs(spot[0] - col), abs(spot[1] - row)
        return (max(dc, dr), dc + dr)

    ranked = sorted(close, key=lambda name: (*apart(name), name))
    nearest = apart(ranked[0])[0]
    return [name for name in ranked if apart(name)[0] == nearest][:limit]

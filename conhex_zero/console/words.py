"""Counted words in messages: ``1 iteration``, ``2 iterations``, ``1 ply``, ``3 plies``."""

from __future__ import annotations


def plural(n: int, word: str, words: str | None = None) -> str:
    """``n`` and ``word`` in the right number: ``1 ply``, ``2 plies`` (with ``words='plies'``),
    ``3 rounds``."""
    return f"{n} {word if n == 1 else (words or word + 's')}"

"""Whether a stream is a terminal (a person watching) rather than a file or a pipe."""

from __future__ import annotations

from typing import Any


def is_terminal(stream: Any) -> bool:
    """Whether ``stream`` is an open terminal (False for files, pipes and closed streams)."""
    try:
        return hasattr(stream, "isatty") and stream.isatty()
    except ValueError:  # a closed stream
        return False

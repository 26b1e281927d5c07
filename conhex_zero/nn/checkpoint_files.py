"""Checkpoint files looked at without torch: the error commands report for them, and whether a path
names a file at all (any name a user types, of any length or bytes), so that a missing or misnamed
checkpoint is refused before torch is imported. Reading a checkpoint is ``checkpoint.py``'s."""

from __future__ import annotations

from pathlib import Path


class CheckpointError(ValueError):
    """A file is missing, unreadable, or not a conhex-zero checkpoint of a known schema."""


def path_exists(path: str | Path) -> bool:
    """Whether ``path`` names something that exists; False for names the system cannot look up (too
    long, a NUL byte, not encodable) instead of the ``OSError`` or ``ValueError`` they raise."""
    try:
        return Path(path).exists()
    except (OSError, ValueError):
        return False


def shown(path: str | Path, limit: int = 240) -> str:
    """A path as a message shows it: at most ``limit`` characters, unprintable ones escaped."""
    text = str(path).encode("unicode_escape", "backslashreplace").decode("ascii") if not str(path).isprintable() \
        else str(path)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def check_checkpoint_file(path: str | Path) -> Path:
    """``path`` names an existing regular file (``CheckpointError`` otherwise, one line, as
    ``load_checkpoint`` says it); whether the file holds a checkpoint is for ``load_checkpoint``."""
    p = Path(path)
    try:
        is_file = p.is_file()
    except (OSError, ValueError):
        is_file = False
    if not is_file:
        raise CheckpointError(f"no checkpoint file at {shown(path)}")
    return p

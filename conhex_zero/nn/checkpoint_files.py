"""Checkpoint files looked at without torch: the error commands report for them, and whether a path
names a file at all (any name a user types, of any length or bytes), so that a missing or misnamed
checkpoint is refused before torch is imported; a digest of a checkpoint's bytes, which names the
model it holds (arena records and ladders tell a file retrained in place by it); and what can be
told of its bytes without torch (its seal, a whole zip archive), so that a damaged or cut file is
refused at once too. Reading a checkpoint is ``checkpoint.py``'s."""

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


DIGEST_LENGTH = 16
"""Hex digits of a checkpoint's SHA-256 that name its content (64 bits: no two models a person
compares share them)."""


def checkpoint_digest(path: str | Path) -> str:
    """The first ``DIGEST_LENGTH`` hex digits of the SHA-256 of the file's bytes: what a player that
    reads it plays with (a file retrained or replaced in place has another); ``CheckpointError``
    when it cannot be read."""
    import hashlib

    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except (OSError, ValueError) as err:
        raise CheckpointError(f"{shown(path)} cannot be read ({getattr(err, 'strerror', None) or err})") from None
    return h.hexdigest()[:DIGEST_LENGTH]


def check_checkpoint_archive(path: str | Path) -> None:
    """What can be told of a checkpoint file without torch: its seal matches its bytes
    (``file_seal``), and it is a whole zip archive, as ``torch.save`` writes one (a file cut short
    has lost the archive's directory at its end); ``CheckpointError`` (one line) otherwise."""
    import zipfile

    from conhex_zero.files import file_seal

    try:
        file_seal.verify(path)
        whole = zipfile.is_zipfile(path)
    except file_seal.SealError as err:
        raise CheckpointError(str(err)) from None
    except OSError as err:
        raise CheckpointError(f"{shown(path)} cannot be read ({err.strerror or err})") from None
    if not whole:
        raise CheckpointError(f"{shown(path)} is not a conhex-zero checkpoint (unreadable: not a whole zip archive, "
                              f"as checkpoints are: cut short, or another kind of file)")

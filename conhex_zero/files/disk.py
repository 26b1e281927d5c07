"""Writing files when the disk may be full: one clear error instead of whatever the writer raised.

A full disk surfaces as ``OSError`` errno 28 from Python's own writes, but from ``torch.save`` as a
``RuntimeError`` that never mentions disk space (``inline_container.cc ... unexpected pos``,
``basic_ios::clear``, ``file write failed``). ``writing(path)`` turns any of these, raised while
``path`` is written, into ``DiskFullError``: "no space left on MOUNT (writing PATH)", MOUNT being the
file system's mount point. Other write failures become ``WriteError``, one line naming the file.
Both are ``OSError``s, so code that cleans up after a failed write still sees one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

LOW_SPACE = 1 << 20
"""A write that fails with less free space than this (bytes) left is taken for a full disk."""

_NOT_FULL = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EISDIR, errno.ENOENT,
                       errno.EEXIST, errno.ENAMETOOLONG, errno.ELOOP, errno.EINVAL})
"""Errors that name their own cause: never read as a full disk (``/proc`` has no free space at all)."""
_FULL = (errno.ENOSPC, errno.EDQUOT)


class DiskFullError(OSError):
    """A write failed because the file system is full; the message names its mount point."""

    def __str__(self) -> str:
        return str(self.strerror)


class WriteError(OSError):
    """A write failed for another reason; the message names the file and the reason."""

    def __str__(self) -> str:
        return str(self.strerror)


def mount_point(path: str | Path) -> Path:
    """The mount point of the file system that holds ``path`` (or would, once created)."""
    p = Path(os.path.abspath(path))
    while not p.exists() and p != p.parent:
        p = p.parent
    while not os.path.ismount(p) and p != p.parent:
        p = p.parent
    return p


def free_bytes(path: str | Path) -> int | None:
    """Free bytes on the file system of ``path`` (None when unknown)."""
    try:
        return shutil.disk_usage(mount_point(path)).free
    except OSError:
        return None


def no_space(path: str | Path) -> DiskFullError:
    where = mount_point(path)
    return DiskFullError(errno.ENOSPC, f"no space left on {where} (writing {path}): free some space there, "
                                       f"then try again")


def is_disk_full(err: BaseException, path: str | Path) -> bool:
    """Whether ``err``, raised while writing ``path``, means the disk is full."""
    if isinstance(err, OSError) and err.errno in _FULL:
        return True
    if isinstance(err, OSError) and err.errno in _NOT_FULL:
        return False  # a cause of its own (permission, read-only, not a directory): whatever the free space says
    free = free_bytes(path)
    return free is not None and free < LOW_SPACE


def _reason(err: BaseException) -> str:
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    text = str(err).strip().splitlines()
    return (text[0][:160] if text else type(err).__name__)


@contextlib.contextmanager
def writing(path: str | Path) -> Iterator[None]:
    """Inside the block ``path`` is written: a full disk becomes ``DiskFullError``, another failed
    write ``WriteError`` (for ``RuntimeError`` from torch and ``OSError``; others pass through).
    Judge the free space before deleting any partial file: deleting it frees the space again."""
    try:
        yield
    except (DiskFullError, WriteError):
        raise
    except (OSError, RuntimeError) as err:
        if is_disk_full(err, path):
            raise no_space(path) from None
        if isinstance(err, RuntimeError) and not _looks_like_a_write_error(err):
            raise
        raise WriteError(getattr(err, "errno", None) or errno.EIO, f"cannot write {path}: {_reason(err)}") from None


def _looks_like_a_write_error(err: RuntimeError) -> bool:
    """torch's stream writer's failures (a bug elsewhere stays a bug, with its traceback)."""
    text = str(err)
    return any(s in text for s in ("inline_container", "unexpected pos", "basic_ios", "file write failed",
                                   "PytorchStreamWriter", "write failed"))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` whole or not at all: into a temporary file of its own (a unique name
    beside ``path``), then renamed over it, so a reader or a second writer never sees half a file
    and two writers never interleave (the last rename wins). The file gets the mode of the file it
    replaces, or a new file's usual mode (0666 less the umask: not the temporary file's 0600). A
    path that exists and is not a regular file (``/dev/null``, a pipe) is written directly. Folders
    are made."""
    path = Path(path)
    if path.exists() and not path.is_file():
        with writing(path):
            path.write_bytes(data)
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.is_file() else 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with writing(path):
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.chmod(tmp, mode)
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def write_text_atomic(path: str | Path, text: str) -> Path:
    """``write_bytes_atomic`` of ``text`` in UTF-8."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def new_file(path: str | Path) -> Path:
    """``path``, or ``path`` with ``-2``, ``-3``, ... before its suffix if that name is taken, created
    empty and exclusively (so two runs started in the same second never share a default name)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for n in range(1, 10_000):
        candidate = path if n == 1 else path.with_name(f"{path.stem}-{n}{path.suffix}")
        try:
            os.close(os.open(candidate, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            return candidate
        except FileExistsError:
            continue
    raise WriteError(errno.EEXIST, f"cannot make a new file beside {path}: 10,000 names taken")

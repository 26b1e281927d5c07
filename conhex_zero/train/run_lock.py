"""A run directory is trained by one process (one torchrun job) at a time: ``RUN/train.lock``.

The training process (rank 0 of a torchrun job) takes the lock before it reads or writes anything
of the run, and gives it back when it ends; the lock file then disappears. The file names the
holder (pid, host, start time, command line) so that a refused process can say who holds the run.

The lock itself is the kernel's ``flock`` on the open file, which the kernel releases when the
holder dies however it dies (``kill -9`` included), so a lock is never left behind by a live
process, and two processes can never both hold one. A file left behind by a killed holder is
*stale*: when it names a process of this host that is gone, the next trainer takes it over with a
one-line note. A file that names another host is not taken over (whether that process is alive
cannot be seen from here, and a shared file system may not pass locks between hosts): the message
says to delete the file once that process has ended.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

FILENAME = "train.lock"


class RunInUseError(ValueError):
    """The run directory is held by another process; the message names it."""


@dataclass(frozen=True)
class Holder:
    """Who holds (or held) a run directory, as its lock file says."""

    pid: int
    host: str
    started: float
    command: str = ""

    def describe(self) -> str:
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.started))
        return f"pid {self.pid} on host {self.host} (since {since})"

    def to_json(self) -> str:
        return json.dumps({"pid": self.pid, "host": self.host, "started": self.started, "command": self.command})


def _this_host() -> str:
    return socket.gethostname()


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except (OverflowError, ValueError):
        return False
    return True


def read_holder(path: Path) -> Holder | None:
    """The holder a lock file names (None for an empty or unreadable file)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8")[:10_000])
        return Holder(int(data["pid"]), str(data["host"]), float(data["started"]), str(data.get("command", "")))
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None


def _in_use(run_dir: Path, path: Path, holder: Holder | None) -> RunInUseError:
    who = holder.describe() if holder else "another process"
    return RunInUseError(f"{run_dir} is in use: {who} is training it ({path}); wait for it to end, or stop it "
                         f"first")


class RunLock:
    """The lock of one run directory; ``acquire`` takes it (or raises ``RunInUseError``), ``release``
    gives it back. Also a context manager."""

    def __init__(self, run_dir: str | Path):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / FILENAME
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def check_free(self) -> None:
        """``RunInUseError`` naming the holder when a process holds the run now (a quick look that
        takes nothing: ``acquire`` decides)."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                raise _in_use(self.run_dir, self.path, read_holder(self.path)) from None
            except OSError:
                return
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def acquire(self, note: Callable[[str], None] = print) -> None:
        """Take the lock; ``RunInUseError`` naming the holder when another process has it."""
        if self._fd is not None:
            return
        for _attempt in range(10):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except IsADirectoryError:
                raise RunInUseError(f"{self.path} is a directory, not a lock file: remove it") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise _in_use(self.run_dir, self.path, read_holder(self.path)) from None
            except OSError as err:  # a file system without locks
                os.close(fd)
                raise RunInUseError(f"{self.path}: cannot lock the run directory ({err.strerror})") from None
            try:
                same_file = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same_file = False
            if not same_file:  # the holder removed the file between our open and our lock: again
                os.close(fd)
                continue
            try:
                self._take_over(fd, note)
            except BaseException:
                os.close(fd)
                raise
            self._fd = fd
            return
        raise RunInUseError(f"{self.path}: could not take the lock (other processes keep taking it)")

    def _take_over(self, fd: int, note: Callable[[str], None]) -> None:
        """Holding the flock: check a leftover holder, then write ourselves into the file."""
        left = read_holder(self.path)
        if left is not None and left.pid != os.getpid():
            if left.host != _this_host():
                raise RunInUseError(f"{self.run_dir} was taken by {left.describe()} ({self.path}); that host "
                                    f"may still be training it: delete {self.path} once that process has ended")
            if _alive(left.pid):
                # The flock is ours, so that process does not hold the run: its pid was reused.
                note(f"note: {self.path} named {left.describe()}, which no longer holds it: taken over")
            else:
                note(f"note: {self.path} was left by {left.describe()}, which has ended: taken over")
        me = Holder(os.getpid(), _this_host(), time.time(), " ".join(sys.argv)[:500])
        os.ftruncate(fd, 0)
        os.pwrite(fd, (me.to_json() + "\n").encode("utf-8"), 0)
        os.fsync(fd)

    def release(self) -> None:
        """Give the lock back and remove the file (another process may then take the run)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            self.path.unlink(missing_ok=True)  # while still locked: a waiting process sees the new file
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def __enter__(self) -> "RunLock":
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()

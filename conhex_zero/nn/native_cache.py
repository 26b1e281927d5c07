"""The native packages' cache folder: where packages live, their build locks and the record of a
build that failed (shared by ``nn.native``, its background builds and their child processes).

* ``cache_dir``: ``$CONHEX_ZERO_CACHE``, else ``~/.cache/conhex-zero/native``; a package is
  ``<key>.pt2``, built under ``<key>.lock`` (an exclusive lock: two processes never build one package
  twice; a killed build leaves no package, since it is written to a temporary name and renamed).
* A build that fails leaves ``<key>.failed.json`` (``{"reason", "compiler", "at"}``): later starts
  with the same C++ compiler (``compiler_identity``) go straight to the eager path (issue 58: without
  a compiler every start spent about 25 s of CPU trying again); a new or changed compiler, or
  deleting the file, tries again.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Callable, Iterator

CACHE_ENV = "CONHEX_ZERO_CACHE"
BUILD_ENV = "CONHEX_ZERO_BUILD"
"""``wait``: a command builds a missing package before it starts, as before issue 57; ``background``
(what the CLI's commands set): a child process builds it beside the command (``native_background``)."""


def cache_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "conhex-zero" / "native"



@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (POSIX; elsewhere none: the rename still keeps files whole)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)



def record_failures(key: str, build: Callable[[Path], None], target: Path) -> None:
    """``build(target)``; a failure is remembered (``failure``) before it is raised again."""
    try:
        build(target)
    except Exception as err:
        with contextlib.suppress(OSError):
            (cache_dir() / f"{key}.failed.json").write_text(json.dumps(
                {"reason": _reason(err), "compiler": compiler_identity(), "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}))
        raise


def build_into_cache(key: str, build: Callable[[Path], None]) -> bool:
    """Build the package ``key`` into the cache under its lock (a background build's child); False
    when another process had built it already."""
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{key}.pt2"
    with _locked(folder / f"{key}.lock"):
        if target.exists():
            return False
        record_failures(key, build, target)
        return True


def build_in_progress(key: str) -> bool:
    """Whether a process holds the build lock of ``key`` (POSIX; elsewhere: never)."""
    try:
        import fcntl
    except ImportError:
        return False
    lock = cache_dir() / f"{key}.lock"
    if not lock.exists():
        return False
    with open(lock, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def compiler_identity() -> str:
    """The C++ compiler a build would use (``$CXX``, else g++, c++ or clang++ on the path): its path,
    size and time, so that a new or changed compiler tries a failed build again. No process runs."""
    name = os.environ.get("CXX") or next((c for c in ("g++", "c++", "clang++") if shutil.which(c)), "")
    found = shutil.which(name) if name else None
    if not found:
        return f"no C++ compiler ({name or 'none on the path'})"
    real = os.path.realpath(found)
    with contextlib.suppress(OSError):
        stat = os.stat(real)
        return f"{found} -> {real} {stat.st_size} {stat.st_mtime_ns}"
    return found


def failure(key: str) -> dict | None:
    """The remembered failed build of ``key`` (``{"reason", "compiler", "at"}``) when it failed with the
    compiler there is now; None otherwise."""
    path = cache_dir() / f"{key}.failed.json"
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("compiler") != compiler_identity():
        return None
    return record


def typical_build(what: str) -> str:
    """A package's build time on an idle machine, as measured (docs/speed.md)."""
    return "about 25 s" if "leaf" in what else "about 20 s"



def _reason(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    return text if len(text) <= 160 else text[:157] + "..."

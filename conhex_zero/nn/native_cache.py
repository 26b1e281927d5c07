"""The native packages' cache folder: where packages live, their build locks and the record of a
build that failed (shared by ``nn.native``, its background builds and their child processes).

* ``cache_dir``: ``$CONHEX_ZERO_CACHE``, else ``~/.cache/conhex-zero/native``; a package is
  ``<key>.pt2``, built under ``<key>.lock`` (an exclusive lock: two processes never build one package
  twice; a killed build leaves no package, since it is written to a temporary name and renamed).
* A package is sealed when it is built (issue 58): ``<key>.seal.json`` holds its key (what it was
  built from: the model, the graph, the code, torch and the CPU) and the SHA-256 of its bytes, and
  every load checks both first: a package that does not match its seal (a flipped bit, a partial
  copy, another package under its name) or has none is built again, with one line, never run.
* A build that fails leaves ``<key>.failed.json`` (``{"reason", "compiler", "at"}``): later starts
  with the same C++ compiler (``compiler_identity``) go straight to the eager path (issue 58: without
  a compiler every start spent about 25 s of CPU trying again); a new or changed compiler, or
  deleting the file, tries again.
"""

from __future__ import annotations

import contextlib
import hashlib
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
    """``build(target)``, then its seal; a failure is remembered (``failure``) before it is raised again."""
    try:
        build(target)
    except Exception as err:
        with contextlib.suppress(OSError):
            (cache_dir() / f"{key}.failed.json").write_text(json.dumps(
                {"reason": _reason(err), "compiler": compiler_identity(), "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}))
        raise
    write_seal(key, target)


def seal_path(key: str) -> Path:
    return cache_dir() / f"{key}.seal.json"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_seal(key: str, target: Path) -> None:
    """Seal a package just built: its key and the digest of its bytes, written atomically."""
    seal = seal_path(key)
    partial = seal.with_name(f"{seal.name}.{os.getpid()}.partial")
    partial.write_text(json.dumps({"key": key, "size": target.stat().st_size, "sha256": _sha256(target)}))
    os.replace(partial, seal)


def seal_problem(key: str, target: Path) -> str | None:
    """Why the package ``target`` must not be loaded as ``key`` (no seal, another key, other bytes),
    or None when it matches its seal."""
    try:
        seal = json.loads(seal_path(key).read_text())
    except FileNotFoundError:
        return "has no seal (built by an earlier version, or its build was cut short)"
    except (OSError, ValueError):
        return "has a seal that cannot be read"
    if not isinstance(seal, dict) or seal.get("key") != key:
        return "was sealed for another package"
    try:
        if target.stat().st_size != seal.get("size") or _sha256(target) != seal.get("sha256"):
            return "does not match its seal (damaged, cut short, or replaced by another file)"
    except OSError as err:
        return f"cannot be read ({err.strerror or err})"
    return None


def build_into_cache(key: str, build: Callable[[Path], None]) -> bool:
    """Build the package ``key`` into the cache under its lock (a background build's child); False
    when another process had built it already."""
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{key}.pt2"
    with _locked(folder / f"{key}.lock"):
        if target.exists() and seal_problem(key, target) is None:
            return False
        target.unlink(missing_ok=True)
        record_failures(key, build, target)
        return True


def drop_unsealed(key: str, target: Path, say: Callable[[str], None], what: str, subject: str) -> None:
    """Remove a cached package that does not match its seal (under its lock), saying so in one line."""
    if not target.exists():
        return
    with _locked(cache_dir() / f"{key}.lock"):
        problem = seal_problem(key, target) if target.exists() else None
        if problem is not None:
            say(f"the cached {what} for {subject} {problem}: built again")
            target.unlink(missing_ok=True)


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

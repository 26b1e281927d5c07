"""Native packages built beside a command, never before it (issue 57): a low-priority child process.

A command that wants a package the cache does not hold (``nn.native.cached_package``) no longer
waits for its build (13-25 s on an idle machine, minutes on a busy one): it starts at once on the
eager path and a child process, at the lowest CPU priority (``nice 19``), builds the package into
the cache under the cache's lock (so two commands never build one package twice). The command
polls the ``Pending`` handle at its safe points (a player at each move: ``GameSearch.upgrade``) and
switches to the package once it is there; a command that never polls uses it from its next start.

The child rebuilds what it compiles from a job file (``JOBS`` in the cache folder): the game, the
encoder's options and, for a network, its size, options and weights; it checks that the package's
key is the one its parent asked for, builds, and removes the job. Its output goes to
``<key>.build.log`` beside the package. A build that fails leaves ``<key>.failed.json`` (the reason
and the C++ compiler it failed with): later starts go straight to the eager path with one line,
until the compiler changes or the file is deleted (``nn.native_cache.failure``).

The child is ``python -m conhex_zero.nn.native_worker JOB.pt`` (``native_worker``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import torch

from conhex_zero.nn import native_cache as cache

FAILED = "failed"
"""``Pending.poll``'s answer once the background build has failed."""

_pending: dict[str, "Pending"] = {}  # this process's background builds, by key


def enabled() -> bool:
    """Whether this process builds missing packages in the background: ``$CONHEX_ZERO_BUILD`` is
    ``background`` (the CLI's commands set it, but for train, piece, bench and distill); a library
    caller builds in its own process unless it asks."""
    return os.environ.get(cache.BUILD_ENV, "").strip().lower() == "background"


class Pending:
    """A package that a child process is building into the cache; ``poll`` loads it once it is there."""

    def __init__(self, key: str, target: Path, load: Callable[[Path, str, float | None], object], what: str,
                 subject: str, say: Callable[[str], None], process: subprocess.Popen | None,
                 on_loaded: Callable[[str, object], None] | None = None,
                 on_failed: Callable[[str, str], None] | None = None):
        self.key, self.target, self.load, self.what, self.subject = key, target, load, what, subject
        self.say, self.process = say, process
        self.on_loaded, self.on_failed = on_loaded, on_failed  # the process's registries (``nn.native``)
        self.started = time.perf_counter()
        self.result: object | None = None

    def poll(self) -> object | None:
        """The loaded package once built (the same object on every later call); ``None`` while the
        child is still building; ``FAILED`` (said once) when the build failed."""
        if self.result is not None:
            return self.result
        marker = cache.failure(self.key)
        if self.target.exists() and not cache.build_in_progress(self.key):
            problem = cache.seal_problem(self.key, self.target)
            if problem is not None:
                return self._failed(f"the package built beside the command {problem}")
            try:
                package = self.load(self.target, self.key, None)
            except Exception as err:  # a package that does not load: eager for good
                return self._failed(cache._reason(err))
            self.result = package
            if self.on_loaded is not None:
                self.on_loaded(self.key, package)
            self.say(f"switched to {self.what} for {self.subject} (built beside the command in "
                     f"{time.perf_counter() - self.started:.0f} s)")
            return package
        if marker is not None:
            return self._failed(marker.get("reason", "the build failed"))
        if self.process is not None and self.process.poll() is not None and not self.target.exists():
            return self._failed(f"the build process ended with code {self.process.returncode}; see "
                                f"{cache.cache_dir() / (self.key + '.build.log')}")
        return None

    def _failed(self, reason: str) -> str:
        if self.on_failed is not None:
            self.on_failed(self.key, reason)
        self.result = FAILED
        self.say(f"{self.what} unavailable for {self.subject} ({reason}); staying on the eager path")
        return FAILED


def start(key: str, job: dict, load: Callable[[Path, str, float | None], object], what: str, subject: str,
          say: Callable[[str], None], on_loaded: Callable[[str, object], None] | None = None,
          on_failed: Callable[[str, str], None] | None = None) -> Pending:
    """Start (or join this process's) background build of ``key`` from ``job`` (see ``main``)."""
    if key in _pending:
        return _pending[key]
    folder = cache.cache_dir()
    jobs = folder / "jobs"
    jobs.mkdir(parents=True, exist_ok=True)
    job_file = jobs / f"{key}.{os.getpid()}.job.pt"
    torch.save({**job, "key": key}, job_file)
    log = open(folder / f"{key}.build.log", "ab")
    kwargs: dict = {"stdout": log, "stderr": subprocess.STDOUT, "stdin": subprocess.DEVNULL, "start_new_session": True}
    if hasattr(os, "nice"):
        kwargs["preexec_fn"] = _lowest_priority
    process = subprocess.Popen([sys.executable, "-m", "conhex_zero.nn.native_worker", str(job_file)], **kwargs)
    log.close()
    say(f"{what} for {subject} is not built on this machine yet: a low-priority process builds it beside this "
        f"command ({cache.typical_build(what)} on an idle machine, minutes on a busy one; cached in {folder}); "
        f"the eager path until then")
    pending = Pending(key, folder / f"{key}.pt2", load, what, subject, say, process, on_loaded, on_failed)
    _pending[key] = pending
    return pending


def _lowest_priority() -> None:
    """In the child, before it runs: nice 19, for its own session's scheduling group too. Linux's
    autogroups give each session an equal share whatever its processes' nice (measured: a
    nice 19 build in a new session took a third of a core from the command beside it), so the
    session's group is set to the lowest priority as well where the kernel has autogroups."""
    os.nice(19)
    try:
        with open("/proc/self/autogroup", "w") as handle:
            handle.write("19")
    except OSError:  # no autogroups here (another kernel, or another platform): nice alone rules
        pass

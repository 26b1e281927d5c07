"""Timing and counting helpers for the benchmarks, without adding host synchronisation.

``DeviceTimer`` accumulates the time spent inside ``with timer():`` blocks: CUDA events on a GPU
(recorded around the work, read once at the end), ``perf_counter`` on the CPU. ``count_syncs`` runs
a function under torch's profiler and counts the ops that make the host wait for the device:
``aten::_local_scalar_dense`` (``.item()``, ``bool(t)``, ``float(t)``, ``.tolist()``),
``aten::nonzero`` and ``aten::is_nonzero`` (``benchmarks/count_ops.py`` counts them over a whole command). On a CPU they
cost nothing, but each is a stall on a GPU, so counting them on the CPU shows what a GPU would pay.
torch's profiler (kineto) writes ``USDT: ... profiler_start`` and ``profiler_stop`` lines to the
process's standard error, whatever its log level; ``count_syncs`` drops those lines (and only those).
"""

from __future__ import annotations

import contextlib
import os
import resource
import sys
import tempfile
import time
from typing import Callable, Iterator

import torch

SYNC_OPS = ("aten::_local_scalar_dense", "aten::nonzero", "aten::is_nonzero")


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class DeviceTimer:
    """Time spent inside ``with timer():`` blocks on one device."""

    def __init__(self, device: torch.device):
        self.device = device
        self.calls = 0
        self._events: list[tuple[torch.cuda.Event, torch.cuda.Event]] = []
        self._cpu_seconds = 0.0

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        self.calls += 1
        if self.device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            yield
            end.record()
            self._events.append((start, end))
        else:
            t = time.perf_counter()
            yield
            self._cpu_seconds += time.perf_counter() - t

    def seconds(self) -> float:
        """The total so far (waits for the device once)."""
        synchronize(self.device)
        return self._cpu_seconds + sum(s.elapsed_time(e) for s, e in self._events) / 1000.0

    def reset(self) -> None:
        self.calls, self._events, self._cpu_seconds = 0, [], 0.0


def profiler_active() -> bool:
    """Whether torch's profiler is already recording (then a nested one is not started)."""
    return bool(torch.autograd.profiler._is_profiler_enabled)


PROFILER_NOISE = "USDT:"
"""How the lines kineto writes to standard error at every profiler start and stop begin."""


@contextlib.contextmanager
def without_stderr_lines(prefix: str) -> Iterator[None]:
    """Inside the block, standard error (the file descriptor, so that C++ writes are caught too)
    goes to a temporary file; afterwards its lines are written to standard error again, except
    those that start with ``prefix``. Falls back to doing nothing where descriptor 2 is unusable."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    with tempfile.TemporaryFile() as capture:
        sys.stderr.flush()
        os.dup2(capture.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            kept = [line for line in capture.read().splitlines(keepends=True)
                    if not line.startswith(prefix.encode())]
            if kept:
                os.write(2, b"".join(kept))


def count_syncs(fn: Callable[[], None]) -> int | None:
    """Host-synchronising ops run by ``fn`` (None when a profiler is already active)."""
    if profiler_active():
        return None
    from torch.profiler import ProfilerActivity, profile

    with without_stderr_lines(PROFILER_NOISE):
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            fn()
    return sum(1 for e in prof.events() if e.name in SYNC_OPS)


def peak_memory_mb(device: torch.device) -> float:
    """Peak device memory (CUDA) or the process's peak resident memory (CPU), in MiB."""
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return rss / 2**20 if sys.platform == "darwin" else rss / 2**10


def cpu_model() -> str:
    """The processor's model name (``/proc/cpuinfo``; ``platform.processor()`` elsewhere): eager
    PyTorch's speed differs between processors far more than a compiled program's, so a benchmark
    result names its processor."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or "unknown"

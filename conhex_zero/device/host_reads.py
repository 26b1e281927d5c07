"""Where reading a device value on the host is free, and the hot path may use it to skip work.

A CUDA graph or a compiled kernel cannot contain a host read (``.item()``, ``bool(tensor)``): it
makes the host wait for the device. On the CPU there is nothing to wait for, so there (and only
outside ``torch.compile``) the engine and the search read a flag to skip work that rarely matters:
the swap's position rewrite when no game swaps, descent steps below the deepest tree. Self-play
runs without them (``disabled()``), so that its hot path is free of synchronisation on every device.
The results are the same either way. ``CONHEX_ZERO_HOST_READS=0`` (or ``HOST_READ_DEVICES = ()``)
makes the CPU take the path every other device takes.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import Tensor

HOST_READ_DEVICES: tuple[str, ...] = () if os.environ.get("CONHEX_ZERO_HOST_READS") == "0" else ("cpu",)
"""Device types on which a host read costs nothing. ``CONHEX_ZERO_HOST_READS=0`` in the environment
empties it, so that the CPU takes the GPU's path (to count what a GPU would pay, for example): the
network's sparse products of the graph's blocks, a CPU-only path too, follow it (``encode.Graph``)."""


_local = threading.local()


@contextmanager
def disabled() -> Iterator[None]:
    """Within: no host reads on any device (self-play runs so, to stay free of synchronisation on
    every device, the CPU included)."""
    before = getattr(_local, "off", False)
    _local.off = True
    try:
        yield
    finally:
        _local.off = before


def host_reads_free(device: torch.device) -> bool:
    """True where reading a value of ``device`` on the host costs nothing (CPU, eager, not within
    ``disabled()``)."""
    if torch.compiler.is_compiling() or device.type not in HOST_READ_DEVICES:
        return False
    return not getattr(_local, "off", False)


def may_be_true(mask: Tensor) -> bool:
    """False only when ``mask`` is certainly all False: read on the CPU, assumed True elsewhere."""
    if host_reads_free(mask.device):
        return bool(mask.any())
    return True

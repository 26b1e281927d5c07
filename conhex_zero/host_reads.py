"""Where reading a device value on the host is free, and the hot path may use it to skip work.

A CUDA graph or a compiled kernel cannot contain a host read (``.item()``, ``bool(tensor)``): it
makes the host wait for the device. On the CPU there is nothing to wait for, so there (and only
outside ``torch.compile``) the engine and the search read a flag to skip work that rarely matters:
the swap's position rewrite when no game swaps, descent steps below the deepest tree. The results
are the same either way; the tests that prove the hot path free of synchronisation set
``HOST_READ_DEVICES = ()`` to take the path every other device takes.
"""

from __future__ import annotations

import os

import torch
from torch import Tensor

HOST_READ_DEVICES: tuple[str, ...] = () if os.environ.get("CONHEX_ZERO_HOST_READS") == "0" else ("cpu",)
"""Device types on which a host read costs nothing. ``CONHEX_ZERO_HOST_READS=0`` in the environment
empties it, so that the CPU takes the GPU's path (to count what a GPU would pay, for example)."""


def host_reads_free(device: torch.device) -> bool:
    """True where reading a value of ``device`` on the host costs nothing (CPU, eager)."""
    return device.type in HOST_READ_DEVICES and not torch.compiler.is_compiling()


def may_be_true(mask: Tensor) -> bool:
    """False only when ``mask`` is certainly all False: read on the CPU, assumed True elsewhere."""
    if host_reads_free(mask.device):
        return bool(mask.any())
    return True

"""Where reading a device value on the host is free, and the hot path may use it to skip work.

A CUDA graph or a compiled kernel cannot contain a host read (``.item()``, ``bool(tensor)``): it
makes the host wait for the device. On the CPU there is nothing to wait for, so there (and only
outside ``torch.compile``) the engine and the search read a flag to skip work that rarely matters:
the swap's position rewrite when no game swaps, descent steps below the deepest tree. The results
are the same either way; the tests that prove the hot path free of synchronisation set
``HOST_READ_DEVICES = ()`` to take the path every other device takes.
"""

from __future__ import annotations

import torch
from torch import Tensor

HOST_READ_DEVICES: tuple[str, ...] = ("cpu",)
"""Device types on which a host read costs nothing."""


def host_reads_free(device: torch.device) -> bool:
    """True where reading a value of ``device`` on the host costs nothing (CPU, eager)."""
    return device.type in HOST_READ_DEVICES and not torch.compiler.is_compiling()


def may_be_true(mask: Tensor) -> bool:
    """False only when ``mask`` is certainly all False: read on the CPU, assumed True elsewhere."""
    if host_reads_free(mask.device):
        return bool(mask.any())
    return True

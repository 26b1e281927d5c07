"""Small tensor primitives that stay fast on CPU for the engine's hot path.

On the CPU build we measured (torch 2.13, AVX-512, 2 cores), ``torch.where`` with a data-dependent
mask, bool ``&`` with broadcasting, and comparisons against a scalar or a broadcast column run
branchy scalar loops that cost 10 to 40 times more than the same work as uint8/int8 arithmetic
(``where`` on a [4096, 69] int8 tensor: 1.2 ms; the arithmetic blend: 32 us). These helpers give
the same results as the plain ops on every device (``benchmarks/bench_ops.py`` shows the gap).
"""

from __future__ import annotations

import torch
from torch import Tensor


def select(mask: Tensor, a: Tensor, b: Tensor) -> Tensor:
    """``b`` where ``mask`` else ``a`` (broadcasting), like ``torch.where(mask, b, a)``.

    For integer tensors the difference ``b - a`` must fit the dtype (true for the engine's small
    values: owners, counts, cell ids in int16). Under a compiler (the native leaf package,
    ``agents.leaf_step``) it is the plain ``torch.where``, which the compiler fuses; Inductor's
    CPU code generator fails on the bool views.
    """
    if torch.compiler.is_compiling():
        return torch.where(mask, b, a)
    if a.dtype == torch.bool:
        a8, b8 = a.view(torch.uint8), b.view(torch.uint8)
        return torch.addcmul(a8, b8 - a8, mask.view(torch.uint8)).view(torch.bool)
    return torch.addcmul(a, b - a, mask.to(a.dtype))


def both(a: Tensor, b: Tensor) -> Tensor:
    """Logical and of two bool tensors with broadcasting (``a & b``), as a uint8 multiply (the plain
    ``&`` under a compiler, as ``select``)."""
    if torch.compiler.is_compiling():
        return a & b
    return (a.view(torch.uint8) * b.view(torch.uint8)).view(torch.bool)


def or_bytes(x: Tensor) -> Tensor:
    """Bitwise OR along dim 1 of an int8 ``[B, W]`` tensor, W a multiple of 8 times a power of 2.

    Folds the row as int64 words, then the 8 bytes of the last word: a handful of elementwise ops
    instead of a reduction kernel. Returns ``[B]`` int64 holding the OR of the bytes (for bytes
    without the sign bit, as the engine's bit flags are).
    """
    w = x.view(torch.int64)  # [B, W / 8]
    while w.shape[1] > 1:
        half = w.shape[1] // 2
        w = w[:, :half] | w[:, half:]
    w = w[:, 0]
    w = w | (w >> 32)
    w = w | (w >> 16)
    w = w | (w >> 8)
    return w & 0xFF


def padded_width(width: int) -> int:
    """The smallest 8 * 2**k >= width (the shape ``or_bytes`` folds)."""
    out = 8
    while out < width:
        out *= 2
    return out

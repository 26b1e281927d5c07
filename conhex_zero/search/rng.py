"""Counter-based random numbers per game, so a game's randomness does not depend on its batch.

Every game carries a 32-bit key (held in an int64 tensor); a draw hashes (key, counter, index).
The same key and counter give the same numbers whether the game is searched alone or among
thousands, on CPU or CUDA: that is what makes "batch of 1 equals batch of B" testable.
Arithmetic stays in 32-bit lanes inside int64 (products below 2**63), so nothing relies on
integer overflow. The hash is Chris Wellons' "lowbias32".
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

M32 = 0xFFFFFFFF


def _mul32(x: Tensor, a: int) -> Tensor:
    """(x * a) mod 2**32 for 0 <= x < 2**32, in two 16-bit halves (no int64 overflow)."""
    lo, hi = a & 0xFFFF, a >> 16
    return (x * lo + (((x * hi) & 0xFFFF) << 16)) & M32


def hash32(x: Tensor) -> Tensor:
    """A 32-bit integer hash with good avalanche, elementwise on int64 tensors."""
    x = x & M32
    x = x ^ (x >> 16)
    x = _mul32(x, 0x7FEB352D)
    x = x ^ (x >> 15)
    x = _mul32(x, 0x846CA68B)
    return x ^ (x >> 16)


def make_keys(seeds: Tensor | int, n: int | None = None, device: torch.device | str = "cpu") -> Tensor:
    """``[B]`` keys from per-game seeds (or ``n`` keys from one seed: seed, seed + 1, ...)."""
    if isinstance(seeds, int):
        seeds = torch.arange(seeds, seeds + (n or 1), device=device)
    return hash32(seeds.to(torch.long) + 0x5BD1E995)


def _hash32_int(x: int) -> int:
    """``hash32`` of one Python integer (the same function, no tensor)."""
    x &= M32
    x ^= x >> 16
    x = (x * 0x7FEB352D) & M32
    x ^= x >> 15
    x = (x * 0x846CA68B) & M32
    return x ^ (x >> 16)


def fold(keys: Tensor, tag: int | Tensor) -> Tensor:
    """New keys derived from ``keys`` and a tag (an int or a ``[B]`` tensor). An int tag is hashed
    on the host, so folding never copies a number to the device."""
    if isinstance(tag, int):
        return hash32(keys ^ _hash32_int((tag * 0x9E3779B9 + 1) & ((1 << 63) - 1)))
    return hash32(keys ^ hash32(tag.to(torch.long) * 0x9E3779B9 + 1))


def host_uniform(seed: int, counter: int) -> float:
    """A uniform number in [0, 1) from (seed, counter), computed on the host (for choices that
    apply to a whole batch, such as a self-play move's search budget)."""
    x = _hash32_int(_hash32_int(seed & M32) ^ _hash32_int((counter * 0x9E3779B9 + 7) & M32))
    return x / float(1 << 32)


def bits(keys: Tensor, counter: int, n: int) -> Tensor:
    """``[B, n]`` 32-bit random integers for draw number ``counter``."""
    idx = torch.arange(n, device=keys.device, dtype=torch.long)
    salt = hash32((counter & M32) * 0x10001 + idx * 0x27D4EB2F)  # [n]
    return hash32(hash32(keys[:, None] ^ salt[None, :]) + 0x632BE5AB)


def uniform(keys: Tensor, counter: int, n: int) -> Tensor:
    """``[B, n]`` float32 uniforms in the open interval (0, 1)."""
    return ((bits(keys, counter, n) >> 8).to(torch.float32) + 0.5) * (1.0 / (1 << 24))


def normal(keys: Tensor, counter: int, n: int) -> Tensor:
    """``[B, n]`` standard normals (Box-Muller)."""
    u1 = uniform(fold(keys, 0x4E31), counter, n)
    u2 = uniform(fold(keys, 0x4E32), counter, n)
    return torch.sqrt(-2.0 * torch.log(u1)) * torch.cos(2.0 * math.pi * u2)


def gumbel(keys: Tensor, counter: int, n: int) -> Tensor:
    """``[B, n]`` standard Gumbel variables."""
    return -torch.log(-torch.log(uniform(keys, counter, n)))


def gamma(keys: Tensor, counter: int, n: int, alpha: float, tries: int = 8) -> Tensor:
    """``[B, n]`` Gamma(alpha, 1) variables (Marsaglia-Tsang with a fixed number of tries).

    For alpha < 1 it draws Gamma(alpha + 1) and scales by U**(1/alpha). Each try is accepted with
    probability above 0.95, so ``tries`` rejections in a row (about 1e-10) fall back to the mode.
    """
    boost = alpha < 1.0
    d = (alpha + 1.0 if boost else alpha) - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    out = torch.full((keys.shape[0], n), d, device=keys.device)
    done = torch.zeros_like(out, dtype=torch.bool)
    k_normal, k_accept, k_boost = fold(keys, 0x6A01), fold(keys, 0x6A02), fold(keys, 0x6A03)
    for t in range(tries):
        x = normal(k_normal, counter * tries + t, n)
        v = (1.0 + c * x) ** 3
        u = uniform(k_accept, counter * tries + t, n)
        ok = (v > 0) & (torch.log(u) < 0.5 * x * x + d - d * v + d * torch.log(v.clamp(min=1e-30)))
        take = ok & ~done
        out = torch.where(take, d * v, out)
        done = done | ok
    if boost:
        out = out * uniform(k_boost, counter, n) ** (1.0 / alpha)
    return out


def dirichlet(keys: Tensor, counter: int, mask: Tensor, alpha: float) -> Tensor:
    """``[B, n]`` Dirichlet(alpha) over the True entries of ``mask`` (zeros elsewhere)."""
    g = gamma(keys, counter, mask.shape[1], alpha) * mask
    return g / g.sum(dim=1, keepdim=True).clamp(min=1e-30)

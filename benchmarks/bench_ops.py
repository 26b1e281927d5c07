"""Why the engine avoids some torch ops on CPU: the same result by different ops, timed.

    python benchmarks/bench_ops.py [--threads N]

Prints microseconds per call on int8/bool tensors of the engine's shapes (batch 4096 x 69 holes),
on one torch CPU thread unless --threads says more. Writes nothing.
"""

from __future__ import annotations

import argparse
import os
import time

import torch

from conhex_zero.bench.output import add_threads_option, check_threads
from conhex_zero.env.ops import both, or_bytes, select


def timed(fn, n: int = 300) -> float:
    for _ in range(10):
        fn()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_threads_option(ap)
    args = ap.parse_args()
    check_threads(ap, args.threads)
    torch.set_num_threads(args.threads or os.cpu_count() or 1)
    B, H = 4096, 69
    g = torch.Generator().manual_seed(0)
    a = torch.randint(-1, 2, (B, H), dtype=torch.int8, generator=g)
    b = torch.randint(-1, 2, (B, H), dtype=torch.int8, generator=g)
    mask = torch.rand(B, H, generator=g) > 0.5
    col = torch.rand(B, 1, generator=g) > 0.5
    p8 = torch.randint(0, 2, (B, 1), dtype=torch.int8, generator=g)
    bits = torch.randint(0, 4, (B, 32), dtype=torch.int8, generator=g)
    rows = [
        ("torch.where(mask, b, a)", lambda: torch.where(mask, b, a)),
        ("select(mask, a, b)  [arithmetic blend]", lambda: select(mask, a, b)),
        ("mask & col  [bool, broadcast]", lambda: mask & col),
        ("both(mask, col)  [uint8 multiply]", lambda: both(mask, col)),
        ("a == p8  [broadcast column]", lambda: a == p8),
        ("a == p8.expand(B, H).contiguous()", lambda: a == p8.expand(B, H).contiguous()),
        ("a < 0  [scalar]", lambda: a < 0),
        ("a < zeros(1, H)  [broadcast row]", lambda: a < torch.zeros(1, H, dtype=torch.int8)),
        ("bits.amax(1)  [reduction]", lambda: bits.amax(1)),
        ("or_bytes(bits)  [int64 folds]", lambda: or_bytes(bits)),
    ]
    for name, fn in rows:
        print(f"{name:<42} {timed(fn):8.1f} us")


if __name__ == "__main__":
    main()

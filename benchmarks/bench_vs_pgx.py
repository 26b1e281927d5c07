"""Our Hex engine against pgx's jitted Hex, like for like, in one run on one machine.

    pip install -e ".[bench]" && python benchmarks/bench_vs_pgx.py

The same work on both sides: Hex 11x11 with the swap action (pgx's Hex always has it), a batch of
1024 uniformly random games, every step advancing all of them and producing the new positions'
legal masks (pgx's step maintains its mask; ours calls ``legal_mask``), finished games replaced at
once, only steps of running games counted, one CPU thread each unless ``--threads N`` (torch:
``set_num_threads``; JAX: XLA's thread pool pinned to as many threads, in a subprocess so that the
flag is set before JAX starts).
Runs alternate between the two, and each figure is the median of ``--repeats``.

What differs: how the uniformly random move is drawn. pgx's player draws a categorical over the legal
mask at every step; ours (``permutation+legal``) reads the next hole of a random permutation drawn
per game, which gives the same distribution over games (each move is uniform among the empty holes,
the swap is taken with probability 1/121) at the cost of a few ops. ``sampled`` is also reported:
ours with a fresh draw among the legal actions at every step (one uniform per game picks the k-th
legal action), the nearest to pgx's player. And pgx compiles its whole step with XLA, ours is eager
PyTorch. Writes ``runs/bench/vs_pgx_cpu-TIME.json``; the published
``benchmarks/results/vs_pgx_cpu.json`` only with ``--publish`` (or ``--out FILE``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys

import torch

from conhex_zero.bench.env_bench import bench_env
from conhex_zero.bench.output import add_output_arguments, add_threads_option, check_threads, result_path, write_results
from conhex_zero.bench.pgx_bench import pgx_available, xla_flags
from conhex_zero.bench.timing import cpu_model
from conhex_zero.env.allocator import keep_freed_memory

PGX_RUN = ("import json, sys; from conhex_zero.bench.pgx_bench import bench_pgx_hex; "
           "print(json.dumps(bench_pgx_hex(int(sys.argv[1]), float(sys.argv[2]))))")


def pgx_once(batch: int, seconds: float, threads: int = 1) -> dict:
    env = {**os.environ, "XLA_FLAGS": xla_flags(threads), "JAX_PLATFORMS": "cpu"}
    out = subprocess.run([sys.executable, "-c", PGX_RUN, str(batch), str(seconds)], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--repeats", type=int, default=5)
    add_threads_option(ap)
    add_output_arguments(ap, "vs_pgx_cpu")
    args = ap.parse_args()
    check_threads(ap, args.threads)
    if not pgx_available():
        print("pgx is not installed: pip install -e '.[bench]'")
        return 2
    keep_freed_memory()
    ours, sampled, theirs = [], [], []
    for k in range(args.repeats):
        ours.append(bench_env("hex-11:swap", args.batch, seconds=args.seconds, threads=args.threads, seed=k,
                              player="permutation+legal"))
        sampled.append(bench_env("hex-11:swap", args.batch, seconds=args.seconds, threads=args.threads, seed=k,
                                 player="sampled"))
        theirs.append(pgx_once(args.batch, args.seconds, args.threads))
        print(f"run {k + 1}: ours {ours[-1]['steps_per_s']:,.0f} (sampled {sampled[-1]['steps_per_s']:,.0f})  "
              f"pgx {theirs[-1]['steps_per_s']:,.0f} steps/s", flush=True)
    a = statistics.median(r["steps_per_s"] for r in ours)
    s = statistics.median(r["steps_per_s"] for r in sampled)
    b = statistics.median(r["steps_per_s"] for r in theirs)
    print(f"median: ours {a:,.0f} steps/s ({a / b:.2f}x pgx), ours with a fresh draw per step {s:,.0f} "
          f"({s / b:.2f}x), pgx {b:,.0f} steps/s")
    result = {"ours_steps_per_s": a, "ours_sampled_steps_per_s": s, "pgx_steps_per_s": b, "ratio": a / b,
              "ratio_sampled": s / b, "batch": args.batch, "threads": ours[0]["threads"],
              "ours_runs": [round(r["steps_per_s"]) for r in ours],
              "ours_sampled_runs": [round(r["steps_per_s"]) for r in sampled],
              "pgx_runs": [round(r["steps_per_s"]) for r in theirs],
              "torch": torch.__version__, "jax": theirs[0]["jax"], "pgx": theirs[0]["pgx"],
              "machine": f"{platform.machine()}, {os.cpu_count()} cores", "cpu": cpu_model(),
              "load_average": [round(x, 2) for x in os.getloadavg()], "python": platform.python_version()}
    write_results(result_path(args, "vs_pgx_cpu"), result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

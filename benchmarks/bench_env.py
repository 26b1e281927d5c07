"""Rules-engine throughput: ConHex and Hex on CPU (one torch thread unless --threads says more),
pgx's Hex as reference.

    python benchmarks/bench_env.py                        # CPU matrix, pgx if installed (pip install -e .[bench])
    python benchmarks/bench_env.py --threads 1 2          # the matrix at 1 and at 2 threads
    python benchmarks/bench_env.py --threads 1 2 --publish  # ... and update benchmarks/results/env_cpu.json
    python benchmarks/bench_env.py --device cuda          # large batches on a GPU

Every figure is the median of --repeats runs of --seconds each; only steps of games that were still
running count (finished games are replaced at once). Prints a table and writes JSON results to
runs/bench/env_<device>-TIME.json; the published benchmarks/results/env_<device>.json only with
--publish (or --out FILE).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import torch

from conhex_zero.bench.env_bench import bench_env
from conhex_zero.bench.output import add_output_arguments, add_threads_option, check_threads, result_path, write_results
from conhex_zero.bench.timing import cpu_model
from conhex_zero.bench.pgx_bench import bench_pgx_hex, pgx_available
from conhex_zero.env.allocator import keep_freed_memory

CPU_CASES = [("conhex", 4096), ("hex-11", 1024), ("hex-11:swap", 1024), ("conhex", 256), ("conhex", 16384)]
CUDA_CASES = [("conhex", 4096), ("conhex", 65536), ("conhex", 262144), ("conhex", 1048576),
              ("hex-11", 65536), ("hex-11", 262144)]


def median_run(fn, repeats: int) -> dict:
    runs = [fn() for _ in range(repeats)]
    best = sorted(runs, key=lambda r: r["steps_per_s"])[len(runs) // 2]
    return {**best, "runs_steps_per_s": [round(r["steps_per_s"]) for r in runs]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--repeats", type=int, default=3)
    add_threads_option(ap, many=True)
    ap.add_argument("--no-pgx", action="store_true", help="skip the pgx reference")
    add_output_arguments(ap, "env_<device>")
    args = ap.parse_args()
    check_threads(ap, args.threads)
    tuned = keep_freed_memory()
    results = []
    cuda = args.device.startswith("cuda")
    cases = CUDA_CASES if cuda else CPU_CASES
    threads = [None] if cuda else args.threads
    for game, batch in cases:
        for t in threads:
            r = median_run(lambda: bench_env(game, batch, device=args.device, seconds=args.seconds,
                                             threads=t), args.repeats)
            results.append(r)
            print(f"{r['game']:<14} batch {batch:>8}  threads {r['threads']}  "
                  f"{r['steps_per_s']:>14,.0f} steps/s   runs {r['runs_steps_per_s']}", flush=True)
    pgx = None
    if not cuda and not args.no_pgx:
        if pgx_available():
            pgx = median_run(lambda: bench_pgx_hex(1024, seconds=args.seconds), args.repeats)
            print(f"{pgx['game']}  batch 1024  {pgx['steps_per_s']:>14,.0f} steps/s   "
                  f"runs {pgx['runs_steps_per_s']}")
        else:
            print("pgx is not installed (pip install -e .[bench]): no pgx reference this run")
    summary = {}
    if not cuda:
        conhex = max(r["steps_per_s"] for r in results if r["game"] == "conhex" and r["batch"] == 4096)
        hex11 = max(r["steps_per_s"] for r in results if r["game"] == "hex-11" and r["batch"] == 1024)
        # pgx's Hex always has the swap rule: the like-for-like figure is ours with swap on.
        hex11_swap = max(r["steps_per_s"] for r in results if r["game"] == "hex-11:swap" and r["batch"] == 1024)
        summary["conhex_4096_steps_per_s"] = round(conhex)
        summary["conhex_target_1M_met"] = conhex >= 1_000_000
        summary["hex11_1024_steps_per_s"] = round(hex11)
        summary["hex11_swap_1024_steps_per_s"] = round(hex11_swap)
        if pgx:
            summary["pgx_hex11_1024_steps_per_s"] = round(pgx["steps_per_s"])
            summary["hex11_vs_pgx"] = round(hex11 / pgx["steps_per_s"], 2)
            summary["hex11_swap_vs_pgx"] = round(hex11_swap / pgx["steps_per_s"], 2)
            summary["pgx_target_3x_met"] = hex11_swap >= 3 * pgx["steps_per_s"]
        for r in results:
            if r["game"] == "conhex" and r["batch"] == 4096:
                summary[f"conhex_4096_threads_{r['threads']}"] = round(r["steps_per_s"])
    else:
        summary["conhex_best_steps_per_s"] = round(max(r["steps_per_s"] for r in results if r["game"] == "conhex"))
        summary["conhex_target_100M_met"] = summary["conhex_best_steps_per_s"] >= 100_000_000
    print(json.dumps(summary, indent=2))
    out = result_path(args, f"env_{'cuda' if cuda else 'cpu'}")
    machine = {"platform": platform.platform(), "python": sys.version.split()[0], "torch": torch.__version__,
               "cpus": os.cpu_count(), "cpu": cpu_model(), "threads": args.threads, "load_average": [round(x, 2) for x in os.getloadavg()],
               "allocator_tuned": tuned,
               "gpu": torch.cuda.get_device_name(0) if cuda and torch.cuda.is_available() else None}
    write_results(out, {"date": time.strftime("%Y-%m-%d %H:%M"), "machine": machine,
                        "summary": summary, "results": results, "pgx": pgx})
    return 0


if __name__ == "__main__":
    sys.exit(main())

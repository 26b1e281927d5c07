"""Network and batched-search throughput (issue figures: ConHex, l8h128, batch 256 on CPU,
batch 4096 on GPU), plus a small network to show the search's own overhead.

    python benchmarks/bench_search.py                     # CPU, one torch thread
    python benchmarks/bench_search.py --threads 2         # CPU, two threads
    python benchmarks/bench_search.py --publish           # ... and update benchmarks/results/search_cpu.json
    python benchmarks/bench_search.py --device cuda       # GPU

Prints a table and writes runs/bench/search_<device>-TIME.json; the published
benchmarks/results/search_<device>.json only with --publish (or --out FILE).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import torch

from conhex_zero.bench.output import add_output_arguments, add_threads_option, check_threads, result_path, write_results
from conhex_zero.bench.search_bench import bench_network, bench_search
from conhex_zero.bench.timing import cpu_model
from conhex_zero.env.allocator import keep_freed_memory


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--sims", type=int, default=64)
    ap.add_argument("--game", default="conhex", help="game spec (default: conhex)")
    ap.add_argument("--models", nargs="+", default=["l8h128", "l4h64"], metavar="MODEL",
                    help="network sizes (default: l8h128 l4h64)")
    ap.add_argument("--batch", type=int, default=None, help="positions at once (default: 256 on CPU, 4096 on GPU)")
    add_threads_option(ap)
    add_output_arguments(ap, "search_<device>")
    args = ap.parse_args()
    check_threads(ap, args.threads)
    threads = None if args.device.startswith("cuda") else args.threads
    keep_freed_memory()
    cuda = args.device.startswith("cuda")
    batch = args.batch or (4096 if cuda else 256)
    rows = []
    for model in args.models:
        net = bench_network(args.game, model, batch, args.device, args.seconds, threads)
        print(f"network {model:<7} batch {batch}: {net['evals_per_s']:>12,.0f} evaluations/s", flush=True)
        search = bench_search(args.game, model, batch, args.sims, args.device, "gumbel", args.seconds, threads)
        print(f"search  {model:<7} batch {batch}, {args.sims} sims: {search['sims_per_s']:>12,.0f} simulations/s, "
              f"{search['positions_per_s']:,.1f} positions/s, network {100 * search['network_fraction']:.0f}% "
              f"of the time", flush=True)
        rows.append({"network": net, "search": search})
    out = result_path(args, f"search_{'cuda' if cuda else 'cpu'}")
    machine = {"platform": platform.platform(), "python": sys.version.split()[0], "torch": torch.__version__,
               "cpus": os.cpu_count(), "cpu": cpu_model(), "threads": rows[0]["search"]["threads"],
               "load_average": [round(x, 2) for x in os.getloadavg()],
               "gpu": torch.cuda.get_device_name(0) if cuda and torch.cuda.is_available() else None}
    write_results(out, {"date": time.strftime("%Y-%m-%d %H:%M"), "machine": machine, "results": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())

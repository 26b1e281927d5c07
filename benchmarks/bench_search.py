"""Network and batched-search throughput (issue figures: ConHex, l8h128, batch 256 on CPU,
batch 4096 on GPU), plus a small network to show the search's own overhead.

    python benchmarks/bench_search.py                 # CPU
    python benchmarks/bench_search.py --device cuda   # GPU

Prints a table and writes benchmarks/results/search_<device>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import torch

from conhex_zero.bench.timing import cpu_model
from conhex_zero.bench.search_bench import bench_network, bench_search
from conhex_zero.env.allocator import keep_freed_memory


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--sims", type=int, default=64)
    args = ap.parse_args()
    keep_freed_memory()
    cuda = args.device.startswith("cuda")
    batch = 4096 if cuda else 256
    rows = []
    for model in ("l8h128", "l4h64"):
        net = bench_network("conhex", model, batch, args.device, args.seconds)
        print(f"network {model:<7} batch {batch}: {net['evals_per_s']:>12,.0f} evaluations/s", flush=True)
        search = bench_search("conhex", model, batch, args.sims, args.device, "gumbel", args.seconds)
        print(f"search  {model:<7} batch {batch}, {args.sims} sims: {search['sims_per_s']:>12,.0f} simulations/s, "
              f"{search['positions_per_s']:,.1f} positions/s, network {100 * search['network_fraction']:.0f}% "
              f"of the time", flush=True)
        rows.append({"network": net, "search": search})
    out = Path(__file__).parent / "results" / f"search_{'cuda' if cuda else 'cpu'}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    machine = {"platform": platform.platform(), "python": sys.version.split()[0], "torch": torch.__version__,
               "cpus": os.cpu_count(), "cpu": cpu_model(), "threads": torch.get_num_threads(),
               "load_average": [round(x, 2) for x in os.getloadavg()],
               "gpu": torch.cuda.get_device_name(0) if cuda and torch.cuda.is_available() else None}
    out.write_text(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M"), "machine": machine, "results": rows},
                              indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

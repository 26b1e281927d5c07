"""Scaling of data-parallel training under torchrun: self-play positions per second and training
samples per second for 1 and K processes, measured by the training loop itself.

    python benchmarks/bench_distributed.py                          # CPU: 1 process (1 and all threads), 2 processes
    python benchmarks/bench_distributed.py --publish                # ... and update benchmarks/results/distributed_cpu.json
    python benchmarks/bench_distributed.py --device cuda --procs 1,2,4,8   # GPUs of one host

Each row is a real run (``torchrun --standalone --nproc-per-node K train.py``) of configs/hex5.yaml
without evaluation; the figures are the medians, over the iterations that trained, of the loop's
own metrics, which are totals over the ranks: self-play positions (moves searched) per second of
the slowest rank's self-play phase, and training samples per second summed over the ranks.
With ``--repeats R`` the rows are measured R times, interleaved, and each row keeps its best run
(on a shared machine the other tenants only ever slow a run down). Every process of a row runs
``--threads`` torch threads (default 1; on CPU one more row runs a single process on every core,
for comparison). Speed-up = throughput / that of the first row (one process, one GPU);
efficiency = speed-up / the cores (CPU: processes x threads) or GPUs used. Prints a table and
writes runs/bench/distributed_<device>-TIME.json; the published
benchmarks/results/distributed_<device>.json only with --publish (or --out FILE).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from conhex_zero.bench.output import add_output_arguments, add_threads_option, check_threads, result_path, write_results
from conhex_zero.bench.timing import cpu_model

ROOT = Path(__file__).resolve().parent.parent


def measure(procs: int, threads: int, device: str, config: str, iterations: int, extra: list[str],
            timeout: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        env = dict(os.environ)
        if threads:
            env["OMP_NUM_THREADS"] = str(threads)
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={procs}",
               str(ROOT / "train.py"), "--config", str(ROOT / config), "--run-dir", str(run), "--quiet",
               f"--device={device}", f"iterations={iterations}", f"threads={threads}", "max_minutes=0",
               "eval.every=100000", "eval.games=0", "eval.previous_games=0", *extra]
        load = os.getloadavg()[0]  # other tenants of a shared machine show here
        start = time.perf_counter()
        out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
        wall = time.perf_counter() - start
        if out.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{out.stderr[-4000:]}")
        lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    trained = [x for x in lines if "train/samples_per_s" in x][1:] or lines[1:]  # the first one warms up
    return {
        "processes": procs, "threads_per_process": threads or torch.get_num_threads(),
        "selfplay_positions_per_s": statistics.median(x["selfplay/positions_per_s"] for x in trained),
        "train_samples_per_s": statistics.median(x.get("train/samples_per_s", 0.0) for x in trained),
        "iterations_measured": len(trained), "wall_s": round(wall, 1), "load_average_before": round(load, 2),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu", help="cpu or cuda (each rank takes cuda:LOCAL_RANK)")
    ap.add_argument("--procs", default="1,2", help="process counts, e.g. 1,2,4,8")
    ap.add_argument("--config", default="configs/hex5.yaml")
    ap.add_argument("--iterations", type=int, default=8)
    ap.add_argument("--timeout", type=float, default=1800, help="seconds allowed per row")
    ap.add_argument("--repeats", type=int, default=1, help="interleaved rounds; each row keeps its best")
    add_threads_option(ap)
    add_output_arguments(ap, "distributed_<device>")
    ap.add_argument("overrides", nargs="*", metavar="key=value", help="more config overrides")
    args = ap.parse_args()
    check_threads(ap, args.threads)
    cuda = args.device.startswith("cuda")
    procs = [int(p) for p in args.procs.split(",")]
    cores = os.cpu_count() or 1
    # Every process gets --threads threads (default one, as torchrun does), plus, on CPU, one
    # process using every core for comparison. GPU: one process per GPU.
    settings = [(k, args.threads) for k in procs]
    if not cuda and cores > 1 and (1, cores) not in settings:
        settings.insert(1, (1, cores))
    runs: dict[tuple[int, int], list[dict]] = {s: [] for s in settings}
    for round_ in range(args.repeats):
        for k, threads in settings:
            r = measure(k, threads, args.device, args.config, args.iterations, args.overrides, args.timeout)
            runs[(k, threads)].append(r)
            print(f"round {round_ + 1}: {k} process(es) x {r['threads_per_process']} thread(s): "
                  f"{r['selfplay_positions_per_s']:,.0f} self-play positions/s, "
                  f"{r['train_samples_per_s']:,.0f} training samples/s", flush=True)
    rows = []
    print(f"{'processes':>9} {'threads':>7} {'self-play pos/s':>16} {'speed-up':>8} {'eff.':>5} "
          f"{'train samples/s':>16} {'speed-up':>8} {'eff.':>5}", flush=True)
    base = None
    for k, threads in settings:
        done = runs[(k, threads)]
        r = {**done[0], "selfplay_positions_per_s": max(x["selfplay_positions_per_s"] for x in done),
             "train_samples_per_s": max(x["train_samples_per_s"] for x in done), "runs": done}
        base = base or r
        used = k if cuda else k * r["threads_per_process"]
        for key, name in (("selfplay_positions_per_s", "selfplay"), ("train_samples_per_s", "train")):
            r[f"{name}_speedup"] = r[key] / max(base[key], 1e-9)
            r[f"{name}_efficiency"] = r[f"{name}_speedup"] / used
        rows.append(r)
        print(f"{k:>9} {r['threads_per_process']:>7} {r['selfplay_positions_per_s']:>16,.0f} "
              f"{r['selfplay_speedup']:>8.2f} {r['selfplay_efficiency']:>5.2f} {r['train_samples_per_s']:>16,.0f} "
              f"{r['train_speedup']:>8.2f} {r['train_efficiency']:>5.2f}", flush=True)
    out = result_path(args, f"distributed_{'cuda' if cuda else 'cpu'}")
    machine = {"platform": platform.platform(), "python": sys.version.split()[0], "torch": torch.__version__,
               "cpus": cores, "cpu": cpu_model(), "load_average": [round(x, 2) for x in os.getloadavg()],
               "gpu": torch.cuda.get_device_name(0) if cuda and torch.cuda.is_available() else None}
    write_results(out, {"date": time.strftime("%Y-%m-%d %H:%M"), "machine": machine,
                        "config": args.config, "iterations": args.iterations, "overrides": args.overrides,
                        "repeats": args.repeats, "threads": args.threads, "results": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())

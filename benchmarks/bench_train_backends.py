"""CPU training with self-play eager against native (``selfplay.backend``), whole training runs,
interleaved.

    python benchmarks/bench_train_backends.py                 # conhex-cpu.yaml from v4, 2 rounds
    python benchmarks/bench_train_backends.py --config configs/hex7.yaml --init checkpoints/hex7-l4h64.pt \\
        --out benchmarks/results/train_backends_hex7.json

Each round runs ``conhex-zero train --config C --init CKPT --stop-after N selfplay.backend=B
eval.every=1000`` once each way (a new run directory each time, no evaluation), one after the
other, so that a change in the machine's load hits both alike. From each run's ``metrics.jsonl``
it takes iterations 2..N (the first fills the replay and, for the native way, may include loading
the packages): the self-play positions a second and the seconds of self-play and learning. The
native packages are built before the first round (a short run, not timed), so no round pays for a
build. Writes runs/bench/train_backends.json (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
WAYS = ("eager", "aoti")


def train_run(config: str, init: str, iterations: int, backend: str, folder: Path) -> dict:
    """One training run; its figures over iterations 2..N."""
    shutil.rmtree(folder, ignore_errors=True)
    command = [sys.executable, "-m", "conhex_zero", "train", "--config", config, "--init", init, "--run-dir",
               str(folder), "--stop-after", str(iterations), "--quiet", f"selfplay.backend={backend}",
               "eval.every=1000"]
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    rows = [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()]
    rows = [r for r in rows if "iteration" in r][1:]
    selfplay = sum(r["time/selfplay_s"] for r in rows)
    learning = sum(r["time/train_s"] for r in rows)
    positions = sum(r["selfplay/positions_per_s"] * r["time/selfplay_s"] for r in rows)
    return {"backend": backend, "iterations": len(rows), "selfplay_s": round(selfplay, 2),
            "learning_s": round(learning, 2), "selfplay_positions_per_s": round(positions / selfplay, 1),
            "iteration_s": round((selfplay + learning) / len(rows), 2), "wall_s": round(wall, 1)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default="configs/conhex-cpu.yaml", help="training config (default: %(default)s)")
    p.add_argument("--init", default="checkpoints/conhex-l4h64-v4.pt", help="initial weights (default: %(default)s)")
    p.add_argument("--iterations", type=int, default=5, help="iterations a run; the first is left out (default: 5)")
    p.add_argument("--rounds", type=int, default=2, help="interleaved rounds (default: 2)")
    p.add_argument("--out", default="runs/bench/train_backends.json", metavar="FILE")
    args = p.parse_args(argv)
    if args.iterations < 2 or args.rounds < 1:
        p.error("--iterations at least 2, --rounds at least 1")
    scratch = Path(tempfile.mkdtemp(prefix="bench-train-"))
    try:
        train_run(args.config, args.init, 2, "aoti", scratch / "build")  # builds the packages, not timed
        runs: list[dict] = []
        for k in range(args.rounds):
            for way in WAYS:
                run = train_run(args.config, args.init, args.iterations, way, scratch / f"{way}-{k}")
                runs.append({"round": k + 1, **run})
                print(f"round {k + 1} {way:5}: {run['selfplay_positions_per_s']:7.1f} self-play positions/s, "
                      f"{run['iteration_s']:6.2f} s an iteration (self-play {run['selfplay_s']:.1f} s, learning "
                      f"{run['learning_s']:.1f} s over {run['iterations']})", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    best = {way: min((r for r in runs if r["backend"] == way), key=lambda r: r["iteration_s"]) for way in WAYS}
    summary = {
        "selfplay_speedup": round(best["aoti"]["selfplay_positions_per_s"] / best["eager"]["selfplay_positions_per_s"], 3),
        "iteration_speedup": round(best["eager"]["iteration_s"] / best["aoti"]["iteration_s"], 3),
    }
    print(f"best of each: self-play x{summary['selfplay_speedup']:.2f}, a training iteration "
          f"x{summary['iteration_speedup']:.2f}")
    result = {"config": args.config, "init": args.init, "iterations": args.iterations, "rounds": args.rounds,
              "runs": runs, "best": best, **summary, "torch": torch.__version__, "machine": platform.processor()
              or platform.machine(), "date": time.strftime("%Y-%m-%d")}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the connection features cost in speed (issue 56): ``l4h64`` against ``l4h64c`` in one run.

    python benchmarks/bench_reach_speed.py                          # Hex 7x7 and ConHex, 3 rounds
    python benchmarks/bench_reach_speed.py --games conhex --rounds 1 --seconds 2

For each game and model, interleaved over ``--rounds`` rounds (the machine's load then falls on both
alike), in new processes, on the native CPU path as a player and self-play use it:

* **at the board**: ``conhex-zero bench search --batch 1 --sims 800`` (one position's search, the
  lean tree, as ``play`` and ``gtp`` run it): network evaluations a second, the figure the ratio
  compares (untrained networks shape their trees differently: with ``l4h64c``'s the search reached
  already-evaluated nodes more often, 0.30 evaluations a simulation on ConHex against 0.575, so
  its simulations a second, also printed, were *higher*, x1.58, though each evaluation costs more);
* **self-play**: ``conhex-zero bench selfplay`` with the game's CPU recipe (``configs/hex7.yaml`` for
  Hex 7x7, ``configs/conhex-cpu.yaml`` for ConHex) and ``model=M``: positions a second.

The native packages are built before the first timed call (not timed). Prints the medians and the
ratio ``l4h64c`` / ``l4h64``; writes ``--json`` (default ``runs/bench/reach_speed.json``; the
published results are ``benchmarks/results/reach_speed.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECIPES = {"hex-7": "configs/hex7.yaml", "conhex": "configs/conhex-cpu.yaml"}


def _bench(args: list[str]) -> dict:
    run = subprocess.run([sys.executable, "-m", "conhex_zero", "bench", *args, "--json"], capture_output=True,
                         text=True, cwd=ROOT, env={**os.environ, "CONHEX_ZERO_BUILD": "wait"})
    if run.returncode != 0:
        raise SystemExit(f"bench {' '.join(args)} failed: {run.stderr.strip()[-500:]}")
    return json.loads(run.stdout[run.stdout.index("{"):])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="+", default=["hex-7", "conhex"], choices=sorted(RECIPES))
    parser.add_argument("--models", nargs=2, default=["l4h64", "l4h64c"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--sims", type=int, default=800)
    parser.add_argument("--json", default="runs/bench/reach_speed.json")
    args = parser.parse_args(argv)
    results: dict = {"machine": platform.processor() or platform.machine(), "load_1min": os.getloadavg()[0],
                     "sims": args.sims, "seconds": args.seconds, "rounds": args.rounds, "games": {}}
    for game in args.games:
        rows: dict = {m: {"board_evals_per_s": [], "board_sims_per_s": [], "selfplay_positions_per_s": []}
                      for m in args.models}
        for _ in range(args.rounds):
            for model in args.models:
                board = _bench(["search", "--game", game, "--model", model, "--batch", "1", "--sims", str(args.sims),
                                "--seconds", str(args.seconds), "--backend", "aoti"])
                selfplay = _bench(["selfplay", "--config", RECIPES[game], "--seconds", str(args.seconds),
                                   f"model={model}"])
                rows[model]["board_evals_per_s"].append(board["evals_per_s"])
                rows[model]["board_sims_per_s"].append(board["sims_per_s"])
                rows[model]["selfplay_positions_per_s"].append(selfplay["positions_per_s"])
                print(f"{game} {model}: {board['evals_per_s']:,.0f} evaluations/s ({board['sims_per_s']:,.0f} "
                      f"simulations/s) at the board, "
                      f"{selfplay['positions_per_s']:,.0f} self-play positions/s", file=sys.stderr, flush=True)
        a, b = args.models
        summary = {m: {k: statistics.median(v) for k, v in rows[m].items()} for m in args.models}
        summary["ratio"] = {k: summary[b][k] / summary[a][k] for k in summary[a]}
        results["games"][game] = {"runs": rows, "median": summary}
        print(f"{game}: at the board {summary[a]['board_evals_per_s']:,.0f} / {summary[b]['board_evals_per_s']:,.0f} "
              f"network evaluations/s ({b} x{summary['ratio']['board_evals_per_s']:.2f}); self-play "
              f"{summary[a]['selfplay_positions_per_s']:,.0f} / {summary[b]['selfplay_positions_per_s']:,.0f} "
              f"positions/s (x{summary['ratio']['selfplay_positions_per_s']:.2f})")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

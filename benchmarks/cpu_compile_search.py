"""torch.compile where a person waits (issue 42): simulations a second of the players' one-position
search (the lean tree, ``GameSearch`` as ``network_player`` builds it) with the network run eagerly
against the same network through ``torch.compile``, alternating in one process.

    python benchmarks/cpu_compile_search.py checkpoints/conhex-l4h64-v2.pt
    python benchmarks/cpu_compile_search.py checkpoints/lines/conhex-gpu/checkpoints/iter_0020.pt --rounds 4

``benchmarks/cpu_inference.py`` measures the network alone at fixed batch sizes; here the batch
sizes are the search's own (its ramp of leaves per call changes them from call to call, so the
compiled network is compiled twice: once for the first shape, once with a dynamic batch), and the
rest of the search (tree walk, rules, encoding) is counted too. The first searches of both ways
warm them up (the compiled way's compilations: ``warmup_s``); then ``--rounds`` rounds each search
``--positions`` positions of random ConHex games at ``--sims`` simulations with each way in turn,
and the best round of each counts. One torch thread. Results go to runs/bench/ (``--publish``:
benchmarks/results/cpu_compile_search.json).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conhex_zero.agents.evaluators import NetworkEvaluator  # noqa: E402
from conhex_zero.agents.game_search import LEAN_MAX_BATCH, GameSearch  # noqa: E402
from conhex_zero.agents.search_configs import play_config  # noqa: E402
from conhex_zero.bench.output import add_output_arguments, result_path, write_results  # noqa: E402
from conhex_zero.bench.search_bench import sample_positions  # noqa: E402
from conhex_zero.env.vec_env import VecEnv  # noqa: E402
from conhex_zero.nn.checkpoint import load_checkpoint  # noqa: E402
from conhex_zero.search import rng  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", type=Path, help="a ConHex checkpoint")
    parser.add_argument("--sims", type=int, default=800, help="simulations a search (default: 800)")
    parser.add_argument("--positions", type=int, default=4, help="positions searched a round (default: 4)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default: 3)")
    add_output_arguments(parser, "cpu_compile_search")
    args = parser.parse_args()
    if not args.checkpoint.is_file():
        parser.error(f"no checkpoint file at {args.checkpoint}")
    torch.set_num_threads(1)
    env = VecEnv("conhex")
    model = load_checkpoint(args.checkpoint, env.device).model
    state = sample_positions(env, args.positions, seed=1)  # [P] running positions 20 moves in
    ways = {name: GameSearch(env, NetworkEvaluator(model, env, compile=compiled), play_config(args.sims),
                             tactics=True, lean_max_batch=LEAN_MAX_BATCH)
            for name, compiled in (("eager", False), ("compiled", True))}
    warmup = {}
    for name, search in ways.items():  # three searches: the ramp's shapes, both compilations
        start = time.perf_counter()
        for i in range(3):
            search.run(state[i % args.positions:i % args.positions + 1], rng.make_keys(i, 1))
        warmup[name] = time.perf_counter() - start
        print(f"{name}: warm-up {warmup[name]:.1f} s", flush=True)
    rounds: dict[str, list[float]] = {name: [] for name in ways}
    for r in range(args.rounds):
        for name, search in ways.items():
            start = time.perf_counter()
            for i in range(args.positions):
                search.run(state[i:i + 1], rng.make_keys(1000 * (r + 1) + i, 1))
            rounds[name].append(args.positions * args.sims / (time.perf_counter() - start))
            print(f"round {r + 1} {name:<9} {rounds[name][-1]:7.0f} sims/s", flush=True)
    best = {name: max(v) for name, v in rounds.items()}
    ratio = best["compiled"] / best["eager"]
    print(f"best: eager {best['eager']:.0f}, compiled {best['compiled']:.0f} sims/s: x{ratio:.2f} "
          f"(compiled warm-up {warmup['compiled']:.0f} s against {warmup['eager']:.1f} s)")
    write_results(result_path(args, "cpu_compile_search"), {
        "benchmark": "cpu_compile_search", "date": time.strftime("%Y-%m-%d"), "torch": torch.__version__,
        "checkpoint": str(args.checkpoint), "model": model.name, "sims": args.sims, "positions": args.positions,
        "load_1min": round(os.getloadavg()[0], 2), "warmup_s": {k: round(v, 1) for k, v in warmup.items()},
        "sims_per_s": {k: [round(x, 1) for x in v] for k, v in rounds.items()},
        "best_sims_per_s": {k: round(v, 1) for k, v in best.items()}, "compiled_vs_eager": round(ratio, 3)})
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How often self-play's value targets are wrong: the exact solver's verdict on recorded Hex positions.

    python benchmarks/label_errors.py --checkpoint checkpoints/hex8-l4h64c-v2.pt \
        --config configs/hex8c-v5-line.yaml --positions 1536 --nodes 2000 --max-empty 51 \
        --json benchmarks/results/label_errors_hex8.json

A recorded position's value target is its game's outcome for the player to move. Self-play with the
given network and the config's self-play recipe (``selfplay:`` of a training YAML, overrides as
``KEY=VALUE`` after the options) records ``--positions`` positions; every one whose game has ended
and that has at most ``--max-empty`` empty cells is solved by the native solver
(``analysis.native_solver``: fill-in, H-search at every node) within ``--nodes`` expansions. Prints,
per band of empty cells, the positions recorded, those tried, settled, and the settled ones whose
target is wrong (the game's winner had lost the position), with the solver's CPU seconds; writes
``--json``. This is the figure behind ``selfplay.proven_solver=native`` (docs/knowledge.md, "Exact
middle-game targets on Hex 8x8"): it says which labels an exact solver would turn over, and at what
cost, before a run spends CPU hours on it.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections import defaultdict
from pathlib import Path

import torch

from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.analysis.native_solver import NativeHexSolver
from conhex_zero.analysis.solver import SolverError, stone_masks
from conhex_zero.bench.output import write_results
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.train.config import ConfigError
from conhex_zero.train.config_load import load_config
from conhex_zero.train.replay import ReplayBuffer
from conhex_zero.train.selfplay import SelfPlay

BAND = 4
"""Empty cells a row of the report covers."""


def label_errors(checkpoint: str, config: str, overrides: list[str], positions: int, nodes: int, max_empty: int,
                 seed: int) -> dict:
    """Play, solve and count (see the module docstring)."""
    loaded = load_checkpoint(checkpoint)
    cfg = load_config(config, overrides)
    env = VecEnv(cfg.game)
    solver = NativeHexSolver(env.game.board, table_bits=20)
    evaluator = NetworkEvaluator(loaded.model, env, backend=cfg.selfplay.evaluator_backend)
    replay = ReplayBuffer(env, positions + 1024)
    clock = time.perf_counter()
    SelfPlay(env, cfg.selfplay, evaluator, seed).run(replay, positions)
    selfplay_seconds = time.perf_counter() - clock
    n = len(replay)
    first_ply = 0 if env.game.swap_ply is None else env.game.swap_ply + 1
    bands: dict[int, list[float]] = defaultdict(lambda: [0, 0, 0, 0, 0.0])  # recorded, tried, settled, wrong, s
    for row in replay.ready[:n].nonzero().flatten().tolist():
        holes = replay.store["holes"][row].tolist()
        empty = sum(h < 0 for h in holes)
        band = bands[empty // BAND * BAND]
        band[0] += 1
        if empty > max_empty or int(replay.store["ply"][row]) < first_ply:
            continue
        mover = int(replay.store["to_move"][row])
        band[1] += 1
        start = time.process_time()
        winner = solver.winner_within(*stone_masks(holes), mover, nodes)
        band[4] += time.process_time() - start
        if winner is not None:
            band[2] += 1
            band[3] += (1 if winner == mover else -1) != int(replay.value[row])
    rows = [{"empty": f"{b}-{b + BAND - 1}", "recorded": int(v[0]), "tried": int(v[1]), "settled": int(v[2]),
             "wrong": int(v[3]), "solver_cpu_s": round(v[4], 2)} for b, v in sorted(bands.items())]
    return {"checkpoint": checkpoint, "config": config, "overrides": overrides, "game": cfg.game,
            "positions": positions, "ended": sum(r["recorded"] for r in rows), "nodes": nodes,
            "max_empty": max_empty, "seed": seed, "selfplay_s": round(selfplay_seconds, 1), "bands": rows,
            "machine": platform.processor() or platform.machine(), "torch": torch.__version__}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("overrides", nargs="*", help="config overrides, KEY=VALUE")
    parser.add_argument("--checkpoint", required=True, help="the self-play network")
    parser.add_argument("--config", required=True, help="a training YAML whose self-play recipe is played")
    parser.add_argument("--positions", type=int, default=1536, help="recorded positions to play (default 1536)")
    parser.add_argument("--nodes", type=int, default=2000, help="solver expansions a position at most (default 2000)")
    parser.add_argument("--max-empty", type=int, default=51, help="solve positions with at most this many empty cells")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", default="runs/bench/label_errors.json", help="write the results here")
    args = parser.parse_args(argv)
    if args.positions < 1 or args.nodes < 1:
        parser.error("--positions and --nodes: at least 1")
    torch.set_num_threads(1)
    try:
        result = label_errors(args.checkpoint, args.config, args.overrides, args.positions, args.nodes,
                              args.max_empty, args.seed)
    except (ConfigError, SolverError, OSError, ValueError) as err:
        print(f"label_errors: {err}", file=sys.stderr)
        return 2
    print(f"{result['game']}: {result['ended']} recorded positions whose games ended "
          f"(self-play {result['selfplay_s']} s); solver budget {args.nodes} expansions")
    print(f"{'empty':>7} {'recorded':>9} {'tried':>6} {'settled':>8} {'wrong':>6} {'CPU s':>7}")
    for r in result["bands"]:
        print(f"{r['empty']:>7} {r['recorded']:>9} {r['tried']:>6} {r['settled']:>8} {r['wrong']:>6} "
              f"{r['solver_cpu_s']:>7}")
    settled = sum(r["settled"] for r in result["bands"])
    wrong = sum(r["wrong"] for r in result["bands"])
    print(f"settled {settled}, of which wrong {wrong} ({wrong / max(settled, 1):.1%})")
    write_results(Path(args.json), result)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How often one search gets a Hex position's value right, with and without H-search at its nodes.

    python benchmarks/search_connections.py --game hex-7 --positions 120 --json benchmarks/results/search_connections_hex7.json
    python benchmarks/search_connections.py --game hex-8 --positions 80 --min-empty 30 --max-empty 48

Positions are played by the model's raw policy (temperature 1, a fifth of the moves uniformly
random: good and bad positions of every kind), one per game and stage, with ``--min-empty`` to
``--max-empty`` empty cells and no swap to decide, no two equal up to the board's symmetries (with
``--unsure V``, only those whose raw network value is below V in size: where a search has work to
do); each
is solved by the native solver within ``--solve-nodes`` expansions (those it does not settle are
left out: the set leans to what the solver can settle). Then one search of ``--sims`` simulations
(the opening analysis's search, as the books use it) of each position, with the network alone and
with ``connections`` (``agents.connections``: H-search's verdicts and must-play moves at every
node), in one process, each setting on every position in turn, and the network alone again with
the simulations that the connections' CPU time buys it: the share of positions whose
searched value (the chosen move's value, as a book records it) has the right sign, the share a
setting proves, and the CPU time. No position is an opening: the first-move tables stay the exam.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from knowledge_data import candidates  # noqa: E402

from conhex_zero.agents.evaluators import NetworkEvaluator  # noqa: E402
from conhex_zero.agents.game_search import GameSearch  # noqa: E402
from conhex_zero.agents.search_configs import analysis_config  # noqa: E402
from conhex_zero.analysis.native_solver import NativeHexSolver  # noqa: E402
from conhex_zero.analysis.solver import stone_masks  # noqa: E402
from conhex_zero.env.state import FIELDS, State  # noqa: E402
from conhex_zero.env.vec_env import VecEnv  # noqa: E402
from conhex_zero.nn.checkpoint import load_checkpoint  # noqa: E402
from conhex_zero.search import rng  # noqa: E402


def solved_positions(env: VecEnv, model, count: int, min_empty: int, max_empty: int, nodes: int, seed: int,
                     unsure: float, say) -> tuple[State, torch.Tensor, float]:
    """Up to ``count`` positions with exact values for their movers, and the solver's CPU seconds;
    ``unsure`` < 1 keeps only positions whose raw network value is below it in size."""
    share = (max_empty - min_empty + 1) / max_empty * (unsure if unsure < 1 else 1.0)
    pool = candidates(env, model, int(count * 3 / share), max_empty, seed)
    pool = [s for s in pool if int((s.holes < 0).sum()) >= min_empty]
    if unsure < 1:
        evaluator = NetworkEvaluator(model, env, backend="eager")
        batch = State(*(torch.cat([getattr(s, f) for s in pool]) for f in FIELDS))
        with torch.no_grad():
            _, value = evaluator(batch)
        pool = [s for s, v in zip(pool, value.tolist()) if abs(v) < unsure]
    solver = NativeHexSolver(env.game.board, table_bits=22)
    kept, values = [], []
    start = time.process_time()
    for s in pool:
        first, second = stone_masks(s.holes[0].tolist())
        mover = int(s.to_move[0])
        winner = solver.winner_within(first, second, mover, nodes)
        if winner is not None:
            kept.append(s)
            values.append(1 if winner == mover else -1)
            if len(kept) == count:
                break
    spent = time.process_time() - start
    say(f"{env.game.spec}: {len(kept)} of {len(pool)} positions solved within {nodes} expansions each, {spent:.0f} CPU s")
    batch = State(*(torch.cat([getattr(s, f) for s in kept]) for f in FIELDS))
    return batch, torch.tensor(values), spent


def search_values(env: VecEnv, evaluator, states: State, sims: int, connections: bool,
                  chunk: int) -> tuple[torch.Tensor, torch.Tensor, float]:
    """``(value [B], proven [B], CPU seconds)`` of one search per position."""
    search = GameSearch(env, evaluator, analysis_config(sims), tactics=True, connections=connections)
    values, proven = [], []
    start = time.process_time()
    for lo in range(0, states.batch_size, chunk):
        part = states[torch.arange(lo, min(lo + chunk, states.batch_size))]
        out = search.run(part, rng.make_keys(lo, part.batch_size))
        values.append(out.action_value.float())
        proven.append(out.root_proven if out.root_proven is not None else torch.zeros(part.batch_size, dtype=torch.int8))
    return torch.cat(values), torch.cat(proven), time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="hex-7", help="a Hex board up to 8 x 8 (default hex-7)")
    parser.add_argument("--model", default="checkpoints/hex7-l4h64c-v5.pt")
    parser.add_argument("--positions", type=int, default=120)
    parser.add_argument("--min-empty", type=int, default=20)
    parser.add_argument("--max-empty", type=int, default=40)
    parser.add_argument("--solve-nodes", type=int, default=200_000, help="solver expansions a position at most")
    parser.add_argument("--unsure", type=float, default=1.0,
                        help="keep only positions whose raw network value is below this in size (default 1: all)")
    parser.add_argument("--sims", type=int, default=200, help="simulations a search (default 200: the books')")
    parser.add_argument("--chunk", type=int, default=32, help="positions searched at once")
    parser.add_argument("--seed", type=int, default=130)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    say = lambda text: print(text, file=sys.stderr, flush=True)  # noqa: E731
    checkpoint = load_checkpoint(args.model)
    env = VecEnv(args.game)
    states, truth, solve_seconds = solved_positions(env, checkpoint.model, args.positions, args.min_empty,
                                                    args.max_empty, args.solve_nodes, args.seed, args.unsure, say)
    evaluator = NetworkEvaluator(checkpoint.model, env, backend="eager")
    results = {"game": args.game, "model": args.model, "sims": args.sims, "positions": int(states.batch_size),
               "empty": [args.min_empty, args.max_empty], "unsure": args.unsure, "solve_nodes": args.solve_nodes,
               "solve_cpu_seconds": round(solve_seconds, 1), "movers_winning": int((truth > 0).sum()),
               "settings": {}}
    runs = [("network", False, args.sims), ("connections", True, args.sims)]
    spent: dict[str, float] = {}
    while runs:
        name, on, sims = runs.pop(0)
        value, proven, seconds = search_values(env, evaluator, states, sims, on, args.chunk)
        spent[name] = seconds
        right = ((value > 0) == (truth > 0))
        wrong_proofs = int(((proven != 0) & (proven.to(truth.dtype) != truth)).sum())
        results["settings"][name] = {"sims": sims, "right": int(right.sum()), "proven": int((proven != 0).sum()),
                                     "wrong_proofs": wrong_proofs, "cpu_seconds": round(seconds, 1)}
        say(f"  {name:22s} {sims:5d} sims: right {int(right.sum())} of {states.batch_size}, proven "
            f"{int((proven != 0).sum())} (wrong {wrong_proofs}), {seconds:.1f} CPU s")
        if name == "connections":  # the network alone again, with the simulations the same CPU time buys
            more = max(args.sims, round(args.sims * seconds / max(spent["network"], 1e-9)))
            runs.append(("network, same CPU", False, more))
    print(json.dumps(results, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

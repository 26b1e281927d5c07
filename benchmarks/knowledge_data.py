"""Positions with exact values, for judging what a network knows (issue 56, item 1).

    python benchmarks/knowledge_data.py --out benchmarks/data/knowledge.pt      # the shipped set, ~40 min
    python benchmarks/knowledge_data.py --out /tmp/k.pt --boards hex-5:200 --seconds 60   # a quick one

Games are played on each board by the board's shipped network from its raw policy (temperature 1,
a fifth of the moves uniformly random, so that the positions are of every kind a search meets,
good and bad), 256 at once; every running position with at most ``max_empty`` empty cells (and no
swap to decide: the solver knows no swap) is a candidate, one per game and stage at most, no two
equal up to the board's symmetries. Each kept position is solved exactly by ``analysis.solver``
(its virtual connections and proof sets make late positions fast: the mover's win or loss), with a
time limit per board. Hex 5x5 positions come from every stage (1-24 empty cells), Hex 6x6 and 7x7
from late stages only (at most 20 and 22 empty cells by default): what the solver settles in
seconds in pure Python.

The first-move results of Hex 6x6-8x8 are the exam of the books (``docs/analysis.md``): no position
here is an opening (the least stones kept on 6x6 and 7x7 are 16 and 27).

Writes one file (``torch.save``): per board, the engine fields of the positions (int8/int16/int64
as the engine keeps them), the exact value for the player to move (+1 wins, -1 loses), the empty
cells of each and the solver's seconds; and how it was made. ``knowledge_bench.py`` reads it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.analysis.solver import HexSolver
from conhex_zero.book.keys import Canonical
from conhex_zero.env.state import FIELDS, State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.search.tree import NEG

FORMAT = "conhex-zero knowledge set"
DEFAULT_BOARDS = ("hex-5:3000", "hex-6:2400", "hex-7:2400", "hex-8:1200")
MAX_EMPTY = {"hex-5": 24, "hex-6": 24, "hex-7": 26, "hex-8": 26}
MODELS = {"hex-5": "checkpoints/hex5-l4h64.pt", "hex-6": "checkpoints/hex6-l4h64.pt",
          "hex-7": "checkpoints/hex7-l4h64.pt", "hex-8": "checkpoints/hex8-l4h64.pt"}


def candidates(env: VecEnv, model, count: int, max_empty: int, seed: int, games: int = 256) -> list[State]:
    """``count`` distinct running positions with 1 to ``max_empty`` empty cells, as many with each
    number of empty cells as there are (a stage still short after 100 steps without a new position,
    such as a nearly full board whose game is not over, leaves its share to the others)."""
    evaluator = NetworkEvaluator(model, env, backend="eager")
    canon = Canonical(env)
    gen = torch.Generator().manual_seed(seed)
    state = env.reset(games, gen)
    seen: set = set()
    quota = -(-count // max_empty)  # per number of empty cells
    taken = [0] * (max_empty + 1)
    kept: list[State] = []
    H = env.num_holes
    idle = 0  # steps since a position was kept
    while len(kept) < count:
        if idle >= 100:  # the stages still short are rare (few empty cells, game not over): take more of the others
            quota += max(1, quota // 2)
            idle = 0
        idle += 1
        empty = (state.holes < 0).sum(1)  # [B]
        legal = env.legal_mask(state)
        swap_open = legal[:, H] if legal.shape[1] > H else torch.zeros_like(empty, dtype=torch.bool)
        ok = (~state.done) & (empty <= max_empty) & ~swap_open
        chosen = [i for i in torch.nonzero(ok).flatten().tolist() if taken[int(empty[i])] < quota]
        keys = canon.keys(state[torch.tensor(chosen, dtype=torch.long)]).keys if chosen else []
        for i, key in zip(chosen, keys):
            e = int(empty[i])
            if key in seen or taken[e] >= quota:
                continue
            seen.add(key)
            taken[e] += 1
            idle = 0
            kept.append(state[i])
            if len(kept) >= count:
                break
        logits, _ = evaluator(state, legal)
        drawn = torch.multinomial(torch.softmax(torch.where(legal, logits, NEG), 1), 1, generator=gen)[:, 0]
        uniform = env.random_actions(state, gen)
        action = torch.where(torch.rand(games, generator=gen) < 0.2, uniform, drawn)
        state = env.reset_done(env.step(state, action), gen)
    order = torch.randperm(len(kept), generator=gen).tolist()  # stages mixed: a time limit cuts none out
    return [kept[i] for i in order]


def solve(env: VecEnv, positions: list[State], seconds: float, say) -> tuple[list[State], list[int], list[float]]:
    """The exact value of each position for its mover, until ``seconds`` are spent."""
    solver = HexSolver(env.game.board, max_holes=env.num_holes, book=False)
    kept, values, times = [], [], []
    start = time.perf_counter()
    for k, row in enumerate(positions):
        if time.perf_counter() - start > seconds:
            say(f"  {env.game.spec}: time is up after {k} positions")
            break
        t = time.perf_counter()
        winner = int(solver.state_winners(row)[0])
        times.append(time.perf_counter() - t)
        kept.append(row)
        values.append(1 if winner == int(row.to_move[0]) else -1)
        if len(solver.table) > 3_000_000:  # keep memory bounded across late positions
            solver.table.clear()
        if (k + 1) % 250 == 0:
            say(f"  {env.game.spec}: {k + 1} solved in {time.perf_counter() - start:.0f} s")
    return kept, values, times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="the file to write (.pt)")
    parser.add_argument("--boards", nargs="+", default=list(DEFAULT_BOARDS),
                        help="BOARD:COUNT pairs (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=900.0, help="solver time limit per board (default 900)")
    parser.add_argument("--seed", type=int, default=56)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    say = lambda text: print(text, file=sys.stderr, flush=True)  # noqa: E731
    out: dict = {"format": FORMAT, "boards": {}, "made": {"seed": args.seed, "boards": args.boards,
                                                        "seconds": args.seconds, "torch": str(torch.__version__)}}
    for entry in args.boards:
        spec, _, count = entry.partition(":")
        if spec not in MODELS or not count.isdigit():
            parser.error(f"--boards {entry!r}: BOARD:COUNT with BOARD one of {', '.join(MODELS)}")
        checkpoint = load_checkpoint(MODELS[spec])
        env = VecEnv(checkpoint.game)
        t = time.perf_counter()
        found = candidates(env, checkpoint.model, int(count), MAX_EMPTY[spec], args.seed)
        say(f"{spec}: {len(found)} positions played in {time.perf_counter() - t:.0f} s; solving")
        kept, values, times = solve(env, found, args.seconds, say)
        batch = State(*(torch.cat([getattr(s, f) for s in kept]) for f in FIELDS))
        empty = (batch.holes < 0).sum(1)
        out["boards"][spec] = {
            "game": env.game.spec, "model": MODELS[spec],
            "states": {f: getattr(batch, f).clone() for f in FIELDS},
            "value": torch.tensor(values, dtype=torch.int8), "empty": empty.to(torch.int16),
            "solve_seconds": torch.tensor(times, dtype=torch.float32),
        }
        wins = sum(v > 0 for v in values)
        say(f"{spec}: {len(kept)} solved ({wins} mover wins), {sum(times):.0f} s of solving, "
            f"empty cells {int(empty.min())}-{int(empty.max())}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    torch.save(out, args.out)
    say(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

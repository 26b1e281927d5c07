"""Book growth: many book positions searched at once against the same positions one at a time.

    python benchmarks/bench_book.py                                   # ConHex, v4, 200 sims, 300 nodes
    python benchmarks/bench_book.py --checkpoint checkpoints/hex7-l4h64.pt --nodes 200

A fresh book is grown in a temporary folder with ``--batch`` positions a round (``book grow``'s
way). Every round's searches (the new positions and the rests searched again, with their excluded
moves) are run twice, in alternating order from round to round: once as the book does, all in one
call of the search (the batched tree for more than 4 positions), and once one position at a time
with the one-position search (the players' lean tree, as ``play`` and ``openings --after`` search a
position). The book keeps the first way's results, so both ways search exactly the same positions;
the figure is the new book positions a minute of search time (the round's other work, planning,
keys, writing, is the same for both and reported apart). One torch thread unless --threads says
more. Results are printed and written to runs/bench/ (``--publish``: benchmarks/results/book.json).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conhex_zero.bench.output import add_output_arguments, add_threads_option, check_threads, result_path, write_results  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", default="checkpoints/conhex-l4h64-v4.pt", help="the model (default: ConHex v4)")
    p.add_argument("--sims", type=int, default=200, help="simulations a position (default: 200)")
    p.add_argument("--nodes", type=int, default=300, help="book positions to grow (default: 300)")
    p.add_argument("--batch", type=int, default=128, help="positions added a round (default: 128, book grow's)")
    add_output_arguments(p, "book")
    add_threads_option(p)
    args = p.parse_args(argv)
    check_threads(p, args.threads)

    import torch

    from conhex_zero.book import folder as book_folder
    from conhex_zero.book.grow import Grower
    from conhex_zero.book.keys import Canonical
    from conhex_zero.env.vec_env import VecEnv
    from conhex_zero.nn.checkpoint import load_checkpoint
    from conhex_zero.nn.checkpoint_files import checkpoint_digest

    torch.set_num_threads(args.threads)
    ckpt = load_checkpoint(args.checkpoint)
    env = VecEnv(ckpt.game, "cpu")
    start = env.initial_state(1)
    times = {"batched": 0.0, "one_at_a_time": 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        opened = book_folder.new_book(Path(tmp) / "book", env.game.spec, [], Canonical(env).keys(start).keys[0],
                                      args.checkpoint, checkpoint_digest(args.checkpoint), args.sims)
        grower = Grower(env, ckpt.model, opened.folder, opened.book, start, sims=args.sims, batch=args.batch)
        one = Grower(env, ckpt.model, opened.folder, opened.book, start, sims=args.sims, batch=args.batch,
                     sequential=True)
        batched_search = grower._search
        rounds = 0

        def both_ways(jobs, on_search):
            nonlocal rounds
            order = ("one_at_a_time", "batched") if rounds % 2 else ("batched", "one_at_a_time")
            kept = None
            for way in order:
                t = time.perf_counter()
                results = batched_search(jobs, None) if way == "batched" else one._search(jobs, None)
                times[way] += time.perf_counter() - t
                if way == "batched":
                    kept = results
            rounds += 1
            return kept

        grower._search = both_ways
        started = time.perf_counter()
        searches = 0
        while len(opened.book) < args.nodes:
            result = grower.round(args.nodes - len(opened.book))
            searches += result.searches
            print(f"round {rounds}: {len(opened.book)} positions, {searches} searches", flush=True)
            if result.new_nodes == 0 and result.searches == 0:
                break
        total = time.perf_counter() - started
    nodes = len(opened.book)
    other = total - times["batched"] - times["one_at_a_time"]
    result = {
        "checkpoint": args.checkpoint, "game": env.game.spec, "sims": args.sims, "batch": args.batch,
        "threads": args.threads, "torch": torch.__version__, "nodes": nodes, "searches": searches, "rounds": rounds,
        "search_seconds": {k: round(v, 2) for k, v in times.items()}, "other_seconds": round(other, 2),
        "nodes_per_minute": {k: round(60 * nodes / (v + other), 1) for k, v in times.items()},
        "search_nodes_per_minute": {k: round(60 * nodes / v, 1) for k, v in times.items()},
    }
    result["speedup"] = round(result["nodes_per_minute"]["batched"] / result["nodes_per_minute"]["one_at_a_time"], 3)
    print(f"{nodes} positions, {searches} searches in {rounds} rounds at {args.sims} simulations: "
          f"batched {result['nodes_per_minute']['batched']:.0f} positions a minute, one at a time "
          f"{result['nodes_per_minute']['one_at_a_time']:.0f} (x{result['speedup']:.2f}); the rounds' other work "
          f"{other:.1f} s, counted in both")
    path = write_results(result_path(args, "book"), result)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

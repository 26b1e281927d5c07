"""How far the exact solver reaches into a Hex book: the share of its positions settled within a budget.

    python benchmarks/solver_reach.py checkpoints/books/hex6-l4h64c-v4 checkpoints/books/hex7-l4h64c-v3 \
        --nodes 3000 --per-count 40 --max-empty 34

A book's positions (its node keys: pieces and player to move) are grouped by their number of empty
cells; up to ``--per-count`` of each group with at most ``--max-empty`` empty cells, drawn by a fixed
seed, are given to ``analysis.solver.HexSolver.winner_within`` with a budget of ``--nodes`` positions
searched (``--solver native``: to ``analysis.native_solver.NativeHexSolver``, its budget node
expansions). Prints, per group, how many it settled and the mean CPU seconds a position (budget
spent included), and writes ``--json`` (default ``runs/bench/solver_reach.json``; the published
results are ``benchmarks/results/solver_reach.json`` and, for the native solver,
``solver_reach_native.json``). This is the figure behind "proofs at the book's leaves"
(docs/knowledge.md): a book's value becomes exact where the solver settles its positions, so a solver
that reaches further is measured here first.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

import torch

from conhex_zero.analysis.solver import HexSolver, SolverError
from conhex_zero.book import folder as book_folder
from conhex_zero.book.prove import parse_key
from conhex_zero.book.store import BookError
from conhex_zero.games.game import parse_game

TABLE_LIMIT = 2_000_000


def reach(book_dir: str, nodes: int, per_count: int, max_empty: int, seed: int = 0, native: bool = False) -> dict:
    """The solver's reach into one book (see the module docstring)."""
    opened = book_folder.open_book(book_dir)
    game = parse_game(opened.game) if isinstance(opened.game, str) else opened.game
    if native:
        from conhex_zero.analysis.native_solver import NativeHexSolver

        solver = NativeHexSolver(game.board)
    else:
        solver = HexSolver(game.board, max_holes=game.num_holes, book=False)
    keys = sorted(opened.book.nodes)
    random.Random(seed).shuffle(keys)
    groups: dict[int, list[float]] = defaultdict(lambda: [0, 0, 0.0])  # empty -> tried, settled, CPU s
    all_counts: dict[int, int] = defaultdict(int)
    for key in keys:
        first, second, mover, empty = parse_key(key)
        all_counts[empty] += 1
        group = groups[empty]
        if empty > max_empty or group[0] >= per_count:
            continue
        clock = time.process_time()
        winner = solver.winner_within(first, second, mover, nodes)
        group[0] += 1
        group[1] += winner is not None
        group[2] += time.process_time() - clock
        if not native and len(solver.table) > TABLE_LIMIT:
            solver.table.clear()
    rows = [{"empty": e, "positions_in_book": all_counts[e], "tried": int(g[0]), "settled": int(g[1]),
             "cpu_s_per_position": round(g[2] / g[0], 4)} for e, g in sorted(groups.items()) if g[0]]
    tried = sum(r["tried"] for r in rows)
    settled_share = sum(r["settled"] for r in rows) / tried if tried else 0.0
    # The book's positions the solver would settle, estimated group by group.
    expected = sum(all_counts[r["empty"]] * r["settled"] / r["tried"] for r in rows)
    return {"book": book_dir, "game": str(game), "solver": "native" if native else "python", "positions": len(keys), "nodes": nodes,
            "empty_range": [min(all_counts), max(all_counts)], "settled_share_of_tried": round(settled_share, 4),
            "estimated_settled_positions": round(expected), "by_empty": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("books", nargs="+", metavar="BOOK", help="Hex book folders")
    parser.add_argument("--nodes", type=int, default=3000, help="the solver's budget a position (default 3000)")
    parser.add_argument("--per-count", type=int, default=40, help="positions tried per empty-cell count (default 40)")
    parser.add_argument("--max-empty", type=int, default=34, help="largest empty-cell count tried (default 34)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--solver", choices=("python", "native"), default="python",
                        help="the pure-Python solver (bridges and the ziggurat; its budget counts positions) or the "
                        "native one (H-search and proof-number search in C; its budget counts node expansions)")
    parser.add_argument("--json", default="runs/bench/solver_reach.json", help="where the results go")
    args = parser.parse_args(argv)
    if args.nodes < 1 or args.per_count < 1 or args.max_empty < 0:
        parser.error("--nodes and --per-count must be at least 1, --max-empty at least 0")
    torch.set_num_threads(1)
    results = []
    for book in args.books:
        try:
            result = reach(book, args.nodes, args.per_count, args.max_empty, args.seed, args.solver == "native")
        except (BookError, SolverError, OSError) as err:
            print(f"solver_reach: {book}: {err}", file=sys.stderr)
            return 2
        results.append(result)
        print(f"{book} ({result['game']}, {result['positions']:,} positions, {args.solver} solver, {result['nodes']} nodes a position): "
              f"settled {result['settled_share_of_tried']:.1%} of those tried, about "
              f"{result['estimated_settled_positions']:,} of the book's positions")
        for r in result["by_empty"]:
            print(f"  {r['empty']:3d} empty: {r['settled']:3d} of {r['tried']:3d} settled, "
                  f"{r['cpu_s_per_position']:.3f} CPU s a position ({r['positions_in_book']:,} in the book)")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": platform.processor() or platform.machine(), "torch": torch.__version__,
                               "python": platform.python_version(), "results": results}, indent=1) + "\n")
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

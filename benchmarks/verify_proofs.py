"""Check a book's proofs a second way: every exact result solved again by an independently set-up solver.

    python benchmarks/verify_proofs.py checkpoints/books/hex6-l4h64c-v3 --depth 1

The book's ``exact`` lines (``conhex-zero book prove``) came from the native solver with its default
H-search (connections between two empty cells limited to two-cell carriers, 10 full and 16 semi
connections a pair). This script solves the same positions again in a fresh process-wide table with
another setting (``--cell-carriers 1``: only adjacent empty cells joined; smaller lists), which
finds other connections, prunes other moves and so builds another proof tree, and reports how many
agree. ``--fill-in off`` also turns off inferior-cell fill-in (on by default since 2026-12-06, the
proofs of older books were made without it), so each of the two can check the other. On boards up to
5 x 5 the pure-Python solver (``analysis.solver``) checks them as well.
A disagreement would be a bug in the solver; the tests check it against two independent solvers on
3 x 3 to 5 x 5, and this is the check on the boards they cannot reach. Writes ``--json`` (default
``runs/bench/verify_proofs.json``), after every position too, so a stopped run leaves what it checked.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

from conhex_zero.analysis.native_solver import NativeHexSolver
from conhex_zero.analysis.solver import HexSolver, SolverError
from conhex_zero.book import folder as book_folder
from conhex_zero.book.prove import key_depth, parse_key
from conhex_zero.book.store import BookError
from conhex_zero.games.game import parse_game


def write_json(path: str, result: dict) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": platform.processor() or platform.machine(), "python": platform.python_version(),
                               **result}, indent=1) + "\n")
    return out


def verify(book_dir: str, max_depth: int | None, nodes: int, cell_carriers: int | None, fill_in: bool = True,
           seconds: float | None = None, partial_json: str | None = None, dominate: bool = True,
           table_bits: int = 22) -> dict:
    """The book's exact results solved again; ``partial_json``: written after every position (with
    ``"complete": false``), so a run stopped early leaves what it checked."""
    opened = book_folder.open_book(book_dir)
    game = parse_game(opened.game) if isinstance(opened.game, str) else opened.game
    solver = NativeHexSolver(game.board, table_bits=table_bits, cell_carriers=cell_carriers, list_limits=(8, 12, 3),
                             fill_in=fill_in, prune_dominated=dominate)
    pure = HexSolver(game.board, book=False) if game.num_holes <= 25 else None
    exact = sorted((k for k, n in opened.book.nodes.items() if n.exact and (max_depth is None or key_depth(k) <= max_depth)),
                   key=lambda k: (key_depth(k), k))
    rows, agree, disagree, unsettled = [], 0, 0, 0
    for key in exact:
        first, second, mover, _ = parse_key(key)
        started = time.process_time()
        winner = solver.winner_within(first, second, mover, nodes, max_seconds=seconds)
        cpu = time.process_time() - started
        claimed = opened.book.nodes[key].exact
        again = None if winner is None else (1 if winner == mover else -1)
        if pure is not None and again is not None:
            assert (1 if pure.winner(first, second, mover) == mover else -1) == again, key
        if again is None:
            unsettled += 1
        elif again == claimed:
            agree += 1
        else:
            disagree += 1
        rows.append({"key": key, "book": claimed, "again": again, "nodes": solver.nodes, "cpu_s": round(cpu, 2)})
        if partial_json is not None:
            write_json(partial_json, {"book": book_dir, "game": str(game), "exact": len(exact), "checked": len(rows),
                                      "agree": agree, "disagree": disagree, "unsettled": unsettled,
                                      "complete": False, "positions": rows})
        print(f"  {key}: book {claimed:+d}, again {'unsettled' if again is None else f'{again:+d}'} "
              f"({solver.nodes} nodes, {cpu:.1f} CPU s)", flush=True)
    return {"book": book_dir, "game": str(game), "exact": len(exact), "checked": len(rows), "complete": True,
            "agree": agree, "disagree": disagree,
            "unsettled": unsettled, "cell_carriers": "any" if cell_carriers is None else cell_carriers,
            "fill_in": fill_in, "dominate": dominate, "table_bits": table_bits, "nodes": nodes, "seconds": seconds,
            "positions": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("book", metavar="BOOK", help="a Hex book folder with exact results (book prove)")
    parser.add_argument("--depth", type=int, default=None, help="only positions with at most this many pieces")
    parser.add_argument("--nodes", type=int, default=2_000_000, help="the second solver's budget a position")
    parser.add_argument("--cell-carriers", default="1",
                        help="the second solver's most cells between two empty cells (default 1: only adjacent cells; or 'any', slower)")
    parser.add_argument("--fill-in", choices=("on", "off"), default="on",
                        help="the second solver's inferior-cell fill-in (default on; off checks proofs made with it)")
    parser.add_argument("--dominate", choices=("on", "off"), default="on",
                        help="the second solver's dominated-move pruning (default on; off checks proofs made with it)")
    parser.add_argument("--table-bits", type=int, default=22, choices=range(10, 31), metavar="B",
                        help="the second solver's table holds 2**B positions (default 22; 8x8 openings want 25-26)")
    parser.add_argument("--seconds", type=float, default=None, help="the second solver's time a position (default: none)")
    parser.add_argument("--json", default="runs/bench/verify_proofs.json", help="where the results go")
    args = parser.parse_args(argv)
    try:
        cells = None if args.cell_carriers == "any" else int(args.cell_carriers)
    except ValueError:
        parser.error("--cell-carriers: 'any' or a whole number")
    try:
        result = verify(args.book, args.depth, args.nodes, cells, args.fill_in == "on", args.seconds, args.json,
                        dominate=args.dominate == "on", table_bits=args.table_bits)
    except (BookError, SolverError, OSError) as err:
        print(f"verify_proofs: {args.book}: {err}", file=sys.stderr)
        return 2
    print(f"{args.book}: {result['agree']} of {result['exact']} exact results found again, {result['disagree']} "
          f"contradicted, {result['unsettled']} unsettled within {args.nodes} nodes"
          f"{'' if args.seconds is None else f' or {args.seconds:g} s'}")
    print(f"written {write_json(args.json, result)}")
    return 1 if result["disagree"] else 0


if __name__ == "__main__":
    raise SystemExit(main())

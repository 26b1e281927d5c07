"""The native Hex solver's cost on chosen openings, under each setting of its inferior-cell analysis.

    python benchmarks/solver_openings.py --size 7 --openings a1,b1,c1,d1,a2 --prune on,off --seconds 300
    python benchmarks/solver_openings.py --size 7 --openings a1,b1,c1,d1,a2 --dominate on,off --seconds 300
    python benchmarks/solver_openings.py --size 7 --openings a1,b1,c1,d1,a2 --prune on --through-sides off,on

For every opening (the first player's stone there, the second to move, no swap) and every setting,
a fresh table and one search: its result (the winner, or none within ``--seconds``), node
expansions, positions evaluated, moves left out as vulnerable and as dominated, and CPU seconds (``time.process_time``:
other load on the machine slows it less than the clock). Settings alternate opening by opening, so
both see the same load. Prints a table and writes ``--json`` (default
``runs/bench/solver_openings.json``) after every search.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from conhex_zero.analysis.native_solver import NativeHexSolver
from conhex_zero.games.hex import hex_board


def hole(n: int, name: str) -> int:
    column, row = "abcdefgh".index(name[0]), int(name[1:]) - 1
    if not 0 <= column < n or not 0 <= row < n:
        raise ValueError(f"{name} is not a hole of Hex {n}x{n}")
    return row * n + column


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=7, choices=range(3, 9), metavar="N", help="Hex N x N (3-8; default 7)")
    parser.add_argument("--openings", default="a1,b1,c1,d1", help="comma-separated first moves (default a1,b1,c1,d1)")
    parser.add_argument("--prune", default="on,off", help="vulnerable-move pruning settings to compare (default on,off)")
    parser.add_argument("--dominate", default="on", help="dominated-move pruning settings to compare (default on)")
    parser.add_argument("--through-sides", default="off",
                        help="H-search's AND rule over a side as the middle, settings to compare (default off)")
    parser.add_argument("--fill-in", default="on", choices=("on", "off"), help="inferior-cell fill-in (default on)")
    parser.add_argument("--seconds", type=float, default=300.0, help="CPU-time limit of one search (default 300)")
    parser.add_argument("--table-bits", type=int, default=22, help="log2 of the table's entries (default 22)")
    parser.add_argument("--json", default="runs/bench/solver_openings.json", help="where the results go")
    args = parser.parse_args()
    try:
        openings = [(name, hole(args.size, name)) for name in args.openings.lower().split(",") if name]
    except ValueError as err:
        parser.error(str(err))
    settings = []
    for text, option in ((args.prune, "--prune"), (args.dominate, "--dominate"), (args.through_sides, "--through-sides")):
        values = [v.strip() for v in text.lower().split(",") if v.strip()]
        if not values or any(v not in ("on", "off") for v in values):
            parser.error(f"{option} takes on, off or both (on,off), not {text!r}")
        settings.append([v == "on" for v in values])
    combos = [(prune, dominate, sides) for prune in settings[0] for dominate in settings[1] for sides in settings[2]]
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    print(f"Hex {args.size}x{args.size}, fill-in {args.fill_in}, at most {args.seconds:g} CPU s a search")
    print(f"{'opening':8} {'prune':6} {'dominate':8} {'sides':6} {'winner':>6} {'expansions':>11} {'evaluated':>10} {'pruned':>9} "
          f"{'dominated':>9} {'cpu s':>8}")
    for name, cell in openings:
        for prune, dominate, sides in combos:
            solver = NativeHexSolver(hex_board(args.size), table_bits=args.table_bits, fill_in=args.fill_in == "on",
                                     prune_vulnerable=prune, prune_dominated=dominate, through_sides=sides)
            solver.lib.hs_clear()
            evaluated, pruned = solver.lib.hs_evaluations(), solver.lib.hs_pruned()
            dominated = solver.lib.hs_dominated_count()
            started = time.process_time()
            winner = solver.winner_within(1 << cell, 0, 1, None, args.seconds)
            row = {"opening": name, "prune": prune, "dominate": dominate, "through_sides": sides, "winner": winner,
                   "expansions": solver.nodes,
                   "evaluated": solver.lib.hs_evaluations() - evaluated, "pruned": solver.lib.hs_pruned() - pruned,
                   "dominated": solver.lib.hs_dominated_count() - dominated,
                   "cpu_seconds": round(time.process_time() - started, 2)}
            rows.append(row)
            print(f"{name:8} {'on' if prune else 'off':6} {'on' if dominate else 'off':8} {'on' if sides else 'off':6} "
                  f"{'-' if winner is None else ('first' if winner == 0 else 'second'):>6} "
                  f"{row['expansions']:>11,} {row['evaluated']:>10,} {row['pruned']:>9,} {row['dominated']:>9,} "
                  f"{row['cpu_seconds']:>8.1f}", flush=True)
            out.write_text(json.dumps({"machine": platform.processor() or platform.machine(), "python": platform.python_version(),
                                       "command": "python benchmarks/solver_openings.py " + " ".join(
                                           f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items()),
                                       "size": args.size, "rows": rows}, indent=1) + "\n")
    for prune, dominate, sides in combos:
        done = [r for r in rows if (r["prune"], r["dominate"], r["through_sides"]) == (prune, dominate, sides)]
        print(f"prune {'on' if prune else 'off'}, dominate {'on' if dominate else 'off'}, "
              f"through sides {'on' if sides else 'off'}: {sum(r['winner'] is not None for r in done)} of {len(done)} settled, "
              f"{sum(r['cpu_seconds'] for r in done):.1f} CPU s, {sum(r['expansions'] for r in done):,} expansions")
    print(f"written {out}")


if __name__ == "__main__":
    main()

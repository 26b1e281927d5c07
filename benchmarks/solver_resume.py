"""What a native-solver search carried between runs loses: cut, keep some entries, go on from them.

    python benchmarks/solver_resume.py --size 7 --opening a2 --cut 80000 --keep 1024,4096,16384,65536,262144

For the opening (the first player's stone there, the second to move, no swap): one uninterrupted
search, then for each ``--keep`` count a search cut at ``--cut`` expansions, its ``export_table``
(the entries with the most work below the root, at most that many, as ``book prove`` saves them:
``SAVED_ENTRIES``), a fresh table loaded with them, and the search run to its end. Prints the
expansions after the reload and the extra work against the uninterrupted search, and writes
``--json`` (default ``runs/bench/solver_resume.json``). Expansions are exact; CPU seconds
(``time.process_time``) depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from conhex_zero.analysis.native_solver import SAVED_ENTRIES, NativeHexSolver
from conhex_zero.games.hex import hex_board


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=7, choices=range(3, 9), metavar="N", help="Hex N x N (default 7)")
    parser.add_argument("--opening", default="a2", help="the first move (default a2)")
    parser.add_argument("--cut", type=int, default=80_000, help="expansions before the cut (default 80000)")
    parser.add_argument("--keep", default=f"1024,4096,16384,65536,{SAVED_ENTRIES}",
                        help="entries kept at the cut, comma-separated (default: four sizes and SAVED_ENTRIES)")
    parser.add_argument("--table-bits", type=int, default=22, help="log2 of the table's entries (default 22)")
    parser.add_argument("--json", default="runs/bench/solver_resume.json", help="where the results go")
    args = parser.parse_args()
    name = args.opening.lower()
    try:
        column, row = "abcdefgh".index(name[0]), int(name[1:]) - 1
        keeps = [int(k) for k in args.keep.split(",") if k.strip()]
    except (ValueError, IndexError):
        parser.error(f"--opening {args.opening!r} or --keep {args.keep!r} is not understood")
    if not (0 <= column < args.size and 0 <= row < args.size) or not keeps or min(keeps) < 1 or args.cut < 1:
        parser.error("an opening on the board, --keep counts of at least 1 and a positive --cut")
    solver = NativeHexSolver(hex_board(args.size), table_bits=args.table_bits)
    root = (0, 1 << (row * args.size + column), 1)

    def solve(max_nodes: int | None = None) -> tuple[bool | None, int]:
        found = solver.prove(*root, max_nodes=max_nodes)
        return (None if found is None else found[0]), solver.nodes

    solver.lib.hs_clear()
    started = time.process_time()
    winner, whole = solve()
    rows = [{"kept": None, "entries": None, "after": whole, "extra": 0, "cpu_seconds": round(time.process_time() - started, 2)}]
    print(f"Hex {args.size}x{args.size} {name}: {whole:,} expansions uninterrupted "
          f"({'the player to move wins' if winner else 'the player to move loses'})")
    print(f"{'kept':>8} {'entries':>8} {'after the cut':>14} {'extra':>9} {'cpu s':>7}")
    for most in keeps:
        solver.lib.hs_clear()
        started = time.process_time()
        settled, before = solve(args.cut)
        if settled is not None:
            parser.error(f"{name} is settled within --cut {args.cut}: give a smaller cut")
        data = solver.export_table(most=most, below=root)
        solver.lib.hs_clear()
        entries = solver.import_table(data)
        _, after = solve()
        row_ = {"kept": most, "entries": entries, "after": after, "extra": before + after - whole,
                "cpu_seconds": round(time.process_time() - started, 2)}
        rows.append(row_)
        print(f"{most:>8,} {entries:>8,} {after:>14,} {row_['extra']:>+9,} {row_['cpu_seconds']:>7.1f}", flush=True)
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": platform.processor() or platform.machine(), "python": platform.python_version(),
                               "command": "python benchmarks/solver_resume.py " + " ".join(
                                   f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items()),
                               "size": args.size, "opening": name, "cut": args.cut, "rows": rows}, indent=1) + "\n")
    print(f"written {out}")


if __name__ == "__main__":
    main()

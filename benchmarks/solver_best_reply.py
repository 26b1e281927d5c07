"""What a proof of an opening costs the native solver, against a proof of the book's best reply alone.

    python benchmarks/solver_best_reply.py checkpoints/books/hex7-l4h64c-v5 --seconds 120
    python benchmarks/solver_best_reply.py checkpoints/books/hex7-l4h64c-v5 --doubts --openings b2,d2
    python benchmarks/solver_best_reply.py checkpoints/books/hex7-l4h64c-v5 --doubts --next-best 3 --openings b2

For every opening (one stone, no swap left) where the book has the player to move (the replier)
winning, two searches, each with a fresh table and in the frame of the opening's book key (the
solver's move order is not symmetric: the same opening in a mirror image can cost three times as
much): the opening itself (the search free to choose among the replies) and the position after the
book's best reply (``book prove --best-replies``: a proof that this reply wins decides the opening).
``--doubts``: the openings where the book has the replier losing instead, and the replier's best try
(``book prove --doubts``: a proof that the try wins overturns the book; the opening's own search says
whether the book was right). ``--next-best K``: where the move fails, the book's next best moves
in turn (``book prove --next-best``), up to K, until one wins.
Prints node expansions and CPU seconds (``time.process_time``) of each and whether the reply won,
and writes ``--json`` (default ``runs/bench/solver_best_reply.json``). Expansions are exact whatever
else the machine runs; seconds are not.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

from conhex_zero.analysis.native_solver import NativeHexSolver
from conhex_zero.book.folder import open_book
from conhex_zero.book.hints import best_move, best_reply, best_try, ranked_moves
from conhex_zero.book.prove import key_depth
from conhex_zero.book.shared import solver_form
from conhex_zero.games.game import parse_game


def search(solver: NativeHexSolver, mine: int, theirs: int, player: int, seconds: float) -> dict:
    """One search from a fresh table: does the mover (player, holding mine) win, expansions, CPU s."""
    solver.lib.hs_clear()
    started = time.process_time()
    result = solver.prove(mine, theirs, player, None, seconds)
    return {"mover_wins": None if result is None else result[0], "expansions": solver.nodes,
            "cpu_seconds": round(time.process_time() - started, 2)}


def next_moves(opened, key: str, best: int, most: int) -> list[int]:
    """The book's moves at ``key`` after ``best``, in its order (the mover's best first), at most ``most``,
    while the search of the moves not in the book does not rate them below another (``hints.best_move``)."""
    return [action for action in ranked_moves(opened, key) if action != best][:most]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("book", help="a book folder of Hex up to 8x8")
    parser.add_argument("--openings", default=None, help="only these first moves, comma-separated (default: all)")
    parser.add_argument("--seconds", type=float, default=120.0, help="CPU-time limit of one search (default 120)")
    parser.add_argument("--doubts", action="store_true",
                        help="the openings the book has lost for the replier, and the replier's best try (default: those it "
                        "has won for the replier, and its best reply)")
    parser.add_argument("--next-best", type=int, default=1, metavar="K",
                        help="where the best move fails, try the book's next best in turn, up to K moves (default 1)")
    parser.add_argument("--table-bits", type=int, default=22, help="log2 of the table's entries (default 22)")
    parser.add_argument("--json", default="runs/bench/solver_best_reply.json", help="where the results go")
    args = parser.parse_args()
    if args.next_best < 1:
        parser.error(f"--next-best takes a number of moves, 1 or more, not {args.next_best}")
    opened = open_book(args.book)
    game = parse_game(opened.game)
    name = game.action_name
    wanted = None if args.openings is None else {m.strip().lower() for m in args.openings.split(",") if m.strip()}
    solver = NativeHexSolver(game.board, table_bits=args.table_bits)
    nodes = opened.book.nodes
    rows = []
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    kind = "lost for the replier, and its best try" if args.doubts else "won for the replier, and its best reply"
    print(f"{opened.game}, book {args.book}: the openings it has {kind}, at most {args.seconds:g} CPU s a search")
    print("searched as: the key's image (its stone and whose it is); its reply in that frame")
    print(f"{'opening':8} {'searched as':12} {'reply':6} {'reply wins':>10} {'opening: expansions':>20} {'cpu s':>7} "
          f"{'reply: expansions':>18} {'cpu s':>7}")
    for key in sorted(k for k, n in nodes.items() if key_depth(k) == 1 and k.endswith("|-")):
        # both searches in the frame of the opening's key (the solver's move order is not symmetric)
        mine, theirs, player = solver_form(key)
        opening = name(nodes[key].line[0])  # the book's real first move; searched as the key's image
        frame = f"{name((mine | theirs).bit_length() - 1)}/{'first' if player else 'second'}"
        if wanted is not None and opening not in wanted:
            continue
        if (best_try if args.doubts else best_reply)(opened, key) is None:
            continue
        action = best_move(opened, key, losing=args.doubts)
        reply = name(action)
        root = search(solver, mine, theirs, player, args.seconds)
        focused = search(solver, theirs, mine | 1 << action, 1 - player, args.seconds)
        wins = None if focused["mover_wins"] is None else not focused["mover_wins"]
        later = []  # the next best moves, in the book's order, while the moves before them fail
        for move in next_moves(opened, key, action, args.next_best - 1) if wins is False else []:
            tried = search(solver, theirs, mine | 1 << move, 1 - player, args.seconds)
            won = None if tried["mover_wins"] is None else not tried["mover_wins"]
            later.append({"move": name(move), "wins": won, "search": tried})
            if won is not False:
                break
        rows.append({"opening": opening, "searched_as": frame, "reply": reply, "reply_wins": wins,
                     "book_value": round(nodes[key].value, 4), "mode": "doubts" if args.doubts else "best replies",
                     "opening_search": root, "reply_search": focused, "next_moves": later,
                     "won_by": reply if wins else next((m["move"] for m in later if m["wins"]), None),
                     "moves_expansions": focused["expansions"] + sum(m["search"]["expansions"] for m in later)})
        print(f"{opening:8} {frame:12} {reply:6} {('-' if wins is None else 'yes' if wins else 'no'):>10} {root['expansions']:>20,} "
              f"{root['cpu_seconds']:>7.1f} {focused['expansions']:>18,} {focused['cpu_seconds']:>7.1f}", flush=True)
        for m in later:
            print(f"{'':8} {'next best':12} {m['move']:6} {('-' if m['wins'] is None else 'yes' if m['wins'] else 'no'):>10} "
                  f"{'':>20} {'':>7} {m['search']['expansions']:>18,} {m['search']['cpu_seconds']:>7.1f}", flush=True)
        out.write_text(json.dumps({"machine": platform.processor() or platform.machine(), "python": platform.python_version(),
                                   "command": "python benchmarks/solver_best_reply.py " + " ".join(sys.argv[1:]),
                                   "game": opened.game, "book": args.book, "doubts": args.doubts, "rows": rows}, indent=1) + "\n")
    settled = [r for r in rows if r["opening_search"]["mover_wins"] is not None and r["reply_search"]["mover_wins"] is not None]
    if args.doubts:
        wrong = [r for r in settled if r["opening_search"]["mover_wins"]]
        print(f"the book wrong at {len(wrong)} of {len(settled)} settled openings; its best try won (the book overturned) at "
              f"{sum(r['reply_wins'] is True for r in wrong)} of them"
              + (f", one of its {args.next_best} best at {sum(r['won_by'] is not None for r in wrong)}, "
                 f"{sum(r['moves_expansions'] for r in wrong):,} expansions for those moves against "
                 f"{sum(r['opening_search']['expansions'] for r in wrong):,} for the openings" if args.next_best > 1 else ""))
    print(f"{len(rows)} openings, {sum(r['reply_wins'] is True for r in rows)} best {'tries' if args.doubts else 'replies'} won; "
          f"both settled on {len(settled)}: "
          f"{sum(r['opening_search']['expansions'] for r in settled):,} expansions for the openings, "
          f"{sum(r['reply_search']['expansions'] for r in settled):,} for the best moves; the move cheaper on "
          f"{sum(r['reply_search']['expansions'] < r['opening_search']['expansions'] for r in settled)}")
    print(f"written {out}")


if __name__ == "__main__":
    main()

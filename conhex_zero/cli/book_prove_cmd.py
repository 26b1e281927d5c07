"""``conhex-zero book prove``: the native Hex solver's proofs written into a book (``book/prove.py``)."""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from conhex_zero.cli.book_common import BookLock, line_name, open_checked
from conhex_zero.cli.common import CliError, HelpFormatter
from conhex_zero.cli.numbers import Real, Whole
from conhex_zero.console.words import plural

if TYPE_CHECKING:
    from conhex_zero.book.shared import Copied

NODES = Whole(1, 1_000_000_000)
MINUTES = Real(0.0, 7 * 24 * 60.0, above=True, what="a number of minutes")
DEPTH = Whole(0, 64)
TABLE_BITS = Whole(12, 28)
WORKERS = Whole(1, 64)
NEXT_BEST = Whole(1, 64)
KEEP_MINUTES = Real(0.0, 7 * 24 * 60.0, what="a number of minutes")


def add_prove_parser(what: argparse._SubParsersAction) -> None:
    prove = what.add_parser(
        "prove", help="prove the book's Hex positions with the native solver (exact values, shallowest first)",
        formatter_class=HelpFormatter,
        description="Try the native Hex solver (inferior-cell fill-in, H-search and proof-number search in C, built at first use with "
        "the system's C compiler; Hex boards up to 8x8, no swap) on the book's positions, the openings first, "
        "then the replies, each within --nodes expansions, until --minutes. Every position it settles gets an "
        "exact result, which the book's minimax keeps and carries up: an opening it proves is decided by the "
        "proof, whatever the network believed. Results are appended as they come (a stopped run keeps them); "
        "positions already exact or proven are skipped, so running it again with a larger --nodes goes on; a long "
        "search cut short is kept in the book and goes on where it stopped (--keep-after).",
        epilog="examples:\n  conhex-zero book prove checkpoints/books/hex6-l4h64 --depth 1 --minutes 15\n"
               "  conhex-zero book prove checkpoints/books/hex6-l4h64 --deepest-first --nodes 2000 --minutes 10\n"
               "  conhex-zero book prove checkpoints/books/hex8-l4h64c-v6 --first-moves a1,a2 --depth 1 --workers 2\n"
               "  conhex-zero book prove checkpoints/books/hex8-l4h64c-v5-own --position 'f2 d5' --next-best 3\n"
               "  conhex-zero book prove checkpoints/books/hex8-l4h64c-v6 --from checkpoints/books/hex8-l4h64c-v5-own --copy-only")
    prove.add_argument("book", metavar="DIR", help="a book folder of a Hex game (up to 8x8, no swap)")
    prove.add_argument("--nodes", type=NODES, default=100_000, metavar="N",
                       help="node expansions the solver may spend on one position (default: 100000)")
    prove.add_argument("--minutes", type=MINUTES, default=None, metavar="M",
                       help="stop after M minutes, the search in flight included (default: try every candidate)")
    prove.add_argument("--depth", type=DEPTH, default=None, metavar="D",
                       help="only positions with at most D pieces on the board (1: the openings; default: all)")
    prove.add_argument("--deepest-first", action="store_true",
                       help="the book's deepest positions first (its leaves: small budgets settle them, and their proofs "
                       "carry up through its minimax), instead of the openings first")
    prove.add_argument("--table-bits", type=TABLE_BITS, default=22, metavar="B",
                       help="the solver's table holds 2**B positions, 48 bytes each (default: 22, 192 MiB)")
    prove.add_argument("--first-moves", default=None, metavar="MOVES",
                       help="only the positions reached by these first moves or their mirror images, comma-separated "
                       "(e.g. a1,b2; default: every position); at each depth, in the order given (a queue: with --workers, "
                       "a worker whose search ends takes the next)")
    prove.add_argument("--position", dest="positions", action="append", default=[], metavar="MOVES",
                       help="only this book position, named by its moves from the book's start (e.g. 'f2 d5' or f2,d5; "
                       "repeatable, tried in the order given, instead of the book's candidates; not with --depth, "
                       "--first-moves or --deepest-first). With --next-best K, where the solver proves the position won "
                       "for its mover (the move into it fails), the book's next best move at the position before it is "
                       "tried; with --best-replies or --doubts, the position after its best move instead")
    prove.add_argument("--best-replies", action="store_true",
                       help="instead of each position the book has won for the player to move, try the position after "
                       "the book's best move there (one piece deeper; positions the book has lost are left out): a "
                       "proof that this move wins decides the position, and the search spends nothing on the other "
                       "moves; where the move does not win, the search says so and nothing is decided above it")
    prove.add_argument("--doubts", action="store_true",
                       help="instead of each position the book has lost for the player to move, try the position after "
                       "the mover's best book move there, its best try (one piece deeper; positions the book has won are "
                       "left out unless --best-replies is given too): a proof that the try wins overturns the book there, "
                       "whatever the network believed; a proof that it loses settles that move, and the book turns to the "
                       "next best try. The cheapest check of a claim near 50%%")
    prove.add_argument("--next-best", type=NEXT_BEST, default=1, metavar="K",
                       help="with --best-replies or --doubts: where the solver proves a best move does not win, try the "
                       "book's next best move there at once, up to K moves a position (default: 1, the best only)")
    prove.add_argument("--workers", type=WORKERS, default=1, metavar="W",
                       help="W processes, each with its own solver and table, take the positions in turn (default: 1; "
                       "2 on two cores roughly halves a run)")
    prove.add_argument("--keep-after", type=KEEP_MINUTES, default=5.0, metavar="M",
                       help="a search cut short after running at least M CPU minutes is saved into the book (DIR/searches/, "
                       "every 10 minutes while it runs and when it stops) and the next run that tries the position goes "
                       "on from it; a proof deletes it (default: 5; 0 keeps every search cut short)")
    prove.add_argument("--no-keep", action="store_true",
                       help="neither load nor save searches cut short (every search starts from nothing)")
    prove.add_argument("--from", dest="sources", action="append", default=[], metavar="SRC",
                       help="first copy the exact results of SRC for the positions this book holds: SRC is another book of "
                       "the same game, or a saved search file (a book's searches/*.xz, or a copy of one from its history: the "
                       "positions its table solved); repeatable. A proof is the position's, whatever book or search made it; a "
                       "result that contradicts this book's own proofs is an error and nothing is copied")
    prove.add_argument("--copy-only", action="store_true",
                       help="with --from: copy the results and stop (no solver run, no C compiler needed)")
    prove.add_argument("--list", action="store_true",
                       help="print the positions the run would try, in order (each by its moves, why it is a candidate, "
                       "the book's value there and any saved search), and stop: no search, the book untouched; with --from, as the "
                       "book would be after the copies (a saved search file as SRC needs the C compiler to be read)")
    prove.add_argument("--quiet", action="store_true", help="no progress bar")
    prove.set_defaults(run=run_prove)


def copy_proofs(args: argparse.Namespace, opened) -> dict[str, int]:
    """--from: every source's exact results for this book's positions, checked against each other and
    against this book's own before any is written; the results copied (key -> result for the mover)."""
    from conhex_zero.book.shared import write_copied

    copied = gather_copies(args, opened)
    write_copied(opened, copied)
    return copied


def gather_copies(args: argparse.Namespace, opened) -> dict[str, int]:
    """The exact results --from would copy (key -> result for the mover), every check made; nothing written."""
    from conhex_zero.book.prove import key_depth
    from conhex_zero.book.shared import copy_exact

    copied: dict[str, int] = {}
    for source in args.sources:
        if Path(source).resolve() == Path(opened.folder).resolve():
            raise CliError(f"--from {source}: that is the book being proved")
        if Path(source).is_file():
            found = copy_from_search(Path(source), opened)
        else:
            try:
                found = copy_exact(open_checked(source), opened)
            except ValueError as err:
                raise CliError(f"--from {source}: {err}") from None
        clashes = found.conflicts + [(k, r, copied[k]) for k, r in found.copied.items() if copied.get(k, r) != r]
        if clashes:
            lines = "\n".join(f"  {k} ({key_depth(k)} pieces): {source} says the mover {'wins' if r > 0 else 'loses'}, "
                              f"the other says {'wins' if t > 0 else 'loses'}" for k, r, t in clashes[:5])
            raise CliError(f"--from {source}: {len(clashes)} exact results contradict {args.book}'s (nothing copied; "
                           f"a solver build was wrong: check both with benchmarks/verify_proofs.py):\n{lines}")
        copied.update(found.copied)
        print(f"{source}: {plural(len(found.copied), 'exact result')} to copy, {found.agreed} already here", flush=True)
    return copied


def copy_from_search(path: Path, opened) -> Copied:
    """--from FILE: the exact results a saved search (a book's searches/*.xz, or a copy of one from its
    history) holds for the book's positions, as ``copy_exact`` reports another book's."""
    from conhex_zero.analysis.native_solver import NativeHexSolver, NativeSolverUnavailable
    from conhex_zero.analysis.solver import SolverError
    from conhex_zero.book import carried
    from conhex_zero.book.shared import copy_from_table
    from conhex_zero.games.game import parse_game

    game = parse_game(opened.game) if isinstance(opened.game, str) else opened.game
    try:
        solver = NativeHexSolver(game.board, table_bits=20)
        saved = carried.read(path, solver.size, solver.entry_bytes)
    except NativeSolverUnavailable as err:
        raise CliError(str(err)) from None
    except (SolverError, ValueError) as err:
        raise CliError(f"--from {path}: {err}") from None
    solver.lib.hs_clear()
    solver.import_table(saved.entries)
    return copy_from_table(solver, opened)


def run_prove(args: argparse.Namespace) -> int:
    opened = open_checked(args.book)
    if args.copy_only and not args.sources:
        raise CliError("--copy-only copies the results of --from SRC: name a book to copy from")
    missing = [source for source in args.sources if not Path(source).exists()]
    if missing:
        raise CliError(f"--from {missing[0]}: no such book folder or saved search file")
    if args.next_best > 1 and not (args.best_replies or args.doubts or args.positions):
        raise CliError("--next-best follows a failed best move: give --best-replies, --doubts or --position with it")
    if args.positions:
        clash = [flag for flag, given in (("--depth", args.depth is not None), ("--first-moves", args.first_moves is not None),
                                          ("--deepest-first", args.deepest_first), ("--copy-only", args.copy_only)) if given]
        if clash:
            raise CliError(f"--position names the positions to try: not with {' or '.join(clash)}")
    if args.list and args.copy_only:
        raise CliError("--list prints what a proof run would try: not with --copy-only")
    if args.copy_only:
        with BookLock(opened.folder):
            copied = copy_proofs(args, opened)
            store_run(opened, {"type": "prove", "command": command_line(), "minutes": 0.0, "nodes": 0, "workers": 0,
                               "tried": 0, "proved": 0, "copied": len(copied), "from": args.sources,
                               "ended": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
            print(f"{args.book}: {plural(len(copied), 'exact result')} copied")
            report_forgotten(opened)
        print(f"conhex-zero book show {args.book}   (the first-move table)")
        return 0
    from conhex_zero.book.prove import first_move_ranks
    from conhex_zero.games.game import parse_game

    game = parse_game(opened.game) if isinstance(opened.game, str) else opened.game
    if not game.spec.startswith("hex-"):
        raise CliError(f"{args.book}: a book of {opened.game}: the native solver proves positions of Hex boards only (up to 8x8)")
    if getattr(game, "swap", False):
        raise CliError(f"{args.book}: a book of {opened.game} (with the pie rule): the native solver plays Hex without it")
    first_moves = None
    if args.first_moves is not None:
        names = [n.strip().lower() for n in args.first_moves.split(",") if n.strip()]
        if not names:
            raise CliError("--first-moves: give hole names, comma-separated (e.g. a1,b2)")
        try:
            first_moves = first_move_ranks(game.board, names)
        except ValueError as err:
            raise CliError(f"--first-moves: {err}") from None
    named = None
    if args.positions:
        from conhex_zero.book.named import named_positions

        try:
            found = named_positions(opened, args.positions)
        except ValueError as err:
            raise CliError(f"--position {err}") from None
        named = [(p.above, p.key) for p in found]
    if args.list:
        if args.sources:  # the queue a run would take after its copies: applied in memory, no file written
            from conhex_zero.book.shared import apply_copied

            copied = gather_copies(args, opened)
            apply_copied(opened, copied)
            print(f"(--from: the list counts the {plural(len(copied), 'exact result')} a run copies first; "
                  "nothing is copied now)")
        return list_candidates(args, opened, first_moves, named)
    from conhex_zero.analysis.native_solver import NativeHexSolver, NativeSolverUnavailable
    from conhex_zero.analysis.solver import SolverError

    try:
        # with workers, each has its own table: this one only checks the board (a small table)
        solver = NativeHexSolver(game.board, table_bits=args.table_bits if args.workers == 1 else 12)
    except NativeSolverUnavailable as err:
        raise CliError(str(err)) from None
    except SolverError as err:
        raise CliError(f"{args.book}: a book of {opened.game}: {err}") from None
    with BookLock(opened.folder):
        return _prove_locked(args, opened, solver, first_moves, named)


def report_settled(opened, named: list[tuple[str | None, str]]) -> None:
    """One line for each position named by --position that the book has settled already (not tried)."""
    for _, key in named:
        node = opened.book.nodes[key]
        if node.exact or node.proven:
            print(f"  {line_name(opened, key)}: settled already (the mover {'wins' if (node.exact or node.proven) > 0 else 'loses'})")


SAID_SECONDS = 10.0
"""A searched position is said as it settles (a line of its own) when its search took at least this
many CPU seconds, or when its proof is on the other side of the book's value."""


def settled_line(opened, key: str, result: int | None, nodes: int, seconds: float) -> str | None:
    """One searched position's outcome as the run goes (--quiet too): proved for or against its mover,
    beside the book's value before the proof, or not settled in its budget; its CPU time. None for a
    quick search whose result is the book's side (a shallow run's hundreds are counted, not listed)."""
    from conhex_zero.book.carried import cpu_time

    node = opened.book.nodes.get(key)
    book = None if node is None else 50 * (1 + node.value)  # the book's chance for the mover, before the proof
    against = result is not None and book is not None and (book > 50) != (result > 0)
    if seconds < SAID_SECONDS and not against:
        return None
    name, took = line_name(opened, key), cpu_time(seconds)
    if result is None:
        return f"  {name}: not settled in {plural(nodes, 'expansion')} ({took} this run)"
    side = "" if book is None else \
        f" (the book had {book:.1f}% for the mover: {'the other side' if against else 'its side'})"
    return f"  {name}: proved, the player to move {'wins' if result > 0 else 'loses'}{side}; {took} this run"


def list_candidates(args: argparse.Namespace, opened, first_moves, named) -> int:
    """--list: the run's positions in order, each with why it is one, the book's value and saved search."""
    from conhex_zero.book.carried import describe, saved_searches
    from conhex_zero.book.prove import candidate_pairs, named_pairs

    if named is None:
        pairs = candidate_pairs(opened, args.depth, args.deepest_first, first_moves, args.best_replies, args.doubts)
    else:
        report_settled(opened, named)
        pairs = named_pairs(opened, named, args.best_replies, args.doubts)
    nodes = opened.book.nodes
    kept = {h.get("key"): h for h in saved_searches(opened.folder)}
    print(f"{args.book}: {plural(len(pairs), 'candidate')} for a proof, in the order a run takes them"
          f"{' (a worker whose search ends takes the next)' if args.workers > 1 else ''}:")
    for number, (above, key) in enumerate(pairs, 1):
        mover = 50 * (1 + nodes[key].value)
        if above is None:
            why = "named" if named is not None else "the position"
        else:
            what = ("named, a move" if named is not None and not (args.best_replies or args.doubts)
                    else f"the best {'reply' if nodes[above].value > 0 else 'try'}")
            why = f"{what} at {line_name(opened, above)} ({50 * (1 + nodes[above].value):.1f}% there for its mover)"
        saved = kept.get(key)
        print(f"  {number:>3}. {line_name(opened, key)}: {why}; the book has {mover:.1f}% for the mover here"
              + (f"; saved search: {describe(saved)}" if saved else ""))
    if args.next_best > 1:
        print(f"(--next-best {args.next_best}: where a best move fails, the next best at the same position comes next)")
    return 0


def report_forgotten(opened) -> None:
    """Delete the saved searches of positions the book has settled meanwhile, and say so."""
    from conhex_zero.book.prove import forget_settled_searches

    gone = forget_settled_searches(opened)
    if gone:
        print(f"{plural(len(gone), 'saved search', 'saved searches')} of positions the book has settled since "
              f"deleted: {', '.join(line_name(opened, k) for k in gone)}")


def kept_lines(opened, kept: list[dict]) -> list[str]:
    """One line per kept search: its position's moves from the book's start, CPU time, runs and proof numbers."""
    from conhex_zero.book.carried import describe

    return [f"  {line_name(opened, h.get('key'))}: {describe(h)}" for h in kept]


def command_line() -> str:
    return "conhex-zero " + " ".join(shlex.quote(a) for a in sys.argv[1:])


def store_run(opened, run: dict) -> None:
    from conhex_zero.book import store

    store.append(opened.folder, [run])


def _prove_locked(args: argparse.Namespace, opened, solver, first_moves, named=None) -> int:
    """The copies (--from), then the proof run, with the book's lock held."""
    from conhex_zero.book.carried import cpu_time, saved_searches, seconds_spent
    from conhex_zero.book.prove import Keep, candidates, named_pairs, prove_book
    from conhex_zero.console.progress import progress_bar

    copied = copy_proofs(args, opened) if args.sources else {}
    if named is None:
        todo = candidates(opened, args.depth, args.deepest_first, first_moves, args.best_replies, args.doubts)
    else:
        report_settled(opened, named)
        todo = [key for _, key in named_pairs(opened, named, args.best_replies, args.doubts)]
    deeper = {(True, False): ": the position after the best move of each the book has won for its mover",
              (False, True): ": the position after the mover's best try at each the book has lost for its mover",
              (True, True): ": the position after the best move of each (a reply where the book has its mover "
                            "winning, a try where losing)"}.get((args.best_replies, args.doubts), "")
    print(f"{args.book}: {len(opened.book)} positions, {plural(len(todo), 'candidate')} for a proof"
          f"{'' if args.depth is None else f' (at most {args.depth} pieces)'}"
          f"{'' if named is None else ' (named by --position)'}"
          f"{deeper}; {args.nodes} expansions each"
          f"{'' if args.workers == 1 else f', {args.workers} workers'}", flush=True)
    started = time.monotonic()
    deadline = None if args.minutes is None else started + 60 * args.minutes
    bar = progress_bar(total=len(todo), unit="position", desc="proving", disable=args.quiet)
    proved = 0
    said: list[dict] = []  # the searches said as they settled, for the run's record

    def on_added(key: str) -> None:  # a failed best move's next best (--next-best)
        bar.total += 1
        bar.refresh()

    def on_position(key: str, result: int | None, seconds: float) -> None:
        nonlocal proved
        proved += result is not None
        node = opened.book.nodes.get(key)
        line = settled_line(opened, key, result, args.nodes, seconds)
        if line:
            bar.write(line, file=sys.stdout)
            said.append({"line": line_name(opened, key), "result": result, "cpu_seconds": round(seconds, 1),
                         "book_percent": None if node is None else round(50 * (1 + node.value), 1)})
        bar.update(1)
        bar.set_postfix_str(f"{proved} proved", refresh=False)

    with bar:
        report = prove_book(opened, solver, args.nodes, deadline, args.depth, on_position=on_position,
                            deepest_first=args.deepest_first, workers=args.workers, table_bits=args.table_bits,
                            first_moves=first_moves, best_replies=args.best_replies, doubts=args.doubts,
                            next_best=args.next_best, on_added=on_added, named=named,
                            keep=None if args.no_keep else Keep(opened.folder, 60 * args.keep_after))
        run = {"type": "prove", "command": command_line(),
               "minutes": round(report.seconds / 60, 3), "nodes": args.nodes, "workers": args.workers, "tried": report.total_tried,
               "proved": report.total_proved, "ended": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        if args.sources:
            run["copied"], run["from"] = len(copied), args.sources
        if said:  # what each long search (or proof against the book's side) cost, kept with the book
            run["searches"] = said
        store_run(opened, run)
    if report.stopped == "interrupted":
        print("interrupted: every position proved so far is written", flush=True)
    if report.stopped == "time":
        untried = max(0, len(todo) + report.followed - report.total_tried - report.cut)
        print(f"stopped after {args.minutes:g} minutes: {plural(report.cut, 'search', 'searches')} cut short, "
              f"{plural(untried, 'candidate')} not tried", flush=True)
    if report.followed:
        print(f"{plural(report.followed, 'next best move')} tried where the best failed (--next-best {args.next_best})")
    for depth in sorted(report.tried):
        print(f"  {depth} pieces: {report.proved.get(depth, 0)} of {report.tried[depth]} proved")
    print(f"{args.book}: {report.total_proved} of {plural(report.total_tried, 'position')} proved in "
          f"{report.seconds / 60:.1f} minutes")
    if report.harvested:
        print(f"  and {plural(report.harvested, 'other position')} of the book settled in the searches' tables "
              f"(exact results written too)")
    if report.conflicts:
        print(f"warning: {plural(len(report.conflicts), 'position')} where a search's table contradicts the book's own "
              f"proof (neither written; a solver build is wrong): {', '.join(report.conflicts[:3])}", file=sys.stderr)
    if not args.no_keep:
        report_forgotten(opened)
    kept = [] if args.no_keep else saved_searches(opened.folder)
    if kept:
        print(f"{plural(len(kept), 'search', 'searches')} cut short kept in {opened.folder / 'searches'} "
              f"({cpu_time(seconds_spent(kept))} in all; "
              f"the next run goes on from them)")
        for line in kept_lines(opened, kept):
            print(line)
    print(f"conhex-zero book show {args.book}   (the first-move table)")
    return 130 if report.stopped == "interrupted" else 0

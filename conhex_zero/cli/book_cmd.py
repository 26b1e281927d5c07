"""``conhex-zero book grow|html|starts``: an opening book that grows from the first move into a
tree of searched positions, corrects itself by minimax, and is read as linked pages (``book show``,
its first-move table, is in ``book_show_cmd``, ``book prove`` in ``book_prove_cmd``, what they share
in ``book_common``)."""

from __future__ import annotations

import argparse
import contextlib
import shlex
import sys
import time
from pathlib import Path

from conhex_zero.console.words import plural
from conhex_zero.cli.common import (add_backend_argument, CliError, HelpFormatter, add_threads_argument, check_output_file,
                                    preflight_checkpoint, preflight_game, resolve_device, warn)
from conhex_zero.cli.book_common import BookLock, is_book_folder, open_checked, preflight_book_folder
from conhex_zero.cli.book_prove_cmd import add_prove_parser
from conhex_zero.cli.book_show_cmd import add_show_parser, load_table
from conhex_zero.cli.numbers import MAX_SECONDS, SEED, SIMS, Real, Whole

DEFAULT_SIMS = 200
DEFAULT_BATCH = 128
NODES = Whole(1, 10_000_000)
MINUTES = Real(0.0, MAX_SECONDS / 60, above=True, what="a number of minutes")
COST = Real(0.0, 1000.0)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "book", help="an opening book: grow it, print its first-move table, write browsable pages",
        description="An opening book: the opening analysis grown from the first move into a tree of searched "
        "positions. 'book grow' searches positions best first, many at once, and backs their values up by "
        "minimax (one node per position up to the board's symmetries and move orders; proven results are "
        "exact and never replaced by an estimate); 'book show' prints the first-move table (and writes it as "
        "openings --json does); 'book html' writes static pages to browse the book move by move. The rule "
        "that chooses what to grow and the rule that calls a position decided are in docs/analysis.md, "
        "\"The opening book\".", formatter_class=HelpFormatter)
    what = p.add_subparsers(dest="what", metavar="WHAT")
    grow = what.add_parser(
        "grow", help="grow a book (a new one, or the one in --out further)", formatter_class=HelpFormatter,
        description="Grow an opening book in --out: a new folder starts a book at the empty board (or at "
        "--after's position); an existing book grows further with the same model (refused with another unless "
        "--other-model). Each round searches the cheapest positions to add (up to --batch at once) and every "
        "node whose best untried move entered the book, all in one batched search of --sims simulations each, "
        "then writes them (flushed to the disk: a killed process loses only the round in flight) and backs the "
        "values up. Stops after --nodes new positions or --minutes of wall time, whichever comes first "
        "(default: --nodes 200), or at Ctrl-C.",
        epilog="examples:\n  conhex-zero book grow checkpoints/hex5-l4h64.pt --out runs/book-hex5 --nodes 300\n"
               "  conhex-zero book grow checkpoints/conhex-l4h64-v4.pt --out runs/book-conhex --minutes 60\n"
               "  conhex-zero book grow checkpoints/conhex-l4h64-v4.pt --out runs/book-f6 --after F6 --nodes 100")
    grow.add_argument("checkpoint", metavar="CKPT", help="a checkpoint (.pt) file")
    grow.add_argument("--out", required=True, metavar="DIR", help="the book's folder (made if new)")
    grow.add_argument("--after", nargs="+", metavar="MOVE", help="a new book's start: the position after these moves")
    grow.add_argument("--game", default=None, metavar="SPEC",
                      help="the book's game (default: the one the checkpoint was trained on); a network of this "
                      "project plays every board of its family, e.g. a Hex 7x7 model on hex-8 (docs/knowledge.md)")
    grow.add_argument("--nodes", type=NODES, default=None, metavar="N", help="add at most N positions (default: 200 "
                      "when --minutes is not given)")
    grow.add_argument("--minutes", type=MINUTES, default=None, metavar="M", help="stop after M minutes of wall time "
                      "(the last round ends before them, by the time the rounds before it took)")
    grow.add_argument("--sims", type=SIMS, default=None, metavar="S",
                      help=f"simulations a position (default: the book's; {DEFAULT_SIMS} for a new book)")
    grow.add_argument("--batch", type=Whole(1, 4096), default=DEFAULT_BATCH, metavar="K",
                      help=f"positions added a round, searched at once (default: {DEFAULT_BATCH})")
    grow.add_argument("--gap-cost", type=COST, default=None, metavar="G", help="a new book's cost of a move per unit "
                      "of value below the best move's (default: 10; docs/analysis.md)")
    grow.add_argument("--sure-cost", type=COST, default=None, metavar="C", help="a new book's extra cost of a ply "
                      "per unit of |value| (default: 2)")
    grow.add_argument("--other-model", action="store_true",
                      help="grow a book that another model made (its values then mix the two)")
    grow.add_argument("--no-exact", action="store_true", help="skip the exact solver (Hex up to 5x5), and H-search "
                      "unless --connections on: the network's values alone")
    grow.add_argument("--connections", choices=("auto", "on", "off"), default="auto",
                      help="H-search's virtual connections at every searched position (Hex up to 8x8, the native "
                           "solver's C code): a position a connection decides is proven, and only its must-play "
                           "moves are searched (docs/knowledge.md); auto (default): on where the game allows it, "
                           "unless --no-exact")
    grow.add_argument("--seed", type=SEED, default=0, help="search seed (default: 0)")
    grow.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    add_threads_argument(grow)
    add_backend_argument(grow)
    grow.add_argument("--quiet", action="store_true", help="no progress bar")
    grow.set_defaults(run=run_grow)

    add_show_parser(what)

    starts = what.add_parser(
        "starts", help="write self-play start lines: the positions the book is unsure of",
        formatter_class=HelpFormatter,
        description="Write the lines of moves that reach the book's unsure positions (unproven, value within "
        "--margin of even: a win chance between 35%% and 65%% by default) at most --max-plies moves from its start, "
        "nearest the start first, one a row: the file the training key selfplay.start_lines reads, so that a share "
        "selfplay.start_fraction of the self-play games starts there (docs/knowledge.md).",
        epilog="examples:\n  conhex-zero book starts checkpoints/books/hex7-l4h64c-v2 --out runs/hex7-starts.txt\n"
               "  conhex-zero train --config configs/hex7.yaml selfplay.start_lines=runs/hex7-starts.txt")
    starts.add_argument("book", metavar="DIR", help="a book folder")
    starts.add_argument("--out", required=True, metavar="FILE", help="the text file to write")
    starts.add_argument("--max-plies", type=Whole(1, 1000), default=8, metavar="P",
                        help="only positions at most P moves from the book's start (default: 8)")
    starts.add_argument("--margin", type=COST, default=None, metavar="M",
                        help="unsure: |value| below M, value in [-1, 1] (default: the decided rule's 0.3)")
    starts.set_defaults(run=run_starts)

    html = what.add_parser(
        "html", help="write static pages to browse the book", formatter_class=HelpFormatter,
        description="Write static HTML pages into PAGES (no server, nothing fetched from the internet), one "
        "per book position nearest the start: the board with every book move marked by its value, the list of "
        "moves (value, nodes below, proven, the best line), links to each child and back along the line; "
        "index.html is the first page, with the first-move map and the swap decisions. A link goes only to a "
        "page that is written. To walk the whole book, serve it: conhex-zero serve CKPT --book DIR, then /book.",
        epilog="examples:\n  conhex-zero book html checkpoints/books/hex5-l4h64 --out runs/pages-hex5\n"
               "  conhex-zero book html checkpoints/books/conhex-l4h64-v4 --out runs/pages-conhex --depth 3 --pages 5000\n\n"
               "size: about 27 KB a ConHex page; the default 400 pages of the ConHex book: 11 MB in about 40 s")
    html.add_argument("book", metavar="DIR", help="a book folder")
    html.add_argument("--out", required=True, metavar="PAGES", help="the pages' folder (made if new)")
    html.add_argument("--depth", type=Whole(1, 1000), default=None, metavar="D",
                      help="only positions at most D moves from the start (default: no limit but --pages)")
    html.add_argument("--pages", type=Whole(1, 10_000_000), default=400, metavar="N",
                      help="at most N pages, the positions nearest the start first (default 400)")
    html.add_argument("--quiet", action="store_true", help="no progress bar")
    html.set_defaults(run=run_html)

    add_prove_parser(what)


def _out_folder(flag: str, path: str) -> Path:
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise CliError(f"{flag} {path}: not a folder")
    check_output_file(flag, p / "book.jsonl")
    return p


# --------------------------------------------------------------------------------------------- grow
def run_grow(args: argparse.Namespace) -> int:
    preflight_checkpoint(args.checkpoint)
    preflight_game(args.game)
    out = _out_folder("--out", args.out)
    exists = is_book_folder(out)
    if not exists and out.exists() and any(p.name != ".grow.lock" for p in out.iterdir()):
        raise CliError(f"--out {args.out}: the folder holds other files and no book: give a new or empty folder")
    if exists and (args.gap_cost is not None or args.sure_cost is not None):
        raise CliError("--gap-cost and --sure-cost set a new book's costs; this book keeps its own")
    made = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    try:
        # The folder's lock is taken before anything is read (issue 58: a second grow read the book,
        # spent its start-up, then compacted its stale copy over the first one's work), and before
        # torch: a second grow is refused at once.
        with BookLock(out):
            return _grow(args, out, is_book_folder(out))
    finally:
        if made and not is_book_folder(out):  # refused or failed before the book's first line: leave nothing
            (out / ".grow.lock").unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                out.rmdir()


def _checkpoint_game(path: str) -> str | None:
    """The game a checkpoint plays, read without torch (None where it cannot be told so): a book of
    another game is refused as such before the model's digest is compared."""
    from conhex_zero.files import file_seal

    try:
        game = file_seal.peek(path, ("game",)).get("game")
    except Exception:  # noqa: BLE001 - a damaged file is reported by its load
        return None
    return game if isinstance(game, str) else None


def _played_game(args: argparse.Namespace) -> str | None:
    """The game the grow plays: ``--game`` (its canonical spec) when given, else the checkpoint's
    (None where it cannot be told without torch)."""
    if args.game is not None:
        from conhex_zero.games.game import parse_game

        return parse_game(args.game).spec
    return _checkpoint_game(args.checkpoint)


def _grow(args: argparse.Namespace, out: Path, exists: bool) -> int:
    """``book grow`` with the folder's lock held."""
    nodes_budget = args.nodes if args.nodes is not None else (None if args.minutes is not None else 200)
    if exists:  # torch-free checks first: a damaged book, another model or start is refused at once
        from conhex_zero.book import folder as book_folder
        from conhex_zero.book.store import BookError
        from conhex_zero.nn.checkpoint_files import checkpoint_digest

        try:
            early = book_folder.open_book(out)
            given = None if args.after is None else [m.strip().lower() for m in args.after]
            if given is not None and given != [m.lower() for m in early.start_moves]:
                raise BookError(f"{out} starts at {' '.join(early.start_moves) or 'the empty board'}; --after "
                                f"{' '.join(args.after)} asks for another start (grow another book in another folder)")
            book_folder.check_same(early, _played_game(args) or early.game, early.start_moves,
                                   checkpoint_digest(args.checkpoint), args.checkpoint, args.other_model)
        except BookError as err:
            raise CliError(str(err)) from None

    from conhex_zero.analysis.solver import HexSolver, SolverError
    from conhex_zero.book import folder as book_folder
    from conhex_zero.book import store
    from conhex_zero.book.grow import Grower
    from conhex_zero.book.keys import Canonical, UnsupportedGame
    from conhex_zero.book.store import BookError
    from conhex_zero.console.progress import progress_bar
    from conhex_zero.env.notation import play_moves
    from conhex_zero.env.vec_env import VecEnv
    from conhex_zero.nn.checkpoint import CheckpointError, load_checkpoint
    from conhex_zero.nn.checkpoint_files import checkpoint_digest

    device = resolve_device(args.device)
    try:
        opened = book_folder.open_book(out) if exists else None
        ckpt = load_checkpoint(args.checkpoint, device)
        digest = checkpoint_digest(args.checkpoint)
    except (CheckpointError, BookError) as err:
        raise CliError(str(err)) from None
    played = ckpt.game if args.game is None else _played_game(args)  # the checkpoint's game is read already
    if args.game is not None:
        from conhex_zero.play.checkpoints import game_warning

        message = game_warning(args.checkpoint, played)
        if message:
            warn("book grow", message)
    game = opened.game if opened is not None else played
    env = VecEnv(game, device)
    try:
        canon = Canonical(env)
    except UnsupportedGame as err:
        raise CliError(str(err)) from None
    after = list(args.after or [])
    if opened is not None:
        if args.after is None:
            after = opened.start_moves
        try:
            book_folder.check_same(opened, played, after, digest,
                                   args.checkpoint, args.other_model)
        except BookError as err:
            raise CliError(str(err)) from None
    start_state = play_moves(env, after) if after else env.initial_state(1)
    after = [env.game.action_name(a) for a in _actions(env, after)]
    if bool(start_state.done[0]):
        raise CliError("the game is over after those moves: nothing to grow")
    sims = args.sims or (opened.sims if opened is not None else DEFAULT_SIMS)
    if opened is None:
        from conhex_zero.book.graph import GAP_COST, SURE_COST

        opened = book_folder.new_book(out, game, after, canon.keys(start_state).keys[0], args.checkpoint, digest, sims,
                                      GAP_COST if args.gap_cost is None else args.gap_cost,
                                      SURE_COST if args.sure_cost is None else args.sure_cost)
        print(f"a new book of {game} in {out}, from {' '.join(after) or 'the empty board'}, grown with "
              f"{args.checkpoint} (digest {digest}), {sims} simulations a position", flush=True)
    else:
        print(f"growing the book in {out}: {len(opened.book)} positions, {opened.minutes:.1f} "
              f"minutes of growth so far; {sims} simulations a position", flush=True)
    solver = None
    if not args.no_exact:
        try:
            solver = HexSolver(env.game.board)
        except SolverError:
            pass
    connections = _connections("off" if args.no_exact and args.connections == "auto" else args.connections, env)
    grower = Grower(env, ckpt.model, out, opened.book, start_state, sims=sims, batch=args.batch, seed=args.seed,
                    solver=solver, connections=connections)
    started = time.monotonic()
    before = len(opened.book)
    deadline = None if args.minutes is None else started + 60 * args.minutes
    searches, rounds, last_round = 0, 0, 0.0
    bar = progress_bar(total=nodes_budget, unit="node", desc="growing", disable=args.quiet)
    stopped = ""
    with bar:
        try:
            while True:
                added = len(opened.book) - before
                if nodes_budget is not None and added >= nodes_budget:
                    break
                if deadline is not None and time.monotonic() + last_round > deadline:
                    break
                result = grower.round(None if nodes_budget is None else nodes_budget - added)
                if result.new_nodes == 0 and result.searches == 0:
                    stopped = "nothing left to grow: every position the book can reach is proven"
                    break
                rounds += 1
                searches += result.searches
                last_round = result.seconds
                bar.update(len(opened.book) - before - bar.n)
                bar.set_postfix_str(f"{len(opened.book)} positions, round {rounds}, "
                                    f"{60 * (len(opened.book) - before) / max(time.monotonic() - started, 1e-9):.0f}"
                                    f" new a minute", refresh=False)
        except KeyboardInterrupt:
            stopped = "interrupted: the round in flight was not written"
    minutes = (time.monotonic() - started) / 60
    store.compact(out, opened.header, opened.book, opened.runs)  # one line per node: the rests replaced
    book_folder.record_run(opened, "conhex-zero " + " ".join(shlex.quote(a) for a in sys.argv[1:]), args.checkpoint,
                           digest, minutes, before, searches, sims, args.batch, connections=connections)
    added = len(opened.book) - before
    if stopped:
        print(stopped, flush=True)
    print(f"{out}: {len(opened.book)} positions (+{added} in {minutes:.1f} minutes, {rounds} rounds, {searches} "
          f"searches; {60 * added / max(minutes * 60, 1e-9):.0f} positions a minute)")
    print(f"conhex-zero book show {out}   (the first-move table)")
    return 130 if stopped.startswith("interrupted") else 0


def _connections(choice: str, env) -> bool:
    """Whether the book's searches use H-search (``--connections``): ``auto`` where the game allows it."""
    if choice == "off":
        return False
    from conhex_zero.agents.connections import ConnectionsUnavailable, LeafConnections

    try:
        LeafConnections(env)
    except ConnectionsUnavailable as err:
        if choice == "on":
            raise CliError(f"--connections on: {err}") from None
        return False
    return True


def _actions(env, moves: list[str]) -> list[int]:
    from conhex_zero.env.notation import parse_moves

    return parse_moves(env.game, moves) if moves else []


# --------------------------------------------------------------------------------------------- html
def run_starts(args: argparse.Namespace) -> int:
    check_output_file("--out", args.out)
    preflight_book_folder(args.book)
    opened = open_checked(args.book)  # no first-move table: only the book's nodes are read
    from conhex_zero.book.graph import DECIDED_MARGIN
    from conhex_zero.book.starts import unsure_lines, write_lines
    from conhex_zero.games.game import parse_game

    margin = DECIDED_MARGIN if args.margin is None else args.margin
    if not 0 < margin <= 1:
        raise CliError(f"--margin {args.margin:g}: a value distance from even, in (0, 1]")
    lines = unsure_lines(opened, parse_game(opened.game), args.max_plies, margin)
    if not lines:
        raise CliError(f"{args.book}: no unproven position within {margin:g} of even at most {plural(args.max_plies, 'move')} "
                       f"from the start (a larger --margin or --max-plies finds more)")
    write_lines(args.out, lines, f"self-play start lines from the book {args.book} ({opened.game}, "
                f"{len(opened.book)} positions, model {opened.model_file}): the {len(lines)} unproven positions "
                f"within {margin:g} of even at most {plural(args.max_plies, 'move')} from its start")
    deepest = max(len(s.moves) for s in lines)
    print(f"wrote {plural(len(lines), 'line')} ({deepest} moves at most) to {args.out}: use it with "
          f"selfplay.start_lines={args.out}")
    return 0


def run_html(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CliError(f"--out {args.out}: not a folder")
    check_output_file("--out", out / "index.html")
    preflight_book_folder(args.book)
    started = time.perf_counter()
    opened, env, start, rows, source = load_table(args.book)
    from conhex_zero.book.pages import select_pages, write_pages
    from conhex_zero.console.progress import progress_bar

    total = len(select_pages(opened, args.depth, args.pages))
    with progress_bar(total=total, desc="pages", unit="page", disable=args.quiet) as bar:
        count = write_pages(opened, env, start, rows, out, max_depth=args.depth, max_pages=args.pages,
                            progress=bar.update)
    size = sum(f.stat().st_size for f in out.glob("*.html"))
    left = len(opened.book) - count
    print(f"wrote {plural(count, 'page')} ({size / 1e6:.1f} MB) to {out} in {time.perf_counter() - started:.0f} s "
          f"(open {out / 'index.html'} in a browser)" + (f"; {plural(left, 'book position')} left out by --depth/--pages "
                                                        f"(conhex-zero serve CKPT --book {args.book} walks them all)"
                                                        if left > 0 else ""))
    return 0

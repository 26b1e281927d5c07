"""``conhex-zero book grow|show|html|starts``: an opening book that grows from the first move into a
tree of searched positions, corrects itself by minimax, and is read as a table or as linked pages
(``book prove`` is in ``book_prove_cmd``, what they share in ``book_common``)."""

from __future__ import annotations

import argparse
import contextlib
import shlex
import sys
import time
from pathlib import Path

from conhex_zero.console.words import plural
from conhex_zero.cli.common import (add_backend_argument, CliError, HelpFormatter, add_threads_argument, check_output_file, output_json,
                                    preflight_checkpoint, preflight_file, preflight_game, resolve_device, warn)
from conhex_zero.cli.book_common import BookLock, is_book_folder, line_name, open_checked
from conhex_zero.cli.book_prove_cmd import add_prove_parser
from conhex_zero.cli.numbers import MAX_SECONDS, SEED, SIMS, Real, Whole

CHECK_GAMES = Whole(0, 10_000, even=True)

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

    show = what.add_parser(
        "show", help="print the book's first-move table", formatter_class=HelpFormatter,
        description="Print the book's table of the moves at its start (the first moves, from the empty board): "
        "the mover's win %% by the book's minimax value beside the single search of the position, decided "
        "(the book is sure who wins: proven, or the docs' margin rule) and proven marks, the nodes below, the "
        "swap decision and the best line. On Hex 4x4, 5x5 (the exact solver) and 7x7 (the published solution) "
        "every move is marked against the truth. --json writes the table in the form of openings --json.",
        epilog="examples:\n  conhex-zero book show checkpoints/books/hex7-l4h64\n"
               "  conhex-zero book show checkpoints/books/conhex-l4h64-v4 --json runs/book.json")
    show.add_argument("book", metavar="DIR", help="a book folder")
    show.add_argument("--json", metavar="FILE", help="write the table as JSON ('-' for standard output)")
    show.add_argument("--top", type=Whole(0, 1000), default=0, metavar="K", help="print only the K strongest groups")
    show.add_argument("--table", metavar="FILE", help="an opening table to compare with (openings --json or report.json "
                      "of the same game): its win %% beside the book's (default: the book's own single searches)")
    show.add_argument("--check-games", type=CHECK_GAMES, default=0, metavar="N",
                      help="play N self-play games (even) from each opening group where the book and the table are on "
                      "different sides of 50%%, pie rule off after the opening, and say which one the games agree with "
                      "(95%% Wilson interval over distinct games; default: 0, none)")
    show.add_argument("--check-sims", type=SIMS, default=64, metavar="S", help="simulations a move in those games "
                      "(default: 64)")
    show.add_argument("--checkpoint", metavar="CKPT", help="the model that plays the check's games (default: the "
                      "book's own, by the file name it records)")
    show.add_argument("--seed", type=SEED, default=0, help="the check's seed (default: 0)")
    add_backend_argument(show)
    show.set_defaults(run=run_show)

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


# --------------------------------------------------------------------------------------------- show
def load_table(folder: str):
    """The opened book, its game's env, start state and first-move table (with the truth where known)."""
    opened = open_checked(folder)
    from conhex_zero.book.table import move_table
    from conhex_zero.env.notation import play_moves
    from conhex_zero.env.vec_env import VecEnv

    env = VecEnv(opened.game, "cpu")
    start = play_moves(env, opened.start_moves) if opened.start_moves else env.initial_state(1)
    if opened.book.start not in opened.book.nodes:
        raise CliError(f"{folder}: the book has no positions yet (grow it with conhex-zero book grow)")
    truth, source = _truth(env, opened.start_moves)
    return opened, env, start, move_table(env, opened.book, start, truth), source


def _truth(env, start_moves: list[str]) -> tuple[dict[str, bool] | None, str | None]:
    """The first moves' known results (first player wins?), on Hex boards whose openings are solved."""
    if start_moves:
        return None, None
    from conhex_zero.analysis.openings import published_openings
    from conhex_zero.analysis.solver import HexSolver, SolverError

    names = [env.game.action_name(a) for a in range(env.game.board.num_holes)]
    published = published_openings(env.game)
    if published is not None:
        return {n: n in published for n in names}, "published"
    if env.game.swap or not env.game.board.name.startswith("hex-"):
        return None, None
    try:
        solver = HexSolver(env.game.board)
    except SolverError:
        return None, None
    wins = {env.game.action_name(a) for a in solver.winning_openings()}
    return {n: n in wins for n in names}, "solver"


def preflight_book_folder(folder: str) -> None:
    """A book folder that exists and holds a book, checked before torch is imported (under a second)."""
    path = Path(folder)
    if not path.exists():
        raise CliError(f"no book at {folder}: it does not exist (grow one with conhex-zero book grow CKPT --out {folder})")
    if not path.is_dir():
        raise CliError(f"{folder} is a file, not a book folder")
    if not ((path / "book.jsonl").is_file() or (path / "book.jsonl.gz").is_file()):
        raise CliError(f"no book at {folder} (grow one with conhex-zero book grow CKPT --out {folder})")


def run_show(args: argparse.Namespace) -> int:
    if args.json and args.json != "-":
        check_output_file("--json", args.json)
    if args.table:
        preflight_file(args.table, "opening table")
    preflight_checkpoint(args.checkpoint, "--checkpoint")
    preflight_book_folder(args.book)
    opened, env, start, rows, source = load_table(args.book)
    from conhex_zero.book.table import table_json

    table = _read_table(args.table, opened.game) if args.table else None
    print(format_table(opened, rows, source, args.top, table))
    checks = []
    if args.check_games:
        if opened.start_moves:
            raise CliError("--check-games plays from the first moves: give a book grown from the empty board")
        checks = _check(args, opened, env, rows, table)
    data = table_json(rows, game=opened.game, checkpoint=opened.model_file, digest=opened.model_digest,
                      sims=opened.sims, folder=args.book, nodes=len(opened.book), opening=not opened.start_moves,
                      truth_source=source)
    from conhex_zero.book.carried import saved_searches

    data["searches_kept"] = [{k: h.get(k) for k in ("key", "runs", "expansions", "seconds", "saved", "proof_number",
                                                    "disproof_number")}
                             for h in saved_searches(opened.folder)]
    data["exact_positions"] = exact_positions(opened)
    data["models"] = opened.models()
    data["mixed_models"] = len(data["models"]) > 1
    if table is not None:
        for entry in data.get("openings", data.get("moves", [])):
            entry["table_win_rate"] = table.get(entry["move"])
    if checks:
        data["checks"] = [{"moves": c.moves, "book_win_rate": round(c.table_win_rate, 4), "table_win_rate": round(o, 4),
                           "games": c.games, "first_wins": c.first_wins, "low": round(c.low, 4),
                           "high": round(c.high, 4), "verdict": c.verdict, "right": _right(c, o)} for c, o in checks]
    output_json(data, args.json)
    return 0


def _read_table(path: str, game: str) -> dict[str, float]:
    """Move -> the first player's win rate, from ``openings --json`` or a report's report.json."""
    from conhex_zero.files.untrusted import loads_json
    from conhex_zero.play.checkpoints import same_game

    try:
        data = loads_json(Path(path).read_text())
    except (OSError, ValueError) as err:
        raise CliError(f"--table {path}: not a JSON file ({err})") from None
    if isinstance(data, dict) and isinstance(data.get("openings"), dict) and "stats" in data:
        data = data["openings"]  # report.json
    try:
        if not same_game(data["game"], game):
            raise CliError(f"--table {path} is a table of {data['game']}, the book one of {game}")
        return {str(m["move"]): float(m["win_rate"]) for m in data["openings"]}
    except (KeyError, TypeError, ValueError):
        raise CliError(f"--table {path}: not an opening table (the JSON of openings --json or report.json)") from None


def _right(check, other: float) -> str:
    """Which estimate the games agree with (``other``: the table's win rate): book, table, both (on
    the same side), neither, or undecided."""
    if check.verdict == "undecided":
        return "undecided"
    first = check.verdict == "first"
    book, table = check.table_win_rate > 0.5, other > 0.5
    return "both" if book == table == first else "book" if book == first else "table" if table == first else "neither"


def _check(args, opened, env, rows, table: dict[str, float] | None) -> list[tuple]:
    """Self-play games from each opening group where the book and the table disagree: (the check,
    the table's win rate) per group."""
    from conhex_zero.analysis.opening_table import check_openings
    from conhex_zero.nn.checkpoint import CheckpointError, load_checkpoint

    path = args.checkpoint or opened.model_file
    try:
        ckpt = load_checkpoint(path)
    except CheckpointError as err:
        raise CliError(f"the check's model: {err} (give --checkpoint CKPT)") from None
    groups: dict[int, list] = {}
    for m in rows:
        groups.setdefault(m.group, []).append(m)
    other = {m.move: (table.get(m.move) if table is not None else m.search_win_rate) for m in rows}
    chosen = [g for g in groups.values() if other.get(g[0].move) is not None
              and (other[g[0].move] > 0.5) != (g[0].win_rate > 0.5)]
    what = "the table" if table is not None else "one search"
    print(f"\nchecking the {len(chosen)} opening groups where the book and {what} disagree: {args.check_games} "
          f"self-play games each at {args.check_sims} simulations a move", flush=True)
    if not chosen:
        return []
    checks = check_openings(env, ckpt, path, [(g, "disagree") for g in chosen], args.check_games, args.check_sims,
                            seed=args.seed, progress=True)
    out = []
    for check, group in zip(checks, chosen):
        rate = other[group[0].move]
        score = f"{check.first_wins}/{check.games} [{100 * check.low:.0f}-{100 * check.high:.0f}%]"
        print(f"  {' '.join(check.moves):<24} book {100 * check.table_win_rate:5.1f}%  {what} {100 * rate:5.1f}%  "
              f"first player's games {score}  right: {_right(check, rate)}")
        out.append((check, rate))
    return out


def _pie_rule(game: str) -> bool:
    from conhex_zero.games.game import parse_game

    return parse_game(game).swap


def exact_positions(opened) -> int:
    """The book's positions with an exact result of the native solver (``book prove``)."""
    return sum(1 for node in opened.book.nodes.values() if node.exact)


def format_table(opened, rows, source: str | None, top: int = 0, table: dict[str, float] | None = None) -> str:
    from conhex_zero.book.table import CONVENTION

    minutes = opened.minutes
    no_swap_column = any(m.answered_value is not None for m in rows)
    start = " ".join(opened.start_moves) or "the empty board"
    lines = [f"{opened.game} book {opened.folder}: {len(opened.book)} positions from {start}, grown with "
             f"{opened.model_file} (digest {opened.model_digest}) for {minutes:.1f} minutes, {opened.sims} "
             f"simulations a position",
             *([f"warning: {opened.mixed_models()}"] if opened.mixed_models() else []),
             CONVENTION,
             ("no swap: the mover's chance if the second player does not swap (the opening analysis's number); "
              if no_swap_column else "") +
             "search: one search of the position alone" + (" (no swap)" if no_swap_column else "") +
             "; decided: the book is sure who wins (proven, or the margin rule of docs/analysis.md)", ""]
    header = f"{'rank':>4}  {'moves':<20} {'win %':>6}" + (f" {'no swap':>7}" if no_swap_column else "") + \
        f" {'search':>6}" + (f" {'table':>6}" if table else "") + f" {'nodes':>6}  {'decided':<12}"
    swap_column = any(m.swap is not None for m in rows)
    header += "  swap" if swap_column else ""
    has_truth = any(m.exact_win is not None for m in rows)
    header += f"  {source:<10}" if has_truth else ""
    header += "  best line"
    lines.append(header)
    groups: dict[int, list] = {}
    for m in rows:
        groups.setdefault(m.group, []).append(m)
    shown = list(groups.values())[:top] if top else list(groups.values())
    for rank, group in enumerate(shown, 1):
        m = group[0]
        names = " ".join(x.move for x in group)
        names = names if len(names) <= 20 else names[:17] + "..."
        decided = f"proven {m.proven}" if m.proven else ("yes" if m.decided else "no")
        row = f"{rank:>4}  {names:<20} {100 * m.win:>5.1f}%" + (f" {100 * m.win_rate:>6.1f}%" if no_swap_column else "") + \
            f" {100 * m.search_win_rate:>5.1f}%"
        if table:
            t = table.get(m.move)
            row += "      -" if t is None else f" {100 * t:>5.1f}%"
        row += f" {m.nodes:>6}  {decided:<12}"
        if swap_column:
            row += f"  {'yes' if m.swap else 'no ':<4}" if m.swap is not None else "      "
        if has_truth:
            truth = m.exact_win
            right = (m.win_rate > 0.5) == truth
            row += f"  {('win' if truth else 'loss') + ('' if right else ' (book wrong)'):<10}"
        row += "  " + " ".join(m.best_line[:8])
        lines.append(row)
    lines.append("")
    decided = [m for m in rows if m.decided]
    lines.append(f"decided: {len(decided)} of {len(rows)} moves ({sum(m.proven is not None for m in rows)} proven)")
    exact = exact_positions(opened)
    if exact:
        lines.append(f"exact: {plural(exact, 'position')} of the book solved by the native solver (book prove; "
                     f"the openings' proofs and what their searches settled below)")
    from conhex_zero.book.carried import cpu_time, describe, saved_searches, seconds_spent

    kept = saved_searches(opened.folder)
    if kept:
        lines.append(f"proofs under way: {plural(len(kept), 'search', 'searches')} cut short and kept "
                     f"({cpu_time(seconds_spent(kept))} in all; the next book prove goes on from them)")
        for h in kept:
            moves = [m.move for m in rows if m.key == h.get("key")]
            lines.append(f"  {'/'.join(moves) if moves else line_name(opened, h.get('key'))}: {describe(h)}")
    if has_truth:
        right = sum((m.win_rate > 0.5) == m.exact_win for m in rows)
        search_right = sum((m.search_win_rate > 0.5) == m.exact_win for m in rows)
        decided_right = sum((m.win_rate > 0.5) == m.exact_win for m in decided)
        what = "published solution (Hayward et al. 2003)" if source == "published" else "exact solver"
        lines.append(f"{what}: the book classifies {right} of {len(rows)} moves correctly (one search each: "
                     f"{search_right}); {decided_right} of its {len(decided)} decided claims are right")
    if table:
        first_of: dict[int, object] = {}
        for m in rows:
            first_of.setdefault(m.group, m)
        differ = [g for g in first_of.values() if table.get(g.move) is not None
                  and (table[g.move] > 0.5) != (g.win_rate > 0.5)]
        lines.append(f"the table beside: {len(differ)} opening groups on the other side of 50% from the book"
                     + (": " + ", ".join(m.move for m in differ) if differ else ""))
    if swap_column and not opened.start_moves:
        swaps = sum(bool(m.swap) for m in rows)
        lines.append(f"swap map: the second player should swap after {swaps} of {len(rows)} openings"
                     + ("" if _pie_rule(opened.game) else f", were {opened.game} played with the pie rule"))
    return "\n".join(lines)


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

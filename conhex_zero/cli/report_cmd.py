"""``conhex-zero report CKPT [--games N] [--out DIR]``: self-play and opening statistics turned into a
short Markdown report with figures that answers the rules sheet's questions."""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path

from conhex_zero.cli.common import (add_backend_argument, preflight_book, CliError, preflight_checkpoint, preflight_game, HelpFormatter,
                                    add_threads_argument, check_output_dir, game_for_players, plural,
                                    resolve_device)
from conhex_zero.cli.numbers import MAX_SIMULATIONS, SEED, SIMS, Whole, Wholes
from conhex_zero.cli.openings_cmd import CHECK_COUNT, CHECK_GAMES, check_other_game, check_search_memory, parse_size


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report", help="answer the rules sheet's questions with measured numbers (Markdown + pictures)",
        description="Play GAMES self-play games of the checkpoint against itself without the pie rule and "
        "GAMES with it (Gumbel root noise makes games differ), play uniformly random games to the end, "
        "analyse every opening, and write DIR/report.md with pictures: the influence of each hole, how often "
        "each cell lies on the winning chain, the first player's win rate with and without the pie rule, "
        "the fairest openings, game lengths and the number of drawn games. Rates carry 95% intervals.",
        epilog="examples:\n  conhex-zero report checkpoints/hex5-l4h64.pt --games 50 --out runs/report-hex5\n"
               "  conhex-zero report mcts-rollout:200 --game conhex --games 100 --out runs/report-conhex\n"
               "  conhex-zero report checkpoints/conhex-l4h64.pt --games 400 --sims 64 --device cuda",
        formatter_class=HelpFormatter)
    p.add_argument("checkpoint", metavar="CKPT",
                   help="a checkpoint (.pt) file; or mcts-rollout:K to measure with rollout search of K "
                   "simulations before any network is trained (no policy weights, no opening analysis)")
    p.add_argument("--games", type=Whole(1, 10_000), default=100,
                   help="self-play games per rule setting (with and without the pie rule; default: 100)")
    p.add_argument("--out", metavar="DIR", help="output directory (default: runs/report-<checkpoint name>)")
    p.add_argument("--game", help="game spec (default: the checkpoint's game; conhex for mcts-rollout:K)")
    p.add_argument("--sims", type=SIMS, default=32, help="simulations per self-play move (default: 32)")
    p.add_argument("--opening-sims", type=Wholes(0, MAX_SIMULATIONS), default=[64], metavar="N[,N...]",
                   help="simulations per opening in the opening analysis (default: 64, checked at half of it; several, "
                   "e.g. 200,800,3200: each effort, the largest for the verdicts; 0 skips it)")
    p.add_argument("--other", metavar="CKPT", help="a second model (another training line's) for the opening table: "
                   "its verdicts beside the checkpoint's, and where the two agree")
    p.add_argument("--check-games", type=CHECK_GAMES, default=0, metavar="N",
                   help="self-play games (even) from each of the openings that matter most (default: 0, none)")
    p.add_argument("--check-sims", type=SIMS, default=200, metavar="S",
                   help="simulations a move in those games (default: 200)")
    p.add_argument("--check-count", type=CHECK_COUNT, default=10, metavar="K",
                   help="check the K best and K worst openings and those where the models disagree (default: 10)")
    p.add_argument("--random-games", type=Whole(0, 100_000), default=10000,
                   help="uniformly random games played to the end, for draws and lengths (default: 10000)")
    p.add_argument("--book", metavar="DIR", help="an opening book of the same game (conhex-zero book grow): its "
                   "first-move table beside the opening table, and where the two disagree")
    p.add_argument("--size", default="800x800", metavar="WxH", help="board picture size (default: 800x800)")
    p.add_argument("--seed", type=SEED, default=0, help="seed (default: 0)")
    p.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    add_threads_argument(p)
    add_backend_argument(p)
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(run=run)


def _rate(wins: int, games: int) -> str:
    """``63.0% [53.2%, 71.8%] (63/100)``: a rate with its 95% Wilson interval."""
    from conhex_zero.ladder.ratings import wilson

    if games == 0:
        return "no games"
    low, high = wilson(wins, games)
    return f"{100 * wins / games:.1f}% [{100 * low:.1f}%, {100 * high:.1f}%] ({wins}/{games})"


def summary(stats, openings, board) -> list[str]:
    """The report's main numbers in a few lines, for the terminal (``report.md`` has the rest):
    the first player's win rates, the swap rate, game lengths and draws, the holes whose holders won
    most often (those taken in at least 5 games, as the report ranks them) and the strongest opening."""
    ns, ws = stats.no_swap, stats.swap
    lines = ["summary (95% intervals, over distinct games):",
             f"  first player won, no pie rule:  {_rate(ns.first_wins, ns.games)}",
             f"  first player won, pie rule:     {_rate(ws.first_wins, ws.games)}; "
             f"the second player swapped in {_rate(ws.swaps, ws.games)}"]
    if stats.random_games:
        lines.append(f"  first player won, random play:  {_rate(stats.random_first_wins, stats.random_games)}")
    lengths = [f"{sum(x) / len(x):.1f} {label}" for label, x in
               (("without the pie rule", ns.lengths), ("with it", ws.lengths)) if x]
    draws = ns.draws + ws.draws + stats.random_draws
    lines.append(f"  mean game length: {', '.join(lengths) or 'no games'} (pieces placed); "
                 f"{plural(draws, 'drawn game')}")
    taken, won = stats.hole_taken, stats.hole_taken_by_winner
    ranked = sorted((h for h in range(len(taken)) if taken[h] >= 5), key=lambda h: -won[h] / taken[h])
    if ranked:
        names = board.hole_names
        lines.append(f"  most influential {board.hole_word}s (the player holding one at the end won): "
                     + ", ".join(f"{names[h]} {100 * won[h] / taken[h]:.0f}%" for h in ranked[:4]))
    if openings is not None:
        best = openings.groups()[0][0]
        efforts = " and ".join(str(e) for e in openings.efforts)
        stable = (f"; {openings.stable_count} of {len(openings.moves)} openings stable at "
                  f"{efforts} simulations" if len(openings.efforts) > 1 else "")
        lines.append(f"  strongest opening: {best.move} (first player's win chance {100 * best.win_rate:.1f}% "
                     f"if the second player does not swap){stable}")
    return lines


def _book_section(folder: str, env, openings) -> tuple[list[str], dict]:
    """The opening book's table (Markdown and JSON) beside the report's opening table."""
    from conhex_zero.book.folder import open_book
    from conhex_zero.book.store import BookError
    from conhex_zero.book.table import book_section, move_table, table_json
    from conhex_zero.play.checkpoints import same_game

    try:
        opened = open_book(folder)
    except BookError as err:
        raise CliError(f"--book: {err}") from None
    if not same_game(opened.game, env.game) or opened.start_moves:
        raise CliError(f"--book {folder}: a book of {opened.game} from "
                       f"{' '.join(opened.start_moves) or 'the empty board'}; the report needs one of "
                       f"{env.game.spec} from the empty board")
    if opened.book.start not in opened.book.nodes:
        raise CliError(f"--book {folder}: the book has no positions yet")
    rows = move_table(env, opened.book, env.initial_state(1))
    table_win = {m.move: m.win_rate for m in openings.moves} if openings is not None else None
    md = book_section(rows, folder=folder, nodes=len(opened.book), minutes=opened.minutes, model=opened.model_file,
                      sims=opened.sims, table_win=table_win, pie_rule=env.game.swap)
    return md, table_json(rows, game=opened.game, checkpoint=opened.model_file, digest=opened.model_digest,
                          sims=opened.sims, folder=folder, nodes=len(opened.book), opening=True, truth_source=None)


def _check_memory(args: argparse.Namespace, env, sims: int, opening_sims: int, two_models: bool) -> None:
    """The self-play games (--games at once, --sims a move), the opening table's searches and the
    check's games fit in this machine's free memory (``CliError`` before any game otherwise)."""
    from conhex_zero.cli.numbers import search_memory

    A, C = env.num_actions, env.game.num_cells
    try:
        search_memory("--games x --sims", args.games, sims, A, C)
    except ValueError as err:
        raise CliError(str(err)) from None
    if opening_sims:
        check_search_memory(env, env.num_holes, 2, opening_sims, args.check_games, args.check_sims,
                            args.check_count, two_models)


def run(args: argparse.Namespace) -> int:
    # Before torch, everything that can be refused is: a typo is answered at once, and the output
    # folder is known writable before the work (numbers are bounded by their argparse types).
    rollout = re.fullmatch(r"mcts-rollout:(\d+)", args.checkpoint)
    if not rollout:
        try:
            preflight_checkpoint(args.checkpoint)
        except CliError as err:
            raise CliError(f"{err} (or give mcts-rollout:K)") from None
    elif not 1 <= int(rollout.group(1)) <= MAX_SIMULATIONS:
        raise CliError(f"mcts-rollout:K needs from 1 to {MAX_SIMULATIONS} simulations")
    preflight_checkpoint(args.other, "--other")
    preflight_game(args.game)
    preflight_book(args.book)
    if (args.other or args.check_games) and rollout:
        raise CliError("--other and --check-games need a checkpoint (the opening table is the network's)")
    opening_sims = max(args.opening_sims)
    if (args.other or args.check_games) and not opening_sims:
        raise CliError("--opening-sims 0 skips the opening table, which --other and --check-games add to: give "
                       "--opening-sims N, or leave them out")
    levels = sorted({x for x in args.opening_sims if x} - {opening_sims}) or [max(1, opening_sims // 2)]
    size = parse_size(args.size)
    out = Path(args.out) if args.out else Path("runs") / f"report-{re.sub(r'[^A-Za-z0-9_.-]+', '-', Path(args.checkpoint).stem)}"
    check_output_dir("--out", out)  # a folder that is, or can be made, writable: before the work
    from conhex_zero.analysis.game_stats import collect
    from conhex_zero.analysis.openings import analyse_moves
    from conhex_zero.analysis.report import write_report
    from conhex_zero.console.progress import progress_bar
    from conhex_zero.env.vec_env import VecEnv
    from conhex_zero.nn.checkpoint import CheckpointError, load_checkpoint

    device = resolve_device(args.device)
    if rollout:
        ckpt, sims = None, int(rollout.group(1))
    else:
        try:
            ckpt, sims = load_checkpoint(args.checkpoint, device), args.sims
        except CheckpointError as err:
            raise CliError(f"{err} (or give mcts-rollout:K)") from None
    try:
        other = load_checkpoint(args.other, device) if args.other else None
    except CheckpointError as err:
        raise CliError(f"--other: {err}") from None
    spec = game_for_players("report", args.game, [args.checkpoint] if ckpt is not None else [])
    env = VecEnv(spec, device)
    if env.game.extra_stone:
        raise CliError(f"{spec}: the report compares play with and without the pie rule; extra-stone games "
                       f"have no pie rule")
    check_other_game("report", args.other, other, env.game)
    if (other is not None or args.check_games) and env.game.random_pieces:
        raise CliError(f"{spec}: a game with random opening pieces has no opening table, which --other and "
                       f"--check-games add to: leave them out")
    _check_memory(args, env, sims, opening_sims if ckpt is not None and not env.game.random_pieces else 0,
                  other is not None)

    name = Path(args.checkpoint).name if ckpt is not None else args.checkpoint
    stats = collect(spec, ckpt, name, args.games, sims, seed=args.seed, device=device,
                    progress=not args.quiet, random_count=args.random_games)
    openings = table = None
    if ckpt is not None and opening_sims and not env.game.random_pieces:
        models = 2 if other is not None else 1
        bar = progress_bar(total=models * (opening_sims + sum(levels)), desc="openings", unit="sim",
                           disable=args.quiet, leave=False)  # searched at every effort of the stability check
        try:
            openings = analyse_moves(env, env.initial_state(1), ckpt, args.checkpoint, sims=opening_sims,
                                     repeats=2, seed=args.seed, on_simulation=lambda k: bar.update(1),
                                     compare_sims=levels)
            other_analysis = None if other is None else analyse_moves(
                env, env.initial_state(1), other, args.other, sims=opening_sims, repeats=2, seed=args.seed,
                on_simulation=lambda k: bar.update(1), compare_sims=levels)
        finally:
            bar.close()
        from conhex_zero.analysis.opening_table import OpeningTable, check_openings, openings_to_check

        table = OpeningTable(openings, other_analysis, check_sims=args.check_sims if args.check_games else 0,
                             check_games=args.check_games)
        if args.check_games:
            table.checks = check_openings(env, ckpt, args.checkpoint,
                                          openings_to_check(openings, other_analysis, args.check_count),
                                          args.check_games, args.check_sims, seed=args.seed, progress=not args.quiet)
    command = "conhex-zero " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:2] == ["report"] else ""
    book = _book_section(args.book, env, openings) if args.book else None
    path = write_report(stats, openings, out, command=command, size=size, table=table, book=book)
    print(f"wrote {path} (and its pictures in {out})")
    print("\n".join(summary(stats, openings, env.game.board)))
    return 0

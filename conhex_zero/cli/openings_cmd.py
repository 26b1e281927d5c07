"""``conhex-zero openings CKPT [--sims N] [--game GAME] [--json FILE] [--png FILE]``: how strong is
every first move, should the second player swap, which openings are fairest (a table, a JSON file
and a heatmap on the board picture)."""

from __future__ import annotations

import argparse
from pathlib import Path

from conhex_zero.cli.common import (add_backend_argument, CliError, preflight_checkpoint, preflight_file, preflight_game, HelpFormatter,
                                    add_threads_argument, check_output_file, game_for_players, load_record,
                                    output_json, resolve_device, warn)
from conhex_zero.cli.numbers import CHECK_GAMES, INDEX, MAX_SIMULATIONS, SEED, SIMS, Whole, Wholes

DEFAULT_SIMS = 200
EFFORTS = Wholes(1, MAX_SIMULATIONS)
"""``--sims 200`` or ``--sims 200,800,3200``: one or more simulation counts."""
CHECK_COUNT = Whole(1, 1000)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "openings", help="analyse every first move: strength, swap map, fairest openings, heatmap",
        description="Search every legal first move deeply (all at once, as one batch) and report, per "
        "opening: the network's prior, the first player's chance of winning when the second player does "
        "not swap (win %), its spread over repeated searches and symmetric openings, and whether the "
        "second player should swap under the pie rule (yes when the opener's win % is above 50). "
        "Symmetric openings are grouped; the table is sorted by strength. Every opening is searched again "
        "with --compare-sims simulations (default: half of --sims): an opening is stable when every search "
        "at both efforts, over the repeats and the symmetric openings, puts it on the same side of 50% (or "
        "the search proved its result: 'proven win' or 'proven loss', exact whatever the effort); the "
        "header says how many are stable, and the others are undecided at this effort. Several --sims "
        "(e.g. --sims 200,800,3200) search every opening at each: the largest gives the win % and the swap "
        "decision, and stable means the same side of 50% at all of them. --other CKPT analyses a second "
        "model (another training line) the same way and says, opening by opening, whether the two agree on "
        "the swap; --check-games N plays N self-play games from each of the openings that matter most (the "
        "--check-count best and worst, and those where the models disagree) and gives who wins them, with a "
        "95% Wilson interval over distinct games. "
        "The win % is the value of the best reply in a search with proven values: it tends to the exact "
        "result as simulations grow (benchmarks/bench_convergence.py measures it against the exact solver). "
        "On Hex boards up to 5x5 an "
        "exact solver adds the truth (5x5 openings from a verified table; other positions are solved, "
        "with a progress bar). With --after, the "
        "moves of any later position are analysed instead.",
        epilog="examples:\n  conhex-zero openings checkpoints/hex5-l4h64.pt --png openings.png\n"
               "  conhex-zero openings checkpoints/conhex-l4h64.pt --sims 400 --json openings.json\n"
               "  conhex-zero openings checkpoints/hex5-l4h64.pt --after c3  (the replies to c3)\n"
               "  conhex-zero openings checkpoints/conhex-l4h64.pt --sims 200,800,3200 --check-games 20\n"
               "  conhex-zero openings checkpoints/hex5-l4h64.pt --record game3.sgf  (a real game, move by move)",
        formatter_class=HelpFormatter)
    p.add_argument("checkpoint", metavar="CKPT", help="a checkpoint (.pt) file")
    p.add_argument("--game", help="game spec (default: the checkpoint's game)")
    p.add_argument("--sims", type=EFFORTS, default=[DEFAULT_SIMS], metavar="N[,N...]",
                   help=f"search simulations per opening and repeat (default: {DEFAULT_SIMS}); several efforts, "
                   "e.g. 200,800,3200: the largest gives the win %% and swap, stability is checked across all")
    p.add_argument("--repeats", type=Whole(1, 1000), default=2,
                   help="independent searches per opening, for the spread (default: 2)")
    p.add_argument("--compare-sims", type=Whole(0, MAX_SIMULATIONS), default=None, metavar="M",
                   help="the stability check's second effort: every opening searched again with M simulations "
                   "(default: half of --sims when one is given, else none; 0: no extra effort)")
    p.add_argument("--other", metavar="CKPT", help="a second model (e.g. another training line's), analysed the same "
                   "way: its win %%, stability and swap decision beside each opening, and where the two agree")
    p.add_argument("--check-games", type=CHECK_GAMES, default=0, metavar="N",
                   help="the empirical check: N self-play games (even) from each of the openings that matter most, "
                   "pie rule off after the opening, with a 95%% Wilson interval over distinct games (default: 0, "
                   "no check; it takes long: N x 2 x --check-count openings whole games)")
    p.add_argument("--check-sims", type=SIMS, default=200, metavar="S",
                   help="simulations a move in the check's games (default: 200)")
    p.add_argument("--check-count", type=CHECK_COUNT, default=10, metavar="K",
                   help="check the K best-rated and K worst-rated openings (symmetry groups), and every one whose "
                   "swap decision differs between the models (default: 10)")
    p.add_argument("--search", default="analysis", metavar="NAME",
                   help="search settings (default: analysis, the settings made to converge; play, mctx, puct and "
                   "others from conhex_zero/agents/search_configs.py, for comparison)")
    p.add_argument("--after", nargs="+", metavar="MOVE",
                   help="analyse the position after these moves instead of the empty board")
    p.add_argument("--record", metavar="FILE",
                   help="instead, review a recorded game move by move (SGF, Little Golem or arena JSON lines): "
                   "the first player's win %% after each move and the biggest mistakes")
    p.add_argument("--index", type=INDEX, default=0, help="which game of the record file (default: 0)")
    p.add_argument("--json", metavar="FILE", help="write the analysis as JSON ('-' for standard output)")
    p.add_argument("--png", metavar="FILE", help="write a heatmap on the board picture (PNG)")
    p.add_argument("--svg", metavar="FILE", help="write the heatmap as SVG")
    p.add_argument("--size", default="900x900", metavar="WxH", help="picture size in pixels (default: 900x900)")
    p.add_argument("--no-exact", action="store_true", help="skip the exact solver")
    p.add_argument("--top", type=Whole(0, 1000), default=0, metavar="K", help="print only the K strongest groups")
    p.add_argument("--seed", type=SEED, default=0, help="search seed (default: 0)")
    p.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    add_threads_argument(p)
    add_backend_argument(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=run)


def parse_size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise CliError(f"--size {text!r}: expected WIDTHxHEIGHT in pixels, e.g. 900x900") from None
    if min(w, h) < 200 or max(w, h) > 8000:
        raise CliError(f"--size {text!r}: width and height must be between 200 and 8000 pixels")
    return w, h


def check_output(path: str | None, suffix: str, option: str) -> Path | None:
    if path is None or path == "-":
        return None
    p = Path(path)
    if p.suffix.lower() != suffix:
        raise CliError(f"{option} {path!r}: the file name must end in {suffix}")
    check_output_file(option, p)  # not a directory or device, in a folder that is or can be made writable
    p.parent.mkdir(parents=True, exist_ok=True)
    return p


def check_other_game(command: str, path: str | None, other, game) -> None:
    """``--other`` must be a model of the game analysed: the agreement of two models on the openings
    of different games means nothing (where ``arena`` would warn that a model plays a game it was not
    trained on, this refuses)."""
    from conhex_zero.play.checkpoints import same_game

    if other is not None and not same_game(other.game, game):
        raise CliError(f"--other {path} was trained on {other.game}, not {game.spec}: the two models' openings "
                       f"cannot be compared (give --other a model of {game.spec})")


def check_search_memory(env, legal: int, repeats: int, sims: int, check_games: int, check_sims: int,
                        check_count: int, two_models: bool) -> None:
    """The opening analysis's searches (every legal move x --repeats, at the largest effort) and the
    check's games (--check-games from each checked opening, all at once) fit in this machine's free
    memory; ``CliError`` naming the options otherwise (before any search)."""
    from conhex_zero.cli.numbers import search_memory

    A, C = env.num_actions, env.game.num_cells
    try:
        search_memory("--sims x --repeats", legal * repeats, sims, A, C)
        if check_games:
            openings = legal if two_models else min(legal, 2 * check_count)
            search_memory("--check-games x --check-sims", check_games * openings, check_sims, A, C)
    except ValueError as err:
        raise CliError(str(err)) from None


def run(args: argparse.Namespace) -> int:
    # Before torch, everything that can be refused is: a typo is answered at once, and no output is
    # found unwritable after the work (numbers are bounded by their argparse types).
    preflight_checkpoint(args.checkpoint)
    preflight_checkpoint(args.other, "--other")
    preflight_game(args.game)
    if args.record:
        preflight_file(args.record, "record file")
    if (args.other or args.check_games) and (args.record or args.after):
        raise CliError("--other and --check-games go with the opening table (not with --after or --record)")
    if args.record and args.after:
        raise CliError("give either --after MOVES or --record FILE, not both")
    if args.record and (args.png or args.svg):
        raise CliError("--png and --svg draw the openings map; a review of a record (--record) has none: "
                       "leave them out")
    size = parse_size(args.size)
    png = check_output(args.png, ".png", "--png")
    svg = check_output(args.svg, ".svg", "--svg")
    check_output(args.json, ".json", "--json")
    from conhex_zero.console.progress import progress_bar

    from conhex_zero.analysis.openings import analyse_moves
    from conhex_zero.analysis.pictures import draw_openings_map
    from conhex_zero.analysis.solver import HexSolver, SolverError
    from conhex_zero.env.notation import play_moves
    from conhex_zero.env.vec_env import VecEnv
    from conhex_zero.nn.checkpoint import CheckpointError, load_checkpoint

    from conhex_zero.agents.search_configs import VARIANTS

    if args.search.removesuffix("-no-tactics") not in VARIANTS:
        raise CliError(f"--search {args.search!r}: one of {', '.join(VARIANTS)} (optionally with -no-tactics)")
    sims = max(args.sims)
    levels = sorted(set(args.sims) - {sims})
    if args.compare_sims is None:
        levels = levels or [max(1, sims // 2)]
    elif args.compare_sims:
        levels = sorted(set(levels) | {args.compare_sims})
    args.sims = sims
    device = resolve_device(args.device)
    try:
        ckpt = load_checkpoint(args.checkpoint, device)
        other = load_checkpoint(args.other, device) if args.other else None
    except CheckpointError as err:
        raise CliError(str(err)) from None
    if args.record:
        return review_record(args)
    env = VecEnv(game_for_players("openings", args.game, [args.checkpoint]), device)
    game = env.game
    check_other_game("openings", args.other, other, game)
    if game.random_pieces:
        raise CliError(f"{game.spec}: openings with random opening pieces differ from game to game; "
                       f"analyse the game without random=K")
    state = play_moves(env, args.after) if args.after else env.initial_state(1)
    if bool(state.done[0]):
        raise CliError("the game is over after those moves: nothing to analyse")
    legal = int(env.legal_mask(state)[0].sum())
    check_search_memory(env, legal, args.repeats, max([sims, *levels]), args.check_games,
                        args.check_sims, args.check_count, other is not None)

    solver = None
    if not args.no_exact:
        try:
            solver = HexSolver(game.board)
        except SolverError:
            pass  # not Hex, or too big for the exact solver

    efforts = ", ".join(str(x) for x in sorted({args.sims, *levels}))
    models = 2 if other is not None else 1
    bars = {"search": progress_bar(total=models * (args.sims + sum(levels)), unit="sim", disable=args.quiet,
                                   leave=False, desc=f"searching {legal} moves x {args.repeats} x {models} "
                                   f"model{'s' * (models > 1)} ({efforts} sims)")}

    def solved(k: int) -> None:
        # The exact solver runs after the search (k = 0 before its first move): swap the search's
        # bar for the solver's, since a 5x5 position a move or two deep can take seconds.
        if "exact" not in bars:
            bars["search"].close()
            bars["exact"] = progress_bar(total=legal, desc=f"solving {legal} moves exactly", unit="move",
                                         disable=args.quiet, leave=False)
        bars["exact"].update(k - bars["exact"].n)

    try:
        analysis = analyse_moves(env, state, ckpt, args.checkpoint, sims=args.sims, repeats=args.repeats,
                                 seed=args.seed, exact=solver, on_simulation=lambda k: bars["search"].update(1),
                                 on_solved=solved, compare_sims=levels, search=args.search)
        other_analysis = None
        if other is not None:
            other_analysis = analyse_moves(env, state, other, args.other, sims=args.sims, repeats=args.repeats,
                                           seed=args.seed, on_simulation=lambda k: bars["search"].update(1),
                                           compare_sims=levels, search=args.search)
    finally:
        for bar in bars.values():
            bar.close()
    from conhex_zero.analysis.opening_table import OpeningTable, check_openings, openings_to_check

    table = OpeningTable(analysis, other_analysis, check_sims=args.check_sims if args.check_games else 0,
                         check_games=args.check_games)
    if args.check_games:
        if not analysis.is_opening:
            raise CliError("--check-games checks first moves: analyse the empty board")
        chosen = openings_to_check(analysis, other_analysis, args.check_count)
        print(f"checking {len(chosen)} openings: {args.check_games} self-play games each at {args.check_sims} "
              f"simulations a move", flush=True)
        table.checks = check_openings(env, ckpt, args.checkpoint, chosen, args.check_games, args.check_sims,
                                      seed=args.seed, progress=not args.quiet)
    print(format_table(analysis, args.top, table))
    output_json(table.to_json(), args.json)
    for path in (png, svg):
        if path is not None:
            draw_openings_map(analysis, env, state, path, size)
            print(f"wrote {path}")
    return 0


def review_record(args: argparse.Namespace) -> int:
    """``--record``: the checkpoint reviews a recorded game, every position searched in one batch."""
    from conhex_zero.env.vec_env import VecEnv
    from conhex_zero.play.checkpoints import game_warning
    from conhex_zero.records.review import format_review, review_game

    record = load_record(args.record, args.index)
    env = VecEnv(args.game or record.game, resolve_device(args.device))
    message = game_warning(args.checkpoint, env.game)
    if message:
        warn("openings", message)
    review = review_game(env.game, record.moves, f"{args.checkpoint}:sims={args.sims}", seed=args.seed,
                         progress=not args.quiet, notation=record.notation, env=env)
    print(f"game {record.index} of {args.record}: {record.player_label(0)} vs {record.player_label(1)}: "
          f"{record.result_text()}")
    print(format_review(review))
    output_json(review.to_json(), args.json)
    return 0


def format_table(analysis, top: int = 0, table=None) -> str:
    """The analysis as text: one row per symmetry group, strongest first (with ``table``, an
    ``OpeningTable``: the second model's columns and the empirical check)."""
    who = "first player" if analysis.mover == 0 else "second player"
    lines = [f"{analysis.game}: {'openings' if analysis.is_opening else 'moves'} by the {who}'s chance of "
             f"winning after the move{' (second player does not swap)' if analysis.is_opening else ''}",
             f"checkpoint {analysis.checkpoint}, {analysis.sims} simulations x {analysis.repeats} searches "
             f"per move"]
    total = len(analysis.moves)
    levels = [e for e in analysis.efforts if e != analysis.sims] or ([analysis.compare_sims] if analysis.compare_sims
                                                                     else [])
    if levels:
        efforts = " and ".join(str(e) for e in sorted({analysis.sims, *levels}))
        lines.append(f"stable: {analysis.stable_count} of {total} {'openings' if analysis.is_opening else 'moves'} "
                     f"(every search at {efforts} simulations on the same side of 50%, or proven)")
    other = table.other if table is not None else None
    if other is not None:
        agree, both = table.agreement()
        lines.append(f"second model {other.checkpoint}: {other.stable_count} of {total} stable; the swap decisions "
                     f"agree on {agree} of the {both} openings stable for both"
                     + (f" ({100 * agree / both:.0f}%)" if both else ""))
    lines.append("")
    has_exact = any(m.exact_win is not None for m in analysis.moves)
    compare = bool(levels)
    header = f"{'rank':>4}  {'moves':<24} {'prior':>6} {'net':>6} {'win %':>6} {'spread':>6}"
    header += "".join(f" {'@' + str(e):>6}" for e in levels) + f" {'stable':<6}" if compare else ""
    header += f" {'visits':>6}"
    swap_column = analysis.is_opening and any(m.swap is not None for m in analysis.moves)
    header += "  swap" if swap_column else ""
    published = analysis.truth_source == "published"
    header += ("  published" if published else "  exact") if has_exact else ""
    lines.append(header)
    groups = analysis.groups()
    for rank, group in enumerate(groups[:top] if top > 0 else groups, 1):
        m = group[0]
        names = " ".join(x.move for x in group)
        if len(names) > 24:
            names = names[:21] + "..."
        win = f"{100 * m.win_rate:>5.1f}%"
        row = (f"{rank:>4}  {names:<24} {100 * sum(x.prior for x in group) / len(group):>5.1f}% "
               f"{100 * sum(x.net_win_rate for x in group) / len(group):>5.1f}% {win} "
               f"{100 * m.win_rate_spread:>5.1f}%")
        if compare:
            stable = f"proven {m.proven}" if m.proven else ("yes" if m.stable else "no")
            at = m.efforts or {levels[0]: m.compare_win_rate}
            row += "".join(f" {100 * at[e]:>5.1f}%" for e in levels) + f" {stable:<6}"
        row += f" {sum(x.visits for x in group) // len(group):>6}"
        if swap_column:
            row += f"  {('yes' if m.swap else 'no') + ('' if m.stable else '?'):<4}"
        if has_exact:
            truth = m.exact_win
            row += f"  {'win' if truth else 'loss'}{'' if (m.win_rate > 0.5) == truth else ' (search wrong)'}"
        if other is not None:
            o = table.other_move(m.move)
            if o is not None:
                verdict = "" if o.swap is None else ("agree" if o.swap == m.swap else "DIFFER")
                row += f"  other {100 * o.win_rate:>5.1f}%{'' if o.stable else '?'} {verdict}"
        lines.append(row)
    lines.append("")
    lines.append("prior: the network's probability (mean per move); net: its raw win % after the move; win %: "
                 "the deep search's (value of the best reply), pooled over the group; spread: max - min over the "
                 "group's searches" + ("; @N: the win % at N simulations; "
                                       "stable: every search on the same side of 50%" if compare else "")
                 + ("; other: the second model's win % (? where it is not stable) and whether its swap decision "
                    "agrees" if other is not None else "")
                 + "; visits: of the best reply, per move"
                 + ("; swap: should the second player swap under the pie rule (the opener's win % above 50)"
                    + ("" if _swap_rule(analysis) else f", were {analysis.game} played with it") if swap_column else ""))
    if analysis.is_opening:
        swaps = [m for m in analysis.moves if m.swap]
        undecided = [m for m in analysis.moves if not m.stable]
        if swap_column:
            lines.append(f"swap map: the second player should swap after {len(swaps)} of {total} openings"
                         + (f"; {len(undecided)} undecided at this effort (marked ?)" if undecided else ""))
        fair = analysis.fairest(3)
        lines.append("fairest openings: " + ", ".join(
            f"{'/'.join(x.move for x in g)} ({100 * g[0].win_rate:.0f}%)" for g in fair))
    if table is not None and (table.checks or table.check_games):
        lines += ["", f"empirical check: {table.check_games} self-play games from each opening at {table.check_sims} "
                  "simulations a move (pie rule off after it), the first player's score over distinct games, 95% "
                  "Wilson interval"]
        for c in table.checks:
            names = " ".join(c.moves)
            names = names if len(names) <= 24 else names[:21] + "..."
            score = f"{100 * c.first_wins / c.games:5.1f}% [{100 * c.low:.0f}-{100 * c.high:.0f}%]" if c.games else "-"
            agree = {True: "agrees", False: "DISAGREES", None: "undecided"}[c.agrees]
            lines.append(f"  {names:<24} {c.reason:<13} table {100 * c.table_win_rate:5.1f}% swap "
                         f"{'yes' if c.table_swap else 'no ':<3}  games {c.first_wins:>3}/{c.games:<3} {score}  {agree}")
        checked, decided, agree = table.check_summary()
        lines.append(f"  {checked} openings checked; {decided} decided by the games (interval excludes 50%), "
                     f"{agree} of them as the table's swap decision says")
    if has_exact:
        wrong = analysis.exact_errors()
        source = "published solution (Hayward et al. 2003)" if published else "exact solver"
        lines.append(f"{source}: the search classifies {total - len(wrong)} of {total} moves correctly")
    return "\n".join(lines)


def _swap_rule(analysis) -> bool:
    """Whether the analysed game has the pie rule (the swap column means something only then)."""
    from conhex_zero.games.game import parse_game

    return parse_game(analysis.game).swap

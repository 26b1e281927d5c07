"""``conhex-zero book show``: a book's first-move table, with the truth beside it where the board is
solved (Hex 4x4, 5x5 by the exact solver, 7x7 by the published solution), another opening table beside
it (``--table``), and self-play games where the two disagree (``--check-games``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from conhex_zero.cli.book_common import line_name, open_checked, preflight_book_folder
from conhex_zero.cli.common import (CliError, HelpFormatter, add_backend_argument, check_output_file, output_json,
                                    preflight_checkpoint, preflight_file)
from conhex_zero.cli.numbers import CHECK_GAMES, SEED, SIMS, Whole
from conhex_zero.console.words import plural


def add_show_parser(what: argparse._SubParsersAction) -> None:
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


def _refuted_line(groups) -> str:
    """``replies proven to fail below the moves not proven ...: e3/d6 6 of 63, ...``: where ``book prove
    --doubts`` stands on each move not yet proven (empty where no reply is)."""
    parts = [f"{'/'.join(m.move for m in g)} {g[0].replies_refuted} of {g[0].replies_legal}"
             for g in groups if g[0].proven is None and g[0].replies_refuted]
    if not parts:
        return ""
    return ("replies proven to fail below the moves not proven (each a proof on the mover's side; the move is "
            "proven once every reply is): " + ", ".join(parts))


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
    refuted = _refuted_line(groups.values())
    if refuted:
        lines.append(refuted)
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

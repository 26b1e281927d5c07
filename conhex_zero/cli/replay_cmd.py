"""``conhex-zero replay GAME MOVES... [--json]``: play a move list and show the final position.

With ``--record FILE [--index I]`` the game comes from a record file (arena JSON lines, Little
Golem ConHex or Hex SGF, HexGui/PlayHex SGF); ``--analyse PLAYER`` reviews it move by move and
``--to-sgf OUT`` writes it as SGF.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from typing import TYPE_CHECKING

from conhex_zero.cli.common import (add_backend_argument, CliError, preflight_file, preflight_game, preflight_players, HelpFormatter,
                                    add_threads_argument, check_output_file, load_record, print_json, resolve_device,
                                    use_color)
from conhex_zero.cli.numbers import INDEX, SEED, SIMS, Whole

if TYPE_CHECKING:  # imported in run(): --help stays fast
    from conhex_zero.env.vec_env import VecEnv

EPILOG = """\
examples:
  conhex-zero replay conhex F6 swap E6 G6
  conhex-zero replay --record runs/match.jsonl --index 3
  conhex-zero replay --record runs/match.jsonl --index 3 --to-sgf game3.sgf
  conhex-zero replay --record game3.sgf --analyse mcts-rollout:200
  conhex-zero replay --record game3.sgf --analyse checkpoints/hex5-l4h64.pt --json

record files: arena records (JSON lines, --index is the record's index) or SGF, several games per
file allowed (--index counts from 0): Little Golem ConHex (FF[CONHEX]; rows counted from the bottom,
converted to ours), Little Golem Hex (two-letter points), Hex SGF (GM[11]: HexGui, MoHex, PlayHex).
A game that ends by connection must be won by its recorded winner; a resigned or unfinished game
ends on a running position.

--analyse PLAYER searches every position of the game in one batch, and the position after the AI's
preferred move wherever another move was played, and prints, for each move, X's win chance (X moves
first) before and after it, the move the AI preferred, the mover's loss (win percent given away,
never negative: 0 when the move lost nothing, and 0 for the AI's preferred move) and X's win chance
after the AI's move; then the biggest mistakes. A search's values swing from ply to ply even after
its own preferred move, so a loss is a mistake only when it exceeds the threshold: twice the
search's noise, the root mean square of those swings over the game (the swing of a move: the
mover's win percent before it minus after the AI's preferred move).
With --json it prints
  {"game", "player", "simulations", "seed", "start_value", "winner", "record", "noise", "threshold",
   "noise_multiple", "moves": [{"ply", "move", "notation", "player", "value_before", "value_after",
   "best_move", "loss", "best_value_after", "mistake"}], "mistakes": [the moves whose loss exceeds
   the threshold, biggest loss first]}
(values in percent for X, player 0 = X; "move" is our hole name, "notation" the record's own).

plies: a position's ply is the number of moves played to reach it (the swap and random opening
pieces count as moves): the text's "after N plies" and the JSON's "ply" are the same number. A
move's "ply" in a review is its number, 1 for the first move: the position after it has that ply.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay", help="play a move list (or a recorded game) and show the position",
        description="Play MOVES from the start of GAME and show the final position. Moves are hole "
        "names (F6, c3; any case) or 'swap', separated by spaces or commas. An illegal or malformed "
        "move is reported with its number and the reason (exit code 2). With --record, replay game "
        "INDEX of a record file and check that it ends as recorded.",
        epilog=EPILOG, formatter_class=HelpFormatter)
    p.add_argument("game", nargs="?", help="game spec, e.g. conhex or hex-11:swap")
    p.add_argument("moves", nargs="*", help="moves, e.g. F6 swap E5")
    p.add_argument("--record", metavar="FILE",
                   help="a record file: arena JSON lines or SGF (Little Golem ConHex/Hex, HexGui, PlayHex)")
    p.add_argument("--index", type=INDEX, default=0,
                   help="which game of the record file: an arena record's index, else counting from 0 "
                        "(default: 0)")
    p.add_argument("--json", action="store_true",
                   help='print {"winner", "to_move", "cell_owners", ...} as JSON instead '
                        "(with --analyse: the review, see below)")
    p.add_argument("--ids", action="store_true", help="show the ids of unconquered cells")
    p.add_argument("--analyse", "--analyze", metavar="PLAYER", dest="analyse",
                   help="review the game with PLAYER: a checkpoint (CKPT or CKPT:sims=N), mcts-rollout:K "
                        "or policy:CKPT")
    p.add_argument("--sims", type=SIMS, default=None, help="simulations of a checkpoint's search (default: 64)")
    p.add_argument("--seed", type=SEED, default=0, help="the analysing player's seed (default: 0)")
    p.add_argument("--mistakes", type=Whole(0, 1000), default=3, metavar="K", help="how many mistakes to list (default: 3)")
    p.add_argument("--device", default="cpu", help="device for --analyse: cpu or cuda (default: cpu)")
    add_threads_argument(p)
    add_backend_argument(p)
    p.add_argument("--to-sgf", metavar="OUT",
                   help="also write the game as SGF (Little Golem style for ConHex, GM[11] for Hex)")
    p.set_defaults(run=run)


def _arena_note(record) -> str:
    """The arena record's line, exactly as before records of other formats were read."""
    raw = record.properties
    head = f"game {raw.get('index', record.index)}: {raw['first']} (X) vs {raw['second']} (O)"
    if raw["result"] == "connection":
        return f"{head}: {raw.get('winner_name') or record.winner_name} won, as recorded"
    return f"{head}: {raw['result']}"


def _record_json(record) -> dict:
    raw = record.properties if record.format == "arena" else {}
    out = {"index": record.index, "first": record.players[0], "second": record.players[1],
           "winner_name": raw.get("winner_name", record.winner_name),
           "result": raw.get("result", record.ending), "format": record.format, "ending": record.ending,
           "winner": record.winner}
    if record.format != "arena":
        out["notation"] = list(record.notation)
    return out


def _preflight_moves(game: str | None, moves: list[str]) -> None:
    """A misspelt move name, refused before torch (the rules' own check of each move comes later)."""
    if not game:
        return
    from conhex_zero.games.game import IllegalMoveError, parse_game, parse_moves

    try:
        parse_moves(parse_game(game), moves)
    except IllegalMoveError as err:
        raise CliError(str(err)) from None


def run(args: argparse.Namespace) -> int:
    if args.record:  # before torch: a typo is answered at once
        preflight_file(args.record, "record file")
    else:
        preflight_game(args.game)
        _preflight_moves(args.game, args.moves)
    if args.analyse:
        preflight_players([args.analyse], args.sims)
    if args.to_sgf:
        check_output_file("--to-sgf", args.to_sgf)  # before the work, not after a review
    from conhex_zero.env.notation import play_moves, render_state, split_moves, summarize
    from conhex_zero.env.vec_env import VecEnv
    from conhex_zero.play.session import position_line

    record = None
    if args.record:
        if args.game or args.moves:
            raise CliError("give either GAME MOVES... or --record FILE, not both")
        record = load_record(args.record, args.index)
        args.game, args.moves = record.game, record.moves
    elif not args.game:
        raise CliError("give a game spec and moves (e.g. conhex F6 swap E6), or --record FILE")
    env = VecEnv(args.game)
    moves = split_moves(args.moves)
    state = play_moves(env, moves)
    names = [env.game.action_name(env.game.parse_move(m)) for m in moves]
    note = None
    if record is not None:
        if record.format == "arena":
            note = _arena_note(record)
        else:
            note = (f"game {record.index} ({record.format}): {record.player_label(0)} vs "
                    f"{record.player_label(1)}: {record.result_text()}")
    sgf_path = _write_sgf(args, env, names, record) if args.to_sgf else None

    review = _review(args, names, record) if args.analyse else None
    if args.json:
        out = review.to_json() if review is not None else {**summarize(env, state), "moves": names}
        if record is not None:
            out["record"] = _record_json(record)
        if sgf_path:
            out["sgf"] = sgf_path
        print_json(out)
        return 0
    last = env.game.parse_move(moves[-1]) if moves else None
    picture = render_state(env, state, cell_ids=args.ids, color=use_color(),
                           last=last if last is not None and last < env.num_holes else None).rsplit("\n", 1)[0]
    print(picture)
    print(position_line(summarize(env, state)))  # the ply as --json gives it
    if note:
        print(note)
    if sgf_path:
        print(f"SGF written to {sgf_path}")
    if review is not None:
        from conhex_zero.records.review import format_review

        print()
        print(format_review(review))
    return 0


def _write_sgf(args: argparse.Namespace, env: "VecEnv", names: list[str], record) -> str:
    from conhex_zero.records import RecordError, record_from_moves, write_sgf

    try:
        if record is None:
            record = record_from_moves(env.game, names)
        text = write_sgf(record)
    except RecordError as err:
        raise CliError(str(err)) from None
    path = Path(args.to_sgf)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    except OSError as err:
        raise CliError(f"cannot write {path}: {err}") from None
    return str(path)


def _review(args: argparse.Namespace, names: list[str], record):
    from conhex_zero.agents.players import PlayerSpecError
    from conhex_zero.nn.checkpoint import CheckpointError
    from conhex_zero.env.vec_env import VecEnv
    from conhex_zero.records.review import review_game

    device = resolve_device(args.device)
    env = VecEnv(args.game, device)
    try:
        return review_game(env.game, names, args.analyse, simulations=args.sims, seed=args.seed,
                           progress=sys.stderr.isatty(), notation=record.notation if record else None,
                           mistakes=args.mistakes, env=env)
    except (PlayerSpecError, CheckpointError) as err:
        raise CliError(str(err)) from None
    except ValueError as err:
        raise CliError(str(err)) from None

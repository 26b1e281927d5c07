"""``conhex-zero replay GAME MOVES... [--json]``: play a move list and show the final position."""

from __future__ import annotations

import argparse

from pathlib import Path

from conhex_zero.cli.common import CliError, print_json, use_color
from conhex_zero.env.notation import play_moves, render_state, split_moves, summarize
from conhex_zero.env.vec_env import VecEnv


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay", help="play a move list (or a recorded game) and show the position",
        description="Play MOVES from the start of GAME and show the final position. Moves are hole "
        "names (F6, c3; any case) or 'swap', separated by spaces or commas. An illegal or malformed "
        "move is reported with its number and the reason (exit code 2). With --record, replay game "
        "INDEX of an arena record file and check that it ends as recorded.",
        epilog="examples:\n  conhex-zero replay conhex F6 swap E6 G7\n"
               "  conhex-zero replay --record runs/arena/a-vs-b.jsonl --index 3",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("game", nargs="?", help="game spec, e.g. conhex or hex-11:swap")
    p.add_argument("moves", nargs="*", help="moves, e.g. F6 swap E5")
    p.add_argument("--record", metavar="FILE", help="an arena record file (JSON lines)")
    p.add_argument("--index", type=int, default=0, help="which game of the record file (default: 0)")
    p.add_argument("--json", action="store_true",
                   help='print {"winner", "to_move", "cell_owners", ...} as JSON instead')
    p.add_argument("--ids", action="store_true", help="show the ids of unconquered cells")
    p.set_defaults(run=run)


def _load_record(path: str, index: int) -> dict:
    from conhex_zero.jsonl import read_jsonl

    if not Path(path).is_file():
        raise CliError(f"no record file at {path}")
    try:
        records = read_jsonl(path)
    except ValueError as err:
        raise CliError(str(err)) from None
    for record in records:
        if record.get("index") == index:
            return record
    raise CliError(f"{path} has no game with index {index}")


def run(args: argparse.Namespace) -> int:
    record = None
    if args.record:
        if args.game or args.moves:
            raise CliError("give either GAME MOVES... or --record FILE, not both")
        record = _load_record(args.record, args.index)
        args.game, args.moves = record["game"], record["moves"]
    elif not args.game:
        raise CliError("give a game spec and moves (e.g. conhex F6 swap E6), or --record FILE")
    env = VecEnv(args.game)
    moves = split_moves(args.moves)
    state = play_moves(env, moves)
    note = None
    if record is not None:
        winner = summarize(env, state)["winner"]
        if record["result"] == "connection":
            if winner != record["winner"]:
                raise CliError(f"the record says {record['winner_name']} won, but the moves end with winner {winner}")
            note = f"game {record['index']}: {record['first']} (X) vs {record['second']} (O): {record['winner_name']} won, as recorded"
        else:
            note = f"game {record['index']}: {record['first']} (X) vs {record['second']} (O): {record['result']}"
    if args.json:
        out = summarize(env, state)
        out["moves"] = [env.game.action_name(env.game.parse_move(m)) for m in moves]
        if record is not None:
            out["record"] = {k: record[k] for k in ("index", "first", "second", "winner_name", "result")}
        print_json(out)
        return 0
    last = env.game.parse_move(moves[-1]) if moves else None
    print(render_state(env, state, cell_ids=args.ids, color=use_color(),
                       last=last if last is not None and last < env.num_holes else None))
    if note:
        print(note)
    return 0

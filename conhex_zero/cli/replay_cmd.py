"""``conhex-zero replay GAME MOVES... [--json]``: play a move list and show the final position."""

from __future__ import annotations

import argparse

from conhex_zero.cli.common import print_json, use_color
from conhex_zero.env.notation import play_moves, render_state, split_moves, summarize
from conhex_zero.env.vec_env import VecEnv


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay", help="play a move list and show the position",
        description="Play MOVES from the start of GAME and show the final position. Moves are hole "
        "names (F6, c3; any case) or 'swap', separated by spaces or commas. An illegal or malformed "
        "move is reported with its number and the reason (exit code 2).",
        epilog="example: conhex-zero replay conhex F6 swap E5 G7")
    p.add_argument("game", help="game spec, e.g. conhex or hex-11:swap")
    p.add_argument("moves", nargs="*", help="moves, e.g. F6 swap E5")
    p.add_argument("--json", action="store_true",
                   help='print {"winner", "to_move", "cell_owners", ...} as JSON instead')
    p.add_argument("--ids", action="store_true", help="show the ids of unconquered cells")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    env = VecEnv(args.game)
    moves = split_moves(args.moves)
    state = play_moves(env, moves)
    if args.json:
        out = summarize(env, state)
        out["moves"] = [env.game.action_name(env.game.parse_move(m)) for m in moves]
        print_json(out)
        return 0
    last = env.game.parse_move(moves[-1]) if moves else None
    print(render_state(env, state, cell_ids=args.ids, color=use_color(),
                       last=last if last is not None and last < env.num_holes else None))
    return 0

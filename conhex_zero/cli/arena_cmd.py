"""``conhex-zero arena P1 P2 --game GAME --games N [--json]``: a match between two players."""

from __future__ import annotations

import argparse

from conhex_zero.cli.common import CliError, print_json, resolve_device

PLAYERS_HELP = ("a player: random, mcts-rollout:K (random-rollout MCTS, K simulations), policy:CKPT "
                "(a checkpoint's raw policy), or CKPT / CKPT:sims=N (checkpoint + search)")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "arena", help="play a match between two players",
        description="Play many games at once between two players, in pairs that share a random opening "
        "with colours exchanged, so each player moves first in half of them. Prints the tally (or JSON "
        "with games, wins [P1, P2] and score = P1's share).",
        epilog="example: conhex-zero arena random mcts-rollout:64 --game hex-5 --games 100")
    p.add_argument("player1", metavar="P1", help=PLAYERS_HELP)
    p.add_argument("player2", metavar="P2", help="the other player, same forms")
    p.add_argument("--game", default="conhex", help="game spec (default: conhex); add random=K "
                   "for K random opening pieces per player")
    p.add_argument("--games", type=int, default=100, help="games in the match (default: 100)")
    p.add_argument("--sims", type=int, default=None,
                   help="simulations for checkpoint players without :sims=N (default: 64)")
    p.add_argument("--seed", type=int, default=0, help="match seed (default: 0)")
    p.add_argument("--opening-plies", type=int, default=1, metavar="K",
                   help="random moves opening each pair of games, colours exchanged within a pair "
                   "(default: 1; 0 starts every game from the empty board)")
    p.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from conhex_zero.agents.arena import play_match
    from conhex_zero.agents.players import PlayerSpecError, make_player
    from conhex_zero.env.vec_env import VecEnv
    from conhex_zero.nn.checkpoint import CheckpointError

    if args.games < 1:
        raise CliError("--games must be at least 1")
    if args.sims is not None and args.sims < 1:
        raise CliError("--sims must be at least 1")
    env = VecEnv(args.game, resolve_device(args.device))
    try:
        p1 = make_player(args.player1, env, seed=args.seed, simulations=args.sims)
        p2 = make_player(args.player2, env, seed=args.seed + 1, simulations=args.sims)
    except (PlayerSpecError, CheckpointError) as err:
        raise CliError(str(err)) from None
    if args.opening_plies < 0:
        raise CliError("--opening-plies must be 0 or more")
    result = play_match(env, p1, p2, args.games, seed=args.seed, progress=not (args.quiet or args.json),
                        opening_plies=args.opening_plies)
    if args.json:
        print_json(result.to_json())
        return 0
    print(f"{result.game}: {result.games} games, each player first in half of them")
    width = max(len(n) for n in result.players)
    for k, key in enumerate(("player1", "player2")):
        first, second = result.wins_by_colour[key]
        print(f"  {result.players[k]:<{width}}  {result.wins[k]:>5} wins   "
              f"(moving first {first}, second {second})")
    print(f"score of {result.players[0]}: {result.score:.3f}   mean game length {result.mean_length:.1f} plies")
    return 0

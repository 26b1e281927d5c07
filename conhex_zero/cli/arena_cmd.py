"""``conhex-zero arena P1 P2 [--games N] [--game GAME] [--sims N] [--json]``: a match between two players."""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from conhex_zero.disk import new_file
from conhex_zero.cli.common import (CliError, HelpFormatter, add_threads_argument, check_arena_arguments,
                                    game_for_players, plural, preflight_game, preflight_players, print_json,
                                    resolve_device, warn)
PLAYERS_HELP = ("a player: random, mcts-rollout:K (random-rollout MCTS, K simulations), policy:CKPT "
                "(a checkpoint's raw policy), CKPT, CKPT:sims=N or CKPT:seconds=S (checkpoint + search: N "
                "simulations, or S seconds a move, each position searched alone), gtp:\"COMMAND\" (an external "
                "engine speaking GTP, named gtp:PROGRAM in records and ladders) or gtp@NAME:\"COMMAND\" (the same, "
                "named gtp@NAME)")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "arena", help="play a match between two players",
        description="Play many games at once between two players, in pairs that share a random opening "
        "with colours exchanged, so each player moves first in half of them. Every pair has its own "
        "opening, drawn without replacement from the openings that differ up to the board's symmetries; "
        "when the board has fewer distinct openings of --opening-plies moves than the match has pairs, "
        "all pairs get longer openings (Hex 5x5: 13 distinct first moves, 300 two-move openings), so no "
        "two games are the same even between deterministic players.\n"
        "Prints wins by colour, the score and the Elo difference with 95% intervals, the distinct games "
        "and openings, and writes every game record (JSON lines; replay one with: conhex-zero replay "
        "--record FILE --index I). Intervals, Elo and the ladder count the evidence once: a game "
        "repeated (the same moves up to symmetry, the same players in the same colours) counts as one "
        "game, so the Wilson interval is taken over the distinct games; the plain score counts all. "
        "With distinct openings that happens only on boards too small for the match "
        "(a warning says so) or with --fixed-openings.\n"
        "The progress bar counts plies "
        "(moves, all games together) against an estimate of the match's plies, refined as games end, "
        "with the games finished and the time left.\n"
        "The game is --game, else the one the first checkpoint among the players was trained on, else "
        "conhex; two checkpoints trained on different games need --game, and a model playing a game it "
        "was not trained on is warned about.",
        epilog="examples:\n  conhex-zero arena random mcts-rollout:64 --game hex-5 --games 100 --records runs/match.jsonl\n"
               "  conhex-zero arena runs/hex5/best.pt mcts-rollout:200 --game hex-5 --until-decided --games 400\n"
               "  conhex-zero arena checkpoints/hex5-l4h64.pt:seconds=1 mcts-rollout:1000 --games 40\n\n"
               "An external engine that speaks GTP, here MoHex (when installed):\n"
               "  conhex-zero arena runs/hex11/best.pt gtp:\"mohex --use-book false\" --game hex-11 --games 20",
        formatter_class=HelpFormatter)
    p.add_argument("player1", metavar="P1", help=PLAYERS_HELP)
    p.add_argument("player2", metavar="P2", help="the other player, same forms")
    p.add_argument("--game", default=None, help="game spec (default: the game the first checkpoint among "
                   "the players was trained on, else conhex; two checkpoints trained on different games "
                   "need --game); add random=K for K random opening pieces per player")
    p.add_argument("--games", type=int, default=100,
                   help="games in the match, or the most games with --until-decided (default: 100)")
    p.add_argument("--sims", type=int, default=None,
                   help="simulations for checkpoint players without :sims=N (default: 64)")
    p.add_argument("--opening-plies", type=int, default=1, metavar="K",
                   help="at least K random moves open each pair of games, colours exchanged within a pair; "
                   "more when the board has fewer than --games/2 distinct K-move openings (default: 1). "
                   "With the swap rule, an opening of two or more moves passes the swap's turn, so those "
                   "games have no swap (ConHex has 22 distinct first moves: 44 games keep the swap)")
    p.add_argument("--fixed-openings", action="store_true",
                   help="openings of exactly --opening-plies moves (0: every game from the empty board), "
                   "reused as evenly as possible when the board has too few: between deterministic "
                   "players the repeats are copies, which the intervals count once")
    p.add_argument("--scoring", action="store_true",
                   help="also score the match in the scoring variant: pairs of games from the same opening "
                   "with colours exchanged, the winner of a game scores the pieces it placed, the lower "
                   "total over the pair wins the pair (a player winning both games wins it; equal totals "
                   "are a draw, half a pair each); reports the pair score with a 95%% interval, pieces "
                   "per win and each pair's result by opening (JSON keys pairs, pair_score, pieces_per_win)")
    p.add_argument("--until-decided", action="store_true",
                   help="play rounds until the 99%% interval of the score excludes 1/2 (or --games)")
    p.add_argument("--round", type=int, default=20, metavar="R", help="games per round with --until-decided")
    p.add_argument("--records", metavar="FILE", help="where to write the game records "
                   "(default: runs/arena/<P1>-vs-<P2>-<time>.jsonl)")
    p.add_argument("--ladder", metavar="DIR", help="also add the result to DIR/ladder.jsonl (see conhex-zero ladder)")
    p.add_argument("--gtp-timeout", type=float, default=10.0, help="seconds an engine may take per reply")
    p.add_argument("--gtp-parallel", type=int, default=4, help="engine processes per GTP player")
    p.add_argument("--seed", type=int, default=0, help="match seed (default: 0)")
    p.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    add_threads_argument(p)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=run)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(name).stem if name.endswith(".pt") else name)[:40]


def _elo(x: float) -> str:
    return "inf" if x == float("inf") else "-inf" if x == float("-inf") else f"{x:+.0f}"


def run(args: argparse.Namespace) -> int:
    check_arena_arguments(args)  # before torch: a typo is answered at once
    preflight_game(args.game)
    preflight_players([args.player1, args.player2], args.sims)
    from conhex_zero.agents.arena import play_match, play_until_decided
    from conhex_zero.agents.match_openings import OpeningError, check_opening_length
    from conhex_zero.agents.players import PlayerSpecError, make_player
    from conhex_zero.env.vec_env import VecEnv
    from conhex_zero.ladder.store import Ladder
    from conhex_zero.nn.checkpoint import CheckpointError

    if args.scoring and (args.games % 2 or (args.until_decided and args.round % 2)):
        raise CliError("--scoring plays pairs: --games (and --round) must be even")
    if args.opening_plies < 0:  # the others are checked by check_arena_arguments
        raise CliError("--opening-plies must be at least 0")
    env = VecEnv(game_for_players("arena", args.game, [args.player1, args.player2]), resolve_device(args.device))
    try:
        check_opening_length(env.game, env.game.opening_plies + args.opening_plies)
    except OpeningError as err:
        raise CliError(f"--opening-plies {args.opening_plies}: {err}") from None
    players = []
    try:
        for k, spec in enumerate((args.player1, args.player2)):
            players.append(make_player(spec, env, seed=args.seed + k, simulations=args.sims,
                                       gtp_timeout=args.gtp_timeout, gtp_parallel=args.gtp_parallel))
    except (PlayerSpecError, CheckpointError) as err:
        raise CliError(str(err)) from None
    if players[0].name == players[1].name:  # keep the two apart in records and ladders
        players[1].name += " (2)"
    progress = not (args.quiet or args.json)
    try:
        if args.until_decided:
            result = play_until_decided(env, players[0], players[1], args.games, args.round, seed=args.seed,
                                        progress=progress, opening_plies=args.opening_plies,
                                        fixed_openings=args.fixed_openings)
        else:
            result = play_match(env, players[0], players[1], args.games, seed=args.seed, progress=progress,
                                opening_plies=args.opening_plies, fixed_openings=args.fixed_openings)
    finally:
        for p in players:
            if hasattr(p, "close"):
                p.close()
    if result.openings_repeat:
        warn("arena", f"{result.game} has only {result.openings_available} distinct openings of "
             f"{plural(result.opening_plies, 'ply', 'plies')} for {plural((result.games + 1) // 2, 'pair')}: some "
             f"openings repeat, and the intervals count each distinct game once")
    records = Path(args.records) if args.records else new_file(
        Path("runs") / "arena" / f"{_slug(players[0].name)}-vs-{_slug(players[1].name)}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl")
    result.write_records(records)
    if args.ladder:
        ladder = Ladder.open(args.ladder)
        for spec, player in zip((args.player1, args.player2), players):
            kind = "reference" if spec == "random" or spec.startswith("mcts-rollout") else "player"
            if player.name not in ladder.players:
                ladder.add_player(player.name, kind)
        ladder.add_match(players[0].name, players[1].name, result.distinct_wins_by_colour(), env.game.spec)
    scoring = result.scoring() if args.scoring else None
    if args.json:
        print_json({**result.to_json(records), **(scoring.to_json() if scoring else {})})
        return 0
    low, high = result.score_ci95
    elo_low, elo_high = result.elo_ci95
    print(f"{result.game}: {result.games} games in colour-exchanged pairs over random openings "
          f"({plural(result.opening_plies, 'ply', 'plies')})"
          + (f"; {'decided' if result.decided else 'not decided'} after {plural(result.rounds, 'round')}"
             if args.until_decided else ""))
    print(f"  {result.distinct_games} distinct games, {plural(result.distinct_openings, 'distinct opening')}"
          + (f" (the board has {result.openings_available} of {plural(result.opening_plies, 'ply', 'plies')}: "
             "some openings repeat)" if result.openings_repeat else ""))
    width = max(len(n) for n in result.players)
    for k, key in enumerate(("player1", "player2")):
        first, second = result.wins_by_colour[key]
        print(f"  {result.players[k]:<{width}}  {plural(result.wins[k], 'win'):>10}   "
              f"(moving first {first}, second {second})")
    if result.distinct_games < result.games:
        print(f"score of {result.players[0]}: {result.score:.3f} over all games; over the "
              f"{result.distinct_games} distinct games {result.distinct_score:.3f} [{low:.3f}, {high:.3f}]   "
              f"Elo difference {_elo(result.elo)} [{_elo(elo_low)}, {_elo(elo_high)}] (95%)")
    else:
        print(f"score of {result.players[0]}: {result.score:.3f} [{low:.3f}, {high:.3f}]   "
              f"Elo difference {_elo(result.elo)} [{_elo(elo_low)}, {_elo(elo_high)}] (95%)")
    per_move = ", ".join(f"{name} {'-' if t is None else f'{1000 * t:.1f} ms'}"
                         for name, t in zip(result.players, result.seconds_per_move))
    print(f"mean game length {result.mean_length:.1f} plies; forfeits {result.forfeits}; records: {records}")
    print(f"thinking time per move (batched): {per_move}")
    if scoring:
        print_scoring(scoring, result.players)
    return 0


def print_scoring(scoring, names: tuple[str, str]) -> None:
    """The scoring variant's pairs: score with interval, pieces per win, each pair by opening."""
    low, high = scoring.pair_score_ci95
    counts, pieces = scoring.counts(), scoring.pieces_per_win()
    print(f"scoring variant, {len(scoring.pairs)} pairs: {names[0]} wins {counts['player1']}, {names[1]} wins "
          f"{counts['player2']}, {counts['draw']} drawn; pair score of {names[0]}: {scoring.pair_score:.3f} "
          f"[{low:.3f}, {high:.3f}] (95%)")
    for k, name in enumerate(names):
        per_win = pieces[f"player{k + 1}"]
        print(f"  {name}: {'no win' if per_win is None else f'{per_win:.1f} pieces per win'}")
    print("  opening        game 1 (P1 first)      game 2 (P2 first)      totals P1/P2   pair")
    for pair in scoring.pairs:
        games = []
        for w, n in zip(pair.winners, pair.pieces):
            games.append(f"{'P1' if w == 0 else 'P2'} wins, {n} pieces")
        totals = "/".join("-" if t is None else str(t) for t in pair.totals)
        result = {"player1": "P1", "player2": "P2", "draw": "draw"}[pair.result]
        print(f"  {' '.join(pair.opening) or '(empty)':<14} {games[0]:<22} {games[1]:<22} {totals:<14} {result}")

"""``conhex-zero gtp PLAYER [--game GAME] [--sims N]``: a Go Text Protocol engine on stdin/stdout."""

from __future__ import annotations

import argparse
import sys

from conhex_zero.cli.common import (add_backend_argument,
                                    book_for_game, preflight_book, CliError, preflight_game, preflight_players,
                                    HelpFormatter, add_threads_argument,
                                    check_clock_options, game_for_players, resolve_device, warn)
from conhex_zero.cli.play_cmd import BOOK_HELP, PLAYER_HELP, PONDER_HELP
from conhex_zero.cli.numbers import SECONDS, SEED, SIMS, TEMPERATURE, Real


HEXGUI_COMMAND = "conhex-zero gtp /path/to/CKPT --game hex-11:swap --swap-name swap-pieces"
"""The command line to give HexGui (Program > New Program), as in docs/play.md."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "gtp", help="run the AI as a GTP engine (for HexGui, twogtp, other programs)",
        description="Speak the Go Text Protocol on stdin and stdout, as Hex engines do (MoHex's command "
        "set): boardsize N (Hex N x N) or boardsize conhex, clear_board, play b|w MOVE, genmove b|w, "
        "undo, showboard, final_score, all_legal_moves, time_settings, time_left, and the analysis "
        "command conhex-analyze N (one line per move: MOVE visits V winrate W prior P pv M1 M2 ...). "
        "Black (b) is the first player, connecting top and bottom. See conhex_zero/play/gtp_engine.py. "
        "The game is --game, else the one the checkpoint was trained on, else conhex; a model told to play "
        "another game (also by boardsize) is warned about on stderr. Input lines longer than 64 KiB are "
        "answered with an error.",
        epilog="examples:\n  conhex-zero gtp checkpoints/hex5-l4h64.pt --game hex-5 --sims 200\n"
               "  conhex-zero arena mcts-rollout:200 \"gtp:conhex-zero gtp random --game hex-5\" --game hex-5\n\n"
               "HexGui: Program > New Program, with this command (the full path of the checkpoint; "
               "hex-11:swap because HexGui offers the swap, which it names swap-pieces; boardsize from "
               "HexGui keeps these rules on other board sizes):\n"
               f"  {HEXGUI_COMMAND}",
        formatter_class=HelpFormatter)
    p.add_argument("player", metavar="PLAYER", help=PLAYER_HELP)
    p.add_argument("--game", default=None,
                   help="game spec (default: the game the checkpoint was trained on, else conhex); "
                   "boardsize N switches to Hex N x N keeping its options")
    p.add_argument("--sims", type=SIMS, default=None, help="simulations per move of a checkpoint player "
                   "without :sims=N (default: 64)")
    p.add_argument("--seconds", type=SECONDS, default=None, metavar="S",
                   help="a checkpoint player without :sims=N thinks S seconds per move (a clock; its search "
                   "continues the tree of its previous move) instead of a number of simulations")
    p.add_argument("--temperature", type=TEMPERATURE, default=0.0,
                   help="sample moves from visit counts ** (1/T) (default: 0, the best move)")
    p.add_argument("--resign", type=Real(0.0, 1.0), default=None, metavar="V",
                   help="answer genmove with resign when the AI's value is below -V (e.g. 0.95, "
                   "a 2.5%% chance to win); default: never resign")
    p.add_argument("--swap-name", choices=("swap", "swap-pieces"), default="swap",
                   help="how genmove names the swap (HexGui understands swap-pieces; default: swap)")
    p.add_argument("--ponder", action="store_true", help=PONDER_HELP)
    p.add_argument("--book", metavar="DIR", help=BOOK_HELP)
    p.add_argument("--seed", type=SEED, default=0, help="seed (default: 0)")
    add_threads_argument(p)
    add_backend_argument(p)
    p.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    check_clock_options(args)  # before torch: a typo is answered at once (numbers: their argparse types)
    preflight_game(args.game)
    preflight_players([args.player], args.sims)
    preflight_book(args.book)
    from conhex_zero.agents.players import PlayerSpecError
    from conhex_zero.book.store import BookError
    from conhex_zero.nn.checkpoint import CheckpointError
    from conhex_zero.play.gtp_engine import GTPEngine, read_lines
    from conhex_zero.play.session import PlayError

    spec = game_for_players("gtp", args.game, [args.player])
    other_game = book_for_game(args.book, spec)
    if other_game:  # the game may switch to the book's (GTP's boardsize, the page's game menu)
        warn("gtp", f"{other_game}: it is used only once the game switches to its board")
    try:
        engine = GTPEngine(args.player, spec, simulations=args.sims, seed=args.seed,
                           temperature=args.temperature, resign_threshold=args.resign,
                           swap_name=args.swap_name, device=str(resolve_device(args.device)),
                           warn=lambda message: warn("gtp", message), seconds=args.seconds, ponder=args.ponder, book=args.book)
    except (PlayerSpecError, CheckpointError, PlayError, BookError) as err:
        raise CliError(str(err)) from None
    try:
        for line, too_long in read_lines(sys.stdin):
            response = engine.too_long(line) if too_long else engine.handle(line)
            if response:
                sys.stdout.write(response)
                sys.stdout.flush()
            if engine.quit:
                break
    except KeyboardInterrupt:
        pass
    finally:
        engine.close()
    return 0

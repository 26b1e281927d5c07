"""``conhex-zero serve PLAYER [--game GAME] [--as first|second] [--port P] [--host H] [--open]``: play
against the AI in a web browser. One page on localhost draws the real board, takes moves by click
and shows the AI's evaluation and top moves (``conhex_zero/play/server.py``, ``play/static/``).
"""

from __future__ import annotations

import argparse
import errno
import signal
import sys
import threading

from conhex_zero.cli.common import (add_backend_argument,
                                    book_for_game, preflight_book, CliError, preflight_game, preflight_players,
                                    HelpFormatter, add_threads_argument,
                                    check_clock_options, game_for_players, resolve_device, warn)
from conhex_zero.cli.play_cmd import BOOK_HELP, PLAYER_HELP, PONDER_HELP
from conhex_zero.cli.numbers import SECONDS, SEED, SIMS, TEMPERATURE, TOP, Whole


def add_parser(sub: argparse._SubParsersAction) -> None:
    from conhex_zero.play import DEFAULT_PORT

    p = sub.add_parser(
        "serve", help="play against the AI in a web browser (a page on localhost)",
        description="Serve one page on localhost that draws the board (ConHex's holes and cells, or "
        "Hex), takes your moves by click, offers the swap when it is legal, and shows the AI's "
        "evaluation and top candidate moves, with undo, hint and new game. Plain HTML and JavaScript "
        "served by this command; nothing is fetched from the internet. Other web sites cannot drive "
        "the game through your browser: the server answers only requests for its own address (see "
        "--allow-host) and JSON POSTs.",
        epilog="examples:\n  conhex-zero serve mcts-rollout:400 --open\n"
               "  conhex-zero serve checkpoints/hex5-l4h64.pt --game hex-5 --sims 200\n"
               "  conhex-zero serve random --game hex-7 --as second --port 0",
        formatter_class=HelpFormatter)
    p.add_argument("player", metavar="PLAYER", help=PLAYER_HELP)
    p.add_argument("--game", default=None, help="game spec (default: the game the checkpoint was trained on, "
                   "else conhex; the page can start others)")
    p.add_argument("--as", dest="side", choices=("first", "second"), default="first",
                   help="your side: first (X, top-bottom; default) or second (O, left-right)")
    p.add_argument("--port", type=Whole(0, 65535), default=DEFAULT_PORT,
                   help=f"TCP port (default: {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default: 127.0.0.1, this machine only)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="another name (or NAME:PORT) the page may be reached by, e.g. this machine's DNS "
                   "name behind --host 0.0.0.0 (repeatable); requests naming other hosts, and requests "
                   "from other web sites, are refused (403)")
    p.add_argument("--open", action="store_true", help="open the page in the default web browser (without "
                   "one, says so: then open the URL shown yourself)")
    p.add_argument("--sims", type=SIMS, default=None,
                   help="simulations per AI move for a checkpoint without :sims=N (default: 64)")
    p.add_argument("--seconds", type=SECONDS, default=None, metavar="S",
                   help="a checkpoint player without :sims=N thinks S seconds per move (a clock; its search "
                   "continues the tree of its previous move) instead of a number of simulations")
    p.add_argument("--temperature", type=TEMPERATURE, default=0.0,
                   help="sample the AI's moves from visit counts ** (1/T) (default: 0, the best move)")
    p.add_argument("--scoring", action="store_true",
                   help="the scoring variant: games in pairs with colours exchanged (the sides alternate every "
                   "new game), the winner scores the pieces they placed, the lower total over a pair wins; the "
                   "page keeps the running pair score (API: the state's 'scoring')")
    p.add_argument("--top", type=TOP, default=5, help="candidate moves shown (default: 5)")
    p.add_argument("--ponder", action="store_true", help=PONDER_HELP)
    p.add_argument("--book", metavar="DIR", help=BOOK_HELP)
    p.add_argument("--seed", type=SEED, default=0, help="seed (default: 0)")
    add_threads_argument(p)
    add_backend_argument(p)
    p.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    p.add_argument("--verbose", action="store_true", help="log every HTTP request on stderr")
    p.set_defaults(run=run)


def open_browser(url: str) -> threading.Thread | None:
    """Open ``url`` in the default web browser, in a thread (a browser may take its time to start);
    a warning with the URL when there is no browser or it cannot be started."""
    import webbrowser

    try:
        browser = webbrowser.get()
    except webbrowser.Error:
        warn("serve", f"no web browser found on this machine: open {url} in a browser yourself")
        return None

    def launch() -> None:
        try:
            opened = browser.open(url)
        except Exception:  # a broken browser command
            opened = False
        if not opened:
            warn("serve", f"the web browser could not be started: open {url} in a browser yourself")

    thread = threading.Thread(target=launch, name="conhex-zero-open-browser", daemon=True)
    thread.start()
    return thread


def run(args: argparse.Namespace) -> int:
    check_clock_options(args)  # before torch: a typo is answered at once (numbers: their argparse types)
    preflight_game(args.game)
    preflight_players([args.player], args.sims)
    preflight_book(args.book)
    from conhex_zero.agents.players import PlayerSpecError
    from conhex_zero.book.store import BookError
    from conhex_zero.nn.checkpoint import CheckpointError
    from conhex_zero.play.server import GameServer, PlayServer, is_local
    from conhex_zero.play.session import PlayError

    spec = game_for_players("serve", args.game, [args.player])
    other_game = book_for_game(args.book, spec)
    if other_game:  # the game may switch to the book's (GTP's boardsize, the page's game menu)
        warn("serve", f"{other_game}: it is used only once the game switches to its board")
    try:
        game = GameServer(args.player, spec, 0 if args.side == "first" else 1,
                          simulations=args.sims, temperature=args.temperature, seed=args.seed,
                          device=str(resolve_device(args.device)), top=args.top,
                          warn=lambda message: warn("serve", message), scoring=args.scoring,
                          seconds=args.seconds, ponder=args.ponder, book=args.book)
    except (PlayerSpecError, CheckpointError, PlayError, BookError) as err:
        raise CliError(str(err)) from None
    try:
        try:
            server = PlayServer(game, args.host, args.port, verbose=args.verbose, allowed_hosts=args.allow_host)
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                raise CliError(f"port {args.port} on {args.host} is already in use: choose another with "
                               f"--port P (or --port 0 for a free one)") from None
            raise CliError(f"cannot listen on {args.host}:{args.port}: {err.strerror or err}") from None
        if not is_local(args.host):
            print(f"conhex-zero serve: warning: listening on {args.host}, so other machines can reach "
                  "this page and play moves; there is no password", file=sys.stderr)
        print(f"conhex-zero serve: {game.session.game.spec} against {game.session.player_name} at "
              f"{server.url}  (Ctrl-C to stop)", flush=True)
        if args.open:
            open_browser(server.url)
        # Ctrl-C and `kill` stop the server, even when the shell that started it in the background
        # made the process ignore SIGINT (as non-interactive shells do for `cmd &`).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("\nconhex-zero serve: stopped.", flush=True)
        finally:
            server.server_close()
    finally:
        game.close()
    return 0

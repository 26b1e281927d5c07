"""``conhex-zero play PLAYER [--game GAME] [--as first|second] [--sims N] [--temperature T]``: a game
against the AI in the terminal. Moves are typed by name; the board is drawn after every move and the
AI's evaluation and candidate moves after each of its moves. Input is read line by line from stdin,
so a game can be scripted (``printf 'c3\\nb4\\n' | conhex-zero play random --game hex-3``).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import sys
import threading
import time
from typing import Iterator, TextIO

from conhex_zero.cli.common import (add_backend_argument, book_for_game, CliError, preflight_book, preflight_game,
                                    preflight_players, HelpFormatter,
                                    add_threads_argument,
                                    check_clock_options, game_for_players, is_terminal, plural, resolve_device,
                                    use_color)
from conhex_zero.cli.numbers import SECONDS, SEED, SIMS, TEMPERATURE, TOP

PONDER_HELP = ("think on the opponent's time: after each of its moves a checkpoint player searches on in the "
               "background (a second core) until the opponent moves, and its next search continues from the "
               "reply's subtree (at most 20,000 simulations; off by default: it takes a core)")
BOOK_HELP = ("an opening book folder (conhex-zero book grow): while the position is in the book the AI plays the "
             "book's best move and says so, and shows the book's values; out of the book it searches as usual")
PLAYER_HELP = ("the AI: random, mcts-rollout:K (random-rollout MCTS, K simulations), policy:CKPT (a "
               "checkpoint's raw policy), CKPT or CKPT:sims=N (checkpoint + search), CKPT:seconds=S (S "
               "seconds a move; CKPT:book=DIR adds an opening book), or gtp:\"COMMAND\" (gtp@NAME:\"COMMAND\" names it)")

COMMANDS = ("help", "moves", "legal", "undo", "hint", "board", "resign", "quit", "exit")
HELP = """\
Type a move by its name (such as {example}), or a command:
  swap          take over the first move (when the swap rule allows it)
  undo          take back your last move and the AI's reply
  hint          the AI's suggestion for you, with its candidate moves
  moves, legal  list the legal moves
  board         draw the board again
  resign        give up this game
  quit, exit    leave (also end of input or Ctrl-C)
  help          this text"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "play", help="play a game against the AI in the terminal",
        description="Play against the AI in the terminal: type moves by name (F6, c3, swap) or undo, "
        "hint, moves, resign, quit, help. After each AI move its evaluation (value for its side, in "
        "[-1, 1], and as a chance to win) and top candidate moves are shown. Lower the strength with "
        "fewer simulations, a temperature, or an older checkpoint. On a terminal, a line shows that the AI "
        "is thinking (seconds, simulations done); scripted games (input not a terminal) print only the "
        "game. The game is --game, else the one the checkpoint was trained on, else conhex.",
        epilog="examples:\n  conhex-zero play checkpoints/hex5-l4h64.pt --game hex-5\n"
               "  conhex-zero play mcts-rollout:400\n"
               "  conhex-zero play checkpoints/hex5-l4h64.pt --game hex-5 --as second --sims 16 --temperature 1",
        formatter_class=HelpFormatter)
    p.add_argument("player", metavar="PLAYER", help=PLAYER_HELP)
    p.add_argument("--game", default=None, help="game spec (default: the game the checkpoint was trained on, "
                   "else conhex; a warning is shown when a model plays a game it was not trained on)")
    p.add_argument("--as", dest="side", choices=("first", "second"), default="first",
                   help="your side: first (X, top-bottom; default) or second (O, left-right)")
    p.add_argument("--sims", type=SIMS, default=None,
                   help="simulations per AI move for a checkpoint without :sims=N (default: 64)")
    p.add_argument("--seconds", type=SECONDS, default=None, metavar="S",
                   help="a checkpoint player without :sims=N thinks S seconds per move (a clock; its search "
                   "continues the tree of its previous move) instead of a number of simulations")
    p.add_argument("--temperature", type=TEMPERATURE, default=0.0,
                   help="sample the AI's moves from visit counts ** (1/T): weaker and more varied "
                   "(default: 0, always the best move)")
    p.add_argument("--scoring", action="store_true",
                   help="the scoring variant: games in pairs with colours exchanged (your side swaps every "
                   "game), the winner of a game scores the pieces they placed, the lower total over a pair "
                   "wins; a running pair score is kept until you quit")
    p.add_argument("--top", type=TOP, default=5, help="candidate moves shown (default: 5)")
    p.add_argument("--ponder", action="store_true", help=PONDER_HELP)
    p.add_argument("--book", metavar="DIR", help=BOOK_HELP)
    p.add_argument("--seed", type=SEED, default=0, help="seed (default: 0)")
    p.add_argument("--no-color", action="store_true", help="no ANSI colours, even in a terminal")
    add_threads_argument(p)
    add_backend_argument(p)
    p.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    p.set_defaults(run=run)


def _how(analysis) -> str:
    if analysis.source == "book":
        return "from the opening book: its minimax value, no search"
    if analysis.source != "search":
        return "network, no search"
    carried = f", {analysis.carried} carried over from its previous search" if analysis.carried else ""
    return f"after {plural(analysis.simulations, 'simulation')}{carried}"


def _candidate_table(analysis, top: int) -> list[str]:
    if not analysis.candidates or top <= 0:
        return []
    if analysis.source == "book":
        lines = ["    move    book positions below   win%"]
        for c in analysis.candidates[:top]:
            win = f"{c.proven:>5}" if c.proven else f"{c.win_percent:5.1f}"
            below = str(c.nodes) if c.nodes else "- (one search)"
            lines.append(f"    {c.move:<6} {below:>22}  {win}")
        return lines
    lines = ["    move    visits   win%   prior  line"]
    for c in analysis.candidates[:top]:
        win = (f"{c.proven:>5}" if c.proven else "    -" if c.win_percent is None else f"{c.win_percent:5.1f}")
        lines.append(f"    {c.move:<6} {c.visits:>7}  {win}  {c.prior:6.3f}  {' '.join(c.pv)}")
    return lines


def format_analysis(analysis, who: str, top: int) -> list[str]:
    """Lines describing an ``Analysis`` (none for players without one)."""
    if analysis.value is None:
        return []
    chance = (f"proven {analysis.proven}" if analysis.proven
              else f"{analysis.win_percent:.0f}% to win")
    return [f"  evaluation for {who}: {analysis.value:+.2f} ({chance}; {_how(analysis)})",
            *_candidate_table(analysis, top)]


def format_ai_move(move, who: str, top: int, temperature: float) -> list[str]:
    """Lines describing the AI's move. A move drawn at a temperature (not the search's best) shows
    its own evaluation beside the best move's: the analysis's value belongs to the best move."""
    analysis = move.analysis
    best = analysis.best
    if analysis.source == "book":  # the book's move: one of its best (symmetric images are worth the same)
        played = next((c for c in analysis.candidates if c.action == move.action), None)
        same = [c.move for c in analysis.candidates if c.action != move.action and played is not None
                and c.win_percent == played.win_percent and c.proven == played.proven]
        note = f" ({', '.join(same)} {'is' if len(same) == 1 else 'are'} worth the same to the book)" if same else ""
        return [f"  {move.move} is the opening book's move{note}", *format_analysis(analysis, who, top)]
    if best is None or best.action == move.action:
        return format_analysis(analysis, who, top)
    if analysis.source != "search":  # the policy's draw: the value is the position's, before the move
        return [f"  {move.move} was drawn at temperature {temperature:g} from the policy (prior "
                f"{_prior(analysis, move.action)}); its first choice was {best.move}",
                *format_analysis(analysis, who, top)]
    played = next((c for c in analysis.candidates if c.action == move.action), None)
    if played is None or (played.value is None and not played.proven):
        own = "not evaluated by the search"
    else:
        chance = f"proven {played.proven}" if played.proven else f"{played.win_percent:.0f}% to win"
        own = f"{played.value:+.2f} ({chance}; {_how(analysis)})"
    best_chance = f"proven {analysis.proven}" if analysis.proven else f"{analysis.win_percent:.0f}% to win"
    visits = "" if played is None else f", {played.visits} of {analysis.simulations} visits"
    return [f"  {move.move} was drawn at temperature {temperature:g} from the search's visits{visits}; "
            f"its best move was {best.move}",
            f"  evaluation for {who} of the move played, {move.move}: {own}",
            f"  (of its best move, {best.move}: {analysis.value:+.2f}, {best_chance})",
            *_candidate_table(analysis, top)]


def _prior(analysis, action: int) -> str:
    prior = next((c.prior for c in analysis.candidates if c.action == action), None)
    return "?" if prior is None else f"{prior:.3f}"


def describe_swap(game, holes_before: list[int]) -> str:
    """What a swap did to the pieces on the board: each goes to its image under the board's swap
    symmetry, in the other colour (``X's a2 is now O's b1``)."""
    from conhex_zero.games.render import PLAYER_NAMES

    board = game.board
    image = board.symmetry(board.swap_symmetry).hole_perm
    names = board.hole_names
    moved = [f"{PLAYER_NAMES[owner]}'s {names[h]} is now {PLAYER_NAMES[1 - owner]}'s {names[int(image[h])]}"
             for h, owner in enumerate(holes_before) if owner >= 0]
    return "; ".join(moved) + " (the pie rule: the board mirrored, colours exchanged)"


class Thinking:
    """A one-line sign of life on a terminal while the AI thinks: a spinner, the seconds spent and,
    for a search, the simulations done (``update``, from the session's ``on_simulation``). Redrawn
    by a thread every ``interval`` seconds, erased at the end: nothing stays in the output."""

    SPINNER = "|/-\\"

    def __init__(self, stream: TextIO, what: str, interval: float = 0.1):
        self.stream, self.what, self.interval = stream, what, interval
        self.done = self.total = 0
        self.start = time.perf_counter()
        self.width = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def update(self, done: int, total: int) -> None:
        self.done, self.total = done, total

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.start

    def _draw(self, tick: int) -> None:
        progress = f", {self.done}/{self.total} simulations" if self.total else ""
        line = f"{self.SPINNER[tick % 4]} {self.what}... {self.seconds:.1f} s{progress}"
        with self._lock:
            self.stream.write("\r" + line.ljust(self.width))
            self.stream.flush()
            self.width = max(self.width, len(line))

    def _loop(self) -> None:
        tick = 1
        while not self._stop.wait(self.interval):
            self._draw(tick)
            tick += 1

    def __enter__(self) -> "Thinking":
        self._draw(0)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        with self._lock:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()


class TerminalGame:
    """The conversation: a session, the person's side, input and output streams. With ``progress``
    (a terminal's stream), a ``Thinking`` line shows there while the AI searches."""

    def __init__(self, session, human: int, inp: TextIO, out: TextIO, color: bool = False, top: int = 5,
                 progress: TextIO | None = None, scoring: bool = False):
        from conhex_zero.play.pair_score import RunningPairScore

        self.s, self.inp, self.out = session, inp, out
        self.color, self.top, self.progress = color, top, progress
        self.scoring = RunningPairScore(first_side=human) if scoring else None
        self._set_side(human)
        self.example = session.game.board.hole_names[len(session.game.board.hole_names) // 2]

    def _set_side(self, human: int) -> None:
        from conhex_zero.games.render import PLAYER_NAMES

        self.human = human
        self.ai = f"{self.s.player_name} ({PLAYER_NAMES[1 - human]})"

    def say(self, *lines: str) -> None:
        for line in lines:
            self.out.write(line + "\n")
        self.out.flush()

    def show(self) -> None:
        self.say("", self.s.board_text(color=self.color))

    def ask(self) -> str | None:
        from conhex_zero.games.render import PLAYER_NAMES

        self.out.write(f"{PLAYER_NAMES[self.human]} to move> ")
        self.out.flush()
        line = self.inp.readline()
        if not line:
            return None
        if not (hasattr(self.inp, "isatty") and self.inp.isatty()):
            self.out.write(line.rstrip("\r\n") + "\n")  # scripted input: show what was read
        return line.strip()

    def run(self) -> int:
        from conhex_zero.play.session import side_name

        s = self.s
        self.say(f"{s.game.spec} ({s.game.rules_summary}): you are {side_name(self.human)}; "
                 f"the AI, {s.player_name}, is {side_name(1 - self.human)}.",
                 f"Type a move such as {self.example}, or help.")
        if self.scoring is not None:
            self.say("Scoring variant: games in pairs with colours exchanged; the winner of a game scores "
                     "the pieces they placed, and the lower total over a pair wins.")
        self.show()
        while True:
            if s.is_over:
                done = self.finish()
                if self.scoring is None:
                    return done
                self.next_game()
                continue
            if s.to_move != self.human:
                self.ai_turn()
                continue
            line = self.ask()
            if line is None:
                self.say("")
                return self.leave("End of input: game left unfinished. Goodbye.")
            if not line:
                continue
            done = self.command(line)
            if done is not None:
                return done

    @contextlib.contextmanager
    def thinking(self, what: str) -> Iterator[Thinking | None]:
        """Show that the AI is thinking (only with a ``progress`` stream)."""
        if self.progress is None:
            yield None
            return
        with Thinking(self.progress, what) as line:
            self.s.on_simulation = line.update
            try:
                yield line
            finally:
                self.s.on_simulation = None

    def ai_turn(self) -> None:
        s = self.s
        before = s.state.holes[0].tolist()
        # at a temperature the move played may lie outside the top candidates: ask for all of them
        top = max(self.top, len(s.legal_moves())) if s.temperature > 0 else self.top
        with self.thinking(f"{self.ai} is thinking") as line:
            move = s.ai_move(top=top)
        took = f" ({line.seconds:.1f} s)" if line is not None else ""
        if move.action == s.game.swap_action:
            self.say("", f"{self.ai} swaps{took}: {describe_swap(s.game, before)}; you move next.")
        else:
            self.say("", f"{self.ai} plays {move.move}{took}.")
        self.say(*format_ai_move(move, self.ai, self.top, s.temperature))
        self.show()

    def finish(self) -> int:
        winner = self.s.winner
        self.say("", "You win!" if winner == self.human else f"{self.ai} wins.",
                 f"Moves: {' '.join(self.s.moves)}")
        if self.scoring is not None:
            self.score_game(winner)
        return 0

    def score_game(self, winner: int) -> None:
        """Scoring variant: the game's pieces, and the pair's result when it completes one."""
        from conhex_zero.play.pair_score import AI, YOU, winner_pieces

        pieces = winner_pieces(self.s.state.holes, winner)
        you = winner == self.human
        self.say(f"{'You' if you else 'The AI'} won with {pieces} piece{'s' * (pieces != 1)}.")
        pair = self.scoring.record(YOU if you else AI, pieces)
        if pair is not None:
            self.say(self.scoring.describe_pair(pair), self.scoring.summary())
        else:
            self.say("The pair's second game follows, with colours exchanged.")

    def next_game(self) -> None:
        from conhex_zero.play.session import side_name

        self.s.new_game()
        self._set_side(self.scoring.human_side())
        self.say("", f"New game: you are {side_name(self.human)}; the AI is {side_name(1 - self.human)}.")
        self.show()

    def leave(self, message: str) -> int:
        self.say(message)
        if self.scoring is not None and self.scoring.games:
            self.say(f"Final score: {self.scoring.summary()}"
                     + (" (the last pair is unfinished)" if len(self.scoring.games) % 2 else ""))
        return 0

    def command(self, line: str) -> int | None:
        """Handle one line; an exit code when the session ends."""
        from conhex_zero.env.notation import IllegalMoveError
        from conhex_zero.games.game import MoveError
        from conhex_zero.play.session import PlayError

        s = self.s
        words = line.split()
        word = words[0].lower()
        if word in ("help", "?"):
            self.say(HELP.format(example=self.example))
        elif word in ("moves", "legal"):
            self.say(f"legal moves ({len(s.legal_moves())}): {' '.join(s.legal_moves())}")
        elif word == "board":
            self.show()
        elif word in ("quit", "exit", "q"):
            return self.leave("Game left unfinished. Goodbye.")
        elif word == "resign":
            self.say(f"You resign: {self.ai} wins.")
            if self.scoring is None:
                return 0
            self.score_game(1 - self.human)
            self.next_game()
        elif word == "hint":
            try:
                with self.thinking(f"{self.ai.split(' (')[0]} is looking for a hint"):
                    hint = s.hint(top=self.top)
            except PlayError as err:
                self.say(f"no hint: {err}")
                return None
            self.say(f"hint: {hint.move}")
            self.say(*format_analysis(hint.analysis, "you", self.top))
        elif word == "undo":
            self.undo()
        elif len(words) > 1:
            self.say(f"one move at a time, please (got {line!r}); type help for the commands")
        else:
            before = s.state.holes[0].tolist()
            try:
                action = s.play(word)
            except IllegalMoveError as err:
                self.say(f"illegal move: {err.reason}")
                return None
            except MoveError as err:
                close = difflib.get_close_matches(word, COMMANDS, n=1, cutoff=0.6)
                hint = f" Did you mean {close[0]!r}?" if close else ""
                self.say(f"{err}.{hint} Type 'moves' for the legal moves, 'help' for the commands.")
                return None
            if action == s.game.swap_action:
                self.say(f"You swap: {describe_swap(s.game, before)}; {self.ai} moves next.")
            self.show()
        return None

    def undo(self) -> None:
        """Take back the person's last move and every AI move after it."""
        s = self.s
        k = 0
        while k < s.undoable and s.mover_of(s.ply - 1 - k) != self.human:
            k += 1
        if k == s.undoable:
            self.say("nothing to undo: you have not moved yet")
            return
        k += 1
        while k < s.undoable and s.mover_of(s.ply - 1 - k) == self.human and s.mover_of(s.ply - k) == self.human:
            k += 1  # both pieces of a two-piece turn (extra-stone)
        taken = s.undo(k)
        self.say(f"taken back: {' '.join(taken)}")
        self.show()


def run(args: argparse.Namespace) -> int:
    check_clock_options(args)  # before torch: a typo is answered at once (numbers: their argparse types)
    preflight_game(args.game)
    preflight_players([args.player], args.sims)
    preflight_book(args.book)
    from conhex_zero.agents.players import PlayerSpecError
    from conhex_zero.book.store import BookError
    from conhex_zero.nn.checkpoint import CheckpointError
    from conhex_zero.play.session import PlayError, PlaySession

    game_spec = game_for_players("play", args.game, [args.player])
    other_game = book_for_game(args.book, game_spec)
    if other_game:
        raise CliError(f"{other_game}: it would never be used (grow one for this game with conhex-zero book grow)")
    try:
        session = PlaySession(game_spec, args.player, seed=args.seed, simulations=args.sims,
                              temperature=args.temperature, device=resolve_device(args.device), seconds=args.seconds,
                              ponder=args.ponder, book=args.book)
    except (PlayerSpecError, CheckpointError, PlayError, BookError) as err:
        raise CliError(str(err)) from None
    interactive = is_terminal(sys.stdin) and is_terminal(sys.stderr)  # both terminals: no script reads stderr
    game = TerminalGame(session, 0 if args.side == "first" else 1, sys.stdin, sys.stdout,
                        color=use_color(sys.stdout) and not args.no_color, top=args.top,
                        progress=sys.stderr if interactive else None, scoring=args.scoring)
    try:
        return game.run()
    except KeyboardInterrupt:
        game.say("")
        game.leave("Interrupted: game left unfinished. Goodbye.")
        return 130
    except PlayError as err:  # the AI could not move (an external engine failed)
        raise CliError(str(err)) from None
    finally:
        session.close()

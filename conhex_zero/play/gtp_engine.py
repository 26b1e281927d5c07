"""A Go Text Protocol engine around ``PlaySession``, as Hex programs and GUIs speak it (HexGui,
MoHex's command set), for Hex and for ConHex. ``GTPEngine.handle(line) -> str`` is pure (one input
line in, the complete response out), so it is tested without processes; ``conhex-zero gtp`` runs it
on stdin and stdout.

Framing (GTP 2): an optional numeric id is echoed (``=7 c3``); every response ends with an empty
line; ``#`` comments, empty lines and control characters are ignored (tabs count as spaces);
command names are case-insensitive; errors answer ``? message``; unknown commands answer
``? unknown command``. Multi-line responses (``showboard``, ``list_commands``, ``conhex-analyze``)
never contain an empty line.

Commands:

* ``protocol_version`` (2), ``name`` (conhex-zero), ``version``, ``known_command C``, ``list_commands``,
  ``quit``.
* ``boardsize N`` (also ``N N`` or ``NxN``, as HexGui sends it): Hex on N x N, 2 <= N <= 19, with the
  rule options of ``--game`` when that is a Hex game (``hex-7:swap`` keeps the swap rule), plain
  ``hex-N`` when it is ConHex; ``boardsize conhex`` for ConHex (the options of ``--game`` when that
  is ConHex). Anything else answers ``? unacceptable size``. The board is cleared.
* ``clear_board``; ``undo`` (one move; ``? cannot undo`` at the start).
* ``play COLOR MOVE``: COLOR is ``b``/``black`` (the first player, X, top-bottom) or ``w``/``white``
  (O, left-right); MOVE a hole name (``c3``, ``F6``) or ``swap`` (``swap-pieces`` and ``swap-sides``
  are read as ``swap``). Unlike MoHex, which lets a colour play out of turn, we keep the game's turn
  order: a move by the colour not to move answers ``? out of turn: b is to move``. Illegal moves
  answer ``? illegal move: <reason>``.
* ``genmove COLOR``: the AI moves for COLOR (which must be the colour to move) and answers the move's
  name, ``swap`` for the swap (``swap-pieces`` with ``--swap-name swap-pieces``), or ``resign`` when
  resigning is enabled (``resign_threshold``) and the AI's value for its side is below
  ``-resign_threshold`` (a resignation plays nothing). ``reg_genmove COLOR`` answers the same move
  without playing it.
* ``showboard``: the terminal picture and status line (the response starts on the line after ``=``).
* ``final_score``: ``B+`` or ``W+`` once the game is over (as HexGui and twogtp read results);
  ``? game not over`` before.
* ``all_legal_moves``: the legal moves, space-separated (a colour argument is accepted, ignored).
* ``time_settings MAIN BYO STONES`` and ``time_left COLOR T S``: stored; a search player then
  thinks each ``genmove`` for a time allocated from the clock (the time left over the expected number
  of own moves left, or a byo-yomi period over its stones, times ``SAFETY``; at most its own
  ``--seconds`` when it has one): its search runs until that deadline, continuing the tree of its
  previous move. ``time_settings 0 T 0`` (GTP's "no time limit") gives back the configured effort.
  Times are seconds from 0 to 10^7 (about 115 days), stones from 0 to 10^6; anything else (negative,
  not finite, too large) answers ``? ...`` and changes nothing.
* A line longer than ``MAX_LINE`` bytes (64 KiB) answers ``? line too long`` (with the command's id
  when the line starts with one) and is skipped whole (``read_lines`` never holds more of it), so the
  engine stays in step with its controller.
* ``conhex-analyze [N]`` (default 5): the AI's top N root moves for the side to move, nothing played,
  one line per move, best first::

      MOVE visits V winrate W prior P [proven win|loss] pv M1 M2 ...

  ``V`` the search visits of the move, ``W`` the chance in [0, 1] that the side to move wins after it
  (``(1 + q) / 2`` from the search's mean value, three decimals; ``-`` when the move was not
  searched), ``P`` the prior (network, or uniform for rollout search), four decimals, ``proven win``
  or ``proven loss`` when the search proved the move's result (W is then 1.000 or 0.000), and the
  principal variation starting with MOVE itself. Players without a search (``policy:CKPT``) give
  visits 0, winrate ``-`` and their prior; a random player answers an empty response.
"""

from __future__ import annotations

from conhex_zero.console.words import plural

import math
import sys
import re
from typing import Any, Callable, Iterator

from conhex_zero import __version__
from conhex_zero.env.notation import IllegalMoveError
from conhex_zero.games.game import GameSpecError, MoveError, parse_game
from conhex_zero.play.checkpoints import GameWarnings
from conhex_zero.play.session import PlaySession

COLOURS = {"b": 0, "black": 0, "w": 1, "white": 1}
COLOUR_NAMES = ("b", "w")
ANALYZE_COMMAND = "conhex-analyze"
DEFAULT_ANALYZE = 5
MAX_ANALYZE = 1000
SAFETY = 0.8  # fraction of a move's time budget spent searching
MIN_SECONDS = 0.05  # the least a move is given, however little time is left
MAX_SECONDS = 10_000_000  # time_settings and time_left: at most about 115 days
MAX_STONES = 1_000_000
MAX_LINE = 64 * 1024  # bytes in one command line
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _clip(text: str, limit: int = 40) -> str:
    """User input echoed in an answer: at most ``limit`` characters."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def read_lines(stream: Any, limit: int = MAX_LINE) -> Iterator[tuple[str, bool]]:
    """``(line, too_long)`` for each input line, as text whatever the bytes (undecodable bytes become
    U+FFFD). A line longer than ``limit`` bytes comes as its first ``limit`` bytes with ``too_long``:
    the rest of it is read in pieces and dropped, so a huge line never sits in memory."""
    source = getattr(stream, "buffer", None) or stream

    def text(chunk: Any) -> str:
        return chunk.decode("utf-8", errors="replace") if isinstance(chunk, bytes) else chunk

    while True:
        line = source.readline(limit + 1)
        if not line:
            return
        newline = b"\n" if isinstance(line, bytes) else "\n"
        if len(line) <= limit or line.endswith(newline) and len(line) == limit + 1:
            yield text(line), False
            continue
        rest = line
        while rest and not rest.endswith(newline):  # skip the rest of the line
            rest = source.readline(limit + 1)
        yield text(line[:limit]), True


class GTPFailure(Exception):
    """A command fails: its message is the ``? message`` response."""


class GTPEngine:
    """The engine state: a ``PlaySession`` plus time settings; ``handle`` answers one line."""

    def __init__(self, player: str = "random", game: str = "conhex", simulations: int | None = None,
                 seed: int = 0, temperature: float = 0.0, resign_threshold: float | None = None,
                 swap_name: str = "swap", device: str = "cpu",
                 session_factory: Callable[..., PlaySession] = PlaySession,
                 warn: Callable[[str], None] | None = None, seconds: float | None = None,
                 ponder: bool = False, book: str | None = None):
        self.player_spec, self.sims, self.seed = player, simulations, seed
        self.book = book  # an opening book folder: its moves while the position is in it (said on stderr)
        self.ponder = ponder  # think on the opponent's time (PlaySession.ponder)
        self.seconds = seconds  # a checkpoint player's time per move (its clock; GTP's time controls cap it)
        self.temperature, self.resign_threshold = temperature, resign_threshold
        self.swap_name, self.device = swap_name, device
        self.factory = session_factory
        # told once per game when boardsize makes the model play a game it was not trained on; the
        # command line warned about the first game
        self.game_warnings = GameWarnings(player, warn, told=[parse_game(game).spec])
        self.base_game = parse_game(game)
        self.session = self._new_session(self.base_game.spec)
        self.quit = False
        self.time_settings: tuple[float, float, int] | None = None
        self.time_left: dict[int, tuple[float, int]] = {}
        self.commands: dict[str, Callable[[list[str]], str]] = {
            "protocol_version": lambda a: "2",
            "name": lambda a: "conhex-zero",
            "version": lambda a: __version__,
            "known_command": self.cmd_known_command,
            "list_commands": lambda a: "\n".join(self.commands),
            "quit": self.cmd_quit,
            "boardsize": self.cmd_boardsize,
            "clear_board": self.cmd_clear_board,
            "play": self.cmd_play,
            "genmove": self.cmd_genmove,
            "reg_genmove": self.cmd_reg_genmove,
            "undo": self.cmd_undo,
            "showboard": lambda a: "\n" + self.session.board_text(),
            "final_score": self.cmd_final_score,
            "all_legal_moves": lambda a: " ".join(self._name(m) for m in self.session.legal_moves()),
            "time_settings": self.cmd_time_settings,
            "time_left": self.cmd_time_left,
            ANALYZE_COMMAND: self.cmd_analyze,
        }

    def _new_session(self, spec: str) -> PlaySession:
        # Moves of a random opening come from the controller as ordinary plays: none are drawn here.
        extra: dict = {"seconds": self.seconds} if self.seconds is not None else {}
        if self.ponder:
            extra["ponder"] = True
        if self.book is not None:
            extra["book"] = self.book
        return self.factory(spec, self.player_spec, seed=self.seed, simulations=self.sims,
                            temperature=self.temperature, device=self.device, random_opening=False, **extra)

    def close(self) -> None:
        self.session.close()

    # ---------------------------------------------------------------- framing
    def handle(self, line: str) -> str:
        """The complete response to one input line (ending with an empty line), or ``""`` for a
        line GTP ignores (empty, or only a comment)."""
        if len(line.rstrip("\r\n")) > MAX_LINE:
            return self.too_long(line)
        text = _CONTROL.sub("", line.replace("\t", " ")).split("#", 1)[0].strip()
        if not text:
            return ""
        parts = text.split()
        ident = ""
        if re.fullmatch(r"[0-9]+", parts[0]):
            ident, parts = parts[0], parts[1:]
        if not parts:
            return f"?{ident} missing command\n\n"
        name, args = parts[0].lower(), parts[1:]
        command = self.commands.get(name)
        try:
            if command is None:
                raise GTPFailure("unknown command")
            ok, reply = True, command(args)
        except GTPFailure as err:
            ok, reply = False, str(err)
        except ValueError as err:  # PlayError, MoveError, IllegalMoveError included
            ok, reply = False, str(err)
        except Exception as err:  # never let one command kill the engine
            ok, reply = False, f"internal error: {type(err).__name__}: {err}"
        if not ok:
            reply = _clip(reply, 500)  # an error never echoes a huge argument whole
        lines = [ln.rstrip() for ln in reply.split("\n")]
        body = "\n".join([lines[0]] + [ln for ln in lines[1:] if ln.strip()])
        return f"{'=' if ok else '?'}{ident} {body}\n\n"

    @staticmethod
    def too_long(start: str) -> str:
        """The answer to a line longer than ``MAX_LINE`` bytes, of which ``start`` is the beginning."""
        m = re.match(r"\s*([0-9]+)\s", start)
        return f"?{m.group(1) if m else ''} line too long (more than {MAX_LINE} bytes)\n\n"

    # --------------------------------------------------------------- helpers
    def _name(self, move: str) -> str:
        return self.swap_name if move == "swap" else move

    @staticmethod
    def _colour(args: list[str], usage: str) -> int:
        if not args:
            raise GTPFailure(f"syntax error: {usage}")
        colour = COLOURS.get(args[0].lower())
        if colour is None:
            raise GTPFailure(f"invalid color {args[0][:20]!r}: expected b, black, w or white")
        return colour

    def _check_turn(self, colour: int) -> None:
        s = self.session
        if s.is_over:
            raise GTPFailure(f"the game is over: {COLOUR_NAMES[s.winner]} won")
        if s.to_move != colour:
            raise GTPFailure(f"out of turn: {COLOUR_NAMES[s.to_move]} is to move")

    # --------------------------------------------------------------- commands
    def cmd_known_command(self, args: list[str]) -> str:
        return "true" if args and args[0].lower() in self.commands else "false"

    def cmd_quit(self, args: list[str]) -> str:
        self.quit = True
        return ""

    def cmd_boardsize(self, args: list[str]) -> str:
        text = " ".join(args).lower()
        words = text.replace("x", " ").split()
        base = self.base_game
        spec: str | None = None
        if text == "conhex":
            spec = base.spec if base.board.name == "conhex" else "conhex"
        elif 1 <= len(words) <= 2 and all(re.fullmatch(r"[0-9]{1,3}", w) for w in words) and len(set(words)) == 1:
            options = base.spec.partition(":")[2] if base.board.name != "conhex" else ""
            spec = f"hex-{int(words[0])}" + (f":{options}" if options else "")
        if spec is None:
            raise GTPFailure("unacceptable size")
        try:
            game = parse_game(spec)
        except GameSpecError:
            raise GTPFailure("unacceptable size") from None
        if game != self.session.game:
            from conhex_zero.nn import native

            with native.cached_only():  # no 20-s build inside one command: eager unless already built
                session = self._new_session(game.spec)
            old, self.session = self.session, session
            old.close()
            self.game_warnings.about(game.spec)
        else:
            self.session.new_game()
        return ""

    def cmd_clear_board(self, args: list[str]) -> str:
        self.session.new_game()
        return ""

    def cmd_play(self, args: list[str]) -> str:
        colour = self._colour(args, "play COLOR MOVE")
        if len(args) < 2:
            raise GTPFailure("syntax error: play COLOR MOVE")
        self._check_turn(colour)
        try:
            self.session.play(args[1])
        except IllegalMoveError as err:
            raise GTPFailure(f"illegal move: {err.reason}") from None
        except MoveError as err:
            raise GTPFailure(f"invalid move: {str(err).replace(args[1], _clip(args[1]))}") from None
        return ""

    def _think_seconds(self, colour: int) -> float | None:
        """Seconds the clock allows for this move (None: no time limit, the configured effort)."""
        if self.session.simulations is None or self.time_settings is None:
            return None
        main, byo, stones = self.time_settings
        if main == 0 and (byo == 0 or stones == 0):
            return None  # no time limit
        left, left_stones = self.time_left.get(colour, (main, 0) if main > 0 else (byo, stones))
        own_moves_left = max(4.0, len(self.session.legal_actions()) / 2)
        budget = SAFETY * (left / left_stones if left_stones > 0 else left / own_moves_left)
        own = getattr(self.session.player, "seconds", None)
        budget = min(budget, own) if own is not None else budget
        return max(MIN_SECONDS, budget) if math.isfinite(budget) else None

    def _generate(self, args: list[str], play: bool) -> str:
        colour = self._colour(args, "genmove COLOR")
        self._check_turn(colour)
        s = self.session
        seconds = self._think_seconds(colour)
        if play:
            if self.resign_threshold is not None:
                analysis = s.analyse(top=1, seconds=seconds)  # cached: ai_move reuses the search
                if analysis.value is not None and analysis.value < -self.resign_threshold:
                    return "resign"
            chosen = s.ai_move(top=1, seconds=seconds)
        else:
            chosen = s.hint(top=1, seconds=seconds)
        if chosen.analysis.source == "book":  # GTP's answer is the move alone: the rest goes to stderr
            best = chosen.analysis.best
            print(book_note(self._name(chosen.move), chosen.analysis.win_percent, best.nodes if best is not None else 0),
                  file=sys.stderr, flush=True)
        return self._name(chosen.move)

    def cmd_genmove(self, args: list[str]) -> str:
        return self._generate(args, play=True)

    def cmd_reg_genmove(self, args: list[str]) -> str:
        return self._generate(args, play=False)

    def cmd_undo(self, args: list[str]) -> str:
        if self.session.undoable == 0:
            raise GTPFailure("cannot undo")
        self.session.undo(1)
        return ""

    def cmd_final_score(self, args: list[str]) -> str:
        winner = self.session.winner
        if winner is None:
            raise GTPFailure("game not over")
        return "B+" if winner == 0 else "W+"

    @staticmethod
    def _time_number(text: str, integer: bool = False) -> float:
        """Seconds (0 .. ``MAX_SECONDS``) or, with ``integer``, stones (0 .. ``MAX_STONES``)."""
        high = MAX_STONES if integer else MAX_SECONDS
        try:
            value = int(text) if integer else float(text)
        except ValueError:  # also digit strings too long for int()
            raise GTPFailure(f"syntax error: {_clip(text)!r} is not a {'whole ' if integer else ''}number") from None
        if not math.isfinite(value) or value < 0:
            raise GTPFailure(f"syntax error: {_clip(text)!r} must be a non-negative number")
        if value > high:
            raise GTPFailure(f"syntax error: {_clip(text)!r} is too large (at most {high}"
                             f"{'' if integer else ' seconds'})")
        return value

    def cmd_time_settings(self, args: list[str]) -> str:
        if len(args) != 3:
            raise GTPFailure("syntax error: time_settings MAIN_TIME BYO_YOMI_TIME BYO_YOMI_STONES")
        main, byo = self._time_number(args[0]), self._time_number(args[1])
        stones = int(self._time_number(args[2], integer=True))
        self.time_settings = (main, byo, stones)
        self.time_left = {}
        return ""

    def cmd_time_left(self, args: list[str]) -> str:
        colour = self._colour(args, "time_left COLOR TIME STONES")
        if len(args) != 3:
            raise GTPFailure("syntax error: time_left COLOR TIME STONES")
        self.time_left[colour] = (self._time_number(args[1]), int(self._time_number(args[2], integer=True)))
        return ""

    def cmd_analyze(self, args: list[str]) -> str:
        top = DEFAULT_ANALYZE
        if args:
            if not re.fullmatch(r"[0-9]{1,9}", args[0]) or int(args[0]) < 1:
                raise GTPFailure(f"syntax error: {ANALYZE_COMMAND} [N] with N a positive number")
            top = min(int(args[0]), MAX_ANALYZE)
        if self.session.is_over:
            raise GTPFailure("the game is over")
        analysis = self.session.analyse(top=top)
        lines = []
        for c in analysis.candidates:
            winrate = "-" if c.value is None else f"{(1 + c.value) / 2:.3f}"
            pv = " ".join(self._name(m) for m in c.pv)
            proof = f" proven {c.proven}" if c.proven else ""
            lines.append(f"{self._name(c.move)} visits {c.visits} winrate {winrate} prior {c.prior:.4f}{proof} pv {pv}")
        return "\n".join(lines)


def book_note(move: str, win_percent: float, nodes: int) -> str:
    """The line a book move adds on standard error (GTP's answer is the move alone)."""
    below = f", {plural(nodes, 'book position')} below" if nodes else ""
    return f"conhex-zero gtp: book move {move} ({win_percent:.1f}% to win by the book{below})"

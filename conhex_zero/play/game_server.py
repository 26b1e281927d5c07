"""The browser front end's game: a ``PlaySession``, the person's side, the AI's last analysis and the
running score behind one lock (``GameServer``), answering the JSON API of ``server.py`` (which says
what each endpoint does) with plain dicts, and ``RequestError`` for what the game cannot take."""

from __future__ import annotations

import threading
from collections import deque
from http import HTTPStatus
from typing import Any, Callable

from conhex_zero.env.notation import IllegalMoveError
from conhex_zero.games.board import PLAYER_SIDES
from conhex_zero.games.game import Game, parse_game
from conhex_zero.play.checkpoints import GameWarnings
from conhex_zero.play.geometry import board_geometry
from conhex_zero.play.session import PlayError, PlaySession

MAX_ECHO = 40  # characters of user input repeated in an error message
MAX_TOP = 50
SUGGESTED_GAMES = ("conhex", "hex-5", "hex-7", "hex-9", "hex-11", "hex-11:swap", "hex-13", "hex-4:swap", "hex-3")


class RequestError(ValueError):
    """A bad request (unknown path, bad JSON, missing field): HTTP 400 (or ``status``)."""

    def __init__(self, message: str, status: int = HTTPStatus.BAD_REQUEST):
        super().__init__(message)
        self.status = int(status)


def winning_cells(game: Game, cell_owners: list[int | None], winner: int | None) -> list[int]:
    """The winner's cells that belong to a chain touching both of the winner's sides (empty while
    the game runs)."""
    if winner is None:
        return []
    board = game.board
    a, b = PLAYER_SIDES[winner]
    seen: set[int] = set()
    out: list[int] = []
    for start in range(board.num_cells):
        if start in seen or cell_owners[start] != winner:
            continue
        component, queue = [], deque([start])
        seen.add(start)
        while queue:
            c = queue.popleft()
            component.append(c)
            for n in board.neighbours[c]:
                if n not in seen and cell_owners[n] == winner:
                    seen.add(n)
                    queue.append(n)
        sides = {s for c in component for s in board.cell_sides[c]}
        if a in sides and b in sides:
            out.extend(component)
    return sorted(out)


# ------------------------------------------------------------------------------------- the game
class GameServer:
    """A session, the person's side and the AI's last analysis, behind one lock. The methods
    answer plain JSON dicts and raise ``ValueError`` (HTTP 400) for requests the game cannot take."""

    def __init__(self, player: str = "random", game: str = "conhex", human: int = 0, *,
                 simulations: int | None = None, temperature: float = 0.0, seed: int = 0,
                 device: str = "cpu", top: int = 5, warn: Callable[[str], None] | None = None,
                 scoring: bool = False, seconds: float | None = None, ponder: bool = False,
                 book: str | None = None):
        from conhex_zero.play.pair_score import RunningPairScore

        self.player_spec, self.simulations, self.temperature = player, simulations, temperature
        self.seed, self.device, self.top = seed, device, top
        self.seconds = seconds  # a checkpoint player's time per move
        self.ponder = ponder  # think on the human's time (PlaySession.ponder)
        self.book = book  # an opening book folder: its moves and values while the position is in it
        # told once per game when the page starts a game the model was not trained on
        self.game_warnings = GameWarnings(player, warn)
        self.lock = threading.Lock()
        self.session = self._make_session(game)
        self.human = human
        self._analysis: tuple[tuple[int, ...], dict[str, Any]] | None = None
        # The scoring variant: a finished game counts once; undoing into it takes it back out.
        self.scoring = RunningPairScore(first_side=human) if scoring else None
        self._scored = False
        self._book_browser = None  # the /book page's reader, made at its first request

    def _make_session(self, game: str) -> PlaySession:
        return PlaySession(game, self.player_spec, seed=self.seed, simulations=self.simulations,
                           temperature=self.temperature, device=self.device, seconds=self.seconds,
                           ponder=self.ponder, book=self.book)

    def close(self) -> None:
        with self.lock:
            self.session.close()
            if self._book_browser is not None:
                self._book_browser.close()

    @property
    def ai(self) -> int:
        return 1 - self.human

    # ------------------------------------------------------------- answers
    def state(self) -> dict[str, Any]:
        """The position with the page's extras (call with the lock held)."""
        s = self.session
        out = s.to_json()
        out["spec"] = s.game.spec
        out["human"], out["ai"] = self.human, self.ai
        out["movers"] = [s.mover_of(i) for i in range(s.ply)]
        out["can_undo"] = human_undo_count(s, self.human) > 0
        out["winning_cells"] = winning_cells(s.game, out["cell_owners"], s.winner)
        out["analysis"] = None
        if self._analysis is not None:
            key, analysis = self._analysis
            if tuple(s.actions[:len(key)]) == key:
                out["analysis"] = analysis
            else:
                self._analysis = None
        out["scoring"] = self._update_scoring()
        out["suggested_games"] = list(SUGGESTED_GAMES)
        out["geometry"] = board_geometry(s.game)
        return out

    def _update_scoring(self) -> dict[str, Any] | None:
        """The running pair score (``serve --scoring``), with the current game once it is over."""
        from conhex_zero.play.pair_score import AI, YOU, winner_pieces

        if self.scoring is None:
            return None
        s = self.session
        if s.is_over and not self._scored:
            self.scoring.record(YOU if s.winner == self.human else AI, winner_pieces(s.state.holes, s.winner))
            self._scored = True
        elif not s.is_over and self._scored:  # undone: the game goes on
            self.scoring.take_back()
            self._scored = False
        return self.scoring.to_json()

    def get_state(self) -> dict[str, Any]:
        with self.lock:
            return self.state()

    def new_game(self, body: dict[str, Any]) -> dict[str, Any]:
        game = _optional_str(body, "game")
        side = body.get("as")
        if side is not None and side not in ("first", "second"):
            raise RequestError(f"'as' must be \"first\" or \"second\", not {clip(repr(side))}")
        with self.lock:
            spec = (game or "").strip()
            if len(spec) > 200:  # no game spec is that long: do not echo it whole
                raise PlayError(f"cannot start {clip(spec)!r}: not a game spec (too long)")
            try:
                other = bool(spec) and parse_game(spec).spec != self.session.game.spec
                new = self._make_session(spec) if other else None  # fails before anything changes
            except ValueError as err:
                raise PlayError(f"cannot start {clip(spec)!r}: {str(err).replace(spec, clip(spec))}") from None
            if new is not None:
                self.session.close()
                self.session = new
                self.game_warnings.about(new.game.spec)
            else:
                self.session.new_game()
            if self.scoring is not None:  # the pairs decide the sides: colours exchange every game
                self.human = self.scoring.human_side()
                self._scored = False
            elif side is not None:
                self.human = 0 if side == "first" else 1
            self._analysis = None
            return {"state": self.state()}

    def play(self, body: dict[str, Any]) -> dict[str, Any]:
        move = body.get("move")
        if not isinstance(move, str) or not move.strip():
            raise RequestError("send the move as {\"move\": NAME}, e.g. {\"move\": \"c3\"} or {\"move\": \"swap\"}")
        if len(move.strip()) > MAX_ECHO:  # no move name is that long: do not echo it whole
            raise PlayError(f"{clip(move.strip())!r} is not a move in {self.session.game.board.name}")
        with self.lock:
            s = self.session
            if s.is_over:
                raise PlayError("the game is over: start a new game or undo")
            if s.to_move != self.human:
                raise PlayError("it is the AI's turn, not yours")
            try:
                action = s.play(move)
            except IllegalMoveError as err:
                raise PlayError(f"illegal move: {err.reason}") from None
            return {"move": s.game.action_name(action), "state": self.state()}

    def ai_move(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            s = self.session
            if s.is_over:
                raise PlayError("the game is over: start a new game or undo")
            if s.to_move != self.ai:
                raise PlayError("it is your move, not the AI's")
            move = s.ai_move(top=self.top)
            analysis = move.analysis.to_json()
            self._analysis = (tuple(s.actions), analysis)
            return {"move": move.move, "analysis": analysis, "state": self.state()}

    def undo(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            s = self.session
            k = human_undo_count(s, self.human)
            if k == 0:
                raise PlayError("nothing to undo: you have not moved yet")
            taken = s.undo(k)
            return {"undone": taken, "state": self.state()}

    def analyse(self, query: dict[str, list[str]]) -> dict[str, Any]:
        top = _int_param(query, "top", self.top, 0, MAX_TOP)
        with self.lock:
            hint = self.session.hint(top=top)
            return {"hint": hint.move, "analysis": hint.analysis.to_json(), "state": self.state()}


    # ------------------------------------------------------------- the book, walked (/book)
    def _browser(self):
        if self.book is None:
            raise RequestError("this server has no opening book (start it with conhex-zero serve CKPT --book DIR)",
                               HTTPStatus.NOT_FOUND)
        if self._book_browser is None:
            from conhex_zero.play.book_browser import BookBrowser

            self._book_browser = BookBrowser(self.book, self.player_spec, simulations=self.simulations,
                                             device=self.device, seed=self.seed)
        return self._book_browser

    def book_position(self, query: dict[str, list[str]]) -> dict[str, Any]:
        line = (query.get("line") or [""])[-1]
        with self.lock:
            return self._browser().position(clip(line, 2000))

    def book_search(self, query: dict[str, list[str]]) -> dict[str, Any]:
        line = (query.get("line") or [""])[-1]
        top = _int_param(query, "top", self.top, 1, MAX_TOP)
        with self.lock:
            return self._browser().search(clip(line, 2000), top=top)


def human_undo_count(s: PlaySession, human: int) -> int:
    """How many moves to take back for the person's last turn and the AI's moves after it (0 when the
    person has not moved). Both pieces of a two-piece turn (extra-stone) go together."""
    k = 0
    while k < s.undoable and s.mover_of(s.ply - 1 - k) != human:
        k += 1
    if k == s.undoable:
        return 0
    k += 1
    while k < s.undoable and s.mover_of(s.ply - 1 - k) == human and s.mover_of(s.ply - k) == human:
        k += 1
    return k


def clip(text: str, limit: int = MAX_ECHO) -> str:
    """User input repeated in a message: at most ``limit`` characters, with an ellipsis."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _optional_str(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is not None and not isinstance(value, str):
        raise RequestError(f"{key!r} must be a string")
    return value


def _int_param(query: dict[str, list[str]], key: str, default: int, low: int, high: int) -> int:
    if key not in query:
        return default
    try:
        value = int(query[key][-1])
    except ValueError:
        raise RequestError(f"{key} must be a whole number") from None
    if not low <= value <= high:
        raise RequestError(f"{key} must be between {low} and {high}")
    return value

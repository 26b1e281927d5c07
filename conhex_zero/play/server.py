"""The browser front end: a small HTTP server (standard library only) with one page and a JSON API
around a ``PlaySession``. ``conhex-zero serve PLAYER`` runs it; the page (``static/``: plain HTML,
CSS and JavaScript, no build step, no external resources) draws the real board from the geometry
the API sends and drives the game through these endpoints:

* ``GET /api/state``: the position (``PlaySession.to_json()``) plus ``human`` / ``ai`` (0 = first
  player X, 1 = second player O), ``movers`` (who made each move), ``winning_cells`` (the cells of
  the winner's connecting chain), ``analysis`` (the AI's last thinking, while its move is still on
  the board), ``suggested_games`` and ``geometry``: hole xy and radius, cell outline polygons and
  holes, frame segments with their side and its owner, player names, goals and colours, and the
  view box, all in ``BoardGraph.hole_xy`` units (``viz.board_picture`` derives the outlines).
* ``POST /api/new {game?, as?: "first"|"second"}``: a new game (another game spec makes a new
  session with the same AI; the old one is kept when that fails).
* ``POST /api/play {move}``: the person's move (a hole name or ``swap``), only on their turn.
* ``POST /api/ai``: the AI moves, only on its turn; answers ``move`` and ``analysis`` too.
* ``POST /api/undo``: takes back the person's last move and every AI move after it.
* ``GET /api/analyse[?top=N]``: the AI's view of the position for the side to move (a hint),
  nothing played: ``hint`` (the move it would choose) and ``analysis``.
* With ``--book DIR``, the page ``/book`` walks the whole book (``book_browser``): ``GET
  /api/book?line=F6,C7`` answers the position the line reaches from the book's start with the
  book's values, ``GET /api/book/search?line=...`` searches it live with the served player.

Every POST and state answer carries the new ``state``. A request the game cannot take answers HTTP
400 with ``{"error": message}``; an unexpected failure answers 500 the same way (the traceback goes
to the server's stderr, never to the page). Echoed user input (a move name, a game spec, a path) is
shortened to 40 characters. One lock serialises every use of the session: the search is not
thread-safe, and the AI may think for seconds.

Other web sites cannot drive the game through a visitor's browser: every POST must carry
``Content-Type: application/json`` (which a page of another site can only send after the browser
asks this server, which never agrees), an ``Origin`` header, when present, must be this server's
own address, and so must the ``Host`` header (which stops DNS rebinding: another site's name that
resolves to this machine). The server's own address is the host and port it listens on; listening
on loopback, ``localhost``, ``127.0.0.1`` and ``[::1]`` with that port too; listening on every
interface (``0.0.0.0``), any IP address with that port, ``localhost`` and this machine's names; plus
the names given as ``allowed_hosts``. Anything else answers 403.

The listen queue holds ``request_queue_size`` (256) connections waiting to be accepted, each
connection gets a socket timeout (``client_timeout``, 30 s: a client that stops sending or reading
loses its connection and its thread), and clients that hang up early are dropped quietly.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import sys
import threading
import traceback
from collections import deque
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any, Callable, Sequence
from urllib.parse import parse_qs, urlsplit

from conhex_zero.env.notation import IllegalMoveError
from conhex_zero.files.untrusted import loads_json
from conhex_zero.games.board import PLAYER_SIDES
from conhex_zero.games.game import Game, parse_game
from conhex_zero.play import DEFAULT_PORT
from conhex_zero.play.checkpoints import GameWarnings
from conhex_zero.play.geometry import board_geometry  # noqa: F401 (the page's geometry; tests import it here)
from conhex_zero.play.session import PlayError, PlaySession

MAX_BODY = 64 * 1024
MAX_ECHO = 40  # characters of user input repeated in an error message
MAX_ERROR = 500  # characters of an error message
CLIENT_TIMEOUT = 30.0  # seconds a connection may stay silent (sending or reading) before it is closed
QUEUE_SIZE = 256  # connections waiting to be accepted (the system may allow fewer: somaxconn)
MAX_TOP = 50
SUGGESTED_GAMES = ("conhex", "hex-5", "hex-7", "hex-9", "hex-11", "hex-11:swap", "hex-13", "hex-4:swap", "hex-3")
STATIC_FILES = {  # URL path -> (file in static/, content type)
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
    "/favicon.svg": ("favicon.svg", "image/svg+xml"),
    "/book": ("book.html", "text/html; charset=utf-8"),
    "/book.js": ("book.js", "text/javascript; charset=utf-8"),
}


def _with_head(methods: list[str]) -> list[str]:
    """The methods a resource takes, HEAD beside GET (a HEAD is answered as a GET without body)."""
    out = []
    for m in methods:
        out.append(m)
        if m == "GET":
            out.append("HEAD")
    return out


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


# ------------------------------------------------------------------------------------- HTTP
def _static(name: str) -> bytes:
    return resources.files("conhex_zero.play").joinpath("static", name).read_bytes()


class Handler(BaseHTTPRequestHandler):
    """Static files and the JSON API of ``self.server.game`` (a ``GameServer``)."""

    server: "PlayServer"
    server_version = "conhex-zero"
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        self.timeout = self.server.client_timeout  # the socket's timeout (StreamRequestHandler.setup)
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, body: bytes, content_type: str, allow: str | None = None) -> None:
        self.send_response(status)
        if allow is not None:  # 405: the methods the resource takes
            self.send_header("Allow", allow)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data: Any, allow: str | None = None) -> None:
        if isinstance(data, dict) and isinstance(data.get("error"), str):
            data = {**data, "error": clip(data["error"], MAX_ERROR)}
        body = json.dumps(data, allow_nan=False, separators=(",", ":")).encode("utf-8")
        self._send(status, body, "application/json; charset=utf-8", allow)

    def _read_body(self) -> bytes:
        """The request's body, read whole before anything is answered (so that a kept-alive
        connection stays in step); a body too large closes the connection."""
        length = self.headers.get("Content-Length")
        try:
            n = int(length) if length is not None else 0
        except ValueError:
            n = -1
        if n < 0 or n > MAX_BODY:
            self.close_connection = True
            if n < 0:
                raise RequestError("bad Content-Length")
            raise RequestError(f"request body too large (at most {MAX_BODY} bytes)", HTTPStatus.REQUEST_ENTITY_TOO_LARGE)
        return self.rfile.read(n) if n else b""

    def _json_body(self, raw: bytes) -> dict[str, Any]:
        if not raw.strip():
            return {}
        try:
            data = loads_json(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise RequestError(f"the request body is not valid JSON: {err}") from None
        if not isinstance(data, dict):
            raise RequestError("the request body must be a JSON object")
        return data

    def _api(self, method: str, path: str, query: dict[str, list[str]], raw: bytes) -> None:
        game = self.server.game
        routes = {
            ("GET", "/api/state"): lambda: game.get_state(),
            ("GET", "/api/analyse"): lambda: game.analyse(query),
            ("POST", "/api/new"): lambda: game.new_game(self._json_body(raw)),
            ("POST", "/api/play"): lambda: game.play(self._json_body(raw)),
            ("POST", "/api/ai"): lambda: game.ai_move(self._json_body(raw)),
            ("POST", "/api/undo"): lambda: game.undo(self._json_body(raw)),
            ("GET", "/api/book"): lambda: game.book_position(query),
            ("GET", "/api/book/search"): lambda: game.book_search(query),
        }
        route = routes.get((method, path))
        allowed = [m for m, p in routes if p == path]
        allow = ", ".join(_with_head(allowed)) if allowed and route is None else None
        try:
            if route is None:
                if allowed:
                    raise RequestError(f"{path} does not take {method} (it takes {allow})",
                                       HTTPStatus.METHOD_NOT_ALLOWED)
                raise RequestError(f"no such API endpoint: {clip(path)}", HTTPStatus.NOT_FOUND)
            status, answer = HTTPStatus.OK, route()
        except RequestError as err:
            status, answer = err.status, {"error": str(err)}
        except ValueError as err:  # the game's errors: bad names, illegal moves, game over, bad specs
            status, answer = HTTPStatus.BAD_REQUEST, {"error": str(err)}
        except Exception as err:  # a bug or an engine failure: short answer, traceback on stderr
            traceback.print_exc(file=sys.stderr)
            status, answer = HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"internal error: {type(err).__name__}: {err}"}
        self._json(status, answer, allow)  # outside the try: a client gone meanwhile is not the game's error

    def _refusal(self, method: str, path: str) -> str | None:
        """Why a request may come from another web site (403), or None: a ``Host`` or ``Origin``
        header that is not this server's address, or a POST that is not JSON."""
        host = self.headers.get("Host")
        if host is not None and not self.server.host_allowed(host):
            return f"this server does not answer for the host {clip(host)!r}: use {self.server.url}"
        origin = self.headers.get("Origin")
        if origin is not None and not self.server.origin_allowed(origin):
            return f"requests from {clip(origin)!r} (another web site) are not accepted"
        if method == "POST" and path.startswith("/api/"):
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if ctype != "application/json":
                return "send the request body as JSON (Content-Type: application/json)"
        return None

    def _dispatch(self, method: str) -> None:
        url = urlsplit(self.path)
        try:
            raw = self._read_body()
        except RequestError as err:
            self._json(err.status, {"error": str(err)})
            return
        refusal = self._refusal(method, url.path)
        if refusal is not None:
            self.close_connection = True
            self._json(HTTPStatus.FORBIDDEN, {"error": refusal})
            return
        if url.path.startswith("/api/"):
            self._api(method, url.path, parse_qs(url.query), raw)
            return
        entry = STATIC_FILES.get(url.path)
        if entry is not None and method != "GET":  # the page's files are read, never written
            self._json(HTTPStatus.METHOD_NOT_ALLOWED, {"error": f"{url.path} does not take {method} (it takes GET, "
                                                                f"HEAD)"}, allow="GET, HEAD")
            return
        if method == "POST":
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such API endpoint: {url.path}"})
            return
        if entry is None:
            self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain; charset=utf-8")
            return
        self._send(HTTPStatus.OK, _static(entry[0]), entry[1])

    def do_GET(self) -> None:  # noqa: N802 (http.server's names)
        self._dispatch("GET")

    def do_HEAD(self) -> None:  # noqa: N802
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def _other_method(self) -> None:
        """A method the page never takes (PUT, DELETE, PATCH, OPTIONS ...): 405 naming the ones its
        resource takes (404 for a path that is none)."""
        self._dispatch(self.command)

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _other_method  # noqa: N815


class PlayServer(ThreadingHTTPServer):
    """The HTTP server; ``game`` holds the session. ``url`` is where the page is. ``allowed_hosts``
    are more names (or ``name:port``) the page may be reached by, besides the address it listens on
    (see the module docstring)."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = QUEUE_SIZE

    def __init__(self, game: GameServer, host: str = "127.0.0.1", port: int = DEFAULT_PORT, verbose: bool = False,
                 allowed_hosts: Sequence[str] = (), client_timeout: float | None = CLIENT_TIMEOUT):
        self.game, self.verbose, self.client_timeout = game, verbose, client_timeout
        super().__init__((host, port), Handler)
        bound = str(self.server_address[0]).lower()
        given = host.strip().strip("[]").lower()
        self.any_address = given in ("", "0.0.0.0", "::") or bound in ("0.0.0.0", "::")
        self.host_names = {given, bound}
        if self.any_address or is_local(given) or _is_loopback(bound):
            self.host_names |= {"localhost", "127.0.0.1", "::1"}
        if self.any_address:
            self.host_names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
        self.extra_hosts = {h.strip().lower() for h in allowed_hosts if h.strip()}

    def host_allowed(self, host: str) -> bool:
        """Whether a ``Host`` header (``name``, ``name:port``, ``[v6]:port``) names this server."""
        text = host.strip().lower()
        if text in self.extra_hosts:
            return True
        name, port = _split_host(text)
        if name is None or port != self.server_address[1]:
            return False
        if name in self.host_names or name in self.extra_hosts:
            return True
        return self.any_address and _is_ip(name)

    def origin_allowed(self, origin: str) -> bool:
        """Whether an ``Origin`` header is this server's own page (``http://`` + an allowed host)."""
        scheme, _, rest = origin.strip().partition("://")
        return scheme.lower() == "http" and "/" not in rest and bool(rest) and self.host_allowed(rest)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up early or stopped talking is dropped quietly; other errors are shown."""
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, TimeoutError)):
            if self.verbose:
                print(f"conhex-zero serve: {client_address[0]}: connection dropped ({type(error).__name__})",
                      file=sys.stderr)
            return
        super().handle_error(request, client_address)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        shown = f"[{host}]" if ":" in str(host) else str(host)
        if shown in ("0.0.0.0", "[::]"):
            shown = "localhost"
        return f"http://{shown}:{port}/"


def is_local(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _is_loopback(name: str) -> bool:
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _split_host(text: str) -> tuple[str | None, int | None]:
    """(name, port) of ``name[:port]`` or ``[v6][:port]`` (port 80 when absent); (None, None) when
    malformed."""
    if text.startswith("["):
        name, sep, rest = text[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            return None, None
        port_text = rest[1:] if rest else ""
    else:
        name, _, port_text = text.partition(":") if text.count(":") <= 1 else (text, "", "")
    if not name:
        return None, None
    if not port_text:
        return name, 80
    if not port_text.isdigit() or len(port_text) > 5:
        return None, None
    return name, int(port_text)


def start_in_thread(server: PlayServer) -> threading.Thread:
    """Serve in a daemon thread (tests; stop with ``server.shutdown(); server.server_close()``)."""
    thread = threading.Thread(target=server.serve_forever, name="conhex-zero-serve", daemon=True)
    thread.start()
    return thread


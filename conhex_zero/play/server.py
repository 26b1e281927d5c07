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

The game behind the endpoints (``GameServer``: the session, the person's side, the AI's last
analysis, one lock) is in ``game_server.py``. Every POST and state answer carries the new ``state``.
A request the game cannot take answers HTTP 400 with ``{"error": message}``; an unexpected failure
answers 500 the same way (the traceback goes to the server's stderr, never to the page). Echoed user
input (a move name, a game spec, a path) is shortened to 40 characters. One lock serialises every
use of the session: the search is not thread-safe, and the AI may think for seconds.

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
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any, Sequence
from urllib.parse import parse_qs, urlsplit

from conhex_zero.files.untrusted import loads_json
from conhex_zero.play import DEFAULT_PORT
from conhex_zero.play.game_server import GameServer, RequestError, clip
from conhex_zero.play.geometry import board_geometry  # noqa: F401 (the page's geometry; tests import it here)

MAX_BODY = 64 * 1024
MAX_ERROR = 500  # characters of an error message
CLIENT_TIMEOUT = 30.0  # seconds a connection may stay silent (sending or reading) before it is closed
QUEUE_SIZE = 256  # connections waiting to be accepted (the system may allow fewer: somaxconn)
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


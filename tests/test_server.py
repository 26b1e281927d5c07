"""The browser front end's HTTP server without a browser: the JSON API through urllib, the static
files, errors as JSON, and ``conhex-zero serve`` (port in use, Ctrl-C)."""

from __future__ import annotations

import http.client
import json
import re
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from contextlib import contextmanager
from urllib.parse import urlsplit

import pytest

from conhex_zero.cli.main import main
from conhex_zero.games.game import parse_game
from conhex_zero.play.server import MAX_BODY, GameServer, PlayServer, board_geometry, start_in_thread




@contextmanager
def serving(player: str = "random", game: str = "hex-3", human: int = 0, scoring: bool = False):
    server = PlayServer(GameServer(player, game, human, scoring=scoring), "127.0.0.1", 0)
    start_in_thread(server)
    try:
        yield server.url.rstrip("/")
    finally:
        server.shutdown()
        server.server_close()
        server.game.close()


def call(base: str, path: str, body=None, *, raw: bytes | None = None, ctype="application/json",
         method: str | None = None) -> tuple[int, dict]:
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(base + path, data=data, method=method or ("GET" if data is None else "POST"))
    if data is not None and ctype:
        req.add_header("Content-Type", ctype)
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as err:
        assert err.headers["Content-Type"].startswith("application/json")
        return err.code, json.loads(err.read())


def test_state_carries_the_board_geometry():
    with serving("random", "conhex") as base:
        status, state = call(base, "/api/state")
    assert status == 200
    g = state["geometry"]
    assert state["game"] == "conhex" and state["human"] == 0 and state["ai"] == 1 and state["to_move"] == 0
    assert len(state["hole_names"]) == len(g["hole_xy"]) == 69 and len(g["cells"]) == 41
    assert all(len(c["points"]) >= 3 and c["holes"] for c in g["cells"])
    assert {f["player"] for f in g["frame"]} == {0, 1}
    sides = {f["side_name"]: f["player"] for f in g["frame"]}
    assert sides == {"top": 0, "bottom": 0, "left": 1, "right": 1}
    assert [p["name"] for p in g["players"]] == ["X", "O"] and g["players"][0]["goal"] == "top-bottom"
    assert g["players"][0]["colour"].startswith("#") and g["hole_radius"] > 0 and len(g["view_box"]) == 4
    x0, y0, w, h = g["view_box"]
    assert all(x0 < x < x0 + w and y0 < y < y0 + h for x, y in g["hole_xy"])
    hex5 = board_geometry(parse_game("hex-5"))
    assert len(hex5["cells"]) == 25 and all(len(c["points"]) == 6 for c in hex5["cells"]) and hex5["hex_like"]


def test_play_the_ai_answers_undo_and_turn_errors():
    with serving("mcts-rollout:8", "hex-3") as base:
        status, r = call(base, "/api/play", {"move": "B2"})
        assert status == 200 and r["move"] == "b2" and r["state"]["moves"] == ["b2"] and r["state"]["to_move"] == 1
        status, r = call(base, "/api/play", {"move": "a1"})
        assert status == 400 and r["error"] == "it is the AI's turn, not yours"
        status, r = call(base, "/api/ai", {})
        assert status == 200 and r["state"]["moves"] == ["b2", r["move"]] and r["state"]["to_move"] == 0
        a = r["analysis"]
        assert a["player"] == 1 and a["source"] == "search" and a["simulations"] == 8 and a["candidates"]
        assert r["state"]["analysis"] == a  # kept with the position while the AI's move stands
        status, r = call(base, "/api/ai", {})
        assert status == 400 and r["error"] == "it is your move, not the AI's"
        status, r = call(base, "/api/analyse?top=3")
        assert status == 200 and r["hint"] in r["state"]["legal_moves"] and len(r["analysis"]["candidates"]) == 3
        assert r["analysis"]["player"] == 0 and r["state"]["moves"] == ["b2", r["state"]["moves"][1]]
        status, r = call(base, "/api/undo", {})
        assert status == 200 and len(r["undone"]) == 2 and r["state"]["moves"] == [] and r["state"]["analysis"] is None
        assert not r["state"]["can_undo"]
        status, r = call(base, "/api/undo", {})
        assert status == 400 and r["error"] == "nothing to undo: you have not moved yet"


def test_illegal_and_unknown_moves_answer_400_with_the_reason():
    with serving("random", "hex-3") as base:
        call(base, "/api/play", {"move": "b2"})
        call(base, "/api/ai", {})
        status, r = call(base, "/api/play", {"move": "b2"})
        assert status == 400 and r["error"] == "illegal move: b2: the cell is already taken"
        status, r = call(base, "/api/play", {"move": "swap"})
        assert status == 400 and r["error"] == "illegal move: swap: the swap rule is off in this game"
        status, r = call(base, "/api/play", {"move": "d4"})
        assert status == 400 and "'d4' is not a move in hex-3" in r["error"] and "nearby cells: c3" in r["error"]
        status, r = call(base, "/api/play", {})
        assert status == 400 and "send the move as" in r["error"]
        status, r = call(base, "/api/play", {"move": 4})
        assert status == 400 and "send the move as" in r["error"]
        assert call(base, "/api/state")[1]["ply"] == 2  # nothing changed


def test_bad_requests_answer_json_errors():
    with serving() as base:
        status, r = call(base, "/api/play", raw=b"{not json")
        assert status == 400 and r["error"].startswith("the request body is not valid JSON")
        status, r = call(base, "/api/play", raw=b"[1, 2]")
        assert status == 400 and r["error"] == "the request body must be a JSON object"
        status, r = call(base, "/api/play", raw=b"\xff\xfe")
        assert status == 400 and "not valid JSON" in r["error"]
        status, r = call(base, "/api/play", raw=b"move=b2", ctype="application/x-www-form-urlencoded")
        assert status == 403 and "Content-Type: application/json" in r["error"]  # what a form of another site sends
        status, r = call(base, "/api/nothing")
        assert status == 404 and r["error"] == "no such API endpoint: /api/nothing"
        status, r = call(base, "/api/play")
        assert status == 405 and r["error"] == "/api/play does not take GET (it takes POST)"
        status, r = call(base, "/api/analyse?top=x")
        assert status == 400 and r["error"] == "top must be a whole number"
        status, r = call(base, "/api/new", {"as": "third"})
        assert status == 400 and "'as' must be" in r["error"]
        status, r = call(base, "/api/play", raw=b" " * (MAX_BODY + 1))
        assert status == 413 and "too large" in r["error"]
        # One kept-alive connection: answers stay in step even after a refused request with a body.
        conn = http.client.HTTPConnection(*urlsplit(base).netloc.split(":"), timeout=10)
        for path, body in (("/api/nothing", b'{"move": "a1"}'), ("/api/play", b'{"move": "zz"}'),
                           ("/api/state", None)):
            conn.request("POST" if body else "GET", path, body=body, headers={"Content-Type": "application/json"})
            res = conn.getresponse()
            data = json.loads(res.read())
            assert res.status == {"/api/nothing": 404, "/api/play": 400, "/api/state": 200}[path]
        assert data["game"] == "hex-3"
        conn.close()


def test_new_game_other_spec_side_and_swap():
    with serving("mcts-rollout:8", "hex-3") as base:
        status, r = call(base, "/api/new", {"game": "hex-99"})
        assert status == 400 and "hex-99" in r["error"]
        assert call(base, "/api/state")[1]["game"] == "hex-3"  # the old game stays
        status, r = call(base, "/api/new", {"game": "hex-4:swap", "as": "second"})
        s = r["state"]
        assert status == 200 and s["game"] == "hex-4:swap" and s["human"] == 1 and s["ai"] == 0 and s["to_move"] == 0
        assert len(s["geometry"]["cells"]) == 16 and not s["swap_legal"]
        status, r = call(base, "/api/ai", {})
        assert status == 200 and r["state"]["swap_legal"] and "swap" in r["state"]["legal_moves"]
        status, r = call(base, "/api/play", {"move": "swap-pieces"})
        assert status == 200 and r["move"] == "swap" and r["state"]["last_move"] == "swap"
        assert r["state"]["hole_owners"].count(1) == 1 and r["state"]["to_move"] == 0
        status, r = call(base, "/api/new", {})  # same game and side, empty board
        assert status == 200 and r["state"]["moves"] == [] and r["state"]["human"] == 1


def test_a_game_to_the_end():
    with serving("random", "hex-3") as base:
        state = call(base, "/api/state")[1]
        for move in ("b1", "b2", "b3", "a2", "c2", "a3", "c1", "a1", "c3"):
            if state["is_over"]:
                break
            if move in state["legal_moves"]:
                state = call(base, "/api/play", {"move": move})[1]["state"]
                if not state["is_over"]:
                    state = call(base, "/api/ai", {})[1]["state"]
        assert state["is_over"] and state["winner"] in (0, 1) and state["to_move"] is None
        assert state["winning_cells"] and all(state["cell_owners"][c] == state["winner"] for c in state["winning_cells"])
        assert state["legal_moves"] == [] and not state["swap_legal"]
        status, r = call(base, "/api/play", {"move": "a1"})
        assert status == 400 and r["error"].startswith("the game is over")
        status, r = call(base, "/api/ai", {})
        assert status == 400 and r["error"].startswith("the game is over")
        status, r = call(base, "/api/analyse")
        assert status == 400 and r["error"].startswith("the game is over")


def test_static_files_and_no_path_escape():
    with serving() as base:
        for path, ctype, text in (("/", "text/html", b"<svg id=\"board\""), ("/app.js", "text/javascript", b"/api/ai"),
                                  ("/style.css", "text/css", b".cell"), ("/favicon.svg", "image/svg+xml", b"<svg")):
            with urllib.request.urlopen(base + path, timeout=10) as res:
                assert res.headers["Content-Type"].startswith(ctype) and text in res.read()
        for path in ("/../pyproject.toml", "/static/app.js", "/server.py", "/%2e%2e/setup.py"):
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(base + path, timeout=10)
            assert err.value.code == 404


def test_serve_reports_a_busy_port(capsys):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert main(["serve", "random", "--game", "hex-3", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"port {port} on 127.0.0.1 is already in use" in err and "--port 0" in err
    assert main(["serve", "random", "--port", "70000"]) == 2
    assert main(["serve", "random", "--game", "hex-1"]) == 2


def test_serve_command_runs_and_stops_on_ctrl_c():
    proc = subprocess.Popen([sys.executable, "-m", "conhex_zero.cli.main", "serve", "random", "--game", "hex-3",
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        line = proc.stdout.readline()
        assert "hex-3 against random at http://127.0.0.1:" in line and "Ctrl-C" in line
        url = line.split(" at ")[1].split()[0]
        status, state = call(url.rstrip("/"), "/api/state")
        assert status == 200 and state["game"] == "hex-3"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and "stopped" in out and "Traceback" not in err


def _serve_once(monkeypatch, capsys, argv):
    """``conhex-zero serve`` that stops at once (after any browser thread has finished)."""
    import threading

    def stop(self):
        for t in threading.enumerate():
            if t.name == "conhex-zero-open-browser":
                t.join(10)
        raise KeyboardInterrupt

    monkeypatch.setattr(PlayServer, "serve_forever", stop)
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_serve_open_without_a_browser_says_so(monkeypatch, capsys):
    import webbrowser

    def no_browser(*args):
        raise webbrowser.Error("could not locate runnable browser")

    monkeypatch.setattr(webbrowser, "get", no_browser)
    code, out, err = _serve_once(monkeypatch, capsys, ["serve", "random", "--game", "hex-3", "--port", "0", "--open"])
    url = out.split(" at ")[1].split()[0]
    assert code == 0 and url.startswith("http://127.0.0.1:")
    assert err == f"conhex-zero serve: warning: no web browser found on this machine: open {url} in a browser yourself\n"

    class Failing:
        def open(self, url):
            return False

    monkeypatch.setattr(webbrowser, "get", lambda *args: Failing())
    code, out, err = _serve_once(monkeypatch, capsys, ["serve", "random", "--game", "hex-3", "--port", "0", "--open"])
    url = out.split(" at ")[1].split()[0]
    assert code == 0 and err == (f"conhex-zero serve: warning: the web browser could not be started: open {url} "
                                 f"in a browser yourself\n")
    opened = []

    class Working:
        def open(self, url):
            opened.append(url)
            return True

    monkeypatch.setattr(webbrowser, "get", lambda *args: Working())
    code, out, err = _serve_once(monkeypatch, capsys, ["serve", "random", "--game", "hex-3", "--port", "0", "--open"])
    assert code == 0 and err == "" and opened == [out.split(" at ")[1].split()[0]]


# ------------------------------------------------------------------------- hardening
def raw_request(base: str, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> tuple[int, dict]:
    """A request with exactly these headers (http.client adds Host unless one is given)."""
    conn = http.client.HTTPConnection(*urlsplit(base).netloc.split(":"), timeout=30)
    try:
        conn.putrequest(method, path, skip_host="Host" in headers, skip_accept_encoding=True)
        for k, v in headers.items():
            conn.putheader(k, v)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        res = conn.getresponse()
        return res.status, json.loads(res.read() or b"{}")
    finally:
        conn.close()


def test_many_concurrent_connections_all_get_answers():
    import threading

    # 150 clients connect at once while the server is not yet accepting (as when a burst arrives
    # faster than it accepts): the listen queue must hold them all, or their connections time out.
    server = PlayServer(GameServer("random", "hex-3"), "127.0.0.1", 0)
    host, port = server.server_address[:2]
    try:  # the system caps every listen queue (Linux: 4096 since 5.4, 128 before)
        n = min(150, int(open("/proc/sys/net/core/somaxconn").read()))
    except (OSError, ValueError):
        n = 150
    connected = threading.Barrier(n + 1)
    go = threading.Event()
    answers: list[int] = []

    def get() -> None:
        try:
            sock = socket.create_connection((host, port), timeout=4)
        except OSError:
            answers.append(-1)
            connected.wait(timeout=60)
            return
        with sock:
            connected.wait(timeout=60)
            go.wait(timeout=60)
            sock.settimeout(30)
            sock.sendall(f"GET /favicon.svg HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
            answers.append(int(data.split()[1]) if data.startswith(b"HTTP/1.1 ") else -2)

    threads = [threading.Thread(target=get) for _ in range(n)]
    try:
        for t in threads:
            t.start()
        connected.wait(timeout=60)
        start_in_thread(server)
        go.set()
        for t in threads:
            t.join(60)
    finally:
        server.shutdown()
        server.server_close()
        server.game.close()
    assert answers.count(200) == n, {a: answers.count(a) for a in set(answers)}


def test_other_web_sites_cannot_drive_the_game():
    with serving("random", "hex-3") as base:
        netloc = urlsplit(base).netloc
        port = netloc.split(":")[1]
        # A form or fetch of another site can send text/plain (or nothing) without asking: refused.
        for path in ("/api/ai", "/api/undo", "/api/new", "/api/play"):
            for headers, body in (({"Content-Type": "text/plain"}, b""), ({}, b""),
                                  ({"Content-Type": "text/plain"}, b'{"move": "b2"}'),
                                  ({"Content-Type": "application/x-www-form-urlencoded"}, b"move=b2")):
                status, r = raw_request(base, "POST", path, headers, body)
                assert status == 403 and "Content-Type: application/json" in r["error"], (path, headers)
        # JSON from another origin (a page of another site allowed by a lax browser): refused.
        for origin in ("http://evil.example", f"http://evil.example:{port}", "null", f"https://{netloc}",
                       f"http://127.0.0.1:{int(port) + 1}"):
            status, r = raw_request(base, "POST", "/api/play", {"Content-Type": "application/json", "Origin": origin},
                                    b'{"move": "b2"}')
            assert status == 403 and "another web site" in r["error"], origin
        # DNS rebinding: another name for this machine in the Host header, also for reads.
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1:{int(port) + 1}", f"localhost.evil:{port}"):
            status, r = raw_request(base, "GET", "/api/state", {"Host": host})
            assert status == 403 and "does not answer for the host" in r["error"], host
            status, _ = raw_request(base, "GET", "/", {"Host": host})
            assert status == 403
        assert call(base, "/api/state")[1]["ply"] == 0  # nothing was played
        # The page's own requests work, by any loopback name.
        for host in (netloc, f"localhost:{port}", f"[::1]:{port}"):
            status, r = raw_request(base, "POST", "/api/play", {"Host": host, "Origin": f"http://{host}",
                                                                "Content-Type": "application/json"}, b'{"move": "b2"}')
            assert status == 200, host
            status, r = raw_request(base, "POST", "/api/ai", {"Host": host, "Content-Type": "application/json"}, b"")
            assert status == 200
            status, r = raw_request(base, "POST", "/api/undo", {"Host": host, "Content-Type": "application/json; "
                                                                "charset=utf-8"}, b"{}")
            assert status == 200 and r["state"]["ply"] == 0


def test_allowed_host_names():
    from conhex_zero.play.server import _split_host

    assert _split_host("a:1") == ("a", 1) and _split_host("a") == ("a", 80) and _split_host("[::1]:5") == ("::1", 5)
    assert _split_host("a:x") == (None, None) and _split_host(":5") == (None, None) and _split_host("[::1") == (None, None)
    game = GameServer("random", "hex-3")
    try:
        server = PlayServer(game, "127.0.0.1", 0, allowed_hosts=["play.example", "other.example:9"])
        port = server.server_address[1]
        try:
            assert server.host_allowed(f"play.example:{port}") and server.host_allowed("other.example:9")
            assert not server.host_allowed("play.example:9") and not server.host_allowed(f"10.0.0.1:{port}")
            assert server.origin_allowed(f"http://play.example:{port}")
            assert not server.origin_allowed(f"http://play.example:{port}/x")
        finally:
            server.server_close()
        server = PlayServer(game, "0.0.0.0", 0)  # every interface: any IP address, this machine's names
        port = server.server_address[1]
        try:
            assert server.host_allowed(f"10.1.2.3:{port}") and server.host_allowed(f"[fe80::1]:{port}")
            assert server.host_allowed(f"localhost:{port}") and server.host_allowed(f"{socket.gethostname()}:{port}")
            assert not server.host_allowed(f"evil.example:{port}") and not server.host_allowed(f"10.1.2.3:{port + 1}")
        finally:
            server.server_close()
    finally:
        game.close()


def test_the_page_posts_json():
    from importlib import resources

    js = resources.files("conhex_zero.play").joinpath("static", "app.js").read_text()
    posts = re.findall(r'api\("POST", "([^"]+)"(, [^)]*)?\)', js)
    assert {p for p, _ in posts} == {"/api/play", "/api/ai", "/api/undo", "/api/new"}
    assert 'opts.headers["Content-Type"] = "application/json"' in js
    assert 'if (method === "POST" && body === undefined) body = {};' in js


@contextmanager
def serving_with(game_server: GameServer, **kwargs):
    server = PlayServer(game_server, "127.0.0.1", 0, **kwargs)
    start_in_thread(server)
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        game_server.close()


def test_slow_clients_lose_their_connection(capsys):
    import time

    with serving_with(GameServer("random", "hex-3"), client_timeout=0.5) as server:
        host, port = server.server_address[:2]
        with socket.create_connection((host, port), timeout=30) as slow:
            slow.sendall(b"GET /api/sta")  # and then nothing
            start = time.time()
            assert slow.recv(100) == b"" and time.time() - start < 20  # closed by the server
        with socket.create_connection((host, port), timeout=30) as idle:
            idle.sendall(f"GET /api/state HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
            data, start = b"", time.time()
            while chunk := idle.recv(65536):  # the answer, then the kept-alive connection times out
                data += chunk
            assert data.startswith(b"HTTP/1.1 200") and time.time() - start < 20
        assert call(f"http://{host}:{port}", "/api/state")[0] == 200  # the server still answers
    assert "Traceback" not in capsys.readouterr().err


def test_clients_that_hang_up_early_are_dropped_quietly(capsys):
    import struct
    import time

    class SlowGame(GameServer):
        def get_state(self):
            time.sleep(0.5)  # the client has gone by the time the answer is written
            return super().get_state()

    with serving_with(SlowGame("random", "hex-3")) as server:
        host, port = server.server_address[:2]
        for request in (f"GET /api/state HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode(),  # gone before the answer
                        b"GET /api/state HTTP/1.1\r\nHo"):  # gone in the middle of the request
            sock = socket.create_connection((host, port), timeout=30)
            sock.sendall(request)
            time.sleep(0.1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # reset, not a goodbye
            sock.close()
        time.sleep(1.5)
        assert call(f"http://{host}:{port}", "/api/state")[0] == 200
        try:
            raise BrokenPipeError(32, "Broken pipe")
        except BrokenPipeError:
            server.handle_error(None, ("127.0.0.1", 1))
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Error" not in err, err


def test_echoed_input_is_shortened():
    with serving("random", "hex-3") as base:
        long = "x" * 60000
        for path, body in (("/api/play", {"move": long}), ("/api/new", {"game": long}), ("/api/new", {"as": long}),
                           ("/api/new", {"game": "hex-3:" + long})):
            status, r = call(base, path, body)
            assert status == 400 and len(r["error"]) < 200 and "..." in r["error"], (path, r["error"][:300])
        assert call(base, "/api/play", {"move": "x" * 41})[1]["error"].startswith("'" + "x" * 37 + "...'")
        status, r = call(base, "/api/" + "y" * 5000)
        assert status == 404 and len(r["error"]) < 100
        status, r = call(base, "/api/play", {"move": "d4"})
        assert status == 400 and "'d4' is not a move in hex-3" in r["error"]  # short names stay whole


def turned(name: str, n: int) -> str:
    """The Hex n x n hole's image under the 180-degree turn."""
    c, r = ord(name[0]) - ord("a"), int(name[1:]) - 1
    return f"{chr(ord('a') + n - 1 - c)}{n - r}"


def test_a_third_mirror_move_is_refused_with_the_reason():
    with serving("random", "hex-5:mirror=2", human=1) as base:
        for k in range(3):  # the human (O) answers each of the AI's moves with its 180-degree turn
            status, r = call(base, "/api/ai", {})
            assert status == 200
            status, r = call(base, "/api/play", {"move": turned(r["move"], 5)})
            if k < 2:
                assert status == 200, r
        assert status == 400 and "third consecutive move mirroring the opponent's (rot180)" in r["error"]
        assert call(base, "/api/state")[1]["ply"] == 5  # nothing changed


def test_scoring_keeps_the_running_pair_score_in_the_state():
    with serving("random", "hex-2", scoring=True) as base:
        assert call(base, "/api/state")[1]["scoring"]["pairs_won"] == {"you": 0, "ai": 0, "draw": 0}
        for game in range(2):
            state = call(base, "/api/state")[1]
            assert state["human"] == game  # the sides alternate: first, then second
            while state["winner"] is None:
                if state["to_move"] == state["human"]:
                    state = call(base, "/api/play", {"move": state["legal_moves"][0]})[1]["state"]
                else:
                    state = call(base, "/api/ai", {})[1]["state"]
            score = state["scoring"]
            assert len(score["games"]) == game + 1
            if game == 0:  # undo reopens the game and takes it out of the score; replaying restores it
                undone = call(base, "/api/undo", {})[1]["state"]
                if undone["winner"] is None:
                    assert undone["scoring"]["games"] == []
                    while undone["to_move"] != undone["human"]:
                        undone = call(base, "/api/ai", {})[1]["state"]
                    state = call(base, "/api/play", {"move": undone["legal_moves"][0]})[1]["state"]
                    while state["winner"] is None:
                        state = call(base, "/api/ai" if state["to_move"] != state["human"] else "/api/play",
                                     {} if state["to_move"] != state["human"] else {"move": state["legal_moves"][0]})[1]["state"]
                    assert len(state["scoring"]["games"]) == 1
                call(base, "/api/new", {"as": "first"})  # the requested side gives way to the pair's
        pair = score["pairs"][0]
        totals = pair["totals"]
        assert sum(score["pairs_won"].values()) == 1 and score["current_pair"]["games"] == 0
        assert pair["result"] in ("player1", "player2", "draw") and set(totals) == {"player1", "player2"}
    with serving("random", "hex-2") as base:
        assert call(base, "/api/state")[1]["scoring"] is None


def test_a_method_a_resource_does_not_take_is_405_with_the_allowed_ones():
    with serving() as base:
        for method, path, allow in (("PUT", "/", "GET, HEAD"), ("DELETE", "/", "GET, HEAD"),
                                    ("POST", "/app.js", "GET, HEAD"), ("PATCH", "/api/state", "GET, HEAD"),
                                    ("DELETE", "/api/play", "POST"), ("GET", "/api/new", "POST")):
            conn = http.client.HTTPConnection(*urlsplit(base).netloc.split(":"), timeout=30)
            try:
                conn.request(method, path, body=b"{}" if method != "GET" else None,
                             headers={"Content-Type": "application/json"})
                res = conn.getresponse()
                body = json.loads(res.read())
            finally:
                conn.close()
            assert res.status == 405 and res.getheader("Allow") == allow, (method, path)
            assert res.getheader("Content-Type").startswith("application/json")
            assert body["error"] == f"{path} does not take {method} (it takes {allow})"
        conn = http.client.HTTPConnection(*urlsplit(base).netloc.split(":"), timeout=30)
        try:
            conn.request("PUT", "/nothing", body=b"")
            assert conn.getresponse().status == 404  # no such resource: not a method question
        finally:
            conn.close()


def _documented_curl_calls() -> list[list[str]]:
    """The ``curl`` lines of docs/play.md's API example, as words."""
    from pathlib import Path
    import shlex

    text = (Path(__file__).resolve().parent.parent / "docs" / "play.md").read_text()
    block = text.split("test_the_documented_api_calls", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line) for line in block.splitlines() if line.startswith("curl ")]


def test_the_documented_api_calls():
    calls = _documented_curl_calls()
    assert len(calls) == 4
    with serving("random", "hex-5") as base:
        answers = []
        for words in calls:
            url = next(w for w in words if w.startswith("http://127.0.0.1:8765/"))
            method = words[words.index("-X") + 1] if "-X" in words else "GET"
            data = words[words.index("-d") + 1].encode() if "-d" in words else None
            req = urllib.request.Request(url.replace("http://127.0.0.1:8765", base), data=data, method=method)
            if "-H" in words:
                name, _, value = words[words.index("-H") + 1].partition(": ")
                req.add_header(name, value)
            with urllib.request.urlopen(req, timeout=30) as res:
                assert res.status == 200
                answers.append(json.loads(res.read()))
        assert answers[0]["game"] == "hex-5" and answers[0]["moves"] == []
        assert answers[1]["move"] == "c3" and answers[1]["state"]["moves"] == ["c3"]
        assert answers[2]["state"]["moves"] == ["c3", answers[2]["move"]] and "analysis" in answers[2]
        assert answers[3]["state"]["game"] == "hex-7" and answers[3]["state"]["human"] == 1
        # the same POST without its Content-Type is refused, as the page says
        status, r = call(base, "/api/play", raw=b'{"move": "c3"}', ctype=None)
    assert status == 403 and r == {"error": "send the request body as JSON (Content-Type: application/json)"}

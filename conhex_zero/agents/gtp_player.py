"""External engines as players, over the Go Text Protocol (as Hex programs speak it).

``gtp:COMMAND`` starts ``COMMAND`` (shell-split) as a subprocess and talks GTP on its stdin and
stdout: ``boardsize``, ``clear_board``, ``play b|w MOVE``, ``genmove b|w``, ``quit``. The first
player is ``b``. Hex boards are sent as ``boardsize N``, ConHex as ``boardsize conhex``; moves use
our names (``a1``, ``F6``) and ``swap`` (``swap-pieces`` is accepted from engines as well).

Each game keeps one engine process for its whole length: the arena tells the player which game
each position belongs to (``act(..., games=...)``) and plays at most ``parallel`` games at once
with it (``max_parallel_games``), so an engine gets ``clear_board`` once per game and then only the
new moves. Engines are still not trusted to remember games: before each ``genmove`` an engine is
brought to the game's position, by the new moves when it last saw a prefix of this game, otherwise
(another game, a restart) by ``clear_board`` and the whole move list. Anything that goes wrong ends
only that game, which the engine forfeits, with the reason recorded: an illegal or unreadable move,
an error reply, no reply within ``timeout`` seconds (``startup`` seconds for the first reply of a
process just started: an engine that imports a large library takes far longer to start than to
move, above all on a busy machine), or the process exiting. A broken process is restarted for the
next game.
"""

from __future__ import annotations

import hashlib
import os
import select
import shlex
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import torch
from torch import Tensor

from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.games.game import MoveError


class GTPError(Exception):
    """The engine failed: the message is the reason the game is forfeited."""


class GTPEngine:
    """One engine process."""

    def __init__(self, command: str, timeout: float, startup: float = 120.0):
        self.command, self.timeout, self.startup = command, timeout, max(startup, timeout)
        self.fresh = False  # the process was just started: its first reply may take ``startup`` seconds
        self.proc: subprocess.Popen | None = None
        self.buffer = b""
        self.known: list[int] | None = None  # the moves the engine has been told, if any

    def start(self) -> None:
        try:
            self.proc = subprocess.Popen(shlex.split(self.command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL)
        except (OSError, ValueError) as err:
            raise GTPError(f"cannot start {self.command!r}: {err}") from None
        self.buffer = b""
        self.known = None
        self.fresh = True

    def close(self) -> None:
        if self.proc is None:
            return
        try:
            if self.proc.poll() is None and self.proc.stdin:
                self.proc.stdin.write(b"quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=1)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            pass
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        self.known = None

    def _read_line(self, deadline: float, allowed: float) -> str:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise GTPError(f"no reply within {allowed:g} s" + (" of starting (--gtp-startup)" if self.fresh else ""))
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                try:
                    code = self.proc.wait(timeout=1)
                except subprocess.TimeoutExpired:
                    code = None
                raise GTPError("the engine closed its output" if code is None else f"the engine exited (code {code})")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode("utf-8", errors="replace").rstrip("\r")

    def send(self, command: str) -> str:
        """Send one command; the reply's text, or GTPError (error replies included)."""
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write((command + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise GTPError("the engine exited") from None
        allowed = self.startup if self.fresh else self.timeout
        deadline = time.monotonic() + allowed
        line = self._read_line(deadline, allowed)
        while not line.strip():  # blank lines before a reply are tolerated
            line = self._read_line(deadline, allowed)
        if line[0] not in "=?":
            raise GTPError(f"garbage reply to {command.split()[0]!r}: {line[:60]!r}")
        lines = [line]
        while True:  # a reply ends with an empty line
            nxt = self._read_line(deadline, allowed)
            if not nxt.strip():
                break
            lines.append(nxt)
        self.fresh = False  # it answered: started
        status = line[0]
        text = "\n".join([line[1:].lstrip("0123456789").strip()] + lines[1:]).strip()
        if status == "?":
            raise GTPError(f"error reply to {command!r}: {text[:80]}")
        return text


def short_name(command: str) -> str:
    """``gtp:PROGRAM`` from a command line (its program's file name), for records and ladders; with
    arguments, ``gtp:PROGRAM~HASH`` (6 hex digits of the whole command), so that one program run
    with other settings is another player in a ladder (``gtp@NAME:COMMAND`` chooses the name)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    program = os.path.basename(words[0]) if words else "engine"
    if len(words) <= 1:
        return f"gtp:{program[:40]}"
    digest = hashlib.sha1(" ".join(words).encode("utf-8")).hexdigest()[:6]
    return f"gtp:{program[:40]}~{digest}"


class GTPPlayer:
    """A ``Player`` backed by a pool of GTP engine processes, one per game in progress."""

    per_game = True  # act() takes ``games``: which game each position belongs to

    def __init__(self, env: VecEnv, command: str, name: str | None = None, timeout: float = 10.0,
                 parallel: int = 4, startup: float = 120.0):
        self.env, self.command = env, command
        self.name = name or short_name(command)
        self.engines = [GTPEngine(command, timeout, startup) for _ in range(max(1, parallel))]
        self.max_parallel_games = len(self.engines)
        self.engine_of: dict[int, int] = {}  # game -> engine index
        self._used: dict[int, int] = {}  # game -> the call that last served it
        self._calls = 0
        self.last_failures: dict[int, str] = {}
        board = env.game.board
        self.boardsize = "conhex" if board.name == "conhex" else board.name.split("-")[1]

    def close(self) -> None:
        for e in self.engines:
            e.close()

    def __del__(self) -> None:  # engines are child processes: never leave them behind
        try:
            self.close()
        except Exception:
            pass

    def _colour(self, ply: int) -> str:
        return "b" if int(self.env.game.turn_table[ply]) == 0 else "w"

    def _name(self, action: int) -> str:
        return self.env.game.action_name(action)

    def _sync(self, engine: GTPEngine, moves: list[int]) -> None:
        known = engine.known
        if known is None or moves[:len(known)] != known:
            engine.send(f"boardsize {self.boardsize}")
            engine.send("clear_board")
            known = []
        for ply in range(len(known), len(moves)):
            engine.send(f"play {self._colour(ply)} {self._name(moves[ply])}")
        engine.known = list(moves)

    def _one(self, engine: GTPEngine, state: State, moves: list[int]) -> tuple[int, str | None]:
        try:
            self._sync(engine, moves)
            reply = engine.send(f"genmove {self._colour(len(moves))}").split()
        except GTPError as err:
            engine.close()
            return -1, str(err)
        text = reply[0].lower() if reply else ""
        if text == "resign":
            engine.known = None
            return -1, "resigned"
        if text == "swap-pieces":
            text = "swap"
        try:
            action = self.env.game.parse_move(text)
        except MoveError:
            engine.close()
            return -1, f"unreadable move {' '.join(reply)[:40]!r}"
        if not bool(self.env.legal_mask(state)[0, action]):
            engine.close()
            return -1, f"illegal move {self.env.why_illegal(state, 0, action)}"
        engine.known = list(moves) + [action]
        return action, None

    def _engines_for(self, games: list[int]) -> list[int]:
        """An engine per game: the one it had, else a free one, else the engine of the game served
        longest ago (the arena starts new games only when the earlier ones have ended)."""
        self._calls += 1
        out = []
        for g in games:
            if g not in self.engine_of:
                taken = set(self.engine_of.values())
                free = [k for k in range(len(self.engines)) if k not in taken]
                if not free:
                    others = [h for h in self.engine_of if h not in games]
                    if not others:
                        raise ValueError(f"{len(games)} games at once need more than {len(self.engines)} engines")
                    oldest = min(others, key=lambda h: self._used[h])
                    free = [self.engine_of.pop(oldest)]
                    self._used.pop(oldest)
                self.engine_of[g] = free[0]
            self._used[g] = self._calls
            out.append(self.engine_of[g])
        return out

    def act(self, state: State, keys: Tensor | None = None, history: list[list[int]] | None = None,
            games: list[int] | None = None) -> Tensor:
        if history is None:
            raise ValueError("a GTP player needs each game's move history")
        B = state.batch_size
        actions = torch.full((B,), -1, dtype=torch.long, device=state.device)
        self.last_failures = {}
        if games is not None and B <= len(self.engines):
            owner = self._engines_for(games)
            chunks = [[row for row in range(B) if owner[row] == k] for k in range(len(self.engines))]
        else:  # no game identities (or more games than engines): spread the positions
            chunks = [list(range(i, B, len(self.engines))) for i in range(len(self.engines))]

        def serve(k: int) -> list[tuple[int, int, str | None]]:
            return [(row, *self._one(self.engines[k], state[row], history[row])) for row in chunks[k]]

        with ThreadPoolExecutor(max_workers=len(self.engines)) as pool:
            for part in pool.map(serve, [k for k in range(len(self.engines)) if chunks[k]]):
                for row, action, reason in part:
                    actions[row] = action
                    if reason is not None:
                        self.last_failures[row] = reason
        return actions

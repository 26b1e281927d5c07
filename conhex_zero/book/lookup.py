"""A book at the board: the book's moves and values for any position it holds, and a player that
plays the book's best move while the position is in the book (``play``, ``gtp``, ``serve`` with
``--book DIR``, and ``CKPT:book=DIR`` players in the arena).

A position is in the book when its key (``keys``: up to symmetry, whatever the move order) names a
book node. The book's move there is ``graph.Book.best_move``: the best book child by minimax, or the
best move not yet in the book where its search says it is better. Out of the book, the player it
wraps searches as it would without one.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from conhex_zero.book.folder import OpenBook, open_book
from conhex_zero.book.keys import Canonical
from conhex_zero.book.store import BASE_FILE, BookError, book_path
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv


@dataclass
class BookMoveView:
    move: str
    action: int
    win: float
    """The mover's win chance after the move (1 or 0 where proven)."""
    nodes: int
    """Book positions below the move (0: the move is not in the book, its value is a search's)."""
    proven: str | None
    """``"win"``/``"loss"`` for the mover when proven."""

    def to_json(self) -> dict:
        return {"move": self.move, "action": self.action, "win_percent": round(100 * self.win, 1),
                "nodes": self.nodes, "proven": self.proven}


@dataclass
class BookView:
    """The book at one position, for the player to move there."""

    value: float
    proven: str | None
    nodes: int
    best: int | None
    moves: list[BookMoveView]
    """Book moves (and the best move not in the book), strongest first."""

    @property
    def win(self) -> float:
        return 1.0 if self.proven == "win" else 0.0 if self.proven == "loss" else (1 + self.value) / 2

    def to_json(self) -> dict:
        return {"value": round(self.value, 4), "win_percent": round(100 * self.win, 1), "proven": self.proven,
                "nodes": self.nodes, "best": self.best, "moves": [m.to_json() for m in self.moves]}


@functools.lru_cache(maxsize=4)
def _read(folder: str, stamp: tuple[int, ...]) -> OpenBook:
    return open_book(folder)


def read_book(folder: str | Path) -> OpenBook:
    """A book folder's book, read once while its file is unchanged (a GTP engine or a page starts a
    session per game)."""
    stamp = []
    for path in (book_path(folder), Path(folder) / BASE_FILE):
        try:
            info = path.stat()
            stamp += [info.st_mtime_ns, info.st_size]
        except OSError:
            stamp += [0, 0]
    if not any(stamp):
        return open_book(folder)  # says why, as a BookError
    return _read(str(folder), tuple(stamp))


def book_game(folder: str | Path) -> str:
    return read_book(folder).game


class BookLookup:
    """A book read once, looked up by position."""

    def __init__(self, folder: str | Path, env: VecEnv):
        self.folder = str(folder)
        self.opened = read_book(folder)
        from conhex_zero.play.checkpoints import same_game

        if not same_game(self.opened.game, env.game):
            raise BookError(f"{folder} is a book of {self.opened.game}, not of {env.game.spec}")
        self.env, self.book = env, self.opened.book
        self.canon = Canonical(env)

    def view(self, state: State) -> BookView | None:
        """The book at ``state`` (a batch of one), or None when the position is not in the book."""
        if bool(state.done[0]):
            return None
        keyed = self.canon.keys(state)
        node = self.book.nodes.get(keyed.keys[0])
        if node is None:
            return None
        k = keyed.symmetry[0]
        name = self.env.game.action_name
        moves = []
        seen = set()
        for a, child in node.children.items():
            real = self.canon.to_real([a], k)[0]
            c = self.book.nodes[child]
            proven = None if not c.proven else ("loss" if c.proven > 0 else "win")
            win = 1.0 if proven == "win" else 0.0 if proven == "loss" else (1 - c.value) / 2
            moves.append(BookMoveView(name(real), real, win, c.size, proven))
            seen.add(a)
        rest = node.rest
        if rest is not None and rest.best is not None and rest.best not in seen:
            real = self.canon.to_real([rest.best], k)[0]
            proven = None if not rest.proven else ("win" if rest.proven > 0 else "loss")
            moves.append(BookMoveView(name(real), real, 1.0 if proven == "win" else 0.0 if proven == "loss" else
                                      (1 + rest.value) / 2, 0, proven))
        moves.sort(key=lambda m: (-m.win, -m.nodes, m.action))
        best = self.book.best_move(node)
        return BookView(value=node.value, proven=None if not node.proven else ("win" if node.proven > 0 else "loss"),
                        nodes=node.size, best=None if best is None else self.canon.to_real([best], k)[0], moves=moves)


class BookPlayer:
    """A player that plays the book's best move in book positions and asks ``inner`` elsewhere.

    ``book_moves``: per position of the last ``act``, whether its move came from the book."""

    def __init__(self, inner, lookup: BookLookup):
        self.inner, self.lookup = inner, lookup
        self.name = f"{inner.name}:book={lookup.folder}"
        self.book_moves: list[bool] = []

    def __getattr__(self, attribute: str):
        return getattr(self.inner, attribute)

    def act(self, state: State, keys: Tensor | None = None, history: list[list[int]] | None = None) -> Tensor:
        B = state.batch_size
        actions = torch.full((B,), -1, dtype=torch.long, device=state.device)
        from_book = []
        for b in range(B):
            view = self.lookup.view(state[b])
            if view is not None and view.best is not None:
                actions[b] = view.best
                from_book.append(b)
        self.book_moves = [b in from_book for b in range(B)]
        rest = [b for b in range(B) if b not in from_book]
        if rest:
            index = torch.tensor(rest, device=state.device)
            sub_keys = None if keys is None else keys[index]
            sub_history = None if history is None else [history[b] for b in rest]
            actions[index] = self.inner.act(state[index], sub_keys, sub_history)
            effort = getattr(self.inner, "last_effort", None)
            if effort is not None and len(effort) == len(rest):  # book moves cost no search
                full = [(0, False)] * B
                for b, e in zip(rest, effort):
                    full[b] = e
                self.inner.last_effort = full
        elif hasattr(self.inner, "last_effort"):
            self.inner.last_effort = [(0, False)] * B
        return actions

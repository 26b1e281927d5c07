"""The opening book walked in the browser (``serve --book DIR``, the page ``/book``; issue 57).

``GET /api/book?line=F6,C7`` answers the position the line reaches from the book's start (its
moves by name, comma-separated; empty: the start): the board, the book's values of every book
move there and of the best move not yet in the book, the position's own value, decided and proven
marks, the best line, and the line's steps (each a position the page can go back to). ``GET
/api/book/search?line=...`` searches the position live with the served player (on request: a
search takes seconds).

**One convention for every number** (``CONVENTION``): a move's percentage is the win chance of the
player who makes it, after the opponent's best answer (the swap included where the pie rule allows
it), by the book's minimax (1 or 0 where proven); a position's is the chance of the player to move
there. The same number is on the board, in the move list, in ``book show`` and on the static pages
(``book.pages``), each labelled so.
"""

from __future__ import annotations

from typing import Any

import torch

from conhex_zero.book.lookup import BookLookup, read_book
from conhex_zero.book.table import CONVENTION, LineReader
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.games.game import IllegalMoveError, MoveError

MAX_LINE = 200
"""The most moves a line may name (a game is shorter)."""


class BookBrowser:
    """A book read once; ``position`` and ``search`` answer the page's requests (plain JSON)."""

    def __init__(self, folder: str, player: str | None = None, *, simulations: int | None = None,
                 device: str = "cpu", seed: int = 0):
        from conhex_zero.play.geometry import board_geometry

        self.folder = folder
        self.opened = read_book(folder)
        self.env = VecEnv(self.opened.game, device)
        self.lookup = BookLookup(folder, self.env)
        self.book = self.lookup.book
        self.reader = LineReader(self.env, self.book, self.lookup.canon)
        self.start = self.env.initial_state(1)
        for name in self.opened.start_moves:
            self.start = self.env.step(self.start, torch.tensor([self.env.game.parse_move(name)], device=self.env.device))
        self.geometry = board_geometry(self.env.game)
        self.hole_names = list(self.env.game.board.hole_names)
        self.player, self.simulations, self.device, self.seed = player, simulations, device, seed
        self._session = None  # for live searches, made on the first request

    # ----------------------------------------------------------------- positions
    def parse_line(self, text: str) -> list[int]:
        """The actions of a comma-separated line of move names from the book's start; ``ValueError``
        naming the first move that is not legal there."""
        names = [n.strip() for n in text.split(",") if n.strip()] if text else []
        if len(names) > MAX_LINE:
            raise ValueError(f"the line names {len(names)} moves; at most {MAX_LINE}")
        state, actions = self.start, []
        for i, name in enumerate(names, 1):
            try:
                action = self.env.game.parse_move(name)
            except (MoveError, IllegalMoveError, ValueError) as err:
                raise ValueError(f"move {i} ({name[:20]}): {err}") from None
            if bool(state.done[0]) or not bool(self.env.legal_mask(state)[0, action]):
                raise ValueError(f"move {i} ({name[:20]}) is not legal after {' '.join(names[:i - 1]) or 'the start'}")
            actions.append(action)
            state = self.env.step(state, torch.tensor([action], device=self.env.device))
        return actions

    def _state(self, actions: list[int]) -> State:
        state = self.start
        for a in actions:
            state = self.env.step(state, torch.tensor([a], device=self.env.device))
        return state

    def position(self, line: str) -> dict[str, Any]:
        actions = self.parse_line(line)
        state = self._state(actions)
        name = self.env.game.action_name
        view = self.lookup.view(state)
        keyed = self.lookup.canon.keys(state)
        key = keyed.keys[0]
        node = self.book.nodes.get(key)
        moves, best_line = [], []
        if view is not None:
            k = keyed.symmetry[0]
            for m in view.moves:
                canonical = self.lookup.canon.to_canonical([m.action], k)[0]
                child = node.children.get(canonical)
                moves.append({"move": m.move, "action": m.action, "win_percent": round(100 * m.win, 1),
                              "nodes": m.nodes, "proven": m.proven, "in_book": child is not None,
                              "decided": bool(child is not None and self.book.decided(child)),
                              "best": m.action == view.best})
            best_line = self.reader.best_line(state, key)
        steps, prefix = [], self.start
        for i, a in enumerate(actions):
            prefix = self.env.step(prefix, torch.tensor([a], device=self.env.device))
            steps.append({"move": name(a), "line": [name(x) for x in actions[:i + 1]],
                          "in_book": self.lookup.canon.keys(prefix).keys[0] in self.book.nodes})
        winner = int(state.winner[0])
        return {
            "game": self.env.game.spec, "book": self.folder, "book_positions": len(self.book),
            "start_moves": list(self.opened.start_moves), "line": [name(a) for a in actions], "steps": steps,
            "geometry": self.geometry, "hole_names": self.hole_names, "holes": state.holes[0].tolist(),
            "cells": state.cells[0].tolist(), "to_move": int(state.to_move[0]), "is_over": winner >= 0,
            "winner": winner if winner >= 0 else None, "swap_legal": self._swap_legal(state),
            "in_book": view is not None,
            "node": None if view is None else {
                "win_percent": round(100 * view.win, 1), "proven": view.proven, "nodes": view.nodes,
                "decided": self.book.decided(key), "search_win_percent": round(50 * (1 + node.first.value), 1),
                "best_line": best_line},
            "moves": moves, "convention": CONVENTION, "searchable": self.player is not None,
        }

    def _swap_legal(self, state: State) -> bool:
        game = self.env.game
        return bool(game.swap and not bool(state.done[0]) and self.env.legal_mask(state)[0, game.swap_action])

    # ----------------------------------------------------------------- live search
    def search(self, line: str, top: int = 5, simulations: int | None = None) -> dict[str, Any]:
        """A live search of the position with the served player (the same player the game uses)."""
        if self.player is None:
            raise ValueError("no player to search with")
        actions = self.parse_line(line)
        if bool(self._state(actions).done[0]):
            raise ValueError("the game is over in this position: nothing to search")
        session = self._analyst()
        session.new_game()
        for a in self.opened_actions() + actions:
            session.play(a)
        analysis = session.analyse(top=top, simulations=simulations)
        return {"line": [self.env.game.action_name(a) for a in actions], "analysis": analysis.to_json(),
                "convention": CONVENTION}

    def opened_actions(self) -> list[int]:
        return [self.env.game.parse_move(n) for n in self.opened.start_moves]

    def _analyst(self):
        if self._session is None:
            from conhex_zero.play.session import PlaySession

            self._session = PlaySession(self.env.game, self.player, seed=self.seed, simulations=self.simulations,
                                        device=self.device)
        return self._session

    def close(self) -> None:
        if self._session is not None:
            self._session.close()

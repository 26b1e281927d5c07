"""Conversions between people's notation and engine states: move lists, pictures, summaries."""

from __future__ import annotations

from typing import Sequence

import torch

from conhex_zero.env.state import State
from conhex_zero.env.vec_env import IllegalActionError, VecEnv
from conhex_zero.games.game import Game, IllegalMoveError, MoveError, parse_moves, split_moves  # noqa: F401 (re-exported)
from conhex_zero.games.render import render_board, status_line


def play_moves(env: VecEnv, moves: Sequence[str] | str | Sequence[int]) -> State:
    """The position (batch 1) after a move list from the start of a game.

    ``moves`` are names (``F6``, ``swap``) or action ids. Every move is checked; the first illegal
    one raises ``IllegalMoveError`` with its number and the reason.
    """
    if all(isinstance(m, int) for m in moves) and not isinstance(moves, str):
        actions = list(moves)  # type: ignore[arg-type]
        names = [env.game.action_name(a) if 0 <= a < env.num_actions else str(a) for a in actions]
    else:
        names = split_moves(moves)  # type: ignore[arg-type]
        actions = parse_moves(env.game, names)
    state = env.initial_state(1)
    for number, (name, action) in enumerate(zip(names, actions), start=1):
        try:
            state = env.step(state, torch.tensor([action], device=env.device), check=True)
        except IllegalActionError as err:
            raise IllegalMoveError(number, name, err.reasons[0]) from None
    return state


def render_state(env: VecEnv, state: State, index: int = 0, cell_ids: bool = False,
                 color: bool = False, last: int | None = None) -> str:
    """Picture of game ``index`` of a batch, with a status line under it."""
    s = state[index].to("cpu")
    picture = render_board(env.game.board, s.holes[0].tolist(), s.cells[0].tolist(),
                           cell_ids=cell_ids, color=color, last=last)
    return picture + "\n" + status_line(int(s.to_move[0]), int(s.ply[0]), int(s.winner[0]))


def summarize(env: VecEnv, state: State, index: int = 0) -> dict:
    """JSON-ready facts about game ``index``: winner, player to move, owners (null = none)."""
    s = state[index].to("cpu")

    def owners(t: torch.Tensor) -> list[int | None]:
        return [None if v < 0 else int(v) for v in t.tolist()]

    winner = int(s.winner[0])
    return {
        "game": env.game.spec,
        "ply": int(s.ply[0]),
        "winner": None if winner < 0 else winner,
        "to_move": int(s.to_move[0]),
        "cell_owners": owners(s.cells[0]),
        "hole_owners": owners(s.holes[0]),
    }

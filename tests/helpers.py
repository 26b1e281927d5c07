"""Shared test helpers: play move lists on both engines, random games, reference snapshots."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
import torch

from conhex_zero.env.reference import ReferenceGame
from conhex_zero.games.board import PLAYER_SIDES, BoardGraph
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv


def owners_of(env: VecEnv, state: State, names: list[str], which: str = "cells") -> list[int]:
    """Owner (-1/0/1) of the named holes (``which='holes'``) or of cell ids (``which='cells'``)."""
    if which == "holes":
        return [int(state.holes[0, env.game.parse_move(n)]) for n in names]
    return [int(state.cells[0, int(c)]) for c in names]


def play_both(spec: str, moves: list[str]) -> tuple[VecEnv, list[State], list[ReferenceGame]]:
    """Play ``moves`` on the vectorised engine (checked) and the reference; states after each move.

    Asserts the two engines agree after every move.
    """
    env = VecEnv(spec)
    ref = ReferenceGame(spec)
    state = env.initial_state(1)
    states = [state]
    for name in moves:
        action = env.game.parse_move(name)
        state = env.step(state, torch.tensor([action]), check=True)
        ref.play(action)
        assert_same(state, [ref])
        states.append(state)
    return env, states, [ref]


def reference_arrays(refs: list[ReferenceGame]) -> dict[str, np.ndarray]:
    def arr(rows):
        return np.array([[-1 if v is None else v for v in row] for row in rows], dtype=np.int64)

    return {
        "holes": arr([r.holes for r in refs]),
        "cells": arr([r.cells for r in refs]),
        "winner": np.array([-1 if r.winner is None else r.winner for r in refs]),
        "to_move": np.array([r.to_move for r in refs]),
        "ply": np.array([r.ply for r in refs]),
    }


def assert_same(state: State, refs: list[ReferenceGame], rows: list[int] | None = None) -> None:
    """The games ``rows`` of ``state`` equal the reference games (pieces, cells, winner, turn)."""
    rows = list(range(len(refs))) if rows is None else rows
    want = reference_arrays([refs[i] for i in rows])
    idx = torch.tensor(rows, dtype=torch.long)
    got = {
        "holes": state.holes[idx].long().numpy(),
        "cells": state.cells[idx].long().numpy(),
        "winner": state.winner[idx].numpy(),
        "to_move": state.to_move[idx].numpy(),
        "ply": state.ply[idx].numpy(),
    }
    running = want["winner"] < 0
    for key in ("holes", "cells", "winner", "ply"):
        bad = np.flatnonzero((got[key] != want[key]).reshape(len(rows), -1).any(1))
        assert bad.size == 0, f"{key} differs in game {rows[bad[0]]}: {got[key][bad[0]]} vs {want[key][bad[0]]}"
    bad = np.flatnonzero(running & (got["to_move"] != want["to_move"]))
    assert bad.size == 0, f"to_move differs in game {rows[bad[0]]}"


def random_actions(env: VecEnv, state: State, generator: torch.Generator, swap_prob: float = 0.5) -> torch.Tensor:
    """Uniform random legal actions, but the swap taken with ``swap_prob`` whenever it is legal."""
    legal = env.legal_mask(state)
    u = torch.rand(legal.shape, generator=generator)
    action = (u * legal).argmax(1)
    swap_ok = legal[:, env.game.swap_action]
    coin = torch.rand(action.shape, generator=generator) < swap_prob
    return torch.where(swap_ok & coin, env.game.swap_action, action)


def connects(board: BoardGraph, cells, player: int) -> bool:
    """Breadth-first search over a player's cells (independent of both engines)."""
    a, b = PLAYER_SIDES[player]
    todo = [c for c in range(board.num_cells) if cells[c] == player and a in board.cell_sides[c]]
    seen = set(todo)
    while todo:
        c = todo.pop()
        if b in board.cell_sides[c]:
            return True
        for n in board.neighbours[c]:
            if cells[n] == player and n not in seen:
                seen.add(n)
                todo.append(n)
    return False


def solve(env: VecEnv, state: State, plies: int) -> int:
    """Exact value of a single position (batch 1) for its player to move, looking ``plies`` ahead:
    +1 a forced win within that many plies, -1 a forced loss, 0 not decided within them."""
    if bool(state.done[0]):
        return 1 if int(state.winner[0]) == int(state.to_move[0]) else -1
    if plies == 0:
        return 0
    return max(move_values(env, state, plies).values())


def move_values(env: VecEnv, state: State, plies: int) -> dict[int, int]:
    """Exact value (as in ``solve``) of each legal action of a single position."""
    actions = torch.nonzero(env.legal_mask(state)[0]).flatten()
    children = env.step(state.map(lambda t: t.expand(len(actions), *t.shape[1:]).clone()), actions)
    out = {}
    for i, a in enumerate(actions.tolist()):
        child = children[i]
        if bool(child.done[0]):
            out[a] = 1 if int(child.winner[0]) == int(state.to_move[0]) else -1
            continue
        v = solve(env, child, plies - 1)
        out[a] = v if int(child.to_move[0]) == int(state.to_move[0]) else -v
    return out


needs_compiler = pytest.mark.skipif(shutil.which(os.environ.get("CXX", "g++")) is None,
                                    reason="no C++ compiler here: AOTInductor cannot build (the eager fallback is tested)")
"""Marks a test that builds a native package (``nn.native``, ``agents.leaf_step``)."""

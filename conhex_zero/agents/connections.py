"""Virtual connections at the search's nodes: H-search's exact verdicts for Hex up to 8 x 8.

A network that passes messages a few hops does not see a connection across the board; H-search
(``analysis/hexsolve.c``, the native solver's evaluation of a node, without its search) does, and
exactly. ``LeafConnections`` evaluates a batch of engine positions as the solver evaluates a node:
inferior cells filled in, then the mover's and the opponent's full and semi connections between
their sides. The search then gets, for each position,

* a verdict: +1 the player to move has a (semi) virtual connection and wins, -1 the opponent has a
  full one (or every move the mover has left loses), 0 not known: a search node with a verdict is
  proven (``Transition.proven``), its value exact, and no simulation goes below it;
* where the verdict is 0, the moves worth searching: the must-play region (the intersection of the
  carriers of the opponent's semi connections; any other move loses) less the filled-in cells and
  the vulnerable moves (whenever the mover wins, one of the others wins). Legal moves outside it
  are dropped from the node, which keeps at least one.

This is MoHex's use of virtual connections in its tree (Arneson, Hayward and Henderson, "Monte Carlo
Tree Search in Hex", 2010), with the network for what H-search does not settle. It applies to plain
Hex with alternating moves (random opening pieces allowed): not to the extra-stone or mirror
variants, whose turns and moves H-search does not model, and not at the ply where the swap may be
chosen (a node that includes the swap keeps all its moves). The evaluation runs on the CPU, in C,
one position after another: on a CUDA search it copies the leaves' stones to the host (a sync per
simulation), so it is meant for analysis, books and play on the CPU.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from conhex_zero.analysis.solver import SolverError
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv

MAX_HOLES = 64
"""The native solver's bitboards: Hex boards up to 8 x 8."""


class ConnectionsUnavailable(ValueError):
    """The game is not one H-search can judge (not Hex, too large, or a variant), or no C compiler."""


class LeafConnections:
    """H-search verdicts and must-play moves for batches of positions of one ``VecEnv``'s game."""

    def __init__(self, env: VecEnv):
        game = env.game
        if game.extra_stone or game.mirror is not None or game.forbid_depth is not None:
            raise ConnectionsUnavailable(f"{game.spec}: virtual connections judge plain Hex only "
                                         f"(no extra-stone, mirror or forbid options)")
        if game.num_holes > MAX_HOLES:
            raise ConnectionsUnavailable(f"{game.spec}: virtual connections are computed for Hex boards "
                                         f"up to 8 x 8 ({MAX_HOLES} holes); this one has {game.num_holes}")
        from conhex_zero.analysis.native_solver import NativeHexSolver  # builds the C library at first use
        try:
            self.solver = NativeHexSolver(game.board, table_bits=10)
        except SolverError as err:  # not Hex, or no C compiler (NativeSolverUnavailable)
            raise ConnectionsUnavailable(f"{game.spec}: {err}") from None
        self.env = env
        self.swap_ply = game.swap_ply
        H = game.num_holes
        self.num_holes = H
        self.bits = np.left_shift(np.uint64(1), np.arange(H, dtype=np.uint64))  # [H]

    def __call__(self, state: State) -> tuple[Tensor, Tensor]:
        """``(verdict [B] int8, moves [B, A] bool)``: each position's verdict for the player to move
        (+1 wins, -1 loses, 0 not known) and the moves worth searching (every action where the
        verdict is known or the position is not judged: finished games and the swap's ply)."""
        holes = state.holes.cpu().numpy()  # [B, H] int8
        to_move = state.to_move.cpu().numpy()  # [B]
        judged = state.winner.cpu().numpy() < 0  # [B]
        if self.swap_ply is not None:
            judged &= state.ply.cpu().numpy() != self.swap_ply
        B, A = holes.shape[0], self.env.num_actions
        verdict = np.zeros(B, np.int8)
        moves = np.ones((B, A), bool)
        rows = np.flatnonzero(judged)
        if len(rows):
            sub, mover = holes[rows], to_move[rows, None]
            mine = np.where(sub == mover, self.bits, np.uint64(0)).sum(1, dtype=np.uint64)  # [R]
            theirs = np.where((sub >= 0) & (sub != mover), self.bits, np.uint64(0)).sum(1, dtype=np.uint64)
            found, live = self.solver.verdicts(mine, theirs, to_move[rows])
            verdict[rows] = found
            open_ = found == 0
            live_mask = (live[:, None] & self.bits) != 0  # [R, H]
            moves[rows[open_], : self.num_holes] = live_mask[open_]
            moves[rows[open_], self.num_holes:] = False  # no swap off its ply
        device = state.holes.device
        return torch.from_numpy(verdict).to(device), torch.from_numpy(moves).to(device)

    def apply(self, state: State, value: Tensor, legal: Tensor,
              proven: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
        """``(value [B], legal [B, A], proven [B] int8)`` with the verdicts in: a known position's
        value is exact and proven; an unknown one's legal moves are cut to the moves worth searching
        (unless that would leave none)."""
        verdict, moves = self(state)
        known = verdict != 0
        value = torch.where(known, verdict.to(value.dtype), value)
        cut = legal & moves
        legal = torch.where((known | ~cut.any(1)).unsqueeze(1), legal, cut)
        if proven is None:
            proven = verdict
        else:
            proven = torch.where(known, verdict, proven.to(torch.int8))
        return value, legal, proven

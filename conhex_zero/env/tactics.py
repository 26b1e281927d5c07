"""One-move tactics, batched: which holes win at once, which actions lose at once.

``winning_moves`` needs no trial moves. A piece at hole h conquers exactly the cells around h that
are free and one piece short of ``need`` ("ripe" cells); those cells are mutually adjacent, so the
chain they create touches every side that they, or the player's chains next to them, touch. With
each chain's side contacts cached in the state (``reach``), a hole wins when the OR of those bits
over its ripe cells is both sides: a few gathers and bit folds over [B, C, 8] and [B, H, 8].

``losing_actions`` does try moves: every action of every game is played in one batch and the
opponent's winning moves are looked up in the result (only games where the opponent threatens to win
can have losing actions).
"""

from __future__ import annotations

import torch
from torch import Tensor

from conhex_zero.env.ops import both, or_bytes
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv


def _padded(rows: tuple[tuple[int, ...], ...], width: int, device: torch.device) -> Tensor:
    """Index rows padded to ``width`` by repeating their first entry (harmless for an OR)."""
    return torch.tensor([list(r) + [r[0]] * (width - len(r)) for r in rows], dtype=torch.long, device=device)


class Tactics:
    """Tables for one ``VecEnv``; methods take batched states."""

    def __init__(self, env: VecEnv):
        self.env = env
        board = env.game.board
        dev = env.device
        C = board.num_cells
        if max(len(n) for n in board.neighbours) > 8 or max(len(c) for c in board.hole_cells) > 8:
            raise ValueError("tactics support boards with at most 8 neighbours per cell and 8 cells per hole")
        self.neighbours8 = _padded(board.neighbours, 8, dev).view(1, C * 8)  # [1, C*8]
        self.hole_cells8 = _padded(board.hole_cells, 8, dev).view(1, -1)  # [1, H*8]
        need = torch.tensor(board.cell_need, dtype=torch.int8, device=dev)
        self.need_minus_one = (need - 1)[None]  # [1, C]
        self.side_bits = env.side_bits.view(2, C)  # [2, C]
        self._zero_cells = torch.zeros((1, C), dtype=torch.int8, device=dev)

    def winning_moves(self, state: State, player: Tensor | None = None) -> Tensor:
        """``[B, H]`` bool: holes where ``player`` (default: the player to move) would win at once."""
        p = state.to_move if player is None else player.to(torch.long)  # [B]
        return self.winning_moves_for(state, p[:, None])[:, 0]

    def winning_moves_both(self, state: State) -> Tensor:
        """``[B, 2, H]`` bool: winning holes of the player to move (row 0) and of the opponent (row 1),
        in one pass."""
        p = state.to_move
        return self.winning_moves_for(state, torch.stack([p, 1 - p], 1))

    def winning_moves_for(self, state: State, players: Tensor) -> Tensor:
        """``[B, P, H]`` bool: holes where ``players[:, k]`` would win at once, for each column k."""
        env = self.env
        B, P = players.shape
        H, C = env.num_holes, env.num_cells
        R = B * P
        counts_p = state.counts.gather(1, players[:, :, None].expand(B, P, C))  # [B, P, C]
        free = (state.cells < self._zero_cells)[:, None]  # [B, 1, C]
        ripe = both(free, counts_p == self.need_minus_one[:, None])  # [B, P, C]
        own = state.cells[:, None, :] == players[:, :, None].to(torch.int8)  # [B, P, C]
        chain_reach = state.reach.gather(1, state.label.long())[:, None] * own  # [B, P, C]: sides of p's chains
        around = chain_reach.view(R, C).gather(1, self.neighbours8.expand(R, -1))  # [R, C*8]
        gain = or_bytes(around.view(R * C, 8)).view(R, C).to(torch.int8)  # sides of adjacent chains
        gain = (gain | self.side_bits.index_select(0, players.flatten())) * ripe.view(R, C)  # what conquering adds
        per_hole = gain.gather(1, self.hole_cells8.expand(R, -1))  # [R, H*8]
        hole_gain = or_bytes(per_hole.view(R * H, 8)).view(B, P, H)
        empty = (state.holes < 0)[:, None]
        live = (state.winner < 0)[:, None, None]
        wins = (hole_gain == 3) & empty & live
        if env.game.mirror is not None:  # the player to move may be barred from a mirror move
            barred = env.legal_mask(state)[:, None, :H] | (players != state.to_move[:, None])[:, :, None]
            wins = wins & barred
        return wins

    def losing_actions(self, state: State, legal: Tensor | None = None) -> Tensor:
        """``[B, A]`` bool: legal actions after which the opponent, moving next, can win at once.

        Every action of every game is tried in one batch of ``B * A`` positions (fixed shapes, no
        host synchronisation); only games where the opponent threatens to win can have any.
        """
        env = self.env
        legal = env.legal_mask(state) if legal is None else legal
        B, A = legal.shape
        threatened = self.winning_moves(state, 1 - state.to_move).any(1) & (state.winner < 0)  # [B]
        tried = state.map(lambda t: t.repeat_interleave(A, dim=0))  # [B*A] copies
        actions = torch.arange(A, device=env.device).repeat(B)  # [B*A]
        after = env.step(tried, actions)
        opponent_moves = after.to_move != tried.to_move
        loses = (self.winning_moves(after).any(1) & opponent_moves).view(B, A)
        return loses & legal & threatened[:, None]

    def focus(self, state: State, legal: Tensor | None = None, wins: Tensor | None = None) -> Tensor:
        """``[B, A]`` the legal actions worth searching: the winning moves if any; else the actions
        that do not lose at once, if any; else all legal actions (``wins``: the mover's winning
        holes ``[B, H]`` when the caller has them)."""
        env = self.env
        legal = env.legal_mask(state) if legal is None else legal
        wins = self.winning_moves(state) if wins is None else wins  # [B, H]
        can_win = wins.any(1, keepdim=True)  # [B, 1]
        safe = legal & ~self.losing_actions(state, legal)
        has_safe = safe.any(1, keepdim=True)
        wins_a = torch.cat([wins, torch.zeros_like(wins[:, :1])], dim=1)  # [B, A]
        return torch.where(can_win, wins_a, torch.where(has_safe, safe, legal))

"""Encoding of batched states as graphs for the network, from the point of view of the mover.

Nodes: the H holes, the C cells and the 4 sides (top, bottom, left, right), N = H + C + 4.
Static edges, as row-normalised matrices stacked ``[T * N, N]`` (sparse): hole-cell
incidence, cell-cell adjacency, cell-side membership. One dynamic edge type, ``contact [B, C, 4]``: a
conquered cell is linked to each side its chain touches (the engine caches this per chain).

Features say "mine" / "theirs" relative to the player to move and never name a side as first or
second, and nodes carry no identity: so every board symmetry (with colours exchanged when it
swaps the players' sides) permutes the encoding exactly, and a graph network over it is
equivariant. The same code serves ConHex and every Hex size.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from conhex_zero.env.state import State
from conhex_zero.env.tactics import Tactics
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.games.board import PLAYER_SIDES

NUM_SIDES = 4

# Feature columns.
IS_HOLE, IS_CELL, IS_SIDE = 0, 1, 2
H_EMPTY, H_MINE, H_THEIRS, H_LEGAL, H_MY_WIN, H_THEIR_WIN, H_CELLS = 3, 4, 5, 6, 7, 8, 9
(C_FREE, C_MINE, C_THEIRS, C_MY_COUNT, C_THEIR_COUNT, C_MY_RIPE, C_THEIR_RIPE, C_NEED, C_SIZE,
 C_ON_MY_SIDE, C_ON_THEIR_SIDE, C_CONTACTS) = range(10, 22)
S_MINE, S_THEIRS = 22, 23
G_SWAP, G_PROGRESS, G_AGAIN = 24, 25, 26
NUM_FEATURES = 27


@dataclass(frozen=True)
class Graph:
    """The static graph of a board, as the network consumes it."""

    adjacency: Tensor  # [T * N, N] float, sparse COO: row-normalised static edge types, stacked
    num_types: int
    num_holes: int
    num_cells: int

    @property
    def num_nodes(self) -> int:
        return self.num_holes + self.num_cells + NUM_SIDES

    def to(self, device: torch.device | str) -> "Graph":
        return Graph(self.adjacency.to(device), self.num_types, self.num_holes, self.num_cells)


@dataclass(frozen=True)
class Encoded:
    """A batch of encoded positions."""

    x: Tensor  # [B, N, F] node features
    contact: Tensor  # [B, C, 4] float: cell c's chain touches side s


def _normalised(a: Tensor) -> Tensor:
    deg = a.sum(1, keepdim=True)
    return a / deg.clamp(min=1)


class Encoder:
    """Builds the graph of a game once and encodes batches of its states."""

    def __init__(self, env: VecEnv):
        self.env = env
        self.tactics = Tactics(env)
        board = env.game.board
        H, C = board.num_holes, board.num_cells
        N = H + C + NUM_SIDES
        dev = env.device
        inc = torch.tensor(board.incidence, dtype=torch.float32)  # [C, H]
        cell_adj = torch.tensor(board.adjacency_matrix, dtype=torch.float32)  # [C, C]
        sides = torch.tensor(board.side_masks, dtype=torch.float32)  # [4, C]
        holes, cells, side_nodes = slice(0, H), slice(H, H + C), slice(H + C, N)
        a_inc, a_adj, a_side = (torch.zeros(N, N) for _ in range(3))
        a_inc[cells, holes] = inc
        a_inc[holes, cells] = inc.T
        a_adj[cells, cells] = cell_adj
        a_side[side_nodes, cells] = sides
        a_side[cells, side_nodes] = sides.T
        adjacency = torch.cat([_normalised(a) for a in (a_inc, a_adj, a_side)]).to_sparse().coalesce()
        self.graph = Graph(adjacency.to(dev), 3, H, C)
        self.hole_size = (inc.sum(0) / 3.0).to(dev)  # [H] cells per hole, scaled
        self.cell_need = torch.tensor(board.cell_need, dtype=torch.float32, device=dev)  # [C]
        self.cell_size = (inc.sum(1) / 6.0).to(dev)  # [C]
        on_side = torch.stack([sides[list(s)].amax(0) for s in PLAYER_SIDES])  # [2, C] player's sides
        self.on_side = on_side.to(dev)
        mine_side = torch.zeros(2, NUM_SIDES)
        for p, (a, b) in enumerate(PLAYER_SIDES):
            mine_side[p, [a, b]] = 1.0
        self.side_of = mine_side.to(dev)  # [2, 4]: side belongs to player p

    @property
    def num_features(self) -> int:
        return NUM_FEATURES

    def __call__(self, state: State) -> Encoded:
        env = self.env
        B, H, C = state.batch_size, env.num_holes, env.num_cells
        N = H + C + NUM_SIDES
        p = state.to_move  # [B]
        q = 1 - p
        x = torch.zeros((B, N, NUM_FEATURES), device=env.device)
        hx, cx, sx = x[:, :H], x[:, H:H + C], x[:, H + C:]
        hx[..., IS_HOLE] = 1.0
        cx[..., IS_CELL] = 1.0
        sx[..., IS_SIDE] = 1.0

        p8 = p.to(torch.int8)[:, None]
        holes, cells = state.holes, state.cells
        legal = env.legal_mask(state)  # [B, A]
        hx[..., H_EMPTY] = (holes < 0).float()
        hx[..., H_MINE] = (holes == p8).float()
        hx[..., H_THEIRS] = ((holes >= 0) & (holes != p8)).float()
        hx[..., H_LEGAL] = legal[:, :H].float()
        hx[..., H_MY_WIN] = self.tactics.winning_moves(state, p).float()
        hx[..., H_THEIR_WIN] = self.tactics.winning_moves(state, q).float()
        hx[..., H_CELLS] = self.hole_size

        counts = state.counts.float()  # [B, 2, C]
        my_count = counts.gather(1, p[:, None, None].expand(B, 1, C))[:, 0]
        their_count = counts.gather(1, q[:, None, None].expand(B, 1, C))[:, 0]
        free = cells < 0
        cx[..., C_FREE] = free.float()
        cx[..., C_MINE] = (cells == p8).float()
        cx[..., C_THEIRS] = ((cells >= 0) & (cells != p8)).float()
        cx[..., C_MY_COUNT] = my_count / self.cell_need
        cx[..., C_THEIR_COUNT] = their_count / self.cell_need
        cx[..., C_MY_RIPE] = (free & (my_count == self.cell_need - 1)).float()
        cx[..., C_THEIR_RIPE] = (free & (their_count == self.cell_need - 1)).float()
        cx[..., C_NEED] = self.cell_need / 3.0
        cx[..., C_SIZE] = self.cell_size
        cx[..., C_ON_MY_SIDE] = self.on_side[p]
        cx[..., C_ON_THEIR_SIDE] = self.on_side[q]

        # Chain contacts: the chain of each conquered cell touches its owner's first/second side.
        reach = state.reach.gather(1, state.label.long()).long()  # [B, C] bits, at every cell
        owner = cells.long()  # [B, C]
        contact = torch.zeros((B, C, NUM_SIDES), device=env.device)
        for player, (first, second) in enumerate(PLAYER_SIDES):
            owned = (owner == player).float()
            contact[..., first] = owned * (reach & 1).float()
            contact[..., second] = owned * ((reach >> 1) & 1).float()
        cx[..., C_CONTACTS] = contact.sum(-1)

        sx[..., S_MINE] = self.side_of[p]
        sx[..., S_THEIRS] = self.side_of[q]

        last = env.turn_table.shape[0] - 1
        again = env.turn_table[(state.ply + 1).clamp(max=last)] == env.turn_table[state.ply.clamp(max=last)]
        x[..., G_SWAP] = legal[:, H].float()[:, None]
        x[..., G_PROGRESS] = (state.ply.float() / H)[:, None]
        x[..., G_AGAIN] = again.float()[:, None]  # the mover also plays the next ply (extra stone)
        return Encoded(x=x, contact=contact)

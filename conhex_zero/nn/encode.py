"""Encoding of batched states as graphs for the network, from the point of view of the mover.

Nodes: the H holes, the C cells and the 4 sides (top, bottom, left, right), N = H + C + 4.
Static edges, row-normalised (a mean over neighbours), of three types: hole-cell incidence,
cell-cell adjacency, cell-side membership; kept as the dense blocks between node groups (see
``Graph``: a dense matmul runs in any dtype on any device, where sparse kernels have no bf16). One dynamic edge type, ``contact [B, C, 4]``: a
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
    """The static graph of a board, as the network consumes it: each edge type's row-normalised
    adjacency (mean over neighbours), as the dense blocks between node groups that have edges.

    Holes touch cells only (incidence), cells touch holes, cells (adjacency) and sides, sides touch
    cells. So every aggregation is a dense matmul by one of three blocks, 5 times fewer multiply-adds
    than the full ``[T*N, N]`` stack (whose other blocks are zero), in any dtype on any device.
    """

    from_cells: Tensor  # [H + C + 4, C]: holes' incidence mean, cells' adjacency mean, sides' mean
    cells_from_holes: Tensor  # [C, H]: cells' incidence mean
    cells_from_sides: Tensor  # [C, 4]: cells' side mean
    num_types: int
    num_holes: int
    num_cells: int

    @property
    def num_nodes(self) -> int:
        return self.num_holes + self.num_cells + NUM_SIDES

    def to(self, device: torch.device | str) -> "Graph":
        return Graph(self.from_cells.to(device), self.cells_from_holes.to(device), self.cells_from_sides.to(device),
                     self.num_types, self.num_holes, self.num_cells)

    def dense_stack(self) -> Tensor:
        """``[T * N, N]`` the three edge types' full adjacency matrices, stacked (for tests)."""
        H, C = self.num_holes, self.num_cells
        N = self.num_nodes
        holes, cells, sides = slice(0, H), slice(H, H + C), slice(H + C, N)
        inc, adj, side = (torch.zeros(N, N, device=self.from_cells.device) for _ in range(3))
        inc[holes, cells] = self.from_cells[:H]
        inc[cells, holes] = self.cells_from_holes
        adj[cells, cells] = self.from_cells[H:H + C]
        side[sides, cells] = self.from_cells[H + C:]
        side[cells, sides] = self.cells_from_sides
        return torch.cat([inc, adj, side])


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
        dev = env.device
        inc = torch.tensor(board.incidence, dtype=torch.float32)  # [C, H]
        cell_adj = torch.tensor(board.adjacency_matrix, dtype=torch.float32)  # [C, C]
        sides = torch.tensor(board.side_masks, dtype=torch.float32)  # [4, C]
        self.graph = Graph(
            from_cells=torch.cat([_normalised(inc.T), _normalised(cell_adj), _normalised(sides)]).to(dev),
            cells_from_holes=_normalised(inc).to(dev),
            cells_from_sides=_normalised(sides.T).to(dev),
            num_types=3, num_holes=H, num_cells=C)
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

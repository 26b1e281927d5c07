"""Encoding of batched states as graphs for the network, from the point of view of the mover.

Nodes: the H holes, the C cells and the 4 sides (top, bottom, left, right), N = H + C + 4.
Static edges, row-normalised (a mean over neighbours), of three types: hole-cell incidence,
cell-cell adjacency, cell-side membership; kept as the dense blocks between node groups (see
``Graph``: a dense matmul runs in any dtype on any device, where sparse kernels have no bf16). One
dynamic edge type, ``contact [B, C, 4]``: a
conquered cell is linked to each side its chain touches (the engine caches this per chain).

With ``connection=True`` (models named ``...c``) six more columns say how far each player is from
joining its sides (``env.connection``: batched shortest paths over the cells, in holes still
needed): through each hole and cell, the player's distance through it over the empty board's
(capped at 2) and ``1 / (1 + slack)``, where the slack is how much longer the best chain through it
is than the player's best chain (1 on a shortest path, 0 where none passes); and, at every node,
each player's best distance over the empty board's.

Features say "mine" / "theirs" relative to the player to move and never name a side as first or
second, and nodes carry no identity: so every board symmetry (with colours exchanged when it
swaps the players' sides) permutes the encoding exactly, and a graph network over it is
equivariant. The same code serves ConHex and every Hex size.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch
from torch import Tensor

from conhex_zero.device import host_reads
from conhex_zero.env.connection import UNREACHABLE, Connection
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
"""The columns of every model; a model with connection features (``ModelConfig.connection``) reads
``CONNECTION_FEATURES`` more after them (``num_features``)."""
# Connection columns (``env.connection``), after the others: holes and cells.
X_MY_THROUGH, X_THEIR_THROUGH, X_MY_SLACK, X_THEIR_SLACK, G_MY_BEST, G_THEIR_BEST = range(27, 33)
CONNECTION_FEATURES = 6


def num_features(connection: bool = False) -> int:
    """Input columns of a model with or without the connection features."""
    return NUM_FEATURES + (CONNECTION_FEATURES if connection else 0)


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
    sparse: tuple[Tensor, Tensor, Tensor] | None = None
    """On the CPU: the three blocks again as sparse COO float32 tensors, for the network's
    inference path (``Block.infer_``). About 9% of their entries are edges, and a sparse product
    takes a third of the dense one's time from 4 positions up (ConHex, one thread: 133 against
    410 us a block at 32 positions). None on other devices: a CUDA network keeps dense products,
    which bf16 autocast and CUDA graphs take; and none where the CPU takes every other device's path
    (``CONHEX_ZERO_HOST_READS=0``, ``host_reads.HOST_READ_DEVICES`` empty: to count what a GPU
    would run, ``benchmarks/count_ops.py``)."""
    lists: tuple[tuple[Tensor, Tensor], ...] | None = None
    """The three blocks again as neighbour lists ``(index [R, D] int64, weight [R, D])`` (``D``: the
    most neighbours of a row, 6 on ConHex; a shorter row padded with weight 0), for the native
    package's inference (``nn.native``): a gathered weighted sum there is fused into one loop and
    costs a seventh of a dense block's products (the network 1.03-1.13 times as fast). None
    elsewhere: eager PyTorch would copy every gathered row first."""

    def with_lists(self) -> "Graph":
        """This graph with its neighbour lists (``lists``)."""
        blocks = (self.from_cells, self.cells_from_holes, self.cells_from_sides)
        return replace(self, lists=tuple(neighbour_list(b) for b in blocks))

    @property
    def num_nodes(self) -> int:
        return self.num_holes + self.num_cells + NUM_SIDES

    def to(self, device: torch.device | str) -> "Graph":
        return Graph.build(self.from_cells.to(device), self.cells_from_holes.to(device),
                           self.cells_from_sides.to(device), self.num_types, self.num_holes, self.num_cells)

    @staticmethod
    def build(from_cells: Tensor, cells_from_holes: Tensor, cells_from_sides: Tensor, num_types: int,
              num_holes: int, num_cells: int) -> "Graph":
        """A graph from its dense blocks, with their sparse copies where they are on the CPU."""
        blocks = (from_cells, cells_from_holes, cells_from_sides)
        sparse = None
        if from_cells.device.type in host_reads.HOST_READ_DEVICES:  # the CPU, unless told to take the GPU's path
            sparse = tuple(_sparse_copy(b) for b in blocks)
        return Graph(*blocks, num_types, num_holes, num_cells, sparse)


def neighbour_list(block: Tensor) -> tuple[Tensor, Tensor]:
    """``block [R, K]``'s non-zero entries per row: ``(index [R, D], weight [R, D])``, ``D`` the most
    in a row, each row's columns in increasing order, padding at the end (index 0, weight 0), so
    that ``block @ v == (v[index] * weight[..., None]).sum(1)``."""
    present = block != 0
    width = max(int(present.sum(1).max()), 1)
    index = torch.argsort((~present).to(torch.int8), dim=1, stable=True)[:, :width]  # non-zero columns first
    weight = block.gather(1, index)
    return torch.where(weight != 0, index, 0), weight


def _sparse_copy(block: Tensor) -> Tensor:
    """``block`` (on the CPU) as a coalesced sparse COO float32 tensor; its non-zero entries found
    with NumPy, so that building it runs no ``aten::nonzero`` (a host read that ``count_ops`` counts)."""
    dense = block.float().numpy()
    rows, cols = np.nonzero(dense)
    index = torch.from_numpy(np.stack([rows, cols]).astype(np.int64))
    return torch.sparse_coo_tensor(index, torch.from_numpy(dense[rows, cols]), tuple(dense.shape),
                                   is_coalesced=True, check_invariants=False)  # valid by construction (tested)


@dataclass(frozen=True)
class Encoded:
    """A batch of encoded positions."""

    x: Tensor  # [B, N, F] node features
    contact: Tensor  # [B, C, 4] float: cell c's chain touches side s


def _normalised(a: Tensor) -> Tensor:
    deg = a.sum(1, keepdim=True)
    return a / deg.clamp(min=1)


class Encoder:
    """Builds the graph of a game once and encodes batches of its states (``connection``: with the
    connection columns, for models that read them)."""

    def __init__(self, env: VecEnv, connection: bool = False):
        self.env = env
        self.tactics = Tactics(env)
        self.connection = Connection(env) if connection else None
        board = env.game.board
        H, C = board.num_holes, board.num_cells
        dev = env.device
        inc = torch.tensor(board.incidence, dtype=torch.float32)  # [C, H]
        cell_adj = torch.tensor(board.adjacency_matrix, dtype=torch.float32)  # [C, C]
        sides = torch.tensor(board.side_masks, dtype=torch.float32)  # [4, C]
        self.graph = Graph.build(
            from_cells=torch.cat([_normalised(inc.T), _normalised(cell_adj), _normalised(sides)]).to(dev),
            cells_from_holes=_normalised(inc).to(dev),
            cells_from_sides=_normalised(sides.T).to(dev),
            num_types=3, num_holes=H, num_cells=C)
        # Constant columns: node kinds, cells per hole, need and size of each cell.
        N = H + C + NUM_SIDES
        template = torch.zeros(N, NUM_FEATURES)
        template[:H, IS_HOLE] = 1.0
        template[H:H + C, IS_CELL] = 1.0
        template[H + C:, IS_SIDE] = 1.0
        template[:H, H_CELLS] = inc.sum(0) / 3.0
        template[H:H + C, C_NEED] = torch.tensor(board.cell_need, dtype=torch.float32) / 3.0
        template[H:H + C, C_SIZE] = inc.sum(1) / 6.0
        self.template = template.to(dev)  # [N, F]
        self.cell_need = torch.tensor(board.cell_need, dtype=torch.float32, device=dev)  # [C]
        self.on_side = torch.stack([sides[list(s)].amax(0) for s in PLAYER_SIDES]).to(dev)  # [2, C] player's sides
        side_owner = torch.zeros(NUM_SIDES, dtype=torch.long)
        side_bit = torch.zeros(NUM_SIDES, dtype=torch.long)
        for p, (a, b) in enumerate(PLAYER_SIDES):
            side_owner[[a, b]] = p
            side_bit[b] = 1
        self.side_owner, self.side_bit = side_owner.to(dev), side_bit.to(dev)  # [4]: owner, reach bit
        self.side_of = (side_owner[None, :] == torch.arange(2)[:, None]).float().to(dev)  # [2, 4]

    @property
    def num_features(self) -> int:
        return num_features(self.connection is not None)

    def connection_columns(self, state: State) -> Tensor:
        """``[B, N, CONNECTION_FEATURES]``: the connection columns of every node (sides: only the
        players' best distances)."""
        connection = self.connection
        B = state.batch_size
        through, best = connection.distances(state)  # [B, 2, C], [B, 2]
        holes = through[:, :, self.env.hole_cells].amin(-1)  # [B, 2, H]: the best cell around each hole
        nodes = torch.cat([holes, through], 2)  # [B, 2, H + C]
        reachable = nodes < UNREACHABLE
        scale = connection.scale
        distance = nodes.clamp(max=2 * scale) / scale  # [B, 2, H + C]
        slack = torch.where(reachable, 1.0 / (1.0 + (nodes - best[:, :, None])), 0.0)  # [B, 2, H + C]
        per_node = torch.cat([distance, slack], 1).transpose(1, 2)  # [B, H + C, 4]
        per_node = torch.nn.functional.pad(per_node, (0, 0, 0, NUM_SIDES))  # [B, N, 4]: sides 0
        overall = (best.clamp(max=2 * scale) / scale)[:, None, :].expand(B, per_node.shape[1], 2)  # [B, N, 2]
        return torch.cat([per_node, overall], 2)

    def _assemble(self, B: int, hole_columns: Tensor, cell_columns: Tensor, side_columns: Tensor, sides: Tensor,
                  game: Tensor) -> Tensor:
        """``x [B, N, F]``: the template with the feature columns written in. Eager: written into a
        copy of the template. Under a compiler (the native leaf package, ``agents.leaf_step``):
        as padded blocks added to the template (every written entry is 0 in the template and in the
        other blocks, so the sums are the same numbers), which the compiler makes into one loop,
        where slice writes become a chain of full copies."""
        H, C, F = self.env.num_holes, self.env.num_cells, NUM_FEATURES
        if torch.compiler.is_compiling():
            pad = torch.nn.functional.pad
            rows = torch.cat([pad(hole_columns, (H_EMPTY, F - H_CELLS)),
                              pad(cell_columns, (C_FREE, F - C_NEED)) + pad(side_columns, (C_ON_MY_SIDE, F - S_MINE)),
                              pad(sides, (S_MINE, F - G_SWAP))], 1)  # [B, N, F]
            return self.template + rows + pad(game, (G_SWAP, 0))[:, None]
        x = self.template.expand(B, -1, -1).clone()  # [B, N, F]
        x[:, :H, H_EMPTY:H_CELLS] = hole_columns
        x[:, H:H + C, C_FREE:C_NEED] = cell_columns
        x[:, H:H + C, C_ON_MY_SIDE:S_MINE] = side_columns
        x[:, H + C:, S_MINE:G_SWAP] = sides
        x[:, :, G_SWAP:] = game[:, None]
        return x

    def __call__(self, state: State, legal: Tensor | None = None, wins: Tensor | None = None) -> Encoded:
        """``legal`` (``env.legal_mask``) and ``wins`` (``Tactics.winning_moves_both``) when the caller
        has them already (the search does), else computed here."""
        env = self.env
        B, H, C = state.batch_size, env.num_holes, env.num_cells
        p = state.to_move  # [B]
        players = torch.stack([p, 1 - p], 1)  # [B, 2]: me, them
        p8 = p.to(torch.int8)[:, None]  # [B, 1]

        holes, cells = state.holes, state.cells
        legal = env.legal_mask(state) if legal is None else legal  # [B, A]
        h_empty, h_mine = holes < 0, holes == p8
        wins = self.tactics.winning_moves_both(state) if wins is None else wins  # [B, 2, H]
        hole_columns = torch.stack(  # [B, H, 6]: H_EMPTY..H_CELLS
            [h_empty, h_mine, ~(h_empty | h_mine), legal[:, :H], wins[:, 0], wins[:, 1]], -1).float()

        counts = state.counts.gather(1, players[:, :, None].expand(B, 2, C)).float()  # [B, 2, C]: mine, theirs
        c_free, c_mine = cells < 0, cells == p8
        ripe = c_free[:, None] & (counts == self.cell_need - 1)  # [B, 2, C]
        cell_columns = torch.cat([  # [B, C, 7]: C_FREE..C_NEED
            torch.stack([c_free, c_mine, ~(c_free | c_mine)], -1).float(),
            (counts / self.cell_need).transpose(1, 2), ripe.transpose(1, 2).float()], -1)

        # Chain contacts: the chain of each conquered cell touches its owner's first/second side.
        reach = state.reach.gather(1, state.label.long()).long()  # [B, C] bits, at every cell
        owned = cells.long()[:, :, None] == self.side_owner  # [B, C, 4]: the side's player owns c
        contact = (owned & (((reach[:, :, None] >> self.side_bit) & 1) == 1)).float()  # [B, C, 4]
        side_columns = torch.cat(  # [B, C, 3]: C_ON_MY_SIDE..S_MINE
            [self.on_side[players].transpose(1, 2), contact.sum(-1, keepdim=True)], -1)
        sides = self.side_of[players].transpose(1, 2)  # [B, 4, 2]: S_MINE..G_SWAP

        last = env.turn_table.shape[0] - 1
        again = env.turn_table[(state.ply + 1).clamp(max=last)] == env.turn_table[state.ply.clamp(max=last)]
        game = torch.stack([legal[:, H].float(), state.ply.float() / H, again.float()], -1)  # [B, 3]: G_SWAP..
        x = self._assemble(B, hole_columns, cell_columns, side_columns, sides, game)
        if self.connection is not None:
            x = torch.cat([x, self.connection_columns(state)], 2)  # [B, N, F + CONNECTION_FEATURES]
        return Encoded(x=x, contact=contact)

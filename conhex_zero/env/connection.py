"""How far each player is from connecting its sides: batched shortest paths over the cell graph.

A connection game is a path problem across the whole board, and a message-passing network sees
only as many hops as it has rounds (four for ``l4h64``: a winning chain on Hex 7x7 spans 7-13
cells, on ConHex at least 9). This module gives the network the path problem's answer as input
features (after the connection features of Hex programs: Queenbee's distances, the shortest-path
inputs of move-prediction networks), computed by the batched engine for every position:

* ``cost[p, c]``: the holes player ``p`` still needs to conquer cell ``c``: 0 where ``p`` owns it,
  ``need - p's pieces around it`` where it is free, unreachable where the opponent owns it (a free
  cell can always still be conquered by either player: ``need`` is at least half its holes);
* ``dist[p, s, c]``: the least total cost of a chain of cells from ``p``'s side ``s`` to ``c``
  (``c``'s own cost included), by Bellman-Ford relaxation over the cell adjacency, with every chain
  of conquered cells collapsed to its minimum at each round (moving inside one's own chain is
  free), so a chain costs one round however long it is;
* ``through[p, c] = dist[p, 0, c] + dist[p, 1, c] - cost[p, c]``: the holes ``p`` needs to join its
  two sides through ``c``; its minimum over the cells, ``best[p]``, is ``p``'s distance to winning
  (0 once it has won). On Hex it is the classic shortest-path distance (stones cost 0, empty cells
  1); on ConHex holes shared by two cells are counted twice, so it is an upper bound of the pieces
  needed, not an exact count.

The relaxation runs a fixed number of rounds per board (``rounds``: the cells of the longest
shortest path it resolves; ``default_rounds``), so there is no data-dependent loop and no host
synchronisation (a GPU runs it as a fixed sequence of kernels, the native CPU package as fused
loops). A path that needs more rounds than that is found as long as it is found within the rounds
(an upper bound); ``tests/test_connection.py`` checks the values against Dijkstra in plain Python.

Everything is relative to a player, never to a colour, and a board symmetry permutes cells and
sides (exchanging players where it exchanges their sides): so the features are equivariant, as the
encoder needs.
"""

from __future__ import annotations

import heapq

import torch
from torch import Tensor

from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.games.board import PLAYER_SIDES, BoardGraph

UNREACHABLE = 1000.0
"""The distance of a cell no chain of the player can reach (an opponent's cell, or past the rounds)."""


def empty_board_distance(board: BoardGraph) -> int:
    """``best`` of the first player on the empty board (Dijkstra in plain Python): the scale of the
    features (Hex n x n: n; ConHex: 10)."""
    return min(_through(board, [None] * board.num_cells, [[0, 0] for _ in range(board.num_cells)], 0))


def default_rounds(board: BoardGraph) -> int:
    """Rounds of relaxation for a board: every cell's distance from a side is exact on the empty
    board within ``longest`` rounds (its most cells on a shortest path from a side); twice that,
    plus two, leaves room for the detours a position forces. Hex 7x7: 16 rounds; ConHex: 16."""
    longest = 0
    for player in (0, 1):
        for side in PLAYER_SIDES[player]:
            hops = _hops_from(board, side)
            longest = max(longest, max(hops))
    return min(board.num_cells, 2 * longest + 2)


def _hops_from(board: BoardGraph, side: int) -> list[int]:
    """Cells on the way from ``side`` to each cell (1 on the side), by breadth-first search."""
    hops = [0] * board.num_cells
    frontier = [c for c in range(board.num_cells) if board.side_masks[side][c]]
    for c in frontier:
        hops[c] = 1
    while frontier:
        nxt = []
        for c in frontier:
            for n in board.neighbours[c]:
                if hops[n] == 0:
                    hops[n] = hops[c] + 1
                    nxt.append(n)
        frontier = nxt
    return hops


def reference_through(board: BoardGraph, cells: list[int | None], counts: list[list[int]], player: int) -> list[float]:
    """``through[player]`` by Dijkstra in plain Python (cells: owner or None; counts[c][p]): the
    reference the tests check the batched relaxation against (without a round limit)."""
    return _through(board, cells, counts, player)


def _through(board: BoardGraph, cells: list[int | None], counts: list[list[int]], player: int) -> list[float]:
    C = board.num_cells
    inf = float("inf")
    cost = [0.0 if cells[c] == player else inf if cells[c] is not None
            else float(board.cell_need[c] - counts[c][player]) for c in range(C)]
    dist = []
    for side in PLAYER_SIDES[player]:
        d = [inf] * C
        heap = [(cost[c], c) for c in range(C) if board.side_masks[side][c] and cost[c] < inf]
        for value, c in heap:
            d[c] = min(d[c], value)
        heapq.heapify(heap)
        while heap:
            value, c = heapq.heappop(heap)
            if value > d[c]:
                continue
            for n in board.neighbours[c]:
                if cost[n] < inf and value + cost[n] < d[n]:
                    d[n] = value + cost[n]
                    heapq.heappush(heap, (d[n], n))
        dist.append(d)
    return [dist[0][c] + dist[1][c] - cost[c] if cost[c] < inf else inf for c in range(C)]


class Connection:
    """The batched distances of a game (see the module docstring); ``rounds`` defaults to
    ``default_rounds`` of the board."""

    def __init__(self, env: VecEnv, rounds: int | None = None):
        board = env.game.board
        dev = env.device
        self.env = env
        self.rounds = default_rounds(board) if rounds is None else int(rounds)
        self.scale = float(empty_board_distance(board))
        self.need = torch.tensor(board.cell_need, dtype=torch.float32, device=dev)  # [C]
        sides = torch.tensor(board.side_masks, dtype=torch.bool)  # [4, C]
        # start[p, s, c]: cell c lies on player p's side s (p: 0 the first player, 1 the second).
        self.start = torch.stack([sides[list(PLAYER_SIDES[p])] for p in (0, 1)]).to(dev)  # [2, 2, C]
        self.neighbours = env.neighbours.reshape(-1)  # [C * D]: each cell's neighbours, padded by repeats

    def distances(self, state: State) -> tuple[Tensor, Tensor]:
        """``(through [B, 2, C], best [B, 2])`` for the player to move (index 0) and the other (1);
        ``UNREACHABLE`` where no chain of the player passes."""
        env = self.env
        B, C = state.batch_size, env.num_cells
        me = state.to_move  # [B]
        players = torch.stack([me, 1 - me], 1)  # [B, 2]
        counts = state.counts.gather(1, players[:, :, None].expand(B, 2, C)).float()  # [B, 2, C]
        owner = state.cells.long()[:, None, :]  # [B, 1, C]
        free_cost = self.need - counts  # [B, 2, C]
        mine = owner == players[:, :, None]  # [B, 2, C]
        blocked = (owner >= 0) & ~mine
        cost = torch.where(mine, 0.0, torch.where(blocked, UNREACHABLE, free_cost))  # [B, 2, C]
        # The relaxation runs cell-major, [C, M] with M = B * 4 maps (player, side): the neighbours'
        # rows are gathered as whole rows and reduced along a middle dimension (3-14 times faster on
        # a CPU than batch-major, whose minimum over 6 neighbours is a short inner loop).
        cost4 = cost.permute(2, 0, 1)[:, :, :, None].expand(C, B, 2, 2).reshape(C, B * 4)  # [C, M]
        start = self.start[players].permute(3, 0, 1, 2).reshape(C, B * 4)  # [C, M]
        dist = torch.where(start, cost4, UNREACHABLE)  # [C, M]
        label = state.label.long().T[:, :, None].expand(C, B, 4).reshape(C, B * 4)  # [C, M]
        neighbours = self.neighbours  # [C * D]
        for _ in range(self.rounds):
            dist = self._collapse(dist, label)
            nearest = dist.index_select(0, neighbours).view(C, -1, B * 4).amin(1)  # [C, D, M] -> [C, M]
            dist = torch.minimum(dist, (nearest + cost4).clamp(max=UNREACHABLE))
        dist = self._collapse(dist, label).view(C, B, 2, 2).permute(1, 2, 3, 0)  # [B, 2, 2, C]
        through = (dist[:, :, 0] + dist[:, :, 1] - cost).clamp(max=UNREACHABLE)  # [B, 2, C]
        through = torch.where(cost >= UNREACHABLE, UNREACHABLE, through)
        return through, through.amin(-1)

    @staticmethod
    def _collapse(dist: Tensor, label: Tensor) -> Tensor:
        """Every chain's cells take the chain's least distance (an unconquered cell is its own chain)."""
        least = torch.full_like(dist, UNREACHABLE).scatter_reduce(0, label, dist, reduce="amin", include_self=True)
        return least.gather(0, label)  # [C, M]

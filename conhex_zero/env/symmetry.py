"""Board symmetries applied to batched states, action vectors and per-cell values.

A symmetry permutes holes and cells. One that exchanges the players' sides also exchanges the
colours, so the image of a position is the same game seen by the other player: pieces, cells,
counts, the player to move and the winner all flip. Chain labels are renamed through the cell
permutation; the cached side bits of a chain are reordered when the image of its owner's first
side is the new owner's second side.

Used by the swap rule (the swap symmetry), by symmetry tests, and by training-data augmentation.
"""

from __future__ import annotations

import torch
from torch import Tensor

from conhex_zero.env.state import State
from conhex_zero.games.board import PLAYER_SIDES, BoardGraph


class SymmetryTables:
    """Index tables for every symmetry of a board, on one device."""

    def __init__(self, board: BoardGraph, device: torch.device):
        self.board = board
        self.names = [s.name for s in board.symmetries]
        self.exchanges = [s.exchanges_sides for s in board.symmetries]
        self.hole_src, self.cell_src, self.cell_perm, self.reach_lut = [], [], [], []
        for sym in board.symmetries:
            hole_perm = torch.tensor(sym.hole_perm, device=device)
            cell_perm = torch.tensor(sym.cell_perm, device=device)
            self.hole_src.append(torch.argsort(hole_perm))  # [H]: new[j] = old[src[j]]
            self.cell_src.append(torch.argsort(cell_perm))  # [C]
            self.cell_perm.append(cell_perm.to(torch.int16))  # [C]: new name of chain label c
            lut = []
            for owner in (0, 1):  # reach bits of a chain owned by `owner`, after the symmetry
                image_owner = 1 - owner if sym.exchanges_sides else owner
                keeps = sym.side_perm[PLAYER_SIDES[owner][0]] == PLAYER_SIDES[image_owner][0]
                lut.extend([0, 1, 2, 3] if keeps else [0, 2, 1, 3])
            self.reach_lut.append(torch.tensor(lut, dtype=torch.int8, device=device))  # [2 * 4]
        # Hole images, and how a symmetry g renames the others (s -> g s g^-1) for mirror streaks.
        perms = [tuple(sym.hole_perm) for sym in board.symmetries]
        self.hole_image = [torch.tensor(p, device=device) for p in perms]  # [H] image of each hole
        self.conjugate = []
        for g in perms:
            inverse = [0] * len(g)
            for h, image in enumerate(g):
                inverse[image] = h
            row = [perms.index(tuple(g[s[inverse[h]]] for h in range(len(g)))) - 1 for s in perms[1:]]
            self.conjugate.append(torch.tensor(row, dtype=torch.long, device=device))  # [S]

    def __len__(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        return self.names.index(name)

    def apply(self, state: State, k: int) -> State:
        """The image of every game under symmetry ``k`` (colours exchanged if it swaps sides)."""
        flip = self.exchanges[k]

        def colours(t: Tensor) -> Tensor:  # owners -1/0/1
            return torch.where(t >= 0, 1 - t, t) if flip else t

        src = self.cell_src[k]
        owner = state.cells.clamp(min=0).long()  # [B, C] (unowned cells have reach 0 anyway)
        reach = self.reach_lut[k][owner * 4 + state.reach.long()]
        return State(
            holes=colours(state.holes)[:, self.hole_src[k]],
            cells=colours(state.cells)[:, src],
            counts=(state.counts.flip(1) if flip else state.counts)[:, :, src],
            label=self.cell_perm[k][state.label.long()][:, src],
            reach=reach[:, src],
            to_move=1 - state.to_move if flip else state.to_move.clone(),
            ply=state.ply.clone(),
            winner=colours(state.winner),
            last=torch.where(state.last >= 0, self.hole_image[k][state.last.clamp(min=0)], state.last),
            streak=self._streaks(state.streak, k, flip),
        )

    def _streaks(self, streak: Tensor, k: int, flip: bool) -> Tensor:
        """Mirror streaks ``[B, 2, S]`` of the image: symmetry s becomes g s g^-1, players swap with colours."""
        if streak.shape[2] == 0:
            return streak.clone()
        out = torch.empty_like(streak)
        out[:, :, self.conjugate[k]] = streak
        return out.flip(1) if flip else out

    def apply_actions(self, values: Tensor, k: int) -> Tensor:
        """Per-action values ``[B, H + 1]`` (holes, then swap) moved to their images."""
        holes = values[:, :-1][:, self.hole_src[k]]
        return torch.cat([holes, values[:, -1:]], dim=1)

    def apply_cells(self, values: Tensor, k: int) -> Tensor:
        """Per-cell values ``[B, C]`` moved to their images."""
        return values[:, self.cell_src[k]]

    def map_action(self, action: Tensor, k: int) -> Tensor:
        """Action ids ``[B]`` mapped to their images (swap stays swap)."""
        perm = torch.argsort(self.hole_src[k])  # image of each hole
        H = perm.shape[0]
        return torch.where(action >= H, action, perm[action.clamp(max=H - 1)])

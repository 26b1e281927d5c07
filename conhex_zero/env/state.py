"""Batched game state: a few tensors with a leading batch dimension, on any device.

The state is plain data; the rules live in ``VecEnv``. Helpers index, clone, concatenate, move and
select states field by field, so a search can store and restore them without knowing the fields.

Encoding: pieces and owners are ``-1`` (none), ``0`` (first player) or ``1`` (second player).
``label`` names the chain of each conquered cell by the id of one of its cells; an unconquered cell
is labelled with its own id (which is never the label of a chain, so labels cannot collide).
``reach`` caches, at each chain's id cell, which of its owner's two sides the chain touches (bit 0:
the first side, bit 1: the second); both bits set means the owner has won. Entries at other cells
are stale and never read.

For the mirror-move limit (``mirror=K`` games) ``last`` is the hole of the previous move (-1 after a
swap or at the start) and ``streak[b, p, s]`` counts player p's consecutive moves that mirrored the
opponent's preceding move under symmetry s (S = the board's non-identity symmetries; S = 0, empty,
in games without the option).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from typing import Callable, Sequence

import torch
from torch import Tensor

from conhex_zero.env.ops import select


@dataclass(frozen=True)
class State:
    holes: Tensor  # [B, H] int8: owner of the piece on each hole, -1 empty
    cells: Tensor  # [B, C] int8: owner of each cell, -1 unconquered
    counts: Tensor  # [B, 2, C] int8: pieces each player holds around each cell
    label: Tensor  # [B, C] int16: chain id of each conquered cell (own id when unconquered)
    reach: Tensor  # [B, C] int8: at a chain's id cell, bit 0/1 = chain touches its owner's side 1/2
    to_move: Tensor  # [B] int64: player to move
    ply: Tensor  # [B] int64: actions taken so far (pieces, random opening pieces and swap)
    winner: Tensor  # [B] int64: -1 while the game runs, else the winner
    last: Tensor  # [B] int64: hole of the previous move, -1 if none (mirror=K games only)
    streak: Tensor  # [B, 2, S] int8: consecutive mirror moves per player and symmetry (mirror=K only)

    # ------------------------------------------------------------- derived
    @property
    def done(self) -> Tensor:
        """``[B]`` bool: the game is over."""
        return self.winner >= 0

    @property
    def batch_size(self) -> int:
        return self.holes.shape[0]

    @property
    def device(self) -> torch.device:
        return self.holes.device

    # --------------------------------------------------------- field-wise ops
    def map(self, fn: Callable[[Tensor], Tensor]) -> "State":
        """Apply ``fn`` to every field."""
        return State(*(fn(getattr(self, name)) for name in FIELDS))

    def __getitem__(self, index) -> "State":
        """Select games along the batch dimension (an int keeps the dimension)."""
        if isinstance(index, int):
            index = slice(index, index + 1 if index != -1 else None)
        return self.map(lambda t: t[index])

    def clone(self) -> "State":
        return self.map(torch.clone)

    def to(self, device: torch.device | str) -> "State":
        return self.map(lambda t: t.to(device))

    def where(self, mask: Tensor, other: "State") -> "State":
        """Per game: ``other`` where ``mask`` [B] is True, else ``self``. ``other`` may have batch 1."""
        out = []
        for name in FIELDS:
            a, b = getattr(self, name), getattr(other, name)
            out.append(a if b is a else select(mask.view(-1, *([1] * (a.dim() - 1))), a, b))
        return State(*out)

    def put(self, index: Tensor, other: "State", in_place: bool = False) -> "State":
        """Games ``index`` replaced by the games of ``other``: in a copy, or (``in_place=True``)
        in this state's own tensors, which is cheaper for a loop that owns its state."""
        out = []
        for name in FIELDS:
            t = getattr(self, name) if in_place else getattr(self, name).clone()
            t[index] = getattr(other, name)
            out.append(t)
        return State(*out)

    @staticmethod
    def cat(states: Sequence["State"]) -> "State":
        """Concatenate states along the batch dimension."""
        return State(*(torch.cat([getattr(s, name) for s in states]) for name in FIELDS))

    def with_winner(self, winner: Tensor) -> "State":
        """The same positions with ``winner`` [B] replaced (resignations, forfeits)."""
        return dataclasses.replace(self, winner=winner)

    def equal(self, other: "State") -> bool:
        """Exact equality of every field."""
        return all(torch.equal(getattr(self, name), getattr(other, name)) for name in FIELDS)


FIELDS: tuple[str, ...] = tuple(f.name for f in fields(State))
"""Field names of ``State`` in order."""

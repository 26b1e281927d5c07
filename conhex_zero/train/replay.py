"""Replay buffer: a bounded ring of recorded positions as compact tensors on the training device.

A position is its engine state (int8 pieces, owners and counts, int16 chain labels), the search's
policy target (float16), the game's outcome for the player to move (int8, +1/-1) and the final owner
of every cell from that player's point of view (int8, +1/-1/0 for never conquered).

Self-play writes a position when it is searched (``reserve`` + ``write``: the policy target is known
then) and the game's outcome when the game ends (``set_targets``), so nothing waits in host memory
and every write has a fixed shape: no host synchronisation. A row carries the id of its game; the
outcome is written only to rows still holding that game (a row the ring has since reused is left
alone), and a row becomes ``ready`` once its targets are in. Sampling draws uniformly among stored
rows; the policy target of every row counts, the value and ownership targets only of ready rows
(``Batch.ready``: the rows of games still in progress at the end of self-play, a few percent).

Row ``capacity`` (one past the ring) is a dump row that masked writes go to.

Board symmetries add nothing for the network, which is exactly equivariant (its loss is the same on
every image of a position), so sampling applies them only on request (``symmetries``).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from conhex_zero.env.state import FIELDS, State
from conhex_zero.env.symmetry import SymmetryTables
from conhex_zero.env.vec_env import VecEnv

_STORED_DTYPES = {"holes": torch.int8, "cells": torch.int8, "counts": torch.int8, "label": torch.int16,
                  "reach": torch.int8, "to_move": torch.int8, "ply": torch.int16, "winner": torch.int8,
                  "last": torch.int16, "streak": torch.int8}
_ENGINE_DTYPES = {"label": torch.int16, "to_move": torch.long, "ply": torch.long, "winner": torch.long,
                  "last": torch.long}


@dataclass
class Batch:
    state: State  # on the training device
    policy: Tensor  # [B, A] float
    value: Tensor  # [B] float (0 where not ready)
    ownership: Tensor  # [B, C] float
    ready: Tensor  # [B] float: 1 where the value and ownership targets are known


class ReplayBuffer:
    def __init__(self, env: VecEnv, capacity: int, device: torch.device | str | None = None):
        self.capacity = capacity
        self.device = torch.device(device) if device is not None else env.device
        template = env.initial_state(1)
        rows = capacity + 1  # + the dump row
        self.store = {name: torch.zeros((rows,) + tuple(getattr(template, name).shape[1:]),
                                        dtype=_STORED_DTYPES[name], device=self.device) for name in FIELDS}
        self.policy = torch.zeros(rows, env.num_actions, dtype=torch.float16, device=self.device)
        self.value = torch.zeros(rows, dtype=torch.int8, device=self.device)
        self.ownership = torch.zeros(rows, env.num_cells, dtype=torch.int8, device=self.device)
        self.ready = torch.zeros(rows, dtype=torch.bool, device=self.device)
        self.game = torch.full((rows,), -1, dtype=torch.long, device=self.device)
        # Rows whose value target ``train.proven_targets`` has looked at (cleared when a row is rewritten).
        self.examined = torch.zeros(rows, dtype=torch.bool, device=self.device)
        self.size = 0
        self.next = 0
        self.total_added = 0

    def __len__(self) -> int:
        return self.size

    @property
    def dump_row(self) -> int:
        return self.capacity

    # ---------------------------------------------------------------- writing
    def reserve(self, n: int) -> Tensor:
        """``[n]`` ring rows for n new positions (the oldest are overwritten once full)."""
        rows = (self.next + torch.arange(n, device=self.device)) % self.capacity
        self.next = (self.next + n) % self.capacity
        self.size = min(self.capacity, self.size + n)
        self.total_added += n
        return rows

    def write(self, rows: Tensor, state: State, policy: Tensor, game: Tensor) -> None:
        """Positions and their policy targets into ``rows``; their game ids; targets pending."""
        if rows.numel() > self.capacity:  # more than the ring holds: the last ones win
            rows, state, policy, game = rows[-self.capacity:], state[-self.capacity:], policy[-self.capacity:], \
                game[-self.capacity:]
        for name in FIELDS:
            self.store[name].index_copy_(0, rows, getattr(state, name).to(self.device, self.store[name].dtype))
        self.policy.index_copy_(0, rows, policy.to(self.device, torch.float16))
        self.ready.index_fill_(0, rows, False)
        self.examined.index_fill_(0, rows, False)
        self.game.index_copy_(0, rows, game.to(self.device, torch.long))

    def set_targets(self, rows: Tensor, game: Tensor, value: Tensor, ownership: Tensor, mask: Tensor) -> None:
        """Outcome ``value`` [M] and final ownership [M, C] for ``rows`` [M] where ``mask`` [M] holds
        and the row still belongs to ``game`` [M]; other entries go to the dump row."""
        rows = rows.clamp(min=0)
        keep = mask & (self.game.index_select(0, rows) == game)
        rows = torch.where(keep, rows, self.dump_row)
        self.value.index_copy_(0, rows, value.to(torch.int8))
        self.ownership.index_copy_(0, rows, ownership.to(torch.int8))
        self.ready.index_copy_(0, rows, keep)

    def add(self, state: State, policy: Tensor, value: Tensor, ownership: Tensor) -> None:
        """Append n finished positions with all their targets (any device)."""
        n = state.batch_size
        if n == 0:
            return
        rows = self.reserve(n)
        game = torch.full((n,), -2, dtype=torch.long, device=self.device)  # complete rows: no game pending
        if n > self.capacity:
            state, policy, value, ownership = (state[-self.capacity:], policy[-self.capacity:],
                                               value[-self.capacity:], ownership[-self.capacity:])
            rows, game = rows[-self.capacity:], game[-self.capacity:]
        self.write(rows, state, policy, game)
        self.set_targets(rows, game, value.to(self.device), ownership.to(self.device),
                         torch.ones_like(game, dtype=torch.bool))

    # --------------------------------------------------------------- sampling
    def sample(self, n: int, generator: torch.Generator, symmetries: SymmetryTables | None = None) -> Batch:
        """``n`` rows drawn uniformly (``generator`` on the buffer's device)."""
        idx = torch.randint(self.size, (n,), generator=generator, device=self.device)
        state = State(**{name: self.store[name].index_select(0, idx).to(_ENGINE_DTYPES.get(name, torch.int8))
                         for name in FIELDS})
        policy = self.policy.index_select(0, idx).float()
        policy = policy / policy.sum(1, keepdim=True).clamp(min=1e-6)
        value = self.value.index_select(0, idx).float()
        ownership = self.ownership.index_select(0, idx).float()
        ready = self.ready.index_select(0, idx).float()
        if symmetries is not None and len(symmetries) > 1:
            which = torch.randint(len(symmetries), (n,), generator=generator, device=self.device)
            for k in range(1, len(symmetries)):
                pick = which == k
                state = state.where(pick, symmetries.apply(state, k))
                policy = torch.where(pick[:, None], symmetries.apply_actions(policy, k), policy)
                ownership = torch.where(pick[:, None], symmetries.apply_cells(ownership, k), ownership)
        return Batch(state, policy, value, ownership, ready)

    # ----------------------------------------------------------- checkpoints
    def state_dict(self) -> dict:
        """The stored rows (on the CPU), in ring order as stored, and the pointers."""
        n = self.size

        def cpu(t: Tensor) -> Tensor:
            return t[:n].to("cpu", copy=True)

        return {"store": {k: cpu(v) for k, v in self.store.items()}, "policy": cpu(self.policy),
                "value": cpu(self.value), "ownership": cpu(self.ownership), "ready": cpu(self.ready),
                "examined": cpu(self.examined), "game": cpu(self.game), "size": n, "next": self.next, "total_added": self.total_added,
                "capacity": self.capacity}

    def load_state_dict(self, data: dict) -> Tensor:
        """Restore a saved buffer; returns ``[saved capacity]`` long: the new row of each saved row
        (-1 for rows dropped), so that references to rows (games in progress) can follow.

        With another capacity the rows are laid out oldest first; a smaller ring keeps the newest."""
        n, old_capacity, old_next = int(data["size"]), int(data["capacity"]), int(data["next"])
        order = torch.arange(n)
        if n == old_capacity:  # a full ring: the oldest row is at `next`
            order = (order + old_next) % old_capacity
        if old_capacity == self.capacity:
            order, keep_from = torch.arange(n), 0  # same layout, rows stay where they are
            self.next = old_next
        else:
            keep_from = max(0, n - self.capacity)
            self.next = (n - keep_from) % self.capacity
        kept = order[keep_from:]  # saved rows, in their new order
        new_row = torch.full((old_capacity,), -1, dtype=torch.long)
        new_row[kept] = torch.arange(kept.numel())
        m = kept.numel()
        for name in FIELDS:
            self.store[name][:m] = data["store"][name][kept].to(self.device)
        for name in ("policy", "value", "ownership", "ready", "game"):
            getattr(self, name)[:m] = data[name][kept].to(self.device)
        # A state saved before the flag existed: its rows count as examined (none is solved again).
        examined = data.get("examined")
        self.examined[:m] = examined[kept].to(self.device) if examined is not None else True
        self.size, self.total_added = m, int(data["total_added"])
        return new_row

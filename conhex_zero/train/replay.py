"""Replay buffer: a bounded ring of recorded positions as compact tensors in host memory.

A position is its engine state (int8 pieces, owners and counts, int16 chain labels), the search's
policy target (float16), the game's outcome for the player to move (int8, +1/-1) and the final
owner of every cell from that player's point of view (int8, +1/-1/0 for never conquered).
Sampling draws uniformly among stored positions and, optionally, maps each one through a random
board symmetry (colours exchanged where it swaps the sides; targets move with it).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from conhex_zero.env.state import FIELDS, State
from conhex_zero.env.symmetry import SymmetryTables
from conhex_zero.env.vec_env import VecEnv

_STORED_DTYPES = {"holes": torch.int8, "cells": torch.int8, "counts": torch.int8, "label": torch.int16,
                  "reach": torch.int8, "to_move": torch.int8, "ply": torch.int16, "winner": torch.int8}


@dataclass
class Batch:
    state: State  # on the training device
    policy: Tensor  # [B, A] float
    value: Tensor  # [B] float
    ownership: Tensor  # [B, C] float


class ReplayBuffer:
    def __init__(self, env: VecEnv, capacity: int):
        self.capacity = capacity
        template = env.initial_state(1)
        self.store = {name: torch.zeros((capacity,) + tuple(getattr(template, name).shape[1:]),
                                        dtype=_STORED_DTYPES[name]) for name in FIELDS}
        self.policy = torch.zeros(capacity, env.num_actions, dtype=torch.float16)
        self.value = torch.zeros(capacity, dtype=torch.int8)
        self.ownership = torch.zeros(capacity, env.num_cells, dtype=torch.int8)
        self.size = 0
        self.next = 0
        self.total_added = 0

    def __len__(self) -> int:
        return self.size

    def add(self, state: State, policy: Tensor, value: Tensor, ownership: Tensor) -> None:
        """Append n positions (any device), overwriting the oldest when full."""
        n = state.batch_size
        if n == 0:
            return
        if n > self.capacity:  # keep the newest
            keep = torch.arange(n - self.capacity, n)
            state, policy, value, ownership = state[keep], policy[keep], value[keep], ownership[keep]
            n = self.capacity
        idx = (self.next + torch.arange(n)) % self.capacity
        for name in FIELDS:
            self.store[name][idx] = getattr(state, name).cpu().to(self.store[name].dtype)
        self.policy[idx] = policy.cpu().to(torch.float16)
        self.value[idx] = value.cpu().to(torch.int8)
        self.ownership[idx] = ownership.cpu().to(torch.int8)
        self.next = int((self.next + n) % self.capacity)
        self.size = min(self.capacity, self.size + n)
        self.total_added += n

    def sample(self, n: int, generator: torch.Generator, device: torch.device,
               symmetries: SymmetryTables | None = None) -> Batch:
        idx = torch.randint(self.size, (n,), generator=generator)
        state = State(**{name: self.store[name][idx].to(device=device, dtype=_engine_dtype(name))
                         for name in FIELDS})
        policy = self.policy[idx].to(device=device, dtype=torch.float32)
        policy = policy / policy.sum(1, keepdim=True).clamp(min=1e-6)
        value = self.value[idx].to(device=device, dtype=torch.float32)
        ownership = self.ownership[idx].to(device=device, dtype=torch.float32)
        if symmetries is not None and len(symmetries) > 1:
            which = torch.randint(len(symmetries), (n,), generator=generator).to(device)
            for k in range(1, len(symmetries)):
                rows = (which == k).nonzero().squeeze(1)
                if rows.numel() == 0:
                    continue
                state = state.put(rows, symmetries.apply(state[rows], k), in_place=True)
                policy[rows] = symmetries.apply_actions(policy[rows], k)
                ownership[rows] = symmetries.apply_cells(ownership[rows], k)
        return Batch(state, policy, value, ownership)

    def state_dict(self) -> dict:
        return {"store": {k: v[: self.size].clone() for k, v in self.store.items()},
                "policy": self.policy[: self.size].clone(), "value": self.value[: self.size].clone(),
                "ownership": self.ownership[: self.size].clone(), "size": self.size, "next": self.next,
                "total_added": self.total_added, "capacity": self.capacity}

    def load_state_dict(self, data: dict) -> None:
        n = data["size"]
        if n > self.capacity:
            raise ValueError(f"saved replay holds {n} positions; this run's capacity is {self.capacity}")
        for k in FIELDS:
            self.store[k][:n] = data["store"][k]
        self.policy[:n], self.value[:n], self.ownership[:n] = data["policy"], data["value"], data["ownership"]
        self.size, self.total_added = n, data["total_added"]
        self.next = data["next"] if data["capacity"] == self.capacity else n % self.capacity


def _engine_dtype(name: str) -> torch.dtype:
    return {"label": torch.int16, "to_move": torch.long, "ply": torch.long, "winner": torch.long}.get(name, torch.int8)

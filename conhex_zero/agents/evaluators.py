"""Position evaluators: a batch of states in, prior logits ``[B, A]`` and values ``[B]`` out.

Values are for the player to move, in [-1, 1]. Three kinds: the network; uniform prior with
random rollouts (all leaves played out together through the batched engine: the classic
reference); uniform prior with value 0.
"""

from __future__ import annotations

import contextlib
from typing import Callable, Protocol

import torch
from torch import Tensor

from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.encode import Encoder
from conhex_zero.nn.model import GraphNet
from conhex_zero.search import rng
from conhex_zero.search.tree import NEG


class Evaluator(Protocol):
    def __call__(self, state: State) -> tuple[Tensor, Tensor]: ...


def position_keys(state: State, salt: int = 0) -> Tensor:
    """``[B]`` random keys that depend only on the position (and ``salt``), not on the batch."""
    H = state.holes.shape[1]
    weights = rng.hash32(torch.arange(H, device=state.device) * 0x3C6EF372 + 17) & 0xFFFFF  # < 2**20
    code = ((state.holes.long() + 2) * weights).sum(1) + state.ply * 0x1F3D5B79 + state.to_move
    return rng.fold(rng.hash32(code), salt)


class UniformEvaluator:
    """Uniform prior over legal actions, value 0."""

    def __init__(self, env: VecEnv):
        self.env = env

    def __call__(self, state: State) -> tuple[Tensor, Tensor]:
        B = state.batch_size
        return (torch.zeros(B, self.env.num_actions, device=state.device),
                torch.zeros(B, device=state.device))


class RolloutEvaluator:
    """Uniform prior; value = mean result of ``rollouts`` uniformly random playouts.

    Playouts follow a random priority per action, drawn from the position's own key, so the same
    position gets the same playout in any batch.
    """

    def __init__(self, env: VecEnv, rollouts: int = 1, seed: int = 0):
        self.env, self.rollouts, self.seed = env, rollouts, seed

    def __call__(self, state: State) -> tuple[Tensor, Tensor]:
        env = self.env
        B, A = state.batch_size, env.num_actions
        keys = position_keys(state, self.seed)
        total = torch.zeros(B, device=state.device)
        for r in range(self.rollouts):
            priority = rng.uniform(keys, r, A)  # [B, A]
            s = state
            for ply in range(env.game.max_plies):
                if ply % 4 == 0 and bool(s.done.all()):
                    break
                s = env.step(s, env.random_actions(s, uniforms=priority))
            total += torch.where(s.winner == state.to_move, 1.0, -1.0)
        return torch.zeros(B, A, device=state.device), total / self.rollouts


class NetworkEvaluator:
    """The graph network (bf16 autocast on CUDA); illegal actions get logit ``NEG``.

    ``compile=True`` runs the model through ``torch.compile`` (the shapes are fixed by the batch).
    ``timer``, a context manager factory, wraps the model call alone (benchmarks time the network
    apart from the encoding)."""

    def __init__(self, model: GraphNet, env: VecEnv, autocast: bool = True, compile: bool = False,
                 timer: Callable[[], contextlib.AbstractContextManager] | None = None):
        self.model = model.to(env.device).eval()
        self.env = env
        self.encoder = Encoder(env)
        self.autocast = autocast and env.device.type == "cuda"
        self.forward = torch.compile(self.model) if compile else self.model
        self.timer = timer
        self.evaluated = 0  # positions evaluated so far (benchmarks read it)

    def __call__(self, state: State, legal: Tensor | None = None, wins: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """``legal`` ``[B, A]`` and ``wins`` ``[B, 2, H]`` (``Tactics.winning_moves_both``): the
        search passes what it computed already, so the rules run once per position."""
        # No autocast cache: a cast weight cached across calls would outlive a CUDA graph's capture.
        ctx = (torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False) if self.autocast
               else contextlib.nullcontext())
        legal = self.env.legal_mask(state) if legal is None else legal
        self.evaluated += state.batch_size
        encoded = self.encoder(state, legal, wins)
        with torch.no_grad(), ctx, (self.timer() if self.timer else contextlib.nullcontext()):
            logits, value, _ = self.forward(encoded, self.encoder.graph)
        return torch.where(legal, logits.float(), NEG), value.float()

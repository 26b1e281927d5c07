"""Optimisation: losses, AdamW with warm-up and cosine decay, bf16 autocast and compile on CUDA.

Loss per position = cross-entropy(search policy, network policy over legal actions)
                  + value_weight * (z - v)^2 + ownership_weight * mean_c (o_c - own_c)^2,
all from the point of view of the player to move; the value and ownership terms average over the
positions whose game has ended (``Batch.ready``). Metrics are summed on the device and read once
at the end of a training phase, so a step never waits for the host. Under torchrun each rank samples its own
replay shard and DistributedDataParallel averages the gradients, so the ranks' steps are equal.

A mixed run (``train.mix``) registers its side boards (``add_board``): then a ``mix.share`` share of
the steps take their batch from a side board's replay (``mix.side_step``), and the ``train/...``
metrics average the main board's steps only (the side boards' are ``mix/<game>/..._loss``).
"""

from __future__ import annotations

import contextlib
import math
import time

import torch
from torch import Tensor, nn

from conhex_zero.env.symmetry import SymmetryTables
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.encode import Encoder
from conhex_zero.nn.model import GraphNet
from conhex_zero.search.tree import NEG
from conhex_zero.train.config import OptimConfig
from conhex_zero.train.distributed import Context, wrap
from conhex_zero.train.mix import side_step
from conhex_zero.train.replay import Batch, ReplayBuffer


class Learner:
    def __init__(self, model: GraphNet, env: VecEnv, config: OptimConfig, planned_steps: int, seed: int,
                 distributed: Context | None = None):
        self.model, self.env, self.cfg = model, env, config
        # Under torchrun the model trains through DistributedDataParallel (gradients averaged over
        # the ranks at every step); in one process ``net`` is the model itself.
        self.net = wrap(model, distributed) if distributed is not None else model
        self.device = env.device
        self.encoder = Encoder(env, connection=model.config.connection)
        self.symmetries: SymmetryTables = env.symmetries
        self.boards: list[tuple[VecEnv, Encoder, SymmetryTables]] = [(env, self.encoder, self.symmetries)]
        """Board 0 is the run's game; side boards follow (``add_board``)."""
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
        self.planned_steps = max(planned_steps, 1)
        self.step = 0
        self.generator = torch.Generator(device=self.device).manual_seed(seed)
        self.autocast = config.autocast and self.device.type == "cuda"
        self.forward = torch.compile(self.net) if config.compile else self.net

    def add_board(self, env: VecEnv) -> int:
        """Register a side board (another game of the family) to train on; its index."""
        self.boards.append((env, Encoder(env, connection=self.model.config.connection), env.symmetries))
        return len(self.boards) - 1

    def learning_rate(self) -> float:
        c = self.cfg
        if self.step < c.warmup_steps:
            return c.lr * (self.step + 1) / c.warmup_steps
        if c.schedule == "constant":
            return c.lr
        progress = min(1.0, (self.step - c.warmup_steps) / max(1, self.planned_steps - c.warmup_steps))
        return c.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))

    def losses(self, batch: Batch, board: int = 0) -> dict[str, Tensor]:
        env, encoder, _ = self.boards[board]
        ctx = torch.autocast("cuda", dtype=torch.bfloat16) if self.autocast else contextlib.nullcontext()
        with ctx:
            logits, value, ownership = self.forward(encoder(batch.state), encoder.graph)
        legal = env.legal_mask(batch.state)
        logp = torch.log_softmax(torch.where(legal, logits.float(), NEG), dim=1)
        policy = -(batch.policy * logp).sum(1).mean()
        ready = batch.ready  # [B]
        known = ready.sum().clamp(min=1)
        value_loss = (ready * (value.float() - batch.value).pow(2)).sum() / known
        own = (ready * (ownership.float() - batch.ownership).pow(2).mean(1)).sum() / known
        probs = logp.exp()
        entropy = -(probs * torch.where(legal, logp, 0.0)).sum(1).mean()
        total = policy + self.cfg.value_weight * value_loss + self.cfg.ownership_weight * own
        return {"total": total, "policy": policy, "value": value_loss, "ownership": own, "entropy": entropy}

    def train(self, replay: ReplayBuffer, steps: int, symmetries: bool, progress=None,
              sides: list[tuple[str, int, ReplayBuffer | None]] | None = None, share: float = 0.0) -> dict[str, float]:
        """``steps`` optimiser steps on batches from the replay buffer; mean metrics. ``sides``: the
        side boards' ``(game, board index, replay or None while it is not ready)``, which take a
        ``share`` of the steps (``mix.side_step``; a side board not ready gives its step to the main one)."""
        self.net.train()
        names = ("total", "policy", "value", "ownership", "entropy", "grad_norm")
        sums = torch.zeros(len(names), dtype=torch.float64, device=self.device)
        sides = sides or []
        side_sums = [torch.zeros(4, dtype=torch.float64, device=self.device) for _ in sides]
        side_counts = [0] * len(sides)
        main_steps = 0
        start = time.perf_counter()
        for _ in range(steps):
            k = side_step(self.step, share, len(sides))
            if k is not None and sides[k][2] is None:
                k = None  # that side board's replay is not ready yet
            if k is None:
                board, source = 0, replay
            else:
                board, source = sides[k][1], sides[k][2]
            batch = source.sample(self.cfg.batch_size, self.generator, self.boards[board][2] if symmetries else None)
            for group in self.optimizer.param_groups:
                group["lr"] = self.learning_rate()
            out = self.losses(batch, board)
            self.optimizer.zero_grad(set_to_none=True)
            out["total"].backward()
            grad_norm = nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.grad_clip)
            self.optimizer.step()
            self.step += 1
            if k is None:
                main_steps += 1
                sums += torch.stack([out[n].detach().double() for n in names[:-1]] + [grad_norm.detach().double()])
            else:
                side_counts[k] += 1
                side_sums[k] += torch.stack([out[n].detach().double() for n in names[:4]])
            if progress is not None:
                progress.update(1)
        self.net.eval()
        means = [v / max(main_steps, 1) for v in sums.tolist()]  # the phase's one host read
        seconds = time.perf_counter() - start
        metrics = {f"train/{k}_loss": v for k, v in zip(names[:4], means[:4])}
        metrics.update({"train/policy_entropy": means[4], "train/grad_norm": means[5], "train/lr": self.learning_rate(),
                        "train/steps": self.step,
                        "train/samples_per_s": steps * self.cfg.batch_size / max(seconds, 1e-9)})
        for (game, _, _), total, count in zip(sides, side_sums, side_counts):
            metrics[f"mix/{game}/steps"] = count
            if count:
                metrics.update({f"mix/{game}/{n}_loss": v / count for n, v in zip(names[:4], total.tolist())})
        return metrics

    def state_dict(self) -> dict:
        return {"optimizer": self.optimizer.state_dict(), "step": self.step,
                "planned_steps": self.planned_steps, "generator": self.generator.get_state()}

    def load_state_dict(self, d: dict) -> None:
        self.optimizer.load_state_dict(d["optimizer"])
        self.step = int(d["step"])
        self.planned_steps = int(d["planned_steps"])
        self.generator.set_state(d["generator"])

"""Distillation: a small network learns a large one's outputs, on positions the large one plays.

The GPU line's network (``l6h96``) is stronger than the CPU model at equal simulations but searches
half as many positions a second on a CPU, where people play. Distillation moves what it knows into
a network of the size the CPU wants (``conhex-zero distill``):

1. **positions**: ``games`` games at once, every move drawn from the teacher's raw policy (one
   network call a move for the whole batch) at ``temperature``, a ``random_moves`` share of moves
   uniformly random (positions a search visits after a poor move); every position is kept with the
   teacher's policy over the legal moves, its value and its cell ownership (``DistillSet``);
2. **training**: the student (new, or ``init``) minimises the learner's own loss against those soft
   targets (cross-entropy to the teacher's policy, squared error to its value and ownership) for
   ``epochs`` passes, with AdamW and a cosine schedule (``train.learner``).

A teacher output for every position costs one evaluation, where a self-play position costs a
search of tens of simulations: on a CPU distillation gathers far more positions per second than
self-play, and each carries the whole of the teacher's judgement, not one game's result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from conhex_zero.env.state import FIELDS, State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.encode import Encoder
from conhex_zero.nn.model import GraphNet
from conhex_zero.search.tree import NEG
from conhex_zero.train.replay import _ENGINE_DTYPES, _STORED_DTYPES, Batch

FORMAT = "conhex-zero distillation set"


@dataclass
class DistillSet:
    """Positions with the teacher's outputs, as compact CPU tensors: ``states`` (the engine's fields
    in the replay's dtypes), ``policy`` ``[P, A]`` float16 (a distribution over the legal actions),
    ``value`` ``[P]`` and ``ownership`` ``[P, C]`` float16, for the player to move."""
    states: dict[str, Tensor]
    policy: Tensor
    value: Tensor
    ownership: Tensor
    game: str
    teacher: str

    def __len__(self) -> int:
        return self.policy.shape[0]

    def sample(self, n: int, generator: torch.Generator, symmetries=None) -> Batch:
        """``n`` positions drawn uniformly (the ``ReplayBuffer.sample`` of ``Learner.train``)."""
        idx = torch.randint(len(self), (n,), generator=generator, device=generator.device).cpu()
        dev = generator.device  # the learner's: the rows go where it trains

        def rows(t: Tensor, dtype: torch.dtype) -> Tensor:
            return t.index_select(0, idx).to(dev, dtype)

        state = State(**{k: rows(v, _ENGINE_DTYPES.get(k, torch.int8)) for k, v in self.states.items()})
        return Batch(state, rows(self.policy, torch.float32), rows(self.value, torch.float32),
                     rows(self.ownership, torch.float32), torch.ones(n, device=dev))

    def save(self, path) -> None:
        torch.save({"format": FORMAT, "states": self.states, "policy": self.policy, "value": self.value,
                    "ownership": self.ownership, "game": self.game, "teacher": self.teacher}, path)

    @classmethod
    def load(cls, path) -> "DistillSet":
        data = torch.load(path, weights_only=True)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"{path} is not a distillation set")
        return cls(data["states"], data["policy"], data["value"], data["ownership"], data["game"], data["teacher"])


def teacher_outputs(model: GraphNet, encoder: Encoder, env: VecEnv, state: State) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The teacher's policy over the legal actions ``[B, A]``, value ``[B]``, ownership ``[B, C]``
    and the legal mask."""
    legal = env.legal_mask(state)
    with torch.no_grad():
        logits, value, ownership = model(encoder(state, legal), encoder.graph)
    policy = torch.softmax(torch.where(legal, logits.float(), NEG), dim=1)
    return policy, value.float(), ownership.float(), legal


def generate(teacher: GraphNet, env: VecEnv, positions: int, games: int = 256, temperature: float = 1.0,
             random_moves: float = 0.1, seed: int = 0, progress=None, name: str = "") -> DistillSet:
    """Play until ``positions`` positions are kept (see the module docstring)."""
    encoder = Encoder(env, connection=teacher.config.connection)
    gen = torch.Generator().manual_seed(seed)
    state = env.reset(games, gen)
    chunks: dict[str, list[Tensor]] = {k: [] for k in (*FIELDS, "policy", "value", "ownership")}
    kept = 0
    while kept < positions:
        policy, value, ownership, legal = teacher_outputs(teacher, encoder, env, state)
        take = min(games, positions - kept)
        for k in FIELDS:
            chunks[k].append(getattr(state, k)[:take].to(_STORED_DTYPES[k]))
        chunks["policy"].append(policy[:take].half())
        chunks["value"].append(value[:take].half())
        chunks["ownership"].append(ownership[:take].half())
        kept += take
        if progress is not None:
            progress.update(take)
        sharpened = policy.clamp(min=1e-12).log() / temperature if temperature > 0 else policy
        drawn = torch.multinomial(torch.softmax(torch.where(legal, sharpened, NEG), 1), 1, generator=gen)[:, 0]
        uniform = env.random_actions(state, gen)
        action = torch.where(torch.rand(games, generator=gen) < random_moves, uniform, drawn)
        state = env.reset_done(env.step(state, action), gen)
    return DistillSet({k: torch.cat(chunks[k]) for k in FIELDS}, torch.cat(chunks["policy"]),
                      torch.cat(chunks["value"]), torch.cat(chunks["ownership"]), env.game.spec, name)


def planned_steps(positions: int, epochs: float, batch_size: int) -> int:
    return max(1, math.ceil(positions * epochs / batch_size))

"""The residual graph network: policy over holes (+ swap), value, and cell ownership.

It knows nothing of games or search: it reads node features ``[B, N, F]``, the static stacked
adjacency of the board's graph and the dynamic cell-side contacts (see ``encode.py``). Every layer
is equivariant to node permutations (no node identities, shared weights, mean aggregation per
edge type, a mean-pooled global term), so one set of weights plays ConHex and Hex of any size, and
a board symmetry permutes the policy and ownership and leaves the value unchanged.

Block (pre-norm residual): y = LayerNorm(x); messages per edge type (3 static + contacts) and a
global mean are concatenated with y, then x += W2 GELU(W1 [y, A1 y, A2 y, A3 y, contact y, mean y]).
Models are named by size: ``l8h128`` = 8 blocks of width 128.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

import torch
from torch import Tensor, nn

from conhex_zero.nn.encode import Encoded, Graph


@dataclass(frozen=True)
class ModelConfig:
    """Size of the network."""

    layers: int = 8
    """Residual message-passing blocks."""
    hidden: int = 128
    """Width of every node's hidden vector."""

    @property
    def name(self) -> str:
        return f"l{self.layers}h{self.hidden}"

    @classmethod
    def from_name(cls, name: str) -> "ModelConfig":
        m = re.fullmatch(r"l(\d+)h(\d+)", name.strip().lower())
        if not m or int(m.group(1)) < 1 or int(m.group(2)) < 4:
            raise ValueError(f"model name {name!r}: expected l<layers>h<hidden>, e.g. l8h128")
        return cls(layers=int(m.group(1)), hidden=int(m.group(2)))

    def to_dict(self) -> dict:
        return asdict(self)


class Block(nn.Module):
    def __init__(self, hidden: int, num_types: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.mix = nn.Linear((num_types + 3) * hidden, hidden)
        self.out = nn.Linear(hidden, hidden)

    def forward(self, x: Tensor, graph: Graph, contact: Tensor, contact_cells: Tensor,
                contact_sides: Tensor) -> Tensor:
        B, N, h = x.shape
        H, C, T = graph.num_holes, graph.num_cells, graph.num_types
        y = self.norm(x)  # [B, N, h]
        static = torch.matmul(graph.adjacency.to(y.dtype), y)  # [B, T*N, h]
        static = static.view(B, T, N, h).permute(0, 2, 1, 3).reshape(B, N, T * h)
        cells, sides = y[:, H:H + C], y[:, H + C:]
        contact = contact.to(y.dtype)
        to_cells = torch.bmm(contact, sides) * contact_cells  # [B, C, h] mean over touched sides
        to_sides = torch.bmm(contact.transpose(1, 2), cells) * contact_sides  # [B, 4, h]
        dynamic = torch.cat([y.new_zeros(B, H, h), to_cells, to_sides], dim=1)  # [B, N, h]
        pooled = y.mean(dim=1, keepdim=True).expand(B, N, h)
        z = torch.cat([y, static, dynamic, pooled], dim=-1)  # [B, N, (T+3) h]
        return x + self.out(nn.functional.gelu(self.mix(z)))


class GraphNet(nn.Module):
    """Policy logits ``[B, H + 1]``, value ``[B]`` in [-1, 1], ownership ``[B, C]`` in [-1, 1];
    all from the mover's point of view (ownership +1: the mover will own the cell)."""

    def __init__(self, config: ModelConfig, num_features: int, num_types: int = 3):
        super().__init__()
        self.config = config
        self.num_features = num_features
        h = config.hidden
        self.embed = nn.Linear(num_features, h)
        self.blocks = nn.ModuleList(Block(h, num_types) for _ in range(config.layers))
        self.norm = nn.LayerNorm(h)
        self.policy = nn.Linear(h, 1)
        self.swap = nn.Linear(2 * h, 1)
        self.value = nn.Sequential(nn.Linear(2 * h, h), nn.GELU(), nn.Linear(h, 1))
        self.ownership = nn.Linear(h, 1)

    @property
    def name(self) -> str:
        return self.config.name

    def forward(self, enc: Encoded, graph: Graph) -> tuple[Tensor, Tensor, Tensor]:
        H, C = graph.num_holes, graph.num_cells
        contact = enc.contact  # [B, C, 4]
        contact_cells = 1.0 / contact.sum(2, keepdim=True).clamp(min=1)  # [B, C, 1]
        contact_sides = 1.0 / contact.sum(1).clamp(min=1)[:, :, None]  # [B, 4, 1]
        x = self.embed(enc.x)  # [B, N, h]
        for block in self.blocks:
            x = block(x, graph, contact, contact_cells.to(x.dtype), contact_sides.to(x.dtype))
        x = self.norm(x)
        pooled = torch.cat([x.mean(dim=1), x.amax(dim=1)], dim=-1)  # [B, 2h]
        hole_logits = self.policy(x[:, :H])[..., 0]  # [B, H]
        swap_logit = self.swap(pooled)  # [B, 1]
        logits = torch.cat([hole_logits, swap_logit], dim=1).float()  # [B, H + 1]
        value = torch.tanh(self.value(pooled)[:, 0]).float()  # [B]
        ownership = torch.tanh(self.ownership(x[:, H:H + C])[..., 0]).float()  # [B, C]
        return logits, value, ownership


def num_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


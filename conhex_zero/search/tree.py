"""The search tree of B independent searches, as preallocated tensors.

Node 0 is the root; every simulation creates at most one node per search, numbered in order of
creation; the last slot (``N - 1``) is scratch space that searches write to when they create no
node. Statistics live on edges (parent, action), from the point of view of the player to move at
the parent; node values are from the point of view of the player to move at that node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from conhex_zero.search.pytree import tree_map

NEG = -1e9  # logit of an illegal action (finite, so softmax of a row with no legal action is safe)


@dataclass
class Tree:
    logits: Tensor  # [B, N, A] prior logits (NEG where illegal)
    prior: Tensor  # [B, N, A] prior probabilities (with root noise for PUCT)
    legal: Tensor  # [B, N, A] bool
    children: Tensor  # [B, N, A] long: child node, -1 if not expanded
    edge_visits: Tensor  # [B, N, A] float
    edge_value: Tensor  # [B, N, A] float: sum of returns through the edge (parent's view)
    visits: Tensor  # [B, N] float
    value_sum: Tensor  # [B, N] float (node's view)
    raw_value: Tensor  # [B, N] float: the evaluator's value at expansion (node's view)
    reward: Tensor  # [B, N] float: reward of the edge into the node (parent's view)
    discount: Tensor  # [B, N] float: +1 same player next, -1 other player, 0 terminal
    parent: Tensor  # [B, N] long
    action: Tensor  # [B, N] long: action from the parent
    node_count: Tensor  # [B] long: nodes in use
    embeddings: Any  # the caller's node states, leaves [B * N, ...]

    @property
    def batch_size(self) -> int:
        return self.visits.shape[0]

    @property
    def num_nodes(self) -> int:
        return self.visits.shape[1]

    @property
    def num_actions(self) -> int:
        return self.logits.shape[2]

    @property
    def scratch(self) -> int:
        return self.num_nodes - 1

    def flat(self, node: Tensor) -> Tensor:
        """Row index ``b * N + node`` of each search's ``node`` ([B])."""
        return torch.arange(self.batch_size, device=node.device) * self.num_nodes + node

    def rows(self, field: Tensor, node: Tensor) -> Tensor:
        """``[B, A]`` rows of a ``[B, N, A]`` field at each search's ``node``."""
        B, N, A = field.shape
        return field.reshape(B * N, A).index_select(0, self.flat(node))

    def at(self, field: Tensor, node: Tensor) -> Tensor:
        """``[B]`` entries of a ``[B, N]`` field at each search's ``node``."""
        return field.gather(1, node[:, None])[:, 0]

    def node_value(self, node: Tensor) -> Tensor:
        return self.at(self.value_sum, node) / self.at(self.visits, node).clamp(min=1)

    def embedding(self, node: Tensor) -> Any:
        flat = self.flat(node)
        return tree_map(lambda t: t.index_select(0, flat), self.embeddings)


def new_tree(batch: int, num_nodes: int, num_actions: int, embedding: Any, device: torch.device) -> Tree:
    B, N, A = batch, num_nodes, num_actions

    def zeros(*shape: int, dtype: torch.dtype = torch.float32) -> Tensor:
        return torch.zeros(shape, dtype=dtype, device=device)

    return Tree(
        logits=torch.full((B, N, A), NEG, device=device),
        prior=zeros(B, N, A),
        legal=zeros(B, N, A, dtype=torch.bool),
        children=torch.full((B, N, A), -1, dtype=torch.long, device=device),
        edge_visits=zeros(B, N, A),
        edge_value=zeros(B, N, A),
        visits=zeros(B, N),
        value_sum=zeros(B, N),
        raw_value=zeros(B, N),
        reward=zeros(B, N),
        discount=zeros(B, N),
        parent=torch.full((B, N), -1, dtype=torch.long, device=device),
        action=torch.full((B, N), -1, dtype=torch.long, device=device),
        node_count=torch.ones(B, dtype=torch.long, device=device),
        embeddings=tree_map(lambda t: t.new_zeros((B * N,) + tuple(t.shape[1:])), embedding),
    )

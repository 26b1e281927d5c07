"""The search tree of B independent searches, as preallocated tensors.

Node 0 is the root; every simulation creates at most one node per search, numbered in order of
creation; the last slot (``N - 1``) is scratch space that searches write to when they create no
node. Statistics live on edges (parent, action), from the point of view of the player to move at
the parent; node values are from the point of view of the player to move at that node.

``children`` encodes what lies behind each edge, so that a descent needs one lookup per level:
``-1`` (``UNEXPANDED``) nothing yet; ``k >= 0`` node ``k``, to be descended into; ``-2 - k`` node
``k``, which is terminal or *proven* (a descent stops there: nothing below it can change its value).

Proofs (MCTS-solver): ``proven`` holds a node's exact result when the search has proved it, for its
player to move (+1 win, -1 loss, 0 unknown), and ``edge_proven`` the same for every edge from the
parent's point of view (+1: the move wins for the player making it). A terminal child proves its
edge; a node with a winning edge is a win, a node all of whose legal edges lose is a loss. ``next_edge`` caches, per node, the edge that the
in-tree selection rule picks next. That choice depends only on the node's own statistics, which
change only when a simulation passes through the node, so the search refreshes it for the nodes
of each simulation's path and a descent is a chain of gathers (see ``mcts.py``).

Flat indices: node ``k`` of search ``b`` is row ``b * N + k`` of the ``[B * N, ...]`` views; edge
``a`` of that node is entry ``(b * N + k) * A + a`` of the ``[B * N * A]`` views.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from conhex_zero.search.pytree import tree_map

NEG = -1e9  # logit of an illegal action (finite, so softmax of a row with no legal action is safe)
UNEXPANDED = -1


def terminal_code(node: Tensor) -> Tensor:
    """The ``children`` entry of a terminal node ``node``."""
    return -2 - node


def decode_child(code: Tensor) -> Tensor:
    """Node index behind ``children`` entries (terminal or not); -1 where unexpanded."""
    return torch.where(code <= -2, -2 - code, code)


@dataclass
class Tree:
    logits: Tensor  # [B, N, A] prior logits (NEG where illegal)
    prior: Tensor  # [B, N, A] prior probabilities (with root noise for PUCT)
    legal: Tensor  # [B, N, A] bool
    children: Tensor  # [B, N, A] long: child code (see the module docstring)
    edge_visits: Tensor  # [B, N, A] float
    edge_value: Tensor  # [B, N, A] float: sum of returns through the edge (parent's view)
    edge_proven: Tensor  # [B, N, A] int8: +1 proven win, -1 proven loss, 0 unknown (parent's view)
    next_edge: Tensor  # [B, N] long: flat edge the in-tree rule picks next at each node
    visits: Tensor  # [B, N] float
    value_sum: Tensor  # [B, N] float (node's view)
    proven: Tensor  # [B, N] int8: +1 proven win, -1 proven loss, 0 unknown (node's view)
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

    def base(self) -> Tensor:
        """``[B]`` flat row of each search's root (``b * N``)."""
        return torch.arange(self.batch_size, device=self.visits.device) * self.num_nodes

    def flat(self, node: Tensor) -> Tensor:
        """Row index ``b * N + node`` of each search's ``node`` ([B])."""
        return self.base() + node

    def rows(self, field: Tensor, node: Tensor) -> Tensor:
        """``[B, A]`` rows of a ``[B, N, A]`` field at each search's ``node``."""
        B, N, A = field.shape
        return field.reshape(B * N, A).index_select(0, self.flat(node))

    def at(self, field: Tensor, node: Tensor) -> Tensor:
        """``[B]`` entries of a ``[B, N]`` field at each search's ``node``."""
        return field.gather(1, node[:, None])[:, 0]

    def child_nodes(self) -> Tensor:
        """``[B, N, A]`` the child node behind every edge (-1 where unexpanded)."""
        return decode_child(self.children)

    def embedding(self, flat: Tensor) -> Any:
        """The stored states of flat rows ``flat``."""
        return tree_map(lambda t: t.index_select(0, flat), self.embeddings)


def new_tree(batch: int, num_nodes: int, num_actions: int, embedding: Any, device: torch.device) -> Tree:
    B, N, A = batch, num_nodes, num_actions

    def zeros(*shape: int, dtype: torch.dtype = torch.float32) -> Tensor:
        return torch.zeros(shape, dtype=dtype, device=device)

    return Tree(
        logits=torch.full((B, N, A), NEG, device=device),
        prior=zeros(B, N, A),
        legal=zeros(B, N, A, dtype=torch.bool),
        children=torch.full((B, N, A), UNEXPANDED, dtype=torch.long, device=device),
        edge_visits=zeros(B, N, A),
        edge_value=zeros(B, N, A),
        edge_proven=zeros(B, N, A, dtype=torch.int8),
        next_edge=zeros(B, N, dtype=torch.long),
        visits=zeros(B, N),
        value_sum=zeros(B, N),
        proven=zeros(B, N, dtype=torch.int8),
        raw_value=zeros(B, N),
        reward=zeros(B, N),
        discount=zeros(B, N),
        parent=torch.full((B, N), -1, dtype=torch.long, device=device),
        action=torch.full((B, N), -1, dtype=torch.long, device=device),
        node_count=torch.ones(B, dtype=torch.long, device=device),
        embeddings=tree_map(lambda t: t.new_zeros((B * N,) + tuple(t.shape[1:])), embedding),
    )

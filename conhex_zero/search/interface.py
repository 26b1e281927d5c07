"""What a search takes and gives, apart from how it searches (``mcts.py`` batched, ``lean.py`` for a
few positions): its settings (``SearchConfig``), the roots and transitions the caller supplies
(``RootInput``, ``recurrent_fn -> Transition``), and its result (``SearchOutput``, with the principal
variation read from the tree). Values are from the point of view of the player to move."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch
from torch import Tensor

from conhex_zero.search.tree import Tree


@dataclass(frozen=True)
class SearchConfig:
    """Search settings."""

    scheme: str = "gumbel"
    """'gumbel' (Gumbel MuZero, strong with few simulations) or 'puct' (AlphaZero)."""
    num_simulations: int = 64
    """Simulations per search (each adds at most one node)."""
    max_depth: int = 32
    """Most edges a simulation walks down the tree (a fixed bound keeps a simulation free of host
    synchronisation; see the module docstring)."""
    c_puct: float = 1.25
    """PUCT exploration constant."""
    fpu: float | None = None
    """PUCT value of unvisited actions: None = the node's current value; 1.0 = try every action
    once before revisiting any (UCT-like, right for uniform priors)."""
    dirichlet_alpha: float = 0.3
    """PUCT root noise concentration."""
    dirichlet_fraction: float = 0.0
    """PUCT root noise weight (0.25 for self-play; 0 to play deterministically)."""
    max_considered: int = 16
    """Gumbel: actions sampled at the root for sequential halving."""
    gumbel_scale: float = 1.0
    """Gumbel: scale of the root Gumbel noise (0: deterministic)."""
    c_visit: float = 50.0
    """Gumbel: sigma(q) = (c_visit + max N) * c_scale * q."""
    c_scale: float = 0.1
    q_range: str = "minmax"
    """Gumbel: how completed Q maps to [0, 1] before sigma: 'fixed' ([-1, 1], the values' range) or
    'minmax' (over each node's legal actions, mctx's default; see ``select.py``)."""
    q_min_spread: float = 0.0
    """Gumbel, 'minmax': the smallest spread of Q the rescaling divides by. mctx divides by the
    spread itself (0 here), so Q values within 0.001 of each other become 0 and 1 and the in-tree
    rule follows noise down one line; a floor (0.1 for play and analysis) keeps noise small."""
    prior_mix: float = 0.0
    """Weight of the uniform distribution over the legal actions mixed into the prior of every
    node below the root (0: the network's prior as it is). Below the root the in-tree rules follow
    the prior; where the network is blind to a refutation (a prior of 0.001 on the one move that
    wins) more simulations only deepen the refuted line. A floor keeps every reply within reach, so
    both sides search with comparable breadth (``benchmarks/bench_convergence.py``)."""
    visit_floor: float = 0.0
    """Gumbel, below the root: the weight of the prior in the distribution that the in-tree rule
    matches visits to, (1 - visit_floor) * pi' + visit_floor * P (0: Gumbel MuZero's rule, pi'
    alone). pi' = softmax(logits + sigma) sharpens as sigma's scale (c_visit + max N) * c_scale grows,
    so a move whose completed Q sits a little below the favourite's is never tried once a node has a
    few hundred visits, however wrong the favourite's value: the search does not converge. With a
    floor every move keeps at least about visit_floor * P(a) of its node's visits, so every move is
    searched as simulations grow (``benchmarks/bench_convergence.py``; docs/analysis.md)."""
    pv_depth: int = 8
    """Moves of principal variation reported."""
    cuda_graphs: bool = False
    """On CUDA, replay each simulation as a CUDA graph (captured after a first, eager search of the
    same batch size; see ``Searcher``). Off by default until measured on a GPU."""
    solver: bool = True
    """Proven values (MCTS-solver, see the module docstring): exact results found by the search
    are propagated and never searched again."""
    leaves_per_call: int = 64
    """The lean search of a few positions (``search.lean``, used by ``GameSearch`` up to
    ``LEAN_MAX_BATCH`` positions): at most this many leaves evaluated per network call (half the
    simulations done so far while the tree is small), spread by virtual visits (1: exactly the
    batched search's simulations, one network call each). 64 made 1.8 times the simulations/s of 16
    for ConHex at 800 simulations, with as many right Hex 5x5 values (docs/speed.md)."""

    def __post_init__(self) -> None:
        if self.scheme not in ("gumbel", "puct"):
            raise ValueError(f"search scheme {self.scheme!r}: expected 'gumbel' or 'puct'")
        if self.num_simulations < 1:
            raise ValueError("num_simulations must be at least 1")
        if self.max_depth < 1:
            raise ValueError("max_depth must be at least 1")
        if self.q_range not in ("fixed", "minmax"):
            raise ValueError(f"q_range {self.q_range!r}: expected 'fixed' or 'minmax'")
        if self.leaves_per_call < 1:
            raise ValueError("leaves_per_call must be at least 1")
        if not 0.0 <= self.prior_mix <= 1.0:
            raise ValueError(f"prior_mix {self.prior_mix}: expected a weight in [0, 1]")
        if not 0.0 <= self.visit_floor <= 1.0:
            raise ValueError(f"visit_floor {self.visit_floor}: expected a weight in [0, 1]")


@dataclass
class RootInput:
    logits: Tensor  # [B, A] prior logits
    value: Tensor  # [B] value for the player to move
    legal: Tensor  # [B, A] bool; at least one True per search
    embedding: Any  # the caller's state, leaves with leading dimension B
    proven: Tensor | None = None  # [B] +1 / -1 a result known exactly for the player to move, 0 unknown


@dataclass
class Transition:
    logits: Tensor  # [B, A] prior logits at the new node
    value: Tensor  # [B] its value for its player to move (ignored when terminal)
    legal: Tensor  # [B, A] bool
    embedding: Any
    reward: Tensor  # [B] result for the player who acted (non-zero only when terminal)
    discount: Tensor  # [B] +1 same player next, -1 other player, 0 terminal
    proven: Tensor | None = None  # [B] +1 / -1 the new node's exact result for its player to move, 0 unknown


RecurrentFn = Callable[[Any, Tensor], Transition]


@dataclass
class SearchOutput:
    action: Tensor  # [B] chosen action
    visit_counts: Tensor  # [B, A]
    visit_probs: Tensor  # [B, A]
    policy_target: Tensor  # [B, A] improved policy (Gumbel) or visit distribution (PUCT)
    root_value: Tensor  # [B] mean value of the root for the player to move
    q_values: Tensor  # [B, A] mean return of each root action (0 where unvisited; ±1 where proven)
    pv: Tensor  # [B, pv_depth] principal variation, -1 past its end
    tree: Tree
    root_proven: Tensor | None = None  # [B] int8 the root's proven result for its player to move (0 unknown)
    edge_proven: Tensor | None = None  # [B, A] int8 each root action's proven result for the mover (0 unknown)
    lean_trees: list | None = None  # the lean search's own trees (search.lean), to keep for the next move

    @property
    def action_value(self) -> Tensor:
        """``[B]`` the chosen action's Q (the root's mean value where it was not visited): the value
        of the move the search plays, which the root mean understates when the search also tried
        weak moves (as Gumbel's sequential halving does)."""
        a = self.action[:, None]
        visited = self.visit_counts.gather(1, a)[:, 0] > 0
        return torch.where(visited, self.q_values.gather(1, a)[:, 0], self.root_value)

    def line(self, first: Tensor, depth: int) -> Tensor:
        """``[B, depth]`` the most visited line starting with root action ``first`` ``[B]``."""
        return principal_variation(self.tree, first, depth)


def principal_variation(tree: Tree, first: Tensor, depth: int) -> Tensor:
    """``[B, depth]`` actions: ``first`` from the root, then the most visited action at each node
    on the way; -1 past the end of the tree."""
    B = tree.batch_size
    pv = torch.full((B, depth), -1, dtype=torch.long, device=first.device)
    node = torch.zeros(B, dtype=torch.long, device=first.device)
    act, alive = first, torch.ones(B, dtype=torch.bool, device=first.device)
    children = tree.child_nodes()
    for d in range(depth):
        pv[:, d] = torch.where(alive, act, -1)
        child = tree.rows(children, node).gather(1, act[:, None])[:, 0]
        alive = alive & (child >= 0)
        node = torch.where(alive, child, node)
        counts = tree.rows(tree.edge_visits, node)
        alive = alive & (counts.amax(1) > 0)
        act = counts.argmax(1)
    return pv

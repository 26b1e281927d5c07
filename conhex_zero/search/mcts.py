"""Batched Monte Carlo tree search, game-agnostic: B independent searches advance in lockstep.

The caller gives the root (prior logits, value, legal actions and an opaque embedding per game)
and ``recurrent_fn(embedding, action) -> Transition``; the search imports neither rules nor
network. Values are always from the point of view of the player to move; a transition's
``discount`` is +1 when the same player moves again, -1 when the other does, 0 when the game ended
(its ``reward`` is then the result for the player who acted). Terminal nodes are exact.

Two schemes (``SearchConfig.scheme``):

* ``puct``: AlphaZero. Score Q + c * P * sqrt(sum N) / (1 + N), unvisited Q = the node's value
  (or a fixed ``fpu``), Dirichlet noise on the root prior; the policy target is the visit
  distribution.
* ``gumbel``: Gumbel MuZero (Danihelka et al., 2022). At the root, Gumbel-top-k candidates and
  sequential halving on g + logits + sigma(completed Q); inside the tree, the deterministic rule
  argmax(pi' - N / (1 + sum N)) with pi' = softmax(logits + sigma(completed Q)); the policy
  target is pi' at the root.

Each simulation descends (one synchronisation per depth level to know when all searches have
stopped), expands at most one node per search, and backs the value up along the recorded path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch
from torch import Tensor

from conhex_zero.search import rng
from conhex_zero.search.halving import considered_table
from conhex_zero.search.pytree import tree_map
from conhex_zero.search.tree import NEG, Tree, new_tree

INF = float("inf")


@dataclass(frozen=True)
class SearchConfig:
    """Search settings."""

    scheme: str = "gumbel"
    """'gumbel' (Gumbel MuZero, strong with few simulations) or 'puct' (AlphaZero)."""
    num_simulations: int = 64
    """Simulations per search (each adds at most one node)."""
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
    pv_depth: int = 8
    """Moves of principal variation reported."""

    def __post_init__(self) -> None:
        if self.scheme not in ("gumbel", "puct"):
            raise ValueError(f"search scheme {self.scheme!r}: expected 'gumbel' or 'puct'")
        if self.num_simulations < 1:
            raise ValueError("num_simulations must be at least 1")


@dataclass
class RootInput:
    logits: Tensor  # [B, A] prior logits
    value: Tensor  # [B] value for the player to move
    legal: Tensor  # [B, A] bool; at least one True per search
    embedding: Any  # the caller's state, leaves with leading dimension B


@dataclass
class Transition:
    logits: Tensor  # [B, A] prior logits at the new node
    value: Tensor  # [B] its value for its player to move (ignored when terminal)
    legal: Tensor  # [B, A] bool
    embedding: Any
    reward: Tensor  # [B] result for the player who acted (non-zero only when terminal)
    discount: Tensor  # [B] +1 same player next, -1 other player, 0 terminal


RecurrentFn = Callable[[Any, Tensor], Transition]


@dataclass
class SearchOutput:
    action: Tensor  # [B] chosen action
    visit_counts: Tensor  # [B, A]
    visit_probs: Tensor  # [B, A]
    policy_target: Tensor  # [B, A] improved policy (Gumbel) or visit distribution (PUCT)
    root_value: Tensor  # [B] for the player to move at the root
    q_values: Tensor  # [B, A] mean return of each root action (0 where unvisited)
    pv: Tensor  # [B, pv_depth] principal variation, -1 past its end
    tree: Tree


def _masked_softmax(logits: Tensor, legal: Tensor) -> Tensor:
    return torch.softmax(torch.where(legal, logits, NEG), dim=-1) * legal


class _Search:
    def __init__(self, root: RootInput, recurrent_fn: RecurrentFn, config: SearchConfig, keys: Tensor):
        self.cfg = config
        self.recurrent_fn = recurrent_fn
        B, A = root.logits.shape
        self.device = root.logits.device
        self.tree = new_tree(B, config.num_simulations + 2, A, root.embedding, self.device)
        self.keys = keys.to(self.device)
        self.gumbel = torch.zeros(B, A, device=self.device)
        if config.scheme == "gumbel":
            self.gumbel = rng.gumbel(rng.fold(self.keys, 1), 0, A) * config.gumbel_scale
            self.table = considered_table(config.max_considered, config.num_simulations, self.device)
        self._init_root(root)

    # ------------------------------------------------------------------ root
    def _init_root(self, root: RootInput) -> None:
        t, cfg = self.tree, self.cfg
        legal = root.legal.bool()
        logits = torch.where(legal, root.logits.float(), NEG)
        prior = _masked_softmax(logits, legal)
        if cfg.scheme == "puct" and cfg.dirichlet_fraction > 0:
            noise = rng.dirichlet(rng.fold(self.keys, 2), 0, legal, cfg.dirichlet_alpha)
            prior = (1 - cfg.dirichlet_fraction) * prior + cfg.dirichlet_fraction * noise
        t.logits[:, 0] = logits
        t.prior[:, 0] = prior
        t.legal[:, 0] = legal
        t.raw_value[:, 0] = root.value.float()
        t.value_sum[:, 0] = root.value.float()
        t.visits[:, 0] = 1.0
        flat = t.flat(torch.zeros(t.batch_size, dtype=torch.long, device=self.device))
        tree_map(lambda store, v: store.index_copy_(0, flat, v), t.embeddings, root.embedding)

    # ------------------------------------------------------------- selection
    def _completed(self, node: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """sigma(completed Q) at ``node`` and the node's visits, logits, legal rows."""
        t, cfg = self.tree, self.cfg
        n, w = t.rows(t.edge_visits, node), t.rows(t.edge_value, node)
        logits, legal = t.rows(t.logits, node), t.rows(t.legal, node)
        prior = _masked_softmax(logits, legal)
        visited = n > 0
        q = w / n.clamp(min=1)
        total = n.sum(1)
        pi_seen = (prior * visited).sum(1)
        mean_seen = (prior * q * visited).sum(1) / pi_seen.clamp(min=1e-12)
        v_mix = (t.at(t.raw_value, node) + total * mean_seen) / (1 + total)
        completed = torch.where(visited, q, v_mix[:, None])
        lo = torch.where(legal, completed, INF).amin(1, keepdim=True)
        hi = torch.where(legal, completed, -INF).amax(1, keepdim=True)
        scaled = (completed - lo) / (hi - lo).clamp(min=1e-8)
        sigma = (cfg.c_visit + n.amax(1, keepdim=True)) * cfg.c_scale * scaled
        return sigma, n, logits, legal

    def _puct(self, node: Tensor) -> Tensor:
        t, cfg = self.tree, self.cfg
        n, w = t.rows(t.edge_visits, node), t.rows(t.edge_value, node)
        prior, legal = t.rows(t.prior, node), t.rows(t.legal, node)
        fpu = t.node_value(node)[:, None] if cfg.fpu is None else torch.full_like(n[:, :1], cfg.fpu)
        q = torch.where(n > 0, w / n.clamp(min=1), fpu)
        u = cfg.c_puct * prior * n.sum(1, keepdim=True).clamp(min=1).sqrt() / (1 + n)
        return torch.where(legal, q + u, -INF).argmax(1)

    def _gumbel_root(self, node: Tensor, sim: int) -> Tensor:
        sigma, n, logits, legal = self._completed(node)
        m = legal.sum(1).clamp(max=self.cfg.max_considered)
        target = self.table[m, sim]  # [B] visits the next candidate must have
        score = torch.where(legal, self.gumbel + logits + sigma, -INF)
        pick = torch.where(n == target[:, None], score, -INF)
        return torch.where(pick.amax(1) > -INF, pick.argmax(1), score.argmax(1))

    def _gumbel_interior(self, node: Tensor) -> Tensor:
        sigma, n, logits, legal = self._completed(node)
        improved = _masked_softmax(logits + sigma, legal)
        score = improved - n / (1 + n.sum(1, keepdim=True))
        return torch.where(legal, score, -INF).argmax(1)

    def _select(self, node: Tensor, depth: int, sim: int) -> Tensor:
        if self.cfg.scheme == "puct":
            return self._puct(node)
        return self._gumbel_root(node, sim) if depth == 0 else self._gumbel_interior(node)

    # ------------------------------------------------------------ simulation
    def simulate(self, sim: int) -> None:
        t = self.tree
        B = t.batch_size
        node = torch.zeros(B, dtype=torch.long, device=self.device)
        active = torch.ones(B, dtype=torch.bool, device=self.device)
        leaf_parent, leaf_action = node.clone(), node.clone()
        leaf_child = torch.full_like(node, -1)
        path: list[tuple[Tensor, Tensor, Tensor]] = []
        depth = 0
        while True:
            action = self._select(node, depth, sim)
            child = t.rows(t.children, node).gather(1, action[:, None])[:, 0]
            terminal = (child >= 0) & (t.at(t.discount, child.clamp(min=0)) == 0)
            stop = (child < 0) | terminal
            path.append((node, action, active))
            now = active & stop
            leaf_parent = torch.where(now, node, leaf_parent)
            leaf_action = torch.where(now, action, leaf_action)
            leaf_child = torch.where(now, child, leaf_child)
            active = active & ~stop
            if not bool(active.any()):
                break
            node = torch.where(active, child, node)
            depth += 1
        self._expand_and_backup(leaf_parent, leaf_action, leaf_child, path)

    def _expand_and_backup(self, parent: Tensor, action: Tensor, existing: Tensor,
                           path: list[tuple[Tensor, Tensor, Tensor]]) -> None:
        t = self.tree
        A = t.num_actions
        expanding = existing < 0  # [B]; otherwise the path ended on a known terminal node
        out = self.recurrent_fn(t.embedding(parent), action)
        new = torch.where(expanding, t.node_count, torch.full_like(parent, t.scratch))
        rows = t.flat(new)
        legal = out.legal.bool()
        logits = torch.where(legal, out.logits.float(), NEG)
        ended = out.discount == 0
        value = torch.where(ended, torch.zeros_like(out.value), out.value.float())
        t.logits.view(-1, A).index_copy_(0, rows, logits)
        t.prior.view(-1, A).index_copy_(0, rows, _masked_softmax(logits, legal))
        t.legal.view(-1, A).index_copy_(0, rows, legal)
        for field, v in ((t.raw_value, value), (t.reward, out.reward.float()),
                         (t.discount, out.discount.float()), (t.parent, parent), (t.action, action)):
            field.view(-1).index_copy_(0, rows, v.to(field.dtype))
        tree_map(lambda store, v: store.index_copy_(0, rows, v), t.embeddings, out.embedding)
        link_row = t.flat(torch.where(expanding, parent, torch.full_like(parent, t.scratch)))
        link = link_row * A + torch.where(expanding, action, torch.zeros_like(action))
        t.children.view(-1).index_copy_(0, link, new)
        t.node_count += expanding.long()

        leaf = torch.where(expanding, new, existing)
        g = torch.where(expanding, value, torch.zeros_like(value))  # leaf's value, its own view
        t.visits.view(-1).index_add_(0, t.flat(leaf), torch.ones_like(g))
        t.value_sum.view(-1).index_add_(0, t.flat(leaf), g)
        child = leaf
        for node, act, on_path in reversed(path):
            m = on_path.float()
            q = t.at(t.reward, child) + t.at(t.discount, child) * g  # return for the player at `node`
            g = torch.where(on_path, q, g)
            edge = t.flat(node) * A + act
            t.edge_visits.view(-1).index_add_(0, edge, m)
            t.edge_value.view(-1).index_add_(0, edge, m * q)
            t.visits.view(-1).index_add_(0, t.flat(node), m)
            t.value_sum.view(-1).index_add_(0, t.flat(node), m * q)
            child = torch.where(on_path, node, child)

    # --------------------------------------------------------------- outputs
    def outputs(self) -> SearchOutput:
        t, cfg = self.tree, self.cfg
        B = t.batch_size
        root = torch.zeros(B, dtype=torch.long, device=self.device)
        n, w = t.rows(t.edge_visits, root), t.rows(t.edge_value, root)
        legal = t.rows(t.legal, root)
        visit_probs = n / n.sum(1, keepdim=True).clamp(min=1)
        if cfg.scheme == "gumbel":
            sigma, _, logits, _ = self._completed(root)
            target = _masked_softmax(logits + sigma, legal)
            score = torch.where(legal, self.gumbel + logits + sigma, -INF)
            most = n.amax(1, keepdim=True)
            action = torch.where(n == most, score, -INF).argmax(1)
        else:
            target = visit_probs
            action = torch.where(legal, n + 1e-3 * t.rows(t.prior, root), -INF).argmax(1)
        pv = torch.full((B, cfg.pv_depth), -1, dtype=torch.long, device=self.device)
        node, act, alive = root, action, torch.ones(B, dtype=torch.bool, device=self.device)
        for d in range(cfg.pv_depth):
            pv[:, d] = torch.where(alive, act, -1)
            child = t.rows(t.children, node).gather(1, act[:, None])[:, 0]
            alive = alive & (child >= 0)
            node = torch.where(alive, child, node)
            counts = t.rows(t.edge_visits, node)
            alive = alive & (counts.amax(1) > 0)
            act = counts.argmax(1)
        return SearchOutput(
            action=action,
            visit_counts=n,
            visit_probs=visit_probs,
            policy_target=target,
            root_value=t.value_sum[:, 0] / t.visits[:, 0],
            q_values=w / n.clamp(min=1),
            pv=pv,
            tree=t,
        )


@torch.no_grad()
def search(root: RootInput, recurrent_fn: RecurrentFn, config: SearchConfig, keys: Tensor,
           on_simulation: Callable[[int], None] | None = None) -> SearchOutput:
    """Run ``config.num_simulations`` simulations for every root at once.

    ``keys`` ([B] int64, see ``rng.make_keys``) seed each search's noise independently of the batch.
    ``on_simulation(k)`` is called after the k-th simulation (progress bars).
    """
    run = _Search(root, recurrent_fn, config, keys)
    for sim in range(config.num_simulations):
        run.simulate(sim)
        if on_simulation is not None:
            on_simulation(sim + 1)
    return run.outputs()

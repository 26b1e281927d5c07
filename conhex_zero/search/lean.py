"""A lean search for one position (or a few) on the CPU: the tree in NumPy, several leaves per
network call.

The batched search (``mcts.py``) advances thousands of searches in lockstep with a fixed sequence
of about 2,900 tensor ops per simulation; one position cannot amortise them (80 simulations/s for
ConHex at batch 1). Where a person waits for one position (play, GTP, the page, a review), this
search does the same thing leanly:

* the tree is NumPy arrays in the batched tree's layout (``tree.Tree``: the same child codes,
  proofs, statistics), walked in Python one node row at a time, so a descent costs a few NumPy
  calls per level instead of hundreds of tensor ops per simulation;
* up to ``leaves_per_call`` descents (fewer while the tree is small: half the simulations done
  so far) run before one batched call of the rules and the network for all their new leaves.
  Each pending descent adds a *virtual visit* to the edges of its path (a visit at the edge's
  current mean value): the rules' visit terms send the next descents of the batch elsewhere, while
  no value is misstated (a virtual *loss* of -1 was tried and lost tactics that the batched search
  finds); the real visits replace them when the values arrive. With ``leaves_per_call = 1`` the
  search is the batched search's, simulation by simulation (tested: the same moves, visit counts
  and values); with more it gives the same results in distribution (tested against the exact
  solver on Hex 5x5: as many right, as close to the truth);
* everything else is the same ``SearchConfig``: PUCT or Gumbel (root candidates by Gumbel-top-k
  with sequential halving, counting pending visits; the deterministic in-tree rule), completed Q,
  ``prior_mix``, ``max_depth`` and proven values (MCTS-solver), with the same rules as ``select.py``
  (for one node row in NumPy: ``lean_rules.py``).

A tree can be kept: ``subtree(out, actions)`` cuts the search's tree at the node reached by
``actions`` and ``run(..., keep=subtree)`` continues the search from it (visits, values and proofs),
adding ``num_simulations`` more.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import torch
from torch import Tensor

from conhex_zero.search import rng
from conhex_zero.search.halving import considered_visits
from conhex_zero.search.lean_rules import EPS, RowRules, by_score, first_unvisited, masked_softmax
from conhex_zero.search.mcts import RecurrentFn, RootInput, SearchConfig, SearchOutput, search_outputs
from conhex_zero.search.pytree import tree_map
from conhex_zero.search.tree import NEG, UNEXPANDED, Tree

RAMP = 2
"""While the tree is small, a batch holds at most (simulations done) / RAMP leaves."""


@dataclass
class LeanTree:
    """One search's tree as NumPy arrays (node rows of A edges) and its node states."""

    children: np.ndarray  # [C, A] int64 child codes (tree.py)
    edge_visits: np.ndarray  # [C, A] float32
    edge_value: np.ndarray  # [C, A] float32 (parent's view)
    edge_proven: np.ndarray  # [C, A] int8
    logits: np.ndarray  # [C, A] float32
    prior: np.ndarray  # [C, A] float32
    legal: np.ndarray  # [C, A] bool
    visits: np.ndarray  # [C] float32
    value_sum: np.ndarray  # [C] float32
    raw_value: np.ndarray  # [C] float32
    reward: np.ndarray  # [C] float32
    discount: np.ndarray  # [C] float32
    proven: np.ndarray  # [C] int8
    proven_edges: np.ndarray  # [C] int32: how many of the node's edges are proven (0: skip the solver's rule)
    parent: np.ndarray  # [C] int64
    action: np.ndarray  # [C] int64
    count: int  # nodes in use
    embeddings: Any  # node states, leaves [C, ...] (torch)

    @property
    def capacity(self) -> int:
        return self.visits.shape[0]


def _empty(capacity: int, A: int, embedding: Any) -> LeanTree:
    f32 = np.float32
    return LeanTree(
        children=np.full((capacity, A), UNEXPANDED, dtype=np.int64),
        edge_visits=np.zeros((capacity, A), f32), edge_value=np.zeros((capacity, A), f32),
        edge_proven=np.zeros((capacity, A), np.int8), logits=np.full((capacity, A), NEG, f32),
        prior=np.zeros((capacity, A), f32), legal=np.zeros((capacity, A), bool),
        visits=np.zeros(capacity, f32), value_sum=np.zeros(capacity, f32), raw_value=np.zeros(capacity, f32),
        reward=np.zeros(capacity, f32), discount=np.zeros(capacity, f32), proven=np.zeros(capacity, np.int8),
        proven_edges=np.zeros(capacity, np.int32), parent=np.full(capacity, -1, np.int64), action=np.full(capacity, -1, np.int64), count=1,
        embeddings=tree_map(lambda t: t.new_zeros((capacity,) + tuple(t.shape[1:])), embedding))


@dataclass
class _Pending:
    """A node row's edge visits and values with the virtual visits of a batch's pending descents
    (copies of the tree's row, kept up to date as descents are added), and the count per edge."""

    visits: np.ndarray  # [A] float32
    value: np.ndarray  # [A] float32
    counts: dict[int, int]


def _add_virtual_visit(tree: LeanTree, pending: dict[int, _Pending], node: int, a: int) -> None:
    """One more pending descent through edge ``a`` of ``node``: a visit at the edge's current mean
    (a virtual visit, not a virtual loss): the rules' visit terms spread the batch's descents, while
    no edge's value is misstated while its real value is on its way. The tree's own row does not
    change until the batch's backups, so ``count`` pending visits read ``n + count`` and
    ``w + count * w / n``."""
    row = pending.get(node)
    if row is None:
        row = pending[node] = _Pending(tree.edge_visits[node].copy(), tree.edge_value[node].copy(), {})
    count = row.counts.get(a, 0) + 1
    row.counts[a] = count
    n, w = tree.edge_visits[node, a], tree.edge_value[node, a]
    q = w / n if n > 0 else 0.0
    row.visits[a] = n + count
    row.value[a] = w + count * q


class LeanSearch:
    """Searches a few positions on the CPU (see the module docstring); ``run`` as ``Searcher.run``."""

    def __init__(self, recurrent_fn: RecurrentFn, config: SearchConfig):
        self.recurrent_fn, self.config = recurrent_fn, config
        self.leaves_per_call = max(1, config.leaves_per_call)
        self.ramp = RAMP
        self.ramp_counts_carried = True  # a kept tree's carried simulations count toward the ramp (False: A/B)
        self.rules = RowRules(config)

    # ----------------------------------------------------------------- run
    def run(self, root: RootInput, keys: Tensor, on_simulation: Callable[[int], None] | None = None,
            keep: list[LeanTree | None] | None = None, deadline: float | None = None,
            stop: Callable[[], bool] | None = None) -> SearchOutput:
        """``config.num_simulations`` more simulations for every root (from ``keep``'s trees where
        given), fewer if ``deadline`` (``time.perf_counter()``) passes first or ``stop()`` says so
        (asked between batches: pondering); the output's ``lean_trees`` can be cut with ``subtree``
        for the next move."""
        cfg = self.config
        B, A = root.logits.shape
        self._device = root.logits.device  # the network's and the embeddings'; the tree is NumPy
        trees = []
        for b in range(B):
            kept = keep[b] if keep is not None and b < len(keep) else None
            trees.append(self._start(root, b, kept, keys[b:b + 1]))
        gumbel = rng.gumbel(rng.fold(keys, 1), 0, A) * cfg.gumbel_scale if cfg.scheme == "gumbel" \
            else torch.zeros(B, A, device=self._device)  # [B, A]
        gumbel = gumbel.to(self._device)  # drawn where the keys are, which may be the CPU
        self._gumbel = gumbel.float().cpu().numpy()
        # A kept root's carried visits (None for a fresh root): sequential halving schedules the new
        # simulations by the visits each candidate gets in this search, on top of what it carried.
        self._carried = [t.edge_visits[0].copy() if t.count > 1 and t.edge_visits[0].any() else None for t in trees]
        # The root's rules from its visited edges alone need every visited edge legal: a kept root
        # whose carried visits lie on moves now excluded (tactics, ``exclude``) takes the full rule.
        self._root_sparse = [c is None or not (c > 0)[~t.legal[0]].any() for c, t in zip(self._carried, trees)]
        self._orders: list[dict[int, list[int]]] = [{} for _ in trees]  # per tree: node -> legal edges by logit
        # Per root, fixed for the search: the noisy logits and sequential halving's schedule.
        self._root_base = [self._gumbel[b] + t.logits[0] for b, t in enumerate(trees)]  # [A] each
        self._root_order = []  # per root: its legal edges by g + logit, highest first (lowest index on ties)
        for base, t in zip(self._root_base, trees):
            self._root_order.append(by_score(t.legal[0], base))
        self._schedule = [considered_visits(min(int(t.legal[0].sum()), cfg.max_considered), cfg.num_simulations)
                          for t in trees]
        # Simulations the smallest tree carries from an earlier search (0 for a fresh one): a kept
        # tree has grown already, so its batches need not start small.
        carried = min(int(np.add.reduce(t.edge_visits[0])) for t in trees) if self.ramp_counts_carried else 0
        done = 0
        while done < cfg.num_simulations and (deadline is None or done < 8 or time.perf_counter() < deadline) \
                and (stop is None or done < 1 or not stop()):
            # Few leaves at a time while the tree is small (its first moves decide most), the full
            # batch once it has grown: (its simulations) // RAMP leaves, at least 1, at most
            # leaves_per_call.
            k = min(self.leaves_per_call, max(1, (carried + done) // self.ramp), cfg.num_simulations - done)
            self._batch(trees, done, k)
            if on_simulation is not None:  # after the k-th simulation, for every k of the batch
                for sim in range(done + 1, done + k + 1):
                    on_simulation(sim)
            done += k
        own = None  # a kept root chooses among the candidates with the most visits of this search
        if any(c is not None for c in self._carried):
            own = torch.from_numpy(np.stack([t.edge_visits[0] - (0 if c is None else c)
                                             for t, c in zip(trees, self._carried)])).to(self._device)  # [B, A]
        out = search_outputs(self._as_tree(trees), cfg, gumbel, own_visits=own)
        out.lean_trees = trees
        return out

    def _start(self, root: RootInput, b: int, kept: LeanTree | None, key: Tensor) -> LeanTree:
        """A tree for root ``b``: the kept subtree grown to fit, or a fresh one."""
        cfg = self.config
        A = root.logits.shape[1]
        embedding = tree_map(lambda t: t[b:b + 1], root.embedding)
        need = cfg.num_simulations + 2
        if kept is not None:
            tree = _grow(kept, kept.count + need)
        else:
            tree = _empty(need, A, embedding)
        legal = root.legal[b].bool().cpu().numpy()
        logits = np.where(legal, root.logits[b].float().cpu().numpy(), NEG).astype(np.float32)
        prior = masked_softmax(logits, legal)
        if cfg.scheme == "puct" and cfg.dirichlet_fraction > 0:
            mask = torch.from_numpy(legal)[None].to(key.device)  # the noise is drawn where the keys are
            noise = rng.dirichlet(rng.fold(key, 2), 0, mask, cfg.dirichlet_alpha)[0].cpu().numpy()
            prior = (1 - cfg.dirichlet_fraction) * prior + cfg.dirichlet_fraction * noise
        tree.logits[0], tree.prior[0], tree.legal[0] = logits, prior.astype(np.float32), legal
        value = float(root.value[b])
        tree.raw_value[0] = value
        if kept is None:
            tree.value_sum[0], tree.visits[0] = value, 1.0
        if root.proven is not None and cfg.solver:
            tree.proven[0] = int(root.proven[b])
        tree_map(lambda store, v: store.__setitem__(slice(0, 1), v), tree.embeddings, embedding)
        return tree

    # ------------------------------------------------------------- a batch
    def _batch(self, trees: list[LeanTree], done: int, k: int) -> None:
        """``k`` descents per tree with virtual visits, one call for all new leaves, then backups."""
        descents = []  # (tree index, path [(node, action)])
        pending: list[dict[int, _Pending]] = [{} for _ in trees]  # per tree: node -> its row with virtual visits
        for b, tree in enumerate(trees):
            for j in range(k):
                path = self._descend(tree, b, done + j, pending[b])
                if j + 1 < k:
                    for node, a in path:
                        _add_virtual_visit(tree, pending[b], node, a)
                descents.append((b, path))
        # New leaves: unexpanded leaf edges, each expanded once.
        expand: dict[tuple[int, int, int], int] = {}
        for b, path in descents:
            node, a = path[-1]
            if trees[b].children[node, a] == UNEXPANDED and (b, node, a) not in expand:
                expand[(b, node, a)] = len(expand)
        if expand:
            self._expand(trees, list(expand))
        for b, path in descents:
            self._backup(trees[b], path)

    def _descend(self, tree: LeanTree, b: int, sim: int, pending: dict) -> list[tuple[int, int]]:
        """Edges from the root to a leaf edge (unexpanded, terminal, proven) or ``max_depth``."""
        cfg = self.config
        path = []
        node = 0
        for depth in range(cfg.max_depth):
            a = self._root_action(tree, b, sim, pending) if depth == 0 and cfg.scheme == "gumbel" \
                else self._choose(tree, b, node, pending)
            path.append((node, a))
            code = int(tree.children[node, a])
            if code < 0:  # unexpanded, or terminal/proven: the descent stops
                break
            node = code
        return path

    def _row(self, tree: LeanTree, node: int, pending: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
        """Edge visits and values of ``node`` with the pending virtual visits, its selectable edges,
        and whether the selectable edges are all its legal ones."""
        waiting = pending.get(node)
        if waiting is None:
            n, w = tree.edge_visits[node], tree.edge_value[node]
        else:
            n, w = waiting.visits, waiting.value
        proofs = bool(tree.proven_edges[node])
        w, selectable = self.rules.proofs(n, w, tree.legal[node], tree.edge_proven[node], proofs)
        return n, w, selectable, not proofs

    def _choose(self, tree: LeanTree, b: int, node: int, pending: dict) -> int:
        n, w, selectable, all_legal = self._row(tree, node, pending)
        if all_legal and self.config.scheme == "gumbel":
            order = self._orders[b].get(node)
            if order is None:
                order = self._orders[b][node] = by_score(tree.legal[node], tree.logits[node])
            return self.rules.interior_visited(n, w, tree.prior[node], float(tree.raw_value[node]), order)
        mean = tree.value_sum[node] / max(tree.visits[node], 1.0)
        return self.rules.interior(n, w, tree.logits[node], tree.prior[node], selectable, float(tree.raw_value[node]),
                                   float(mean), all_legal)

    def _root_action(self, tree: LeanTree, b: int, sim: int, pending: dict) -> int:
        """Gumbel's root: among the candidates due for a visit (sequential halving, pending visits
        counted), the best g + logits + sigma."""
        n, w, selectable, all_legal = self._row(tree, 0, pending)
        schedule = self._schedule[b]
        target = schedule[min(sim, len(schedule) - 1)] if schedule else 0
        if all_legal and self._root_sparse[b]:
            return self._root_visited(tree, b, n, w, target)
        sigma = self.rules.sigma(n, w, tree.prior[0], selectable, float(tree.raw_value[0]))
        score = np.where(selectable, self._root_base[b] + sigma, -np.inf)
        new = n if self._carried[b] is None else n - self._carried[b]  # this search's visits
        due = np.where(new == target, score, -np.inf)
        best = int(due.argmax())
        return best if due[best] > -np.inf else int(score.argmax())

    def _root_visited(self, tree: LeanTree, b: int, n: np.ndarray, w: np.ndarray, target: float) -> int:
        """``_root_action`` where every legal edge is selectable, from the visited edges alone: an
        unvisited edge's score is g + logit + the shared sigma, so the best of them is the first
        unvisited one in the root's order by g + logit. Due: the edges with ``target`` visits in this
        search (a kept root's carried visits not counted)."""
        order, base = self._root_order[b], self._root_base[b]
        idx, nv, _, sig, sig_u, _ = self.rules.visited_sigma(n, w, tree.prior[0], float(tree.raw_value[0]), len(order))
        a_u = first_unvisited(order, idx) if len(idx) < len(order) else -1
        scores = [(float(base[a]) + s_, a) for a, s_ in zip(idx, sig)]  # visited
        carried = self._carried[b]
        new = nv if carried is None else [na - float(carried[a]) for a, na in zip(idx, nv)]  # this search's visits
        due = [(score, a) for (score, a), na in zip(scores, new) if na == target]
        if a_u >= 0:
            unvisited = (float(base[a_u]) + sig_u, a_u)
            if target == 0:
                due.append(unvisited)
            scores.append(unvisited)
        best_score, best = -math.inf, -1
        for score, a in (due or scores):  # the highest score, the lowest index on ties
            if score > best_score or (score == best_score and a < best):
                best_score, best = score, a
        return best

    def _expand(self, trees: list[LeanTree], edges: list[tuple[int, int, int]]) -> None:
        """One ``recurrent_fn`` call for the new leaves ``(tree, node, action)``; their rows written."""
        cfg = self.config
        by_tree: dict[int, list[int]] = {}
        for i, (b, _, _) in enumerate(edges):
            by_tree.setdefault(b, []).append(i)
        order = [i for b in sorted(by_tree) for i in by_tree[b]]  # the leaves grouped by tree
        edges = [edges[i] for i in order]
        device = self._device
        parts = []  # each tree's parent states
        for b in sorted(by_tree):
            index = torch.tensor([edges[i][1] for i in range(len(edges)) if edges[i][0] == b], device=device)
            parts.append(tree_map(lambda store, index=index: store.index_select(0, index), trees[b].embeddings))
        parent = parts[0] if len(parts) == 1 else tree_map(lambda *xs: torch.cat(xs), *parts)
        actions = torch.tensor([a for _, _, a in edges], dtype=torch.long, device=device)
        out = self.recurrent_fn(parent, actions)
        legal = out.legal.bool().cpu().numpy()
        logits = np.where(legal, out.logits.float().cpu().numpy(), NEG).astype(np.float32)
        value = out.value.float().cpu().numpy()
        reward = out.reward.float().cpu().numpy()
        discount = out.discount.float().cpu().numpy()
        proven = (np.zeros(len(edges), np.int8) if out.proven is None
                  else out.proven.to(torch.int8).cpu().numpy())
        # Every leaf's row at once ([k, A] and [k]), then written tree by tree (leaves are grouped).
        x = np.exp(logits - logits.max(1, keepdims=True)) * legal
        prior = x / np.maximum(x.sum(1, keepdims=True), EPS)  # [k, A]: the masked softmax
        row_logits = logits
        if cfg.prior_mix > 0:
            uniform = legal / np.maximum(legal.sum(1, keepdims=True), 1)
            prior = (1 - cfg.prior_mix) * prior + cfg.prior_mix * uniform
            row_logits = np.where(legal, np.log(np.maximum(prior, 1e-30)), NEG).astype(np.float32)
        prior = prior.astype(np.float32)
        ended = discount == 0  # [k]
        raw_value = np.where(ended, np.float32(0), value)
        stops = ended
        if cfg.solver:
            node_proof = np.where(ended, 0, proven).astype(np.int8)
            edge_proof = np.where(ended, np.sign(reward), discount * node_proof).astype(np.int8)
            stops = ended | (edge_proof != 0)
        new_rows: dict[int, np.ndarray] = {}
        first = 0
        for b in sorted(by_tree):
            tree = trees[b]
            m = len(by_tree[b])
            span = slice(first, first + m)
            if tree.count + m > tree.capacity:
                raise RuntimeError("lean search tree is full")  # capacity is simulations + 2: never
            new = np.arange(tree.count, tree.count + m)
            tree.count += m
            new_rows[b] = new
            nodes = np.array([edges[i][1] for i in range(first, first + m)])
            acts = np.array([edges[i][2] for i in range(first, first + m)])
            tree.logits[new], tree.prior[new], tree.legal[new] = row_logits[span], prior[span], legal[span]
            tree.raw_value[new], tree.reward[new], tree.discount[new] = raw_value[span], reward[span], discount[span]
            tree.parent[new], tree.action[new] = nodes, acts
            if cfg.solver:
                tree.proven[new] = node_proof[span]
                tree.edge_proven[nodes, acts] = edge_proof[span]
                np.add.at(tree.proven_edges, nodes, (edge_proof[span] != 0).astype(tree.proven_edges.dtype))
            tree.children[nodes, acts] = np.where(stops[span], -2 - new, new)
            first += m
        start = 0
        for b in sorted(new_rows):
            rows = torch.from_numpy(new_rows[b]).to(device)
            count = len(new_rows[b])
            tree_map(lambda store, v: store.index_copy_(0, rows, v[start:start + count]), trees[b].embeddings,
                     out.embedding)
            start += count

    def _backup(self, tree: LeanTree, path: list[tuple[int, int]]) -> None:
        """The leaf's value (its proof if it has one) up the path; then proofs up the path."""
        node, a = path[-1]
        code = int(tree.children[node, a])  # expanded by now; or, past max_depth, an inner node
        leaf = code if code >= 0 else -2 - code
        fresh = tree.visits[leaf] == 0
        g = tree.raw_value[leaf] if fresh else tree.value_sum[leaf] / tree.visits[leaf]
        if self.config.solver and tree.proven[leaf] != 0:
            g = float(tree.proven[leaf])
        tree.visits[leaf] += 1
        tree.value_sum[leaf] += g
        q = tree.reward[leaf] + tree.discount[leaf] * g
        for node, a in reversed(path):
            tree.edge_visits[node, a] += 1
            tree.edge_value[node, a] += q
            tree.visits[node] += 1
            tree.value_sum[node] += q
            q = tree.discount[node] * q  # the return of the edge into ``node`` (its parent's view)
        if self.config.solver:
            self._prove(tree, path)

    def _prove(self, tree: LeanTree, path: list[tuple[int, int]]) -> None:
        """Proofs up the path: a node whose edges prove it passes its result to the edge above.
        Only a proven edge can make its node proven: a path whose last edge has no proof changes
        nothing (each edge's proof is checked by the descents that end on it)."""
        node, a = path[-1]
        if tree.edge_proven[node, a] == 0:
            return
        for depth in range(len(path) - 1, -1, -1):
            node, _ = path[depth]
            if tree.proven[node] != 0:
                continue
            row, legal = tree.edge_proven[node], tree.legal[node]
            if ((row > 0) & legal).any():
                result = 1
            elif ((row < 0) | ~legal).all():
                result = -1
            else:
                return  # nothing new here, so nothing new above
            tree.proven[node] = result
            if depth:
                up_node, up_a = path[depth - 1]
                tree.edge_proven[up_node, up_a] = int(tree.discount[node]) * result
                tree.proven_edges[up_node] += 1
                tree.children[up_node, up_a] = -2 - node

    # ------------------------------------------------------------ outputs
    def _as_tree(self, trees: list[LeanTree]) -> Tree:
        """The trees in ``tree.Tree``'s layout ``[B, N, A]`` (a copy, padded to the largest)."""
        N = max(t.count for t in trees) + 1

        def stack(field: str, fill) -> Tensor:
            rows = []
            for t in trees:
                x = getattr(t, field)[:N]
                if x.shape[0] < N:
                    pad = np.full((N - x.shape[0],) + x.shape[1:], fill, dtype=x.dtype)
                    x = np.concatenate([x, pad])
                rows.append(x)
            return torch.from_numpy(np.stack(rows)).to(self._device)

        def rows(x: Tensor) -> Tensor:  # [N, ...]: a tree's first N rows, padded when it holds fewer
            return x[:N] if x.shape[0] >= N else torch.cat([x, x.new_zeros((N - x.shape[0],) + tuple(x.shape[1:]))])

        embeddings = tree_map(lambda *xs: torch.cat([rows(x) for x in xs]), *[t.embeddings for t in trees])
        return Tree(
            logits=stack("logits", NEG), prior=stack("prior", 0), legal=stack("legal", False),
            children=stack("children", UNEXPANDED), edge_visits=stack("edge_visits", 0),
            edge_value=stack("edge_value", 0), edge_proven=stack("edge_proven", 0),
            next_edge=torch.zeros(len(trees), N, dtype=torch.long, device=self._device), visits=stack("visits", 0),
            value_sum=stack("value_sum", 0), proven=stack("proven", 0), raw_value=stack("raw_value", 0),
            reward=stack("reward", 0), discount=stack("discount", 0), parent=stack("parent", -1),
            action=stack("action", -1), node_count=torch.tensor([t.count for t in trees], device=self._device), embeddings=embeddings)


def _grow(tree: LeanTree, capacity: int) -> LeanTree:
    """``tree`` with room for ``capacity`` nodes (the same object when it has it already)."""
    if tree.capacity >= capacity:
        return tree
    extra = capacity - tree.capacity
    A = tree.children.shape[1]
    more = _empty(extra, A, tree_map(lambda t: t[:1], tree.embeddings))
    fields = {}
    for name in ("children", "edge_visits", "edge_value", "edge_proven", "logits", "prior", "legal", "visits",
                 "value_sum", "raw_value", "reward", "discount", "proven", "proven_edges", "parent", "action"):
        fields[name] = np.concatenate([getattr(tree, name), getattr(more, name)])
    embeddings = tree_map(lambda a, b: torch.cat([a, b]), tree.embeddings, more.embeddings)
    return LeanTree(**fields, count=tree.count, embeddings=embeddings)


def subtree(tree: LeanTree, actions: list[int]) -> LeanTree | None:
    """The part of ``tree`` below the node that ``actions`` (from its root) lead to, renumbered with
    that node as the root; None when the tree does not reach that far or the node is terminal."""
    node = 0
    for a in actions:
        code = int(tree.children[node, a])
        if code == UNEXPANDED:
            return None
        node = code if code >= 0 else -2 - code
        if tree.discount[node] == 0:
            return None  # a finished game: nothing to search
    # Breadth-first from the new root: old index -> new index.
    order = [node]
    index = {node: 0}
    i = 0
    while i < len(order):
        row = tree.children[order[i]]
        for code in row[row != UNEXPANDED]:
            child = int(code) if code >= 0 else -2 - int(code)
            if child not in index:
                index[child] = len(order)
                order.append(child)
        i += 1
    old = np.array(order)
    remap = np.full(tree.capacity + 1, UNEXPANDED, dtype=np.int64)
    remap[old] = np.arange(len(old))
    kept = _empty(len(old), tree.children.shape[1], tree_map(lambda t: t[:1], tree.embeddings))
    for name in ("edge_visits", "edge_value", "edge_proven", "logits", "prior", "legal", "visits", "value_sum",
                 "raw_value", "reward", "discount", "proven", "proven_edges", "action"):
        getattr(kept, name)[:] = getattr(tree, name)[old]
    codes = tree.children[old]
    target = np.where(codes >= 0, codes, -2 - codes)
    renumbered = remap[np.clip(target, 0, tree.capacity)]
    kept.children[:] = np.where(codes == UNEXPANDED, UNEXPANDED, np.where(codes >= 0, renumbered, -2 - renumbered))
    kept.parent[:] = np.where(tree.parent[old] >= 0, remap[np.clip(tree.parent[old], 0, tree.capacity)], -1)
    kept.parent[0], kept.action[0] = -1, -1
    kept.reward[0], kept.discount[0] = 0.0, 0.0
    kept.count = len(old)
    index_t = torch.from_numpy(old)
    kept.embeddings = tree_map(lambda t: t.index_select(0, index_t.to(t.device)), tree.embeddings)
    return kept

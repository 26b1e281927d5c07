"""Batched Monte Carlo tree search, game-agnostic: B independent searches advance in lockstep.

The caller gives the root (prior logits, value, legal actions and an opaque embedding per game) and
``recurrent_fn(embedding, action) -> Transition`` (these types and ``SearchConfig`` are in
``interface.py``); the search imports neither rules nor network. Values are always from the point of
view of the player to move; a transition's ``discount`` is +1 when the same player moves again, -1
when the other does, 0 when the game ended (its ``reward`` is then the result for the player who
acted; rewards of other transitions must be 0). Terminal nodes are exact.

Two schemes (``SearchConfig.scheme``, rules in ``select.py``): ``puct`` (AlphaZero, Dirichlet root
noise, the visit distribution as policy target) and ``gumbel`` (Gumbel MuZero: Gumbel-top-k root
candidates with sequential halving, the deterministic in-tree rule, the improved policy as target).

Proven values (``SearchConfig.solver``, MCTS-solver): a terminal child proves its edge; a node with a
winning edge is a proven win for its player to move, a node whose legal edges all lose a proven
loss; an evaluator may also prove a new node (``Transition.proven``: one-move tactics know a player
who can win at once has won). Proofs propagate up the simulation's path in the backup; a proven
node is coded as terminal in ``children``, so no descent goes below it, and the in-tree rules never
choose a proven-losing edge while an unproven one is left (a proven-winning edge makes the node
itself proven). A proven edge's Q is its exact result, ±1. The solver is what makes the search
converge where the network is blind: without it a winning move with a tiny prior and a misleading
value gets one visit and is never tried again while the search pours every later simulation into
the refuted line; once that line is proven lost, the rules must look elsewhere.

One simulation, the same fixed sequence of tensor ops for every search (no ``.item()``, no
``nonzero``, no branch on tensor values, so no host synchronisation and a shape a CUDA graph can
capture):

1. *descend*: ``min(sim + 1, max_depth)`` steps, each two gathers: the node's cached next edge
   (``Tree.next_edge``) and the child behind it; searches that reached an unexpanded edge or a
   terminal node stop moving (masked); on the CPU, where a host read is free, only as many steps
   as the deepest tree needs (see ``conhex_zero.device.host_reads``);
2. *expand*: one ``recurrent_fn`` call for the whole batch at each search's leaf edge (searches
   whose path ended on an existing node write to the scratch node);
3. *back up*: the leaf's value (its proven result where it has one), signed along the path by a
   cumulative product of the discounts, added to every edge and node of the path in two
   scatter-adds; then proofs go up the path, one level per step (on the CPU, skipped unless the
   new leaf proved its edge);
4. *refresh*: the in-tree rule re-run for the path's nodes and the new leaf, all in one batch.

A simulation that walks ``max_depth`` edges without finding a leaf backs up the value of the node
it reached (no expansion); trees of up to 200 simulations were measured at most 15 deep.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
from torch import Tensor

from conhex_zero.device.host_reads import host_reads_free
from conhex_zero.search import rng
from conhex_zero.search import select as rules
from conhex_zero.search.halving import considered_table
from conhex_zero.search.interface import (RecurrentFn, RootInput, SearchConfig, SearchOutput, Transition,
                                         principal_variation)
from conhex_zero.search.pytree import tree_map
from conhex_zero.search.tree import NEG, UNEXPANDED, Tree, decode_child, new_tree, terminal_code

__all__ = ["RecurrentFn", "RootInput", "SearchConfig", "SearchOutput", "Searcher", "Transition", "principal_variation",
           "search", "search_outputs"]  # the settings and types live in interface.py; importers use either

INF = float("inf")


def with_proofs(n: Tensor, w: Tensor, legal: Tensor, proven: Tensor) -> tuple[Tensor, Tensor]:
    """Edge value sums with proven edges exact (``proven`` x visits) and the edges a rule may choose
    ``[R, A]``: the proven wins if there are any (the node is won: any of them), else the unproven
    edges if there are any, else all legal edges (the node is lost: all of them lose)."""
    exact = torch.where(proven != 0, proven.to(w.dtype) * n, w)
    wins = legal & (proven > 0)
    open_ = legal & (proven == 0)
    selectable = torch.where(wins.any(1, keepdim=True), wins, torch.where(open_.any(1, keepdim=True), open_, legal))
    return exact, selectable


class _Search:
    """The state of B searches: the tree plus per-search constants, reusable in place (``start``)."""

    def __init__(self, root: RootInput, recurrent_fn: RecurrentFn, config: SearchConfig, keys: Tensor):
        self.cfg = config
        self.recurrent_fn = recurrent_fn
        B, A = root.logits.shape
        self.device = root.logits.device
        t = self.tree = new_tree(B, config.num_simulations + 2, A, root.embedding, self.device)
        self.base = t.base()  # [B] flat row of each root
        self.dump_edge = (self.base + t.scratch) * A  # [B] an edge of the scratch node
        self.gumbel = torch.zeros(B, A, device=self.device)
        self.keys = torch.zeros(B, dtype=torch.long, device=self.device)
        self.sim = torch.zeros((), dtype=torch.long, device=self.device)  # the simulation's index
        self.depth = torch.zeros((), dtype=torch.long, device=self.device)  # deepest node of any tree
        if config.scheme == "gumbel":
            self.table = considered_table(config.max_considered, config.num_simulations, self.device)
        # Flat views for gathers and scatters.
        self.children = t.children.view(-1)  # [B*N*A]
        self.next_edge = t.next_edge.view(-1)  # [B*N]
        self.visits, self.value_sum = t.visits.view(-1), t.value_sum.view(-1)  # [B*N]
        self.discount, self.reward = t.discount.view(-1), t.reward.view(-1)  # [B*N]
        self.proven, self.edge_proven = t.proven.view(-1), t.edge_proven.view(-1)  # [B*N], [B*N*A]
        self.start(root, keys, fresh=True)

    def start(self, root: RootInput, keys: Tensor, fresh: bool = False) -> None:
        """Begin new searches from ``root`` in this object's buffers."""
        t, cfg = self.tree, self.cfg
        if not fresh:  # statistics of the previous searches; other rows are rewritten when used
            t.children.fill_(UNEXPANDED)
            for field in (t.edge_visits, t.edge_value, t.visits, t.value_sum, t.proven, t.edge_proven):
                field.zero_()
            t.node_count.fill_(1)
            self.depth.zero_()
        self.keys.copy_(keys)
        if cfg.scheme == "gumbel":
            A = t.num_actions
            self.gumbel.copy_(rng.gumbel(rng.fold(self.keys, 1), 0, A) * cfg.gumbel_scale)
        self._init_root(root)

    # ------------------------------------------------------------------ root
    def _init_root(self, root: RootInput) -> None:
        t, cfg = self.tree, self.cfg
        legal = root.legal.bool()
        logits = torch.where(legal, root.logits.float(), NEG)
        prior = rules.masked_softmax(logits, legal)
        if cfg.scheme == "puct" and cfg.dirichlet_fraction > 0:
            noise = rng.dirichlet(rng.fold(self.keys, 2), 0, legal, cfg.dirichlet_alpha)
            prior = (1 - cfg.dirichlet_fraction) * prior + cfg.dirichlet_fraction * noise
        t.logits[:, 0] = logits
        t.prior[:, 0] = prior
        t.legal[:, 0] = legal
        t.raw_value[:, 0] = root.value.float()
        t.value_sum[:, 0] = root.value.float()
        t.visits[:, 0] = 1.0
        if root.proven is not None and cfg.solver:
            t.proven[:, 0] = root.proven.to(torch.int8)
        tree_map(lambda store, v: store.index_copy_(0, self.base, v), t.embeddings, root.embedding)
        self._refresh(self.base)

    # ------------------------------------------------------------- selection
    def _gather_rows(self, flat: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
        """Edge visits, edge values, logits, prior and the selectable edges ``[R, A]`` of flat nodes
        ``[R]``; with the solver, proven edges' values are exact and proven losses not selectable
        (see ``with_proofs``)."""
        t = self.tree
        A = t.num_actions
        n, w, logits, prior, legal = (f.view(-1, A).index_select(0, flat)
                                      for f in (t.edge_visits, t.edge_value, t.logits, t.prior, t.legal))
        if self.cfg.solver:
            w, legal = with_proofs(n, w, legal, t.edge_proven.view(-1, A).index_select(0, flat))
        return n, w, logits, prior, legal

    def _refresh(self, flat: Tensor) -> None:
        """Re-run the in-tree selection rule at flat nodes ``flat`` ``[R]``; cache their next edges."""
        cfg, A = self.cfg, self.tree.num_actions
        n, w, logits, prior, legal = self._gather_rows(flat)
        if cfg.scheme == "gumbel":
            raw = self.tree.raw_value.view(-1).index_select(0, flat)
            sigma = rules.sigma_completed_q(n, w, prior, legal, raw, cfg.c_visit, cfg.c_scale, cfg.q_range == "fixed",
                                            cfg.q_min_spread)
            action = rules.gumbel_interior(logits, legal, sigma, n, cfg.visit_floor)
        else:
            if cfg.fpu is None:
                unvisited = (self.value_sum.index_select(0, flat) / self.visits.index_select(0, flat).clamp(min=1))[:, None]
            else:
                unvisited = torch.full_like(n[:, :1], cfg.fpu)
            action = rules.puct(prior, legal, n, w, unvisited, cfg.c_puct)
        self.next_edge.index_copy_(0, flat, flat * A + action)

    def _root_edge(self) -> Tensor:
        """``[B]`` the flat edge each search takes from its root at simulation ``self.sim``."""
        if self.cfg.scheme == "puct":
            return self.next_edge.index_select(0, self.base)
        cfg = self.cfg
        n, w, logits, prior, legal = self._gather_rows(self.base)
        raw = self.tree.raw_value[:, 0]
        sigma = rules.sigma_completed_q(n, w, prior, legal, raw, cfg.c_visit, cfg.c_scale, cfg.q_range == "fixed",
                                            cfg.q_min_spread)
        m = self.tree.legal[:, 0].sum(1).clamp(max=cfg.max_considered)  # the schedule of all legal actions
        column = self.table.index_select(1, self.sim.view(1))[:, 0]  # [max_considered + 1] this simulation's
        target = column.index_select(0, m)  # [B] visits the next candidate must have
        action = rules.gumbel_root(self.gumbel, logits, legal, sigma, n, target)
        return self.base * self.tree.num_actions + action

    # ------------------------------------------------------------ simulation
    def steps(self, sim: int) -> int:
        """Descent steps of simulation ``sim``: the tree is at most ``sim`` deep before it."""
        return min(sim + 1, self.cfg.max_depth)

    def simulate(self, sim: int) -> None:
        self.sim.fill_(sim)
        steps = self.steps(sim)
        if host_reads_free(self.device):  # same result: the steps below a search's leaf are masked
            steps = min(steps, int(self.depth) + 1)  # the deepest node is ``depth`` edges down
        self._simulate(steps)

    def _simulate(self, steps: int) -> None:
        """One simulation of ``steps`` descent steps, at simulation index ``self.sim``."""
        t = self.tree
        A = t.num_actions

        # 1. descend by cached choices; a search stops at an unexpanded or terminal child.
        edge = self._root_edge()  # [B]
        node = self.base
        active = torch.ones_like(edge, dtype=torch.bool)
        edges, valid = [], []
        for d in range(steps):
            if d:
                edge = self.next_edge.index_select(0, node)
            child = self.children.index_select(0, edge)  # [B] child code
            edges.append(edge)
            valid.append(active)
            active = active & (child >= 0)
            node = torch.where(active, self.base + child, node)
        path = torch.stack(edges, 1)  # [B, D] flat edges, from the root down
        on_path = torch.stack(valid, 1)  # [B, D]
        length = on_path.sum(1)  # [B] >= 1
        leaf_edge = path.gather(1, (length - 1)[:, None])[:, 0]  # [B]

        # 2. expand the leaf edge (searches that stopped at an existing node write to scratch).
        code = self.children.index_select(0, leaf_edge)
        expanding = code == UNEXPANDED
        parent_flat = torch.div(leaf_edge, A, rounding_mode="floor")
        action = leaf_edge - parent_flat * A
        out = self.recurrent_fn(t.embedding(parent_flat), action)
        new = torch.where(expanding, t.node_count, torch.full_like(code, t.scratch))
        rows = self.base + new
        legal = out.legal.bool()
        logits = torch.where(legal, out.logits.float(), NEG)
        prior = rules.masked_softmax(logits, legal)
        if self.cfg.prior_mix > 0:  # a floor under every reply's prior (the logits follow it)
            uniform = legal / legal.sum(1, keepdim=True).clamp(min=1)
            prior = (1 - self.cfg.prior_mix) * prior + self.cfg.prior_mix * uniform
            logits = torch.where(legal, prior.clamp(min=1e-30).log(), NEG)
        ended = out.discount == 0
        value = torch.where(ended, torch.zeros_like(out.value), out.value.float())
        t.logits.view(-1, A).index_copy_(0, rows, logits)
        t.prior.view(-1, A).index_copy_(0, rows, prior)
        t.legal.view(-1, A).index_copy_(0, rows, legal)
        for field, v in ((t.raw_value, value), (t.reward, out.reward.float()), (t.discount, out.discount.float()),
                         (t.parent, parent_flat - self.base), (t.action, action)):
            field.view(-1).index_copy_(0, rows, v.to(field.dtype))
        tree_map(lambda store, v: store.index_copy_(0, rows, v), t.embeddings, out.embedding)
        if self.cfg.solver:  # a terminal child proves its edge; the evaluator may prove the new node
            proven_new = (torch.zeros_like(code, dtype=torch.int8) if out.proven is None
                          else torch.where(ended, 0, out.proven.to(torch.int8)))
            t.proven.view(-1).index_copy_(0, rows, proven_new)
            edge_proof = torch.where(ended, out.reward.sign(), out.discount * proven_new).to(torch.int8)
            edge_proof = torch.where(expanding, edge_proof, self.edge_proven.index_select(0, leaf_edge))
            self.edge_proven.index_copy_(0, leaf_edge, edge_proof)
            stops = ended | (edge_proof != 0)
        else:
            stops = ended
        new_code = torch.where(stops, terminal_code(new), new)
        self.children.index_copy_(0, leaf_edge, torch.where(expanding, new_code, code))
        t.node_count += expanding.long()
        torch.maximum(self.depth, torch.where(expanding, length, 0).amax(), out=self.depth)

        # 3. back up: the leaf's own value (its proof if it has one; 0 for a terminal node), then
        # each edge's return.
        leaf = self.base + torch.where(expanding, new, decode_child(code))  # [B] flat
        g = torch.where(expanding, value, self.value_sum.index_select(0, leaf)
                        / self.visits.index_select(0, leaf).clamp(min=1))
        if self.cfg.solver:
            g = torch.where(self.proven.index_select(0, leaf) != 0, self.proven.index_select(0, leaf).float(), g)
        self.visits.index_add_(0, leaf, torch.ones_like(g))
        self.value_sum.index_add_(0, leaf, g)
        q_leaf = self.reward.index_select(0, leaf) + self.discount.index_select(0, leaf) * g  # [B]
        # Edges above the leaf edge lead to non-terminal nodes (reward 0): q_d = prod_{k>=d} disc_k * q_leaf.
        above = on_path & (torch.arange(steps, device=self.device)[None, :] < (length - 1)[:, None])
        inner = (self.base[:, None] + self.children.index_select(0, path.flatten()).view_as(path).clamp(min=0))
        disc = torch.where(above, self.discount.index_select(0, inner.flatten()).view_as(path), 1.0)
        q = disc.flip(1).cumprod(1).flip(1) * q_leaf[:, None]  # [B, D]
        weight = on_path.float()
        edge_index = torch.where(on_path, path, self.dump_edge[:, None]).flatten()
        node_index = torch.div(edge_index, A, rounding_mode="floor")
        t.edge_visits.view(-1).index_add_(0, edge_index, weight.flatten())
        t.edge_value.view(-1).index_add_(0, edge_index, (q * weight).flatten())
        self.visits.index_add_(0, node_index, weight.flatten())
        self.value_sum.index_add_(0, node_index, (q * weight).flatten())
        if self.cfg.solver:
            self._propagate_proofs(path, on_path, expanding & (edge_proof != 0))

        # 4. the path's nodes and the leaf choose their next edges afresh.
        self._refresh(torch.cat([node_index, leaf]))

    def _propagate_proofs(self, path: Tensor, on_path: Tensor, new_proof: Tensor) -> None:
        """Proofs up the path ``[B, D]``, deepest level first: a node whose edges now prove it passes
        its result to the edge above (which becomes terminal-coded). Proofs change only where the
        new leaf proved its edge (``new_proof`` [B]), so on the CPU, where the read is free, nothing
        is done otherwise."""
        if host_reads_free(self.device) and not bool(new_proof.any()):
            return
        t, A = self.tree, self.tree.num_actions
        proofs, legal_rows = t.edge_proven.view(-1, A), t.legal.view(-1, A)
        for d in range(path.shape[1] - 1, -1, -1):
            node = torch.div(path[:, d], A, rounding_mode="floor")  # [B] flat node above the level-d edge
            row = proofs.index_select(0, node)  # [B, A]
            legal = legal_rows.index_select(0, node)
            won = ((row > 0) & legal).any(1)
            lost = ((row < 0) | ~legal).all(1)
            old = self.proven.index_select(0, node)
            found = on_path[:, d] & (old == 0) & (won | lost)  # [B] newly proven
            result = torch.where(won, 1, -1).to(torch.int8)
            self.proven.index_copy_(0, node, torch.where(found, result, old))
            if d:
                up = path[:, d - 1]  # the edge into ``node``
                proof = (self.discount.index_select(0, node) * result).to(torch.int8)
                self.edge_proven.index_copy_(0, up, torch.where(found, proof, self.edge_proven.index_select(0, up)))
                self.children.index_copy_(0, up, torch.where(found, terminal_code(node - self.base),
                                                             self.children.index_select(0, up)))

    # --------------------------------------------------------------- outputs
    def outputs(self) -> SearchOutput:
        return search_outputs(self.tree, self.cfg, self.gumbel)


def search_outputs(t: Tree, cfg: SearchConfig, gumbel: Tensor, own_visits: Tensor | None = None) -> SearchOutput:
    """The results of finished searches from their tree (``gumbel`` ``[B, A]``: the root noise).

    ``own_visits`` ``[B, A]``: the root visits of this search alone, where a root carried visits
    from an earlier search (a kept tree): Gumbel chooses among the candidates with the most of them,
    the survivors of this search's sequential halving, as at a fresh root (the carried visits,
    spread by the earlier search's in-tree rule, would make its favourite the only choice)."""
    device = t.visits.device
    root = torch.zeros(t.batch_size, dtype=torch.long, device=device)
    n, w = t.rows(t.edge_visits, root), t.rows(t.edge_value, root)
    legal = t.rows(t.legal, root)
    proven = t.rows(t.edge_proven, root)
    selectable = legal
    if cfg.solver:  # proven edges exact; a proven win is played, a proven loss only if all lose
        w, selectable = with_proofs(n, w, legal, proven)
    visit_probs = n / n.sum(1, keepdim=True).clamp(min=1)
    if cfg.scheme == "gumbel":
        logits, prior = t.rows(t.logits, root), t.rows(t.prior, root)
        sigma = rules.sigma_completed_q(n, w, prior, selectable, t.raw_value[:, 0], cfg.c_visit, cfg.c_scale,
                                        cfg.q_range == "fixed", cfg.q_min_spread)
        target = rules.masked_softmax(logits + sigma, selectable)
        score = torch.where(selectable, gumbel + logits + sigma, -INF)
        survivors = n if own_visits is None else own_visits
        most = torch.where(selectable, survivors, -1.0).amax(1, keepdim=True)
        action = torch.where(survivors == most, score, -INF).argmax(1)
    else:
        target = visit_probs
        action = torch.where(selectable, n + 1e-3 * t.rows(t.prior, root), -INF).argmax(1)
    root_proven = t.proven[:, 0]
    mean = t.value_sum[:, 0] / t.visits[:, 0]
    return SearchOutput(
        action=action,
        visit_counts=n,
        visit_probs=visit_probs,
        policy_target=target,
        root_value=torch.where(root_proven != 0, root_proven.float(), mean),
        q_values=w / n.clamp(min=1),
        pv=principal_variation(t, action, cfg.pv_depth),
        tree=t,
        root_proven=root_proven,
        edge_proven=proven,
    )


class Searcher:
    """Runs searches with one config and ``recurrent_fn``, call after call.

    By default every call allocates a fresh tree. With ``config.cuda_graphs`` on a CUDA device (or
    ``persistent=True``, which tests use on the CPU) the buffers of the last batch size are kept and
    reset in place; on CUDA the first search of a batch size runs eagerly (it warms up cuBLAS, the
    caching allocator and autocast), then one CUDA graph per descent length is captured and later
    searches replay them: a simulation is then one graph launch instead of hundreds of kernels.
    With kept buffers, ``SearchOutput.tree`` is valid until the next search.
    """

    def __init__(self, recurrent_fn: RecurrentFn, config: SearchConfig, persistent: bool = False):
        self.recurrent_fn, self.config, self.persistent = recurrent_fn, config, persistent
        self._kept: _Search | None = None
        self._graphs: dict[int, Any] = {}
        self._pool = None

    def run(self, root: RootInput, keys: Tensor, on_simulation: Callable[[int], None] | None = None) -> SearchOutput:
        cfg = self.config
        graphs = cfg.cuda_graphs and root.logits.is_cuda
        if not (graphs or self.persistent):
            run = _Search(root, self.recurrent_fn, cfg, keys)
            for sim in range(cfg.num_simulations):
                run.simulate(sim)
                if on_simulation is not None:
                    on_simulation(sim + 1)
            return run.outputs()
        B = root.logits.shape[0]
        warmed = self._kept is not None and self._kept.tree.batch_size == B
        if warmed:
            self._kept.start(root, keys)
        else:
            self._kept, self._graphs = _Search(root, self.recurrent_fn, cfg, keys), {}
        run = self._kept
        for sim in range(cfg.num_simulations):
            graph = self._graphs.get(run.steps(sim))
            if graph is None:
                run.simulate(sim)
            else:
                run.sim.fill_(sim)
                graph.replay()
            if on_simulation is not None:
                on_simulation(sim + 1)
        out = run.outputs()
        if graphs and not self._graphs:
            self._capture(run)
        return out

    def _capture(self, run: _Search) -> None:
        """One CUDA graph per descent length (capturing records kernels, it runs none)."""
        self._pool = self._pool or torch.cuda.graph_pool_handle()
        torch.cuda.synchronize()
        for steps in sorted({run.steps(sim) for sim in range(self.config.num_simulations)}):
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=self._pool):
                run._simulate(steps)
            self._graphs[steps] = graph
        torch.cuda.synchronize()


@torch.no_grad()
def search(root: RootInput, recurrent_fn: RecurrentFn, config: SearchConfig, keys: Tensor,
           on_simulation: Callable[[int], None] | None = None) -> SearchOutput:
    """Run ``config.num_simulations`` simulations for every root at once (a fresh ``Searcher``).

    ``keys`` ([B] int64, see ``rng.make_keys``) seed each search's noise independently of the batch.
    ``on_simulation(k)`` is called after the k-th simulation (progress bars).
    """
    return Searcher(recurrent_fn, config).run(root, keys, on_simulation)

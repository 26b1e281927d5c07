"""The batched search's selection rules (``select.py``) for one node row in NumPy: what the lean
search (``lean.py``) asks at each node of a descent, PUCT or Gumbel (completed Q, sigma, the visit
floor), with the solver's view of proven edges. Few NumPy calls a row: at 69 actions each call's
overhead outweighs its arithmetic."""

from __future__ import annotations

import math
import operator

import numpy as np

from conhex_zero.search.mcts import SearchConfig
from conhex_zero.search.tree import NEG

EPS = 1e-12


def masked_softmax(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """The prior over the ``legal`` edges of one row (0 elsewhere)."""
    x = np.where(legal, logits, NEG)
    x = np.exp(x - x.max())
    x = x * legal
    return x / max(x.sum(), EPS)


def by_score(legal: np.ndarray, score: np.ndarray) -> list[int]:
    """The legal edges by ``score``, highest first (the lowest index on ties)."""
    edges = np.flatnonzero(legal)
    return edges[np.argsort(-score[edges], kind="stable")].tolist()


def first_unvisited(order: list[int], visited: list[int]) -> int:
    """The first edge of ``order`` that is not in ``visited`` (which must leave one)."""
    if len(visited) < 8:
        return next(a for a in order if a not in visited)
    seen = set(visited)
    return next(a for a in order if a not in seen)


# The ufuncs' reductions without ndarray.sum/max's Python wrappers (a third of their cost here).
_sum, _max, _min = np.add.reduce, np.maximum.reduce, np.minimum.reduce


class RowRules:
    """``select.py``'s rules for one node row (NumPy), with the solver's view of proven edges."""

    def __init__(self, cfg: SearchConfig):
        self.cfg = cfg

    def proofs(self, n: np.ndarray, w: np.ndarray, legal: np.ndarray, proven: np.ndarray,
               any_proven: bool = True) -> tuple[np.ndarray, np.ndarray]:
        if not self.cfg.solver or not any_proven:
            return w, legal
        exact = np.where(proven != 0, proven * n, w).astype(np.float32)
        wins = legal & (proven > 0)
        if wins.any():
            return exact, wins
        open_ = legal & (proven == 0)
        return exact, (open_ if open_.any() else legal)

    def sigma(self, n: np.ndarray, w: np.ndarray, prior: np.ndarray, legal: np.ndarray, raw: float,
              total: float | None = None) -> np.ndarray:
        """Gumbel's sigma(completed Q) for one row (``total``: ``n.sum()`` if the caller has it).
        Few NumPy calls: at 69 actions each call's overhead outweighs its arithmetic."""
        cfg = self.cfg
        visited = n > 0
        q = w / np.maximum(n, 1)  # 0 at unvisited edges (their w is 0)
        if total is None:
            total = float(_sum(n))
        pi_seen = float(_sum(prior, where=visited))
        mean_seen = float(np.dot(prior, q)) / max(pi_seen, EPS)
        v_mix = (raw + total * mean_seen) / (1 + total)
        completed = np.where(visited, q, np.float32(v_mix))
        if cfg.q_range == "fixed":
            return ((cfg.c_visit + float(_max(n))) * cfg.c_scale * 0.5) * (completed + 1)
        lo = float(_min(completed, where=legal, initial=np.inf))
        hi = float(_max(completed, where=legal, initial=-np.inf))
        scale = (cfg.c_visit + float(_max(n))) * cfg.c_scale / max(hi - lo, cfg.q_min_spread, 1e-8)
        return (completed - np.float32(lo)) * np.float32(scale)

    def visited_sigma(self, n: np.ndarray, w: np.ndarray, prior: np.ndarray, raw: float, num_legal: int
                      ) -> tuple[list[int], list[float], list[float], list[float], float, float]:
        """``sigma`` where every legal edge is selectable, from the visited edges alone: (visited
        edges, their visits, their priors, their sigma, the sigma that every unvisited edge shares,
        total visits). Same formulas as ``sigma``, in Python floats: a few operations per visited
        edge instead of a dozen NumPy calls over every action."""
        cfg = self.cfg
        vis = n.nonzero()[0]
        idx = vis.tolist()
        if not idx:
            return idx, [], [], [], 0.0, 0.0  # sigma is the same for every edge
        nv, wv, pv = n[vis].tolist(), w[vis].tolist(), prior[vis].tolist()
        total, nmax = sum(nv), max(nv)
        qs = list(map(operator.truediv, wv, nv))
        pi_seen = sum(pv)
        mean_seen = sum(map(operator.mul, pv, qs)) / max(pi_seen, EPS)
        v_mix = (raw + total * mean_seen) / (1 + total)
        if cfg.q_range == "fixed":
            k = (cfg.c_visit + nmax) * cfg.c_scale * 0.5
            return idx, nv, pv, [k * (q + 1) for q in qs], k * (v_mix + 1), total
        lo, hi = min(qs), max(qs)
        if len(idx) < num_legal:  # the unvisited edges' completed value is v_mix
            lo, hi = min(lo, v_mix), max(hi, v_mix)
        scale = (cfg.c_visit + nmax) * cfg.c_scale / max(hi - lo, cfg.q_min_spread, 1e-8)
        return idx, nv, pv, [(q - lo) * scale for q in qs], (v_mix - lo) * scale, total

    def interior_visited(self, n: np.ndarray, w: np.ndarray, prior: np.ndarray, raw: float, order: list[int]) -> int:
        """Gumbel's in-tree rule where every legal edge is selectable (``visited_sigma``).

        Every unvisited edge has the same sigma and no visits, so the best of them is the first
        unvisited one in ``order`` (the legal edges by logit, highest first, the lowest index on
        ties), and the improved policy's normaliser needs only their prior mass (``prior`` is the
        softmax of the logits). The same action as ``interior`` up to float rounding."""
        idx, nv, pv, sig, sig_u, total = self.visited_sigma(n, w, prior, raw, len(order))
        if not idx:
            return order[0]
        unvisited = len(idx) < len(order)
        top = max(max(sig), sig_u) if unvisited else max(sig)
        weights = [p * math.exp(s_ - top) for p, s_ in zip(pv, sig)]  # prior x exp(sigma), rescaled
        rest = max(1.0 - sum(pv), 0.0) * math.exp(sig_u - top) if unvisited else 0.0
        floor = self.cfg.visit_floor  # pi' -> (1 - floor) pi' + floor P
        norm = (1.0 - floor) / max(sum(weights) + rest, 1e-300)
        visit_term = 1.0 / (1 + total)
        best, best_score = -1, -math.inf
        for a, wt, p_a, na in zip(idx, weights, pv, nv):
            score = wt * norm + floor * p_a - na * visit_term
            if score > best_score:
                best, best_score = a, score
        if unvisited:
            a_u = first_unvisited(order, idx)
            score = float(prior[a_u]) * (math.exp(sig_u - top) * norm + floor)
            if score > best_score or (score == best_score and a_u < best):
                best = a_u
        return best

    def interior(self, n: np.ndarray, w: np.ndarray, logits: np.ndarray, prior: np.ndarray, legal: np.ndarray,
                 raw: float, node_mean: float, all_legal: bool = False) -> int:
        """The in-tree rule's action at one node (``all_legal``: ``legal`` is the node's whole legal
        set, whose illegal logits are already ``NEG``, so no masking is needed)."""
        cfg = self.cfg
        if cfg.scheme == "gumbel":
            total = float(_sum(n))
            if total == 0:  # a fresh node: sigma is the same for every action, the prior decides
                return int(np.where(legal, logits, -np.inf).argmax())
            x = logits + self.sigma(n, w, prior, legal, raw, total)
            if not all_legal:
                x = np.where(legal, x, NEG)
            e = np.exp(x - _max(x))
            # argmax of softmax(x) - n / (1 + total), scaled by e.sum() > 0 (the order is the same);
            # with a visit floor, softmax(x) -> (1 - floor) softmax(x) + floor P (P over ``legal``)
            e_sum = float(_sum(e))
            score = e - n * np.float32(e_sum / (1 + total))
            if cfg.visit_floor > 0:
                p_sum = float(_sum(prior, where=legal))
                score = score - cfg.visit_floor * e + prior * np.float32(cfg.visit_floor * e_sum / max(p_sum, EPS))
            return int((score if all_legal else np.where(legal, score, -np.inf)).argmax())
        unvisited = node_mean if cfg.fpu is None else cfg.fpu
        q = np.where(n > 0, w / np.maximum(n, 1), unvisited)
        score = q + cfg.c_puct * prior * np.sqrt(max(n.sum(), 1.0)) / (1 + n)
        return int(np.where(legal, score, -np.inf).argmax())

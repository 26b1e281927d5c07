"""Action selection rules, as pure functions of one node's rows ``[R, A]`` (R nodes at once).

* PUCT (AlphaZero): argmax Q + c * P * sqrt(sum N) / (1 + N); an unvisited action's Q is the
  node's value (or a fixed ``fpu``).
* Gumbel MuZero (Danihelka et al., 2022): sigma(completed Q), where unvisited actions take the
  prior-weighted mix of the node's value and its visited actions' Q, mapped to [0, 1] and multiplied
  by (c_visit + max N) * c_scale. The map is fixed, [-1, 1] -> [0, 1], since values here are
  bounded (``fixed_range=True``); mctx's default, min-max over the node's legal actions, blows a
  spread of 0.001 up to the full scale, and once the visited action's Q and the mix value agree
  that makes the in-tree rule follow noise down a single line (measured in
  ``benchmarks/bench_convergence.py``). At the root, sequential halving
  picks among the actions with the scheduled visit count by g + logits + sigma; inside the tree,
  argmax(pi' - N / (1 + sum N)) with pi' = softmax(logits + sigma), or with a floor of the prior
  under pi' (``visit_floor``: (1 - f) pi' + f P), which keeps every move searched as N grows.

Illegal actions never win an argmax; a row without legal actions returns action 0 (such rows
belong to terminal or scratch nodes, which a descent never leaves from).
"""

from __future__ import annotations

import torch
from torch import Tensor

from conhex_zero.search.tree import NEG

INF = float("inf")


def masked_softmax(logits: Tensor, legal: Tensor) -> Tensor:
    """``[R, A]`` softmax over the legal entries, 0 elsewhere."""
    return torch.softmax(torch.where(legal, logits, NEG), dim=-1) * legal


def sigma_completed_q(n: Tensor, w: Tensor, prior: Tensor, legal: Tensor, raw_value: Tensor,
                      c_visit: float, c_scale: float, fixed_range: bool = False, min_spread: float = 0.0) -> Tensor:
    """``[R, A]`` sigma(completed Q) from edge visits ``n``, edge value sums ``w``, the prior and
    the node's own value ``raw_value`` ``[R]``; Q in [-1, 1] mapped to [0, 1] (``fixed_range``) or
    min-max rescaled over the legal actions, dividing by at least ``min_spread`` (so that a spread
    below it, which is noise, is not blown up to the full scale)."""
    visited = n > 0
    q = w / n.clamp(min=1)
    total = n.sum(1)
    pi_seen = (prior * visited).sum(1)
    mean_seen = (prior * q * visited).sum(1) / pi_seen.clamp(min=1e-12)
    v_mix = (raw_value + total * mean_seen) / (1 + total)
    completed = torch.where(visited, q, v_mix[:, None])
    if fixed_range:
        return (c_visit + n.amax(1, keepdim=True)) * c_scale * (completed + 1) / 2
    lo = torch.where(legal, completed, INF).amin(1, keepdim=True)
    hi = torch.where(legal, completed, -INF).amax(1, keepdim=True)
    scaled = (completed - lo) / (hi - lo).clamp(min=max(min_spread, 1e-8))
    return (c_visit + n.amax(1, keepdim=True)) * c_scale * scaled


def gumbel_root(gumbel: Tensor, logits: Tensor, legal: Tensor, sigma: Tensor, n: Tensor, target: Tensor) -> Tensor:
    """``[R]`` the root's next action: the best g + logits + sigma among the legal actions that have
    ``target`` ``[R]`` visits (sequential halving), or the best overall if none has."""
    score = torch.where(legal, gumbel + logits + sigma, -INF)
    pick = torch.where(n == target[:, None], score, -INF)
    return torch.where(pick.amax(1) > -INF, pick.argmax(1), score.argmax(1))


def gumbel_interior(prior_logits: Tensor, legal: Tensor, sigma: Tensor, n: Tensor, visit_floor: float = 0.0) -> Tensor:
    """``[R]`` argmax over legal actions of pi' - N / (1 + sum N), pi' = softmax(logits + sigma)
    mixed with the prior softmax(logits) by ``visit_floor``."""
    improved = masked_softmax(prior_logits + sigma, legal)
    if visit_floor > 0:
        improved = (1 - visit_floor) * improved + visit_floor * masked_softmax(prior_logits, legal)
    score = improved - n / (1 + n.sum(1, keepdim=True))
    return torch.where(legal, score, -INF).argmax(1)


def puct(prior: Tensor, legal: Tensor, n: Tensor, w: Tensor, unvisited_q: Tensor, c_puct: float) -> Tensor:
    """``[R]`` argmax over legal actions of Q + c * P * sqrt(sum N) / (1 + N); ``unvisited_q`` ``[R, 1]``."""
    q = torch.where(n > 0, w / n.clamp(min=1), unvisited_q)
    u = c_puct * prior * n.sum(1, keepdim=True).clamp(min=1).sqrt() / (1 + n)
    return torch.where(legal, q + u, -INF).argmax(1)

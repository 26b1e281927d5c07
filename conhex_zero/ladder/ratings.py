"""Maximum-likelihood Bradley-Terry ratings on the Elo scale, with a first-move advantage term.

P(the player moving first wins) = 1 / (1 + 10 ** (-(R_first - R_second + F) / 400)).

Ratings are anchored (the anchor is fixed at 0, or at a given value); F is fitted too. A weak
Gaussian prior (default sd 1000 Elo on ratings, 400 on F) keeps players with perfect records
finite without pulling ordinary ratings. Newton's method on the log posterior (float64, exact
Hessian); standard errors are the square roots of the diagonal of the inverse Hessian, i.e. the
curvature of the likelihood around the optimum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

C = math.log(10) / 400


@dataclass(frozen=True)
class Result:
    """Games between an ordered pair: ``first`` moved first in all of them."""

    first: str
    second: str
    first_wins: int
    second_wins: int


@dataclass
class Ratings:
    elo: dict[str, float]
    stderr: dict[str, float]
    first_move: float
    first_move_stderr: float
    games: dict[str, int]
    score: dict[str, float]  # share of points won
    anchor: str

    def table(self) -> list[tuple[str, float, float, int, float]]:
        rows = [(n, self.elo[n], self.stderr[n], self.games[n], self.score[n]) for n in self.elo]
        return sorted(rows, key=lambda r: -r[1])


def wilson(wins: float, games: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a win rate (95% for z = 1.96). Its upper end is exactly 1 when every
    game was won and its lower end exactly 0 when none was (rounding would give 0.9999999999999999,
    which ``score_to_elo`` turns into +6382 instead of inf)."""
    if games == 0:
        return 0.0, 1.0
    p = wins / games
    denom = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / denom
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denom
    low = 0.0 if wins <= 0 else max(0.0, centre - half)
    high = 1.0 if wins >= games else min(1.0, centre + half)
    return low, high


def score_to_elo(score: float) -> float:
    """Elo difference that gives ``score`` in expectation (infinite at 0 and 1)."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return 400 * math.log10(score / (1 - score))


def fit(results: list[Result], anchor: str, anchor_elo: float = 0.0, prior_sd: float = 1000.0,
        first_move_prior_sd: float = 400.0, iterations: int = 50) -> Ratings:
    """Fit ratings to ``results``; ``anchor`` must appear in them."""
    names = sorted({r.first for r in results} | {r.second for r in results})
    if anchor not in names:
        raise ValueError(f"anchor {anchor!r} has no games; players: {', '.join(names)}")
    free = [n for n in names if n != anchor]
    index = {n: i for i, n in enumerate(free)}
    P = len(free) + 1  # free ratings, then F
    rows = [r for r in results if r.first_wins + r.second_wins > 0]
    X = torch.zeros(len(rows), P, dtype=torch.float64)
    offset = torch.zeros(len(rows), dtype=torch.float64)
    wins = torch.tensor([r.first_wins for r in rows], dtype=torch.float64)
    losses = torch.tensor([r.second_wins for r in rows], dtype=torch.float64)
    for k, r in enumerate(rows):
        if r.first in index:
            X[k, index[r.first]] += 1
        else:
            offset[k] += anchor_elo
        if r.second in index:
            X[k, index[r.second]] -= 1
        else:
            offset[k] -= anchor_elo
        X[k, -1] = 1.0
    prior = torch.full((P,), 1.0 / prior_sd ** 2, dtype=torch.float64)
    prior[-1] = 1.0 / first_move_prior_sd ** 2
    mean = torch.zeros(P, dtype=torch.float64)
    mean[:-1] = anchor_elo

    theta = mean.clone()

    def grad_hess(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        d = C * (X @ t + offset)  # [G]
        p = torch.sigmoid(d)
        n = wins + losses
        g = C * X.T @ (wins - n * p) - prior * (t - mean)  # gradient of the log posterior
        w = n * p * (1 - p) * C * C
        h = -(X.T * w) @ X - torch.diag(prior)
        return g, h

    for _ in range(iterations):
        g, h = grad_hess(theta)
        step = torch.linalg.solve(h, g)
        theta = theta - step
        if float(step.abs().max()) < 1e-7:
            break
    _, h = grad_hess(theta)
    cov = torch.linalg.inv(-h)
    se = cov.diagonal().clamp(min=0).sqrt()
    elo = {anchor: anchor_elo, **{n: float(theta[i]) for n, i in index.items()}}
    stderr = {anchor: 0.0, **{n: float(se[i]) for n, i in index.items()}}
    games = {n: 0 for n in names}
    points = {n: 0.0 for n in names}
    for r in rows:
        games[r.first] += r.first_wins + r.second_wins
        games[r.second] += r.first_wins + r.second_wins
        points[r.first] += r.first_wins
        points[r.second] += r.second_wins
    score = {n: points[n] / games[n] if games[n] else 0.0 for n in names}
    return Ratings(elo, stderr, float(theta[-1]), float(se[-1]), games, score, anchor)

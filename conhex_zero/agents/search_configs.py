"""The search settings of each use, in one place: play (network players: arena, play, GTP, serve),
analysis (openings, the report's opening table) and the variants the convergence benchmark
compares them with.

* **play**: Gumbel search as trained (min-max rescaled completed Q, which makes the most of few
  simulations), with proven values, a floor of 0.1 under the spread that rescaling divides by,
  so that Q values a hair apart are not blown up into a full-scale preference (mctx divides by the
  spread itself; then a search that has looked at one reply follows noise down a single line), and
  a visit floor of 0.05 below the root (``SearchConfig.visit_floor``): Gumbel's in-tree rule alone
  never tries a move whose completed Q sits just below the favourite's once a node has a few
  hundred visits, so the value of a deep search could drift away from the truth (a Hex 4x4
  position: +0.51 at 64 simulations, -0.65 at 3,200, the exact solver says the mover wins). The
  floor costs nothing measurable in play (against the rule without it, 200 distinct games each:
  Hex 7x7 101 of 200 at 64 simulations and 105 at 400, ConHex 98 at 64; ``benchmarks/ab_search.py``).
* **analysis**: values that converge as simulations grow: proven values; completed Q mapped from
  its fixed range [-1, 1] (no rescaling to amplify noise); and a uniform floor under the prior of
  every node below the root (``prior_mix``), so that the side *not* to move at the root searches
  its replies with a breadth comparable to the root's Gumbel candidates. Without it the root player
  finds the replies whose refutation the network cannot see (a prior of 0.001 on the only winning
  answer), and the more simulations, the more such replies it finds: the analysis grew more
  optimistic for the side to move and drifted from the truth (``benchmarks/bench_convergence.py``;
  docs/analysis.md, "Convergence"). These settings play weaker at 64 simulations (about 40% against
  the play settings on Hex 7x7), so play keeps its own.
"""

from __future__ import annotations

import dataclasses

from conhex_zero.search.mcts import SearchConfig

PLAY = dict(scheme="gumbel", solver=True, q_min_spread=0.1, visit_floor=0.05)
ANALYSIS = dict(scheme="gumbel", solver=True, q_range="fixed", prior_mix=0.25)


def play_config(simulations: int, **changes) -> SearchConfig:
    """Network players' search: deterministic (no root noise) unless ``changes`` say otherwise."""
    return SearchConfig(**{"num_simulations": simulations, "gumbel_scale": 0.0, **PLAY, **changes})


def analysis_config(simulations: int, noise: bool = False, **changes) -> SearchConfig:
    """The opening analysis' search; ``noise`` draws Gumbel root noise (independent repeats)."""
    return SearchConfig(**{"num_simulations": simulations, "gumbel_scale": 1.0 if noise else 0.0, **ANALYSIS,
                           **changes})


VARIANTS: dict[str, dict] = {
    "play": PLAY,
    "analysis": ANALYSIS,
    "analysis-no-mix": {**ANALYSIS, "prior_mix": 0.0},
    "play-no-solver": {**PLAY, "solver": False},
    "mctx": dict(scheme="gumbel", solver=False),  # Gumbel as self-play and earlier releases ran it
    "puct": dict(scheme="puct", solver=True),
    "puct-no-solver": dict(scheme="puct", solver=False),
    "play-no-floor": {**PLAY, "visit_floor": 0.0},
}
"""Named SearchConfig settings for ``benchmarks/bench_convergence.py`` (a ``-no-tactics`` suffix
there turns the one-move tactics off)."""


def variant_config(name: str, simulations: int) -> SearchConfig:
    return dataclasses.replace(SearchConfig(num_simulations=simulations, gumbel_scale=0.0),
                               **VARIANTS[name.removesuffix("-no-tactics")])

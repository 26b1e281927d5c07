"""Evaluation of a training checkpoint: matches against the previous one and fixed references.

Win rates come with a 95% Wilson interval. Games come in colour-exchanged pairs over random
openings (``eval.opening_plies``), so they are distinct games even between deterministic players.
The network plays with Gumbel search without root noise (``eval.sims`` simulations); the
references are fixed players (random, rollout-MCTS), so their strength never moves.
"""

from __future__ import annotations

import copy
import math

from conhex_zero.agents.arena import play_match
from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.agents.game_search import GameSearch
from conhex_zero.agents.players import SearchPlayer, make_player
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.model import GraphNet
from conhex_zero.search.mcts import SearchConfig
from conhex_zero.train.config import EvalConfig


def wilson(wins: float, games: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a win rate."""
    if games == 0:
        return 0.0, 1.0
    p = wins / games
    denom = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / denom
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def network_player(env: VecEnv, model: GraphNet, sims: int, name: str, seed: int) -> SearchPlayer:
    config = SearchConfig(scheme="gumbel", num_simulations=sims, gumbel_scale=0.0)
    search = GameSearch(env, NetworkEvaluator(copy.deepcopy(model).eval(), env), config, tactics=True)
    return SearchPlayer(env, search, name, seed)


def evaluate(env: VecEnv, model: GraphNet, previous: GraphNet | None, config: EvalConfig, seed: int,
             progress: bool = True) -> dict[str, float]:
    """Metrics ``eval/vs_<opponent>/win_rate`` (+ ``_low``/``_high``) for the current network."""
    me = network_player(env, model, config.sims, "current", seed)
    opponents = []
    if previous is not None and config.previous_games:
        opponents.append(("previous", network_player(env, previous, config.sims, "previous", seed + 1),
                          config.previous_games))
    for ref in config.references:
        if config.games:
            opponents.append((ref, make_player(ref, env, seed=seed + 2), config.games))
    metrics: dict[str, float] = {}
    for name, opponent, games in opponents:
        result = play_match(env, me, opponent, games, seed=seed, progress=progress,
                            opening_plies=config.opening_plies)
        low, high = wilson(result.wins[0], result.games)
        key = f"eval/vs_{name.replace(':', '_')}"
        metrics[f"{key}/win_rate"] = result.score
        metrics[f"{key}/win_rate_low"] = low
        metrics[f"{key}/win_rate_high"] = high
        first, second = result.wins_by_colour["player1"]
        metrics[f"{key}/win_rate_first"] = first / max(1, (games + 1) // 2)
        metrics[f"{key}/win_rate_second"] = second / max(1, games // 2)
    return metrics

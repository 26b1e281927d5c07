"""Players: one interface, ``act(state, keys=None) -> actions``, for batches of running games.

Names (for the command line): ``random``; ``mcts-rollout:K`` (PUCT with uniform priors and random
rollouts, K simulations: the classic fixed reference, without our tactics); ``policy:CKPT`` (the
network's raw policy, best legal move); ``CKPT`` or ``CKPT:sims=N`` (network + Gumbel search);
``gtp:COMMAND`` (an external engine speaking the Go Text Protocol, see ``gtp_player.py``).
``keys`` are per-game random keys (``search.rng``): given, they make a game's choices independent
of the batch; omitted, they are derived from the position and the player's seed. ``history``
gives each game's moves so far (players that must replay the game, like external engines).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Protocol

import torch
from torch import Tensor

from conhex_zero.agents.evaluators import NetworkEvaluator, RolloutEvaluator, position_keys
from conhex_zero.agents.game_search import LEAN_MAX_BATCH, GameSearch
from conhex_zero.agents.search_configs import play_config
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.nn.model import GraphNet
from conhex_zero.search import rng
from conhex_zero.search.mcts import SearchConfig, SearchOutput

DEFAULT_SIMS = 64
ROLLOUT_C_PUCT = 2.0  # uniform priors spread exploration thin: a larger constant than the network's


class PlayerSpecError(ValueError):
    """A player name cannot be understood."""


MAX_SIMULATIONS = 100_000
"""The most simulations per search a player may ask for (as for training's searches)."""


def _simulations(digits: str, spec: str) -> int:
    """A simulation count from a player name, at most ``MAX_SIMULATIONS``."""
    digits = digits.lstrip("0") or "0"
    if len(digits) > len(str(MAX_SIMULATIONS)) or int(digits) > MAX_SIMULATIONS:
        raise PlayerSpecError(f"{spec[:40]!r}: at most {MAX_SIMULATIONS} simulations per search")
    return int(digits)


class Player(Protocol):
    name: str

    def act(self, state: State, keys: Tensor | None = None,
            history: list[list[int]] | None = None) -> Tensor: ...


def _keys(state: State, keys: Tensor | None, seed: int) -> Tensor:
    return keys if keys is not None else position_keys(state, seed)


class RandomPlayer:
    """A uniformly random legal action."""

    def __init__(self, env: VecEnv, seed: int = 0):
        self.env, self.seed, self.name = env, seed, "random"

    def act(self, state: State, keys: Tensor | None = None, history: list[list[int]] | None = None) -> Tensor:
        u = rng.uniform(rng.fold(_keys(state, keys, self.seed), 0x52), 0, self.env.num_actions)
        return self.env.random_actions(state, uniforms=u)


class PolicyPlayer:
    """The network's most likely legal action, no search."""

    def __init__(self, env: VecEnv, evaluator: NetworkEvaluator, name: str):
        self.env, self.evaluator, self.name = env, evaluator, name

    def act(self, state: State, keys: Tensor | None = None, history: list[list[int]] | None = None) -> Tensor:
        logits, _ = self.evaluator(state)
        return torch.where(self.env.legal_mask(state), logits, -float("inf")).argmax(1)


class SearchPlayer:
    """An evaluator plus batched MCTS; ``last`` keeps the latest search output for analysis."""

    def __init__(self, env: VecEnv, game_search: GameSearch, name: str, seed: int = 0):
        self.env, self.search, self.name, self.seed = env, game_search, name, seed
        self.last: SearchOutput | None = None

    def act(self, state: State, keys: Tensor | None = None, history: list[list[int]] | None = None) -> Tensor:
        self.last = self.search.run(state, rng.fold(_keys(state, keys, self.seed), 0x53))
        return self.last.action


def rollout_config(simulations: int, root_noise: bool = False) -> SearchConfig:
    """The search of the ``mcts-rollout:K`` reference: PUCT over uniform priors, every action tried
    once before any is revisited; ``root_noise`` adds Dirichlet noise (for varied analysis games)."""
    return SearchConfig(scheme="puct", num_simulations=simulations, c_puct=ROLLOUT_C_PUCT, fpu=1.0,
                        dirichlet_fraction=0.25 if root_noise else 0.0, dirichlet_alpha=0.3,
                        solver=False, leaves_per_call=1)  # the fixed reference stays as it was measured


def rollout_player(env: VecEnv, simulations: int, seed: int = 0, root_noise: bool = False) -> SearchPlayer:
    gs = GameSearch(env, RolloutEvaluator(env, seed=seed), rollout_config(simulations, root_noise), tactics=False,
                    lean_max_batch=LEAN_MAX_BATCH)  # one leaf per call there: the same results either way
    return SearchPlayer(env, gs, f"mcts-rollout:{simulations}", seed)


def network_player(env: VecEnv, source: GraphNet | str | Path, simulations: int = DEFAULT_SIMS, seed: int = 0,
                   config: SearchConfig | None = None, name: str | None = None) -> SearchPlayer:
    """A network with the play search (``search_configs.play_config``: Gumbel, proven values; no root
    noise unless ``config`` says so), from a model (copied, so later training does not change the
    player) or a checkpoint file."""
    if isinstance(source, GraphNet):
        model = copy.deepcopy(source).eval()
        name = name or source.name
    else:
        model = load_checkpoint(source, env.device).model
        name = name or str(source)
    config = config or play_config(simulations)
    gs = GameSearch(env, NetworkEvaluator(model, env), config, tactics=True, lean_max_batch=LEAN_MAX_BATCH)
    label = name if isinstance(source, GraphNet) else f"{name}:sims={config.num_simulations}"
    return SearchPlayer(env, gs, label, seed)


def make_player(spec: str, env: VecEnv, seed: int = 0, simulations: int | None = None,
                gtp_timeout: float = 10.0, gtp_parallel: int = 4) -> Player:
    """A player from its name (see the module docstring)."""
    text = spec.strip()
    if text == "random":
        return RandomPlayer(env, seed)
    if text.startswith("gtp:"):
        from conhex_zero.agents.gtp_player import GTPPlayer

        command = text[len("gtp:"):].strip()
        if not command:
            raise PlayerSpecError("gtp: needs the engine's command line, e.g. gtp:\"mohex --seed 1\"")
        return GTPPlayer(env, command, timeout=gtp_timeout, parallel=gtp_parallel)
    m = re.fullmatch(r"mcts-rollout:(\d+)", text)
    if m:
        k = _simulations(m.group(1), text)
        if k < 1:
            raise PlayerSpecError("mcts-rollout needs at least 1 simulation")
        return rollout_player(env, k, seed)
    if text.startswith("mcts-rollout"):
        raise PlayerSpecError(f"{spec!r}: write mcts-rollout:K with K simulations, e.g. mcts-rollout:200")
    if text.startswith("policy:"):
        path = text[len("policy:"):]
        ckpt = load_checkpoint(path, env.device)
        return PolicyPlayer(env, NetworkEvaluator(ckpt.model, env), f"policy:{path}")
    m = re.fullmatch(r"(.+):sims=(\d+)", text)
    path, sims = (m.group(1), _simulations(m.group(2), text)) if m else (text, simulations or DEFAULT_SIMS)
    if sims > MAX_SIMULATIONS:
        raise PlayerSpecError(f"{sims} simulations: at most {MAX_SIMULATIONS} per search")
    if not Path(path).exists():
        if m or path.endswith(".pt") or "/" in path or "\\" in path:  # meant as a checkpoint file
            raise PlayerSpecError(f"no checkpoint file at {path}")
        raise PlayerSpecError(f"unknown player {spec!r}: expected random, mcts-rollout:K, policy:CKPT, "
                              f"gtp:COMMAND, or the path of a checkpoint (optionally CKPT:sims=N)")
    return network_player(env, path, sims, seed)

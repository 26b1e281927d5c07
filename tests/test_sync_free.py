"""The hot path has no host synchronisation and no graph break: proved on the CPU.

A CUDA graph (or a compiled kernel) can only absorb code that never makes the host wait for the
device and never branches in Python on a tensor's value. ``torch.compile(fullgraph=True)`` refuses
exactly such code (a ``.item()``, a ``nonzero``, a ``bool(tensor)`` is a graph break, and a graph
break is an error with ``fullgraph=True``), so tracing one env step, one search simulation and one
whole self-play move with it (``backend="eager"``: traced, not compiled) proves they are free of
them. The profiler then counts the ops that synchronise in a few self-play moves: none.
"""

import warnings

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.agents.game_search import GameSearch
from conhex_zero.bench.timing import SYNC_OPS
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.encode import NUM_FEATURES
from conhex_zero.nn.model import GraphNet, ModelConfig
from conhex_zero.search import rng
from conhex_zero.search.mcts import SearchConfig, _Search
from conhex_zero.train.config_load import load_config
from conhex_zero.train.replay import ReplayBuffer
from conhex_zero.train.selfplay import SelfPlay, SelfPlayStats

SPECS = ["conhex", "hex-4:mirror=2"]


def setup(spec: str):
    torch._dynamo.reset()
    env = VecEnv(spec)
    torch.manual_seed(0)
    model = GraphNet(ModelConfig(2, 16), NUM_FEATURES).eval()
    state = env.initial_state(4)
    state = env.step(state, env.random_actions(state, torch.Generator().manual_seed(0)))
    return env, NetworkEvaluator(model, env), state


def traced(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Dynamo's note on the lru_cache of the halving table
        return torch.compile(fn, fullgraph=True, backend="eager")


@pytest.mark.parametrize("spec", SPECS)
def test_an_env_step_is_one_graph(spec):
    env, _, state = setup(spec)
    action = env.random_actions(state, torch.Generator().manual_seed(1))
    assert traced(env.step)(state, action).equal(env.step(state, action))


@pytest.mark.parametrize("spec", SPECS)
def test_a_search_simulation_is_one_graph(spec):
    env, evaluator, state = setup(spec)
    gs = GameSearch(env, evaluator, SearchConfig(num_simulations=8))
    with torch.no_grad():
        run = _Search(gs.root(state), gs.recurrent, gs.config, rng.make_keys(0, 4))
        run.simulate(0)
        traced(run.simulate)(1)
    assert int(run.tree.visits[:, 0].min()) == 3  # the root's own evaluation and two simulations


@pytest.mark.parametrize("spec", SPECS)
def test_a_selfplay_move_is_one_graph_and_never_synchronises(spec):
    env, evaluator, _ = setup(spec)
    config = load_config(None, [f"game={spec}", "model=l2h16", "selfplay.games=4", "selfplay.full_sims=4",
                                "selfplay.cheap_sims=2", "selfplay.full_fraction=0.5", "replay.capacity=256",
                                "replay.min_size=16", "selfplay.positions_per_iteration=16"])
    selfplay = SelfPlay(env, config.selfplay, evaluator, seed=0)
    replay = ReplayBuffer(env, 256)
    stats = SelfPlayStats()
    with torch.no_grad():
        selfplay.step(replay, stats)
        traced(selfplay.step)(replay, stats)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(4):
                selfplay.step(replay, stats)
    assert stats.steps == 6
    assert [e.name for e in prof.events() if e.name in SYNC_OPS] == []

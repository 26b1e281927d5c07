"""Throughput of the network and of the batched search, and where the search's time goes.

Positions are taken from random games (20 plies in), the network is freshly initialised at the
requested size (speed does not depend on the weights), and the search is the one players use
(Gumbel, exact one-move tactics). The evaluator is timed separately (with device syncs), so the
fraction of search time spent in the network versus tree bookkeeping and rules is reported.
"""

from __future__ import annotations

import time

import torch

from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.agents.game_search import GameSearch
from conhex_zero.bench.env_bench import torch_threads
from conhex_zero.env import allocator
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.encode import NUM_FEATURES
from conhex_zero.nn.model import GraphNet, ModelConfig, num_parameters
from conhex_zero.search import rng
from conhex_zero.search.mcts import SearchConfig


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def sample_positions(env: VecEnv, batch: int, plies: int = 20, seed: int = 0) -> State:
    """Running positions ``plies`` moves into random games (fewer where games ended)."""
    gen = torch.Generator(device=env.device).manual_seed(seed)
    state = env.initial_state(batch)
    for _ in range(plies):
        nxt = env.step(state, env.random_actions(state, gen))
        state = state.where(~nxt.done, nxt)  # keep the last running position
    return state


class TimedEvaluator:
    """Wraps an evaluator and accumulates the wall time spent in it."""

    def __init__(self, inner: NetworkEvaluator, device: torch.device):
        self.inner, self.device, self.seconds, self.calls, self.positions = inner, device, 0.0, 0, 0

    def __call__(self, state: State):
        _sync(self.device)
        start = time.perf_counter()
        out = self.inner(state)
        _sync(self.device)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        self.positions += state.batch_size
        return out


def _model(name: str, device: torch.device) -> GraphNet:
    torch.manual_seed(0)
    return GraphNet(ModelConfig.from_name(name), NUM_FEATURES).to(device).eval()


def bench_network(game: str, model: str, batch: int, device: str = "cpu", seconds: float = 3.0,
                  threads: int | None = None) -> dict:
    """Network evaluations per second (encoding included) on positions of ``game``."""
    env = VecEnv(game, device=device)
    with torch_threads(threads):
        evaluator = NetworkEvaluator(_model(model, env.device), env)
        state = sample_positions(env, batch)
        evaluator(state)
        _sync(env.device)
        runs, start = 0, time.perf_counter()
        while runs < 2 or time.perf_counter() - start < seconds:
            evaluator(state)
            runs += 1
        _sync(env.device)
        elapsed = time.perf_counter() - start
        used = torch.get_num_threads()
    return {"game": env.game.spec, "model": model, "parameters": num_parameters(evaluator.model),
            "batch": batch, "device": str(env.device), "threads": used, "evals_per_s": runs * batch / elapsed,
            "seconds": round(elapsed, 3), "torch": torch.__version__, "allocator_tuned": allocator._applied}


def bench_search(game: str, model: str, batch: int, simulations: int = 64, device: str = "cpu",
                 scheme: str = "gumbel", seconds: float = 3.0, threads: int | None = None) -> dict:
    """Simulations per second of full searches, and the share of time spent in the network."""
    env = VecEnv(game, device=device)
    with torch_threads(threads):
        timed = TimedEvaluator(NetworkEvaluator(_model(model, env.device), env), env.device)
        gs = GameSearch(env, timed, SearchConfig(scheme=scheme, num_simulations=simulations), tactics=True)
        state = sample_positions(env, batch)
        gs.run(state[: min(batch, 8)], rng.make_keys(0, min(batch, 8)))  # warm up
        timed.seconds, timed.calls, timed.positions = 0.0, 0, 0
        _sync(env.device)
        searches, start = 0, time.perf_counter()
        while searches < 1 or time.perf_counter() - start < seconds:
            gs.run(state, rng.make_keys(searches * batch, batch))
            searches += 1
        _sync(env.device)
        elapsed = time.perf_counter() - start
        used = torch.get_num_threads()
    sims = searches * batch * simulations
    return {"game": env.game.spec, "model": model, "batch": batch, "simulations": simulations,
            "scheme": scheme, "device": str(env.device), "threads": used, "searches": searches,
            "seconds": round(elapsed, 3), "sims_per_s": sims / elapsed,
            "positions_per_s": searches * batch / elapsed, "evals_per_s": timed.positions / elapsed,
            "network_fraction": timed.seconds / elapsed, "torch": torch.__version__,
            "allocator_tuned": allocator._applied}

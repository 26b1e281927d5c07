"""Throughput of the network and of the batched search, and where the search's time goes.

Positions are taken from random games (20 plies in), the network is freshly initialised at the
requested size (speed does not depend on the weights), and the search is the one players use
(Gumbel, exact one-move tactics). ``bench_network`` times the model alone on encoded positions
(bf16 autocast on CUDA, optionally compiled) and the encoder apart; ``bench_search`` times the
model call inside the search (CUDA events on a GPU, no added synchronisation), so the fraction of
search time spent in the network versus tree bookkeeping, rules and encoding is reported.
"""

from __future__ import annotations

import contextlib
import time

import torch

from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.agents.game_search import LEAN_MAX_BATCH, GameSearch
from conhex_zero.agents.leaf_step import NativeLeaf
from conhex_zero.agents.search_configs import play_config
from conhex_zero.bench.env_bench import torch_threads
from conhex_zero.bench.timing import DeviceTimer, synchronize
from conhex_zero.env import allocator
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn import native
from conhex_zero.nn.encode import Encoder
from conhex_zero.nn.model import GraphNet, ModelConfig, num_parameters
from conhex_zero.search import rng


def sample_positions(env: VecEnv, batch: int, plies: int = 20, seed: int = 0) -> State:
    """Running positions ``plies`` moves into random games (fewer where games ended)."""
    gen = torch.Generator(device=env.device).manual_seed(seed)
    state = env.initial_state(batch)
    for _ in range(plies):
        nxt = env.step(state, env.random_actions(state, gen))
        state = state.where(~nxt.done, nxt)  # keep the last running position
    return state


def _model(name: str, device: torch.device) -> GraphNet:
    torch.manual_seed(0)
    return GraphNet(ModelConfig.from_name(name)).to(device).eval()


def _timed_loop(fn, device: torch.device, seconds: float) -> tuple[int, float]:
    """Call ``fn`` (after one warm-up call) until ``seconds`` have passed; (calls, elapsed)."""
    fn()
    synchronize(device)
    runs, start = 0, time.perf_counter()
    while runs < 2 or time.perf_counter() - start < seconds:
        fn()
        runs += 1
    synchronize(device)
    return runs, time.perf_counter() - start


def bench_network(game: str, model: str, batch: int, device: str = "cpu", seconds: float = 3.0,
                  threads: int | None = None, compile: bool = False, backend: str | None = "eager") -> dict:
    """Network evaluations per second (the model alone), and encodings per second apart.
    ``backend`` (``nn.native``; None: the process's default) ``auto``/``aoti``: the model's native
    package on a CPU (built into the cache first if needed, not timed)."""
    env = VecEnv(game, device=device)
    with torch_threads(threads):
        net = _model(model, env.device)
        encoder = Encoder(env, connection=net.config.connection)
        state = sample_positions(env, batch)
        encoded = encoder(state)
        packaged = None
        if not compile and native.wants_native(backend, env.device):
            packaged = native.native_network(net, encoder.graph, encoder(sample_positions(env, 2)), model)
        forward = torch.compile(net) if compile else (packaged or net)
        autocast = (torch.autocast("cuda", dtype=torch.bfloat16) if env.device.type == "cuda"
                    else contextlib.nullcontext())

        @torch.no_grad()
        def network() -> None:
            with autocast:
                forward(encoded, encoder.graph)

        runs, elapsed = _timed_loop(network, env.device, seconds)
        enc_runs, enc_elapsed = _timed_loop(lambda: encoder(state), env.device, max(seconds / 3, 0.5))
        used = torch.get_num_threads()
    return {"game": env.game.spec, "model": model, "parameters": num_parameters(net),
            "batch": batch, "device": str(env.device), "threads": used, "compiled": compile,
            "backend": "aoti" if packaged is not None else "eager",
            "dtype": "bfloat16" if env.device.type == "cuda" else "float32",
            "evals_per_s": runs * batch / elapsed, "encodings_per_s": enc_runs * batch / enc_elapsed,
            "seconds": round(elapsed, 3), "torch": torch.__version__, "allocator_tuned": allocator._applied}


def bench_search(game: str, model: str, batch: int, simulations: int = 64, device: str = "cpu",
                 scheme: str = "gumbel", seconds: float = 3.0, threads: int | None = None, tree: str = "auto",
                 backend: str | None = "eager") -> dict:
    """Simulations per second of full searches (the players' search settings), and the share of
    time spent in the network. ``evals_per_s``: positions the network evaluated per second (the
    lean search evaluates only new leaves, several per call, so fewer than one per simulation:
    ``evals_per_sim``); ``network_us_per_eval``: the network's time per evaluated position.
    ``tree``: ``auto`` (as players: the lean search up to ``LEAN_MAX_BATCH`` positions, the batched
    one above), ``lean`` or ``batched``. ``backend``: as ``bench_network``'s."""
    env = VecEnv(game, device=device)
    lean_max = {"auto": LEAN_MAX_BATCH, "lean": max(batch, 1), "batched": 0}[tree]
    with torch_threads(threads):
        timer = DeviceTimer(env.device)
        evaluator = NetworkEvaluator(_model(model, env.device), env, timer=timer, backend=backend, label=model)
        gs = GameSearch(env, evaluator, play_config(simulations, scheme=scheme), tactics=True, lean_max_batch=lean_max)
        state = sample_positions(env, batch)
        gs.run(state[: min(batch, 8)], rng.make_keys(0, min(batch, 8), device=env.device))  # warm up
        synchronize(env.device)
        timer.reset()
        evaluator.evaluated = 0
        searches, start = 0, time.perf_counter()
        while searches < 1 or time.perf_counter() - start < seconds:
            gs.run(state, rng.make_keys(searches * batch, batch, device=env.device))
            searches += 1
        synchronize(env.device)
        elapsed = time.perf_counter() - start
        network = timer.seconds()
        used = torch.get_num_threads()
    sims = searches * batch * simulations
    return {"game": env.game.spec, "model": model, "batch": batch, "simulations": simulations,
            "scheme": scheme, "backend": "aoti" if evaluator.native is not None else "eager",
            "leaf": "aoti" if isinstance(gs.leaf, NativeLeaf) else "eager",
            "tree": "lean" if batch <= lean_max else "batched", "device": str(env.device), "threads": used,
            "searches": searches,
            "seconds": round(elapsed, 3), "sims_per_s": sims / elapsed,
            "positions_per_s": searches * batch / elapsed, "evals_per_s": evaluator.evaluated / elapsed,
            "evals_per_sim": evaluator.evaluated / sims, "network_calls_per_s": timer.calls / elapsed,
            "network_us_per_eval": 1e6 * network / max(evaluator.evaluated, 1),
            "network_fraction": network / elapsed, "torch": torch.__version__,
            "allocator_tuned": allocator._applied}

"""Throughput of the real self-play loop of a training config (``conhex-zero bench selfplay``).

The config's own ``SelfPlay`` (its games, searches, playout cap, resignation, replay writes) runs
with a freshly initialised network of the config's size for about ``seconds``, after a warm-up.
Reported: positions (moves) and simulations per second, the network's share of the time (the model
call alone, timed with CUDA events on a GPU), batched self-play steps (``steps``: all that the benchmark ran, warm-up
included, so that a profiler wrapped around the command can divide by it; ``timed_steps``: those
timed), host-synchronising ops per step (counted under torch's profiler over a few extra steps),
peak memory, and the network's settings (``precision``, ``compile``, ``cuda_graphs``; with compile, the
first call's seconds, compilation included: ``compile_seconds``).
"""

from __future__ import annotations

import time

import torch

from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.bench.env_bench import torch_threads
from conhex_zero.bench.timing import DeviceTimer, count_syncs, peak_memory_mb, synchronize
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.model import GraphNet, ModelConfig
from conhex_zero.train.config import TrainConfig
from conhex_zero.train.replay import ReplayBuffer
from conhex_zero.train.selfplay import SelfPlay, SelfPlayStats


def bench_selfplay(config: TrainConfig, seconds: float = 10.0, warmup_steps: int = 3, sync_steps: int = 3,
                   threads: int | None = None, backend: str | None = "eager") -> dict:
    """Run the config's self-play for about ``seconds``; see the module docstring. ``backend``:
    the network's (``nn.native``), as training's ``selfplay.backend`` runs it (``aoti``: the package
    that takes the trained weights at run time, one per network size and board; None: the process's
    default)."""
    device = torch.device(config.device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    with torch_threads(threads):
        env = VecEnv(config.game, device)
        torch.manual_seed(config.seed)
        model = GraphNet(ModelConfig.from_name(config.model)).to(device).eval()
        timer = DeviceTimer(device)
        evaluator = NetworkEvaluator(model, env, compile=config.selfplay.compile, timer=timer,
                                     precision=config.selfplay.precision, backend=backend, label=config.model,
                                     live_weights=True)
        selfplay = SelfPlay(env, config.selfplay, evaluator, config.seed)
        replay = ReplayBuffer(env, config.replay.capacity, device)
        scratch = SelfPlayStats()
        for _ in range(warmup_steps):
            selfplay.step(replay, scratch)
        synchronize(device)
        timer.reset()
        stats = SelfPlayStats()
        start = time.perf_counter()
        while stats.steps < 2 or time.perf_counter() - start < seconds:
            selfplay.step(replay, stats)
        synchronize(device)
        elapsed = time.perf_counter() - start
        network = timer.seconds()
        syncs = count_syncs(lambda: [selfplay.step(replay, scratch) for _ in range(sync_steps)])
        used_threads = torch.get_num_threads()
    return {
        "game": env.game.spec, "model": config.model, "games": config.selfplay.games,
        "device": str(device), "threads": used_threads, "seconds": round(elapsed, 3),
        "steps": warmup_steps + stats.steps + sync_steps, "timed_steps": stats.steps,
        "positions_per_s": stats.moves / elapsed, "simulations_per_s": stats.simulations / elapsed,
        "recorded_per_s": stats.recorded / elapsed, "network_fraction": network / elapsed,
        "syncs_per_step": None if syncs is None else syncs / sync_steps,
        "peak_memory_mb": round(peak_memory_mb(device), 1), "torch": torch.__version__,
        "precision": config.selfplay.precision, "compile": config.selfplay.compile,
        "backend": "aoti" if evaluator.native is not None else "eager",
        "cuda_graphs": config.selfplay.cuda_graphs,
        "compile_seconds": None if evaluator.compile_seconds is None else round(evaluator.compile_seconds, 2),
    }

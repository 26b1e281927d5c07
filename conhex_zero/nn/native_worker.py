"""The child process of a background build (``native_background``): builds the package a job file
describes into the cache, under its lock, and removes the job.

    python -m conhex_zero.nn.native_worker JOB.pt     # what a command starts (not for people)

A job names the game, the encoder's options and, for a network, its size, options and weights; the
worker rebuilds what it compiles from them, checks that the package's key is the one its parent asked
for (the same code), and builds. A failure leaves ``<key>.failed.json`` (``native_cache``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Callable

import torch

from conhex_zero.nn import native, native_cache


def _network_build(job: dict) -> tuple[str, Callable[[Path], None]]:
    from conhex_zero.env.vec_env import VecEnv
    from conhex_zero.nn.encode import Encoder
    from conhex_zero.nn.model import GraphNet, ModelConfig

    env = VecEnv(job["game"])
    config = ModelConfig(**job["model"])
    encoder = Encoder(env, connection=config.connection)
    model = GraphNet(config).eval()
    model.load_state_dict(job["weights"])
    sample = encoder(env.initial_state(2))
    return native.cache_key(model, encoder.graph), lambda target: native._build(model, encoder.graph, sample, target)


def _leaf_build(job: dict) -> tuple[str, Callable[[Path], None]]:
    from conhex_zero.agents import leaf_step
    from conhex_zero.env.vec_env import VecEnv
    from conhex_zero.nn.encode import Encoder

    env = VecEnv(job["game"])
    encoder = Encoder(env, connection=bool(job["connection"]))
    return leaf_step.cache_key(env, encoder), lambda target: leaf_step._build(env, encoder, target)


def main(argv: list[str] | None = None) -> int:
    """The child: build the package a job file describes into the cache, under its lock."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m conhex_zero.nn.native_worker JOB.pt", file=sys.stderr)
        return 2
    job_file = Path(argv[0])
    try:
        job = torch.load(job_file, weights_only=True)
        key, build = (_network_build if job["kind"] == "network" else _leaf_build)(job)
        if key != job["key"]:
            print(f"the job asks for {job['key']} but this code builds {key}: nothing built", file=sys.stderr)
            return 1
        started = time.perf_counter()
        built = native_cache.build_into_cache(key, build)
        print(f"{'built' if built else 'already in the cache:'} {key} in {time.perf_counter() - started:.1f} s")
        return 0
    except Exception as err:
        print(f"background build failed: {native_cache._reason(err)}", file=sys.stderr)
        return 1
    finally:
        job_file.unlink(missing_ok=True)


if __name__ == "__main__":
    sys.exit(main())

"""pgx's jitted Hex as a speed reference (optional: ``pip install -e .[bench]`` brings pgx and JAX).

The same measurement as ``env_bench``: random games at a fixed batch, finished games replaced at
once, only steps of running games counted. pgx's Hex always has the swap action (legal on move 2);
its random player samples uniformly among legal actions inside the same jitted program.
"""

from __future__ import annotations

import os
import time


def pgx_available() -> bool:
    try:
        import jax  # noqa: F401
        import pgx  # noqa: F401
    except ImportError:
        return False
    return True


SINGLE_THREAD_XLA = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
"""``XLA_FLAGS`` that keep JAX's CPU backend on one thread (set before JAX starts: see
``benchmarks/bench_vs_pgx.py``, which runs pgx in a subprocess for that)."""


def xla_flags(threads: int) -> str:
    """``XLA_FLAGS`` for JAX's CPU backend on ``threads`` threads (0: XLA's default, one per core)."""
    if threads == 1:
        return SINGLE_THREAD_XLA
    if threads == 0:
        return ""
    return f"--xla_cpu_multi_thread_eigen=true intra_op_parallelism_threads={threads}"


def bench_pgx_hex(batch: int, seconds: float = 3.0, size: int = 11, seed: int = 0) -> dict:
    """Live steps per second of pgx's Hex at ``batch`` on JAX's default device."""
    import jax
    import jax.numpy as jnp
    import pgx

    env = pgx.make("hex", size=size) if size != 11 else pgx.make("hex")
    init = jax.vmap(env.init)
    step = jax.vmap(env.step)

    @jax.jit
    def one_step(state, key):
        k_act, k_reset = jax.random.split(key)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(k_act, logits, axis=-1)
        live = ~(state.terminated | state.truncated)
        state = step(state, action)
        done = state.terminated | state.truncated
        fresh = init(jax.random.split(k_reset, batch))
        state = jax.tree_util.tree_map(
            lambda new, old: jnp.where(done.reshape((-1,) + (1,) * (old.ndim - 1)), new, old), fresh, state)
        return state, live.sum()

    key = jax.random.PRNGKey(seed)
    key, sub = jax.random.split(key)
    state = init(jax.random.split(sub, batch))
    for _ in range(20):  # compile and warm up
        key, sub = jax.random.split(key)
        state, _ = one_step(state, sub)
    jax.block_until_ready(state)
    live_total = 0
    steps = 0
    start = time.perf_counter()
    while True:
        lives = []
        for _ in range(10):
            key, sub = jax.random.split(key)
            state, live = one_step(state, sub)
            lives.append(live)
        live_total += int(sum(int(x) for x in lives))
        steps += 10
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    return {
        "game": f"pgx hex {size}x{size} (swap legal on move 2)",
        "batch": batch,
        "device": str(jax.devices()[0]),
        "seconds": round(elapsed, 3),
        "batched_steps": steps,
        "live_steps": live_total,
        "steps_per_s": live_total / elapsed,
        "jax": jax.__version__,
        "pgx": pgx.__version__,
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
    }

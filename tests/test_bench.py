"""The benchmark's permutation player plays only legal moves, so the engine figure is honest."""

import pytest
import torch

from conhex_zero.bench.env_bench import PermutationPlayer, bench_env
from conhex_zero.env.vec_env import VecEnv


@pytest.mark.parametrize("spec, swap_prob", [
    ("conhex", 1.0), ("conhex", 0.5), ("hex-7:swap", 1.0), ("hex-5:forbid=1", None),
    ("hex-6:random=1,swap", 0.5), ("hex-5:extra-stone", None),
])
def test_permutation_player_is_legal(spec, swap_prob):
    env = VecEnv(spec)
    batch = 128
    player = PermutationPlayer(env, batch, seed=3, swap_prob=swap_prob)
    gen = torch.Generator().manual_seed(3)
    state = env.reset(batch, gen)
    finished = 0
    swaps = 0
    for _ in range(4 * env.num_holes):
        live = ~state.done
        action = player.actions(state)
        swaps += int((action == env.game.swap_action)[live].sum())
        state = env.step(state, action)
        player.advance(action, live)
        done = state.done.nonzero().squeeze(1)
        finished += done.numel()
        if done.numel():
            state = env.reset_done(state, gen)
            player.restart(done)
        # Every action the player proposes next must be legal.
        env.check_actions(state, player.actions(state))
    assert finished > batch
    if swap_prob == 1.0:
        assert swaps > batch


def test_bench_env_counts_only_live_steps():
    r = bench_env("hex-4", 32, seconds=0.2, seed=1)
    assert r["live_steps"] == r["batched_steps"] * 32  # finished games are replaced at once
    assert r["steps_per_s"] > 0 and r["games_per_s"] > 0

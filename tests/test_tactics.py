"""One-move tactics against brute force: try every move, look at the result."""

import pytest
import torch

from conhex_zero.env.tactics import Tactics
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.env.notation import play_moves
from helpers import random_actions


def random_positions(spec, games, seed, max_plies=None):
    """Running positions at random depths from random games."""
    env = VecEnv(spec)
    gen = torch.Generator().manual_seed(seed)
    state = env.initial_state(games)
    stop = torch.randint(0, max_plies or env.num_holes, (games,), generator=gen)
    kept = env.initial_state(games)
    for ply in range(env.num_holes):
        take = (state.ply == stop) & ~state.done
        kept = kept.where(take, state)
        state = env.step(state, random_actions(env, state, gen))
    return env, kept


def brute_force_wins(env, state, player_moves_now=True):
    B, H = state.batch_size, env.num_holes
    out = torch.zeros(B, H, dtype=torch.bool)
    legal = env.legal_mask(state)
    for h in range(H):
        after = env.step(state, torch.full((B,), h))
        out[:, h] = legal[:, h] & (after.winner == state.to_move)
    return out


@pytest.mark.parametrize("spec", ["conhex", "conhex:noswap", "hex-5", "hex-9:swap", "hex-6:extra-stone"])
def test_winning_moves_match_brute_force(spec):
    env, state = random_positions(spec, 400, seed=1)
    tactics = Tactics(env)
    wins = tactics.winning_moves(state)
    want = brute_force_wins(env, state)
    assert torch.equal(wins, want)
    assert want.any()  # the sample has winning moves to find


@pytest.mark.parametrize("spec", ["conhex", "hex-6"])
def test_winning_moves_of_the_opponent(spec):
    env, state = random_positions(spec, 300, seed=2)
    tactics = Tactics(env)
    opp = 1 - state.to_move
    flipped = type(state)(**{**state.__dict__, "to_move": opp})
    assert torch.equal(tactics.winning_moves(state, opp), brute_force_wins(env, flipped))


def brute_force_losing(env, state):
    B, A = state.batch_size, env.num_actions
    legal = env.legal_mask(state)
    out = torch.zeros(B, A, dtype=torch.bool)
    for a in range(A):
        after = env.step(state, torch.full((B,), a))
        opp_wins = brute_force_wins(env, after).any(1)
        out[:, a] = legal[:, a] & opp_wins & (after.to_move != state.to_move)
    return out


@pytest.mark.parametrize("spec", ["conhex", "hex-5:swap", "hex-5:extra-stone"])
def test_losing_actions_match_brute_force(spec):
    env, state = random_positions(spec, 150, seed=3)
    got = Tactics(env).losing_actions(state)
    want = brute_force_losing(env, state)
    assert torch.equal(got, want)
    assert want.any()


def test_focus_prefers_wins_then_safe_moves():
    env = VecEnv("hex-3")
    tactics = Tactics(env)
    # X can win at a3 (a1 a2 held): focus is exactly the win.
    s = play_moves(env, ["a1", "c1", "a2", "c2"])
    focus = tactics.focus(s)[0]
    assert torch.nonzero(focus).flatten().tolist() == [env.game.parse_move("a3")]
    # O threatens c3 (c1 c2 held ... O connects left-right, so use a row): O has a2 b2, X to move.
    s = play_moves(env, ["a1", "a2", "c1", "b2"])
    focus = torch.nonzero(tactics.focus(s)[0]).flatten().tolist()
    assert focus == [env.game.parse_move("c2")]  # the only move that stops a2-b2-c2

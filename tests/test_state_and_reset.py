"""State containers (indexing, cloning, selecting) and resets (in place, random openings)."""

import torch

from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.env.notation import play_moves
from helpers import random_actions


def test_indexing_cloning_and_concatenation():
    env = VecEnv("conhex")
    gen = torch.Generator().manual_seed(0)
    state = env.initial_state(6)
    for _ in range(5):
        state = env.step(state, random_actions(env, state, gen))
    assert state[2].batch_size == 1 and state[-1].equal(state[5:6])
    assert State.cat([state[:2], state[2:]]).equal(state)
    copy = state.clone()
    copy.holes[0, 0] = 1
    assert not copy.equal(state)
    picked = state[torch.tensor([4, 1])]
    assert picked[0].equal(state[4]) and picked[1].equal(state[1])
    fresh = env.initial_state(1)
    mixed = state.where(torch.tensor([True, False, True, False, False, False]), fresh)
    assert mixed[0].equal(fresh) and mixed[1].equal(state[1]) and mixed[2].equal(fresh)
    put = state.put(torch.tensor([3]), fresh)
    assert put[3].equal(fresh) and put[2].equal(state[2]) and not state[3].equal(fresh)


def test_reset_done_replaces_only_finished_games():
    env = VecEnv("hex-3")
    won = play_moves(env, ["a1", "c1", "a2", "c2", "a3"])
    running = play_moves(env, ["b2"])
    state = State.cat([won, running, won])
    out = env.reset_done(state)
    assert out[0].equal(env.initial_state(1)) and out[2].equal(env.initial_state(1))
    assert out[1].equal(running)


def test_random_opening_pieces():
    env = VecEnv("hex-7:random=2,swap")
    gen = torch.Generator().manual_seed(1)
    state = env.reset(64, gen)
    assert not bool(state.done.any())
    assert state.ply.tolist() == [4] * 64 and state.to_move.tolist() == [0] * 64
    assert ((state.holes == 0).sum(1) == 2).all() and ((state.holes == 1).sum(1) == 2).all()
    assert len({tuple(row) for row in state.holes.tolist()}) > 60  # openings differ
    legal = env.legal_mask(state)
    assert not legal[:, env.game.swap_action].any()
    state = env.step(state, random_actions(env, state, gen, swap_prob=0.0))
    assert env.legal_mask(state)[:, env.game.swap_action].all()  # the second player's first move
    again = env.reset(64, torch.Generator().manual_seed(1))
    assert again.equal(env.reset(64, torch.Generator().manual_seed(1)))


def test_random_openings_never_start_finished():
    env = VecEnv("hex-2:random=1")  # one piece each can never connect on 2x2, but try many
    state = env.reset(500, torch.Generator().manual_seed(0))
    assert not bool(state.done.any())
    env = VecEnv("hex-3:random=3")  # three pieces each often connect: those are drawn again
    gen = torch.Generator().manual_seed(0)
    raw = env.initial_state(2000)
    for _ in range(6):
        raw = env.step(raw, env.random_actions(raw, gen))
    assert raw.done.float().mean() > 0.1  # so the redraw really happens below
    state = env.reset(2000, gen)
    assert not bool(state.done.any()) and (state.ply == 6).all()


def test_reset_done_in_place_overwrites_only_finished_games():
    env = VecEnv("hex-3")
    won = play_moves(env, ["a1", "c1", "a2", "c2", "a3"])
    running = play_moves(env, ["b2"])
    state = State.cat([running, won])
    out = env.reset_done(state, in_place=True)
    assert out.holes is state.holes  # the same tensors, overwritten
    assert out[0].equal(running) and out[1].equal(env.initial_state(1))


def test_random_actions_are_uniform_over_the_legal_ones_and_zero_when_done():
    env = VecEnv("hex-3:swap")
    gen = torch.Generator().manual_seed(0)
    state = env.initial_state(9000)
    state = env.step(state, torch.full((9000,), 4))  # b2: eight empty holes and the swap are legal
    counts = torch.bincount(env.random_actions(state, gen), minlength=env.num_actions)
    legal = env.legal_mask(state)[0]
    assert counts[~legal].sum() == 0
    assert counts[legal].min() > 900 and counts[legal].max() < 1100  # 1000 expected, sd ~30
    assert env.random_actions(state, gen, swap=False).eq(env.game.swap_action).sum() == 0
    for _ in range(9):  # every game of Hex 3x3 ends within nine moves
        state = env.step(state, env.random_actions(state, gen))
    assert bool(state.done.all())
    assert env.random_actions(state, gen).eq(0).all()

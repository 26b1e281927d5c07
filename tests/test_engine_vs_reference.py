"""Random games: the vectorised engine (batch B and batch 1) against the plain-Python reference.

After every move of every game the two engines must agree on every piece, every cell owner, the
winner, the ply and the player to move; legal-action masks must agree too. Swap is taken half the
time it is legal so that the pie rule is well covered.
"""

import zlib

import pytest
import torch

from conhex_zero.env.reference import ReferenceGame
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from helpers import assert_same, random_actions

CASES = [  # (spec, games)
    ("conhex", 600),
    ("conhex:noswap", 300),
    ("conhex:random=2", 150),
    ("conhex:noswap,forbid=3", 100),
    ("hex-2", 200),
    ("hex-3:swap", 300),
    ("hex-4", 200),
    ("hex-5:swap", 200),
    ("hex-6:extra-stone", 150),
    ("hex-8:swap,random=1", 120),
    ("hex-11:forbid=2", 100),
    ("hex-13:swap", 60),
]


def run_random_games(spec: str, games: int, seed: int, legal_rows: int = 50):
    env = VecEnv(spec)
    gen = torch.Generator().manual_seed(seed)
    refs = [ReferenceGame(spec) for _ in range(games)]
    state = env.initial_state(games)
    history = []
    while not bool(state.done.all()):
        legal = env.legal_mask(state)
        for b in range(min(legal_rows, games)):
            want = set(refs[b].legal_actions())
            assert set(torch.nonzero(legal[b]).flatten().tolist()) == want, f"legal actions, game {b}"
        action = random_actions(env, state, gen)
        live = (~state.done).nonzero().flatten().tolist()
        state = env.step(state, action)
        for b in live:
            refs[b].play(int(action[b]))
        assert_same(state, refs)
        history.append(action)
        assert len(history) <= env.game.max_plies
    return env, state, history


@pytest.mark.parametrize("spec, games", CASES)
def test_batched_engine_matches_the_reference(spec, games):
    env, state, _ = run_random_games(spec, games, seed=zlib.crc32(spec.encode()))
    # Every game ended with exactly one winner.
    assert set(state.winner.tolist()) <= {0, 1} and bool(state.done.all())


@pytest.mark.parametrize("spec", ["conhex", "hex-7:swap", "hex-5:extra-stone,random=1"])
def test_batch_of_one_equals_batch_of_many(spec):
    games = 24
    env, final, history = run_random_games(spec, games, seed=5, legal_rows=0)
    env = VecEnv(spec)
    batch = env.initial_state(games)
    singles = [env.initial_state(1) for _ in range(games)]
    for action in history:
        batch = env.step(batch, action)
        for b in range(games):
            singles[b] = env.step(singles[b], action[b:b + 1])
            assert singles[b].equal(batch[b]), f"game {b} differs"
    assert State.cat(singles).equal(final)


def test_cells_never_change_owner_and_pieces_never_move():
    env = VecEnv("conhex:noswap")
    gen = torch.Generator().manual_seed(3)
    state = env.initial_state(256)
    while not bool(state.done.all()):
        nxt = env.step(state, random_actions(env, state, gen))
        for old, new in ((state.cells, nxt.cells), (state.holes, nxt.holes)):
            taken = old >= 0
            assert torch.equal(new[taken], old[taken])
        state = nxt


SLOW_CASES = [("conhex", 5000), ("conhex:random=3,forbid=4", 2000), ("hex-11:swap", 2000), ("hex-19", 500)]


@pytest.mark.heavy
@pytest.mark.parametrize("spec, games", SLOW_CASES)
def test_many_more_random_games(spec, games):
    env, state, _ = run_random_games(spec, games, seed=zlib.crc32(spec.encode()) + 1)
    assert bool(state.done.all())


@pytest.mark.slow  # the heavy cases, a tenth of their games each (other seeds), in CI
@pytest.mark.parametrize("spec, games", SLOW_CASES)
def test_a_sample_of_the_slow_cases(spec, games):
    env, state, _ = run_random_games(spec, games // 10, seed=zlib.crc32(spec.encode()) + 2)
    assert bool(state.done.all())

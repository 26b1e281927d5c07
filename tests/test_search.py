"""Batched MCTS: tactics found by search, determinism across batch sizes, bookkeeping."""

import pytest
import torch

from conhex_zero.agents.evaluators import RolloutEvaluator, UniformEvaluator
from conhex_zero.agents.game_search import GameSearch
from conhex_zero.env.notation import play_moves
from conhex_zero.env.state import State
from conhex_zero.env.tactics import Tactics
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.search import rng
from conhex_zero.search.halving import considered_visits
from conhex_zero.search.mcts import SearchConfig
from helpers import move_values, random_actions

# Hand-made positions: (spec, moves, the player to move's only good moves, plies to look ahead).
WIN_IN_ONE = [
    ("hex-4", "a1 d1 a2 d2 a3 d3", ["a4"]),
    # X holds the left frame A1 B3 B5 B7 B9 (cells 0 9 18 27); O took C10: only A11 completes cell 36.
    ("conhex:noswap", "A1 F6 B3 C10 B5 F5 B7 E6 B9 G6", ["A11"]),
]
BLOCK = [
    # O holds a2 b2 c2 and X has d1: O's only winning move is d2.
    ("hex-4", "d1 a2 a4 b2 b4 c2", ["d2"]),
    # O holds A1 C2 E2 G2 I2 (cells 0 1 2 3); X took J3: O threatens K1 only.
    ("conhex:noswap", "F6 A1 J3 C2 F5 E2 E6 G2 D7 I2", ["K1"]),
]
WIN_IN_TWO = [
    # X b1 b2: b3 threatens a4 and b4; a4 threatens a3 and b3.
    ("hex-4", "b1 d1 b2 d2", ["b3", "a4"]),
    # X holds A1 B3 B5 B7 (cells 0 9 18): B9 takes cell 27 and leaves two ways into corner cell 36.
    ("conhex:noswap", "A1 F6 B3 F5 B5 E6 B7 G6", ["B9"]),
]
CASES = [(c, 1) for c in WIN_IN_ONE] + [(c, 2) for c in BLOCK] + [(c, 3) for c in WIN_IN_TWO]
KIND = {1: "win-in-one", 2: "block", 3: "win-in-two"}


def case_id(scheme, case, plies):
    return f"{scheme}-{case[0].split(':')[0]}-{KIND[plies]}"


def check_position(spec, moves, good, plies):
    """The position, and the exact solver's confirmation that `good` are the only good moves."""
    env = VecEnv(spec)
    state = play_moves(env, moves)
    values = move_values(env, state, plies)
    best = {a for a, v in values.items() if v == 1} if plies % 2 else {a for a, v in values.items() if v >= 0}
    assert {env.game.action_name(a) for a in best} == set(good), "the position is not what the test says"
    return env, state, [env.game.parse_move(m) for m in good]


def search_actions(env, state, config, tactics, games=4):
    gs = GameSearch(env, RolloutEvaluator(env, rollouts=2), config, tactics=tactics)
    return set(gs.run(State.cat([state] * games), rng.make_keys(0, games)).action.tolist())


# Gumbel search samples its root candidates from the prior; with the rollout evaluator's uniform
# prior every action must be a candidate (max_considered above the number of moves), and sequential
# halving then judges ~60 ConHex moves on one random rollout each: the ConHex win in two is lost in
# the first halving. That case is left to PUCT; Gumbel is meant for a learned prior.
SCHEME_CASES = [("puct", c, p) for c, p in CASES] + [("gumbel", c, p) for c, p in CASES if c is not WIN_IN_TWO[1]]


@pytest.mark.parametrize("scheme, case, plies", SCHEME_CASES, ids=[case_id(*c) for c in SCHEME_CASES])
def test_search_with_rollouts_finds_the_tactic(scheme, case, plies):
    """The players' search (rollout evaluator, exact one-move tactics) in ConHex and Hex."""
    env, state, good = check_position(*case, plies)
    config = SearchConfig(scheme=scheme, num_simulations=200, max_considered=128, gumbel_scale=0.0)
    assert search_actions(env, state, config, tactics=True) <= set(good)


@pytest.mark.parametrize("case, plies, sims", [(WIN_IN_ONE[0], 1, 160), (BLOCK[0], 2, 400), (BLOCK[1], 2, 400),
                                               (WIN_IN_TWO[0], 3, 400)],
                         ids=["hex-win-in-one", "hex-block", "conhex-block", "hex-win-in-two"])
def test_plain_rollout_puct_finds_the_tactic(case, plies, sims):
    """Plain MCTS (no tactics): the values of finished games alone lead it to the right move."""
    env, state, good = check_position(*case, plies)
    config = SearchConfig(scheme="puct", num_simulations=sims, c_puct=2.0, fpu=1.0)
    assert search_actions(env, state, config, tactics=False) <= set(good)


@pytest.mark.parametrize("case, plies", [(WIN_IN_ONE[0], 1), (BLOCK[0], 2)], ids=["hex-win-in-one", "hex-block"])
def test_plain_rollout_gumbel_finds_the_tactic(case, plies):
    env, state, good = check_position(*case, plies)
    config = SearchConfig(scheme="gumbel", num_simulations=200, max_considered=128, gumbel_scale=0.0)
    assert search_actions(env, state, config, tactics=False) <= set(good)


def random_positions(spec, games, seed, late=False):
    """Running positions from random games, stopped at random plies (late: the second half)."""
    env = VecEnv(spec)
    gen = torch.Generator().manual_seed(seed)
    state = env.initial_state(games)
    low, high = (env.num_holes // 3, env.num_holes) if late else (2, env.num_holes // 2)
    stop = torch.randint(low, high, (games,), generator=gen)
    kept = state
    for _ in range(env.num_holes):
        kept = kept.where((state.ply == stop) & ~state.done, state)
        state = env.step(state, random_actions(env, state, gen, swap_prob=0.2))
    return env, kept


@pytest.mark.parametrize("scheme, evaluator", [("puct", "uniform"), ("puct", "rollout"), ("gumbel", "uniform"),
                                               ("gumbel", "rollout")])
def test_batch_of_one_equals_batch_of_many(scheme, evaluator):
    env, state = random_positions("hex-5:swap", 12, seed=7)
    ev = UniformEvaluator(env) if evaluator == "uniform" else RolloutEvaluator(env)
    # One leaf per network call: the lean search that takes a few positions is then the batched
    # search, simulation by simulation (with more leaves per call it differs by its virtual losses).
    config = SearchConfig(scheme=scheme, num_simulations=24, dirichlet_fraction=0.25, leaves_per_call=1)
    gs = GameSearch(env, ev, config, tactics=True, lean_max_batch=1)
    keys = rng.make_keys(3, 12)
    many = gs.run(state, keys)
    for b in range(12):
        one = gs.run(state[b], keys[b:b + 1])
        assert int(one.action[0]) == int(many.action[b])
        assert torch.equal(one.visit_counts[0], many.visit_counts[b])
        assert torch.allclose(one.policy_target[0], many.policy_target[b])
        assert torch.allclose(one.root_value[0], many.root_value[b])
        assert torch.equal(one.pv[0], many.pv[b])


@pytest.mark.parametrize("scheme", ["puct", "gumbel"])
@pytest.mark.parametrize("spec", ["conhex", "hex-6"])
def test_visit_counts_add_up(scheme, spec):
    env, state = random_positions(spec, 16, seed=1)
    sims = 40
    gs = GameSearch(env, RolloutEvaluator(env), SearchConfig(scheme=scheme, num_simulations=sims), tactics=False)
    out = gs.run(state, rng.make_keys(0, 16))
    t = out.tree
    assert (out.visit_counts.sum(1) == sims).all()
    assert (t.visits[:, 0] == sims + 1).all()  # the root's own evaluation counts once
    assert (t.node_count <= sims + 1).all()
    assert torch.allclose(out.policy_target.sum(1), torch.ones(16))
    legal = env.legal_mask(state)
    assert not (out.visit_counts > 0)[~legal].any() and not (out.policy_target > 1e-6)[~legal].any()
    assert legal.gather(1, out.action[:, None]).all()
    # Every edge's visits equal its child's visits.
    used = t.children >= 0
    child_visits = t.visits.gather(1, t.children.clamp(min=0).flatten(1)).view_as(t.children)
    assert torch.equal(t.edge_visits[used], child_visits[used])


def test_gumbel_with_four_simulations_never_walks_into_an_immediate_loss():
    for spec in ("conhex", "hex-6", "hex-9:swap"):
        env, state = random_positions(spec, 400, seed=11, late=True)
        state = state[(~state.done).nonzero().flatten()]
        tactics = Tactics(env)
        losing = tactics.losing_actions(state)
        legal = env.legal_mask(state)
        threatened = (losing.any(1) & (legal & ~losing).any(1)).nonzero().flatten()
        assert threatened.numel() > 10, "the sample must contain threatened positions"
        sub = state[threatened]
        gs = GameSearch(env, RolloutEvaluator(env), SearchConfig(scheme="gumbel", num_simulations=4), tactics=True)
        out = gs.run(sub, rng.make_keys(5, threatened.numel()))
        assert not losing[threatened].gather(1, out.action[:, None]).any()


def test_sequential_halving_schedule():
    assert considered_visits(1, 5) == (0, 1, 2, 3, 4)
    seq = considered_visits(4, 16)
    assert seq[:4] == (0, 0, 0, 0) and len(seq) == 16
    assert considered_visits(16, 64)[:16] == (0,) * 16


@pytest.mark.parametrize("scheme", ["puct", "gumbel"])
def test_kept_buffers_give_the_results_of_fresh_searches(scheme):
    """The path CUDA graphs use (buffers kept and reset in place between searches) changes nothing."""
    env, state = random_positions("hex-5:swap", 24, seed=9)
    config = SearchConfig(scheme=scheme, num_simulations=20, dirichlet_fraction=0.25)
    fresh = GameSearch(env, RolloutEvaluator(env), config, tactics=True)
    kept = GameSearch(env, RolloutEvaluator(env), config, tactics=True, persistent=True)
    for k, rows in enumerate((slice(0, 12), slice(12, 24), slice(0, 12))):
        keys = rng.make_keys(100 + k, 12)
        a, b = fresh.run(state[rows], keys), kept.run(state[rows], keys)
        for field in ("action", "visit_counts", "q_values", "policy_target", "root_value", "pv"):
            assert torch.equal(getattr(a, field), getattr(b, field)), (k, field)
    assert kept.searcher._kept is not None

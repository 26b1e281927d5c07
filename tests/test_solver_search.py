"""Proven values in the search (MCTS-solver): every proof agrees with the exact solver, proofs reach
the root, proven moves are played or avoided, and nothing is searched below a proven node."""

import pytest
import torch

from conhex_zero.agents.evaluators import NetworkEvaluator, UniformEvaluator
from conhex_zero.agents.game_search import GameSearch
from conhex_zero.analysis.solver import HexSolver
from conhex_zero.env.notation import play_moves
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.search import rng
from conhex_zero.search.mcts import SearchConfig


def random_positions(env: VecEnv, count: int, seed: int) -> State:
    """Running positions after 0 .. H - 3 uniformly random plies."""
    gen = torch.Generator().manual_seed(seed)
    plies = torch.randint(0, env.num_holes - 2, (4 * count,), generator=gen)
    state = env.initial_state(4 * count)
    for ply in range(env.num_holes - 2):
        state = state.where(plies > ply, env.step(state, env.random_actions(state, gen, swap=False)))
    running = (~state.done).nonzero().squeeze(1)[:count]
    return state[running]


def search(env, evaluator, scheme, sims, state, tactics=True, solver=True):
    config = SearchConfig(scheme=scheme, num_simulations=sims, solver=solver, gumbel_scale=0.0)
    return GameSearch(env, evaluator, config, tactics=tactics).run(state, rng.make_keys(1, state.batch_size))


@pytest.mark.parametrize("scheme", ["gumbel", "puct"])
@pytest.mark.parametrize("tactics", [True, False])
@pytest.mark.parametrize("network", ["uniform", "hex4"])
def test_every_proof_agrees_with_the_exact_solver(scheme, tactics, network):
    env = VecEnv("hex-4")
    solver = HexSolver(env.game.board)
    evaluator = (UniformEvaluator(env) if network == "uniform"
                 else NetworkEvaluator(load_checkpoint("checkpoints/hex4-l3h32.pt").model, env))
    state = random_positions(env, 48, seed=7)
    out = search(env, evaluator, scheme, 300, state, tactics=tactics)
    mover_wins = solver.state_winners(state) == state.to_move
    proven = out.root_proven
    assert int((proven != 0).sum()) >= 10  # the search proves a good share of these positions
    for b in range(state.batch_size):
        if proven[b] != 0:
            assert (proven[b] > 0) == bool(mover_wins[b]), f"position {b}: proof contradicts the solver"
            assert out.root_value[b] == float(proven[b])
        edges = out.edge_proven[b].nonzero().squeeze(1).tolist()
        if not edges:
            continue
        children = env.step(state[[b] * len(edges)], torch.tensor(edges))
        child_mover_wins = torch.where(children.done, children.winner == children.to_move,
                                       solver.state_winners(children) == children.to_move)
        for a, edge_proof, child_to_move, child_wins in zip(edges, out.edge_proven[b, edges].tolist(),
                                                            children.to_move.tolist(), child_mover_wins.tolist()):
            mover_wins_after = child_wins if child_to_move == int(state.to_move[b]) else not child_wins
            if bool(children.done[edges.index(a)]):
                mover_wins_after = int(children.winner[edges.index(a)]) == int(state.to_move[b])
            assert (edge_proof > 0) == mover_wins_after, f"position {b}, move {a}: proof contradicts the solver"
            assert out.q_values[b, a] == float(edge_proof)


@pytest.mark.parametrize("scheme", ["gumbel", "puct"])
def test_hex3_from_the_empty_board_is_proven_won_and_played_as_such(scheme):
    env = VecEnv("hex-3")
    solver = HexSolver(env.game.board)
    out = search(env, UniformEvaluator(env), scheme, 1200, env.initial_state(1))
    assert int(out.root_proven[0]) == 1 and float(out.root_value[0]) == 1.0
    assert int(out.action[0]) in solver.winning_openings()
    assert int(out.edge_proven[0, out.action[0]]) == 1
    if scheme == "puct":  # (deterministic: the same first 1200 simulations)
        # Once the root is proven nothing below it is searched: more simulations add no node.
        more = search(env, UniformEvaluator(env), scheme, 1600, env.initial_state(1))
        assert int(more.tree.node_count[0]) == int(out.tree.node_count[0]) and int(more.root_proven[0]) == 1


def test_a_lost_position_is_proven_lost_move_by_move():
    env = VecEnv("hex-3")
    # O to move after X took the centre: X reaches the top by b1 or c1 and the bottom by b3 or a3.
    state = play_moves(env, ["b2"])
    solver = HexSolver(env.game.board)
    assert int(solver.state_winners(state)[0]) == 0  # X wins whatever O does
    out = search(env, UniformEvaluator(env), "puct", 2000, state)
    legal = env.legal_mask(state)[0]
    assert int(out.root_proven[0]) == -1 and float(out.root_value[0]) == -1.0
    assert bool((out.edge_proven[0][legal] == -1).all())
    assert bool((out.q_values[0][legal] == -1).all())


def test_a_win_at_once_is_proven_before_any_simulation_and_nothing_is_searched_below():
    env = VecEnv("hex-3")
    state = play_moves(env, ["b1", "a1", "b2", "a2"])  # X to move wins at once at b3 or a3
    out = search(env, UniformEvaluator(env), "gumbel", 64, state)
    assert int(out.root_proven[0]) == 1 and int(out.edge_proven[0, out.action[0]]) == 1
    nodes = int(out.tree.node_count[0])
    # The root and the first winning move's terminal child: once one win is proven, every later
    # simulation returns to it and nothing else is expanded.
    assert nodes == 2 and int((out.edge_proven[0] == 1).sum()) == 1


def test_without_the_solver_nothing_is_proven():
    env = VecEnv("hex-3")
    out = search(env, UniformEvaluator(env), "puct", 1500, env.initial_state(1), solver=False)
    assert int(out.root_proven[0]) == 0 and not bool(out.edge_proven.any())

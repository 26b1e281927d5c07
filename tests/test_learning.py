"""Proof that training learns: Hex 4x4 from scratch on CPU, judged by the exact solver.

Hex 4x4 is solved exactly by tests/hex_solver.py: the first player wins only by opening on the
short diagonal (a4, b3, c2, d1). After 40 iterations of training (a budget in iterations, not in
seconds: the verdict never depends on the machine's speed or load, and the suite runs torch on one
thread, so the run is the same everywhere), the network must

* open on the short diagonal with its raw policy;
* win, with a 16-simulation search, at least 95% of 50 games as first player against random;
* keep the win: in every position of its games against random and against rollout-MCTS (64
  simulations, 2 random opening plies so that the games differ) where it is to move and can force a
  win, the move it plays must still force the win (the solver says), in at least 97% of them.

Three seeds (1, 2, 3) were checked with this budget: each opened correctly, won every game and kept
the win in all of 1,000-1,200 positions; the threshold leaves room for rounding on other CPUs.
"""

import pytest
import torch

from conhex_zero.agents.arena import play_match
from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.agents.players import PolicyPlayer, make_player, network_player
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.train.config import load_config
from conhex_zero.train.loop import train
from hex_solver import HexSolver

LEARN_HEX4 = [
    "game=hex-4", "model=l3h32", "iterations=40", "seed=1",
    "selfplay.games=64", "selfplay.full_sims=24", "selfplay.cheap_sims=8", "selfplay.full_fraction=0.5",
    "selfplay.temperature_moves=2", "selfplay.positions_per_iteration=256",
    "replay.capacity=12000", "replay.min_size=256",
    "optim.batch_size=128", "optim.lr=0.003", "optim.sample_reuse=8", "optim.warmup_steps=20",
    "eval.every=1000", "eval.games=0", "eval.previous_games=0",
]


def stones(state: State, b: int) -> tuple[int, int]:
    """The solver's bitboards (first player's stones, second player's) of game ``b``."""
    first = second = 0
    for h in range(state.holes.shape[1]):
        owner = int(state.holes[b, h])
        first |= (owner == 0) << h
        second |= (owner == 1) << h
    return first, second


def agent_positions(env: VecEnv, result, agent_name: str) -> State:
    """Every position of a match's games where the agent was to move."""
    records = result.records
    state = env.initial_state(len(records))
    seen = []
    for ply in range(max(len(r.moves) for r in records)):
        mover_is_agent = [(r.first == agent_name) == (int(state.to_move[g]) == 0) and ply < len(r.moves)
                          and ply >= r.opening for g, r in enumerate(records)]
        rows = [g for g, m in enumerate(mover_is_agent) if m]
        if rows:
            seen.append(state[torch.tensor(rows)])
        moves = [env.game.parse_move(r.moves[ply]) if ply < len(r.moves) else 0 for r in records]
        state = env.step(state, torch.tensor(moves))
    return State.cat(seen)


@pytest.mark.slow
@pytest.mark.ci  # about 1.5 CPU minutes: worth running on every change
def test_training_learns_hex_4x4(tmp_path):
    config = load_config(None, LEARN_HEX4)
    train(config, tmp_path / "run", progress=False, log=lambda *_: None)
    model = load_checkpoint(tmp_path / "run" / "latest.pt").model
    env = VecEnv("hex-4")
    solver = HexSolver(4)
    winning = {env.game.action_name(i) for i in solver.winning_openings()}
    assert winning == {"a4", "b3", "c2", "d1"}
    policy = PolicyPlayer(env, NetworkEvaluator(model, env), "policy")
    opening = env.game.action_name(int(policy.act(env.initial_state(1))[0]))
    assert opening in winning, f"the raw policy opens {opening}"

    agent = network_player(env, model, 16, 0, name="agent")
    vs_random = play_match(env, agent, make_player("random", env, seed=1), 100, seed=1, progress=False)
    assert vs_random.wins_by_colour["player1"][0] >= 48  # of its 50 games as first player
    vs_rollout = play_match(env, agent, make_player("mcts-rollout:64", env, seed=2), 40, seed=2, progress=False,
                            opening_plies=2)

    positions = State.cat([agent_positions(env, r, "agent") for r in (vs_random, vs_rollout)])
    won = [b for b in range(positions.batch_size) if solver.mover_wins(*stones(positions, b))]
    assert len(won) > 200
    moves = agent.act(positions[torch.tensor(won)])
    kept = 0
    for i, b in enumerate(won):
        first, second = stones(positions, b)
        hole, mover = int(moves[i]), int(positions.to_move[b])
        first, second = (first | 1 << hole, second) if mover == 0 else (first, second | 1 << hole)
        kept += solver.connected(first if mover == 0 else second, mover) or not solver.mover_wins(first, second)
    assert kept >= 0.97 * len(won), f"kept the win in {kept} of {len(won)} won positions"

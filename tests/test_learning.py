"""Proof that training learns: Hex 4x4 from scratch on CPU (slow: run with pytest -m slow).

Hex 4x4 is solved exactly by tests/hex_solver.py: the first player wins only by opening on the
short diagonal (a4, b3, c2, d1). After training, the network's raw policy must open there, and the
agent (network + search) must win at least 95% of its games as first player against the random
player and against rollout-MCTS with 64 simulations.
"""

import pytest

from conhex_zero.agents.arena import play_match
from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.agents.players import PolicyPlayer, make_player, network_player
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


def first_player_win_rate(env, agent, opponent_name, seeds):
    wins = games = 0
    for seed in seeds:  # each opponent seed is a different deterministic rollout player
        opponent = make_player(opponent_name, env, seed=seed)
        r = play_match(env, agent, opponent, 2, seed=seed, progress=False, opening_plies=0)
        wins += r.wins_by_colour["player1"][0]
        games += 1
    return wins / games


@pytest.mark.slow
@pytest.mark.ci  # about 2 minutes on 2 cores: worth running on every change
def test_training_learns_hex_4x4(tmp_path):
    config = load_config(None, LEARN_HEX4)
    train(config, tmp_path / "run", progress=False, log=lambda *_: None)
    ckpt = load_checkpoint(tmp_path / "run" / "latest.pt")
    env = VecEnv("hex-4")
    winning = {env.game.action_name(i) for i in HexSolver(4).winning_openings()}
    assert winning == {"a4", "b3", "c2", "d1"}
    policy = PolicyPlayer(env, NetworkEvaluator(ckpt.model, env), "policy")
    opening = env.game.action_name(int(policy.act(env.initial_state(1))[0]))
    assert opening in winning, f"the raw policy opens {opening}"
    agent = network_player(env, ckpt.model, 16, 0, name="agent")
    assert first_player_win_rate(env, agent, "random", range(60)) >= 0.95
    assert first_player_win_rate(env, agent, "mcts-rollout:64", range(30)) >= 0.95

"""Proof that training learns: Hex 4x4 from scratch on CPU, judged by the exact solver.

Hex 4x4 is solved exactly by tests/hex_solver.py: the first player wins only by opening on the
short diagonal (a4, b3, c2, d1). After 120 iterations of training (a budget in iterations, not in
seconds: the verdict never depends on the machine's speed or load, and the suite runs torch on one
thread, so the run is the same on every machine with the same processor; another
processor's last-bit float results make another run, below), the network must

* open on the short diagonal with its raw policy;
* win, with a 16-simulation search, at least 95% of 50 games as first player against random;
* win, with a 32-simulation search, at least 95% of 50 games as first player against a perfect
  defender: a player that takes every win the solver finds for it and otherwise plays a random move
  (the games differ by the defender's draws). An untrained network wins none of them; the first
  player wins all of them only by keeping a won position at every move.

Measured before the test was written (seeds 1, 2, 3, 60 iterations): opening b3, c2, b3; 50, 50, 50
of 50 against random; 50, 49, 50 of 50 against the defender (an untrained network: 0 of 50). On an
AMD EPYC (and in CI) the same 60 iterations gave 47 of 50 against the defender for seed 1, and seed
2 opened d3 and won none: the float results of the last bit differ between processors, and 60
iterations were too close to the edge. With 80 iterations, measured on that AMD EPYC, seeds 1, 2,
4, 5, 6 won 49, 50, 50, 50, 50 of 50 against the defender, which is why the budget was 80. On
an Intel Xeon (2026-11-28, torch 2.13.0+cpu) seed 1 at 80 iterations won 46 of 50 against the
defender, at this commit and at the one that set 80 alike (the processor, not the code); with 120
iterations seeds 1, 2, 3 won 50, 50, 50 of 50 there (openings b3, b3, c2; 50 of 50 against random
each), which is why the budget is 120.
"""

import pytest
import torch

from conhex_zero.agents.arena import play_match
from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.agents.players import PolicyPlayer, make_player, network_player
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.search import rng
from conhex_zero.train.config_load import load_config
from conhex_zero.train.loop import train
from hex_solver import HexSolver

LEARN_HEX4 = [
    "game=hex-4", "model=l3h32", "iterations=120", "seed=1",
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


class PerfectDefender:
    """Takes a move that wins (exactly, by the solver) whenever there is one, else a random move."""

    name = "defender"

    def __init__(self, env: VecEnv, solver: HexSolver):
        self.env, self.solver = env, solver

    def act(self, state: State, keys: torch.Tensor | None = None, history=None) -> torch.Tensor:
        moves = self.env.random_actions(state, uniforms=rng.uniform(keys, 0, self.env.num_actions))
        for b in range(state.batch_size):
            first, second = stones(state, b)
            mover = int(state.to_move[b])
            for hole in range(self.env.num_holes):
                if int(state.holes[b, hole]) >= 0:
                    continue
                f, s = (first | 1 << hole, second) if mover == 0 else (first, second | 1 << hole)
                if self.solver.connected(f if mover == 0 else s, mover) or not self.solver.mover_wins(f, s):
                    moves[b] = hole
                    break
        return moves


@pytest.mark.slow
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
    # From the empty board (the agent's own first move is what is tested), not from random openings.
    vs_random = play_match(env, agent, make_player("random", env, seed=1), 100, seed=1, progress=False,
                           fixed_openings=True)
    assert vs_random.wins_by_colour["player1"][0] >= 48  # of its 50 games as first player
    agent = network_player(env, model, 32, 0, name="agent")
    vs_defender = play_match(env, agent, PerfectDefender(env, solver), 100, seed=4, progress=False,
                             fixed_openings=True)
    assert vs_defender.wins_by_colour["player1"][0] >= 48, vs_defender.wins_by_colour

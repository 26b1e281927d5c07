"""Cross-check Hex against OpenSpiel's ``hex`` (an independent C++ implementation).

OpenSpiel numbers cells row * n + column and its first player (x) connects top and bottom, as ours.
"""

import numpy as np
import pytest
import torch

from conhex_zero.env.vec_env import VecEnv

from optional import missing, optional_import

pyspiel = optional_import("pyspiel")
pytestmark = pytest.mark.openspiel


@pytest.fixture(autouse=True)
def _needs_openspiel():
    if pyspiel is None:
        missing("openspiel", "open-spiel is not installed (pip install open-spiel)")


@pytest.mark.parametrize("n, games", [(2, 100), (3, 200), (5, 200), (7, 100), (11, 60)])
def test_random_games_agree_with_openspiel(n, games):
    spiel_game = pyspiel.load_game("hex", {"board_size": n})
    env = VecEnv(f"hex-{n}")
    rng = np.random.default_rng(n)
    for _ in range(games):
        spiel = spiel_game.new_initial_state()
        state = env.initial_state(1)
        while not spiel.is_terminal():
            ours = torch.nonzero(env.legal_mask(state)[0]).flatten().tolist()
            assert ours == spiel.legal_actions()
            assert int(state.to_move[0]) == spiel.current_player()
            action = int(rng.choice(ours))
            spiel.apply_action(action)
            state = env.step(state, torch.tensor([action]), check=True)
            assert bool(state.done[0]) == spiel.is_terminal()
        returns = spiel.returns()
        assert int(state.winner[0]) == (0 if returns[0] > 0 else 1)


def test_a_few_games_agree_with_openspiel():
    """The fast suite's cross-check (the slow one plays hundreds of games on five boards): where
    open-spiel is installed, its group runs in every suite."""
    test_random_games_agree_with_openspiel(5, 10)

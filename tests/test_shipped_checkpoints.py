"""Every checkpoint shipped in checkpoints/ loads and plays legal games of its own game (fast)."""

from pathlib import Path

import pytest

from conhex_zero.agents.arena import play_match
from conhex_zero.agents.players import make_player
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import load_checkpoint

SHIPPED = sorted((Path(__file__).resolve().parents[1] / "checkpoints").glob("*.pt"))


def test_there_are_shipped_checkpoints():
    assert len(SHIPPED) >= 2


@pytest.mark.parametrize("path", SHIPPED, ids=[p.name for p in SHIPPED])
def test_a_shipped_checkpoint_loads_and_plays_a_legal_game(path):
    ckpt = load_checkpoint(path)
    assert path.stat().st_size < 5 * 2**20, "shipped models stay under 5 MB"
    env = VecEnv(ckpt.game)
    me = make_player(f"{path}:sims=4", env)
    # play_match checks every move of our own players against the rules (an illegal one raises).
    result = play_match(env, me, make_player("random", env, seed=1), 2, seed=0, progress=False)
    assert result.games == 2 and all(r.result == "connection" for r in result.records)
    assert all(len(r.moves) >= 2 for r in result.records)

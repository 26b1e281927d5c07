"""Shipped checkpoints give the same outputs as before the network lost its sparse kernels.

``fixtures/network_outputs.pt`` holds policy logits, values and ownership computed by the network
as it was at commit 41943cb (aggregation by ``torch.sparse.mm`` over the stacked adjacency), for the
shipped checkpoints on their own games and on other boards (one set of weights plays any board).
The dense block aggregation must reproduce them to float rounding.
"""

from pathlib import Path

import pytest
import torch

from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.nn.encode import Encoder

ROOT = Path(__file__).resolve().parents[1]
EXPECTED = torch.load(Path(__file__).parent / "fixtures" / "network_outputs.pt", weights_only=True)


def positions(env: VecEnv) -> State:
    gen = torch.Generator().manual_seed(11)
    state = env.initial_state(6)
    states = []
    for _ in range(12):
        states.append(state)
        # the fixture's positions: per game the legal action with the highest of A uniform draws
        u = torch.rand(6, env.num_actions, generator=gen)
        state = env.reset_done(env.step(state, env.random_actions(state, uniforms=u)))
    return State.cat(states)


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_shipped_checkpoints_give_the_outputs_of_the_sparse_network(key):
    path, game = key.split("|")
    env = VecEnv(game)
    model = load_checkpoint(ROOT / path).model
    encoder = Encoder(env)
    with torch.no_grad():
        logits, value, ownership = model(encoder(positions(env)), encoder.graph)
    expected = EXPECTED[key]
    assert torch.allclose(logits, expected["logits"], atol=1e-4, rtol=1e-5)
    assert torch.allclose(value, expected["value"], atol=1e-5)
    assert torch.allclose(ownership, expected["ownership"], atol=1e-5)


def test_an_evaluator_in_slices_gives_the_same_outputs():
    """``NetworkEvaluator(max_batch=K)`` evaluates K positions a call (the book's searches on a CPU):
    the same logits and values as one call for all (to float rounding)."""
    from conhex_zero.agents.evaluators import NetworkEvaluator

    ckpt = load_checkpoint(Path(__file__).resolve().parent.parent / "checkpoints" / "conhex-l4h64-v4.pt")
    env = VecEnv("conhex")
    gen = torch.Generator().manual_seed(3)
    state = env.reset(70)
    for _ in range(5):
        legal = env.legal_mask(state).float()
        state = env.step(state, torch.multinomial(legal, 1, generator=gen)[:, 0])
    whole = NetworkEvaluator(ckpt.model, env)(state)
    sliced = NetworkEvaluator(ckpt.model, env, max_batch=32)(state)
    for a, b in zip(whole, sliced):
        assert a.shape == b.shape and torch.allclose(a, b, atol=1e-5)

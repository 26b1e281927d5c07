"""The search's step to new leaves (``agents/leaf_step.py``): eager where no package can be had, and,
in the slow suite, real native packages whose every output is the eager function's bit for bit
(ConHex, Hex, the mirror variant; swaps, wins and finished games among the positions), and a search
through the package that equals the search without it, visit for visit.

The suite runs with ``CONHEX_ZERO_BACKEND=eager`` (tests/conftest.py); these tests set the backend
themselves and build into a cache folder of their own (``CONHEX_ZERO_CACHE``)."""

from __future__ import annotations


import pytest
import torch

from conhex_zero.agents import leaf_step as leaf_module
from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.agents.game_search import GameSearch
from conhex_zero.agents.leaf_step import leaf_step, native_leaf
from conhex_zero.agents.search_configs import play_config
from conhex_zero.env.state import FIELDS, State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn import native
from conhex_zero.nn.encode import NUM_FEATURES, Encoder
from conhex_zero.nn.model import GraphNet, ModelConfig
from conhex_zero.search import rng
from helpers import needs_compiler


def _edges(env: VecEnv, batch: int, seed: int) -> tuple[State, torch.Tensor]:
    """Positions of random games at every stage (some finished) and an action for each: a winning
    move where the mover has one, the swap where it is legal (half the time), else a random legal one."""
    gen = torch.Generator().manual_seed(seed)
    state = env.initial_state(batch)
    stop = torch.randint(0, env.game.max_plies, (batch,), generator=gen)
    for ply in range(int(stop.max()) + 1):
        nxt = env.step(state, env.random_actions(state, gen))
        state = state.where((stop > ply) & ~state.done, nxt)
    action = env.random_actions(state, gen)
    legal = env.legal_mask(state)
    swap = legal[:, env.game.swap_action] if env.game.swap else torch.zeros(batch, dtype=torch.bool)
    action = torch.where(swap & (torch.rand(batch, generator=gen) < 0.5), env.game.swap_action, action)
    wins = Encoder(env).tactics.winning_moves(state)  # [B, H]
    action = torch.where(wins.any(1), wins.to(torch.int8).argmax(1), action)
    return state, action


def _same(a, b) -> bool:
    return (all(torch.equal(getattr(a.state, f), getattr(b.state, f)) for f in FIELDS)
            and all(torch.equal(getattr(a, f), getattr(b, f)) for f in ("reward", "discount", "legal", "focus", "proven"))
            and torch.equal(a.encoded.x, b.encoded.x) and torch.equal(a.encoded.contact, b.encoded.contact))


def test_a_network_player_steps_through_the_leaf_function_and_other_evaluators_do_not():
    env = VecEnv("hex-4")
    model = GraphNet(ModelConfig(1, 8), NUM_FEATURES)
    evaluator = NetworkEvaluator(model, env, backend="eager")
    assert GameSearch(env, evaluator, play_config(8), tactics=True).leaf is not None
    assert GameSearch(env, evaluator, play_config(8), tactics=False).leaf is None
    state, action = _edges(env, 9, seed=3)
    leaf = leaf_step(env, evaluator.encoder, state, action)
    after = env.step(state, action)
    assert after.equal(leaf.state)
    ended = after.done
    assert torch.equal(leaf.discount == 0, ended)
    assert torch.equal(leaf.reward != 0, ended)  # +1 or -1 for the player who acted, once the game is over
    assert torch.equal(leaf.reward > 0, ended & (after.winner == state.to_move))
    mover_wins = evaluator.encoder.tactics.winning_moves(after).any(1)
    assert torch.equal(leaf.proven.bool(), mover_wins)
    assert (leaf.focus <= leaf.legal).all()  # only winning moves are searched where there are some


def test_where_no_leaf_package_can_be_built_the_search_runs_eager_after_one_line(tmp_path, monkeypatch, capsys):
    def fails(env, encoder, target):
        raise RuntimeError("C++ compile error: g++ not found")

    monkeypatch.setenv(native.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(leaf_module, "_build", fails)
    monkeypatch.setattr(native, "_loaded", {})
    monkeypatch.setattr(native, "_failed", {})
    env = VecEnv("hex-4")
    assert native_leaf(env, Encoder(env)) is None
    assert native_leaf(env, Encoder(env)) is None  # the failure is remembered: one line
    lines = [line for line in capsys.readouterr().err.splitlines() if line]
    assert lines == ["conhex-zero: building the native leaf step for hex-4 (once per game and machine, about 25 s; "
                     f"cached in {tmp_path})",
                     "conhex-zero: the native leaf step unavailable for hex-4 (C++ compile error: g++ not found); "
                     "using the eager path"]


def test_the_leaf_cache_key_changes_with_the_game():
    keys = {leaf_module.cache_key(VecEnv(spec), Encoder(VecEnv(spec))) for spec in ("hex-4", "hex-5", "hex-5:mirror=2")}
    assert len(keys) == 3 and leaf_module.cache_key(VecEnv("hex-4"), Encoder(VecEnv("hex-4"))) in keys


# ------------------------------------------------------------------ real packages (slow)
@pytest.mark.slow
@needs_compiler
@pytest.mark.parametrize("spec, connection", [("conhex", False), ("hex-5:mirror=2", False), ("conhex", True)])
def test_the_native_leaf_step_is_the_eager_one_bit_for_bit(native_cache, spec, connection):
    """``connection``: with the connection columns (``env.connection``'s relaxation compiled too)."""
    env = VecEnv(spec)
    encoder = Encoder(env, connection=connection)
    lines: list[str] = []
    package = native_leaf(env, encoder, say=lines.append)
    assert package is not None and package.build_seconds is not None, lines
    assert lines[0].startswith(f"building the native leaf step for {env.game.spec}")
    for batch, seed in ((1, 1), (5, 2), (64, 3), (200, 4)):
        state, action = _edges(env, batch, seed)
        eager, fast = leaf_step(env, encoder, state, action), package(state, action)
        assert _same(eager, fast), (spec, batch)
        assert fast.reward.abs().sum() > 0 or batch < 64  # games are won in the sample
    swaps = env.initial_state(3)
    swaps = env.step(swaps, torch.tensor([0, 5, 11]))
    swap = torch.full((3,), env.game.swap_action)
    assert _same(leaf_step(env, encoder, swaps, swap), package(swaps, swap))


@pytest.mark.slow
@needs_compiler
def test_a_search_through_the_native_leaf_step_is_the_same_search(native_cache):
    """The same network package either way: the search's every visit count, value and move agree."""
    torch.manual_seed(5)
    env = VecEnv("hex-4")
    model = GraphNet(ModelConfig(2, 16), NUM_FEATURES).eval()
    evaluator = NetworkEvaluator(model, env, backend="aoti", label="tiny")
    assert evaluator.native is not None
    fast = GameSearch(env, evaluator, play_config(96), tactics=True, lean_max_batch=4)
    assert isinstance(fast.leaf, leaf_module.NativeLeaf)
    slow = GameSearch(env, evaluator, play_config(96), tactics=True, lean_max_batch=4)
    encoder = evaluator.encoder
    slow.leaf = lambda state, action: leaf_step(env, encoder, state, action)
    for batch in (1, 3, 16):  # the lean search, then the batched one
        state, _ = _edges(env, batch, seed=batch)
        state = state.where(state.done, env.initial_state(1))  # running games only
        keys = rng.make_keys(7, batch)
        a, b = fast.run(state, keys), slow.run(state, keys)
        assert torch.equal(a.action, b.action)
        assert torch.equal(a.visit_counts, b.visit_counts)
        assert torch.equal(a.root_value, b.root_value)

"""The connection features (``env/connection.py``) and the model options of issue 56 (``r<R>``: the
blocks run R times with shared weights; ``c``: the connection columns): the distances against
Dijkstra in plain Python and hand-made positions, the encoder's columns, names, checkpoints,
equivariance and the native packages' keys."""

from __future__ import annotations

import pytest
import torch

from conhex_zero.env.connection import (UNREACHABLE, Connection, default_rounds, empty_board_distance,
                                        reference_through)
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn import native
from conhex_zero.nn.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from conhex_zero.nn.encode import (CONNECTION_FEATURES, G_MY_BEST, G_THEIR_BEST, NUM_FEATURES, X_MY_SLACK,
                                   X_MY_THROUGH, X_THEIR_THROUGH, Encoder, num_features)
from conhex_zero.nn.model import GraphNet, ModelConfig
from conhex_zero.nn.model_names import parse_model_spec
from helpers import needs_compiler, random_actions


def _play(env: VecEnv, moves: list[str]):
    state = env.initial_state(1)
    for name in moves:
        state = env.step(state, torch.tensor([env.game.board.hole_index[name]]))
    return state


def _random_positions(spec: str, games: int, plies: int, seed: int):
    env = VecEnv(spec)
    gen = torch.Generator().manual_seed(seed)
    state = env.initial_state(games)
    stop = torch.randint(0, plies + 1, (games,), generator=gen)
    for ply in range(plies):
        nxt = env.step(state, random_actions(env, state, gen, swap_prob=0.2))
        state = state.where((stop > ply) & ~state.done, nxt)
    return env, state


def test_the_scale_and_rounds_of_each_board():
    assert [empty_board_distance(VecEnv(f"hex-{n}").game.board) for n in (2, 5, 7, 8)] == [2, 5, 7, 8]
    assert empty_board_distance(VecEnv("conhex").game.board) == 10  # 2 + 3 + 3 + 2 along the middle
    assert default_rounds(VecEnv("hex-7").game.board) == 16
    assert default_rounds(VecEnv("conhex").game.board) == 16


def test_on_the_empty_hex_board_every_cell_is_on_a_shortest_path():
    env = VecEnv("hex-6")
    through, best = Connection(env).distances(env.initial_state(2))
    assert torch.equal(through, torch.full((2, 2, 36), 6.0)) and torch.equal(best, torch.full((2, 2), 6.0))


def test_a_hand_made_hex_position():
    """Hex 5x5, the first player (top-bottom) holds c1 c2 c4 c5, the second a2 b3 e5: the first
    player needs one stone (c3), the second four (a3 or b2 to join a2 and b3, then c3 d3 e3)."""
    env = VecEnv("hex-5:noswap")
    state = _play(env, ["c1", "a2", "c2", "b3", "c4", "e5", "c5"])  # e5 the second player's, far away
    assert int(state.to_move[0]) == 1
    through, best = Connection(env).distances(state)  # index 0: the mover (second player), 1: the first
    cell = env.game.board.hole_index
    assert best[0, 1] == 1.0 and through[0, 1, cell["c3"]] == 1.0
    assert through[0, 1, cell["b3"]] == UNREACHABLE  # the second player's stone blocks the first
    assert through[0, 0, cell["c2"]] == UNREACHABLE
    assert best[0, 0] == 4.0 and through[0, 0, cell["c3"]] == 4.0


def test_a_long_snake_of_stones_costs_one_round(monkeypatch):
    """A chain of 13 stones winding across Hex 7x7 from the top, two cells short of the bottom: the
    chain is collapsed each round, so 3 rounds find the distance 2 (without the collapse they find
    4), and the default rounds give Dijkstra's values everywhere."""
    env = VecEnv("hex-7:noswap")
    snake = ["a1", "b1", "c1", "d1", "e1", "f1", "f2", "e3", "d3", "c3", "b3", "a4", "a5"]
    blockers = ["g1", "g2", "f3", "g3", "b2", "c2", "d2", "e2", "b4", "c4", "d4", "e4", "f4"]
    state = _play(env, [m for pair in zip(snake, blockers) for m in pair])
    assert int(state.to_move[0]) == 0
    assert Connection(env, rounds=3).distances(state)[1][0, 0] == 2.0
    through, best = Connection(env).distances(state)
    board = env.game.board
    cells = [None if int(v) < 0 else int(v) for v in state.cells[0]]
    counts = [[int(state.counts[0, p, c]) for p in (0, 1)] for c in range(board.num_cells)]
    for k, player in enumerate((0, 1)):
        ref = torch.tensor(reference_through(board, cells, counts, player)).clamp(max=UNREACHABLE)
        assert torch.equal(through[0, k], ref), player
    monkeypatch.setattr(Connection, "_collapse", staticmethod(lambda dist, label: dist))
    assert Connection(env, rounds=3).distances(state)[1][0, 0] == 4.0


@pytest.mark.parametrize("spec, plies", [("hex-5", 16), ("hex-7", 40), ("conhex", 50), ("conhex:noswap", 25)])
def test_the_batched_distances_are_dijkstras(spec, plies):
    env, state = _random_positions(spec, 24, plies, seed=7)
    through, best = Connection(env).distances(state)
    board = env.game.board
    for i in range(state.batch_size):
        cells = [None if int(v) < 0 else int(v) for v in state.cells[i]]
        counts = [[int(state.counts[i, p, c]) for p in (0, 1)] for c in range(board.num_cells)]
        mover = int(state.to_move[i])
        for k, player in enumerate((mover, 1 - mover)):
            ref = torch.tensor(reference_through(board, cells, counts, player)).clamp(max=UNREACHABLE)
            assert torch.equal(through[i, k], ref), (i, player)
            assert best[i, k] == ref.min()
    won = state.done
    if won.any():  # the winner's distance is 0
        winner_is_mover = state.winner == state.to_move
        assert (best[won & winner_is_mover, 0] == 0).all() and (best[won & ~winner_is_mover, 1] == 0).all()


def test_the_encoders_connection_columns():
    env = VecEnv("hex-5:noswap")
    state = _play(env, ["c1", "a2", "c2", "b3", "c4", "e5", "c5"])
    plain, connected = Encoder(env), Encoder(env, connection=True)
    x, xc = plain(state).x, connected(state).x
    assert connected.num_features == num_features(True) == NUM_FEATURES + CONNECTION_FEATURES == xc.shape[2]
    assert torch.equal(xc[..., :NUM_FEATURES], x)  # the plain columns are unchanged
    H, C = env.num_holes, env.num_cells
    c3 = env.game.board.hole_index["c3"]
    # the mover (second player) is 4 from winning, the first player 1: over the empty board's 5
    assert torch.allclose(xc[0, :, G_MY_BEST], torch.tensor(4 / 5)) and torch.allclose(xc[0, :, G_THEIR_BEST], torch.tensor(1 / 5))
    assert xc[0, c3, X_THEIR_THROUGH] == pytest.approx(1 / 5) and xc[0, H + c3, X_THEIR_THROUGH] == pytest.approx(1 / 5)
    assert torch.equal(xc[0, :H, X_MY_THROUGH:X_MY_SLACK + 2], xc[0, H:H + C, X_MY_THROUGH:X_MY_SLACK + 2])  # Hex: hole = cell
    assert (xc[0, H + C:, X_MY_THROUGH:X_MY_SLACK + 2] == 0).all()  # sides carry only the best distances
    assert xc[0, :H + C, X_MY_SLACK].max() == 1.0  # a cell on the mover's shortest path


def test_names_and_descriptions_of_the_options():
    assert parse_model_spec("l4h64") == {"layers": 4, "hidden": 64, "repeat": 1, "connection": False}
    assert parse_model_spec("L4H64R3C") == {"layers": 4, "hidden": 64, "repeat": 3, "connection": True}
    for name in ("l4h64", "l4h64c", "l4h64r2", "l2h16r3c"):
        assert ModelConfig.from_name(name).name == name
    for bad in ("l4h64r0", "l4h64x", "l4h64cr2", "l4h64r"):
        with pytest.raises(ValueError, match=r"l<layers>h<hidden>\[r<repeat>\]\[c\]"):
            ModelConfig.from_name(bad)
    assert ModelConfig(4, 64).to_dict() == {"layers": 4, "hidden": 64}  # a plain model's description as before
    assert ModelConfig(4, 64, 2, True).to_dict() == {"layers": 4, "hidden": 64, "repeat": 2, "connection": True}
    with pytest.raises(ValueError, match="reads 33 input features"):
        GraphNet(ModelConfig(2, 16, connection=True), NUM_FEATURES)


def test_repeat_runs_the_same_blocks_again():
    torch.manual_seed(0)
    once, twice = GraphNet(ModelConfig(2, 16)).eval(), GraphNet(ModelConfig(2, 16, repeat=2)).eval()
    twice.load_state_dict(once.state_dict())  # the same weights: repeat adds none
    env, state = _random_positions("hex-5", 4, 8, seed=1)
    enc = Encoder(env)
    four = GraphNet(ModelConfig(4, 16)).eval()
    weights = dict(once.state_dict())
    for name, value in once.state_dict().items():
        if name.startswith("blocks."):
            k, rest = name.split(".", 2)[1:]
            weights[f"blocks.{int(k) + 2}.{rest}"] = value
    four.load_state_dict(weights)  # blocks 0 1 0 1
    with torch.no_grad():
        a, b, c = once(enc(state), enc.graph), twice(enc(state), enc.graph), four(enc(state), enc.graph)
    assert not torch.allclose(a[0], b[0])
    for x, y in zip(b, c):
        assert torch.allclose(x, y, atol=1e-6)


def test_a_checkpoint_keeps_its_options_and_refuses_bad_ones(tmp_path):
    torch.manual_seed(0)
    model = GraphNet(ModelConfig(2, 16, repeat=2, connection=True)).eval()
    path = save_checkpoint(tmp_path / "m.pt", model, "hex-5")
    loaded = load_checkpoint(path).model
    assert loaded.config == model.config and loaded.config.name == "l2h16r2c"
    env, state = _random_positions("hex-5", 3, 6, seed=2)
    enc = Encoder(env, connection=True)
    with torch.no_grad():
        for x, y in zip(model(enc(state), enc.graph), loaded(enc(state), enc.graph)):
            assert torch.equal(x, y)
    data = torch.load(path, weights_only=True)
    for key, value, message in (("connection", "yes", "'connection' is 'yes'"),
                                ("repeat", 0, "'repeat' is 0"),
                                ("num_features", NUM_FEATURES, "made for 27 input features")):
        bad = {**data, "model": {**data["model"], key: value}}
        torch.save(bad, tmp_path / "bad.pt")
        with pytest.raises(CheckpointError, match=message):
            load_checkpoint(tmp_path / "bad.pt")


def test_the_native_keys_tell_the_options_apart():
    hex3 = Encoder(VecEnv("hex-3")).graph
    torch.manual_seed(0)
    plain, repeated = GraphNet(ModelConfig(1, 8)), GraphNet(ModelConfig(1, 8, repeat=2))
    repeated.load_state_dict(plain.state_dict())
    assert native.cache_key(plain, hex3, loadable=True) != native.cache_key(repeated, hex3, loadable=True)
    assert native.cache_key(plain, hex3) != native.cache_key(repeated, hex3)
    from conhex_zero.agents.leaf_step import cache_key
    env = VecEnv("hex-3")
    assert cache_key(env, Encoder(env)) != cache_key(env, Encoder(env, connection=True))


# ------------------------------------------------------------------ real packages (slow)
@pytest.mark.slow
@needs_compiler
def test_a_native_network_with_the_options_gives_the_eager_outputs(native_cache):
    """``l2h16r2c``: the repeated blocks and the wider input compile into the package (its own key)."""
    from conhex_zero.agents.evaluators import NetworkEvaluator

    torch.manual_seed(3)
    model = GraphNet(ModelConfig(2, 16, repeat=2, connection=True)).eval()
    env, state = _random_positions("conhex", 20, 30, seed=5)
    state = state.where(state.done, env.initial_state(1))
    eager = NetworkEvaluator(model, env, backend="eager")
    fast = NetworkEvaluator(model, env, backend="aoti", label="l2h16r2c")
    assert fast.native is not None
    (logits, value), (ref_logits, ref_value) = fast(state), eager(state)
    legal = ref_logits > -1e8
    assert torch.equal(logits > -1e8, legal)
    assert ((logits[legal] - ref_logits[legal]).abs() <= 1e-5 * (1 + ref_logits[legal].abs())).all()
    assert (value - ref_value).abs().max() <= 1e-5


def test_a_plain_network_warm_starts_its_connection_twin():
    from conhex_zero.nn.model import with_connection_inputs

    torch.manual_seed(1)
    plain = GraphNet(ModelConfig(2, 16)).eval()
    wide = with_connection_inputs(plain)
    assert wide.config.name == "l2h16c" and not wide.training
    env, state = _random_positions("conhex", 6, 20, seed=4)
    with torch.no_grad():
        a = plain(Encoder(env)(state), Encoder(env).graph)
        enc = Encoder(env, connection=True)
        b = wide(enc(state), enc.graph)
    for x, y in zip(a, b):
        assert torch.allclose(x, y, atol=1e-6)
    with pytest.raises(ValueError, match="reads the connection features already"):
        with_connection_inputs(wide)

"""Encoding and network: shapes, perspective, symmetry equivariance, one net for every board."""

import pytest
import math
import os
import subprocess
import sys

import torch

from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.encode import H_MINE, H_THEIRS, NUM_FEATURES, Encoder
from conhex_zero.nn.model import GraphNet, ModelConfig, num_parameters
from helpers import random_actions


def positions(spec, games, plies, seed=0):
    env = VecEnv(spec)
    gen = torch.Generator().manual_seed(seed)
    state = env.initial_state(games)
    for _ in range(plies):
        state = env.step(state, random_actions(env, state, gen, swap_prob=0.3))
    return env, state


def make_net(name="l3h32", seed=0):
    torch.manual_seed(seed)
    return GraphNet(ModelConfig.from_name(name)).eval()


@pytest.mark.parametrize("spec", ["conhex", "hex-2", "hex-5", "hex-11:swap"])
def test_shapes(spec):
    env, state = positions(spec, 6, 3)
    enc = Encoder(env)
    e = enc(state)
    N = env.num_holes + env.num_cells + 4
    assert e.x.shape == (6, N, NUM_FEATURES) and e.contact.shape == (6, env.num_cells, 4)
    logits, value, own = make_net()(e, enc.graph)
    assert logits.shape == (6, env.num_actions) and value.shape == (6,) and own.shape == (6, env.num_cells)
    assert value.abs().max() <= 1 and own.abs().max() <= 1


def test_model_names():
    assert ModelConfig.from_name("l8h128") == ModelConfig(8, 128)
    assert ModelConfig(4, 64).name == "l4h64"
    with pytest.raises(ValueError, match="l<layers>h<hidden>"):
        ModelConfig.from_name("big")
    assert 0.3e6 < num_parameters(GraphNet(ModelConfig(8, 128), NUM_FEATURES)) < 0.6e6


def test_features_are_from_the_movers_view():
    env, state = positions("conhex:noswap", 1, 5)
    x = Encoder(env)(state).x[0]
    holes = state.holes[0]
    mover = int(state.to_move[0])
    assert torch.equal(x[:69, H_MINE].bool(), holes == mover)
    assert torch.equal(x[:69, H_THEIRS].bool(), holes == 1 - mover)


@pytest.mark.parametrize("spec, plies, model", [("conhex:noswap", 20, "l4h32"), ("hex-6", 12, "l4h32"),
                                                ("conhex", 31, "l4h32"), ("conhex", 31, "l2h32r2c"),
                                                ("hex-6", 20, "l2h32r2c")])
def test_every_symmetry_permutes_the_outputs(spec, plies, model):
    """``l2h32r2c``: the connection features and repeated blocks keep the equivariance."""
    env, state = positions(spec, 16, plies, seed=3)
    net = make_net(model, seed=1)
    enc = Encoder(env, connection=net.config.connection)
    with torch.no_grad():
        logits, value, own = net(enc(state), enc.graph)
        tables = env.symmetries
        for k in range(len(tables)):
            image = tables.apply(state, k)
            l2, v2, o2 = net(enc(image), enc.graph)
            legal = env.legal_mask(image)
            want = tables.apply_actions(logits, k)
            assert torch.allclose(l2[legal], want[legal], atol=1e-4), tables.names[k]
            assert torch.allclose(v2, value, atol=1e-5), tables.names[k]
            assert torch.allclose(o2, tables.apply_cells(own, k), atol=1e-5), tables.names[k]


def test_one_net_plays_every_hex_size():
    net = make_net("l2h16")
    for n in (5, 9):
        env, state = positions(f"hex-{n}", 3, 4)
        enc = Encoder(env)
        logits, value, _ = net(enc(state), enc.graph)
        assert logits.shape == (3, n * n + 1) and torch.isfinite(logits).all() and torch.isfinite(value).all()


def test_bf16_autocast_on_cpu_gives_finite_close_outputs_and_trains():
    """The network runs in bf16 (no sparse kernel needs fp32) and a bf16 training step learns."""
    from conhex_zero.train.config import OptimConfig
    from conhex_zero.train.learner import Learner
    from conhex_zero.train.replay import ReplayBuffer

    env = VecEnv("conhex")
    gen = torch.Generator().manual_seed(4)
    state = env.initial_state(48)
    for _ in range(10):
        state = env.reset_done(env.step(state, env.random_actions(state, gen)))
    torch.manual_seed(0)
    model = GraphNet(ModelConfig(2, 32), NUM_FEATURES).eval()
    encoder = Encoder(env)
    with torch.no_grad():
        logits, value, own = model(encoder(state), encoder.graph)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits16, value16, own16 = model(encoder(state), encoder.graph)
    for a, b in ((logits, logits16), (value, value16), (own, own16)):
        assert torch.isfinite(b).all() and (a - b.float()).abs().max() < 0.1

    replay = ReplayBuffer(env, 256)
    legal = env.legal_mask(state)
    targets = torch.softmax(torch.randn(legal.shape, generator=gen), 1) * legal
    outcome = torch.where(torch.rand(48, generator=gen) < 0.5, 1, -1)
    replay.add(state, targets / targets.sum(1, keepdim=True), outcome, state.cells.long().clamp(max=1))
    model.train()
    learner = Learner(model, env, OptimConfig(batch_size=32, lr=3e-3, warmup_steps=0), 30, seed=0)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        first = learner.train(replay, 1, symmetries=False)["train/total_loss"]
        last = learner.train(replay, 30, symmetries=False)["train/total_loss"]
    assert math.isfinite(last) and last < first


def test_the_cpu_graph_carries_sparse_copies_of_its_blocks():
    """On the CPU the inference path multiplies by sparse copies of the graph's blocks: the same
    matrices; on another device there are none (dense products there)."""
    graph = Encoder(VecEnv("conhex")).graph
    assert graph.sparse is not None
    for dense, sparse in zip((graph.from_cells, graph.cells_from_holes, graph.cells_from_sides), graph.sparse):
        assert sparse.is_sparse and sparse.is_coalesced() and torch.equal(sparse.to_dense(), dense)
        assert torch.equal(sparse.coalesce().indices(), sparse.indices())
    assert graph.sparse[0]._nnz() == int((graph.from_cells != 0).sum()) < graph.from_cells.numel() // 5
    assert graph.to("meta").sparse is None and graph.to("cpu").sparse is not None
    # CONHEX_ZERO_HOST_READS=0 makes the CPU take every other device's path: dense products.
    code = ("from conhex_zero.env.vec_env import VecEnv; from conhex_zero.nn.encode import Encoder; "
            "print(Encoder(VecEnv('hex-4')).graph.sparse is None)")
    env = {**os.environ, "CONHEX_ZERO_HOST_READS": "0"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "True", out.stderr


@pytest.mark.parametrize("spec, batch", [("conhex", 1), ("conhex", 7), ("hex-5", 3), ("hex-11:swap", 2)])
def test_inference_path_computes_the_training_paths_function(spec, batch):
    """Without gradients the blocks take their in-place path (``Block.infer_``): the same outputs
    as the path that training differentiates, to float rounding, and the input is left alone."""
    env, state = positions(spec, batch, 5, seed=batch)
    enc = Encoder(env)
    e = enc(state)
    torch.manual_seed(1)
    net = GraphNet(ModelConfig.from_name("l3h32"), NUM_FEATURES).eval()
    for p in net.parameters():  # gates and biases away from their initial values, so each term counts
        p.data.add_(0.1 * torch.randn_like(p))
    x_before = e.x.clone()
    with torch.no_grad():
        fast = net(e, enc.graph)
    slow = net(e, enc.graph)  # gradients on: every block's ``forward``
    assert torch.equal(e.x, x_before)
    for a, b in zip(fast, slow):
        assert a.shape == b.shape and (a - b.detach()).abs().max() < 1e-5
    # Each block's two paths on one input (the in-place one on a copy).
    block = net.blocks[0]
    x = torch.randn(enc.graph.num_nodes, batch, 32)
    to_cells = torch.rand(batch, env.num_cells, 4)
    with torch.no_grad():
        ref = block(x, enc.graph, to_cells, to_cells.flip(1))
        out = block.infer_(x.clone(), enc.graph, to_cells, to_cells.flip(1))
    assert (out - ref).abs().max() < 1e-5


def test_the_bf16_evaluator_runs_every_tensor_in_bf16_and_follows_the_trained_weights(monkeypatch):
    """``precision="bf16"``: the weights are cast for each call (norms included, no autocast), so the
    outputs are close to float32's, and a change of the float32 weights (a training step) is seen
    at the next call without copying anything."""
    from conhex_zero.agents.evaluators import NetworkEvaluator

    env, state = positions("conhex", 24, 12, seed=3)
    net = make_net("l3h32", seed=2)
    for p in net.parameters():
        p.data.add_(0.05 * torch.randn_like(p))
    fp32 = NetworkEvaluator(net, env, precision="fp32")
    bf16 = NetworkEvaluator(net, env, precision="bf16")
    norms: list[torch.dtype] = []
    layer_norm = torch.nn.functional.layer_norm
    monkeypatch.setattr(torch.nn.functional, "layer_norm", lambda x, *a, **k: norms.append(x.dtype) or layer_norm(x, *a, **k))
    l32, v32 = fp32(state)
    assert set(norms) == {torch.float32}
    norms.clear()
    l16, v16 = bf16(state)
    assert set(norms) == {torch.bfloat16} and len(norms) == 4  # the blocks' norms and the last one, in bf16
    legal = env.legal_mask(state)
    p32, p16 = torch.softmax(l32, 1), torch.softmax(l16, 1)
    assert (p32 - p16).abs().max() < 0.05 and (v32 - v16).abs().max() < 0.05
    assert torch.equal(l16 <= -1e8, ~legal)
    with torch.no_grad():
        net.value[-1].bias.add_(1.0)  # what an optimiser step does: the float32 weights change in place
    assert (bf16(state)[1] - v16).abs().max() > 0.01
    with pytest.raises(ValueError, match="precision 'fp8'"):
        NetworkEvaluator(net, env, precision="fp8")

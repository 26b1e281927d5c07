"""The same engine code on CUDA gives exactly the CPU results (skipped without a GPU)."""

import copy

import pytest
import torch

from conhex_zero.env.vec_env import VecEnv
from helpers import random_actions

from optional import missing

pytestmark = pytest.mark.cuda


@pytest.fixture(autouse=True)
def _needs_cuda():
    if not torch.cuda.is_available():
        missing("cuda", "no CUDA device")


@pytest.mark.parametrize("spec", ["conhex", "hex-11:swap", "hex-7:forbid=1,random=1"])
def test_cuda_matches_cpu(spec):
    cpu, gpu = VecEnv(spec, "cpu"), VecEnv(spec, "cuda")
    gen = torch.Generator().manual_seed(0)
    a = cpu.initial_state(512)
    b = gpu.initial_state(512)
    while not bool(a.done.all()):
        action = random_actions(cpu, a, gen)
        assert torch.equal(cpu.legal_mask(a), gpu.legal_mask(b).cpu())
        a = cpu.step(a, action)
        b = gpu.step(b, action.cuda())
        assert a.equal(b.to("cpu"))


def test_network_and_search_on_cuda_match_cpu():
    from conhex_zero.agents.evaluators import NetworkEvaluator
    from conhex_zero.agents.game_search import GameSearch
    from conhex_zero.nn.encode import NUM_FEATURES
    from conhex_zero.nn.model import GraphNet, ModelConfig
    from conhex_zero.search import rng
    from conhex_zero.search.mcts import SearchConfig

    torch.manual_seed(0)
    model = GraphNet(ModelConfig(3, 32), NUM_FEATURES).eval()
    cpu, gpu = VecEnv("conhex", "cpu"), VecEnv("conhex", "cuda")
    gen = torch.Generator().manual_seed(1)
    state = cpu.initial_state(64)
    for _ in range(15):
        state = cpu.step(state, random_actions(cpu, state, gen))
    ev_cpu = NetworkEvaluator(copy.deepcopy(model), cpu, autocast=False)
    ev_gpu = NetworkEvaluator(copy.deepcopy(model), gpu, autocast=False)
    l1, v1 = ev_cpu(state)
    l2, v2 = ev_gpu(state.to("cuda"))
    assert torch.allclose(l1, l2.cpu(), atol=1e-3) and torch.allclose(v1, v2.cpu(), atol=1e-3)
    ev_bf16 = NetworkEvaluator(copy.deepcopy(model), gpu, autocast=True)
    l3, v3 = ev_bf16(state.to("cuda"))
    assert torch.isfinite(l3).all() and (v3.cpu() - v1).abs().max() < 0.1
    config = SearchConfig(scheme="gumbel", num_simulations=16)
    out = GameSearch(gpu, ev_gpu, config).run(state.to("cuda"), rng.make_keys(0, 64, device="cuda"))
    assert (out.visit_counts.sum(1) == 16).all()
    assert cpu.legal_mask(state).gather(1, out.action.cpu()[:, None]).all()

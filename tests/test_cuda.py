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


def _tiny_selfplay(cuda_graphs: bool = False, compile: bool = False, precision: str = "autocast"):
    from conhex_zero.agents.evaluators import NetworkEvaluator
    from conhex_zero.nn.encode import NUM_FEATURES
    from conhex_zero.nn.model import GraphNet, ModelConfig
    from conhex_zero.train.config_load import load_config
    from conhex_zero.train.replay import ReplayBuffer
    from conhex_zero.train.selfplay import SelfPlay

    config = load_config(None, ["game=conhex", "model=l2h16", "device=cuda", "selfplay.games=32",
                                "selfplay.full_sims=8", "selfplay.cheap_sims=4", "replay.capacity=4096",
                                f"selfplay.cuda_graphs={cuda_graphs}", f"selfplay.compile={compile}"])
    env = VecEnv("conhex", "cuda")
    torch.manual_seed(0)
    model = GraphNet(ModelConfig(2, 16), NUM_FEATURES).to("cuda").eval()
    evaluator = NetworkEvaluator(model, env, compile=compile, precision=precision)
    return SelfPlay(env, config.selfplay, evaluator, seed=0), ReplayBuffer(env, 4096)


@pytest.mark.parametrize("precision", ["autocast", "bf16"])
def test_a_selfplay_move_never_synchronises_on_cuda(precision):
    from conhex_zero.train.selfplay import SelfPlayStats

    selfplay, replay = _tiny_selfplay(precision=precision)
    stats = SelfPlayStats()
    with torch.no_grad():
        selfplay.step(replay, stats)  # warm-up: lazy initialisation may synchronise
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")
        try:
            for _ in range(4):
                selfplay.step(replay, stats)
        finally:
            torch.cuda.set_sync_debug_mode("default")
    selfplay.read_counters(stats)
    assert stats.steps == 5


def test_cuda_graphs_replay_the_eager_search():
    from conhex_zero.agents.evaluators import NetworkEvaluator
    from conhex_zero.agents.game_search import GameSearch
    from conhex_zero.nn.encode import NUM_FEATURES
    from conhex_zero.nn.model import GraphNet, ModelConfig
    from conhex_zero.search import rng
    from conhex_zero.search.mcts import SearchConfig

    env = VecEnv("conhex", "cuda")
    torch.manual_seed(0)
    evaluator = NetworkEvaluator(GraphNet(ModelConfig(2, 32), NUM_FEATURES).to("cuda").eval(), env)
    gen = torch.Generator().manual_seed(2)
    state = VecEnv("conhex").initial_state(48)
    for _ in range(6):
        state = VecEnv("conhex").step(state, random_actions(VecEnv("conhex"), state, gen))
    state = state.to("cuda")
    eager = GameSearch(env, evaluator, SearchConfig(num_simulations=24))
    graphed = GameSearch(env, evaluator, SearchConfig(num_simulations=24, cuda_graphs=True))
    for k in range(3):  # the first graphed search runs eagerly and captures; the others replay
        keys = rng.make_keys(10 + k, 48, device="cuda")
        a, b = eager.run(state, keys), graphed.run(state, keys)
        for field in ("action", "visit_counts", "policy_target", "root_value"):
            assert torch.equal(getattr(a, field), getattr(b, field)), (k, field)
    assert graphed.searcher._graphs


def test_bf16_training_step_on_cuda_lowers_the_loss():
    from conhex_zero.nn.encode import NUM_FEATURES
    from conhex_zero.nn.model import GraphNet, ModelConfig
    from conhex_zero.train.config import OptimConfig
    from conhex_zero.train.learner import Learner

    selfplay, replay = _tiny_selfplay()
    with torch.no_grad():
        selfplay.run(replay, 256)
    torch.manual_seed(0)
    model = GraphNet(ModelConfig(2, 16), NUM_FEATURES).to("cuda")
    learner = Learner(model, selfplay.env, OptimConfig(batch_size=64, lr=3e-3, warmup_steps=0), 40, seed=0)
    first = learner.train(replay, 1, symmetries=False)["train/total_loss"]
    last = learner.train(replay, 40, symmetries=False)["train/total_loss"]
    assert last < first


def test_lean_search_and_kept_trees_on_cuda_match_cpu():
    """The lean search (one position at a time, as play, GTP and the evaluation use it) runs with its
    tensors on CUDA and gives exactly what it gives on the CPU from the same network outputs (the
    network runs on CUDA for both: CPU and CUDA arithmetic differ in the last bits, which flips the
    near-ties of an untrained network); its kept subtree carries on on CUDA."""
    from conhex_zero.agents.evaluators import NetworkEvaluator
    from conhex_zero.agents.game_search import GameSearch
    from conhex_zero.agents.search_configs import play_config
    from conhex_zero.nn.encode import NUM_FEATURES
    from conhex_zero.nn.model import GraphNet, ModelConfig
    from conhex_zero.search import rng
    from conhex_zero.search.lean import subtree

    torch.manual_seed(0)
    cpu, gpu = VecEnv("hex-5", "cpu"), VecEnv("hex-5", "cuda")
    network = NetworkEvaluator(GraphNet(ModelConfig(2, 32), NUM_FEATURES).to("cuda").eval(), gpu, autocast=False)

    def on_cuda_for_the_cpu(state):
        logits, value = network(state.to("cuda"))
        return logits.cpu(), value.cpu()

    searches = {"cpu": GameSearch(cpu, on_cuda_for_the_cpu, play_config(64), lean_max_batch=1),
                "cuda": GameSearch(gpu, network, play_config(64), lean_max_batch=1)}
    state = cpu.initial_state(1)
    out = {}
    for dev, search in searches.items():
        first = search.run(state.to(dev), rng.make_keys(0, 1, device=dev))
        kept = subtree(first.lean_trees[0], [int(first.action[0])])
        assert kept is not None and int(kept.edge_visits[0].sum()) > 0
        after = cpu.step(state, first.action.cpu()).to(dev)
        second = search.run(after, rng.make_keys(1, 1, device=dev), keep=[kept])
        out[dev] = (first, second)
        assert first.action.device.type == dev and second.visit_counts.device.type == dev
    for a, b in zip(out["cpu"], out["cuda"]):
        assert int(a.action[0]) == int(b.action[0])
        assert torch.equal(a.visit_counts, b.visit_counts.cpu())
        assert torch.allclose(a.root_value, b.root_value.cpu(), atol=1e-6)
    # Keys made on the CPU (the default of rng.make_keys) drive a CUDA search to the same result.
    again = searches["cuda"].run(state.to("cuda"), rng.make_keys(0, 1))
    assert int(again.action[0]) == int(out["cuda"][0].action[0])
    assert torch.equal(again.visit_counts, out["cuda"][0].visit_counts)


def test_bf16_searches_replayed_as_cuda_graphs_follow_the_trained_weights():
    """selfplay.precision=bf16 with CUDA graphs: the graphs read the bf16 copy of the weights, which
    ``refresh`` updates in place after a training step, so a replay equals an eager search with the
    new weights."""
    from conhex_zero.agents.evaluators import NetworkEvaluator
    from conhex_zero.agents.game_search import GameSearch
    from conhex_zero.nn.encode import NUM_FEATURES
    from conhex_zero.nn.model import GraphNet, ModelConfig
    from conhex_zero.search import rng
    from conhex_zero.search.mcts import SearchConfig

    env = VecEnv("conhex", "cuda")
    torch.manual_seed(0)
    model = GraphNet(ModelConfig(2, 32), NUM_FEATURES).to("cuda").eval()
    evaluator = NetworkEvaluator(model, env, precision="bf16")
    state = VecEnv("conhex").initial_state(48).to("cuda")
    eager = GameSearch(env, evaluator, SearchConfig(num_simulations=16))
    graphed = GameSearch(env, evaluator, SearchConfig(num_simulations=16, cuda_graphs=True))
    keys = rng.make_keys(3, 48, device="cuda")
    graphed.run(state, keys)  # eager, then captured
    graphed.run(state, keys)  # replayed
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))  # what a training step does: in place
    evaluator.refresh()
    a, b = eager.run(state, keys), graphed.run(state, keys)
    for field in ("action", "visit_counts", "policy_target", "root_value"):
        assert torch.equal(getattr(a, field), getattr(b, field)), field

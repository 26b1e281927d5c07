"""The network's native inference (``nn/native.py``): the backend's choice and names, and, in the
slow suite, a real AOTInductor package of the shipped ConHex model: its outputs against the eager
network's, the cache used by a new process without building again, a damaged package built again,
and every command still running on the eager path where no package can be built (no C++ compiler);
and training's self-play through a package that takes the trained weights at run time.

The suite runs with ``CONHEX_ZERO_BACKEND=eager`` (tests/conftest.py); the tests that build set the
backend themselves and use a cache folder of their own (``CONHEX_ZERO_CACHE``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conhex_zero.agents.evaluators import NATIVE_SLICE, NetworkEvaluator
from conhex_zero.agents.player_specs import PlayerSpecError, parse_player
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn import native
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.nn.encode import NUM_FEATURES, Encoder
from conhex_zero.nn.model import GraphNet, ModelConfig
from helpers import needs_compiler

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "checkpoints" / "conhex-l4h64-v4.pt"
BOOK = ROOT / "checkpoints" / "books" / "hex5-l4h64"


def _positions(env: VecEnv, batch: int, seed: int, plies: int = 14):
    gen = torch.Generator().manual_seed(seed)
    state = env.initial_state(batch)
    for _ in range(plies):
        state = env.reset_done(env.step(state, env.random_actions(state, gen)), gen)
    return state


# ------------------------------------------------------------------ choosing the backend (fast)
def test_the_default_backend_follows_the_environment_and_the_setter(monkeypatch):
    monkeypatch.setattr(native, "_default", None)
    monkeypatch.delenv(native.BACKEND_ENV, raising=False)
    assert native.default_backend() == "auto"
    monkeypatch.setenv(native.BACKEND_ENV, "eager")
    assert native.default_backend() == "eager"
    native.set_default_backend("aoti")
    assert native.default_backend() == "aoti"
    native.set_default_backend(None)
    assert native.default_backend() == "eager"
    with pytest.raises(ValueError, match="one of auto, aoti, eager"):
        native.set_default_backend("onnx")


def test_only_a_cpu_network_asked_for_it_takes_the_native_path():
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert native.wants_native("auto", cpu) and native.wants_native("aoti", cpu)
    assert not native.wants_native("eager", cpu)
    assert not native.wants_native("auto", cuda)  # the GPU keeps its own path (CUDA graphs, bf16)
    assert not native.wants_native(None, cpu)  # the suite's default is eager (conftest)


def test_the_eager_backend_builds_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(native.CACHE_ENV, str(tmp_path))
    env = VecEnv("hex-3")
    evaluator = NetworkEvaluator(GraphNet(ModelConfig(1, 8), NUM_FEATURES), env, backend="eager")
    assert evaluator.native is None and list(tmp_path.iterdir()) == []


def test_the_cache_key_changes_with_the_weights_and_the_board():
    torch.manual_seed(0)
    model = GraphNet(ModelConfig(1, 8), NUM_FEATURES)
    hex3, hex4 = Encoder(VecEnv("hex-3")).graph, Encoder(VecEnv("hex-4")).graph
    key = native.cache_key(model, hex3)
    assert native.cache_key(model, hex3) == key
    assert native.cache_key(model, hex4) != key
    with torch.no_grad():
        model.embed.bias[0] += 1e-6
    assert native.cache_key(model, hex3) != key


def test_a_loadable_package_is_one_per_network_size_and_board():
    """Training's self-play package takes its weights at run time: its key ignores their values."""
    torch.manual_seed(0)
    model = GraphNet(ModelConfig(1, 8), NUM_FEATURES)
    hex3, hex4 = Encoder(VecEnv("hex-3")).graph, Encoder(VecEnv("hex-4")).graph
    key = native.cache_key(model, hex3, loadable=True)
    assert key != native.cache_key(model, hex3)
    with torch.no_grad():
        model.embed.bias[0] += 1.0
    assert native.cache_key(model, hex3, loadable=True) == key
    assert native.cache_key(model, hex4, loadable=True) != key
    assert native.cache_key(GraphNet(ModelConfig(1, 16), NUM_FEATURES), hex3, loadable=True) != key


class _FakeLoadable:
    """A loadable package's stand-in: the model's function on the weights it was last given."""

    def __init__(self, model):
        self.loads = 0
        self.copy = GraphNet(ModelConfig(1, 8), NUM_FEATURES)
        self.load_weights(model)

    def load_weights(self, model) -> None:
        self.loads += 1
        self.copy.load_state_dict(model.state_dict())

    def __call__(self, encoded, graph):
        with torch.no_grad():
            return self.copy(encoded, graph)


def test_live_weights_reach_the_package_after_every_change_and_only_then(monkeypatch):
    """The evaluator of training's self-play loads the model's weights into its package when a
    training step (or ``load_state_dict``) changed them, before the next evaluation, and not again
    while they stay the same."""
    torch.manual_seed(0)
    env = VecEnv("hex-4")
    model = GraphNet(ModelConfig(1, 8), NUM_FEATURES)
    made: list[_FakeLoadable] = []

    def fake(model, graph, sample, label="", say=None, loadable=False, game=None):
        assert loadable
        made.append(_FakeLoadable(model))
        return made[-1]

    monkeypatch.setattr(native, "native_network", fake)
    live = NetworkEvaluator(model, env, backend="aoti", live_weights=True)
    eager = NetworkEvaluator(model, env, backend="eager")
    assert live.native is made[0] and live.live_weights and made[0].loads == 1
    state = _positions(env, 6, seed=1, plies=4)

    def same() -> bool:
        (a, v), (b, w) = live(state), eager(state)
        return torch.allclose(a, b) and torch.allclose(v, w)

    assert same()
    live(state)
    assert made[0].loads == 1  # unchanged weights: nothing loaded again
    optimiser = torch.optim.AdamW(model.parameters(), lr=0.1)
    logits, value, _ = model(live.encoder(state), live.encoder.graph)
    (value.square().mean() + logits.logsumexp(-1).mean()).backward()
    optimiser.step()
    assert same() and made[0].loads == 2  # the step's new weights, loaded once
    model.load_state_dict({k: v * 0.5 for k, v in model.state_dict().items()})
    assert same() and made[0].loads == 3


def test_a_player_names_its_backend():
    path = str(MODEL)
    assert parse_player(f"{path}:backend=eager").backend == "eager"
    assert parse_player(f"{path}:sims=8:backend=aoti").simulations == 8
    assert parse_player(f"policy:{path}:backend=eager").backend == "eager"
    both = parse_player(f"{path}:seconds=0.5:book={BOOK}:backend=eager")
    assert (both.book, both.backend, both.seconds) == (str(BOOK), "eager", 0.5)
    assert parse_player(f"{path}:backend=eager:book={BOOK}").book == str(BOOK)
    assert parse_player(path).backend is None
    with pytest.raises(PlayerSpecError, match="backend='onnx' is none of auto, aoti, eager"):
        parse_player(f"{path}:backend=onnx")


def test_where_no_package_can_be_built_the_evaluator_runs_eager_after_one_line(tmp_path, monkeypatch, capsys):
    def fails(*args, **kwargs):
        raise RuntimeError("C++ compile error: g++ not found")

    monkeypatch.setenv(native.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(native, "_build", fails)
    monkeypatch.setattr(native, "_loaded", {})
    monkeypatch.setattr(native, "_failed", {})
    torch.manual_seed(1)
    env = VecEnv("hex-4")
    model = GraphNet(ModelConfig(1, 8), NUM_FEATURES)
    first = NetworkEvaluator(model, env, backend="aoti", label="tiny")
    again = NetworkEvaluator(model, env, backend="auto", label="tiny")  # the failure is remembered
    assert first.native is None and again.native is None
    lines = [line for line in capsys.readouterr().err.splitlines() if line]
    assert lines[0].startswith("conhex-zero: building native inference for tiny")  # said before the build
    assert lines[1:] == ["conhex-zero: native inference unavailable for tiny (C++ compile error: g++ not found); "
                         "using the eager path"]
    state = _positions(env, 6, seed=2, plies=4)
    eager = NetworkEvaluator(model, env, backend="eager")
    assert all(torch.equal(a, b) for a, b in zip(first(state), eager(state)))
    assert [p.name for p in tmp_path.iterdir()] != [] and not list(tmp_path.glob("*.pt2"))


def test_a_gtp_boardsize_switch_never_builds_inside_the_command(tmp_path, monkeypatch, capsys):
    """The engine's start may build (a controller allows a start-up); ``boardsize`` to a board the
    model was never built for runs eager, after one line, rather than spend a build's 20 s in one
    command."""
    from conhex_zero.play.gtp_engine import GTPEngine

    builds: list[str] = []

    def fails(model, graph, sample, target, loadable=False):
        builds.append(target.name)
        raise RuntimeError("no compiler")

    monkeypatch.setenv(native.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(native, "_build", fails)
    monkeypatch.setattr(native, "_loaded", {})
    monkeypatch.setattr(native, "_failed", {})
    monkeypatch.setattr(native, "_default", "auto")
    engine = GTPEngine(str(ROOT / "checkpoints" / "hex5-l4h64.pt"), game="hex-5", simulations=4)
    assert len(builds) == 1  # at the start: tried (and fell back to eager)
    assert engine.handle("boardsize 4").startswith("=")
    assert engine.handle("genmove b").startswith("= ")
    assert len(builds) == 1  # the switch built nothing
    err = capsys.readouterr().err
    assert "native inference for " in err and "is not built yet on this board; using the eager path" in err
    engine.close()


def test_commands_take_a_backend_and_refuse_another(capsys):
    from conhex_zero.cli.main import main

    assert main(["bench", "net", "--game", "hex-3", "--model", "l1h8", "--batch", "2", "--seconds", "0.05",
                 "--backend", "eager", "--json"]) == 0
    assert '"backend": "eager"' in capsys.readouterr().out
    assert main(["play", str(MODEL), "--backend", "onnx"]) == 2
    assert "invalid choice: 'onnx'" in capsys.readouterr().err


# ------------------------------------------------------------------ a real package (slow)
@pytest.mark.slow
@needs_compiler
def test_the_native_network_gives_the_eager_networks_outputs(native_cache):
    """Within 1e-5 relative to the logits' size (1e-5 absolute for values in [-1, 1]): the same
    arithmetic in another order. The eager network's own two paths (``Block.forward`` and
    ``Block.infer_``) differ by as much, which this test checks too."""
    checkpoint = load_checkpoint(MODEL)
    env = VecEnv(checkpoint.game)
    lines: list[str] = []
    encoder = Encoder(env)
    built = native.native_network(checkpoint.model, encoder.graph, encoder(env.initial_state(2)), "v4", say=lines.append)
    assert built is not None and built.build_seconds is not None, lines
    assert lines[0].startswith("building native inference for v4") and lines[1].startswith("built native inference")
    assert list(native_cache.glob("*.pt2")) == [built.path]
    eager = NetworkEvaluator(checkpoint.model, env, backend="eager")
    fast = NetworkEvaluator(checkpoint.model, env, backend="aoti")
    assert fast.native is built  # one package per model in a process
    sizes: list[int] = []
    package_call = fast.forward
    fast.forward = lambda encoded, graph: sizes.append(encoded.x.shape[0]) or package_call(encoded, graph)
    for batch in (1, 2, 7, 33, 64):
        state = _positions(env, batch, seed=batch)
        (logits, value), (ref_logits, ref_value) = fast(state), eager(state)
        legal = ref_logits > -1e8
        assert torch.equal(logits > -1e8, legal)
        assert ((logits[legal] - ref_logits[legal]).abs() <= 1e-5 * (1 + ref_logits[legal].abs())).all()
        assert (value - ref_value).abs().max() <= 1e-5
        slices = [min(NATIVE_SLICE, batch - i) for i in range(0, batch, NATIVE_SLICE)]
        assert sizes[-len(slices):] == slices  # the package's calls: at most NATIVE_SLICE positions each
        with torch.enable_grad():  # the functional path: the floor of float reordering
            functional = checkpoint.model(encoder(state, legal), encoder.graph)[0].detach()
        assert ((functional[legal] - ref_logits[legal]).abs() <= 1e-5 * (1 + ref_logits[legal].abs())).all()


@pytest.mark.slow
@needs_compiler
def test_a_new_process_loads_the_package_without_building(native_cache):
    checkpoint = load_checkpoint(MODEL)
    env = VecEnv(checkpoint.game)
    encoder = Encoder(env)
    assert native.native_network(checkpoint.model, encoder.graph, encoder(env.initial_state(2))) is not None
    code = ("import torch; from conhex_zero.nn.checkpoint import load_checkpoint; "
            "from conhex_zero.env.vec_env import VecEnv; from conhex_zero.agents.evaluators import NetworkEvaluator; "
            f"c = load_checkpoint({str(MODEL)!r}); env = VecEnv(c.game); "
            "e = NetworkEvaluator(c.model, env, backend='auto'); "
            "print(e.native is not None and e.native.build_seconds is None, float(e(env.initial_state(1))[1][0]))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, native.CACHE_ENV: str(native_cache)}, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "building" not in run.stderr and "unavailable" not in run.stderr
    loaded, value = run.stdout.split()
    assert loaded == "True"
    with torch.no_grad():
        reference = float(NetworkEvaluator(checkpoint.model, env, backend="eager")(env.initial_state(1))[1][0])
    assert abs(float(value) - reference) <= 1e-5


@pytest.mark.slow
@needs_compiler
def test_a_damaged_package_is_built_again(tmp_path, monkeypatch):
    monkeypatch.setenv(native.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(native, "_loaded", {})
    torch.manual_seed(3)
    env = VecEnv("hex-3")
    encoder = Encoder(env)
    model = GraphNet(ModelConfig(1, 8), NUM_FEATURES).eval()
    key = native.cache_key(model, encoder.graph)
    (tmp_path / f"{key}.pt2").write_bytes(b"not a package")
    lines: list[str] = []
    built = native.native_network(model, encoder.graph, encoder(env.initial_state(2)), say=lines.append)
    assert built is not None and built.build_seconds is not None
    assert any(line.startswith("building") for line in lines)
    state = _positions(env, 5, seed=1, plies=3)
    with torch.no_grad():
        ref = model(encoder(state), encoder.graph)
    assert torch.allclose(built(encoder(state), encoder.graph)[0], ref[0], atol=1e-5)


@pytest.mark.slow
def test_without_a_compiler_every_command_runs_eager_and_says_so(tmp_path):
    """A machine without a C++ compiler (``CXX`` names none): the package cannot be built, and the
    command plays on the eager path after one line saying so."""
    env = {**os.environ, native.CACHE_ENV: str(tmp_path), "CXX": str(tmp_path / "no-such-compiler"),
           native.BACKEND_ENV: "auto"}
    run = subprocess.run([sys.executable, "-m", "conhex_zero", "bench", "search", "--game", "hex-3", "--model", "l1h8",
                          "--batch", "1", "--sims", "8", "--seconds", "0.2", "--json"],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert run.returncode == 0, run.stderr
    unavailable = [line for line in run.stderr.splitlines() if "native inference unavailable" in line]
    assert len(unavailable) == 1 and unavailable[0].endswith("using the eager path"), run.stderr
    assert "Traceback" not in run.stderr
    assert '"backend": "eager"' in run.stdout
    assert list(tmp_path.glob("*.pt2")) == []
    # Training with selfplay.backend auto trains on, eager, after one line.
    train = subprocess.run([sys.executable, "-m", "conhex_zero", "train", "--config", "configs/tiny.yaml", "--run-dir",
                            str(tmp_path / "run"), "--quiet", "--stop-after", "1", "selfplay.backend=auto",
                            "eval.every=100"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert train.returncode == 0, train.stderr
    unavailable = [line for line in train.stderr.splitlines() if "native inference unavailable" in line]
    assert len(unavailable) == 1 and "self-play's l2h16" in unavailable[0], train.stderr
    assert "Traceback" not in train.stderr and (tmp_path / "run" / "latest.pt").is_file()


@pytest.mark.slow
@needs_compiler
def test_the_backends_benchmark_measures_both_ways(native_cache, tmp_path):
    out = tmp_path / "backends.json"
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_backends.py"), "--batches", "1", "4", "--calls",
                          "3", "--sims", "32", "--positions", "1", "--rounds", "1", "--gtp-sims", "8", "--gtp-runs", "1",
                          "--out", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=900,
                         env={**os.environ, native.CACHE_ENV: str(native_cache)})
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(out.read_text())
    assert set(result["network_positions_per_s"]) == {"eager", "aoti"}
    assert result["search"]["same_moves"] in (True, False) and result["search"]["aoti"]["sims_per_s"] > 0
    assert set(result["gtp_first_genmove_s"]["8"]) >= {"eager", "aoti"}


@pytest.mark.slow
@needs_compiler
def test_training_self_play_runs_natively_on_the_weights_it_trains(native_cache, monkeypatch, capsys):
    """``selfplay.backend: aoti``: one loadable package for the run (built once, for the network's
    size and board), the model's weights loaded into it before each self-play phase, its outputs
    the eager network's after a training step, and a second package of the same size in the same
    process independent of the first (two evaluators never share a loadable package)."""
    from conhex_zero.train.config_load import load_config
    from conhex_zero.train.loop import train
    from conhex_zero.train.trainer import Hooks

    monkeypatch.setattr(native, "_default", None)
    loads: list[int] = []
    calls: list[int] = []
    real_load, real_call = native.NativeNetwork.load_weights, native.NativeNetwork.__call__
    monkeypatch.setattr(native.NativeNetwork, "load_weights",
                        lambda self, model: loads.append(1) or real_load(self, model))
    monkeypatch.setattr(native.NativeNetwork, "__call__",
                        lambda self, encoded, graph: calls.append(encoded.x.shape[0]) or real_call(self, encoded, graph))
    config = load_config(ROOT / "configs" / "tiny.yaml", ["iterations=2", "selfplay.backend=aoti", "eval.every=100"])
    hooks = Hooks(phases={})
    run = train(config, native_cache / "run", progress=False, log=lambda *_: None, hooks=hooks)
    assert run.iterations == 2
    err = capsys.readouterr().err
    assert err.count("built native inference for self-play's l2h16") == 1, err
    built = float(re.search(r"built native inference for self-play's l2h16 in ([0-9.]+) s", err).group(1))
    assert hooks.phases["compile"] >= built - 0.05  # the build is the run's compile time, not unaccounted
    assert calls and len(loads) >= 2  # the initial weights, then every phase after a training step

    # The same package (the run's size and board, no second build) against the eager network,
    # before and after a training step.
    env = VecEnv("hex-3")
    torch.manual_seed(0)
    model = GraphNet(ModelConfig(2, 16), NUM_FEATURES)
    live = NetworkEvaluator(model, env, backend="aoti", live_weights=True)
    other = NetworkEvaluator(GraphNet(ModelConfig(2, 16), NUM_FEATURES), env, backend="aoti", live_weights=True)
    eager = NetworkEvaluator(model, env, backend="eager")
    assert live.native is not None and other.native is not None and live.native is not other.native
    assert live.native.path == other.native.path  # one package file for the size and board
    assert "building" not in capsys.readouterr().err
    state = _positions(env, 9, seed=3, plies=3)

    def close(a: NetworkEvaluator, b: NetworkEvaluator) -> bool:
        (x, v), (y, w) = a(state), b(state)
        return bool(((x - y).abs() <= 1e-5 * (1 + y.abs())).all() and (v - w).abs().max() <= 1e-5)

    assert close(live, eager) and not close(other, eager)
    optimiser = torch.optim.AdamW(model.parameters(), lr=0.05)
    logits, value, _ = model(live.encoder(state), live.encoder.graph)
    (value.square().mean() + logits.logsumexp(-1).mean()).backward()
    before = live(state)[0].clone()
    optimiser.step()
    assert close(live, eager) and not torch.allclose(live(state)[0], before)

"""Native packages never delay a command (issue 57) and a failed build is remembered (issue 58):
``nn/native_background.py`` and the cache's failure records in ``nn/native.py``.

Fast tests stand a fake child process and fake packages in for AOTInductor; the slow ones build for
real: a ``play`` with an empty cache answers at once on the eager path and switches to the packages
when a low-priority process has built them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.agents.game_search import GameSearch
from conhex_zero.agents.leaf_step import NativeLeaf
from conhex_zero.agents.search_configs import play_config
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn import native, native_background, native_cache
from conhex_zero.nn.model import GraphNet, ModelConfig
from helpers import needs_compiler

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(native.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(native, "_loaded", {})
    monkeypatch.setattr(native, "_failed", {})
    monkeypatch.setattr(native_background, "_pending", {})
    return tmp_path


class _FakeChild:
    """Stands in for the child process: ``finish`` writes the package it was asked for."""

    started: list["_FakeChild"] = []

    def __init__(self, command, **kwargs):
        self.job = torch.load(command[-1], weights_only=True)
        self.job_file = Path(command[-1])
        self.kwargs = kwargs
        self.returncode = None
        _FakeChild.started.append(self)

    def finish(self, fail: str | None = None):
        key = self.job["key"]
        folder = native.cache_dir()
        if fail:
            (folder / f"{key}.failed.json").write_text(json.dumps({"reason": fail, "compiler": native.compiler_identity()}))
        else:
            (folder / f"{key}.pt2").write_bytes(b"package")
            native_cache.write_seal(key, folder / f"{key}.pt2")
        self.job_file.unlink()
        self.returncode = 1 if fail else 0

    def poll(self):
        return self.returncode


def _cached(key: str, say, job=True, loads=None):
    """``cached_package`` with a fake build and load (a load returns ``("package", path)``)."""
    def build(target):
        raise AssertionError("a background build must not build in the command's process")

    def load(path, key, built):
        if loads is not None:
            loads.append(path)
        return ("package", path.name)

    return native.cached_package(key, "native inference", "tiny", "once", build, load, say,
                                 job={"kind": "network", "game": "hex-3"} if job else None)


def test_a_missing_package_is_built_beside_the_command_and_taken_when_ready(cache, monkeypatch):
    monkeypatch.setenv(native.BUILD_ENV, "background")
    monkeypatch.setattr(native_background.subprocess, "Popen", _FakeChild)
    _FakeChild.started = []
    lines: list[str] = []
    pending = _cached("k1", lines.append)
    assert isinstance(pending, native_background.Pending)
    child = _FakeChild.started[-1]
    assert child.job["key"] == "k1" and child.job["game"] == "hex-3"
    assert child.kwargs.get("start_new_session") and ("preexec_fn" in child.kwargs) == hasattr(os, "nice")
    assert "a low-priority process builds it beside this command" in lines[0] and "the eager path until then" in lines[0]
    assert pending.poll() is None  # still building: the caller stays eager
    assert _cached("k1", lines.append) is pending and len(_FakeChild.started) == 1  # one build per key
    child.finish()
    assert pending.poll() == ("package", "k1.pt2") and pending.poll() is pending.poll()
    assert lines[-1].startswith("switched to native inference for tiny (built beside the command in")
    assert _cached("k1", lines.append) == ("package", "k1.pt2")  # the process's loaded package from now on


def test_a_background_build_that_fails_leaves_the_command_eager_and_is_remembered(cache, monkeypatch):
    monkeypatch.setenv(native.BUILD_ENV, "background")
    monkeypatch.setattr(native_background.subprocess, "Popen", _FakeChild)
    _FakeChild.started = []
    lines: list[str] = []
    pending = _cached("k2", lines.append)
    _FakeChild.started[-1].finish(fail="g++: not found")
    assert pending.poll() == native_background.FAILED
    assert lines[-1] == "native inference unavailable for tiny (g++: not found); staying on the eager path"
    monkeypatch.setattr(native, "_failed", {})  # a new process
    monkeypatch.setattr(native_background, "_pending", {})
    assert _cached("k2", lines.append) is None and len(_FakeChild.started) == 1  # not tried again
    assert "its build failed on this machine with this compiler: g++: not found" in lines[-1]


def test_a_failed_build_is_remembered_until_the_compiler_changes(cache, monkeypatch, capsys):
    """Issue 58, 6: without a compiler every start tried again (25 s of CPU each); now once."""
    calls: list[str] = []

    def fails(*args, **kwargs):
        calls.append("build")
        raise RuntimeError("C++ compile error: g++ not found")

    monkeypatch.setenv("CXX", str(cache / "no-such-compiler"))
    monkeypatch.setattr(native, "_build", fails)
    env = VecEnv("hex-4")
    model = GraphNet(ModelConfig(1, 8))
    assert NetworkEvaluator(model, env, backend="auto", label="tiny").native is None
    assert calls == ["build"]
    record = json.loads(next(cache.glob("*.failed.json")).read_text())
    assert record["reason"] == "C++ compile error: g++ not found" and "no C++ compiler" in record["compiler"]
    monkeypatch.setattr(native, "_failed", {})  # the next start
    assert NetworkEvaluator(model, env, backend="auto", label="tiny").native is None
    assert calls == ["build"]  # straight to the eager path
    err = [line for line in capsys.readouterr().err.splitlines() if line]
    assert err[-1].startswith("conhex-zero: native inference unavailable for tiny (its build failed on this machine "
                              "with this compiler: C++ compile error: g++ not found; a new compiler, or deleting ")
    assert err[-1].endswith("tries again); using the eager path")
    compiler = cache / "g++"
    compiler.write_text("#!/bin/sh\n")
    compiler.chmod(0o755)
    monkeypatch.setenv("CXX", str(compiler))
    monkeypatch.setattr(native, "_failed", {})
    NetworkEvaluator(model, env, backend="auto", label="tiny")
    assert calls == ["build", "build"]  # a new compiler tries again


def test_an_evaluator_and_its_search_switch_at_a_move(cache, monkeypatch):
    """The evaluator and the leaf step run eager while their builds are pending, and take the
    packages at the next ``upgrade`` once built (a player calls it at each move)."""
    monkeypatch.setenv(native.BUILD_ENV, "background")
    monkeypatch.setattr(native, "_default", "auto")
    monkeypatch.setattr(native_background.subprocess, "Popen", _FakeChild)
    _FakeChild.started = []
    env = VecEnv("hex-3")
    evaluator = NetworkEvaluator(GraphNet(ModelConfig(1, 8)), env, backend=None, label="tiny")
    assert evaluator.native is None and evaluator.pending is not None
    search = GameSearch(env, evaluator, play_config(8), tactics=True)
    assert search.leaf_pending is not None and [c.job["kind"] for c in _FakeChild.started] == ["network", "leaf"]
    eager_leaf = search.leaf
    assert search.upgrade() is False and search.leaf is eager_leaf and evaluator.native is None

    class FakeNetwork(native.NativeNetwork):
        def __init__(self, *args):
            pass

    class FakeLeaf(NativeLeaf):
        def __init__(self, *args):
            pass

    for child in _FakeChild.started:
        child.finish()
    evaluator.pending.load, search.leaf_pending.load = FakeNetwork, FakeLeaf
    assert search.upgrade() is True
    assert isinstance(evaluator.native, FakeNetwork) and evaluator.forward is evaluator.native
    assert isinstance(search.leaf, FakeLeaf)
    assert evaluator.pending is None and search.leaf_pending is None
    assert search.upgrade() is False


def test_aoti_asked_for_builds_before_the_first_call(cache, monkeypatch):
    """``--backend aoti`` means the package: it is built first, even where builds are in the background."""
    built: list[str] = []
    monkeypatch.setenv(native.BUILD_ENV, "background")
    monkeypatch.setattr(native, "_build", lambda *a, **k: built.append("build") or (_ for _ in ()).throw(RuntimeError("x")))
    NetworkEvaluator(GraphNet(ModelConfig(1, 8)), VecEnv("hex-3"), backend="aoti", label="tiny")
    assert built == ["build"]


def test_commands_build_in_the_background_but_training_and_benchmarks_do_not(monkeypatch):
    from conhex_zero.cli import main as cli_main

    seen: dict[str, str | None] = {}

    def record(name):
        return lambda args: seen.__setitem__(name, os.environ.get(native.BUILD_ENV)) or 0

    monkeypatch.delenv(native.BUILD_ENV, raising=False)
    import argparse
    for name in ("play", "gtp", "openings", "train", "bench", "piece", "distill"):
        cli_main.run_command(name, record(name), argparse.Namespace())
    assert seen == {"play": "background", "gtp": "background", "openings": "background", "train": None,
                    "bench": None, "piece": None, "distill": None}
    assert native.BUILD_ENV not in os.environ  # restored after each command


def test_the_worker_builds_only_what_it_was_asked_and_removes_its_job(cache, capsys):
    from conhex_zero.nn import native_worker

    jobs = cache / "jobs"
    jobs.mkdir()
    wrong = jobs / "k.job.pt"
    torch.save({"kind": "leaf", "game": "hex-3", "connection": False, "key": "leaf-not-this-code"}, wrong)
    assert native_worker.main([str(wrong)]) == 1 and not wrong.exists()
    assert "nothing built" in capsys.readouterr().err and not list(cache.glob("*.pt2"))
    broken = jobs / "b.job.pt"
    torch.save({"kind": "leaf", "game": "no-such-game", "connection": False, "key": "x"}, broken)
    assert native_worker.main([str(broken)]) == 1 and not broken.exists()
    assert capsys.readouterr().err.startswith("background build failed: ")
    assert native_worker.main([]) == 2


def test_a_package_is_run_only_as_it_was_built(cache):
    """Issue 58: 16 bits flipped in a cached package's weights made ``openings`` swap after every
    opening, without a word; a package is now sealed (its key and the digest of its bytes) and a
    package that does not match its seal, or has none, is built again with one line."""
    builds: list[Path] = []

    def build(target):
        builds.append(target)
        target.write_bytes(b"weights " + bytes(range(200)))

    def get(lines):
        return native.cached_package("k3", "native inference", "tiny", "once", build,
                                     lambda path, key, built: path.read_bytes(), lines.append)

    lines: list[str] = []
    good = get(lines)
    seal = json.loads((cache / "k3.seal.json").read_text())
    assert seal["key"] == "k3" and seal["size"] == len(good) and len(builds) == 1
    native._loaded.clear()
    assert get(lines) == good and len(builds) == 1  # a sealed package loads as it is
    damaged = bytearray(good)
    damaged[20] ^= 0x10  # one bit of the "weights"
    (cache / "k3.pt2").write_bytes(bytes(damaged))
    native._loaded.clear()
    lines.clear()
    assert get(lines) == good and len(builds) == 2  # built again, never run damaged
    assert lines[0] == ("the cached native inference for tiny does not match its seal (damaged, cut short, or "
                        "replaced by another file): built again")
    (cache / "k3.pt2").write_bytes(b"another package entirely")  # another file under its name
    native._loaded.clear()
    assert get(lines) == good and len(builds) == 3
    (cache / "k3.seal.json").unlink()  # a package from before the seals
    native._loaded.clear()
    lines.clear()
    assert get(lines) == good and len(builds) == 4 and "has no seal" in lines[0]


# ------------------------------------------------------------------ real builds (slow)
@pytest.mark.slow
@needs_compiler
def test_play_with_an_empty_cache_answers_at_once_and_switches_to_the_packages(tmp_path):
    env = {**os.environ, native.CACHE_ENV: str(tmp_path), native.BACKEND_ENV: "auto"}
    env.pop(native.BUILD_ENV, None)
    process = subprocess.Popen([sys.executable, "-m", "conhex_zero", "play", "checkpoints/hex4-l3h32.pt", "--sims", "16"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               cwd=ROOT, env=env)
    process.stdin.write("b2\n")
    process.stdin.flush()
    # the build runs at low priority: beside other work on every core it can take many minutes
    # (2026-12-06: over ten beside two solver processes and the slow suite), so wait for it long
    # (done: both packages sealed and their job files gone; a package on disk but not yet sealed is
    # still building, and the command rightly stays eager for it: 2026-12-07, under load, that gap
    # outlasted the next move)
    deadline = time.time() + 3600

    def built() -> bool:
        jobs = tmp_path / "jobs"
        return (len(list(tmp_path.glob("*.seal.json"))) >= 2 and jobs.is_dir()
                and not list(jobs.glob("*.job.pt")))

    while time.time() < deadline and not built():
        time.sleep(1)
    out, err = process.communicate("c3\nquit\n", timeout=300)
    assert process.returncode == 0, err
    assert out.count(" plays ") >= 2
    assert "a low-priority process builds it beside this command" in err
    assert "switched to native inference for checkpoints/hex4-l3h32.pt" in err
    assert "switched to the native leaf step for hex-4" in err
    assert "building native inference" not in err  # nothing was built in the command's own process
    assert len(list(tmp_path.glob("*.pt2"))) == 2 and not list((tmp_path / "jobs").iterdir())


@pytest.mark.slow
@needs_compiler
def test_a_package_with_flipped_weight_bits_is_built_again_and_gives_the_eager_outputs(cache):
    import zipfile

    from conhex_zero.nn.encode import Encoder

    torch.manual_seed(4)
    env = VecEnv("hex-4")
    encoder = Encoder(env)
    model = GraphNet(ModelConfig(1, 16)).eval()
    sample = encoder(env.initial_state(2))
    first = native.native_network(model, encoder.graph, sample, "tiny", say=lambda line: None)
    assert first is not None and first.build_seconds is not None
    with zipfile.ZipFile(first.path) as archive:  # the largest member holds the weights
        member = max(archive.infolist(), key=lambda i: i.compress_size)
        offset = member.header_offset + 30 + len(member.filename.encode()) + len(member.extra)
        size = member.compress_size
    data = bytearray(first.path.read_bytes())
    for k in range(16):  # 16 bits spread over the weights
        data[offset + (k + 1) * size // 17] ^= 1 << (k % 8)
    first.path.write_bytes(bytes(data))
    native._loaded.clear()
    lines: list[str] = []
    again = native.native_network(model, encoder.graph, sample, "tiny", say=lines.append)
    assert again is not None and again.build_seconds is not None  # built again
    assert lines[0] == ("the cached native inference for tiny does not match its seal (damaged, cut short, or "
                        "replaced by another file): built again")
    gen = torch.Generator().manual_seed(1)
    state = env.initial_state(6)
    for _ in range(5):
        state = env.reset_done(env.step(state, env.random_actions(state, gen)), gen)
    encoded = encoder(state)
    with torch.no_grad():
        logits, value, _ = model(encoded, encoder.graph)
    fast_logits, fast_value, _ = again(encoded, encoder.graph)
    assert torch.allclose(fast_logits, logits, atol=1e-5) and torch.allclose(fast_value, value, atol=1e-5)

"""The benchmark's permutation player plays only legal moves, so the engine figure is honest."""

import pytest
import torch

from conhex_zero.bench.env_bench import PermutationPlayer, bench_env
from conhex_zero.env.vec_env import VecEnv


@pytest.mark.parametrize("spec, swap_prob", [
    ("conhex", 1.0), ("conhex", 0.5), ("hex-7:swap", 1.0), ("hex-5:forbid=1", None),
    ("hex-6:random=1,swap", 0.5), ("hex-5:extra-stone", None),
])
def test_permutation_player_is_legal(spec, swap_prob):
    env = VecEnv(spec)
    batch = 128
    player = PermutationPlayer(env, batch, seed=3, swap_prob=swap_prob)
    gen = torch.Generator().manual_seed(3)
    state = env.reset(batch, gen)
    finished = 0
    swaps = 0
    for _ in range(4 * env.num_holes):
        live = ~state.done
        action = player.actions(state)
        swaps += int((action == env.game.swap_action)[live].sum())
        state = env.step(state, action)
        player.advance(action, live)
        done = state.done.nonzero().squeeze(1)
        finished += done.numel()
        if done.numel():
            state = env.reset_done(state, gen)
            player.restart(done)
        # Every action the player proposes next must be legal.
        env.check_actions(state, player.actions(state))
    assert finished > batch
    if swap_prob == 1.0:
        assert swaps > batch


def test_bench_env_counts_only_live_steps():
    r = bench_env("hex-4", 32, seconds=0.2, seed=1)
    assert r["live_steps"] == r["batched_steps"] * 32  # finished games are replaced at once
    assert r["steps_per_s"] > 0 and r["games_per_s"] > 0


# ------------------------------------------------ where benchmark scripts write, and their threads
import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import runpy  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from conhex_zero.bench.output import RESULTS_DIR, RUNS_DIR, result_path  # noqa: E402
from conhex_zero.bench.timing import PROFILER_NOISE, count_syncs, without_stderr_lines  # noqa: E402

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
SCRIPTS = ("bench_env.py", "bench_search.py", "bench_vs_pgx.py", "bench_distributed.py", "bench_ops.py")


def _published() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(RESULTS_DIR.glob("*.json"))}


def _run_script(name: str, argv: list[str], monkeypatch) -> int:
    main = runpy.run_path(str(BENCHMARKS / name))["main"]
    monkeypatch.setattr(sys, "argv", [name, *argv])
    return main()


def test_result_path_goes_to_a_run_folder_unless_asked():
    args = argparse.Namespace(out=None, publish=False)
    assert result_path(args, "env_cpu", "20260101-120000") == RUNS_DIR / "env_cpu-20260101-120000.json"
    assert result_path(argparse.Namespace(out=None, publish=True), "env_cpu") == RESULTS_DIR / "env_cpu.json"
    assert result_path(argparse.Namespace(out="x/y.json", publish=True), "env_cpu") == Path("x/y.json")
    assert RESULTS_DIR == BENCHMARKS / "results"


def test_bench_env_script_leaves_the_published_results_alone(tmp_path, monkeypatch, capsys):
    before = _published()
    monkeypatch.chdir(tmp_path)
    assert _run_script("bench_env.py", ["--seconds", "0.01", "--repeats", "1", "--no-pgx"], monkeypatch) == 0
    assert _published() == before
    (written,) = (tmp_path / RUNS_DIR).glob("env_cpu-*.json")
    data = json.loads(written.read_text())
    assert {r["threads"] for r in data["results"]} == {1}  # the project's default of one thread
    assert data["machine"]["threads"] == [1]
    assert f"wrote {RUNS_DIR}/" in capsys.readouterr().out


def test_bench_search_script_takes_threads_and_out(tmp_path, monkeypatch):
    before = _published()
    out = tmp_path / "search.json"
    argv = ["--seconds", "0.01", "--game", "hex-4", "--models", "l1h8", "--batch", "4", "--sims", "4",
            "--threads", "2", "--out", str(out)]
    assert _run_script("bench_search.py", argv, monkeypatch) == 0
    assert _published() == before
    data = json.loads(out.read_text())
    assert data["machine"]["threads"] == 2
    assert data["results"][0]["network"]["threads"] == 2 and data["results"][0]["search"]["threads"] == 2


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_benchmark_script_takes_threads_defaulting_to_one(script, monkeypatch, capsys):
    with pytest.raises(SystemExit) as exit_:
        _run_script(script, ["--help"], monkeypatch)
    assert exit_.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--threads N" in text and "default: 1" in text
    if script != "bench_ops.py":  # the only one that writes nothing
        assert "--publish" in text and "runs/bench/" in text


def test_profiler_noise_is_dropped_and_other_lines_kept(capfd):
    with without_stderr_lines(PROFILER_NOISE):
        os.write(2, b"USDT:2026 profiler_start\nkept line\n")
        print("python line", file=sys.stderr)
    err = capfd.readouterr().err
    assert "USDT" not in err
    assert "kept line" in err and "python line" in err


def test_count_syncs_prints_no_profiler_lines(capfd):
    x = torch.ones(3)
    assert count_syncs(lambda: [bool(x.sum() > 0) for _ in range(2)]) >= 2
    assert "USDT" not in capfd.readouterr().err


def test_bench_convergence_scores_a_given_checkpoint_and_refuses_another_games(tmp_path, monkeypatch):
    hex4 = str(BENCHMARKS.parent / "checkpoints" / "hex4-l3h32.pt")
    argv = ["--game", "hex-4", "--positions", "4", "--sims", "4", "--configs", "play", "--networks", "shipped",
            "--out", str(tmp_path)]
    assert _run_script("bench_convergence.py", [*argv, "--checkpoint", hex4], monkeypatch) == 0
    data = json.loads((tmp_path / "convergence-hex-4.json").read_text())
    assert data["meta"]["checkpoint"] == hex4 and [r["config"] for r in data["results"]] == ["play"]
    hex5 = str(BENCHMARKS.parent / "checkpoints" / "hex5-l4h64.pt")
    with pytest.raises(SystemExit) as exit_:
        _run_script("bench_convergence.py", [*argv, "--checkpoint", hex5], monkeypatch)
    assert str(exit_.value) == f"--checkpoint: {hex5} plays hex-5, not hex-4 (set --game)"
    with pytest.raises(SystemExit) as exit_:
        _run_script("bench_convergence.py", [*argv, "--checkpoint", str(tmp_path / "missing.pt")], monkeypatch)
    assert str(exit_.value).startswith("--checkpoint: ") and "missing.pt" in str(exit_.value)

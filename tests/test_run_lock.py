"""A run directory is trained by one process at a time: a second ``train`` on it is refused at once,
naming the holder, and changes nothing; the lock goes when its holder ends, however it ends; a lock
left by a killed process of this host is taken over with a note; the run then equals an
uninterrupted run."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from conhex_zero.cli.main import main
from conhex_zero.ladder.store import Ladder
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.train.config_load import load_config
from conhex_zero.train.loop import train
from conhex_zero.train.run_lock import FILENAME, RunInUseError, RunLock, read_holder

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "tiny.yaml"
SHORT = ["iterations=3", "eval.games=2", "eval.previous_games=2"]


def quiet(*_args) -> None:
    pass


def snapshot(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


def same_run(a: Path, b: Path) -> None:
    """Two run directories hold the same training: weights, metrics (but times), ladder, files.

    Wall-clock figures differ between runs, and a process's first iteration records its compilation
    (``time/compile_s``), so a resumed run has one more of those: every ``time/`` key is left out."""
    x, y = load_checkpoint(a / "latest.pt").model.state_dict(), load_checkpoint(b / "latest.pt").model.state_dict()
    assert all(torch.equal(x[k], y[k]) for k in x)
    strip = ("time", "selfplay/positions_per_s", "selfplay/recorded_per_s", "selfplay/sims_per_s",
             "train/samples_per_s", "selfplay/seconds", "train/seconds")

    def metrics(run: Path) -> list[dict]:
        rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
        return [{k: v for k, v in r.items() if k not in strip and not k.endswith("_per_s")
                 and not k.startswith("time/")} for r in rows]

    assert metrics(a) == metrics(b)
    assert Ladder.open(a).results == Ladder.open(b).results
    names = lambda run: sorted(str(p.relative_to(run)) for p in run.rglob("*") if p.is_file() and "tb" not in p.parts)  # noqa: E731
    assert names(a) == names(b)
    assert not (a / FILENAME).exists() and not (b / FILENAME).exists()


def test_the_lock_names_its_holder_and_goes_with_it(tmp_path):
    first, second = RunLock(tmp_path), RunLock(tmp_path)
    first.acquire()
    holder = read_holder(tmp_path / FILENAME)
    assert holder.pid == os.getpid() and holder.host == socket.gethostname() and holder.started <= time.time()
    with pytest.raises(RunInUseError, match=rf"is in use: pid {os.getpid()} on host {socket.gethostname()} \(since "):
        second.acquire()
    with pytest.raises(RunInUseError, match="is in use"):
        second.check_free()
    first.release()
    assert not (tmp_path / FILENAME).exists()
    second.check_free()
    with second:
        assert second.held
    assert not (tmp_path / FILENAME).exists()


def test_a_lock_left_by_a_killed_process_is_taken_over_with_a_note(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    (tmp_path / FILENAME).write_text(json.dumps({"pid": pid, "host": socket.gethostname(), "started": 1e9}))
    notes: list[str] = []
    lock = RunLock(tmp_path)
    lock.acquire(note=notes.append)
    assert len(notes) == 1 and f"was left by pid {pid} on host {socket.gethostname()}" in notes[0] \
        and "which has ended: taken over" in notes[0]
    assert read_holder(tmp_path / FILENAME).pid == os.getpid()
    lock.release()


def test_a_lock_file_of_another_host_is_not_taken_over(tmp_path):
    (tmp_path / FILENAME).write_text(json.dumps({"pid": 1234, "host": "elsewhere", "started": 1e9}))
    with pytest.raises(RunInUseError, match=rf"pid 1234 on host elsewhere .*delete {tmp_path / FILENAME} once"):
        RunLock(tmp_path).acquire()
    assert read_holder(tmp_path / FILENAME).host == "elsewhere"  # left as it was


def test_a_second_train_is_refused_at_once_and_the_run_equals_an_uninterrupted_one(tmp_path, capsys):
    config = load_config(TINY, SHORT)
    train(config, tmp_path / "whole", progress=False, log=quiet)
    run = tmp_path / "run"
    train(config, run, progress=False, log=quiet, stop_after=1)
    refused: list[tuple[int, str, float]] = []

    def log(line: str) -> None:  # while the first resume runs, a second one (and a new run) start
        if line.startswith("resumed") or line.startswith("iter 2/"):
            before = snapshot(run)
            start = time.perf_counter()
            code = main(["train", "--resume", str(run), "--quiet"])
            err = capsys.readouterr().err
            refused.append((code, err, time.perf_counter() - start))
            code = main(["train", "--config", str(TINY), "--run-dir", str(run), "--quiet"])
            refused.append((code, capsys.readouterr().err, 0.0))
            with pytest.raises(RunInUseError):
                train(config, run, resume=True, progress=False, log=quiet)
            assert snapshot(run) == before  # the refused ones changed nothing

    train(config, run, resume=True, progress=False, log=log)
    assert len(refused) == 4
    for code, err, seconds in refused:
        assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        assert f"is in use: pid {os.getpid()} on host {socket.gethostname()}" in err
        assert seconds < 5.0
    same_run(tmp_path / "whole", run)


def test_a_failed_run_gives_the_lock_back(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["train", "--config", str(TINY), "--run-dir", str(run), "--quiet", "optim.lr=1e10",
                 "optim.warmup_steps=0", "optim.grad_clip=1e30"]) == 2
    err = capsys.readouterr().err
    assert "diverged" in err and "no state had been saved yet" in err and "the last good state" not in err
    assert not (run / FILENAME).exists()


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "conhex_zero.cli.main", *args]


def _wait_for_lock(run: Path, proc: subprocess.Popen, timeout: float = 120.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        holder = read_holder(run / FILENAME)
        if holder is not None:
            return holder.pid
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    raise AssertionError("the first process never took the lock")


@pytest.mark.heavy
def test_two_processes_resuming_one_run(tmp_path):
    """Two ``conhex-zero train --resume RUN`` processes: one runs, the other exits non-zero at once
    naming it; the run then equals an uninterrupted one."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    whole, run = tmp_path / "whole", tmp_path / "run"
    for args in (["--run-dir", str(whole)], ["--run-dir", str(run), "--stop-after", "1"]):
        subprocess.run(_cli("train", "--config", str(TINY), "--quiet", *args, *SHORT), check=True, env=env,
                       capture_output=True, cwd=ROOT)
    first = subprocess.Popen(_cli("train", "--resume", str(run), "--quiet"), env=env, cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid = _wait_for_lock(run, first)
    start = time.monotonic()
    second = subprocess.run(_cli("train", "--resume", str(run), "--quiet"), env=env, cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert second.returncode == 2 and f"is in use: pid {pid} on host {socket.gethostname()}" in second.stderr
    assert len(second.stderr.strip().splitlines()) == 1 and time.monotonic() - start < 30
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    same_run(whole, run)


@pytest.mark.heavy
def test_a_killed_trainer_leaves_a_lock_that_the_resume_takes_over(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    whole, run = tmp_path / "whole", tmp_path / "run"
    subprocess.run(_cli("train", "--config", str(TINY), "--quiet", "--run-dir", str(whole), *SHORT), check=True,
                   env=env, capture_output=True, cwd=ROOT)
    proc = subprocess.Popen(_cli("train", "--config", str(TINY), "--quiet", "--run-dir", str(run), *SHORT),
                            env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pid = _wait_for_lock(run, proc)
    deadline = time.monotonic() + 120
    while not (run / "state" / "train_state.pt").is_file() and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.kill()
    proc.communicate()
    assert read_holder(run / FILENAME).pid == pid  # left behind by kill -9
    resumed = subprocess.run(_cli("train", "--resume", str(run), "--quiet"), env=env, cwd=ROOT, capture_output=True,
                             text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"was left by pid {pid} on host {socket.gethostname()}" in resumed.stderr  # a warning: stderr
    same_run(whole, run)


@pytest.mark.heavy
def test_a_second_torchrun_job_on_one_run_is_refused(tmp_path):
    """A torchrun job holds its run (rank 0 takes the lock for all ranks); a second job on the same
    directory is refused on every rank, naming the holder."""
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env["OMP_NUM_THREADS"] = "1"
    run = tmp_path / "run"
    small = ["iterations=50", "eval.games=2", "eval.previous_games=2", "eval.neighbours=0", "eval.references=random"]

    def torchrun(port: int, *args: str) -> list[str]:
        return [sys.executable, "-m", "torch.distributed.run", "--nnodes=1", "--nproc-per-node=2",
                "--rdzv-backend=c10d", f"--rdzv-endpoint=127.0.0.1:{port}", "train.py", *args]

    first = subprocess.Popen(torchrun(29611, "--config", str(TINY), "--run-dir", str(run), "--quiet", *small),
                             env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        pid = _wait_for_lock(run, first, timeout=180)
        second = subprocess.run(torchrun(29612, "--resume", str(run), "--quiet"), env=env, cwd=ROOT,
                                capture_output=True, text=True, timeout=240)
        assert first.poll() is None  # the first job still runs
    finally:
        first.terminate()
        first.communicate(timeout=120)
    assert second.returncode != 0
    # each rank refuses before torch is imported, so the first refusal ends the job (torchrun stops the
    # other rank, which may not have spoken yet); every refusal names the holder
    refusals = [line for line in second.stderr.splitlines() if "is in use" in line]
    assert refusals and all(f"pid {pid} on host" in line for line in refusals), second.stderr[-3000:]

"""Stopping training with SIGINT: heard even when the run was started in the background (SIGINT
ignored), and the message says from which iteration a resume continues."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import torch

from conhex_zero.cli.main import main
from conhex_zero.train.interrupt import TrainingInterrupted

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "configs" / "tiny.yaml"


def test_messages_say_where_a_resume_continues():
    run = Path("runs/x")
    during = TrainingInterrupted(run, iteration=8, completed=7, saved=6, save_every=3, iterations=20)
    assert during.resume_from == 7
    assert during.message() == (
        "interrupted during iteration 8 of 20; the training state of iteration 6 is kept: conhex-zero train "
        "--resume runs/x continues from iteration 7 (iteration 7 finished but will be played again, exactly: "
        "a state is saved every 3 iterations, eval.every)")
    assert "; the training state of iteration 6 is kept" in TrainingInterrupted(run, 8, 8, 6, 3, 20).message()
    assert "(iterations 7-8 finished" in TrainingInterrupted(run, 8, 8, 6, 3, 20).message()
    assert TrainingInterrupted(run, 8, 8, 6, 3, 20).message().startswith("interrupted after iteration 8 of 20;")
    assert TrainingInterrupted(run, 7, 6, 6, 3, 20).message().endswith("continues from iteration 7")
    assert TrainingInterrupted(run, 6, 6, 6, 3, 20).message().startswith(
        "interrupted after iteration 6 of 20 was saved; the training state of iteration 6 is kept")
    assert TrainingInterrupted(run, 2, 1, None, 3, 20).message() == (
        "interrupted during iteration 2 of 20, before the first training state was saved (after iteration 3): "
        "there is nothing to resume; run the same command again to start over")
    assert TrainingInterrupted(run, None, None, None, 3, 20, resuming=True).message() == (
        "interrupted before the first iteration began; the training state is unchanged: conhex-zero train "
        "--resume runs/x continues where it stood")
    assert TrainingInterrupted(run, 20, 20, 20, 3, 20).message().endswith(
        "; the run is complete: its last iteration, 20, is saved")
    assert "a state is saved after every iteration" in TrainingInterrupted(run, 3, 2, 1, 1, 20).message()
    assert isinstance(during, KeyboardInterrupt)  # whatever catches Ctrl-C still does
    timed = TrainingInterrupted(run, 8, 8, 6, 3, 20, state_minutes=10)
    assert timed.message().endswith("(iterations 7-8 finished but will be played again, exactly: a state is "
                                    "saved every 3 iterations, eval.every, and 10 minutes after the last save, "
                                    "state_minutes)")
    assert "(after iteration 3, or after 2.5 minutes)" in TrainingInterrupted(
        run, 2, 1, None, 3, 20, state_minutes=2.5).message()


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # what a shell does for `train ... &` in a script


def test_sigint_stops_a_train_started_with_sigint_ignored(tmp_path, capsys):
    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "conhex_zero.cli.main", "train", "--config", str(TINY), "--run-dir", str(run),
           "--quiet", "iterations=100000", "eval.every=2", "eval.games=0", "eval.previous_games=0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"}, preexec_fn=_ignore_sigint)
    try:
        deadline = time.monotonic() + 120
        for line in proc.stdout:  # wait until iteration 3 ended: iteration 2's state is saved
            if line.startswith("iter 3/") or time.monotonic() > deadline:
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    match = re.search(r"conhex-zero train: interrupted (?:during|after) iteration (\d+) of 100000(?: was saved)?; "
                      r"the training state of iteration (\d+) is kept: conhex-zero train --resume (\S+) continues "
                      r"from iteration (\d+)", err)
    assert match, err
    running, saved, where, resume_from = int(match[1]), int(match[2]), match[3], int(match[4])
    assert running >= 3 and saved >= 2 and saved % 2 == 0 and resume_from == saved + 1 and Path(where) == run
    assert "Traceback" not in err
    state = torch.load(run / "state" / "train_state.pt", weights_only=False, map_location="cpu")
    assert state["iteration"] == saved  # the message names the state that is on disk
    assert main(["train", "--resume", str(run), "--quiet", "--stop-after", "1"]) == 0
    assert f"resumed {run} at iteration {saved}" in capsys.readouterr().out

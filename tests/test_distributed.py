"""Data-parallel training under torchrun (gloo on CPU): two processes train tiny.yaml, checkpoint,
resume exactly; the ranks hold identical weights and play different games; the checkpoint loads in
one process, which can also resume the run; a rank that hangs or dies fails the job quickly."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml

from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.train import distributed
from conhex_zero.train.config import ConfigError
from conhex_zero.train.config_load import load_config
from conhex_zero.train.loop import train
from conhex_zero.train.selfplay import SelfPlayStats

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "configs" / "tiny.yaml"
# tiny.yaml with a lighter evaluation (it dominates the time of such a short run).
SMALL = ["iterations=3", "eval.games=2", "eval.previous_games=2", "eval.neighbours=0", "eval.references=random"]


def torchrun(*args: str, nproc: int = 2, timeout: float = 240) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env["OMP_NUM_THREADS"] = "1"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}", *args]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def shard(run: Path, iteration: int, rank: int) -> dict:
    return torch.load(run / "state" / f"shard-{iteration:04d}-rank{rank}.pt", weights_only=True)


# ------------------------------------------------------------ in one process
def test_one_process_has_no_process_group(monkeypatch):
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(var, raising=False)
    ctx = distributed.setup("cpu")
    assert not ctx.enabled and ctx.is_main and ctx.world_size == 1 and not distributed.initialized()
    assert ctx.all_gather_object(5) == [5] and ctx.broadcast_object("x") == "x"
    ctx.barrier()
    model = torch.nn.Linear(2, 2)
    assert distributed.wrap(model, ctx) is model
    assert distributed.device_for("cuda", 3, 4) == torch.device("cuda", 3)
    assert distributed.device_for("cuda:1", 0, 1) == torch.device("cuda", 1)
    assert distributed.device_for("cpu", 2, 4) == torch.device("cpu")


def test_rank_seeds_and_merged_counts():
    assert distributed.rank_seed(7, 0) == 7  # rank 0 plays exactly the single-process games
    seeds = {distributed.rank_seed(7, r) for r in range(1, 64)} | {distributed.rank_seed(7, r, 5) for r in range(64)}
    assert len(seeds) == 127 and 7 not in seeds and all(0 <= s < 2**31 for s in seeds)
    assert distributed.rank_seed(7, 3) == distributed.rank_seed(7, 3) != distributed.rank_seed(8, 3)
    a = SelfPlayStats(seconds=2.0, moves=10, games=3, calib_count=[1.0] * 10)
    b = SelfPlayStats(seconds=3.0, moves=5, games=1, calib_count=[2.0] * 10)
    m = distributed.merge_stats([a, b])
    assert (m.seconds, m.moves, m.games, m.calib_count) == (3.0, 15, 4, [3.0] * 10)
    with pytest.raises(ConfigError, match="dist"):
        load_config(TINY, ["dist.timeout_s=0"])


# -------------------------------------------------------- two processes
@pytest.mark.slow
def test_two_processes_train_checkpoint_resume_exactly(tmp_path):
    part, whole = tmp_path / "part", tmp_path / "whole"
    # The stopped run also saves iteration 1's state between evaluations (state_minutes): every rank
    # its shard, rank 0 the state; it changes nothing of the training (the straight run has none).
    first = torchrun("train.py", "--config", str(TINY), "--run-dir", str(part), "--quiet", "--stop-after", "2",
                     *SMALL, "eval.every=3", "state_minutes=1e-9")
    assert first.returncode == 0, first.stderr[-3000:]
    assert "on 2 processes (gloo, cpu)" in first.stdout and first.stdout.count("iter 1/3") == 1  # rank 0 reports
    assert {p.name for p in (part / "state").iterdir()} == {"train_state.pt", "shard-0002-rank0.pt",
                                                            "shard-0002-rank1.pt"}
    again = torchrun("train.py", "--resume", str(part), "--quiet")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "resumed" in again.stdout and "iter 3/3" in again.stdout
    straight = torchrun("train.py", "--config", str(TINY), "--run-dir", str(whole), "--quiet", *SMALL)
    assert straight.returncode == 0, straight.stderr[-3000:]

    # Both ranks end with identical weights, and so does the checkpoint, loaded in this one process.
    ckpt = load_checkpoint(part / "latest.pt")
    digest = distributed.weights_digest(ckpt.model)
    s0, s1 = shard(part, 3, 0), shard(part, 3, 1)
    assert s0["weights_digest"] == s1["weights_digest"] == digest
    env = VecEnv(ckpt.game)
    logits, value = NetworkEvaluator(ckpt.model, env)(env.initial_state(2))
    assert logits.shape == (2, env.num_actions) and torch.isfinite(value).all()
    assert ckpt.meta["world_size"] == 2 and ckpt.meta["iteration"] == 3
    # The ranks played different games: different replay shards, different games in progress.
    n = min(s0["replay"]["size"], s1["replay"]["size"])
    assert n > 0 and not torch.equal(s0["replay"]["policy"][:n], s1["replay"]["policy"][:n])
    assert not torch.equal(s0["selfplay"]["state"]["holes"], s1["selfplay"]["state"]["holes"])
    # Stopped and resumed equals uninterrupted, bit for bit, shards included.
    other = load_checkpoint(whole / "latest.pt")
    assert distributed.weights_digest(other.model) == digest and other.meta["games"] == ckpt.meta["games"]
    for rank, mine in ((0, s0), (1, s1)):
        theirs = shard(whole, 3, rank)
        assert torch.equal(mine["replay"]["policy"], theirs["replay"]["policy"])
    # Rank 0 logged each iteration once, with counts summed over the two ranks.
    lines = [json.loads(x) for x in (part / "metrics.jsonl").read_text().splitlines()]
    assert [x["iteration"] for x in lines] == [1, 2, 3] and all(x["dist/world_size"] == 2 for x in lines)
    assert lines[-1]["replay/size"] == s0["replay"]["size"] + s1["replay"]["size"]
    assert lines[-1]["selfplay/total_games"] == ckpt.meta["games"] == sum(x["selfplay/games"] for x in lines)
    assert {p.name for p in (part / "state").iterdir()} == {"train_state.pt", "shard-0003-rank0.pt",
                                                            "shard-0003-rank1.pt"}

    # One process can continue the run: it keeps rank 0's shard and drops rank 1's (the policy).
    notes = []
    config = load_config(None, ["iterations=4"], base=yaml.safe_load((part / "config.yaml").read_text()))
    result = train(config, part, resume=True, progress=False, log=notes.append)
    assert result.iterations == 4 and "schedule now spans 4 iterations" in notes[0]  # one more: it stretches
    assert "the replay shard of rank 1 is dropped" in notes[1]
    assert sorted(p.name for p in (part / "state").iterdir()) == ["train_state.pt"]
    assert "replay" in torch.load(part / "state" / "train_state.pt", weights_only=True)


@pytest.mark.slow
def test_two_processes_train_a_mixed_run(tmp_path):
    """mix.games under torchrun: each rank plays and keeps its own side-board games and replay (in its
    shard), side steps are taken and the ranks' weights stay identical."""
    run = tmp_path / "mixed"
    done = torchrun("train.py", "--config", str(TINY), "--run-dir", str(run), "--quiet", *SMALL,
                    "mix.games=[hex-4]", "mix.share=0.5", "optim.sample_reuse=8")
    assert done.returncode == 0, done.stderr[-3000:]
    s0, s1 = shard(run, 3, 0), shard(run, 3, 1)
    ckpt = load_checkpoint(run / "latest.pt")
    assert s0["weights_digest"] == s1["weights_digest"] == distributed.weights_digest(ckpt.model)
    side0, side1 = s0["mix"]["hex-4"], s1["mix"]["hex-4"]
    assert side0["replay"]["size"] > 0 and side1["replay"]["size"] > 0
    n = min(side0["replay"]["size"], side1["replay"]["size"])
    assert not torch.equal(side0["replay"]["policy"][:n], side1["replay"]["policy"][:n])  # their own games
    lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert lines[-1]["mix/hex-4/steps"] > 0 and ckpt.game == "hex-3"


DRIVER = """
import os, sys, time
from conhex_zero.cli.main import main
from conhex_zero.train.selfplay import SelfPlay

real, calls = SelfPlay.run, []


def iteration_one_logged() -> bool:
    metrics = os.path.join(sys.argv[3], "metrics.jsonl")
    return os.path.exists(metrics) and '"iteration": 1' in open(metrics).read()


def run(self, *args, **kwargs):  # rank 1 fails in its second self-play phase
    calls.append(1)
    if len(calls) == 2 and os.environ["RANK"] == "1":
        # Not before rank 0 has logged iteration 1: under load it may still be saving it, and the
        # job's end (torchrun stops rank 0 at once) would then come before that line.
        deadline = time.monotonic() + 60
        while not iteration_one_logged() and time.monotonic() < deadline:
            time.sleep(0.05)
        if sys.argv[1] == "die":
            os._exit(3)
        time.sleep(600)
    return real(self, *args, **kwargs)


SelfPlay.run = run
sys.exit(main(["train", "--config", sys.argv[2], "--run-dir", sys.argv[3], "--quiet", "iterations=3",
               "eval.games=0", "eval.previous_games=0", "dist.timeout_s=30", "dist.wait_timeout_s=5"]))
"""


@pytest.mark.slow
@pytest.mark.parametrize("failure", ["die", "hang"])
def test_a_failed_rank_fails_the_job_quickly(tmp_path, failure):
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    start = time.monotonic()
    out = torchrun(str(driver), failure, str(TINY), str(tmp_path / "run"), timeout=180)
    assert out.returncode != 0 and time.monotonic() - start < 120, out.stderr[-3000:]
    # The job failed in iteration 2, after rank 0 had logged iteration 1 (its line on standard output
    # may not have come before the job's end: metrics.jsonl says it).
    logged = [json.loads(x)["iteration"] for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert logged == [1] and "iter 2/3" not in out.stdout, out.stdout[-3000:]
    if failure == "hang":  # rank 0 gave up waiting for rank 1 after dist.wait_timeout_s
        assert "Timed out" in out.stderr or "timed out" in out.stderr.lower(), out.stderr[-3000:]

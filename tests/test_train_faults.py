"""What a fault probe of the training command found, each as a test: kills at chosen moments,
moved run directories, damaged or missing files, nonsense settings. Every case must end in an exact
resume or a one-line error (exit code 2), never a traceback or silently wrong state."""

import json
import os
import shutil
from pathlib import Path

import pytest
import torch

from conhex_zero.cli.main import main
from conhex_zero.ladder.store import Ladder
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.train.config import ConfigError
from conhex_zero.train.config_load import load_config
from conhex_zero.train.loop import train
from conhex_zero.train.run_dir import RunDir

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "tiny.yaml"
# Evaluate every iteration against one neighbour with one rolling checkpoint kept: the schedule that
# depends on which old checkpoints are still on disk.
LADDER = ["iterations=4", "keep_checkpoints=1", "eval.neighbours=1", "eval.games=2", "eval.previous_games=2"]


def quiet(*_args) -> None:
    pass


def same_weights(a: Path, b: Path) -> bool:
    x, y = load_checkpoint(a).model.state_dict(), load_checkpoint(b).model.state_dict()
    return all(torch.equal(x[k], y[k]) for k in x)


def test_a_kill_between_the_checkpoint_and_the_state_resumes_exactly_even_moved(tmp_path, monkeypatch):
    config = load_config(TINY, LADDER)
    train(config, tmp_path / "whole", progress=False, log=quiet)

    real = RunDir.save_state

    def killed_at_3(self, state):
        if state["iteration"] == 3:
            raise KeyboardInterrupt  # killed after iteration 3's checkpoint, before its state
        real(self, state)

    monkeypatch.setattr(RunDir, "save_state", killed_at_3)
    with pytest.raises(KeyboardInterrupt):
        train(config, tmp_path / "part", progress=False, log=quiet)
    monkeypatch.setattr(RunDir, "save_state", real)
    # The run directory moves, and the resume starts from another working directory.
    shutil.move(tmp_path / "part", tmp_path / "moved")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    train(config, tmp_path / "moved", resume=True, progress=False, log=quiet)
    assert same_weights(tmp_path / "whole" / "latest.pt", tmp_path / "moved" / "latest.pt")
    assert Ladder.open(tmp_path / "whole").results == Ladder.open(tmp_path / "moved").results
    paths = [p["path"] for p in Ladder.open(tmp_path / "moved").players.values() if p.get("kind") == "checkpoint"]
    assert paths and all(not os.path.isabs(p) and p.startswith("checkpoints") for p in paths)


def test_resume_without_config_yaml_uses_the_stored_config(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["train", "--config", str(TINY), "--run-dir", str(run), "--quiet", "--stop-after", "1",
                 "optim.lr=0.001", "eval.games=2"]) == 0
    (run / "config.yaml").unlink()
    (run / "state" / "train_state.pt.tmp").write_bytes(b"half a state")
    (run / "checkpoints" / "iter_0002.pt.tmp").write_bytes(b"half a model")
    capsys.readouterr()
    assert main(["train", "--resume", str(run), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "using the config stored in" in captured.err
    assert "resolved config" not in captured.out  # --quiet
    assert load_checkpoint(run / "latest.pt").meta["config"]["optim"]["lr"] == 0.001
    assert not list(run.rglob("*.tmp"))


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("saved") / "run"
    train(load_config(TINY, ["iterations=2", "eval.games=2", "eval.previous_games=2"]), run, progress=False,
          log=quiet, stop_after=1)
    return run


def resume_error(run: Path, capsys, *overrides: str) -> str:
    capsys.readouterr()
    assert main(["train", "--resume", str(run), "--quiet", *overrides]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


@pytest.mark.parametrize("damage", ["truncated", "empty", "random", "model checkpoint"])
def test_a_damaged_training_state_is_a_one_line_error(saved_run, tmp_path, capsys, damage):
    run = tmp_path / "run"
    shutil.copytree(saved_run, run)
    state = run / "state" / "train_state.pt"
    data = state.read_bytes()
    if damage == "truncated":
        state.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        state.write_bytes(b"")
    elif damage == "random":
        state.write_bytes(os.urandom(4096))
    else:
        shutil.copyfile(run / "latest.pt", state)
    err = resume_error(run, capsys)
    assert str(state) in err and "weights_only" not in err


def test_resume_with_another_game_or_network_is_refused(saved_run, capsys):
    assert "cannot resume with game=hex-4" in resume_error(saved_run, capsys, "game=hex-4")
    assert "cannot resume with model=l3h16" in resume_error(saved_run, capsys, "model=l3h16")


def test_resume_with_a_smaller_replay_keeps_the_newest_positions(saved_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(saved_run, run)
    notes = []
    train(load_config(TINY, ["iterations=2", "eval.games=2", "eval.previous_games=2", "replay.capacity=32",
                             "selfplay.positions_per_iteration=32", "replay.min_size=16"]),
          run, resume=True, progress=False, log=notes.append)
    assert any("replay.capacity shrinks" in n for n in notes)
    assert (run / "checkpoints" / "iter_0002.pt").is_file()


def test_bad_config_files_and_run_directories_are_one_line_errors(tmp_path, capsys):
    as_list = tmp_path / "list.yaml"
    as_list.write_text("- game: hex-3\n- model: l2h16\n")
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"game: \xff\xfe hex\n")
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    cases = [(["--config", str(as_list)], "expected a mapping"), (["--config", str(binary)], "not UTF-8"),
             (["--config", str(TINY), "--run-dir", str(a_file)], "is a file"),
             (["--config", str(TINY), "seed=99999999999999999999999"], "too large"),
             (["--config", str(TINY), "optim.sample_reuse=inf"], "finite"),
             (["--config", str(TINY), "optim.lr=inf"], "finite"),
             (["--config", str(TINY), "replay.capacity=1e12"], "lower replay.capacity"),
             (["--config", str(TINY), "selfplay.positions_per_iteration=1e11"], "at most replay.capacity"),
             (["--config", str(TINY), "eval.games=3"], "even")]
    for args, message in cases:
        capsys.readouterr()
        assert main(["train", *args, "--quiet"]) == 2, args
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (args, err)


def test_a_diverging_run_stops_with_a_clear_message_and_keeps_its_last_state(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["train", "--config", str(TINY), "--run-dir", str(run), "--quiet", "--stop-after", "1"]) == 0
    before = (run / "state" / "train_state.pt").read_bytes()
    capsys.readouterr()
    assert main(["train", "--resume", str(run), "--quiet", "optim.lr=1e30", "optim.warmup_steps=0",
                 "optim.grad_clip=1e30"]) == 2
    err = capsys.readouterr().err
    assert "diverged" in err and "Traceback" not in err
    assert (run / "state" / "train_state.pt").read_bytes() == before
    for line in (run / "metrics.jsonl").read_text().splitlines():
        json.loads(line)  # still valid JSON (no NaN written)


def test_the_thread_count_is_recorded_and_a_different_one_noted(saved_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(saved_run, run)
    state = torch.load(run / "state" / "train_state.pt", weights_only=True)
    assert state["threads"] == torch.get_num_threads() == 1
    notes = []
    before = torch.get_num_threads()
    try:
        train(load_config(TINY, ["iterations=2", "eval.games=2", "eval.previous_games=2", "threads=2"]), run,
              resume=True, progress=False, log=notes.append)
    finally:
        torch.set_num_threads(before)
    assert any("saved with 1 torch thread and resumes with 2" in n for n in notes)


def test_config_values_are_checked():
    with pytest.raises(ConfigError, match="finite"):
        load_config(TINY, ["optim.lr=nan"])
    assert load_config(TINY, ["replay.capacity=1e4"]).replay.capacity == 10_000

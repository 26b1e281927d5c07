"""A resume never runs on silently wrong settings or state: the config stored in the training state
wins over a damaged config.yaml (a difference is refused naming the keys), a structurally damaged
state is a one-line error naming the part, files and folders swapped in a run directory and bad
values in its JSON lines are one-line errors; settings beyond what the game or the machinery allows
are refused up front, and so are output paths that cannot be written."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest
import torch
import yaml

from conhex_zero.cli.common import CliError, check_arena_arguments, check_output_dir, check_output_file
from conhex_zero.cli.main import main
from conhex_zero.files import file_seal
from conhex_zero.train import start
from conhex_zero.train.config import ConfigError
from conhex_zero.train.config_load import load_config
from conhex_zero.train.distributed import Context
from conhex_zero.train.loop import train
from conhex_zero.train.run_dir import RunDir, TrainStateError
from conhex_zero.train.run_lock import RunInUseError

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "tiny.yaml"


def quiet(*_args) -> None:
    pass


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("resume") / "run"
    assert main(["train", "--config", str(TINY), "--run-dir", str(run), "--quiet", "--stop-after", "1",
                 "iterations=2", "eval.games=2", "eval.previous_games=2"]) == 0
    return run


@pytest.fixture
def run(saved_run, tmp_path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(saved_run, copy)
    return copy


def resume_error(run: Path, capsys, *overrides: str) -> str:
    capsys.readouterr()
    assert main(["train", "--resume", str(run), "--quiet", *overrides]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def files(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------ config.yaml
def test_a_half_truncated_config_yaml_never_becomes_defaults(run, capsys):
    text = (run / "config.yaml").read_text()
    (run / "config.yaml").write_text(text[: len(text) // 2])
    capsys.readouterr()
    code = main(["train", "--resume", str(run), "--quiet"])
    err = capsys.readouterr().err
    if code == 2:  # cut inside a value: that key differs (or, cut to nothing, is no longer valid), named
        assert len(err.strip().splitlines()) == 1, err
        assert "differs from the config stored in" in err or (
            "does not match the config stored in" in err and "got None" in err), err
    else:  # cut between keys, or no longer YAML: noted, and the stored config is used
        assert code == 0 and "using the config stored in" in err
        stored = yaml.safe_load((run / "config.yaml").read_text())  # rewritten from the stored config
        assert stored["replay"]["capacity"] == 2000 and stored["optim"]["lr"] == 0.003 and stored["eval"]["games"] == 2


@pytest.mark.parametrize("cut", ["lines", "empty", "garbage"])
def test_an_incomplete_config_yaml_resumes_with_the_stored_config(run, capsys, cut):
    lines = (run / "config.yaml").read_text().splitlines(keepends=True)
    (run / "config.yaml").write_text({"lines": "".join(lines[: len(lines) // 2]), "empty": "",
                                      "garbage": "game: [hex-3\n"}[cut])
    capsys.readouterr()
    assert main(["train", "--resume", str(run), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "using the config stored in" in err and "cannot resume with game" not in err
    config = yaml.safe_load((run / "config.yaml").read_text())
    assert config["game"] == "hex-3" and config["replay"]["capacity"] == 2000 and config["optim"]["lr"] == 0.003
    assert config["eval"]["games"] == 2 and config["iterations"] == 2


def test_a_config_yaml_that_differs_from_the_stored_config_is_refused_naming_the_keys(run, capsys):
    config = yaml.safe_load((run / "config.yaml").read_text())
    config["optim"]["lr"] = 0.5
    config["replay"]["capacity"] = 50000
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    before = files(run)
    err = resume_error(run, capsys)
    assert "differs from the config stored in" in err and "replay.capacity (2000 stored, 50000 in the file)" in err
    assert "optim.lr (0.003 stored, 0.5 in the file)" in err and "key=value overrides" in err
    assert files(run) == before
    (run / "config.yaml").unlink()  # the way out the message names
    capsys.readouterr()
    assert main(["train", "--resume", str(run), "--quiet", "optim.lr=0.001"]) == 0
    assert yaml.safe_load((run / "config.yaml").read_text())["optim"]["lr"] == 0.001


def test_an_unknown_key_in_config_yaml_is_refused(run, capsys):
    with open(run / "config.yaml", "a") as f:
        f.write("surprise: 1\n")
    assert "unknown config key 'surprise'" in resume_error(run, capsys)


# ------------------------------------------------------------ damaged states
def _set(path: list, value):
    def change(d: dict) -> None:
        for key in path[:-1]:
            d = d[key]
        d[path[-1]] = value
    return change


def _drop(path: list):
    def change(d: dict) -> None:
        for key in path[:-1]:
            d = d[key]
        del d[path[-1]]
    return change


def _first_weight(fill):
    def change(d: dict) -> None:
        next(iter(d["model"].values())).fill_(fill)
    return change


DAMAGE = {
    "no replay": (_drop(["replay"]), "replay is missing"),
    "no games in progress": (_drop(["selfplay", "state"]), "selfplay.state is missing"),
    "no optimiser state": (_drop(["learner", "optimizer", "state"]), "learner.optimizer.state is missing"),
    "replay size 10^9": (_set(["replay", "size"], 10**9), "replay.size is 1000000000, not from 0 to 2000"),
    "replay capacity 10^9": (_set(["replay", "capacity"], 10**9), "replay.capacity is 1000000000, but the run"),
    "replay rows of another dtype": (_set(["replay", "policy"], torch.zeros(5, 3)), "replay.policy has dtype"),
    "generator of the wrong size": (_set(["learner", "generator"], torch.zeros(10, dtype=torch.uint8)),
                                    "learner.generator has shape [10], expected"),
    "self-play generator": (_set(["selfplay", "generator"], torch.zeros(7, dtype=torch.uint8)), "selfplay.generator"),
    "torch generator": (_set(["rng", "torch"], torch.zeros(7, dtype=torch.uint8)), "rng.torch has shape [7]"),
    "step as text": (_set(["learner", "step"], "abc"), "learner.step is 'abc', not a whole number"),
    "iteration 1.5": (_set(["iteration"], 1.5), "iteration is 1.5, not a whole number"),
    "weights of another shape": (lambda d: d["model"].__setitem__(next(iter(d["model"])), torch.zeros(3)),
                                 "has shape [3], expected"),
    "NaN weights": (_first_weight(float("nan")), "holds NaN or infinite values"),
    "inf weights": (_first_weight(float("inf")), "holds NaN or infinite values"),
    "optimiser moment of another shape": (lambda d: d["learner"]["optimizer"]["state"][0].__setitem__(
        "exp_avg", torch.zeros(2)), "learner.optimizer.state[0].exp_avg has shape [2]"),
    "a list for a tensor": (_set(["selfplay", "state", "holes"], [1, 2]), "selfplay.state.holes is a list"),
    "config a list": (_set(["config"], [1]), "'config' is [1], not a table"),
    "config section a number": (_set(["config", "selfplay"], 5), "stored config is not valid"),
    "elapsed as text": (_set(["elapsed"], "x"), "elapsed is 'x', not a finite number"),
    "a move beyond the board": (lambda d: d["selfplay"]["state"]["last"].fill_(999), "selfplay.state.last holds"),
    "a pending row beyond the replay": (lambda d: d["selfplay"]["pending_row"].fill_(10**6),
                                        "selfplay.pending_row names rows outside"),
    "negative games": (_set(["games"], -5), "games is -5"),
}


@pytest.mark.parametrize("name", list(DAMAGE))
def test_a_structurally_damaged_state_is_a_one_line_error(run, capsys, name):
    change, words = DAMAGE[name]
    state = run / "state" / "train_state.pt"
    data = torch.load(state, weights_only=True)
    change(data)
    file_seal.save(data, state)  # a valid file (its checksum matches): the damage is in what it says
    before = files(run)
    err = resume_error(run, capsys)
    assert f"{state} is damaged" in err and words in err, err
    assert files(run) == before


def test_a_damaged_state_is_refused_by_train_itself(run):
    state = run / "state" / "train_state.pt"
    data = torch.load(state, weights_only=True)
    data["replay"]["size"] = 10**9
    file_seal.save(data, state)
    with pytest.raises(TrainStateError, match="replay.size is 1000000000"):
        train(load_config(TINY, ["iterations=2", "eval.games=2", "eval.previous_games=2"]), run, resume=True,
              progress=False, log=quiet)


# ------------------------------------------------ swapped files, bad JSON lines
@pytest.mark.parametrize("name, kind", [("config.yaml", "dir"), ("metrics.jsonl", "dir"), ("ladder.jsonl", "dir"),
                                        ("latest.pt", "dir"), ("state/train_state.pt", "dir"), ("train.lock", "dir"),
                                        ("checkpoints", "file"), ("tb", "file"), ("state", "file")])
def test_files_and_folders_swapped_in_a_run_are_one_line_errors(run, tmp_path, capsys, name, kind):
    path = run / name
    shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    path.mkdir() if kind == "dir" else path.write_text("x")
    err = resume_error(run, capsys)
    assert str(path) in err and ("is a directory where" in err or "is a file where" in err)
    fresh = tmp_path / "fresh"
    (fresh / name).parent.mkdir(parents=True, exist_ok=True)
    (fresh / name).mkdir() if kind == "dir" else (fresh / name).write_text("x")
    capsys.readouterr()
    assert main(["train", "--config", str(TINY), "--run-dir", str(fresh), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert str(fresh / name) in err and len(err.strip().splitlines()) == 1


def _edit_lines(path: Path, change) -> None:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(r) + "\n" for r in change(rows)))


@pytest.mark.parametrize("file, change, words", [
    ("metrics.jsonl", lambda rows: [{**rows[0], "iteration": "x"}] + rows[1:], "'iteration' is \"x\""),
    ("metrics.jsonl", lambda rows: [{**rows[0], "eval/vs_random/win_rate": "x"}] + rows[1:], "not a number"),
    ("metrics.jsonl", lambda rows: [{**rows[0], "time/minutes": [1]}] + rows[1:], "not a number"),
    ("metrics.jsonl", lambda rows: [{**rows[0], "iteration": {"a": [[[[1]]]]}}] + rows[1:], "not a whole number"),
    ("ladder.jsonl", lambda rows: [{**rows[0], "iteration": "x"}] + rows[1:], "field 'iteration'"),
    ("ladder.jsonl", lambda rows: [{**r, "path": 5} if r["type"] == "player" else r for r in rows], "field 'path'"),
    ("ladder.jsonl", lambda rows: [{**r, "kind": 5} if r["type"] == "player" else r for r in rows], "field 'kind'"),
    ("ladder.jsonl", lambda rows: [{**r, "minutes": "x"} if r["type"] == "player" else r for r in rows],
     "field 'minutes'"),
    ("ladder.jsonl", lambda rows: [{**r, "game": 5} if r["type"] == "result" else r for r in rows], "field 'game'"),
])
def test_bad_values_in_json_lines_are_one_line_errors(run, capsys, file, change, words):
    _edit_lines(run / file, change)
    err = resume_error(run, capsys)
    assert f"{run / file}:" in err and words in err
    command = ["curve", str(run)] if file == "metrics.jsonl" else ["ladder", str(run)]
    capsys.readouterr()
    assert main(command) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1


def test_deep_json_in_metrics_or_ladder_is_a_one_line_error(run, capsys):
    with open(run / "metrics.jsonl", "a") as f:
        f.write('{"iteration": ' + "[" * 1000 + "]" * 1000 + "}\n")
    assert "nested more than" in resume_error(run, capsys)
    (run / "metrics.jsonl").unlink()
    with open(run / "ladder.jsonl", "a") as f:
        f.write('{"type": "player", "name": ' + '{"a": ' * 1000 + "1" + "}" * 1000 + "}\n")
    capsys.readouterr()
    assert main(["train", "--resume", str(run), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    # the deleted metrics file is said first (one warning line), then the error, in one line
    assert len(err) == 2 and err[0].startswith("warning: ") and "metrics.jsonl is missing" in err[0]
    assert "nested more than" in err[1] and "Traceback" not in "".join(err)


def test_null_metrics_are_skipped_by_the_curve(run, capsys):
    _edit_lines(run / "metrics.jsonl", lambda rows: [{**r, "eval/vs_random/win_rate": None} for r in rows])
    assert main(["curve", str(run)]) == 0 and (run / "curve.svg").is_file()


# ------------------------------------------------------------------- bounds
@pytest.mark.parametrize("override, words", [
    ("selfplay.max_considered=1000000000", "selfplay.max_considered: at most 16"),
    ("selfplay.temperature_moves=1000000", "selfplay.temperature_moves: at most 10"),
    ("selfplay.random_first_moves=7", "selfplay.random_first_moves: at most 6"),
    ("optim.lr=1e300", "optim.lr: at most 1e+30"),
    ("optim.weight_decay=1e300", "optim.weight_decay: at most 10"),
    ("dist.timeout_s=1e300", "dist.*timeout_s: at most"),
    ("eval.games=1000000000", "eval.games and eval.previous_games: at most 100000"),
    ("threads=99999999", "threads: at most 4096"),
    ("iterations=99999999999", "iterations: at most"),
])
def test_settings_beyond_what_the_game_or_machinery_allows_are_refused(override, words):
    with pytest.raises(ConfigError, match=words.replace("*", r"\*").replace("+", r"\+")):
        load_config(TINY, [override])


def test_the_bounds_keep_every_shipped_config_and_the_defaults():
    for config in sorted((ROOT / "configs").glob("*.yaml")):
        load_config(config)
    load_config(None)
    assert load_config(TINY, ["game=hex-2", "selfplay.temperature_moves=5"]).game == "hex-2"


def _arena_args(**changes) -> argparse.Namespace:
    args = dict(games=100, round=20, gtp_parallel=4, seed=0, sims=None, gtp_timeout=10.0, records=None, ladder=None)
    return argparse.Namespace(**{**args, **changes})


@pytest.mark.parametrize("changes, words", [
    ({"games": 1_000_000_000}, "--games must be from 1 to 100000"),
    ({"gtp_timeout": float("nan")}, "--gtp-timeout must be a positive number of seconds"),
    ({"gtp_timeout": float("inf")}, "--gtp-timeout"),
    ({"seed": 10**30}, "--seed must be from 0"),
    ({"sims": 10**9}, "--sims must be from 1 to 100000"),
    ({"records": "{dir}"}, "is a directory, not a file"),
    ({"records": "{file}/games.jsonl"}, "is not a directory"),
    ({"records": "/dev/null"}, "is not a regular file"),
    ({"records": "/proc/games.jsonl"}, "cannot write in /proc"),
    ({"ladder": "{file}"}, "is not a directory"),
    ({"ladder": "{file}/deeper"}, "is not a directory"),
])
def test_arena_arguments_are_checked_up_front(tmp_path, changes, words):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    changes = {k: v.format(dir=tmp_path, file=a_file) if isinstance(v, str) else v for k, v in changes.items()}
    with pytest.raises(CliError, match=words):
        check_arena_arguments(_arena_args(**changes))
    check_arena_arguments(_arena_args(records=str(tmp_path / "new" / "r.jsonl"), ladder=str(tmp_path / "lad")))
    assert not (tmp_path / "new").exists()  # checking writes nothing


@pytest.mark.parametrize("out, words", [("{file}/x.pt", "is not a directory"), ("/proc/x.pt", "cannot write in /proc"),
                                        ("/dev/null/x.pt", "is not a directory"), ("{dir}", "must end in .pt"),
                                        ("{pt_dir}", "is a directory, not a file")])
def test_average_output_paths_are_one_line_errors(saved_run, tmp_path, capsys, out, words):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    (tmp_path / "d.pt").mkdir()
    out = out.format(file=a_file, dir=tmp_path, pt_dir=tmp_path / "d.pt")
    capsys.readouterr()
    assert main(["average", str(saved_run / "latest.pt"), str(saved_run / "best.pt"), "--out", out]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_curve_and_ladder_outputs_are_checked(saved_run, tmp_path, capsys):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    for argv in (["curve", str(saved_run), "--out", str(a_file / "c.svg")],
                 ["ladder", str(saved_run), "--png", str(a_file / "l.png")], ["ladder", str(a_file)]):
        capsys.readouterr()
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "is not a directory" in err and len(err.strip().splitlines()) == 1


def test_output_checks_accept_what_can_be_written(tmp_path):
    assert check_output_file("--out", tmp_path / "a" / "b.pt") == tmp_path / "a" / "b.pt"
    assert check_output_dir("--ladder", tmp_path / "new") == tmp_path / "new"
    assert not (tmp_path / "a").exists() and not (tmp_path / "new").exists()


# ----------------------------------------------------------- torchrun ranks
def test_every_rank_of_a_refused_job_stops_with_rank_0s_message(tmp_path, monkeypatch):
    """Rank 0 alone takes the lock; the others learn its outcome through one broadcast."""
    message = f"{tmp_path} is in use: pid 1 on host h (since x) is training it"
    rank1 = Context(rank=1, world_size=2)
    monkeypatch.setattr(Context, "broadcast_object", lambda self, obj, src=0, what="": ("RunInUseError", message))
    with pytest.raises(RunInUseError, match="pid 1 on host h"):
        start.take_run(RunDir(tmp_path / "run"), rank1, quiet)
    assert not (tmp_path / "run").exists()  # rank 1 touched nothing


# --------------------------------------------- a new run after an attempt that saved nothing
def test_starting_again_after_an_attempt_that_saved_no_state_equals_an_uninterrupted_run(tmp_path, monkeypatch):
    config = load_config(TINY, ["iterations=2", "eval.games=2", "eval.previous_games=2"])
    train(config, tmp_path / "whole", progress=False, log=quiet)

    def full(self, state):  # the disk filled up as the first state was written
        from conhex_zero.files.disk import no_space

        raise no_space(self.state_file)

    monkeypatch.setattr(RunDir, "save_state", full)
    with pytest.raises(OSError, match="no space left on"):
        train(config, tmp_path / "run", progress=False, log=quiet)
    monkeypatch.undo()
    assert (tmp_path / "run" / "metrics.jsonl").read_text().count("\n") == 1  # logged, never committed
    notes: list[str] = []
    train(config, tmp_path / "run", progress=False, log=notes.append)
    assert any("dropped 1 metric line of an earlier attempt" in n for n in notes)
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 2]
    from conhex_zero.ladder.store import Ladder
    from conhex_zero.nn.checkpoint import load_checkpoint

    assert Ladder.open(tmp_path / "run").results == Ladder.open(tmp_path / "whole").results
    a, b = (load_checkpoint(tmp_path / d / "latest.pt").model.state_dict() for d in ("whole", "run"))
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_resume_says_which_checkpoints_are_damaged_and_which_logs_are_gone(run, capsys):
    """Resuming trains on from the state, and says in one line each what the curve, the ladder and
    the commands that read checkpoints will miss: a checkpoint with flipped bytes, a deleted
    metrics.jsonl (recreated from the next iteration on), a deleted ladder.jsonl."""
    checkpoint = run / "checkpoints" / "iter_0001.pt"
    data = bytearray(checkpoint.read_bytes())
    data[len(data) // 2] ^= 0xFF
    checkpoint.write_bytes(bytes(data))
    (run / "metrics.jsonl").unlink()
    (run / "ladder.jsonl").unlink()
    capsys.readouterr()
    assert main(["train", "--resume", str(run), "--quiet"]) == 0
    captured = capsys.readouterr()
    warnings = [line for line in captured.err.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 3, captured.err
    assert f"warning: {checkpoint} is damaged (its checksum does not match its content" in warnings[0]
    assert f"warning: {run / 'metrics.jsonl'} is missing: the metrics of iterations 1-1 are lost" in warnings[1]
    assert f"warning: {run / 'ladder.jsonl'} is missing: the evaluation games" in warnings[2]
    assert "warning" not in captured.out
    assert [m["iteration"] for m in RunDir(run).read_metrics()] == [2]  # written again from iteration 2


def test_a_clean_resume_says_nothing(run, capsys):
    capsys.readouterr()
    assert main(["train", "--resume", str(run), "--quiet"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_taking_over_a_dead_process_lock_is_a_warning_on_stderr(run, capsys):
    (run / "train.lock").write_text(json.dumps({"pid": 2**22 + 12345, "host": __import__("socket").gethostname(),
                                                "started": 1.0, "command": "conhex-zero train"}))
    capsys.readouterr()
    assert main(["train", "--resume", str(run), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "which has ended: taken over" in captured.err and "taken over" not in captured.out

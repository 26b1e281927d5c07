"""Training lines in pieces (``train/line.py``, ``train/piece.py``, ``conhex-zero piece``): a piece
continues where the last stopped (weights, optimiser and schedule position, counters, ladder),
ends by its deadline with an evaluated checkpoint, writes a small line that fits what a lent
machine can send back, keeps its last save when stopped, and records itself."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from conhex_zero.cli.main import main
from conhex_zero.files.jsonl import read_jsonl
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.train.config import ConfigError
from conhex_zero.train.config_load import load_config
from conhex_zero.train.line import Line
from conhex_zero.train.piece import EVAL_SECONDS, Deadline, run_piece

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "configs" / "tiny.yaml"
QUIET = dict(progress=False, log=lambda *_: None, install_signals=False)
GPU_LINE_SHRUNK = ["device=cpu", "selfplay.compile=false", "selfplay.games=8", "selfplay.positions_per_iteration=32",
                   "selfplay.full_sims=4", "selfplay.cheap_sims=2", "replay.capacity=1000", "replay.min_size=32",
                   "optim.batch_size=16", "optim.warmup_steps=2", "eval.check_games=2", "iterations=2"]
"""A GPU line's config shrunk to seconds on the CPU (the lent device runs it whole)."""
RECORD_KEYS = {"piece", "started", "device", "device_type", "torch", "commit", "minutes", "train_minutes",
               "first_iteration", "last_iteration", "games", "positions", "steps", "lr", "selfplay_positions_per_s",
               "elo", "elo_stderr", "scores", "checkpoint", "eval_seconds", "stopped"}


def _steps(metrics: list[dict], iteration: int) -> int:
    return next(int(m["train/steps"]) for m in metrics if m["iteration"] == iteration)


def test_a_line_goes_on_piece_by_piece(tmp_path):
    line = tmp_path / "line"
    first = run_piece(line, config_file=str(TINY), minutes=5, run_dir=tmp_path / "r1", commit="abc123", **QUIET)
    assert first.record["stopped"] == "complete" and first.record["last_iteration"] == 3
    carry = Line(line).read_carry()
    assert carry["iteration"] == 3 and carry["carried"] and "replay" not in carry and "selfplay" not in carry
    steps_after_first = carry["learner"]["step"]
    second = run_piece(line, overrides=["iterations=6"], minutes=5, run_dir=tmp_path / "r2", **QUIET)
    rec = second.record
    assert RECORD_KEYS <= set(rec) and rec["piece"] == 2 and rec["stopped"] == "complete"
    assert (rec["first_iteration"], rec["last_iteration"]) == (4, 6) and rec["games"] > 0 and rec["positions"] == 144
    carry = Line(line).read_carry()
    metrics = read_jsonl(line / "metrics.jsonl")
    assert [m["iteration"] for m in metrics] == [1, 2, 3, 4, 5, 6]
    # the optimiser's step (the schedule's position) and the counters go on
    assert carry["learner"]["step"] == _steps(metrics, 6) == steps_after_first + rec["steps"] and rec["steps"] > 0
    assert carry["positions"] == 6 * 48 and carry["games"] == first.record["games"] + rec["games"]
    records = Line(line).pieces()
    assert [r["piece"] for r in records] == [1, 2] and records[0]["commit"] == "abc123"
    assert records[0]["overrides"] == [] and records[1]["overrides"] == ["iterations=6"]  # how each piece ran
    assert records[1]["commit"] != "" and records[1]["torch"] == torch.__version__
    # the line keeps every evaluated checkpoint (tiny.yaml evaluates every iteration)
    assert [p.name for p in Line(line).checkpoint_files()] == [f"iter_{i:04d}.pt" for i in range(1, 7)]
    players = {e["name"] for e in read_jsonl(line / "ladder.jsonl") if e["type"] == "player"}
    assert {"iter_0003", "iter_0006", "random", "mcts-rollout:8"} <= players
    # the second piece's first evaluation played the first piece's checkpoint (its predecessor)
    results = [e for e in read_jsonl(line / "ladder.jsonl") if e["type"] == "result"]
    assert any({e["first"], e["second"]} == {"iter_0003", "iter_0006"} for e in results)
    assert (line / "logs" / "piece-002.log").read_text().count("iter ") >= 3
    assert load_config(line / "line.yaml").iterations == 6


def test_the_carried_weights_and_optimiser_are_what_the_next_piece_starts_from(tmp_path):
    line = tmp_path / "line"
    run_piece(line, config_file=str(TINY), minutes=5, run_dir=tmp_path / "r1", **QUIET)
    before = Line(line).read_carry()
    # the next piece refills a replay too large to fill in one iteration: it trains no step, so its
    # evaluated weights and optimiser must be the carried ones exactly
    run_piece(line, overrides=["iterations=4", "replay.min_size=1000"], minutes=5, run_dir=tmp_path / "r2", **QUIET)
    after = Line(line).read_carry()
    assert after["iteration"] == 4 and after["learner"]["step"] == before["learner"]["step"]
    for name, tensor in before["model"].items():
        assert torch.equal(tensor, after["model"][name]), name
    evaluated = load_checkpoint(line / "checkpoints" / "iter_0004.pt").model.state_dict()
    assert all(torch.equal(evaluated[k], before["model"][k]) for k in evaluated)
    moments_before = before["learner"]["optimizer"]["state"]
    moments_after = after["learner"]["optimizer"]["state"]
    assert moments_before.keys() == moments_after.keys() and moments_before
    for k in moments_before:
        assert torch.equal(moments_before[k]["exp_avg_sq"], moments_after[k]["exp_avg_sq"])


def test_a_piece_ends_by_its_deadline_with_an_evaluated_checkpoint(tmp_path):
    line = tmp_path / "line"
    ticks = iter(range(0, 10_000, 10))  # every reading of the clock: 10 s later
    result = run_piece(line, config_file=str(TINY), overrides=["iterations=50", "eval.every=100"], minutes=3,
                       run_dir=tmp_path / "r", clock=lambda: float(next(ticks)), **QUIET)
    rec = result.record
    assert rec["stopped"] == "deadline" and 1 <= rec["last_iteration"] < 50
    # the record keeps what the last evaluation took (a few readings of the 10-s clock), not the
    # 120-s estimate made before any was measured: the next piece plans with it
    assert 0 < rec["eval_seconds"] < EVAL_SECONDS, rec["eval_seconds"]
    assert rec["checkpoint"] == f"checkpoints/iter_{rec['last_iteration']:04d}.pt"
    assert (line / rec["checkpoint"]).is_file() and rec["elo"] is not None


def test_the_deadline_keeps_room_for_the_next_iteration_and_the_evaluation():
    now = [0.0]
    d = Deadline(600, eval_seconds=60, clock=lambda: now[0], margin=20)
    now[0] = 100.0
    assert not d.stop_now(1)  # an iteration took 100 s: 500 s left >= 100 + 60 + 20
    now[0] = 150.0
    d.saved(evaluated=True)  # an evaluation (and the line's writing) took 50 s
    assert d.eval_seconds == 50
    now[0] = 250.0
    assert not d.stop_now(2)  # 100 s again (the evaluation not counted in it): 350 left >= 170
    now[0] = 450.0
    assert d.stop_now(3) and d.hit  # 200 s: 150 left < 200 + 50 + 20
    unlimited = Deadline(0, eval_seconds=1e9, clock=lambda: now[0])
    now[0] = 1e7
    assert not unlimited.stop_now(1)


def test_a_scheduled_evaluation_is_the_last_when_another_would_not_fit_after_it():
    # The CPU line's piece 4 (eval.every 25, evaluations of about 7 minutes) evaluated at iteration
    # 325 with 9 minutes left, went on to 326 and evaluated it again, minutes past its end.
    def at_iteration_25(eval_every: int) -> tuple[bool, bool]:
        now = [0.0]
        d = Deadline(1800, eval_seconds=420, clock=lambda: now[0], margin=20, eval_every=eval_every)
        now[0] = 1240.0
        d.saved(evaluated=False)  # iteration 23's save
        now[0] = 1260.0
        before = d.stop_now(24)  # 540 s left >= 20 + 420 + 20: one more iteration and the last evaluation fit
        now[0] = 1280.0
        return before, d.stop_now(25)  # 520 s left: 25's own evaluation, then 26 and its evaluation, do not
    assert at_iteration_25(eval_every=25) == (False, True)
    assert at_iteration_25(eval_every=0) == (False, False)  # blind to 25's evaluation: it would overrun
    assert at_iteration_25(eval_every=10) == (False, False)  # 25 is not evaluated anyway


def test_out_holds_a_few_small_files_that_continue_the_line(tmp_path):
    line = tmp_path / "line"
    run_piece(line, config_file=str(TINY), minutes=5, run_dir=tmp_path / "r1", **QUIET)
    out = tmp_path / "out"
    result = run_piece(line, overrides=["iterations=6"], minutes=5, out=out, run_dir=tmp_path / "r2", **QUIET)
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) <= 8 and all(p.stat().st_size <= 16 << 20 for p in files)
    assert sorted(str(p.relative_to(out)) for p in files) == sorted([
        "carry.pt", "line.yaml", "metrics.jsonl", "ladder.jsonl", "pieces.jsonl", "checkpoints/iter_0006.pt",
        "logs/piece-002.log"])
    assert Line(line).read_carry()["iteration"] == 3  # the line itself is untouched
    for p in files:  # what a session does with the files a lent machine sent back
        target = line / p.relative_to(out)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(p.read_bytes())
    assert result.record["piece"] == 2
    third = run_piece(line, overrides=["iterations=7"], minutes=5, run_dir=tmp_path / "r3", **QUIET)
    assert (third.record["piece"], third.record["first_iteration"]) == (3, 7)


def test_an_l6h96_conhex_piece_of_the_gpu_line_runs_shrunk_on_the_cpu_and_is_rated_after(tmp_path):
    """The GPU line's own config, on ConHex, shrunk to seconds: its piece checks its checkpoint and
    plays no rating game; ``conhex-zero rate`` then writes the ladder and the piece's record."""
    line = tmp_path / "line"
    result = run_piece(line, config_file=str(ROOT / "configs" / "conhex-gpu-line.yaml"), overrides=GPU_LINE_SHRUNK, minutes=5,
                       run_dir=tmp_path / "r", **QUIET)
    carry = Line(line).read_carry()
    assert carry["config"]["model"] == "l6h96" and carry["config"]["game"] == "conhex" and carry["iteration"] == 2
    assert not (line / "ladder.jsonl").exists() or not [e for e in read_jsonl(line / "ladder.jsonl")
                                                         if e["type"] == "result"]
    assert result.record["check"]["games"] == 2 and result.record.get("elo") is None
    assert main(["rate", str(line), "--games", "2", "--sims", "2", "--quiet"]) == 0
    results = [e for e in read_jsonl(line / "ladder.jsonl") if e["type"] == "result"]
    opponents = {e["second"] if e["first"] == "iter_0002" else e["first"] for e in results}
    # the shipped models are fixed references of the line
    assert opponents == {"random", "checkpoints/conhex-l4h64.pt", "checkpoints/conhex-l4h64-v2.pt"}
    record = Line(line).pieces()[-1]
    assert record["elo"] is not None and set(record["scores"]) == {"random", "conhex-l4h64", "conhex-l4h64-v2"}


def test_the_gpu_c_line_starts_from_the_gpu_lines_checkpoint_with_its_features_at_zero(tmp_path):
    """configs/conhex-gpu-c-line.yaml (issue 56, item 5), shrunk to seconds on the CPU as the next
    lent device would run it whole: l6h96c from the GPU line's iter_0052.pt (l6h96), the new input
    columns at zero (tests/test_connection.py: the same outputs as the teacher), bf16 self-play."""
    config = ROOT / "configs" / "conhex-gpu-c-line.yaml"
    line = tmp_path / "line"
    loaded = load_config(config, GPU_LINE_SHRUNK)
    assert loaded.model == "l6h96c" and loaded.selfplay.precision == "bf16"
    result = run_piece(line, config_file=str(config), overrides=GPU_LINE_SHRUNK, minutes=5, run_dir=tmp_path / "r", **QUIET)
    carry = Line(line).read_carry()
    assert carry["config"]["model"] == "l6h96c" and carry["iteration"] == 2
    assert result.record["check"]["games"] == 2
    saved = load_checkpoint(line / result.record["checkpoint"])
    teacher = load_checkpoint(ROOT / loaded.init)
    assert saved.model.config.name == "l6h96c" and teacher.model.config.name == "l6h96"


def test_the_hex7_gpu_line_starts_from_nothing_on_its_start_lines_and_is_rated_against_the_cpu_line(tmp_path):
    """configs/hex7-gpu-c-line.yaml (issue 56: the 7x7 bar), shrunk to seconds on the CPU as the next
    lent device would run it whole: l6h96c from nothing on Hex 7x7, bf16 self-play, half the games
    from the committed start file's lines; ``rate`` then plays the CPU line's shipped model."""
    config = ROOT / "configs" / "hex7-gpu-c-line.yaml"
    line = tmp_path / "line"
    loaded = load_config(config, GPU_LINE_SHRUNK)
    assert (loaded.game, loaded.model, loaded.init) == ("hex-7", "l6h96c", "")  # from nothing
    assert loaded.selfplay.precision == "bf16" and loaded.selfplay.start_fraction == 0.5
    assert (ROOT / loaded.selfplay.start_lines).is_file()
    result = run_piece(line, config_file=str(config), overrides=GPU_LINE_SHRUNK, minutes=5, run_dir=tmp_path / "r", **QUIET)
    carry = Line(line).read_carry()
    assert carry["config"]["model"] == "l6h96c" and carry["config"]["game"] == "hex-7" and carry["iteration"] == 2
    assert result.record["check"]["games"] == 2
    assert main(["rate", str(line), "--games", "2", "--sims", "2", "--quiet"]) == 0
    results = [e for e in read_jsonl(line / "ladder.jsonl") if e["type"] == "result"]
    opponents = {e["second"] if e["first"] == "iter_0002" else e["first"] for e in results}
    assert opponents == {"random", "checkpoints/hex7-l4h64c-v4.pt"}


def test_a_piece_stopped_by_a_signal_keeps_its_last_save(tmp_path):
    line = tmp_path / "line"
    cmd = [sys.executable, "-m", "conhex_zero.cli.main", "piece", str(line), "--config", str(TINY), "--minutes", "0",
           "--quiet", "--run-dir", str(tmp_path / "r"), "iterations=100000", "eval.every=2", "eval.games=0",
           "eval.previous_games=0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        deadline = time.monotonic() + 120
        for text in proc.stdout:  # iteration 2 is saved (and the line written) before iteration 3 ends
            if text.startswith("iter 3/") or time.monotonic() > deadline:
                break
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    carry = Line(line).read_carry()
    record = Line(line).pieces()[-1]
    assert carry["iteration"] >= 2 and carry["iteration"] % 2 == 0
    assert record["stopped"] == "interrupted" and record["last_iteration"] == carry["iteration"]


@pytest.mark.parametrize("args, message", [
    (["piece", "{tmp}/none"], "holds no line (it does not exist): start one with --config FILE"),
    (["piece", "{tmp}/none", "--config", "{tmp}/missing.yaml"], "config file {tmp}/missing.yaml does not exist"),
    (["piece", "{tmp}/none", "--minutes", "-1", "--config", str(TINY)], "--minutes must be a number from 0"),
    (["piece", "{tmp}/none", "--list"], "holds no line (no line.yaml, carry.pt or pieces.jsonl)"),
])
def test_piece_errors_are_one_line(tmp_path, capsys, args, message):
    assert main([a.replace("{tmp}", str(tmp_path)) for a in args]) == 2
    err = capsys.readouterr().err
    assert message.replace("{tmp}", str(tmp_path)) in err and len(err.strip().splitlines()) == 1


def test_a_begun_line_refuses_a_config_and_a_damaged_carry(tmp_path, capsys):
    line = tmp_path / "line"
    run_piece(line, config_file=str(TINY), minutes=5, run_dir=tmp_path / "r1", **QUIET)
    assert main(["piece", str(line), "--config", str(TINY), "--quiet"]) == 2
    assert "has begun (carry.pt)" in capsys.readouterr().err
    assert main(["piece", str(line), "--quiet"]) == 2
    assert "has run all its 3 iterations" in capsys.readouterr().err
    data = bytearray((line / "carry.pt").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (line / "carry.pt").write_bytes(bytes(data))
    assert main(["piece", str(line), "--quiet", "iterations=5", "--run-dir", str(tmp_path / "r2")]) == 2
    err = capsys.readouterr().err
    assert "carry.pt" in err and len(err.strip().splitlines()) == 1
    assert main(["piece", str(line), "--list"]) == 0
    assert "cpu" in capsys.readouterr().out


def test_checkpoint_references_are_checked():
    with pytest.raises(ConfigError, match="no checkpoint file at nope.pt"):
        load_config(TINY, ["eval.references=[nope.pt]"])
    with pytest.raises(ConfigError, match="was trained on conhex; this run trains hex-3"):
        load_config(TINY, [f"eval.references=[{ROOT / 'checkpoints' / 'conhex-l4h64.pt'}]"])
    c = load_config(TINY, ["game=hex-5", f"eval.references=[random, {ROOT / 'checkpoints' / 'hex5-l4h64.pt'}]"])
    assert c.eval.references[1].endswith("hex5-l4h64.pt")


def test_a_piece_paused_by_stop_after_says_how_to_continue_the_line(tmp_path):
    line = tmp_path / "line"
    said: list[str] = []
    result = run_piece(line, config_file=str(TINY), minutes=5, run_dir=tmp_path / "r1", stop_after=1,
                       progress=False, log=said.append, install_signals=False)
    assert result.record["stopped"] == "stop-after" and result.record["last_iteration"] == 1
    pause = [s for s in said if "pausing after" in s]
    # the line goes on with `piece LINE`; the scratch run is not what a user continues
    assert pause and f"continue with conhex-zero piece {line}" in pause[0] and "--resume" not in pause[0]


# ---------------------------------------------------------------- a line knows itself (issue 43)
def _reseal(path: Path, change) -> None:
    from conhex_zero.files import file_seal

    data = file_seal.load(path)
    change(data)
    file_seal.save(data, path)


def test_pieces_number_themselves_from_the_carried_state_and_keep_every_log(tmp_path):
    line = tmp_path / "line"
    run_piece(line, config_file=str(TINY), minutes=5, run_dir=tmp_path / "r1", **QUIET)
    first = Line(line).read_carry()["line"]
    assert first["piece"] == 1 and len(first["id"]) == 16 and Line(line).pieces()[0]["line_id"] == first["id"]
    (line / "pieces.jsonl").unlink()  # the records are lost: the numbering is not
    log1 = (line / "logs" / "piece-001.log").read_text()
    second = run_piece(line, overrides=["iterations=4"], minutes=5, run_dir=tmp_path / "r2", **QUIET)
    assert second.record["piece"] == 2 and Line(line).read_carry()["line"] == {"id": first["id"], "piece": 2}
    assert (line / "logs" / "piece-001.log").read_text() == log1
    # a log of a number whose piece saved nothing (killed before its state) is kept under another name
    (line / "logs" / "piece-003.log").write_text("an attempt that saved nothing\n")
    run_piece(line, overrides=["iterations=5"], minutes=5, run_dir=tmp_path / "r3", **QUIET)
    assert (line / "logs" / "piece-003-unsaved-1.log").read_text() == "an attempt that saved nothing\n"
    assert "iter 5/5" in (line / "logs" / "piece-003.log").read_text()


def test_a_line_refuses_another_lines_state_and_out_folder(tmp_path):
    from conhex_zero.train.line import LineError

    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for line, run in ((ours, "r1"), (theirs, "r2")):
        run_piece(line, config_file=str(TINY), minutes=5, run_dir=tmp_path / run, **QUIET)
    before = (ours / "carry.pt").read_bytes()
    (ours / "carry.pt").write_bytes((theirs / "carry.pt").read_bytes())
    with pytest.raises(LineError, match="the line's files were mixed"):
        run_piece(ours, overrides=["iterations=4"], minutes=5, run_dir=tmp_path / "r3", **QUIET)
    (ours / "carry.pt").write_bytes(before)
    with pytest.raises(LineError, match=r"--out .*theirs holds line "):
        run_piece(ours, overrides=["iterations=4"], out=theirs, minutes=5, run_dir=tmp_path / "r4", **QUIET)
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("mine\n")
    with pytest.raises(LineError, match="files that are not a copy of this line"):
        run_piece(ours, overrides=["iterations=4"], out=stranger, minutes=5, run_dir=tmp_path / "r5", **QUIET)
    assert Line(theirs).read_carry()["iteration"] == 3 and (stranger / "notes.txt").read_text() == "mine\n"
    out = tmp_path / "out"  # an earlier --out of this same line may be written again
    run_piece(ours, overrides=["iterations=4"], out=out, minutes=5, run_dir=tmp_path / "r6", **QUIET)
    again = run_piece(ours, overrides=["iterations=4"], out=out, minutes=5, run_dir=tmp_path / "r7", **QUIET)
    assert again.record["piece"] == 2 and Line(out).read_carry()["line"]["piece"] == 2


def test_a_line_from_before_ids_adopts_one_and_numbers_on(tmp_path):
    line = tmp_path / "line"
    run_piece(line, config_file=str(TINY), minutes=5, run_dir=tmp_path / "r1", **QUIET)
    _reseal(line / "carry.pt", lambda d: d.pop("line"))
    from conhex_zero.files.jsonl import rewrite_jsonl

    # its records, logs and metric lines named no line then either
    for name in ("pieces.jsonl", "metrics.jsonl"):
        rewrite_jsonl(line / name, [{k: v for k, v in e.items() if k != "line_id"} for e in read_jsonl(line / name)])
    log = line / "logs" / "piece-001.log"
    log.write_text(re.sub(r" \(id [0-9a-f]{16}; ", " (", log.read_text()))
    said: list[str] = []
    result = run_piece(line, overrides=["iterations=4"], minutes=5, run_dir=tmp_path / "r2", progress=False,
                       log=said.append, install_signals=False)
    assert result.record["piece"] == 2 and any("made before lines had an id" in s for s in said)


def test_a_state_carried_from_a_gpu_continues_on_a_cpu(tmp_path):
    """A CUDA generator's state (16 bytes) in carry.pt: a carried state draws its generators afresh."""
    line = tmp_path / "line"
    run_piece(line, config_file=str(TINY), minutes=5, run_dir=tmp_path / "r1", **QUIET)
    _reseal(line / "carry.pt", lambda d: d["learner"].update(generator=torch.zeros(16, dtype=torch.uint8)))
    result = run_piece(line, overrides=["iterations=4"], minutes=5, run_dir=tmp_path / "r2", **QUIET)
    assert result.record["last_iteration"] == 4


def test_line_yaml_keeps_its_comments_takes_edits_and_refuses_damage(tmp_path):
    from conhex_zero.train.line import LineError

    config = tmp_path / "recipe.yaml"
    config.write_text("# my recipe: why each setting is what it is\n" + TINY.read_text())
    line, out = tmp_path / "line", tmp_path / "out"
    run_piece(line, config_file=str(config), minutes=5, run_dir=tmp_path / "r1", **QUIET)
    assert (line / "line.yaml").read_text() == config.read_text()
    assert oct((line / "line.yaml").stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    run_piece(line, overrides=["iterations=4"], out=out, minutes=5, run_dir=tmp_path / "r2", **QUIET)
    text = (out / "line.yaml").read_text()  # the override changed the config: written anew, comments first
    assert text.startswith("# my recipe") and "# written by piece 2 (iterations=4)" in text
    assert load_config(out / "line.yaml").iterations == 4
    # an edit of line.yaml changes the next piece's settings, noted
    (line / "line.yaml").write_text(config.read_text().replace("lr: 0.003", "lr: 0.002") + "iterations: 4\n")
    said: list[str] = []
    run_piece(line, minutes=5, run_dir=tmp_path / "r3", progress=False, log=said.append, install_signals=False)
    assert any("optim.lr: 0.003 -> 0.002" in s for s in said)
    assert Line(line).read_carry()["config"]["optim"]["lr"] == 0.002
    assert (line / "line.yaml").read_text().startswith("# my recipe")
    # damage is an error naming line.yaml, and nothing is replaced
    (line / "line.yaml").write_text("optim:\n  learning_rate: 0.1\n")
    with pytest.raises(LineError, match=r"line\.yaml: unknown config key 'optim\.learning_rate'"):
        run_piece(line, overrides=["iterations=6"], minutes=5, run_dir=tmp_path / "r4", **QUIET)
    (line / "line.yaml").write_text("optim: [\n")
    with pytest.raises(LineError, match=r"line\.yaml"):
        run_piece(line, overrides=["iterations=6"], minutes=5, run_dir=tmp_path / "r5", **QUIET)
    assert (line / "line.yaml").read_text() == "optim: [\n"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_the_deadline_counts_from_the_command_start():
    for before, stops in ((100, True), (0, False)):
        now = [1000.0]
        d = Deadline(600, eval_seconds=10, clock=lambda: now[0], margin=20, elapsed_before=before)
        assert d.elapsed() == before  # the command had run this long (install, start-up) when the piece began
        now[0] = 1100.0
        assert not d.stop_now(1)  # an iteration of 100 s: at least 400 s left >= 100 + 30
        now[0] = 1300.0  # an iteration of 200 s: 200 s left of 600 counted from the command (300 from the piece)
        assert d.stop_now(2) == stops


def test_a_piece_records_its_start_up_from_the_command_start(tmp_path):
    line = tmp_path / "line"
    result = run_piece(line, config_file=str(TINY), minutes=5, run_dir=tmp_path / "r1",
                       command_start=time.time() - 30, **QUIET)
    split = result.record["seconds"]
    assert 30 <= split["startup"] < 60 and split["total"] >= split["startup"] + split["selfplay"]
    assert result.record["minutes"] == pytest.approx(split["total"] / 60, abs=0.02)


def test_the_command_starts_the_clock_where_its_process_began():
    """The command line's default --command-start is its process's start (Linux /proc): a few
    seconds before now, never after."""
    from conhex_zero.train.piece_clock import process_start_time

    started = process_start_time()
    assert started is not None and started <= time.time()
    code = "from conhex_zero.train.piece_clock import process_start_time as p; import time; print(time.time() - p())"
    age = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout)
    assert 0 <= age < 30

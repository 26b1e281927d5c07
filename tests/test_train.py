"""Training pipeline: configs, replay, self-play, the loop end to end, resume, crash safety."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conhex_zero.agents.evaluators import UniformEvaluator
from conhex_zero.cli.main import main
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.train.config import ConfigError, TrainConfig
from conhex_zero.train.config_load import load_config
from conhex_zero.train.loop import train
from conhex_zero.train.replay import ReplayBuffer
from conhex_zero.train.selfplay import SelfPlay

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "configs" / "tiny.yaml"


# ---------------------------------------------------------------- config
def test_configs_in_the_repository_load():
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        config = load_config(path)
        assert isinstance(config, TrainConfig), path
    tiny = load_config(TINY)
    assert tiny.game == "hex-3" and tiny.selfplay.games == 16 and tiny.eval.references == ("random", "mcts-rollout:8")


def test_overrides_and_round_trip(tmp_path):
    c = load_config(TINY, ["optim.lr=0.01", "selfplay.games=4", "eval.references=random", "game=hex-4"])
    assert c.optim.lr == 0.01 and c.selfplay.games == 4 and c.eval.references == ("random",) and c.game == "hex-4"
    saved = tmp_path / "c.yaml"
    saved.write_text(c.dump())
    assert load_config(saved) == c


@pytest.mark.parametrize("overrides, message", [
    (["optim.lrr=1"], "unknown config key 'optim.lrr'; did you mean optim.lr?"),
    (["selfplay.games=many"], "selfplay.games: expected a whole number"),
    (["selfplay.games=0"], "selfplay.games: at least 1"),
    (["optim.schedule=linear"], "optim.schedule: constant or cosine"),
    (["selfplay.backend=native"], "selfplay.backend: auto, aoti, eager"),
    (["game=chess"], "game: unknown game 'chess'"),
    (["model=big"], "model: model name 'big'"),
    (["eval.references=[random, alphazero]"], "not a fixed reference"),
    (["replay.min_size=10", "replay.capacity=5"], "capacity >= min_size"),
    (["nosuchkey=1"], "unknown config key 'nosuchkey'"),
    (["optim"], "expected key=value"),
    (["clock=cpu-time"], "clock: wall or cpu"),
    (["model=l4h64r0c"], "model: model name 'l4h64r0c'"),
])
def test_bad_configs_are_clear_errors(overrides, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("?", r"\?")):
        load_config(TINY, overrides)


def test_bad_yaml_files(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "none.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("game: [unclosed")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    bad.write_text("selfplay: 3")
    with pytest.raises(ConfigError, match="selfplay: expected a mapping"):
        load_config(bad)


# ---------------------------------------------------------------- replay
def test_replay_ring_and_symmetric_samples():
    env = VecEnv("conhex")
    gen = torch.Generator().manual_seed(0)
    replay = ReplayBuffer(env, capacity=50)
    state = env.initial_state(30)
    for _ in range(9):
        state = env.step(state, env.random_actions(state, gen))
    legal = env.legal_mask(state)
    policy = legal.float() / legal.sum(1, keepdim=True)
    value = torch.where(torch.arange(30) % 2 == 0, 1, -1)
    own = (state.cells.long() == state.to_move[:, None]).long() * 2 - 1
    replay.add(state, policy, value, own)
    replay.add(state, policy, value, own)
    assert len(replay) == 50 and replay.total_added == 60 and replay.next == 10
    plain = replay.sample(64, torch.Generator().manual_seed(1))
    assert torch.equal(env.legal_mask(plain.state) & (plain.policy > 0), plain.policy > 0)
    sym = replay.sample(256, torch.Generator().manual_seed(2), env.symmetries)
    # Under any symmetry the target still lives on the (transformed) legal moves, and the
    # ownership target still says +1 exactly where the player to move owns the cell.
    assert torch.equal(env.legal_mask(sym.state) & (sym.policy > 0), sym.policy > 0)
    mine = sym.state.cells.long() == sym.state.to_move[:, None]
    assert torch.equal(sym.ownership == 1, mine)
    restored = ReplayBuffer(env, capacity=50)
    restored.load_state_dict(replay.state_dict())
    again = restored.sample(64, torch.Generator().manual_seed(1))
    assert again.state.equal(plain.state) and torch.equal(again.policy, plain.policy)


# ------------------------------------------------------------- self-play
def batch_ready_fraction(replay):
    return float(replay.ready[:len(replay)].float().mean())


def test_selfplay_records_consistent_positions():
    env = VecEnv("hex-4:swap")
    cfg = load_config(TINY, ["game=hex-4:swap"]).selfplay
    sp = SelfPlay(env, cfg, UniformEvaluator(env), seed=3)
    replay = ReplayBuffer(env, 5000)
    stats = sp.run(replay, 200)
    assert stats.recorded >= 200 and len(replay) == stats.recorded and stats.games > 0
    assert batch_ready_fraction(replay) > 0.5
    batch = replay.sample(len(replay), torch.Generator().manual_seed(0))
    assert torch.allclose(batch.policy.sum(1), torch.ones(len(replay)), atol=1e-2)
    assert torch.equal(env.legal_mask(batch.state) & (batch.policy > 0), batch.policy > 0)
    assert set(batch.value[batch.ready > 0].unique().tolist()) <= {-1.0, 1.0}
    m = stats.metrics()
    assert 0 <= m["selfplay/first_player_win_rate"] <= 1 and m["selfplay/mean_length"] >= 4
    finished = int(replay.ready[:len(replay)].sum())  # positions of finished games
    assert sum(stats.calib_count) == finished and sum(stats.calib_won) <= finished
    assert 0 <= m["selfplay/value_calibration_error"] <= 1


class FavoursFirstHole:
    """A prior that puts nearly all weight on hole 0: the search's first move is always hole 0."""

    def __init__(self, env):
        self.env = env

    def __call__(self, state):
        logits = torch.zeros(state.batch_size, self.env.num_actions)
        logits[:, 0] = 20.0
        return logits, torch.zeros(state.batch_size)


def first_moves(replay) -> list[int]:
    """The hole of the first piece of each recorded game (from its positions at ply 1)."""
    n = len(replay)
    at_ply_one = replay.store["ply"][:n] == 1
    holes = replay.store["holes"][:n][at_ply_one]  # [P, H]: one piece on each board
    return (holes >= 0).int().argmax(1).tolist()


@pytest.mark.parametrize("random_first_moves", [0, 1])
def test_random_first_moves_play_every_opening(random_first_moves):
    env = VecEnv("hex-4")
    cfg = load_config(TINY, ["game=hex-4", "selfplay.full_fraction=1", "selfplay.temperature_moves=0",
                             f"selfplay.random_first_moves={random_first_moves}"]).selfplay
    replay = ReplayBuffer(env, 5000)
    SelfPlay(env, cfg, FavoursFirstHole(env), seed=5).run(replay, 1200)
    moves = first_moves(replay)
    assert len(moves) >= 100
    if random_first_moves == 0:  # the search's choice: always the favoured hole
        assert set(moves) == {0}
    else:  # uniformly random: all 16 openings, none more than three times its share
        counts = torch.bincount(torch.tensor(moves), minlength=16)
        assert (counts > 0).all() and counts.max() < 3 * len(moves) / 16, counts.tolist()


def test_positions_before_the_last_random_move_get_no_value_target():
    """Their outcome is that of a game whose next move was random: only their policy target counts."""
    env = VecEnv("hex-4")
    cfg = load_config(TINY, ["game=hex-4", "selfplay.full_fraction=1", "selfplay.random_first_moves=2"]).selfplay
    replay = ReplayBuffer(env, 5000)
    SelfPlay(env, cfg, UniformEvaluator(env), seed=3).run(replay, 600)
    n = len(replay)
    ply, ready = replay.store["ply"][:n].long(), replay.ready[:n]
    assert (ply < 2).sum() > 50 and (ply >= 2).sum() > 50
    assert not ready[ply < 2].any()  # plies 0 and 1: the forced random moves follow
    assert ready[ply >= 2].float().mean() > 0.8  # the rest of the finished games


def test_random_first_moves_never_swap():
    env = VecEnv("hex-4:swap")
    cfg = load_config(TINY, ["game=hex-4:swap", "selfplay.random_first_moves=2"]).selfplay
    stats = SelfPlay(env, cfg, UniformEvaluator(env), seed=2).run(ReplayBuffer(env, 5000), 300)
    assert stats.games > 0 and stats.swaps == 0


class Hopeless:
    """Every position is won for its player to move, so every move looks lost: searched values
    are negative everywhere and everyone resigns when allowed."""

    def __init__(self, env):
        self.env = env

    def __call__(self, state):
        return torch.zeros(state.batch_size, self.env.num_actions), torch.ones(state.batch_size)


def test_resignation_and_played_out_controls():
    env = VecEnv("hex-5")
    cfg = load_config(TINY, ["game=hex-5", "selfplay.resign_playout=0.3", "selfplay.temperature_moves=0",
                             "selfplay.resign_threshold=0.5"]).selfplay
    sp = SelfPlay(env, cfg, Hopeless(env), seed=0)
    replay = ReplayBuffer(env, 5000)
    stats = sp.run(replay, 100)
    m = stats.metrics()
    # Every game resigns at its first move except the played-out controls, which never resign.
    assert stats.control_games > 0 and stats.resigned == stats.games - stats.control_games
    assert m["selfplay/resign_rate"] > 0.5 and m["selfplay/mean_length"] < 6
    assert stats.control_games > 0 and stats.control_would_resign == stats.control_games
    assert m["selfplay/false_resign_rate"] == 1.0  # in control games the winner had wanted to resign too


def test_selfplay_state_round_trip():
    env = VecEnv("hex-3")
    cfg = load_config(TINY).selfplay
    a = SelfPlay(env, cfg, UniformEvaluator(env), seed=1)
    r1, r2 = ReplayBuffer(env, 1000), ReplayBuffer(env, 1000)
    a.run(r1, 30)
    b = SelfPlay(env, cfg, UniformEvaluator(env), seed=99)
    b.load_state_dict(a.state_dict())
    r2.load_state_dict(r1.state_dict())
    a.run(r1, 30)
    b.run(r2, 30)
    assert r1.total_added == r2.total_added
    assert torch.equal(r1.store["holes"], r2.store["holes"]) and torch.equal(r1.policy, r2.policy)


# --------------------------------------------------------- the whole loop
def test_tiny_run_checkpoints_resumes_exactly_and_evaluates(tmp_path):
    config = load_config(TINY)
    whole = train(config, tmp_path / "whole", progress=False, log=lambda *_: None)
    part = train(config, tmp_path / "part", progress=False, log=lambda *_: None, stop_after=2)
    assert part.iterations == 2
    resumed = train(config, tmp_path / "part", resume=True, progress=False, log=lambda *_: None)
    assert resumed.iterations == whole.iterations == 3
    a, b = load_checkpoint(tmp_path / "whole" / "latest.pt"), load_checkpoint(tmp_path / "part" / "latest.pt")
    for x, y in zip(a.model.state_dict().values(), b.model.state_dict().values()):
        assert torch.equal(x, y)
    assert a.meta["games"] == b.meta["games"] and a.meta["step"] == b.meta["step"] > 0
    run = tmp_path / "whole"
    for name in ("config.yaml", "latest.pt", "best.pt", "state/train_state.pt", "checkpoints/iter_0003.pt"):
        assert (run / name).is_file(), name
    assert not list(run.rglob("*.tmp"))
    lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert [x["iteration"] for x in lines] == [1, 2, 3]
    last = lines[-1]
    for key in ("selfplay/positions_per_s", "selfplay/sims_per_s", "train/policy_loss", "train/value_loss",
                "train/policy_entropy", "selfplay/value_calibration_error", "eval/vs_random/win_rate",
                "eval/vs_mcts-rollout_8/win_rate_low", "eval/vs_previous/win_rate"):
        assert key in last, key
    assert list((run / "tb").iterdir())
    assert a.game == "hex-3" and a.meta["config"]["model"] == "l2h16"
    # Every evaluation went to the run's Elo ladder; the resumed run's ladder matches (lost work trimmed).
    assert "eval/elo" in last and "eval/elo_stderr" in last
    from conhex_zero.ladder.store import Ladder

    ladder, resumed_ladder = Ladder.open(run), Ladder.open(tmp_path / "part")
    assert {"iter_0001", "iter_0002", "iter_0003", "random", "mcts-rollout:8"} <= set(ladder.players)
    assert ladder.results == resumed_ladder.results
    assert main(["ladder", str(run)]) == 0 and (run / "ladder.png").is_file()


def test_a_state_saved_between_evaluations_resumes_exactly(tmp_path, monkeypatch):
    """state_minutes: with a tiny limit every iteration's end saves the training state (no
    checkpoint, no evaluation); a run stopped during iteration 3 keeps iteration 2's state and its
    resume ends exactly as the run that was never stopped. Without it nothing would be kept."""
    from conhex_zero.train.interrupt import TrainingInterrupted

    config = load_config(TINY, ["iterations=4", "eval.every=4", "state_minutes=1e-9"])
    train(config, tmp_path / "whole", progress=False, log=lambda *_: None)
    real = SelfPlay.run
    calls = []

    def stopped_in_the_third(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SelfPlay, "run", stopped_in_the_third)
    for name, minutes in (("untimed", "0"), ("part", "1e-9")):
        calls.clear()
        with pytest.raises(TrainingInterrupted) as stop:
            train(load_config(TINY, ["iterations=4", "eval.every=4", f"state_minutes={minutes}"]),
                  tmp_path / name, progress=False, log=lambda *_: None)
        assert stop.value.saved == (None if name == "untimed" else 2), name
    run = tmp_path / "part"
    assert torch.load(run / "state" / "train_state.pt", weights_only=False)["iteration"] == 2
    assert not list((run / "checkpoints").glob("*.pt")) and not (run / "latest.pt").exists()
    monkeypatch.setattr(SelfPlay, "run", real)
    assert train(config, run, resume=True, progress=False, log=lambda *_: None).iterations == 4
    a, b = load_checkpoint(tmp_path / "whole" / "latest.pt"), load_checkpoint(run / "latest.pt")
    for x, y in zip(a.model.state_dict().values(), b.model.state_dict().values()):
        assert torch.equal(x, y)
    assert a.meta["games"] == b.meta["games"] and a.meta["step"] == b.meta["step"]
    lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert [x["iteration"] for x in lines] == [1, 2, 3, 4]


def test_a_crash_while_saving_keeps_the_last_checkpoint(tmp_path, monkeypatch):
    config = load_config(TINY, ["iterations=2"])
    train(config, tmp_path / "run", progress=False, log=lambda *_: None, stop_after=1)
    before = (tmp_path / "run" / "state" / "train_state.pt").read_bytes()
    real_save = torch.save

    def dying_save(obj, path, *args, **kwargs):
        real_save(obj, path, *args, **kwargs)
        if str(path).endswith("train_state.pt.tmp"):
            raise KeyboardInterrupt  # the process is killed after writing the temporary file

    monkeypatch.setattr(torch, "save", dying_save)
    with pytest.raises(KeyboardInterrupt):
        train(config, tmp_path / "run", resume=True, progress=False, log=lambda *_: None)
    assert (tmp_path / "run" / "state" / "train_state.pt").read_bytes() == before
    monkeypatch.setattr(torch, "save", real_save)
    done = train(config, tmp_path / "run", resume=True, progress=False, log=lambda *_: None)
    assert done.iterations == 2


# ------------------------------------------------------------ command line
def test_train_command_errors(capsys, tmp_path):
    assert main(["train", "--config", str(TINY), "optim.lrr=1"]) == 2
    assert "unknown config key 'optim.lrr'" in capsys.readouterr().err
    assert main(["train", "--resume", str(tmp_path / "nothing")]) == 2
    assert "no training state to resume" in capsys.readouterr().err
    capsys.readouterr()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA: asking for it is no error here")
def test_train_on_cuda_without_cuda_is_a_clear_error(capsys):
    assert main(["train", "--config", str(TINY), "--device", "cuda"]) == 2
    assert "CUDA is not available" in capsys.readouterr().err


def test_train_command_and_script(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["train", "--config", str(TINY), "--run-dir", str(run), "--quiet", "iterations=1"]) == 0
    assert (run / "latest.pt").is_file()
    assert main(["train", "--config", str(TINY), "--run-dir", str(run), "--quiet"]) == 2  # never overwrite
    # --resume of a finished run says that nothing was trained (no config, no "done"), and changes nothing
    files = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert main(["train", "--resume", str(run)]) == 0
    out = capsys.readouterr().out
    assert out == (f"{run} has done all its 1 iteration (its state is at iteration 1): nothing to train; to go on, "
                   f"raise iterations, e.g. conhex-zero train --resume {run} iterations=2\n")
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == files
    out = subprocess.run([sys.executable, str(ROOT / "train.py"), "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "--resume" in out.stdout and "key=value" in out.stdout


def test_resume_trims_metrics_of_lost_iterations(tmp_path):
    config = load_config(TINY, ["iterations=4", "eval.every=2"])
    train(config, tmp_path / "run", progress=False, log=lambda *_: None, stop_after=3)
    # Iteration 3 was the session's last (checkpointed); pretend a crash lost a 4th line.
    with open(tmp_path / "run" / "metrics.jsonl", "a") as f:
        f.write(json.dumps({"iteration": 4, "lost": True}) + "\n")
    train(config, tmp_path / "run", resume=True, progress=False, log=lambda *_: None)
    lines = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [x["iteration"] for x in lines] == [1, 2, 3, 4] and "lost" not in lines[-1]


def test_resume_with_other_iterations_rescales_the_schedule(tmp_path):
    config = load_config(TINY, ["iterations=6", "eval.every=2"])
    train(config, tmp_path / "run", progress=False, log=lambda *_: None, stop_after=2)
    planned = torch.load(tmp_path / "run" / "state" / "train_state.pt", weights_only=False)["learner"]["planned_steps"]
    notes: list[str] = []
    train(load_config(TINY, ["iterations=3", "eval.every=2"]), tmp_path / "run", resume=True, progress=False,
          log=notes.append)
    state = torch.load(tmp_path / "run" / "state" / "train_state.pt", weights_only=False)
    assert state["iteration"] == 3 and state["learner"]["planned_steps"] == planned // 2
    assert any("schedule now spans 3 iterations" in n for n in notes), notes


def test_init_starts_from_a_checkpoints_weights(tmp_path, capsys):
    first = train(load_config(TINY, ["iterations=1"]), tmp_path / "a", progress=False, log=lambda *_: None)
    source = load_checkpoint(first.run_dir / "latest.pt")
    # Warm start on another board of the family: iteration 0 of the new run is the source's network.
    config = load_config(TINY, ["iterations=1", "game=hex-4", f"init={first.run_dir / 'latest.pt'}",
                                "replay.min_size=2000"])
    messages = []
    train(config, tmp_path / "b", progress=False, log=messages.append)
    warm = load_checkpoint(tmp_path / "b" / "latest.pt")
    assert warm.game == "hex-4" and any("initial weights from" in m for m in messages)
    for x, y in zip(source.model.state_dict().values(), warm.model.state_dict().values()):
        assert torch.equal(x, y)  # no training step yet (replay below min_size): the source's weights
    # Command line: a network of another size, a missing file, and --init with --resume are clear errors.
    assert main(["train", "--config", str(TINY), "--run-dir", str(tmp_path / "c"), "--quiet", "model=l3h32",
                 "--init", str(first.run_dir / "latest.pt")]) == 2
    assert "holds a l2h16 network; this run trains l3h32" in capsys.readouterr().err
    assert main(["train", "--config", str(TINY), "--run-dir", str(tmp_path / "d"), "--quiet",
                 "--init", str(tmp_path / "none.pt")]) == 2
    assert "init: no checkpoint file at" in capsys.readouterr().err
    assert main(["train", "--resume", str(tmp_path / "a"), "--init", str(first.run_dir / "latest.pt")]) == 2
    assert "--init starts a new run" in capsys.readouterr().err


def test_training_without_evaluation_games(tmp_path):
    config = load_config(TINY, ["iterations=2", "eval.games=0", "eval.previous_games=0"])
    result = train(config, tmp_path / "run", progress=False, log=lambda *_: None)
    assert result.iterations == 2 and (tmp_path / "run" / "best.pt").is_file()
    assert "eval/elo" not in result.last_metrics


@pytest.mark.heavy  # inductor compiles for a minute or more
def test_compile_true_trains(tmp_path):
    config = load_config(TINY, ["iterations=2", "optim.compile=true", "selfplay.compile=true"])
    result = train(config, tmp_path / "run", progress=False, log=lambda *_: None)
    assert result.iterations == 2 and (tmp_path / "run" / "latest.pt").is_file()


def test_the_iteration_line_explains_itself_and_counts_in_words():
    from conhex_zero.train.loop import _summary

    m = {"selfplay/games": 1, "selfplay/positions_per_s": 263.4, "train/total_loss": 3.183, "train/policy_loss": 1.79,
         "train/value_loss": 1.01, "train/ownership_loss": 0.76, "eval/vs_random/win_rate": 0.8,
         "eval/vs_random/win_rate_low": 0.5, "eval/vs_random/win_rate_high": 0.9, "eval/elo": 1170.2,
         "eval/elo_stderr": 91.4}
    assert _summary(3, 4, m, 0.25) == (
        "iter 3/4  1 game  263 pos/s  loss 3.183 (policy 1.79, value 1.01, ownership 0.76)  "
        "score vs random 0.80 (95% 0.50-0.90)  Elo 1170 ± 91 (ladder, ± 1 s.e.)  0.2 min")
    assert _summary(1, 4, {"selfplay/games": 16}, 0.0).startswith("iter 1/4  16 games  0 pos/s")


def test_train_counts_iterations_in_words(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["train", "--config", str(TINY), "--run-dir", str(run), "--quiet", "iterations=1"]) == 0
    assert f"done: 1 iteration; checkpoints in {run}" in capsys.readouterr().out


def test_the_schema_check_reads_the_config_dataclasses(tmp_path):
    """config_load.check_schema (what train and bench selfplay check before torch) knows exactly the
    dataclasses' keys and types: every field with its own default passes, a misspelt key or a value
    of the wrong type is refused in one line, from a file as from an override."""
    import dataclasses

    from conhex_zero.train.config import ConfigError, TrainConfig
    from conhex_zero.train.config_load import check_schema

    def overrides(cls, prefix=""):
        for f in dataclasses.fields(cls):
            value = getattr(cls(), f.name)
            if dataclasses.is_dataclass(value):
                yield from overrides(type(value), f"{prefix}{f.name}.")
            else:
                shown = ",".join(value) if isinstance(value, tuple) else value
                yield f"{prefix}{f.name}={shown}"

    every = list(overrides(TrainConfig))
    assert len(every) > 40 and "optim.lr=0.002" in every
    check_schema(None, every)
    for bad, message in (("optim.learning_rate=1e-3", "unknown config key 'optim.learning_rate'"),
                         ("optim.lr=fast", "optim.lr: expected a number, got 'fast'"),
                         ("selfplay.games=many", "selfplay.games: expected a whole number, got 'many'"),
                         ("optim=3", "optim: expected a mapping of keys, got 3")):
        with pytest.raises(ConfigError, match=re.escape(message)):
            check_schema(TINY, [bad])
    config = tmp_path / "c.yaml"
    config.write_text("optim:\n  lr: 1e-3\n  momentum: 0.9\n")
    with pytest.raises(ConfigError, match="unknown config key 'optim.momentum'"):
        check_schema(config, [])


def test_a_cpu_clock_counts_the_process_work_not_the_wall():
    """``clock: cpu``: a run's minutes are its process's CPU time (recipes compared on a shared machine)."""
    import time

    from conhex_zero.train.trainer import RunClock

    wall, cpu = RunClock(5.0), RunClock(5.0, cpu=True)
    time.sleep(0.3)
    assert wall.seconds() >= 5.3 and cpu.seconds() < 5.15
    start = time.process_time()
    while time.process_time() - start < 0.3:
        pass
    assert cpu.seconds() >= 5.3
    assert load_config(TINY, ["clock=cpu"]).clock == "cpu" and load_config(TINY).clock == "wall"

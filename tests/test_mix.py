"""Several boards in one run (``mix``, ``train/mix.py``): the side boards' share of positions and
steps, clear errors for bad settings, a mixed run that learns on every board and resumes bit for
bit, and a line's piece that starts the side boards afresh."""

import json
import math
from pathlib import Path

import pytest
import torch

from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.train.config import ConfigError
from conhex_zero.train.config_load import load_config
from conhex_zero.train.line import Line
from conhex_zero.train.loop import train
from conhex_zero.train.mix import positions_split, side_step
from conhex_zero.train.piece import run_piece

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "configs" / "tiny.yaml"
QUIET = dict(progress=False, log=lambda *_: None)
MIXED = ["mix.games=[hex-4, hex-2]", "mix.share=0.5"]
"""tiny.yaml (Hex 3x3, 48 positions an iteration, replay ready at 32) with two side boards taking
half: at least 12 positions each an iteration, so their replays are ready from the second or third."""


# ---------------------------------------------------------------- shares
def test_positions_split_gives_the_side_boards_their_share_evenly():
    assert positions_split(100, 0.25, 0) == (100, [])
    assert positions_split(100, 0.25, 1) == (75, [25])
    assert positions_split(100, 0.25, 2) == (75, [13, 12])  # the first side board takes the remainder
    assert positions_split(48, 0.5, 2) == (24, [12, 12])
    assert positions_split(10, 0.01, 3) == (7, [1, 1, 1])  # at least one position each
    main, sides = positions_split(1234, 0.3, 3)
    assert main + sum(sides) == 1234 and max(sides) - min(sides) <= 1


@pytest.mark.parametrize("share, sides", [(0.25, 1), (0.25, 2), (0.3, 3), (0.5, 2), (0.1, 1)])
def test_side_step_takes_the_share_of_every_run_of_steps_in_turn(share, sides):
    owners = [side_step(step, share, sides) for step in range(1000)]
    taken = [k for k in owners if k is not None]
    assert len(taken) == int(1000 * share)
    for start in range(0, 900, 37):  # any window: within one step of its share
        window = owners[start:start + 100]
        assert abs(sum(k is not None for k in window) - 100 * share) <= 1
    assert taken[:2 * sides] == list(range(sides)) * 2  # the side boards in turn
    assert all(side_step(step, share, 0) is None for step in range(50))


# ---------------------------------------------------------------- config
@pytest.mark.parametrize("overrides, message", [
    (["mix.games=[hex-4]", "mix.share=0"], "invalid value for mix.share: strictly between 0 and 1"),
    (["mix.games=[hex-4]", "mix.share=1"], "invalid value for mix.share: strictly between 0 and 1"),
    (["mix.games=[chess]"], "mix.games: chess:"),
    (["mix.games=[hex-3]"], "mix.games: hex-3 is the run's own game"),
    (["mix.games=[hex-4, hex-4]"], "mix.games: hex-4 is listed twice"),
    (["mix.board=hex-4"], "unknown config key 'mix.board'"),
])
def test_bad_mix_settings_are_clear_errors(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(TINY, overrides)


def test_the_side_boards_may_be_any_game_of_the_family():
    config = load_config(TINY, ["mix.games=[conhex, hex-5]", "mix.share=0.2"])
    assert config.mix.games == ("conhex", "hex-5") and config.mix.share == 0.2
    assert load_config(TINY).mix.games == ()  # by default a run has one board


# ---------------------------------------------------------------- runs
def test_two_mixed_iterations_play_and_learn_on_the_side_board(tmp_path):
    """The fast suite's mixed run: Hex 3x3 with Hex 2x2 beside it; the side board records half of the
    positions and takes half of the steps (3 of each iteration's 6)."""
    config = load_config(TINY, ["mix.games=[hex-2]", "mix.share=0.5", "iterations=2", "optim.sample_reuse=4",
                                "replay.min_size=16", "eval.games=0", "eval.previous_games=0"])
    train(config, tmp_path / "run", **QUIET)
    lines = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert lines[0]["mix/hex-2/recorded"] >= 24 and lines[1]["mix/hex-2/replay_size"] >= 48
    assert [m["mix/hex-2/steps"] for m in lines] == [3, 3] and lines[1]["train/steps"] == 12
    assert math.isfinite(lines[1]["mix/hex-2/value_loss"])


def test_a_mixed_run_learns_on_every_board_and_resumes_exactly(tmp_path):
    config = load_config(TINY, MIXED + ["iterations=4", "optim.sample_reuse=8"])  # 12 steps an iteration
    whole = train(config, tmp_path / "whole", **QUIET)
    part = train(config, tmp_path / "part", stop_after=2, **QUIET)
    assert part.iterations == 2
    train(config, tmp_path / "part", resume=True, **QUIET)
    assert whole.iterations == 4
    a, b = load_checkpoint(tmp_path / "whole" / "latest.pt"), load_checkpoint(tmp_path / "part" / "latest.pt")
    for x, y in zip(a.model.state_dict().values(), b.model.state_dict().values()):
        assert torch.equal(x, y)
    assert a.game == "hex-3" and a.meta["step"] == b.meta["step"] > 0
    runs = [[json.loads(x) for x in (tmp_path / name / "metrics.jsonl").read_text().splitlines()]
            for name in ("whole", "part")]
    for key in ("mix/hex-4/steps", "mix/hex-2/replay_size", "mix/hex-2/total_loss", "train/value_loss"):
        assert runs[0][-1][key] == runs[1][-1][key], key
    lines = runs[0]
    # each side board recorded its share; the main board's replay took the rest
    for game in ("hex-4", "hex-2"):  # at least 12 a board an iteration (self-play's last step may pass it)
        recorded = [m[f"mix/{game}/recorded"] for m in lines]
        assert all(12 <= r < 12 + 16 for r in recorded), (game, recorded)
        assert [m[f"mix/{game}/replay_size"] for m in lines] == [sum(recorded[:i + 1]) for i in range(4)]
    # not ready (fewer than replay.min_size = 32 positions) in the first iteration: no side steps
    assert [m["mix/hex-4/steps"] for m in lines[:1]] == [0] and lines[0]["mix/hex-2/steps"] == 0
    # then half of each iteration's steps are the side boards', a quarter each
    for m in lines[2:]:
        assert m["mix/hex-4/steps"] == m["mix/hex-2/steps"] == 3
        assert math.isfinite(m["mix/hex-4/policy_loss"]) and math.isfinite(m["mix/hex-2/value_loss"])
    assert [m["train/steps"] for m in lines] == [12, 24, 36, 48]
    state = torch.load(tmp_path / "whole" / "state" / "train_state.pt", weights_only=False)
    assert set(state["mix"]) == {"hex-4", "hex-2"}


def test_a_run_resumed_with_other_side_boards_keeps_what_it_can(tmp_path):
    logged = []
    train(load_config(TINY, MIXED + ["iterations=2"]), tmp_path / "run", **QUIET)
    train(load_config(TINY, ["mix.games=[hex-4, hex-5]", "mix.share=0.5", "iterations=3"]), tmp_path / "run",
          resume=True, progress=False, log=logged.append)
    text = "\n".join(map(str, logged))
    assert "no games of the side board hex-5: it starts with fresh games" in text
    assert "the side board hex-2 of the saved state is no longer in mix.games" in text
    state = torch.load(tmp_path / "run" / "state" / "train_state.pt", weights_only=False)
    assert set(state["mix"]) == {"hex-4", "hex-5"} and state["iteration"] == 3


def test_a_line_piece_starts_its_side_boards_afresh(tmp_path):
    line = tmp_path / "line"
    quiet = dict(QUIET, install_signals=False)
    first = run_piece(line, config_file=str(TINY), overrides=MIXED, minutes=5, run_dir=tmp_path / "r1", **quiet)
    assert first.record["stopped"] == "complete"
    carry = Line(line).read_carry()
    assert "mix" not in carry and "replay" not in carry  # what a line carries is small
    second = run_piece(line, overrides=["iterations=5"], minutes=5, run_dir=tmp_path / "r2", **quiet)
    assert second.record["stopped"] == "complete"
    metrics = [json.loads(x) for x in (line / "metrics.jsonl").read_text().splitlines()]
    assert [m["iteration"] for m in metrics] == [1, 2, 3, 4, 5]
    sizes = [m["mix/hex-4/replay_size"] for m in metrics]
    assert sizes[3] == metrics[3]["mix/hex-4/recorded"] < sizes[2]  # afresh in piece 2
    assert load_config(line / "line.yaml").mix.games == ("hex-4", "hex-2")

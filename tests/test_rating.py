"""Rating off the device (``train/rating.py``, ``conhex-zero rate``) and the check of ``eval.mode:
check``: a piece that only checks its checkpoints plays no rating game, says where its minutes
went, and ``rate`` later writes the ladder, the piece records and the metrics, playing only what the
ladder lacks."""

import json
import shutil
from pathlib import Path

import pytest

from conhex_zero.cli.main import main
from conhex_zero.files.jsonl import read_jsonl
from conhex_zero.ladder.store import Ladder
from conhex_zero.train.config_load import load_config
from conhex_zero.train.line import Line
from conhex_zero.train.piece import run_piece
from conhex_zero.train.piece_clock import PHASES
from conhex_zero.train.rating import LineRater, RateOptions, ladder_matches, largest

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "configs" / "tiny.yaml"
QUIET = dict(progress=False, log=lambda *_: None, install_signals=False)
CHECK = ["eval.mode=check", "eval.check_games=4"]


def _results(line: Path) -> list[dict]:
    path = line / "ladder.jsonl"
    return [e for e in read_jsonl(path) if e["type"] == "result"] if path.is_file() else []


@pytest.fixture(scope="module")
def checked_line(tmp_path_factory) -> Path:
    """A tiny line of two pieces in check mode (checkpoints at iterations 3 and 6)."""
    tmp = tmp_path_factory.mktemp("checked")
    line = tmp / "line"
    run_piece(line, config_file=str(TINY), overrides=CHECK + ["eval.every=3"], minutes=5, run_dir=tmp / "r1", **QUIET)
    run_piece(line, overrides=["iterations=6"], minutes=5, run_dir=tmp / "r2", **QUIET)
    return line


def test_a_checked_piece_plays_no_rating_game_and_says_where_its_minutes_went(checked_line):
    assert _results(checked_line) == []
    records = Line(checked_line).pieces()
    assert [r["piece"] for r in records] == [1, 2]
    for rec in records:
        assert rec.get("elo") is None and rec["scores"] == {}
        assert rec["check"]["games"] == 4 and 0 <= rec["check"]["wins"] <= 4
        assert rec["checkpoint"] == f"checkpoints/iter_{rec['last_iteration']:04d}.pt"
        split = rec["seconds"]
        assert set(split) == {"startup", *PHASES, "other", "total"}
        assert split["selfplay"] > 0 and split["learning"] > 0 and split["evaluation"] > 0
        assert split["compile"] == 0  # tiny.yaml does not compile its network
        known = sum(v for k, v in split.items() if k != "total")
        assert known == pytest.approx(split["total"], abs=0.06)
        after_startup = split["total"] - split["startup"]
        assert rec["training_share"] == pytest.approx((split["selfplay"] + split["learning"]) / after_startup, abs=0.01)
    metrics = read_jsonl(checked_line / "metrics.jsonl")
    assert not any(k.startswith("eval/") for m in metrics for k in m)
    assert {m["iteration"] for m in metrics if "check/wins" in m} == {3, 6}
    assert all(m["time/selfplay_s"] > 0 and m["time/train_s"] >= 0 for m in metrics)


def test_rating_writes_the_ladder_the_records_and_the_metrics_then_plays_nothing_more(checked_line, tmp_path):
    line = tmp_path / "line"
    shutil.copytree(checked_line, line)
    config = load_config(line / "line.yaml")
    said: list[str] = []
    report = LineRater(Line(line), config, RateOptions(progress=False), said.append).run()
    # each checkpoint against both references (8 games each); the second also against the first
    pairs = sorted((m.first, m.second, m.games) for m, _ in report.played)
    assert pairs == [("iter_0003", "mcts-rollout:8", 8), ("iter_0003", "random", 8),
                     ("iter_0006", "iter_0003", 8), ("iter_0006", "mcts-rollout:8", 8), ("iter_0006", "random", 8)]
    assert len(said) == 5 and all("distinct games" in s for s in said)
    ladder = Ladder.open(line)
    assert {"iter_0003", "iter_0006"} <= set(ladder.players)
    assert ladder.players["iter_0006"]["kind"] == "checkpoint" and ladder.players["iter_0006"]["iteration"] == 6
    records = Line(line).pieces()
    for rec in records:
        assert rec["elo"] == pytest.approx(report.ratings.elo[Path(rec["checkpoint"]).stem], abs=0.1)
        assert set(rec["scores"]) >= {"random", "mcts-rollout_8"} and rec["rated"]["by"] == "conhex-zero rate"
    assert "previous" in records[1]["scores"]
    metrics = {m["iteration"]: m for m in read_jsonl(line / "metrics.jsonl")}
    assert "eval/elo" in metrics[6] and "eval/vs_random/win_rate" in metrics[3] and "eval/elo" not in metrics[4]
    # the same command again: every pairing has its match, nothing is played
    again = LineRater(Line(line), config, RateOptions(progress=False), said.append).run()
    assert again.played == [] and len(_results(line)) == len(_results(line))
    # larger matches on request: only the references' (the predecessor keeps its 8 games)
    more = LineRater(Line(line), config, RateOptions(progress=False, games=12), said.append).run()
    assert sorted((m.first, m.second, m.games) for m, _ in more.played) == [
        ("iter_0003", "mcts-rollout:8", 12), ("iter_0003", "random", 12),
        ("iter_0006", "mcts-rollout:8", 12), ("iter_0006", "random", 12)]
    biggest = largest(ladder_matches(line / "ladder.jsonl"), "iter_0006", "random")
    assert biggest.games == 12 and biggest.wins + biggest.losses <= 12


def test_rate_writes_records_again_after_a_copy_back_without_playing(checked_line, tmp_path, capsys):
    line = tmp_path / "line"
    shutil.copytree(checked_line, line)
    assert main(["rate", str(line), "--quiet"]) == 0
    rated = Line(line).pieces()
    # a piece's --out files copied back over the line: pieces.jsonl and metrics.jsonl without ratings
    shutil.copy(checked_line / "pieces.jsonl", line / "pieces.jsonl")
    shutil.copy(checked_line / "metrics.jsonl", line / "metrics.jsonl")
    capsys.readouterr()
    assert main(["rate", str(line), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["matches"] == [] and set(out["ratings"]) >= {"iter_0003", "iter_0006", "random"}
    assert [r["elo"] for r in Line(line).pieces()] == [r["elo"] for r in rated]


def test_the_check_of_a_network_that_cannot_play_fails(tmp_path):
    import torch

    from conhex_zero.env.vec_env import VecEnv
    from conhex_zero.nn.encode import NUM_FEATURES
    from conhex_zero.nn.model import GraphNet, ModelConfig
    from conhex_zero.train.config import EvalConfig
    from conhex_zero.train.evaluate import check

    env = VecEnv("hex-3")
    torch.manual_seed(0)
    model = GraphNet(ModelConfig.from_name("l2h16"), NUM_FEATURES).eval()
    with torch.no_grad():  # a policy that always prefers the same corner, wherever it stands
        for p in model.parameters():
            p.zero_()
    out = check(env, model, EvalConfig(check_games=8), seed=1)
    assert out["check/games"] == 8 and 0 <= out["check/wins"] <= 8
    assert out["check/passed"] == float(2 * out["check/wins"] > 8) and out["check/seconds"] < 30


@pytest.mark.parametrize("args, message", [
    (["rate", "{tmp}/none"], "is not a line directory (it does not exist)"),
    (["rate", "{tmp}"], "holds no checkpoints to rate"),
    (["rate", "{line}", "--games", "3"], "--games must be an even number from 0 to 100000"),
    (["rate", "{line}", "--games", "1e30"], "--games must be an even number from 0 to 100000, not '1e30'"),
    (["rate", "{line}", "--sims", "0"], "--sims must be from 1 to 100000, not 0"),
    (["rate", "{line}", "--references", "nope.pt"], "--references: no checkpoint file at nope.pt"),
])
def test_rate_errors_are_one_line(checked_line, tmp_path, capsys, args, message):
    code = main([a.replace("{tmp}", str(tmp_path)).replace("{line}", str(checked_line)) for a in args])
    assert code == 2
    err = capsys.readouterr().err
    assert message.replace("{tmp}", str(tmp_path)) in err and len(err.strip().splitlines()) == 1

"""Checkpoint weight averaging (``nn.average``, ``conhex-zero average``): every weight is the mean of
the sources', the sources must agree on network size and game, a run directory stands for its newest
iteration checkpoints, and nothing is overwritten unasked."""

from __future__ import annotations

import pytest
import torch

from conhex_zero.agents.players import make_player
from conhex_zero.agents.arena import play_match
from conhex_zero.cli.main import main
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.games.game import parse_game
from conhex_zero.nn.average import average_checkpoints, last_run_checkpoints
from conhex_zero.nn.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from conhex_zero.nn.encode import NUM_FEATURES
from conhex_zero.nn.model import GraphNet, ModelConfig


def _save(path, seed: int, game: str = "hex-4", size: tuple[int, int] = (1, 8), iteration: int = 0):
    torch.manual_seed(seed)
    return save_checkpoint(path, GraphNet(ModelConfig(*size), NUM_FEATURES), game,
                           {"iteration": iteration, "games": 10 * iteration, "optimizer": "not kept"})


def test_every_weight_is_the_mean_of_the_sources(tmp_path):
    paths = [_save(tmp_path / f"{k}.pt", seed=k, iteration=k) for k in (1, 2, 3)]
    averaged = average_checkpoints(paths)
    sources = [load_checkpoint(p).model.state_dict() for p in paths]
    for name, weight in averaged.model.state_dict().items():
        expected = (sources[0][name] + sources[1][name] + sources[2][name]) / 3
        torch.testing.assert_close(weight, expected)
        assert not torch.equal(weight, sources[2][name]) or torch.equal(sources[0][name], sources[2][name])
    assert averaged.game == "hex-4"
    assert averaged.meta["iteration"] == 3 and averaged.meta["games"] == 30  # the newest source's figures
    assert "optimizer" not in averaged.meta
    assert [s["iteration"] for s in averaged.meta["averaged_from"]] == [1, 2, 3]


def test_the_average_of_one_checkpoint_is_that_checkpoint(tmp_path):
    path = _save(tmp_path / "a.pt", seed=5)
    one = average_checkpoints([path]).model.state_dict()
    for name, weight in load_checkpoint(path).model.state_dict().items():
        assert torch.equal(one[name], weight)


def test_sources_of_other_sizes_or_games_are_refused(tmp_path):
    a = _save(tmp_path / "a.pt", seed=1)
    with pytest.raises(CheckpointError, match="only one network size"):
        average_checkpoints([a, _save(tmp_path / "b.pt", seed=2, size=(2, 8))])
    with pytest.raises(CheckpointError, match="only checkpoints of one game"):
        average_checkpoints([a, _save(tmp_path / "c.pt", seed=3, game="hex-5")])
    with pytest.raises(CheckpointError, match="no checkpoints"):
        average_checkpoints([])


def test_a_run_directory_gives_its_newest_iteration_checkpoints(tmp_path):
    for it in (50, 100, 150, 200):
        _save(tmp_path / "run" / "checkpoints" / f"iter_{it:04d}.pt", seed=it, iteration=it)
    assert [p.name for p in last_run_checkpoints(tmp_path / "run", 2)] == ["iter_0150.pt", "iter_0200.pt"]
    with pytest.raises(CheckpointError, match="fewer than the 5 asked for"):
        last_run_checkpoints(tmp_path / "run", 5)


def test_cli_writes_a_playable_average_and_never_overwrites_unasked(tmp_path, capsys):
    for it in (50, 100, 150):
        _save(tmp_path / "run" / "checkpoints" / f"iter_{it:04d}.pt", seed=it, iteration=it)
    out = tmp_path / "avg.pt"
    assert main(["average", str(tmp_path / "run"), "--last", "2", "--out", str(out)]) == 0
    assert "the mean of 2 l1h8 checkpoints of hex-4" in capsys.readouterr().out
    saved = load_checkpoint(out)
    assert [s["iteration"] for s in saved.meta["averaged_from"]] == [100, 150]
    env = VecEnv(parse_game("hex-4"))
    result = play_match(env, make_player(f"{out}:sims=2", env, 0), make_player("random", env, 1), 2, seed=0,
                        progress=False)
    assert result.games == 2 and sum(result.wins) == 2 and all(n >= 7 for n in result.lengths)  # hex-4: 4+3 at least

    before = out.read_bytes()
    assert main(["average", str(tmp_path / "run"), "--last", "2", "--out", str(out)]) == 2
    assert "exists: choose another --out, or add --force" in capsys.readouterr().err
    assert out.read_bytes() == before
    assert main(["average", str(tmp_path / "run"), "--last", "3", "--out", str(out), "--force"]) == 0
    assert len(load_checkpoint(out).meta["averaged_from"]) == 3


@pytest.mark.parametrize("argv, message", [
    (["missing.pt", "--out", "x.pt"], "missing.pt does not exist"),
    (["{a}", "--out", "x.txt"], "must end in .pt"),
    (["{a}", "--out", "{a}"], "is one of the inputs"),
    (["{run}", "--last", "0", "--out", "x.pt"], "--last must be from 1 to 10000, not 0"),
    (["{run}", "--last", "9", "--out", "x.pt"], "fewer than the 9 asked for"),
    (["{a}", "{b}", "--out", "x.pt"], "only checkpoints of one game"),
])
def test_cli_errors_are_one_line(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    a, b = _save(tmp_path / "a.pt", seed=1), _save(tmp_path / "b.pt", seed=2, game="hex-5")
    _save(tmp_path / "run" / "checkpoints" / "iter_0050.pt", seed=3)
    argv = [x.format(a=a, b=b, run=tmp_path / "run") for x in argv]
    assert main(["average", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("conhex-zero average: error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "x.pt").exists()

"""Commands and the checkpoints they are given: the game a model was trained on is the default game
(with a warning when a model plays another), missing files are named as such, and broken checkpoints
give one clear line (exit code 2) in every command that loads one."""

from __future__ import annotations

import io
import json
import sys

import pytest
import torch

from conhex_zero.agents.players import PlayerSpecError, make_player
from conhex_zero.cli.main import main
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import save_checkpoint
from conhex_zero.nn.encode import NUM_FEATURES
from conhex_zero.nn.model import GraphNet, ModelConfig
from conhex_zero.play.checkpoints import choose_game, looks_like_path, player_checkpoint, same_game
from conhex_zero.play.gtp_engine import GTPEngine
from conhex_zero.play.server import GameServer


def _model():
    torch.manual_seed(0)
    return GraphNet(ModelConfig(1, 8), NUM_FEATURES)


@pytest.fixture
def hex4(tmp_path):
    return str(save_checkpoint(tmp_path / "hex4.pt", _model(), "hex-4"))


@pytest.fixture
def hex3(tmp_path):
    return str(save_checkpoint(tmp_path / "hex3.pt", _model(), "hex-3"))


def run(monkeypatch, capsys, argv, stdin=""):
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ the checkpoint's game
def test_player_specs_and_their_checkpoints():
    assert player_checkpoint("random") is None and player_checkpoint("mcts-rollout:8") is None
    assert player_checkpoint("gtp:mohex") is None
    assert player_checkpoint("policy:a/b.pt") == "a/b.pt" and player_checkpoint("x.pt:sims=4") == "x.pt"
    assert looks_like_path("checkpoints/nope") and looks_like_path("nope.pt") and looks_like_path("nope:sims=3")
    assert not looks_like_path("nonsense") and not looks_like_path("random")
    assert same_game("hex-5", "hex-5:random=1") and not same_game("hex-5", "hex-5:swap")
    assert choose_game(None, ["random", "mcts-rollout:8"]) == ("conhex", [])
    assert choose_game("hex-7", ["random"]) == ("hex-7", [])


def test_play_takes_the_checkpoint_game_and_warns_about_another(monkeypatch, capsys, hex4):
    code, out, err = run(monkeypatch, capsys, ["play", f"{hex4}:sims=2"], "quit\n")
    assert code == 0 and out.startswith("hex-4 (swap off): you are X") and err == ""
    code, out, err = run(monkeypatch, capsys, ["play", f"{hex4}:sims=2", "--game", "hex-3"], "quit\n")
    assert code == 0 and out.startswith("hex-3 (swap off)")
    assert err == f"conhex-zero play: warning: {hex4} was trained on hex-4, not hex-3: expect weak play\n"
    code, out, err = run(monkeypatch, capsys, ["play", f"{hex4}:sims=2", "--game", "hex-4:random=1"], "quit\n")
    assert code == 0 and err == ""  # random opening pieces do not make another game
    code, out, err = run(monkeypatch, capsys, ["play", "random"], "quit\n")
    assert code == 0 and out.startswith("conhex (swap on)") and err == ""  # no checkpoint: conhex


def test_gtp_takes_the_checkpoint_game_and_warns_on_boardsize(monkeypatch, capsys, hex4):
    code, out, err = run(monkeypatch, capsys, ["gtp", f"{hex4}:sims=2"], "all_legal_moves\nquit\n")
    assert code == 0 and err == "" and len(out.split("\n")[0].split()) == 1 + 16  # '=' and hex-4's 16 holes
    warnings = []
    engine = GTPEngine(f"{hex4}:sims=2", "hex-4", warn=warnings.append)
    try:
        for line in ("boardsize 4", "boardsize 3", "boardsize 3", "boardsize 4", "boardsize 3"):
            assert engine.handle(line) == "= \n\n"
    finally:
        engine.close()
    assert warnings == [f"{hex4} was trained on hex-4, not hex-3: expect weak play"]


def test_serve_page_warns_once_about_another_game(hex4):
    warnings = []
    game = GameServer(f"{hex4}:sims=2", "hex-4", warn=warnings.append)
    try:
        game.new_game({"game": "hex-3"})
        game.new_game({"game": "hex-4"})
        game.new_game({"game": "hex-3"})
    finally:
        game.close()
    assert warnings == [f"{hex4} was trained on hex-4, not hex-3: expect weak play"]


def test_serve_takes_the_checkpoint_game(monkeypatch, capsys, hex4):
    from conhex_zero.play.server import PlayServer

    def stop(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(PlayServer, "serve_forever", stop)
    code, out, err = run(monkeypatch, capsys, ["serve", f"{hex4}:sims=2", "--port", "0"])
    assert code == 0 and "conhex-zero serve: hex-4 against" in out and err == ""


def test_arena_game_from_the_checkpoints(monkeypatch, capsys, tmp_path, hex4, hex3):
    records = str(tmp_path / "r.jsonl")
    code, out, err = run(monkeypatch, capsys, ["arena", "random", f"{hex4}:sims=2", "--games", "2", "--json",
                                               "--records", records])
    assert code == 0 and json.loads(out)["game"] == "hex-4" and err == ""
    code, out, err = run(monkeypatch, capsys, ["arena", "random", "random", "--games", "2", "--json",
                                               "--records", records])
    assert code == 0 and json.loads(out)["game"] == "conhex"  # no checkpoint: conhex
    code, out, err = run(monkeypatch, capsys, ["arena", f"{hex4}:sims=2", f"{hex3}:sims=2", "--games", "2"])
    assert code == 2 and "trained on hex-4 and" in err and "on hex-3: choose the game with --game" in err
    assert len(err.strip().splitlines()) == 1
    code, out, err = run(monkeypatch, capsys, ["arena", f"{hex4}:sims=2", f"{hex3}:sims=2", "--games", "2",
                                               "--game", "hex-3", "--json", "--records", records])
    assert code == 0 and json.loads(out)["game"] == "hex-3"
    assert err == f"conhex-zero arena: warning: {hex4} was trained on hex-4, not hex-3: expect weak play\n"


# ------------------------------------------------------------------ missing checkpoints
@pytest.mark.parametrize("spec, path", [("checkpoints/nope.pt", "checkpoints/nope.pt"), ("nope.pt", "nope.pt"),
                                        ("runs/r/best", "runs/r/best"), ("nope.pt:sims=8", "nope.pt"),
                                        ("nope:sims=8", "nope"), ("policy:nope.pt", "nope.pt")])
def test_a_missing_checkpoint_is_named_as_such(monkeypatch, capsys, spec, path):
    message = f"no checkpoint file at {path}"
    for argv in (["play", spec], ["arena", spec, "random", "--games", "2"], ["gtp", spec],
                 ["serve", spec, "--port", "0"]):
        code, out, err = run(monkeypatch, capsys, argv)
        assert code == 2 and message in err and "unknown player" not in err, argv
        assert len(err.strip().splitlines()) == 1
    with pytest.raises((PlayerSpecError, ValueError), match=message):
        make_player(spec, VecEnv("hex-3"))


def test_an_unknown_player_name_is_still_a_syntax_error(monkeypatch, capsys):
    for argv in (["play", "nonsense"], ["arena", "random", "nonsense"], ["gtp", "nonsense"]):
        code, out, err = run(monkeypatch, capsys, argv)
        assert code == 2 and "unknown player 'nonsense'" in err

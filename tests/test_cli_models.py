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

HEX_OTHER_SIZE = "it plays every Hex board, but only a match says how well"


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
    assert err == f"conhex-zero play: warning: {hex4} was trained on hex-4, not hex-3: {HEX_OTHER_SIZE}\n"
    code, out, err = run(monkeypatch, capsys, ["play", f"{hex4}:sims=2", "--game", "conhex"], "quit\n")
    assert code == 0 and err == f"conhex-zero play: warning: {hex4} was trained on hex-4, not conhex: expect weak play\n"
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
    assert warnings == [f"{hex4} was trained on hex-4, not hex-3: {HEX_OTHER_SIZE}"]


def test_serve_page_warns_once_about_another_game(hex4):
    warnings = []
    game = GameServer(f"{hex4}:sims=2", "hex-4", warn=warnings.append)
    try:
        game.new_game({"game": "hex-3"})
        game.new_game({"game": "hex-4"})
        game.new_game({"game": "hex-3"})
    finally:
        game.close()
    assert warnings == [f"{hex4} was trained on hex-4, not hex-3: {HEX_OTHER_SIZE}"]


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
                                               "--records", str(tmp_path / "r2.jsonl")])
    assert code == 0 and json.loads(out)["game"] == "conhex"  # no checkpoint: conhex
    code, out, err = run(monkeypatch, capsys, ["arena", f"{hex4}:sims=2", f"{hex3}:sims=2", "--games", "2"])
    assert code == 2 and "trained on hex-4 and" in err and "on hex-3: choose the game with --game" in err
    assert len(err.strip().splitlines()) == 1
    code, out, err = run(monkeypatch, capsys, ["arena", f"{hex4}:sims=2", f"{hex3}:sims=2", "--games", "2",
                                               "--game", "hex-3", "--json", "--records", str(tmp_path / "r3.jsonl")])
    assert code == 0 and json.loads(out)["game"] == "hex-3"
    assert err == f"conhex-zero arena: warning: {hex4} was trained on hex-4, not hex-3: {HEX_OTHER_SIZE}\n"


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


# ------------------------------------------------------------------ broken checkpoints
def _tweak(path, tmp_path, name, change):
    data = torch.load(path, weights_only=True)
    change(data)
    out = tmp_path / name
    torch.save(data, out)
    return str(out)


class Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.marker}",))


def _broken(tmp_path, good):
    """(file, words its one-line error must contain) for broken checkpoints of every kind."""
    from conhex_zero.nn.checkpoint import FORMAT, SCHEMA_VERSION

    other = save_checkpoint(tmp_path / "l2h16.pt", GraphNet(ModelConfig(2, 16), NUM_FEATURES), "hex-4")
    cases = [
        (_tweak(good, tmp_path, "size.pt", lambda d: d["model"].update(hidden=16)), "do not fit the l1h16 model"),
        (_tweak(other, tmp_path, "other.pt", lambda d: d["model"].update(layers=1, hidden=8)), "do not fit"),
        (_tweak(good, tmp_path, "no-weights.pt", lambda d: d.pop("state_dict")), "has no weights"),
        (_tweak(good, tmp_path, "no-layers.pt", lambda d: d["model"].pop("layers")), "no 'layers'"),
        (_tweak(good, tmp_path, "str-layers.pt", lambda d: d["model"].update(layers="four")), "'layers' is 'four'"),
        (_tweak(good, tmp_path, "huge.pt", lambda d: d["model"].update(layers=900, hidden=60000)), "holds only"),
        (_tweak(good, tmp_path, "no-model.pt", lambda d: d.pop("model")), "no model description"),
        (_tweak(good, tmp_path, "list.pt", lambda d: d.update(state_dict=[1, 2])), "not a table of named tensors"),
        (_tweak(good, tmp_path, "ints.pt", lambda d: d.update(state_dict={"a": 1})), "not a table of named tensors"),
        (_tweak(good, tmp_path, "meta.pt", lambda d: d.update(meta=5)), "'meta' is not a table"),
        (_tweak(good, tmp_path, "game.pt", lambda d: d.update(game=7)), "'game' is 7"),
        (_tweak(good, tmp_path, "schema.pt", lambda d: d.update(schema=99)), "schema 99"),
    ]
    (tmp_path / "garbage.pt").write_bytes(bytes(range(256)) * 8)
    (tmp_path / "text.pt").write_text("just some text\n")
    (tmp_path / "empty.pt").write_bytes(b"")
    (tmp_path / "cut.pt").write_bytes(open(good, "rb").read()[:300])
    torch.save({"format": FORMAT, "schema": SCHEMA_VERSION, "x": Evil(tmp_path / "pwned")}, tmp_path / "evil.pt")
    cases += [(str(tmp_path / n), "not a conhex-zero checkpoint (unreadable: ")
              for n in ("garbage.pt", "text.pt", "empty.pt", "cut.pt")]
    cases.append((str(tmp_path / "evil.pt"), "refused since loading them could run code"))
    return cases


def _unknown_game(tmp_path, good):
    """A checkpoint of a game this version does not know: an error where its game would be played."""
    return _tweak(good, tmp_path, "unknown-game.pt", lambda d: d.update(game="hex-99")), "'hex-99'"


def test_broken_checkpoints_raise_checkpoint_errors(tmp_path, hex4):
    from conhex_zero.nn.checkpoint import CheckpointError, load_checkpoint

    for path, words in _broken(tmp_path, hex4):
        with pytest.raises(CheckpointError) as err:
            load_checkpoint(path)
            raise AssertionError(f"{path} loaded")
        message = str(err.value)
        assert words in message, (path, message)
        assert "\n" not in message and "weights_only" not in message and len(message) < 400
    assert not (tmp_path / "pwned").exists()  # the malicious pickle never ran


@pytest.mark.parametrize("command", ["play", "serve", "gtp", "arena", "openings", "report", "replay"])
def test_every_command_turns_a_broken_checkpoint_into_one_line(monkeypatch, capsys, tmp_path, hex4, command):
    cases = _broken(tmp_path, hex4) + ([] if command == "replay" else [_unknown_game(tmp_path, hex4)])
    for path, words in cases:
        argv = {"play": ["play", path], "serve": ["serve", path, "--port", "0"], "gtp": ["gtp", path],
                "arena": ["arena", "random", path, "--games", "2"], "openings": ["openings", path, "--quiet"],
                "report": ["report", path, "--quiet", "--out", str(tmp_path / "report")],
                "replay": ["replay", "hex-4", "b2", "--analyse", path]}[command]
        code, out, err = run(monkeypatch, capsys, argv, "quit\n")
        assert code == 2, (argv, out, err)
        assert "Traceback" not in err and "weights_only" not in err and len(err.strip().splitlines()) == 1, err
        assert err.startswith(f"conhex-zero {command}: error: ") and words in err, err
    assert not (tmp_path / "pwned").exists()

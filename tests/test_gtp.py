"""External engines over GTP: a scripted fake engine works, a misbehaving one forfeits, never hangs."""

import re
import sys
import time
from pathlib import Path

import pytest

from conhex_zero.agents.arena import play_match
from conhex_zero.agents.gtp_player import GTPPlayer, short_name
from conhex_zero.agents.players import make_player
from conhex_zero.env.vec_env import VecEnv

FAKE = Path(__file__).parent / "fake_gtp.py"


def engine(env, mode, timeout=1.0):
    return GTPPlayer(env, f"{sys.executable} {FAKE} {mode}", name=f"fake-{mode}", timeout=timeout, parallel=2)


def test_a_scripted_engine_plays_whole_games():
    env = VecEnv("hex-5")
    gtp = engine(env, "good")
    try:
        r = play_match(env, gtp, make_player("random", env, 1), 6, seed=0, progress=False, opening_plies=1)
    finally:
        gtp.close()
    assert sum(r.wins) == 6 and r.forfeits == 0
    for rec in r.records:
        assert rec.result == "connection" and len(rec.moves) >= 9


def test_gtp_via_player_name_and_the_arena_command(capsys, tmp_path):
    from conhex_zero.cli.main import main

    code = main(["arena", f"gtp:{sys.executable} {FAKE} good", "random", "--game", "hex-4", "--games", "4",
                 "--json", "--records", str(tmp_path / "r.jsonl")])
    assert code == 0 and '"forfeits": 0' in capsys.readouterr().out


@pytest.mark.parametrize("mode, reason", [
    ("illegal", "illegal move"), ("garbage", "garbage reply"), ("silent", "no reply within 1 s"),
    ("crash", "the engine exited (code 3)"), ("error", "error reply to 'genmove"), ("resign", "resigned"),
])
def test_a_misbehaving_engine_forfeits_with_a_clear_reason(mode, reason):
    env = VecEnv("hex-4")
    gtp = engine(env, mode)
    start = time.monotonic()
    try:
        r = play_match(env, gtp, make_player("random", env, 1), 4, seed=0, progress=False, opening_plies=1)
    finally:
        gtp.close()
    assert time.monotonic() - start < 20  # timeouts end games; nothing hangs
    assert r.wins == [0, 4] and r.forfeits == 4
    assert all(reason in rec.result and rec.result.startswith("forfeit: fake-") for rec in r.records)


def test_an_engine_that_cannot_start():
    env = VecEnv("hex-4")
    gtp = GTPPlayer(env, "/nonexistent/engine --flag", name="ghost", timeout=1)
    r = play_match(env, gtp, make_player("random", env, 1), 2, seed=0, progress=False)
    assert r.forfeits == 2 and "cannot start" in r.records[0].result


def test_each_game_keeps_one_engine_and_a_named_engine_keeps_its_name(capsys, tmp_path, monkeypatch):
    from conhex_zero.cli.main import main

    log = tmp_path / "engine.log"
    monkeypatch.setenv("FAKE_GTP_LOG", str(log))
    records = tmp_path / "r.jsonl"
    code = main(["arena", f"gtp@fake:{sys.executable} {FAKE} good", "random", "--game", "hex-4", "--games", "6",
                 "--gtp-parallel", "2", "--records", str(records), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0 and "gtp@fake" in out and str(FAKE) not in out
    lines = log.read_text().splitlines()
    # One clear_board per game: each game is played from start to end by one engine process, which
    # is told only the new moves (the opening and each reply), never the whole game again.
    assert sum(line.startswith("clear_board") for line in lines) == 6
    import json

    games = [json.loads(line) for line in records.read_text().splitlines()]
    assert len(games) == 6 and all("gtp@fake" in (g["first"], g["second"]) for g in games)
    plays = sum(line.startswith("play") for line in lines)
    told = sum(len(g["moves"]) - sum(1 for i in range(len(g["moves"])) if g["first"] == "gtp@fake" and i % 2 == 0
                                     and i >= g["opening"]) for g in games)
    assert plays <= told  # never more moves than the games' moves the engine did not choose itself


def test_an_unnamed_engine_is_named_after_its_program():
    """``gtp:PROGRAM``, with a hash of the whole command when it has arguments: the same program run
    with other settings is another player (in records and the ladder)."""
    env = VecEnv("hex-4")
    gtp = make_player(f"gtp:{sys.executable} {FAKE} good", env)
    try:
        assert re.fullmatch(rf"gtp:{re.escape(Path(sys.executable).name)}~[0-9a-f]{{6}}", gtp.name)
    finally:
        gtp.close()
    assert short_name("mohex") == "gtp:mohex"
    assert short_name("mohex --seed 1") == short_name("mohex   --seed  1")  # the words, not the spacing
    assert short_name("mohex --seed 1") != short_name("mohex --seed 2")
    assert short_name("mohex --seed 1").startswith("gtp:mohex~")


def test_an_engine_slow_to_start_gets_its_startup_allowance(monkeypatch):
    """Starting a program (importing a large library on a busy machine) may take far longer than a
    move: the first reply gets ``startup`` seconds, every later one ``timeout``."""
    monkeypatch.setenv("FAKE_GTP_STARTUP", "1.5")
    env = VecEnv("hex-3")
    slow_start = GTPPlayer(env, f"{sys.executable} {FAKE} good", name="slow", timeout=0.5, parallel=1, startup=20)
    try:
        r = play_match(env, slow_start, make_player("random", env, 1), 2, seed=0, progress=False)
    finally:
        slow_start.close()
    assert r.forfeits == 0
    impatient = GTPPlayer(env, f"{sys.executable} {FAKE} good", name="impatient", timeout=0.5, parallel=1, startup=0.5)
    try:
        r = play_match(env, impatient, make_player("random", env, 1), 2, seed=0, progress=False)
    finally:
        impatient.close()
    assert r.forfeits >= 1
    assert "no reply within 0.5 s of starting (--gtp-startup)" in next(rec.result for rec in r.records
                                                                         if rec.result.startswith("forfeit"))

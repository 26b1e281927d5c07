"""Hostile or damaged input is a one-line error, at once: JSON nested a thousand levels deep, YAML
nested thousands, integers of thousands of digits, SGF of hundreds of thousands of nodes, game specs
and player names with absurd numbers, random openings that cannot fit."""

from __future__ import annotations

import gc
import json
import time
import urllib.error
import urllib.request

import pytest

from conhex_zero.agents.players import PlayerSpecError, make_player
from conhex_zero.cli.main import main
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.files.jsonl import JsonlError, read_jsonl
from conhex_zero.files.untrusted import MAX_DEPTH, UntrustedTextError, load_yaml, loads_json, nesting_depth
from conhex_zero.games.game import GameSpecError, parse_game
from conhex_zero.ladder.store import Ladder
from conhex_zero.records import RecordError, parse_records
from conhex_zero.records.sgf import MAX_CHARS, SgfSyntaxError, parse_sgf
from conhex_zero.train.config import ConfigError
from conhex_zero.train.config_load import load_config, read_yaml_mapping

DEEP_JSON = "[" * 1000 + "]" * 1000
RECORD = {"game": "hex-3", "moves": ["a1"], "first": "a", "second": "b", "winner": None, "result": "unfinished"}


def one_line_error(capsys, argv: list[str]) -> str:
    capsys.readouterr()
    assert main(argv) == 2, argv
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


@pytest.mark.parametrize("text, reason", [
    (DEEP_JSON, "nested more than"),
    ('{"a": ' + "[" * 150 + "]" * 150 + "}", "nested more than"),
    ('{"index": ' + "9" * 5000 + "}", "5000 digits is too large"),
    ('{"index": 99999999999999999999}', "20 digits is too large"),
    ('{"x": NaN}', "NaN is not a JSON number"),
    ('{"x": 1e999}', "too large"),
])
def test_json_beyond_the_bounds_is_a_decode_error(text, reason):
    with pytest.raises(json.JSONDecodeError, match=reason):
        loads_json(text)


def test_json_within_the_bounds_loads_as_usual():
    nested = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert nesting_depth(loads_json(nested)) == MAX_DEPTH
    assert loads_json('{"a": [1, 2.5, {"b": null}], "n": -9223372036854775807}') == \
        {"a": [1, 2.5, {"b": None}], "n": -9223372036854775807}


@pytest.mark.parametrize("text", ["a:\n" + "  " * 0 + "- " * 3000 + "x", "[" * 5000, "{a: " * 4000,
                                  "seed: " + "9" * 5000, "game: [hex-3"])
def test_yaml_beyond_the_bounds_is_one_line(text):
    with pytest.raises(UntrustedTextError) as info:
        load_yaml(text)
    assert "\n" not in str(info.value)


def test_yaml_aliases_are_measured_once():
    text = "a: &a [1, 2]\n" + "".join(f"b{i}: &b{i} [*{'a' if i == 0 else f'b{i - 1}'}, *{'a' if i == 0 else f'b{i - 1}'}]\n"
                                      for i in range(40))
    assert nesting_depth(load_yaml(text)) == 42  # the mapping, 40 lists of lists, [1, 2]: 2**40 paths


def test_deep_or_huge_config_files_are_one_line_errors(tmp_path, capsys):
    deep = tmp_path / "deep.yaml"
    deep.write_text("selfplay:\n  games: " + "[" * 4000 + "]" * 4000 + "\n")
    with pytest.raises(ConfigError, match="nested more than"):
        read_yaml_mapping(deep)
    big = tmp_path / "big.yaml"
    big.write_text("seed: " + "9" * 5000 + "\n")
    assert "thousands of digits" in one_line_error(capsys, ["train", "--config", str(big), "--quiet"])
    assert "nested more than" in one_line_error(capsys, ["train", "--config", str(deep), "--quiet"])
    with pytest.raises(ConfigError, match="whole number"):
        load_config(None, ["seed=" + "9" * 5000])


def test_deep_json_lines_name_the_file_and_line(tmp_path, capsys):
    metrics = tmp_path / "metrics.jsonl"
    metrics.write_text('{"iteration": 1}\n{"iteration": ' + DEEP_JSON + "}\n")
    with pytest.raises(JsonlError, match=r"metrics.jsonl:2: not a JSON object \(lists or objects nested"):
        read_jsonl(metrics)
    (tmp_path / "ladder.jsonl").write_text('{"type": "player", "name": ' + DEEP_JSON + "}\n")
    with pytest.raises(JsonlError, match="ladder.jsonl:1"):
        Ladder.open(tmp_path)
    assert "metrics.jsonl:2" in one_line_error(capsys, ["curve", str(tmp_path)])
    assert "ladder.jsonl:1" in one_line_error(capsys, ["ladder", str(tmp_path)])


def test_deep_or_huge_records_are_record_errors(tmp_path, capsys):
    for value in (DEEP_JSON, "9" * 5000):
        text = json.dumps(RECORD)[:-1] + ', "index": ' + value + "}\n"
        with pytest.raises(RecordError, match="line 1"):
            parse_records(text, "games.jsonl")
        path = tmp_path / "games.jsonl"
        path.write_text(text)
        assert "games.jsonl: line 1" in one_line_error(capsys, ["replay", "--record", str(path)])


def test_sgf_sizes_with_thousands_of_digits_are_record_errors():
    for size in ("9" * 5000, "99999"):
        with pytest.raises(RecordError, match="not a board size"):
            parse_records(f"(;FF[4]GM[11]SZ[{size}];B[a1])", "game.sgf")
    assert parse_records("(;FF[4]GM[11]SZ[" + "0" * 5000 + "5];B[a1])", "game.sgf")[0].game == "hex-5:swap"


def cpu_seconds(work, repeats: int = 3) -> float:
    """The least CPU time of this process over ``repeats`` runs of ``work``, with the garbage
    collector paused (its passes over many new objects are not the parser's cost): other
    processes' load does not count, so the verdict does not depend on the machine being quiet."""
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            work()
            best = min(best, time.process_time() - start)
        finally:
            gc.enable()
    return best


def test_sgf_parsing_takes_linear_time():
    def parse(n: int):
        text = "(;FF[4]GM[11]SZ[5]" + "\n;B[a1]" * n + ")"

        def work():
            game, = parse_sgf(text)
            assert len(game.nodes) == n + 1 and game.nodes[-1].line == n + 1
        return work

    small, large = cpu_seconds(parse(10_000)), cpu_seconds(parse(80_000))
    # 8 times the nodes: about 8 times the time (a quadratic parser takes 64 times)
    assert large < 4.0 and large < 8 * max(small, 0.005) * 3, (small, large)


def test_sgf_beyond_the_size_limit_is_refused_at_once():
    text = "(;FF[4]GM[11]SZ[5]" + ";B[a1]" * (MAX_CHARS // 6) + ")"

    def refuse():
        with pytest.raises(SgfSyntaxError, match="more than the 4,000,000"):
            parse_sgf(text)
        with pytest.raises(RecordError, match="more than the 4,000,000"):
            parse_records(text, "huge.sgf")
    assert cpu_seconds(refuse, repeats=1) < 1.0


@pytest.mark.parametrize("spec, reason", [
    ("hex-" + "9" * 5000, "a number of 5000 digits"),
    ("hex-99999999999999999999", "a number of 20 digits"),
    ("hex-5:mirror=" + "9" * 5000, "too large"),
    ("hex-5:mirror=99999999999999999999", "too large"),
    ("hex-5:mirror=14", "at most mirror=13"),
    ("hex-5:forbid=" + "9" * 5000, "too large"),
    ("hex-5:random=12", "at most random=8"),
    ("hex-19:random=180", "at most random=120"),
    ("x" * 5000, "unknown game"),
])
def test_absurd_game_specs_are_one_line_errors(spec, reason):
    start = time.process_time()
    with pytest.raises(GameSpecError, match=reason) as info:
        parse_game(spec)
    assert len(str(info.value)) < 300 and time.process_time() - start < 1.0


def test_the_largest_random_openings_are_placed_quickly_and_leave_the_game_open():
    for spec in ("hex-5:random=8", "hex-19:random=120", "conhex:random=23"):
        env = VecEnv(spec)
        start = time.process_time()
        state = env.reset(8)
        assert not bool(state.done.any()) and int(state.ply[0]) == env.game.opening_plies
        assert time.process_time() - start < 10.0


@pytest.mark.parametrize("spec", ["mcts-rollout:99999999999999999999", "mcts-rollout:" + "9" * 5000,
                                  "mcts-rollout:100001", "best.pt:sims=" + "9" * 5000, "best.pt:sims=99999999999999999999"])
def test_absurd_simulation_counts_are_player_errors(spec):
    with pytest.raises(PlayerSpecError, match="at most 100000 simulations"):
        make_player(spec, VecEnv("hex-3"))


def test_absurd_numbers_on_the_command_line_are_one_line_errors(capsys):
    one_line_error(capsys, ["rules", "hex-" + "9" * 5000])
    one_line_error(capsys, ["rules", "hex-5:mirror=99999999999999999999"])
    one_line_error(capsys, ["arena", "random", "mcts-rollout:99999999999999999999", "--game", "hex-3", "--games", "2"])


def test_serve_answers_400_to_deeply_nested_bodies():
    from conhex_zero.play.server import GameServer, PlayServer, start_in_thread

    server = PlayServer(GameServer("random", "hex-3", 0), "127.0.0.1", 0)
    start_in_thread(server)
    try:
        for body in (b'{"move": ' + DEEP_JSON.encode() + b"}", b'{"move": ' + b"9" * 5000 + b"}"):
            req = urllib.request.Request(server.url.rstrip("/") + "/api/play", data=body, method="POST")
            req.add_header("Content-Type", "application/json")
            with pytest.raises(urllib.error.HTTPError) as info:
                urllib.request.urlopen(req, timeout=30)
            assert info.value.code == 400
            assert json.loads(info.value.read())["error"].startswith("the request body is not valid JSON")
    finally:
        server.shutdown()
        server.server_close()
        server.game.close()

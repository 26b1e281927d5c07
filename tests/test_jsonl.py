"""JSON-lines files: a torn last line (a kill during a write) is skipped with a warning and repaired
by the next append, so runs resume; a bad line elsewhere is an error naming the file and line."""

from __future__ import annotations

import json

import pytest

from conhex_zero.cli.main import main
from conhex_zero.files.jsonl import JsonlError, append_jsonl, read_jsonl
from conhex_zero.ladder.store import Ladder
from conhex_zero.train.run_dir import RunDir

GOOD = '{"iteration": 1, "loss": 0.5}\n{"iteration": 2, "loss": 0.4}\n'


def test_a_torn_last_line_is_skipped_with_a_warning(tmp_path, capsys):
    path = tmp_path / "metrics.jsonl"
    path.write_text(GOOD + '{"iteration": 3, "lo')  # killed in the middle of a write
    assert read_jsonl(path) == [{"iteration": 1, "loss": 0.5}, {"iteration": 2, "loss": 0.4}]
    err = capsys.readouterr().err
    assert err == f"conhex-zero: warning: {path}:3: skipped an unfinished last line (a write was interrupted)\n"
    path.write_bytes(GOOD.encode() + '{"name": "caf\u00e9'.encode()[:-1])  # torn inside a UTF-8 character
    assert len(read_jsonl(path)) == 2 and "skipped an unfinished last line" in capsys.readouterr().err
    # A complete last object without its newline is kept; so is a file ending in blank lines.
    path.write_text(GOOD + '{"iteration": 3}')
    assert read_jsonl(path)[-1] == {"iteration": 3} and capsys.readouterr().err == ""
    path.write_text(GOOD + "\n  \n")
    assert len(read_jsonl(path)) == 2 and capsys.readouterr().err == ""


def test_appending_after_a_torn_line_drops_it(tmp_path, capsys):
    path = tmp_path / "ladder.jsonl"
    path.write_text(GOOD + '{"iteration": 3, "lo')
    append_jsonl(path, [{"iteration": 3, "loss": 0.3}])
    assert "dropped an unfinished last line" in capsys.readouterr().err
    assert path.read_text() == GOOD + '{"iteration": 3, "loss": 0.3}\n'
    assert [e["iteration"] for e in read_jsonl(path)] == [1, 2, 3] and capsys.readouterr().err == ""
    path.write_text(GOOD + '{"iteration": 3}')  # complete, only the newline missing: kept
    append_jsonl(path, [{"iteration": 4}])
    assert [e["iteration"] for e in read_jsonl(path)] == [1, 2, 3, 4] and capsys.readouterr().err == ""


@pytest.mark.parametrize("bad, line, why", [
    ("garbage\n", 2, "not a JSON object (Expecting value"),
    ('{"iteration": 2\n', 2, "not a JSON object (Expecting ',' delimiter"),
    ("[1, 2]\n", 2, "a JSON list, not an object"),
    ("7\n", 2, "a JSON int, not an object"),
])
def test_a_bad_line_elsewhere_names_the_file_and_line(tmp_path, bad, line, why):
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"iteration": 1}\n' + bad + '{"iteration": 3}\n')
    with pytest.raises(JsonlError) as err:
        read_jsonl(path)
    assert str(err.value).startswith(f"{path}:{line}: {why}") and "fix or delete that line" in str(err.value)
    path.write_text('{"iteration": 1}\n' + bad)  # a bad last line that is complete (newline) is damage too
    with pytest.raises(JsonlError, match=f":{line}: "):
        read_jsonl(path)
    path.write_bytes(b'{"iteration": 1}\n\xff\xfe\n')
    with pytest.raises(JsonlError, match=":2: not a JSON object .bytes that are not UTF-8"):
        read_jsonl(path)


def test_a_run_and_a_ladder_resume_after_a_torn_write(tmp_path, capsys):
    run = RunDir(tmp_path / "run")
    run.create()
    run.metrics_file.write_text(GOOD + '{"iteration": 3, "lo')
    assert [r["iteration"] for r in run.read_metrics()] == [1, 2]
    run.truncate_metrics(2)  # what a resume does
    assert run.metrics_file.read_text() == GOOD
    run.log({"iteration": 3, "loss": 0.3}, 3)
    run.close()
    assert [r["iteration"] for r in run.read_metrics()] == [1, 2, 3]

    ladder = Ladder.open(tmp_path)
    ladder.add_player("random", "reference")
    ladder.add_match("a", "random", {"player1": [3, 2], "player2": [1, 0]}, "hex-5")
    with open(ladder.path, "a") as f:
        f.write('{"type": "result", "first": "a", "sec')
    assert len(Ladder.open(tmp_path).results) == 2
    Ladder.open(tmp_path).add_match("a", "random", {"player1": [1, 1], "player2": [1, 1]}, "hex-5")
    assert len(Ladder.open(tmp_path).results) == 4
    capsys.readouterr()
    assert main(["ladder", str(tmp_path), "--json", "--png", str(tmp_path / "l.png")]) == 0
    assert json.loads(capsys.readouterr().out)["anchor"] == "random"


def test_commands_name_a_bad_line(tmp_path, capsys):
    (tmp_path / "ladder.jsonl").write_text('{"type": "player", "name": "random", "kind": "reference"}\n'
                                           "garbage\n")
    assert main(["ladder", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "ladder.jsonl:2: not a JSON object" in err and len(err.strip().splitlines()) == 1
    (tmp_path / "ladder.jsonl").write_text('{"type": "result", "first": "a", "second": "b", "first_wins": "x", '
                                           '"second_wins": 1}\n')
    assert main(["ladder", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "ladder.jsonl:1: not a ladder entry (bad or missing field" in err and "Traceback" not in err
    (tmp_path / "ladder.jsonl").write_text('{"type": "result", "first": "a", "second_wins": 1}\n')
    assert main(["ladder", str(tmp_path)]) == 2
    assert "ladder.jsonl:1: not a ladder entry (bad or missing field 'second')" in capsys.readouterr().err
    (tmp_path / "metrics.jsonl").write_text('{"iteration": 1}\n{oops}\n{"iteration": 3}\n')
    assert main(["curve", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "metrics.jsonl:2: not a JSON object" in err and len(err.strip().splitlines()) == 1

"""Broken and mutated records: every mutation of an arena record (wrong types, missing fields, bad
moves, broken JSON) and of real SGF files gives a clean ``RecordError`` naming the field and line, or a
valid record, never a traceback."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from conhex_zero.agents.arena import play_match
from conhex_zero.agents.players import make_player
from conhex_zero.cli.main import main
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.records import GameRecordData, RecordError, check_record, parse_records, write_sgf

FIXTURES = Path(__file__).parent / "fixtures" / "records"
FIELDS = ("index", "game", "seed", "first", "second", "moves", "opening", "winner", "winner_name", "result")
VALUES = [None, True, False, 0, 1, 2, -1, 1.5, 1e300, "", "x", "zero", "1", "hex-99", "conhex", "a1", "swap",
          "x" * 5000, [], [1], ["a1"], ["zz"], [None], {}, {"a": 1}, [["a1"]]]


@pytest.fixture(scope="module")
def arena_lines():
    env = VecEnv("hex-4")
    r = play_match(env, make_player("random", env, 0), make_player("random", env, 1), 4, seed=0, progress=False,
                   opening_plies=1)
    from dataclasses import asdict

    return [asdict(rec) for rec in r.records]


def _parse(text: str) -> list[GameRecordData] | None:
    """The records, or None for a RecordError; anything else fails the test."""
    try:
        records = parse_records(text, "games.jsonl")
    except RecordError as err:
        message = str(err)
        assert "\n" not in message and len(message) < 500, message
        return None
    for record in records:
        write_sgf(record)  # a valid record can be written too
        check_record(record)
    return records


@pytest.mark.parametrize("key, value, message", [
    ("winner", "zero", "games.jsonl: line 1: field 'winner' is \"zero\", expected 0 (the first player), 1"),
    ("winner", 2, "field 'winner' is 2, expected 0"),
    ("winner", True, "field 'winner' is true, expected 0"),
    ("index", "x", "games.jsonl: line 1: field 'index' is \"x\", expected a whole number, 0 or more"),
    ("index", 1.5, "field 'index' is 1.5"),
    ("moves", "a1 b2", "field 'moves' is \"a1 b2\", expected a list of move names"),
    ("moves", [1, 2], "field 'moves' is [1, 2], expected a list of move names"),
    ("game", "hex-99", "field 'game' is \"hex-99\", not a game spec"),
    ("game", 5, "field 'game' is 5, expected a string"),
    ("first", None, "field 'first' is null, expected a string"),
    ("result", ["connection"], "field 'result' is [\"connection\"], expected a string"),
    ("winner_name", 0, "field 'winner_name' is 0, expected a string"),
    ("moves", ["a1"] * 40, "field 'moves' has 40 moves, more than a hex-4 game can have"),
])
def test_a_wrong_field_names_the_field_and_line(arena_lines, tmp_path, capsys, key, value, message):
    rec = dict(arena_lines[0], **{key: value})
    with pytest.raises(RecordError) as err:
        parse_records(json.dumps(rec) + "\n", "games.jsonl")
    assert message in str(err.value)
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    assert main(["replay", "--record", str(path)]) == 2
    err = capsys.readouterr().err
    assert message.replace("games.jsonl", str(path)) in err and len(err.strip().splitlines()) == 1


def test_fuzzed_arena_records_give_record_errors_or_valid_records(arena_lines):
    rng = random.Random(1234)
    valid = errors = 0
    for trial in range(600):
        lines = [dict(rec) for rec in arena_lines]
        rec = rng.choice(lines)
        kind = rng.randrange(6)
        if kind == 0:
            rec[rng.choice(FIELDS)] = rng.choice(VALUES)
        elif kind == 1:
            rec.pop(rng.choice(FIELDS), None)
        elif kind == 2:
            moves = list(rec["moves"])
            if moves:
                moves[rng.randrange(len(moves))] = rng.choice(["a1", "d4", "swap", "e5", "", "A1", " b2", "zz9"])
            rec["moves"] = moves
        elif kind == 3:
            moves = list(rec["moves"])
            rng.shuffle(moves)
            rec["moves"] = moves[:rng.randrange(len(moves) + 1)]
        elif kind == 4:
            rec["winner"] = 1 - rec["winner"]
        text = "".join(json.dumps(r) + "\n" for r in lines)
        if kind == 5:  # damage the text itself
            for _ in range(rng.randrange(1, 4)):
                i = rng.randrange(len(text))
                text = text[:i] + rng.choice(['"', "{", "}", ",", ":", "[", "]", "\n", "x", "1", ""]) + text[i + 1:]
        if _parse(text) is None:
            errors += 1
        else:
            valid += 1
    assert errors > 100 and valid > 50  # both kinds of outcome are exercised


def test_fuzzed_sgf_files_give_record_errors_or_valid_records():
    rng = random.Random(99)
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(FIXTURES.iterdir())
             if p.suffix in (".sgf", ".hsgf")]
    outcomes = {"valid": 0, "error": 0}
    for trial in range(500):
        text = rng.choice(texts)
        for _ in range(rng.randrange(1, 4)):
            if not text:
                break
            i = rng.randrange(len(text))
            how = rng.randrange(4)
            if how == 0:
                text = text[:i] + text[i + 1:]
            elif how == 1:
                text = text[:i] + rng.choice("()[];\\BWRSZ:0123456789abkswap+") + text[i:]
            elif how == 2:
                j = rng.randrange(len(text))
                text = text[:i] + text[j:j + 8] + text[i:]
            else:
                text = text[:i]
        if not text.strip():
            continue
        outcomes["error" if _parse(text) is None else "valid"] += 1
    assert outcomes["error"] > 50 and outcomes["valid"] > 20


@pytest.mark.parametrize("text", ["(" * 5000 + ";GM[11]SZ[3];B[a1]" + ")" * 5000,
                                  "(;GM[11]SZ[3]" + "(;B[a1]" * 3000 + ")" * 3001,
                                  "(;GM[11]SZ[3];B[a1];W[" + "x" * 100000 + "])"])
def test_deep_or_huge_sgf_gives_a_record_error_or_a_record(text):
    _parse(text)

"""Every numeric option of every command is bounded (``cli/numbers.py``): huge values, negatives,
nan and inf, and empty list items are one-line errors before any work (issue 43, item 3)."""

from __future__ import annotations

import argparse

import pytest

from conhex_zero.cli.main import build_parser, main
from conhex_zero.cli.numbers import Real, Whole, Wholes, is_bounded

OTHERS: set[str] = set()
"""Commands whose options are swept elsewhere (none)."""


def _parsers(parser: argparse.ArgumentParser, prog: str = "conhex-zero"):
    """(name, parser) of every command and subcommand."""
    yield prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{prog} {name}")


def test_every_numeric_option_has_bounds():
    unbounded = []
    for prog, parser in _parsers(build_parser()):
        if prog.split()[1:2] and prog.split()[1] in OTHERS:
            continue
        for action in parser._actions:
            numeric = action.type in (int, float) or (isinstance(action.default, (int, float)) and
                                                     not isinstance(action.default, bool) and action.nargs != 0)
            if numeric and not is_bounded(action.type):
                unbounded.append(f"{prog} {action.option_strings}")
    assert unbounded == []


@pytest.mark.parametrize("kind, text, value", [
    (Whole(1, 100), " 12 ", 12), (Whole(0, 10, even=True), "4", 4), (Real(0.0, 1.0), "0.5", 0.5),
    (Real(0.0, 10.0, above=True), "1e-3", 0.001), (Wholes(1, 100), "8,16", [8, 16]), (Wholes(0, 5), "0", [0]),
])
def test_bounded_numbers_read_what_they_should(kind, text, value):
    assert kind(text) == value


@pytest.mark.parametrize("kind, text, words", [
    (Whole(1, 100), "99999999999999999999", "must be from 1 to 100, not 99999999999999999999"),
    (Whole(1, 100), "9" * 5000, "must be from 1 to 100, not 999999999999999999999..."),
    (Whole(1, 100), "1e20", "must be a whole number from 1 to 100, not '1e20'"),
    (Whole(1, 100), "-5", "must be from 1 to 100, not -5"),
    (Whole(1, 100), "", "must be a whole number"),
    (Whole(0, 10, even=True), "3", "must be an even number from 0 to 10"),
    (Real(0.0, 1.0), "nan", "must be a number from 0 to 1, not nan"),
    (Real(0.0, 1.0), "inf", "not inf"), (Real(0.0, 1.0), "-inf", "not -inf"), (Real(0.0, 1.0), "1.5", "not 1.5"),
    (Real(0.0, 9.0, above=True, what="a number of seconds"), "0", "must be a positive number of seconds, at most 9"),
    (Wholes(1, 100), "8,,16", "without empty items, not '8,,16'"), (Wholes(1, 100), "8,", "without empty items"),
    (Wholes(1, 100), ",", "without empty items"), (Wholes(1, 100), "8,0", "must each be from 1 to 100, not 0"),
    (Wholes(1, 100), ",".join(["1"] * 65), "at most 64"),
])
def test_bounded_numbers_refuse_what_they_should(kind, text, words):
    with pytest.raises(argparse.ArgumentTypeError) as err:
        kind(text)
    assert words in str(err.value)


HUGE = "99999999999999999999"
CKPT = "checkpoints/hex5-l4h64.pt"


@pytest.mark.parametrize("argv, message", [
    (["openings", CKPT, "--sims", HUGE], f"--sims must be from 1 to 100000, not {HUGE}"),
    (["openings", CKPT, "--sims", "1099511627776"], "--sims must be from 1 to 100000, not 1099511627776"),
    (["openings", CKPT, "--sims", "8,,16"], "--sims must be N or N,N,... (e.g. 200,800,3200) without empty items"),
    (["openings", CKPT, "--sims", "-5"], "--sims must be from 1 to 100000, not -5"),
    (["openings", CKPT, "--repeats", HUGE], f"--repeats must be from 1 to 1000, not {HUGE}"),
    (["openings", CKPT, "--check-games", "1e20"], "--check-games must be an even number from 0 to 10000, not '1e20'"),
    (["openings", CKPT, "--check-games", "3"], "--check-games must be an even number from 0 to 10000"),
    (["openings", CKPT, "--check-count", "0"], "--check-count must be from 1 to 1000, not 0"),
    (["openings", CKPT, "--compare-sims", "-1"], "--compare-sims must be from 0 to 100000, not -1"),
    (["report", CKPT, "--opening-sims", "8,,16"], "--opening-sims must be N or N,N,..."),
    (["report", CKPT, "--games", HUGE], f"--games must be from 1 to 10000, not {HUGE}"),
    (["report", CKPT, "--random-games", "-1"], "--random-games must be from 0 to 100000, not -1"),
    (["serve", "random", "--temperature", "nan"], "--temperature must be a number from 0 to 100, not nan"),
    (["serve", "random", "--port", "8765000"], "--port must be from 0 to 65535, not 8765000"),
    (["serve", "random", "--top", "51"], "--top must be from 0 to 50, not 51"),
    (["play", "random", "--seconds", "inf"], "--seconds must be a positive number of seconds, at most 86400, not inf"),
    (["play", "random", "--temperature=-inf"], "--temperature must be a number from 0 to 100, not -inf"),
    (["gtp", "random", "--resign", "nan"], "--resign must be a number from 0 to 1, not nan"),
    (["gtp", "random", "--seed", "-1"], "--seed must be from 0 to 9223372036854775807, not -1"),
    (["arena", "random", "random", "--gtp-parallel", "0"], "--gtp-parallel must be from 1 to 256, not 0"),
    (["arena", "random", "random", "--opening-plies", "-1"], "--opening-plies must be from 0 to 400, not -1"),
    (["arena", "random", "random", "--gtp-startup", "nan"], "--gtp-startup must be a positive number of seconds"),
    (["replay", "--record", "x.jsonl", "--index", "-1"], "--index must be from 0 to 1000000000, not -1"),
    (["replay", "hex-3", "--mistakes", HUGE], "--mistakes must be from 0 to 1000"),
    (["bench", "search", "--sims", "0"], "--sims must be from 1 to 100000, not 0"),
    (["bench", "net", "--batch", HUGE], "--batch must be from 1 to 16384"),
    (["bench", "env", "--seconds", "nan"], "--seconds must be a positive number of seconds"),
    (["average", CKPT, "--out", "x.pt", "--last", "-4"], "--last must be from 1 to 10000, not -4"),
    (["train", "--stop-after", "0"], "--stop-after must be from 1 to 1000000000, not 0"),
    (["train", "--threads", HUGE], "--threads must be from 0 to 4096"),
    (["play", "random", "--threads", "-1"], "--threads must be from 0 to 4096, not -1"),
    (["arena", "random", "random", "--sims", "x"], "--sims must be a whole number from 1 to 100000, not 'x'"),
])
def test_bad_numbers_are_one_line_before_any_work(capsys, argv, message):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    command = " ".join(argv[:2] if argv[0] == "bench" else argv[:1])
    assert err.startswith(f"conhex-zero {command}: error: {message}"), err
    assert len(err.strip().splitlines()) == 1 and "usage:" not in err


def test_other_parser_errors_are_one_line_too(capsys):
    assert main(["arena", "random", "random", "--gamez", "4"]) == 2
    err = capsys.readouterr().err
    assert err == "conhex-zero: error: unrecognized arguments: --gamez 4\n"
    assert main(["play", "random", "--as", "third"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("conhex-zero play: error: argument --as: invalid choice: 'third'") and err.count("\n") == 1

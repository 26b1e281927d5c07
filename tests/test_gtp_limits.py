"""The GTP engine against absurd input: time settings that would overflow the clock arithmetic and
lines too long to hold (refused, skipped in pieces, the protocol kept in step)."""

import io
import re
import sys

import pytest

from conhex_zero.cli.main import main
from conhex_zero.play.gtp_engine import GTPEngine


@pytest.mark.parametrize("bad", ["time_settings 1e308 0 0", "time_settings 0 1e308 1", "time_settings 1 1 99999999",
                                 "time_settings 10000001 0 0", "time_settings 1 1 " + "9" * 5000,
                                 "time_left b 1e308 0", "time_left w 5 10000000", "time_settings nan 0 0"])
def test_absurd_time_settings_are_refused_and_genmove_still_works(bad):
    e = GTPEngine("mcts-rollout:16", game="hex-4")
    assert e.handle("time_settings 1 0 0") == "= \n\n"  # about 0.1 s a move
    answer = e.handle(bad)
    assert answer.startswith("? syntax error: ") and len(answer) < 200, answer
    assert e.time_settings == (1.0, 0.0, 0)  # nothing changed
    for colour in "bw":
        assert re.fullmatch(r"= [a-d][1-4]\n\n", e.handle(f"genmove {colour}"))
    # The largest allowed clocks give finite thinking times (searching them would take days).
    assert e.handle("time_settings 10000000 0 0") == "= \n\n"
    assert 0.05 <= e._think_seconds(0) < 10_000_000
    assert e.handle("time_left w 10000000 1000000") == "= \n\n"
    assert abs(e._think_seconds(1) - 0.8 * 10) < 1e-9


def test_huge_lines_are_refused_without_being_held_whole():
    from conhex_zero.play.gtp_engine import MAX_LINE, read_lines

    data = (b"1 name\n" + b"2 play b " + b"x" * (5 * MAX_LINE) + b"\n" + b"3 name\n" + b"y" * (MAX_LINE - 1) + b"\n"
            + b"4 name\n" + b"5 " + "é".encode() * MAX_LINE + b"\n" + b"6 name")
    lines = list(read_lines(io.BytesIO(data)))
    assert all(len(text) <= MAX_LINE for text, _ in lines)  # never more than the limit at once
    assert [too_long for _, too_long in lines] == [False, True, False, False, False, True, False]
    e = GTPEngine("random", game="hex-3")
    answers = [e.too_long(text) if too_long else e.handle(text) for text, too_long in lines]
    assert answers == ["=1 conhex-zero\n\n", f"?2 line too long (more than {MAX_LINE} bytes)\n\n",
                       "=3 conhex-zero\n\n", "? unknown command\n\n", "=4 conhex-zero\n\n",
                       f"?5 line too long (more than {MAX_LINE} bytes)\n\n", "=6 conhex-zero\n\n"]
    assert e.handle("play b " + "z" * 100000).startswith("? line too long")
    answer = e.handle("play b " + "z" * 60000)
    assert answer.startswith("? invalid move: 'zzzzz") and "..." in answer and len(answer) < 300


def test_the_command_answers_a_huge_line_and_goes_on(monkeypatch, capsys):
    data = b"1 name\n2 " + b"q" * (200 * 1024) + b"\n3 play b b2\n4 genmove w\n5 quit\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["gtp", "random", "--game", "hex-3"]) == 0
    responses = capsys.readouterr().out.split("\n\n")[:-1]
    assert responses[:3] == ["=1 conhex-zero", "?2 line too long (more than 65536 bytes)", "=3 "]
    assert re.fullmatch(r"=4 [abc][123]", responses[3]) and responses[4] == "=5 "

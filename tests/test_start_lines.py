"""Self-play from start lines (issue 56): games play the file's lines first, forced positions get no
value target, a bad file is a one-line error, and a book's unsure positions become such a file."""

from __future__ import annotations

import pytest
import torch

from conhex_zero.env.vec_env import VecEnv
from conhex_zero.games.game import parse_game
from conhex_zero.train.config import ConfigError
from conhex_zero.train.config_load import load_config
from conhex_zero.train.replay import ReplayBuffer
from conhex_zero.train.selfplay import SelfPlay
from conhex_zero.train.start_lines import StartLinesError, read_start_lines
from tests.test_train import TINY, FavoursFirstHole


def play(tmp_path, lines: str, overrides: list[str], positions: int = 900, seed: int = 5):
    path = tmp_path / "starts.txt"
    path.write_text(lines)
    env = VecEnv("hex-4")
    cfg = load_config(TINY, ["game=hex-4", "selfplay.full_fraction=1", "selfplay.temperature_moves=0",
                             f"selfplay.start_lines={path}"] + overrides).selfplay
    replay = ReplayBuffer(env, 5000)
    stats = SelfPlay(env, cfg, FavoursFirstHole(env), seed=seed).run(replay, positions)
    return env, replay, stats


def positions_at(replay, ply: int) -> torch.Tensor:
    n = len(replay)
    return replay.store["holes"][:n][replay.store["ply"][:n] == ply]  # [P, H]


def test_every_game_plays_its_line_first(tmp_path):
    # b2 (hole 5) then c3 (hole 10): the search alone would always open on a1, its favoured hole.
    env, replay, stats = play(tmp_path, "# a comment\n\nb2 c3  # after the moves, a comment\n",
                              ["selfplay.start_fraction=1"])
    assert stats.games >= 20
    after_two = positions_at(replay, 2)
    assert len(after_two) >= 20
    assert (after_two[:, 5] == 0).all() and (after_two[:, 10] == 1).all()  # first player b2, second c3
    assert ((after_two >= 0).sum(1) == 2).all()


def test_start_fraction_shares_the_games(tmp_path):
    env, replay, stats = play(tmp_path, "b2\n", ["selfplay.start_fraction=0.5"], positions=2000)
    first = positions_at(replay, 1)
    on_line = (first[:, 5] == 0).float().mean().item()  # b2
    search = (first[:, 0] == 0).float().mean().item()  # a1, the search's favourite
    assert 0.3 < on_line < 0.7 and on_line + search == pytest.approx(1.0), (on_line, search)


def test_positions_on_the_line_get_no_value_target(tmp_path):
    env, replay, stats = play(tmp_path, "b2 c3 a4\n", ["selfplay.start_fraction=1"])
    n = len(replay)
    ply, ready = replay.store["ply"][:n].long(), replay.ready[:n]
    assert (ply < 3).sum() > 30 and (ply >= 3).sum() > 30
    assert not ready[ply < 3].any()  # positions whose next move the line forced
    assert ready[ply >= 3].float().mean() > 0.8


def test_lines_of_different_lengths_are_drawn(tmp_path):
    env, replay, stats = play(tmp_path, "b2\nc3 b2\n", ["selfplay.start_fraction=1"], positions=1500)
    first = positions_at(replay, 1)
    b2, c3 = (first[:, 5] == 0).sum().item(), (first[:, 10] == 0).sum().item()
    assert b2 > 5 and c3 > 5 and b2 + c3 == len(first)
    second = positions_at(replay, 2)
    after_c3 = second[second[:, 10] == 0]
    assert (after_c3[:, 5] == 1).all()  # the second line's reply b2


@pytest.mark.parametrize("text, words", [
    ("", "holds no line"),
    ("b2 b2\n", "line 1: move 2 (b2) is not legal"),
    ("a1\nz9\n", "line 2: move 1 (z9)"),
    ("a1 b1 a2 b2 a3 b3 a4\n", "the game is over"),
    ("a1 b1 a2 b2 a3 b3 a4 c4\n", "line 1: move 8 (c4) is not legal"),
])
def test_a_bad_file_is_a_one_line_error(tmp_path, text, words):
    path = tmp_path / "starts.txt"
    path.write_text(text)
    with pytest.raises(StartLinesError, match=words.replace("(", r"\(").replace(")", r"\)")):
        read_start_lines(path, parse_game("hex-4"))


def test_the_config_refuses_a_missing_or_bad_file(tmp_path):
    with pytest.raises(ConfigError, match="selfplay.start_lines: no start-lines file"):
        load_config(TINY, ["game=hex-4", f"selfplay.start_lines={tmp_path / 'none.txt'}"])
    (tmp_path / "bad.txt").write_text("e5\n")
    with pytest.raises(ConfigError, match="selfplay.start_lines: bad.txt, line 1"):
        load_config(TINY, ["game=hex-4", f"selfplay.start_lines={tmp_path / 'bad.txt'}"])
    with pytest.raises(ConfigError, match="selfplay.start_fraction"):
        load_config(TINY, ["game=hex-4", "selfplay.start_fraction=1.5"])


def test_book_starts_writes_the_unsure_positions(tmp_path, capsys):
    from conhex_zero.book.folder import open_book
    from conhex_zero.cli.main import main

    book = "checkpoints/books/hex5-l4h64"
    out = tmp_path / "starts.txt"
    assert main(["book", "starts", book, "--out", str(out), "--max-plies", "3"]) == 0
    assert "wrote 10 lines (3 moves at most)" in capsys.readouterr().out
    game = parse_game("hex-5")
    lines = read_start_lines(out, game)  # the file the training key reads
    opened = open_book(book)
    env = VecEnv(game)
    from conhex_zero.book.keys import Canonical

    canon = Canonical(env)
    keys = set()
    for line in lines:
        state = env.reset(1)
        for a in line:
            state = env.step(state, torch.tensor([a]))
        node = opened.book.nodes[canon.keys(state).keys[0]]  # every line reaches a book position
        assert 1 <= len(line) <= 3 and not node.proven and abs(node.value) < 0.3
        keys.add(node.key)
    unsure = [n for n in opened.book.nodes.values()
              if 1 <= len(n.line) <= 3 and not n.proven and abs(n.value) < 0.3]
    assert keys == {n.key for n in unsure}  # and every such position has its line


def test_book_starts_says_when_nothing_is_unsure(tmp_path, capsys):
    from conhex_zero.cli.main import main

    code = main(["book", "starts", "checkpoints/books/hex5-l4h64", "--out", str(tmp_path / "s.txt"),
                 "--max-plies", "1"])
    assert code != 0 and "no unproven position within 0.3 of even at most 1 move from" in capsys.readouterr().err
    assert not (tmp_path / "s.txt").exists()


def test_no_one_resigns_on_the_line(tmp_path):
    from tests.test_train import Hopeless

    path = tmp_path / "starts.txt"
    path.write_text("b2 c3 a4\n")
    env = VecEnv("hex-5")
    cfg = load_config(TINY, ["game=hex-5", "selfplay.resign_playout=0", "selfplay.temperature_moves=0",
                             "selfplay.resign_threshold=0.5", f"selfplay.start_lines={path}",
                             "selfplay.start_fraction=1"]).selfplay
    stats = SelfPlay(env, cfg, Hopeless(env), seed=0).run(ReplayBuffer(env, 5000), 100)
    # Every move looks lost, so every game resigns at its first chance: right after the line.
    assert stats.games > 10 and stats.resigned == stats.games and stats.plies == 3 * stats.games

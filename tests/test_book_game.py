"""``book grow --game``: a book of another board of the family than the checkpoint was trained on
(a Hex 7x7 network plays Hex 8x8 as well as the 8x8 line's, docs/knowledge.md), kept to that game."""

from __future__ import annotations

from pathlib import Path

from conhex_zero.book.folder import open_book
from conhex_zero.cli.common import book_for_game
from conhex_zero.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
HEX4 = str(ROOT / "checkpoints" / "hex4-l3h32.pt")


def test_a_book_of_another_board_is_grown_with_game_and_kept_to_it(tmp_path, capsys):
    folder = tmp_path / "b"
    grow = ["book", "grow", HEX4, "--out", str(folder), "--sims", "8", "--quiet", "--no-exact"]
    assert main(grow + ["--game", "hex-3", "--nodes", "4"]) == 0
    out, err = capsys.readouterr()
    assert "a new book of hex-3" in out and "trained on hex-4, not hex-3" in err
    opened = open_book(folder)
    assert opened.game == "hex-3" and len(opened.book) >= 4
    assert book_for_game(str(folder), "hex-3") is None and "a book of hex-3" in book_for_game(str(folder), "hex-4")

    assert main(grow + ["--nodes", "2"]) == 2  # the checkpoint's own game is not the book's
    err = capsys.readouterr().err
    assert "is a book of hex-3, not of hex-4" in err and "--game hex-3" in err and len(err.strip().splitlines()) == 1
    assert len(open_book(folder).book) == len(opened.book)

    assert main(grow + ["--game", "hex-3", "--nodes", "2"]) == 0  # grown on, on its own board
    assert len(open_book(folder).book) > len(opened.book)


def test_a_bad_game_is_refused_in_one_line(tmp_path, capsys):
    folder = tmp_path / "b"
    assert main(["book", "grow", HEX4, "--out", str(folder), "--game", "hex-99", "--nodes", "2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "got 99" in err
    assert not folder.exists()

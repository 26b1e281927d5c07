"""``book prove --position``: book positions named by their moves (``book/named.py``), proved alone,
with the next best move at the position above where the named move fails; errors for bad lines.
A Hex 5x5 book grown with the 4x4 network, every result checked against the exact solver."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conhex_zero.analysis.native_solver import NativeHexSolver, NativeSolverUnavailable
from conhex_zero.analysis.solver import HexSolver
from conhex_zero.book.folder import open_book
from conhex_zero.book.keys import Canonical
from conhex_zero.book.named import named_positions
from conhex_zero.book.shared import solver_form
from conhex_zero.cli.main import main
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.games.hex import hex_board

ROOT = Path(__file__).resolve().parent.parent
HEX4 = str(ROOT / "checkpoints" / "hex4-l3h32.pt")


def _native_or_skip() -> None:
    try:
        NativeHexSolver(hex_board(5), table_bits=12)
    except NativeSolverUnavailable as err:  # no C compiler: the rest of the suite says so too
        pytest.skip(str(err))


@pytest.fixture(scope="module")
def hex5_book(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("named") / "b"
    assert main(["book", "grow", HEX4, "--game", "hex-5", "--out", str(folder), "--nodes", "60", "--sims", "8",
                 "--quiet", "--no-exact"]) == 0
    return folder


def _copy(folder: Path, tmp_path: Path) -> Path:
    import shutil

    return Path(shutil.copytree(folder, tmp_path / "copy"))


def _name(opened, line: list[int]) -> str:
    from conhex_zero.games.game import parse_game

    game = parse_game(opened.game)
    return " ".join(game.action_name(a) for a in line)


def test_a_line_and_its_images_name_the_books_node(hex5_book):
    """Every two-piece book position is found by its own line, by that line mirrored (a symmetry that
    keeps the colours) and with commas; the position above is the one-piece node its first move reaches."""
    opened = open_book(hex5_book)
    nodes = opened.book.nodes
    env = VecEnv(opened.game, "cpu")
    canon = Canonical(env)
    same_colours = [k for k in range(1, len(canon.tables)) if not canon.tables.exchanges[k]]
    assert same_colours  # Hex's half turn
    two = [k for k, n in nodes.items() if len(n.line) == 2]
    assert two
    for key in two:
        line = nodes[key].line
        mirrored = [int(canon.images[same_colours[0]][a]) for a in line]
        found = named_positions(opened, [_name(opened, line), ",".join(_name(opened, [a]) for a in mirrored)])
        assert [p.key for p in found] == [key]  # the same node, once
        assert found[0].above == next(k for k, n in nodes.items() if n.line == line[:1])


def test_bad_lines_are_clear_errors(hex5_book, capsys):
    opened = open_book(hex5_book)
    first = _name(opened, [next(n.line[0] for n in opened.book.nodes.values() if n.line)])
    with pytest.raises(ValueError, match=r"move 2 \(" + first + r"\)"):
        named_positions(opened, [f"{first} {first}"])  # the hole is taken
    with pytest.raises(ValueError, match="move 1 \\(z9\\)"):
        named_positions(opened, ["z9"])
    with pytest.raises(ValueError, match="empty line"):
        named_positions(opened, [" , "])
    deep = "a1 a2 a3 a4 b1 b2 b3"
    with pytest.raises(ValueError, match="does not hold this position"):
        named_positions(opened, [deep])
    assert main(["book", "prove", str(hex5_book), "--position", deep]) != 0
    err = capsys.readouterr().err
    assert "--position 'a1 a2 a3 a4 b1 b2 b3': the book does not hold" in err and "Traceback" not in err
    assert main(["book", "prove", str(hex5_book), "--position", first, "--depth", "1"]) != 0
    assert "not with --depth" in capsys.readouterr().err


def test_a_named_position_alone_is_proved_right(hex5_book, tmp_path, capsys):
    """--position: that position is the run's only candidate, proved within the budget, its result the exact
    solver's; named again, it is reported settled and nothing is searched."""
    _native_or_skip()
    folder = _copy(hex5_book, tmp_path)
    opened = open_book(folder)
    nodes = opened.book.nodes
    key = next(k for k, n in nodes.items() if len(n.line) == 2 and not (n.exact or n.proven))
    line = _name(opened, nodes[key].line)
    assert main(["book", "prove", str(folder), "--position", line, "--table-bits", "14", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "1 candidate for a proof (named by --position)" in out and "1 of 1 position proved" in out
    node = open_book(folder).book.nodes[key]
    truth = HexSolver(hex_board(5))
    wins = truth.mover_wins(*solver_form(key))
    assert node.exact and (node.exact > 0) == wins
    # a quick proof is said in a line of its own only where it is on the other side of the book's value
    book = 50 * (1 + nodes[key].value)
    against = (book > 50) != wins
    said = f"  {line}: proved, the player to move {'wins' if wins else 'loses'} (the book had {book:.1f}% for the mover: "
    assert (said in out) == against
    assert main(["book", "prove", str(folder), "--position", line, "--table-bits", "14", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"{line}: settled already" in out and "0 candidates for a proof" in out


def test_where_the_named_move_fails_the_next_best_is_tried(hex5_book, tmp_path):
    """--position with --next-best: a named position its mover wins (the move into it fails) is followed at
    once by the book's next best move at the position above it; every result the exact solver's."""
    _native_or_skip()
    from conhex_zero.book.prove import prove_book

    folder = _copy(hex5_book, tmp_path)
    opened = open_book(folder)
    nodes = opened.book.nodes
    truth = HexSolver(hex_board(5))
    failing = [(up, key) for up, node in nodes.items() if len(node.line) == 1 and len(node.children) >= 3
               and not (node.exact or node.proven)
               for key in node.children.values()
               if not (nodes[key].exact or nodes[key].proven) and truth.mover_wins(*solver_form(key))]
    assert failing
    up, key = failing[0]
    named = named_positions(opened, [_name(opened, nodes[key].line)])
    assert [(p.above, p.key) for p in named] == [(up, key)]
    searched, added = [], []
    solver = NativeHexSolver(hex_board(5), table_bits=14)
    solver.lib.hs_clear()
    report = prove_book(opened, solver, 100_000, named=[(up, key)], next_best=2,
                        on_position=lambda k, r, s: searched.append((k, r)), on_added=added.append)
    assert searched[0] == (key, 1)
    assert report.followed == len(added) == 1 and added[0] in nodes[up].children.values() and added[0] != key
    assert [k for k, _ in searched] == [key, added[0]]
    for k, node in open_book(folder).book.nodes.items():
        if node.exact or node.proven:
            assert ((node.exact or node.proven) > 0) == truth.mover_wins(*solver_form(k)), k
    # without --next-best the named position is the only one
    folder2 = _copy(hex5_book, tmp_path / "again")
    opened2 = open_book(folder2)
    solver.lib.hs_clear()
    report2 = prove_book(opened2, solver, 100_000, named=[(up, key)])
    assert report2.total_tried == 1 and report2.followed == 0


def test_list_prints_the_runs_positions_in_order_and_changes_nothing(hex5_book, capsys):
    """--list: the candidates a run would take, in its order (``candidate_pairs``), each by its moves and,
    with --doubts or --best-replies, the position whose best move it is; no search, no file touched."""
    from conhex_zero.book.prove import candidate_pairs
    from conhex_zero.cli.book_common import line_name

    before = {p.name: p.stat().st_mtime_ns for p in hex5_book.iterdir()}
    opened = open_book(hex5_book)
    pairs = candidate_pairs(opened, 2, False, None, True, True)
    assert pairs
    assert main(["book", "prove", str(hex5_book), "--depth", "2", "--best-replies", "--doubts", "--list"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if re.match(r"\s+\d+\. ", line)]
    assert len(rows) == len(pairs) and f"{len(pairs)} candidate" in out
    for row, (above, key) in zip(rows, pairs):
        assert row.split(". ", 1)[1].startswith(line_name(opened, key) + ":")
        assert f"at {line_name(opened, above)} (" in row
    assert {p.name: p.stat().st_mtime_ns for p in hex5_book.iterdir()} == before
    assert main(["book", "prove", str(hex5_book), "--list", "--copy-only", "--from", str(hex5_book)]) != 0
    assert "not with --copy-only" in capsys.readouterr().err


def test_list_with_from_shows_the_queue_after_the_copies(hex5_book, tmp_path, capsys):
    """--list --from SRC: a candidate SRC has solved is not listed (the run would copy it first), and
    neither book's files change."""
    from conhex_zero.book import store
    from conhex_zero.book.prove import candidate_pairs
    from conhex_zero.cli.book_common import line_name

    target = _copy(hex5_book, tmp_path / "target")
    source = _copy(hex5_book, tmp_path / "source")
    opened = open_book(target)
    pairs = candidate_pairs(opened, 2, False, None, True, True)
    assert len(pairs) >= 2
    _, key = pairs[0]
    wins = HexSolver(hex_board(5)).mover_wins(*solver_form(key))
    store.append(source, [store.exact_entry(key, 1 if wins else -1)])
    before = {p: p.stat().st_mtime_ns for folder in (target, source) for p in folder.iterdir()}
    args = ["book", "prove", str(target), "--depth", "2", "--best-replies", "--doubts", "--list"]
    assert main(args) == 0
    plain = capsys.readouterr().out
    assert main(args + ["--from", str(source)]) == 0
    out = capsys.readouterr().out
    name = line_name(opened, key)
    assert any(line.split(". ", 1)[1].startswith(name + ":") for line in plain.splitlines() if re.match(r"\s+\d+\. ", line))
    rows = [line for line in out.splitlines() if re.match(r"\s+\d+\. ", line)]
    assert rows and not any(line.split(". ", 1)[1].startswith(name + ":") for line in rows)
    assert "1 exact result to copy" in out and "nothing is copied now" in out
    assert {p: p.stat().st_mtime_ns for folder in (target, source) for p in folder.iterdir()} == before
    assert not open_book(target).book.nodes[key].exact


def test_a_run_says_each_search_that_took_a_while_as_it_settles(hex5_book, tmp_path, capsys, monkeypatch):
    """A search of at least SAID_SECONDS CPU seconds is said as it settles (--quiet too): what was proved,
    the book's value before the proof and which side it was on, and the CPU time."""
    _native_or_skip()
    from conhex_zero.cli import book_prove_cmd

    monkeypatch.setattr(book_prove_cmd, "SAID_SECONDS", 0.0)
    folder = _copy(hex5_book, tmp_path)
    opened = open_book(folder)
    nodes = opened.book.nodes
    key = next(k for k, n in nodes.items() if len(n.line) == 2 and not (n.exact or n.proven))
    line = _name(opened, nodes[key].line)
    book = 50 * (1 + nodes[key].value)
    wins = HexSolver(hex_board(5)).mover_wins(*solver_form(key))
    assert main(["book", "prove", str(folder), "--position", line, "--table-bits", "14", "--quiet"]) == 0
    out = capsys.readouterr().out
    side = "its side" if (book > 50) == wins else "the other side"
    said = [row for row in out.splitlines() if row.startswith(f"  {line}: ")]
    assert len(said) == 1, out
    assert said[0].startswith(f"  {line}: proved, the player to move {'wins' if wins else 'loses'} (the book had "
                              f"{book:.1f}% for the mover: {side}); ") and said[0].endswith(" this run")
    assert "CPU second" in said[0]
    from conhex_zero.book import store

    _, events = store.read_entries(folder)
    (record,) = [e["searches"] for e in events if e.get("type") == "prove"]  # the run's record keeps it
    assert record == [{"line": line, "result": 1 if wins else -1, "cpu_seconds": record[0]["cpu_seconds"],
                       "book_percent": round(book, 1)}] and record[0]["cpu_seconds"] >= 0

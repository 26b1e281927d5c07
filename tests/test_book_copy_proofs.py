"""``book prove --from``: exact results carried from one book of a game into another (a proof is the
position's, whatever book it was made in), refused where the two books' proofs disagree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conhex_zero.book import store
from conhex_zero.book.folder import new_book, open_book
from conhex_zero.book.shared import copy_exact
from conhex_zero.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
HEX4 = str(ROOT / "checkpoints" / "hex4-l3h32.pt")


@pytest.fixture(scope="module")
def two_books(tmp_path_factory):
    """Two Hex 4x4 books grown without the exact solver from different seeds; the first proved to
    depth 1. Returns their folders (tests copy them before changing anything)."""
    base = tmp_path_factory.mktemp("books")
    proved, plain = base / "proved", base / "plain"
    for folder, seed in ((proved, "1"), (plain, "2")):
        assert main(["book", "grow", HEX4, "--out", str(folder), "--nodes", "30", "--sims", "8", "--quiet",
                     "--no-exact", "--seed", seed]) == 0
    assert main(["book", "prove", str(proved), "--depth", "1", "--quiet", "--table-bits", "14"]) == 0
    return proved, plain


def copy_of(folder: Path, to: Path) -> Path:
    import shutil

    shutil.copytree(folder, to)
    return to


def exact_results(folder: Path) -> dict[str, int]:
    return {k: n.exact for k, n in open_book(folder).book.nodes.items() if n.exact}


def test_copy_only_carries_every_shared_proof_and_records_it(two_books, tmp_path, capsys):
    proved, plain = two_books
    target = copy_of(plain, tmp_path / "target")
    source_exact = exact_results(proved)
    shared = {k: r for k, r in source_exact.items() if k in open_book(target).book.nodes}
    assert len(shared) >= 8 and not exact_results(target)
    assert main(["book", "prove", str(target), "--from", str(proved), "--copy-only"]) == 0
    out = capsys.readouterr().out
    assert f"{len(shared)} exact results copied" in out
    assert exact_results(target) == shared
    # the openings the copies reach are decided by them in the table, on the proofs' side
    assert main(["book", "show", str(target), "--json", str(tmp_path / "t.json")]) == 0
    table = json.loads((tmp_path / "t.json").read_text())
    proven = [m for m in table["openings"] if m["proven"] in ("win", "loss")]
    assert len(proven) >= 8 and all(m["decided"] and (m["win_rate"] > 0.5) == (m["proven"] == "win") for m in proven)
    records = [json.loads(line) for line in (target / "book.jsonl").read_text().splitlines()]
    assert any(r.get("type") == "prove" and r.get("copied") == len(shared) and r.get("from") == [str(proved)]
               for r in records)
    # again: nothing new, everything agrees
    assert main(["book", "prove", str(target), "--from", str(proved), "--copy-only"]) == 0
    assert f"0 exact results to copy, {len(shared)} already here" in capsys.readouterr().out


def test_copied_positions_are_not_searched_again(two_books, tmp_path, capsys):
    proved, plain = two_books
    target = copy_of(plain, tmp_path / "target")
    assert main(["book", "prove", str(target), "--depth", "1", "--quiet", "--table-bits", "14"]) == 0
    alone = capsys.readouterr().out
    fresh = copy_of(plain, tmp_path / "fresh")
    assert main(["book", "prove", str(fresh), "--from", str(proved), "--depth", "1", "--quiet", "--table-bits", "14"]) == 0
    both = capsys.readouterr().out
    tried = [int(line.split(" candidate")[0].rsplit(" ", 1)[1]) for line in (alone, both)
             for line in line.splitlines() if "for a proof" in line]
    assert tried[1] < tried[0], (alone, both)
    assert exact_results(fresh) == exact_results(target)  # the same results, by copy or by search


def test_a_contradiction_is_refused_and_nothing_is_copied(two_books, tmp_path, capsys):
    proved, plain = two_books
    target = copy_of(plain, tmp_path / "target")
    source_exact = exact_results(proved)
    nodes = open_book(target).book.nodes
    key = next(k for k in sorted(source_exact) if k in nodes)
    store.append(target, [store.exact_entry(key, -source_exact[key])])  # a wrong proof in the target
    before = exact_results(target)
    found = copy_exact(open_book(proved), open_book(target))
    assert [c[0] for c in found.conflicts] == [key]
    assert main(["book", "prove", str(target), "--from", str(proved), "--copy-only"]) != 0
    err = capsys.readouterr().err
    assert "contradict" in err and key in err and "nothing copied" in err
    assert exact_results(target) == before


def test_bad_sources_are_clear_errors(two_books, tmp_path, capsys):
    proved, plain = two_books
    assert main(["book", "prove", str(plain), "--copy-only"]) != 0
    assert "--from" in capsys.readouterr().err
    assert main(["book", "prove", str(plain), "--from", str(plain), "--copy-only"]) != 0
    assert "the book being proved" in capsys.readouterr().err
    assert main(["book", "prove", str(plain), "--from", str(tmp_path / "none"), "--copy-only"]) != 0
    assert "--from " + str(tmp_path / "none") + ": no such book folder or saved search file" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["book", "prove", str(plain), "--from", str(tmp_path / "empty"), "--copy-only"]) != 0
    assert "empty is not a book" in capsys.readouterr().err
    other = tmp_path / "hex5"
    new_book(other, "hex-5", [], "start", "model.pt", "0", 8)
    assert main(["book", "prove", str(plain), "--from", str(other), "--copy-only"]) != 0
    assert "one game" in capsys.readouterr().err


HEX5 = str(ROOT / "checkpoints" / "hex5-l4h64.pt")
HEX6 = str(ROOT / "checkpoints" / "hex6-l4h64.pt")


def test_a_proof_run_writes_what_its_searches_settled_below_and_all_of_it_is_right(tmp_path, capsys):
    """Hex 5x5: proving the openings settles deeper book positions in the solver's table on the way;
    the run writes those too (harvest), and every exact result agrees with the pure solver."""
    from conhex_zero.analysis.solver import HexSolver
    from conhex_zero.book.shared import solver_form
    from conhex_zero.games.hex import hex_board

    folder = tmp_path / "b"
    assert main(["book", "grow", HEX5, "--out", str(folder), "--nodes", "60", "--sims", "8", "--quiet",
                 "--no-exact"]) == 0
    assert main(["book", "prove", str(folder), "--depth", "1", "--quiet", "--table-bits", "16"]) == 0
    out = capsys.readouterr().out
    nodes = open_book(folder).book.nodes
    deeper = {k: n.exact for k, n in nodes.items() if n.exact and n.pieces > 1}
    assert deeper and f"and {len(deeper)} other position" in out, out
    truth = HexSolver(hex_board(5))
    assert all((n.exact > 0) == truth.mover_wins(*solver_form(k)) for k, n in nodes.items() if n.exact)
    exact = sum(1 for n in nodes.values() if n.exact)
    assert main(["book", "show", str(folder), "--json", str(tmp_path / "t.json")]) == 0
    assert f"exact: {exact} positions of the book" in capsys.readouterr().out
    assert json.loads((tmp_path / "t.json").read_text())["exact_positions"] == exact


def test_a_saved_search_file_is_a_source_too(tmp_path, capsys):
    """--from FILE: a search cut short and saved (searches/*.xz) gives a Hex 6x6 book the positions its
    table solved, each as a fresh search finds it; a file that is not a saved search is a clear error."""
    from conhex_zero.analysis.native_solver import NativeHexSolver
    from conhex_zero.book import carried
    from conhex_zero.book.shared import solver_form
    from conhex_zero.games.hex import hex_board

    folder = tmp_path / "b"
    assert main(["book", "grow", HEX6, "--out", str(folder), "--nodes", "200", "--sims", "8", "--quiet",
                 "--no-exact"]) == 0
    book = open_book(folder).book
    solver = NativeHexSolver(hex_board(6), table_bits=16)
    # the search of the opening with the most book positions below it, saved as book prove saves one
    root = max((k for k, n in book.nodes.items() if n.pieces == 1), key=lambda k: (book.nodes[k].size, k))
    solver.lib.hs_clear()
    form = solver_form(root)
    assert solver.prove(*form, max_nodes=200_000) is not None
    saved = carried.save(tmp_path / "keep", carried.Carried(root, 1, solver.nodes, 1.0, solver.export_table(below=form)),
                         solver.size, solver.entry_bytes)
    assert main(["book", "prove", str(folder), "--from", str(saved), "--copy-only"]) == 0
    copied = int(capsys.readouterr().out.split(" exact result")[0].rsplit(" ", 1)[1])
    nodes = open_book(folder).book.nodes
    assert copied > 1 and sum(1 for n in nodes.values() if n.exact) == copied and nodes[root].exact
    fresh = NativeHexSolver(hex_board(6), table_bits=16)
    for key, node in nodes.items():
        if node.exact:
            fresh.lib.hs_clear()
            mine, theirs, mover = solver_form(key)
            result = fresh.prove(mine, theirs, mover, max_nodes=200_000)
            assert result is not None and result[0] == (node.exact > 0), key
    junk = tmp_path / "junk.gz"
    junk.write_bytes(b"not a search")
    assert main(["book", "prove", str(folder), "--from", str(junk), "--copy-only"]) != 0
    assert "not a saved search" in capsys.readouterr().err
    other = NativeHexSolver(hex_board(4), table_bits=12)
    with pytest.raises(ValueError, match="36 holes, not 16"):
        carried.read(saved, other.size, other.entry_bytes)

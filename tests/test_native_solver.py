"""The native Hex solver (``analysis/native_solver.py``, ``hexsolve.c``): H-search's connections on
hand-made positions, exact values against two independent solvers (the pure-Python one and the
brute-force one of tests/hex_solver.py), budgets, refusals, and ``book prove`` writing its proofs
into a book (the first-move table then decided by proofs, each right)."""

from __future__ import annotations

import json
import random
import re
import sys
import time
from pathlib import Path

import pytest

from conhex_zero.analysis.hex_openings import SOLVED_OPENINGS
from conhex_zero.analysis.native_solver import NativeHexSolver, NativeSolverUnavailable, build_library
from conhex_zero.analysis.solver import HexSolver, SolverError
from conhex_zero.book.folder import new_book, open_book
from conhex_zero.book.shared import solver_form
from conhex_zero.cli.main import main
from conhex_zero.games.game import parse_game
from conhex_zero.games.hex import hex_board

import hex_solver

ROOT = Path(__file__).resolve().parent.parent
HEX4 = str(ROOT / "checkpoints" / "hex4-l3h32.pt")


def bit(n: int, name: str) -> int:
    return 1 << ((int(name[1:]) - 1) * n + "abcdefgh".index(name[0]))


def random_positions(n: int, count: int, seed: int):
    """Positions of legal Hex games (alternate moves, first player first) that nobody has won yet."""
    rng = random.Random(seed)
    geometry = HexSolver(hex_board(n), max_holes=64, book=False)
    out = []
    while len(out) < count:
        cells = list(range(n * n))
        rng.shuffle(cells)
        k = rng.randint(0, n * n - 2)
        first = sum(1 << c for c in cells[:k:2][: (k + 1) // 2])
        second = sum(1 << c for c in cells[1:k:2])
        if geometry.connected(first, 0) or geometry.connected(second, 1):
            continue
        out.append((first, second, k % 2))
    return out


def test_h_search_finds_the_two_ziggurats_of_the_5x5_centre():
    """One stone on c3 of Hex 5x5 reaches both its sides by edge templates IIIa with disjoint
    carriers: a full connection, for either player; on 7x7 a stone on d3 is a semi connection."""
    solver = NativeHexSolver(hex_board(5), table_bits=12)
    for player in (0, 1):
        kind, carrier = solver.connection(bit(5, "c3"), 0, player)
        assert kind == 2 and not carrier & bit(5, "c3")
    # an opponent stone inside the upper template's carrier breaks it
    assert solver.connection(bit(5, "c3"), bit(5, "c2"), 0)[0] < 2
    solver7 = NativeHexSolver(hex_board(7), table_bits=12)
    assert solver7.connection(bit(7, "d3"), 0, 0)[0] == 1
    assert solver7.connection(0, 0, 0)[0] == 0  # the empty board: nothing yet


@pytest.mark.parametrize("n,count", [(3, 200), (4, 300), (5, 60)])
def test_values_agree_with_the_pure_solver_on_random_positions(n, count):
    native = NativeHexSolver(hex_board(n), table_bits=16)
    pure = HexSolver(hex_board(n), book=False)
    for first, second, to_move in random_positions(n, count, seed=n):
        assert native.winner(first, second, to_move) == pure.winner(first, second, to_move), (first, second, to_move)


def test_every_h_search_setting_gives_the_same_values():
    """Carriers between empty cells unlimited and smaller lists: other connections, other proof
    trees, the same values (the check benchmarks/verify_proofs.py makes on larger boards)."""
    wide = NativeHexSolver(hex_board(5), table_bits=16, cell_carriers=None, list_limits=(8, 12, 3))
    pure = HexSolver(hex_board(5), book=False)
    for first, second, to_move in random_positions(5, 40, seed=21):
        assert wide.winner(first, second, to_move) == pure.winner(first, second, to_move)


def test_and_over_the_sides_changes_no_value():
    """H-search combines connections over a side only when ``through_sides`` is set (off by default):
    both settings give the pure solver's values, and on 400 random 6x6 positions they find a
    connection between the sides on the same positions but for a few (at most 2%: the bounded lists
    keep other carriers), as many either way within 2%; a side's own connections shortcut any chain
    through it."""
    plain = NativeHexSolver(hex_board(5), table_bits=14)
    sides = NativeHexSolver(hex_board(5), table_bits=14, through_sides=True)
    pure = HexSolver(hex_board(5), book=False)
    for first, second, to_move in random_positions(5, 40, seed=23):
        truth = pure.winner(first, second, to_move)
        assert plain.winner(first, second, to_move) == truth and sides.winner(first, second, to_move) == truth
    plain6 = NativeHexSolver(hex_board(6), table_bits=12)
    sides6 = NativeHexSolver(hex_board(6), table_bits=12, through_sides=True)
    found = [0, 0]
    differ = 0
    for first, second, to_move in random_positions(6, 400, seed=24):
        mine, theirs = (first, second) if to_move == 0 else (second, first)
        a = plain6.connection(mine, theirs, to_move)[0] > 0
        b = sides6.connection(mine, theirs, to_move)[0] > 0
        found[0] += a
        found[1] += b
        differ += a != b
    assert found[1] > 100 and differ <= 8 and abs(found[0] - found[1]) <= 8, (found, differ)


def test_values_agree_with_the_pure_solver_on_many_5x5_positions():
    """The slow suite's larger sample: 600 more Hex 5x5 positions, both H-search settings."""
    pure = HexSolver(hex_board(5), book=False)
    for cells, seed in ((2, 31), (None, 32), (1, 33)):
        native = NativeHexSolver(hex_board(5), table_bits=18, cell_carriers=cells)
        for first, second, to_move in random_positions(5, 200, seed=seed):
            assert native.winner(first, second, to_move) == pure.winner(first, second, to_move), (cells, first, second)


def test_values_agree_with_brute_force_on_4x4():
    native = NativeHexSolver(hex_board(4), table_bits=16)
    brute = hex_solver.HexSolver(4)
    for first, second, to_move in random_positions(4, 150, seed=11):
        if to_move == 0:  # the brute-force solver takes the first player to move
            assert native.winner(first, second, 0) == (0 if brute.mover_wins(first, second) else 1)


def test_fill_in_keeps_every_value_by_an_independent_solver():
    """Inferior-cell fill-in (cells of no use to one player given to the other, captured pairs to
    their captor) changes no position's value: the pure solver, which knows nothing of fill-in,
    values each random 4x4 and 5x5 position and its filled twin the same; and fill-in does fill."""
    filled_some = 0
    for n, count in ((4, 300), (5, 40)):
        native = NativeHexSolver(hex_board(n), table_bits=14)
        pure = HexSolver(hex_board(n), book=False)
        for first, second, to_move in random_positions(n, count, seed=40 + n):
            mine, theirs = (first, second) if to_move == 0 else (second, first)
            a, b = native.fill(mine, theirs, to_move)
            assert a & mine == mine and b & theirs == theirs and not a & b
            f2, s2 = (a, b) if to_move == 0 else (b, a)
            filled_some += (a | b) != (mine | theirs)
            assert pure.winner(f2, s2, to_move) == pure.winner(first, second, to_move), (n, first, second, to_move)
    assert filled_some > 100


def test_proof_sets_hold_with_fill_in():
    """A proof set is what the search's pruning rests on: the winner still wins when the loser owns
    every other empty cell. With fill-in, the filled child's proof gets its winner's fills back;
    the pure solver judges each proof on random 4x4 and 5x5 positions."""
    for n, count in ((4, 200), (5, 40)):
        native = NativeHexSolver(hex_board(n), table_bits=14)
        pure = HexSolver(hex_board(n), book=False)
        full = (1 << (n * n)) - 1
        for first, second, to_move in random_positions(n, count, seed=90 + n):
            mine, theirs = (first, second) if to_move == 0 else (second, first)
            native.lib.hs_clear()  # each proof made afresh, not read from the table
            win, proof = native.prove(mine, theirs, to_move)
            empty = full & ~(first | second)
            assert not proof & ~empty
            winner = to_move if win else 1 - to_move
            rest = empty & ~proof
            f2, s2 = (first | rest, second) if winner == 1 else (first, second | rest)
            assert pure.winner(f2, s2, to_move) == winner, (n, first, second, to_move)


def positions_with_both_solvers(sizes_counts, seed: int):
    """(n, native, pure, first, second, to_move, mine, theirs) over random positions of each board size:
    the native solver and the pure one (which knows nothing of the pruning) side by side, the mover's
    stones and the opponent's spelled out."""
    for n, count in sizes_counts:
        native = NativeHexSolver(hex_board(n), table_bits=12)
        pure = HexSolver(hex_board(n), book=False)
        for first, second, to_move in random_positions(n, count, seed=seed + n):
            mine, theirs = (first, second) if to_move == 0 else (second, first)
            yield n, native, pure, first, second, to_move, mine, theirs


def test_vulnerable_moves_gain_nothing_by_an_independent_solver():
    """A vulnerable move x (of no use to the mover once the opponent holds its killer y) is left out
    of the search. The pure solver, which knows nothing of it, checks both facts the pruning rests on,
    on random 4x4 and 5x5 positions: after x and y the position has the value it has with the
    opponent's stone on x too, and the mover wins exactly when some move that is not vulnerable wins."""
    pairs = positions = 0
    for n, native, pure, first, second, to_move, mine, theirs in positions_with_both_solvers(((4, 300), (5, 40)), 60):

        def position(add_mine: int = 0, add_theirs: int = 0) -> tuple[int, int]:
            m, t = mine | add_mine, theirs | add_theirs
            return (m, t) if to_move == 0 else (t, m)

        vulnerable = native.vulnerable(mine, theirs, to_move)
        for x, y in vulnerable.items():
            assert y != x and (first | second) >> y & 1 == 0
            assert pure.winner(*position(1 << x, 1 << y), to_move) == pure.winner(*position(0, 1 << x | 1 << y), to_move)
            pairs += 1
        if vulnerable:
            empty = ((1 << n * n) - 1) & ~(first | second)
            others = [c for c in range(n * n) if empty >> c & 1 and c not in vulnerable]
            some_wins = any(pure.winner(*position(1 << c), 1 - to_move) == to_move for c in others)
            assert (pure.winner(first, second, to_move) == to_move) == some_wins, (n, first, second, to_move)
            positions += 1
    assert pairs > 1000 and positions > 300


def test_dominated_moves_gain_nothing_by_an_independent_solver():
    """A dominated move x (every node it links is its dominator y or linked by y) is left out of the
    search. The pure solver, which knows nothing of it, checks the facts the pruning rests on, on
    random 4x4 and 5x5 positions: whenever x wins, y wins; y is itself searched (neither vulnerable
    nor dominated); and the mover wins exactly when some move that is neither wins."""
    pairs = positions = 0
    for n, native, pure, first, second, to_move, mine, theirs in positions_with_both_solvers(((4, 300), (5, 60)), 70):

        def after(move: int) -> tuple[int, int]:
            return (first | 1 << move, second) if to_move == 0 else (first, second | 1 << move)

        def wins(move: int) -> bool:
            return pure.winner(*after(move), 1 - to_move) == to_move

        dominated = native.dominated(mine, theirs, to_move)
        vulnerable = native.vulnerable(mine, theirs, to_move)
        for x, y in dominated.items():
            assert y != x and (first | second) >> y & 1 == 0
            assert y not in dominated and y not in vulnerable and x not in vulnerable
            assert wins(y) or not wins(x), (n, first, second, to_move, x, y)
            pairs += 1
        if dominated:
            empty = ((1 << n * n) - 1) & ~(first | second)
            kept = [c for c in range(n * n) if empty >> c & 1 and c not in vulnerable and c not in dominated]
            assert (pure.winner(first, second, to_move) == to_move) == any(wins(c) for c in kept)
            positions += 1
    assert pairs > 150 and positions > 100, (pairs, positions)


def test_dominated_moves_on_a_hand_made_position():
    """Hex 4x4, the first player (joining the first and fourth rows) on a2, the second on d4. The
    corner a1 links the first row, b1 and the a2 stone; b1 links the first row and the a2 stone
    too (and a1, c1, b2): a1 is dominated by b1, and nothing else is; with the first player's stone
    gone, a1 is dominated by nothing."""
    native = NativeHexSolver(hex_board(4), table_bits=10)
    a1, b1, a2, d4 = 0, 1, 4, 15
    assert native.dominated(1 << a2, 1 << d4, 0) == {a1: b1}
    assert native.dominated(0, 1 << d4 | 1 << a2, 0) == {}
    assert native.prove(1 << a2, 1 << d4, 0) is not None  # and the search with it settles the position


def test_every_proof_in_the_table_holds():
    """Not only the root's: every position the search solved on the way (its table, filled positions
    as stored, losses by pruned moves among them) has the value the pure solver gives it, and its
    proof set holds (the loser owning every other empty cell changes nothing)."""
    native = NativeHexSolver(hex_board(5), table_bits=14)
    pure = HexSolver(hex_board(5), book=False)
    full = (1 << 25) - 1
    checked = 0
    for opening in (0, 1, 2, 5, 6, 7):  # a1, b1, c1, a2, b2, c2: searches, not H-search at once
        native.lib.hs_clear()
        assert native.prove(0, 1 << opening, 1) is not None
        for mine, theirs, player, wins, proof in native.solved_entries():
            first, second = (mine, theirs) if player == 0 else (theirs, mine)
            winner = player if wins else 1 - player
            rest = full & ~(mine | theirs) & ~proof
            assert not proof & (mine | theirs)
            assert pure.winner(first, second, player) == winner
            f2, s2 = (first | rest, second) if winner == 1 else (first, second | rest)
            assert pure.winner(f2, s2, player) == winner, (first, second, player, proof)
            checked += 1
    assert checked > 25


def test_state_winners_of_an_engine_batch_agree_with_the_pure_solver():
    """``state_winners`` reads an engine batch (the rules engine's tensors) and budgets each
    position: the same winners as the pure solver on Hex 5x5 lines, -1 where the budget is too small."""
    from conhex_zero.env.notation import play_moves
    from conhex_zero.env.state import State
    from conhex_zero.env.vec_env import VecEnv

    env = VecEnv("hex-5")
    lines = ["c3", "a1 c3", "a1", "b2 d4 c2", "e5 a1 b4 c3"]
    state = State.cat([play_moves(env, line) for line in lines])
    native = NativeHexSolver(hex_board(5), table_bits=14)
    calls = []
    winners = native.state_winners(state, calls.append)
    assert winners.tolist() == HexSolver(hex_board(5), book=False).state_winners(state).tolist()
    assert calls == list(range(len(lines) + 1))
    hex6 = NativeHexSolver(hex_board(6), table_bits=14)
    hex6.lib.hs_clear()
    assert hex6.state_winners(play_moves(VecEnv("hex-6"), "f1"), max_nodes=1).tolist() == [-1]  # thousands needed


def test_fill_in_on_hand_made_positions():
    """Hex 5x5, the first player (top to bottom) to move. A cell walled in by the second player's
    stones is of no use to the first and goes to the second; the two first-row cells under a
    first-player stone on the second row (edge template II) are captured by the first player."""
    n = 5
    solver = NativeHexSolver(hex_board(n), table_bits=12)
    # c3 empty, its six neighbours the second player's
    walls = sum(bit(n, c) for c in ("c2", "d2", "b3", "d3", "b4", "c4"))
    a, b = solver.fill(0, walls, 0)
    assert b & bit(n, "c3") and not a & bit(n, "c3")
    # a stone on c2: b1 and c1 captured (whichever the second player takes, the first takes the other)
    a, b = solver.fill(bit(n, "c2"), bit(n, "e5"), 0)
    assert a & bit(n, "c1") and a & bit(n, "d1") or a & bit(n, "b1") and a & bit(n, "c1")
    # fill-in off: nothing changes, and the values are the same
    plain = NativeHexSolver(hex_board(n), table_bits=12, fill_in=False)
    assert plain.fill(bit(n, "c2"), bit(n, "e5"), 0) == (bit(n, "c2"), bit(n, "e5"))
    for first, second, to_move in random_positions(n, 30, seed=77):
        assert plain.winner(first, second, to_move) == solver.winner(first, second, to_move)


def test_a_time_limit_and_ctrl_c_stop_a_search_in_flight():
    """The empty 8x8 board is far beyond a second: max_seconds ends the C search without a guess,
    and Ctrl-C (an interrupt in the main thread) stops it and raises KeyboardInterrupt."""
    import _thread
    import threading

    solver = NativeHexSolver(hex_board(8), table_bits=14)
    assert solver.winner_within(0, 0, 0, None, max_seconds=0.3) is None and solver.nodes > 0
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        solver.winner_within(0, 0, 0, None, max_seconds=300)  # the safety net: without the stop, None
    timer.cancel()
    assert solver.winner_within(1 << 27, 0, 1, 50) is None  # the library is usable afterwards


def test_every_5x5_opening_as_solved():
    truths = NativeHexSolver(hex_board(5), table_bits=18).opening_truths()
    wins = {hex_board(5).hole_names[t.action] for t in truths if t.first_player_wins}
    assert wins == set(SOLVED_OPENINGS[5])


def test_7x7_openings_as_published():
    """Hex 7x7 (slow suite): the centre d4 wins for the first player and d1 and the corner a1 lose,
    as the published solution says (Hayward et al. 2003), each within seconds with fill-in."""
    from conhex_zero.analysis.hex_openings import PUBLISHED_OPENINGS

    solver = NativeHexSolver(hex_board(7), table_bits=20)
    for name in ("d4", "d1", "a1"):
        winner = solver.winner_within(bit(7, name), 0, 1, max_nodes=200_000)
        assert winner is not None and (winner == 0) == (name in PUBLISHED_OPENINGS[7]), name


def test_a_budget_stops_an_unfinished_search_without_a_guess():
    solver = NativeHexSolver(hex_board(7), table_bits=14)
    assert solver.winner_within(0, 0, 0, max_nodes=3) is None
    assert solver.nodes <= 4


def test_boards_it_cannot_solve_are_refused():
    with pytest.raises(SolverError, match="Hex boards only"):
        NativeHexSolver(parse_game("conhex").board)
    with pytest.raises(SolverError, match="81 holes"):
        NativeHexSolver(hex_board(9))


def test_no_compiler_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("CONHEX_ZERO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    with pytest.raises(NativeSolverUnavailable, match="failed|compiler"):
        build_library()


def test_an_unwritable_cache_is_a_clear_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("CONHEX_ZERO_CACHE", str(blocker / "cache"))
    with pytest.raises(NativeSolverUnavailable, match="CONHEX_ZERO_CACHE"):
        build_library()


def test_book_prove_decides_every_opening_by_proofs(tmp_path, capsys):
    """A 4x4 book grown without the exact solver, then proved: every opening exact and right, the
    proofs kept by the file (read again), and the table decided by them."""
    folder = tmp_path / "b"
    assert main(["book", "grow", HEX4, "--out", str(folder), "--nodes", "30", "--sims", "8", "--quiet",
                 "--no-exact"]) == 0
    assert main(["book", "prove", str(folder), "--depth", "1", "--quiet", "--table-bits", "14"]) == 0
    out = capsys.readouterr().out
    assert "1 pieces:" in out and "proved" in out
    opened = open_book(folder)
    openings = [k for k, node in opened.book.nodes.items() if k.count(".") == 15]
    assert openings and all(opened.book.nodes[k].exact for k in openings)
    assert main(["book", "show", str(folder), "--json", str(tmp_path / "t.json")]) == 0
    table = json.loads((tmp_path / "t.json").read_text())
    wins = {hex_board(4).hole_names[a] for a in HexSolver(hex_board(4)).winning_openings()}
    assert len(table["openings"]) == 16 and table["truth_source"] == "solver"
    for m in table["openings"]:
        assert m["decided"] and m["proven"] in ("win", "loss") and (m["win_rate"] > 0.5) == (m["move"] in wins), m
        assert m["exact_win"] == (m["move"] in wins)
    # a second run has nothing left at that depth
    assert main(["book", "prove", str(folder), "--depth", "1", "--quiet", "--table-bits", "14"]) == 0
    assert "0 of 0 positions proved" in capsys.readouterr().out


def test_book_prove_with_two_workers_proves_what_one_does(tmp_path, capsys):
    """--workers 2: two processes, each with its own solver, share the candidates; the book gets
    the same exact results as one process gives, and the run record says how it was made."""
    folders = [tmp_path / "one", tmp_path / "two"]
    for folder in folders:
        assert main(["book", "grow", HEX4, "--out", str(folder), "--nodes", "25", "--sims", "8", "--quiet",
                     "--no-exact", "--seed", "3"]) == 0
    assert main(["book", "prove", str(folders[0]), "--depth", "1", "--quiet", "--table-bits", "14"]) == 0
    assert main(["book", "prove", str(folders[1]), "--depth", "1", "--quiet", "--table-bits", "14",
                 "--workers", "2"]) == 0
    assert "2 workers" in capsys.readouterr().out
    one, two = (open_book(f).book.nodes for f in folders)
    openings = {k: n.exact for k, n in one.items() if n.pieces == 1}
    assert len(openings) >= 8 and all(openings.values())
    assert openings == {k: n.exact for k, n in two.items() if n.pieces == 1}
    # deeper positions the searches' tables settled (harvested): each table holds others, all right
    truth = HexSolver(hex_board(4))
    for nodes in (one, two):
        for key, node in nodes.items():
            if node.exact:
                assert (node.exact > 0) == truth.mover_wins(*solver_form(key)), key
    records = [json.loads(line) for line in (folders[1] / "book.jsonl").read_text().splitlines()]
    assert any(r.get("type") == "prove" and r.get("workers") == 2 for r in records)


def test_book_prove_first_moves_limits_it_to_those_openings(tmp_path, capsys):
    """--first-moves a1: only the positions below a1 or its mirror image d4 (the book keeps one of
    the two), the opening itself proven; a name that is not a hole is a clear error."""
    folder = tmp_path / "b"
    assert main(["book", "grow", HEX4, "--out", str(folder), "--nodes", "25", "--sims", "8", "--quiet",
                 "--no-exact"]) == 0
    from conhex_zero.book.prove import candidates, first_move_images

    a1, d4 = 0, 15
    todo = candidates(open_book(folder), first_moves=first_move_images(hex_board(4), ["a1"]))
    assert todo and all(open_book(folder).book.nodes[k].line[0] in (a1, d4) for k in todo)
    assert main(["book", "prove", str(folder), "--first-moves", "a1", "--quiet", "--table-bits", "14"]) == 0
    assert f"of {len(todo)} positions proved" in capsys.readouterr().out  # only those were searched
    nodes = open_book(folder).book.nodes
    assert all(nodes[k].exact for k in todo) and any(len(nodes[k].line) == 1 for k in todo)
    # positions elsewhere can be exact only as what the searches' tables settled on the way: right too
    truth = HexSolver(hex_board(4))
    assert all((n.exact > 0) == truth.mover_wins(*solver_form(k)) for k, n in nodes.items() if n.exact)
    assert main(["book", "prove", str(folder), "--first-moves", "a1,z9"]) != 0
    assert "not a hole of the board: z9" in capsys.readouterr().err
    # b1's images on 8x8 are b1 and g8 only: a2, its transpose, is another opening (sides exchanged)
    board = parse_game("hex-8").board
    assert {board.hole_names[h] for h in first_move_images(board, ["b1"])} == {"b1", "g8"}


def test_candidates_come_shallowest_or_deepest_first_and_the_start_last(tmp_path):
    from conhex_zero.book.prove import candidates, key_depth

    folder = tmp_path / "b"
    assert main(["book", "grow", HEX4, "--out", str(folder), "--nodes", "25", "--sims", "8", "--quiet",
                 "--no-exact"]) == 0
    opened = open_book(folder)
    shallow, deep = candidates(opened), candidates(opened, deepest_first=True)
    assert sorted(shallow) == sorted(deep) and shallow[-1] == deep[-1] == opened.book.start
    depths = [key_depth(k) for k in shallow[:-1]]
    assert depths == sorted(depths) and [key_depth(k) for k in deep[:-1]] == sorted(depths, reverse=True)
    assert all(key_depth(k) <= 1 for k in candidates(opened, max_depth=1))


def test_best_replies_try_the_position_after_the_books_best_move(tmp_path, capsys):
    """--best-replies: each opening the book has won for its mover (the second player) gives way to the
    position after its best book move, the openings it has lost are left out; a proof that the move
    wins proves the opening through the book's minimax, and every result is right."""
    from conhex_zero.book.hints import best_reply
    from conhex_zero.book.prove import candidates, key_depth

    folder = tmp_path / "b"
    assert main(["book", "grow", HEX4, "--out", str(folder), "--nodes", "40", "--sims", "8", "--quiet",
                 "--no-exact", "--seed", "1"]) == 0
    opened = open_book(folder)
    nodes = opened.book.nodes
    openings = [k for k in candidates(opened, max_depth=1) if key_depth(k) == 1]
    won = [k for k in openings if nodes[k].value > 0]
    assert won and len(won) < len(openings)  # the book has some openings won for the replier, some lost
    todo = candidates(opened, max_depth=1, best_replies=True)
    replies = [r for r in (best_reply(opened, k) for k in won) if r is not None]
    start_reply = best_reply(opened, opened.book.start)  # the start (first player to move) comes last
    assert replies and todo == replies + ([start_reply] if start_reply else [])
    assert all(key_depth(k) == 2 for k in replies)
    for key in won:
        reply = best_reply(opened, key)
        if reply is not None:  # the mover's best: no book move leaves the opponent less
            assert reply in nodes[key].children.values()
            assert nodes[reply].value == min(nodes[c].value for c in nodes[key].children.values())
    assert all(best_reply(opened, k) is None for k in openings if nodes[k].value <= 0)
    assert main(["book", "prove", str(folder), "--depth", "1", "--best-replies", "--quiet", "--table-bits", "14"]) == 0
    out = capsys.readouterr().out
    assert f"{len(todo)} candidates" in out or (len(todo) == 1 and "1 candidate" in out)
    tried = re.findall(r"^  (\d+) pieces: (\d+) of (\d+) proved$", out, re.M)
    assert tried and tried[-1][0] == "2" and sum(int(n) for _, _, n in tried) <= len(todo)  # the replies, deepest last
    nodes = open_book(folder).book.nodes
    truth = HexSolver(hex_board(4))
    assert all(nodes[k].exact for k in todo)
    for key, node in nodes.items():
        if node.exact or node.proven:
            assert ((node.exact or node.proven) > 0) == truth.mover_wins(*solver_form(key)), key
    decided = [k for k in won if best_reply(opened, k) in todo and nodes[best_reply(opened, k)].exact < 0]
    assert decided and all(nodes[k].proven > 0 for k in decided)  # proved through the reply


def test_doubts_try_the_movers_best_move_where_the_book_has_it_losing(tmp_path, capsys):
    """--doubts: each position the book has lost for its mover gives way to the position after the mover's
    best book move (its best try), the positions it has won are left out; where the try wins, the proof
    overturns the book there. A Hex 4x4 network on Hex 5x5 makes a book that is wrong at two such
    positions: both are proven won after the run, and every result is right (the exact solver)."""
    from conhex_zero.book.hints import best_reply, best_try
    from conhex_zero.book.prove import candidates

    folder = tmp_path / "b"
    assert main(["book", "grow", HEX4, "--game", "hex-5", "--out", str(folder), "--nodes", "60", "--sims", "8",
                 "--quiet", "--no-exact"]) == 0
    opened = open_book(folder)
    nodes = opened.book.nodes
    truth = HexSolver(hex_board(5))
    plain = candidates(opened)
    lost = [k for k in plain if nodes[k].value < 0]
    tries = [t for t in (best_try(opened, k) for k in lost) if t is not None]
    todo = candidates(opened, doubts=True)
    assert tries and sorted(todo) == sorted(set(tries))
    for key in lost:
        tried = best_try(opened, key)
        if tried is not None:  # the mover's best: no book move leaves the opponent less
            assert tried in nodes[key].children.values()
            assert nodes[tried].value == min(nodes[c].value for c in nodes[key].children.values())
    assert all(best_try(opened, k) is None for k in plain if nodes[k].value >= 0)
    both = candidates(opened, best_replies=True, doubts=True)
    replies = [best_reply(opened, k) for k in plain if nodes[k].value > 0]
    assert sorted(both) == sorted(set(tries) | {r for r in replies if r is not None})
    overturned = [k for k in lost if best_try(opened, k) and not truth.mover_wins(*solver_form(best_try(opened, k)))]
    assert len(overturned) == 2  # the book is wrong there, and its best try shows it

    assert main(["book", "prove", str(folder), "--doubts", "--quiet", "--table-bits", "14"]) == 0
    assert "the position after the mover's best try at each the book has lost" in capsys.readouterr().out
    nodes = open_book(folder).book.nodes
    assert all(nodes[k].exact for k in todo)
    for key, node in nodes.items():
        if node.exact or node.proven:
            assert ((node.exact or node.proven) > 0) == truth.mover_wins(*solver_form(key)), key
    assert all((nodes[k].exact or nodes[k].proven) > 0 and nodes[k].value > 0 for k in overturned)


@pytest.mark.parametrize("workers", [1, 2])
def test_next_best_tries_the_next_move_where_the_best_one_failed(tmp_path, capsys, workers):
    """--next-best K: where the solver proves a best try does not win, the position's next best try (by
    the book updated with that result) is searched at once, before the positions waiting, up to K moves
    a position; every result right (the exact solver). The Hex 5x5 book the 4x4 network makes."""
    from conhex_zero.book.prove import candidate_pairs, prove_book

    folder = tmp_path / "b"
    assert main(["book", "grow", HEX4, "--game", "hex-5", "--out", str(folder), "--nodes", "60", "--sims", "8",
                 "--quiet", "--no-exact"]) == 0
    opened = open_book(folder)
    above = {key: up for up, key in candidate_pairs(opened, doubts=True)}
    searched, added = [], []
    solver = NativeHexSolver(hex_board(5), table_bits=14)
    solver.lib.hs_clear()  # another test's table in this process would settle the follow-ups beforehand
    report = prove_book(opened, solver, 100_000, doubts=True, next_best=3,
                        workers=workers, table_bits=14, on_position=lambda k, r, s: searched.append((k, r)),
                        on_added=added.append)
    assert report.followed == len(added) > 0 and report.total_tried == len(searched)
    nodes = opened.book.nodes
    for key in added:  # a book move of the position above a failed try, not searched before
        up = next(above[k] for k, r in searched if k in above and r is not None and r > 0 and key in
                  nodes[above[k]].children.values())
        above[key] = up
    per_position: dict[str, list[int]] = {}
    for key, result in searched:
        per_position.setdefault(above[key], []).append(result)
    assert max(len(r) for r in per_position.values()) > 1 and all(len(r) <= 3 for r in per_position.values())
    for results in per_position.values():  # a position's next try only after its tries before failed
        assert all(r is not None and r > 0 for r in results[:-1])
    if workers == 1:  # one process: the next try is searched right after the failure
        for (key, result), (following, _) in zip(searched, searched[1:]):
            if following in added:
                assert above[following] == above[key] and result > 0
    truth = HexSolver(hex_board(5))
    again = open_book(folder).book.nodes  # as written
    for key, node in again.items():
        if node.exact or node.proven:
            assert ((node.exact or node.proven) > 0) == truth.mover_wins(*solver_form(key)), key
    assert main(["book", "prove", str(folder), "--next-best", "2", "--quiet"]) != 0
    assert "give --best-replies, --doubts or --position with it" in capsys.readouterr().err


def test_an_interrupted_prove_keeps_what_it_proved(tmp_path):
    from conhex_zero.book.prove import prove_book

    folder = tmp_path / "b"
    assert main(["book", "grow", HEX4, "--out", str(folder), "--nodes", "20", "--sims", "8", "--quiet",
                 "--no-exact"]) == 0
    seen = []

    def stop_after_three(key, result, seconds):
        seen.append((key, result))
        if len(seen) == 3:
            raise KeyboardInterrupt

    report = prove_book(open_book(folder), NativeHexSolver(hex_board(4), table_bits=14), 100_000,
                        on_position=stop_after_three, flush_seconds=3600)
    assert report.stopped == "interrupted" and report.total_tried == 3
    again = open_book(folder)  # read from the file: the proofs were written on the way out
    assert [again.book.nodes[k].exact for k, _ in seen] == [r for _, r in seen] and all(r for _, r in seen)


def test_a_search_cut_short_is_kept_and_goes_on(tmp_path, capsys):
    """A proof search stopped by its budget is saved into the book folder with its totals; a later
    run (a cleared table: another process) loads it and finishes with fewer expansions than a search
    from nothing needs, the same result, and deletes the file; a damaged file is set aside and the
    search starts afresh."""
    from conhex_zero.book import carried
    from conhex_zero.book.prove import Keep, _solve

    solver = NativeHexSolver(hex_board(6), table_bits=18)
    key = "." * 5 + "x" + "." * 30 + "|o|-"  # Hex 6x6 after f1: some thousand expansions
    solver.lib.hs_clear()
    fresh = _solve(solver, key, 10**6, None)
    from_nothing = solver.nodes
    assert fresh[1] is not None and from_nothing > 1500 and fresh[3] > 0  # its CPU seconds
    fresh = fresh[:3]
    keep = Keep(tmp_path, after_seconds=0)
    solver.lib.hs_clear()
    assert _solve(solver, key, 1000, None, keep)[:3] == (key, None, False)
    (saved,) = carried.saved_searches(tmp_path)
    assert saved["key"] == key and saved["runs"] == 1 and saved["expansions"] == 1000 and saved["entries"] > 100
    # only the positions below a search's root are saved, not others the table holds
    everything = solver.export_table()
    assert len(solver.export_table(below=(0, 1 << 5, 1))) == len(everything)  # all below f1
    assert len(solver.export_table(below=(0, 1 << 0, 1))) < len(everything) // 2  # below a1: a few
    solver.lib.hs_clear()
    assert _solve(solver, key, 10**6, None, keep)[:3] == fresh
    assert solver.nodes < from_nothing - 500
    assert not carried.search_path(tmp_path, key).exists()
    # a damaged save: set aside, never a crash, and the search runs from nothing
    solver.lib.hs_clear()
    _solve(solver, key, 1000, None, keep)
    path = carried.search_path(tmp_path, key)
    path.write_bytes(path.read_bytes()[:100])
    solver.lib.hs_clear()
    assert _solve(solver, key, 10**6, None, keep)[:3] == fresh and solver.nodes == from_nothing
    assert path.with_suffix(".unreadable").exists()
    # a book folder it cannot write into: a warning, and the search still runs
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "searches").write_text("a file where the folder would go")
    solver.lib.hs_clear()
    assert _solve(solver, key, 1000, None, Keep(blocked, after_seconds=0))[:3] == (key, None, False)
    assert "cannot keep the search" in capsys.readouterr().err


KEPT_KEY = "." * 5 + "x" + "." * 30 + "|o|-"  # Hex 6x6 f1, second to move


def _scripted_solver(solver: NativeHexSolver, winner_within):
    """A stand-in for ``solver`` in ``book.prove._solve`` whose search is ``winner_within(self)``
    (it sets ``self.nodes``), with the real solver's table export and import."""

    class Scripted:
        size, entry_bytes = solver.size, solver.entry_bytes
        nodes = 0
        export_table, import_table = solver.export_table, solver.import_table

        def winner_within(self, *args, **kwargs):
            return winner_within(self)

    return Scripted()


def test_an_interrupted_search_is_kept_with_what_it_spent(tmp_path):
    """Ctrl-C inside a search: it is saved (the expansions it spent counted) before the interrupt goes on."""
    from conhex_zero.book import carried
    from conhex_zero.book.prove import Keep, _solve

    solver = NativeHexSolver(hex_board(6), table_bits=16)

    def interrupted(fake):
        fake.nodes = 1234
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _solve(_scripted_solver(solver, interrupted), KEPT_KEY, 10**6, None, Keep(tmp_path, after_seconds=0))
    (saved,) = carried.saved_searches(tmp_path)
    assert saved["expansions"] == 1234 and saved["runs"] == 1
    with pytest.raises(ValueError, match="whole number"):
        solver.import_table(b"x" * (solver.entry_bytes + 1))


def test_a_kept_search_counts_cpu_time_not_wall_time(tmp_path):
    """A search that waits (paused, or a core shared) counts only the CPU time it used."""
    import time

    from conhex_zero.book import carried
    from conhex_zero.book.prove import Keep, _solve

    solver = NativeHexSolver(hex_board(6), table_bits=16)

    def waiting(fake):
        time.sleep(0.6)  # wall time passes, next to no CPU time
        fake.nodes = 10
        return None

    assert _solve(_scripted_solver(solver, waiting), KEPT_KEY, 10, None, Keep(tmp_path, after_seconds=0))[1] is None
    (saved,) = carried.saved_searches(tmp_path)
    assert saved["expansions"] == 10 and saved["seconds"] < 0.3


def test_a_saved_search_names_its_root_and_proof_numbers():
    """root_of finds the search's root among its saved entries (the filled position, with the most work
    below it) and reads its proof numbers: finite and positive while the search is cut short, and
    0 / UNSETTLED (or the other way round) once it has settled the position, as the solver says."""
    from conhex_zero.book.carried import UNSETTLED, root_of

    solver = NativeHexSolver(hex_board(6), table_bits=16)
    mine, theirs, player = 0, 1 << 5, 1  # Hex 6x6 f1, second to move
    assert solver.prove(mine, theirs, player, max_nodes=200) is None
    root = root_of(solver.export_table(below=(mine, theirs, player)), solver.entry_bytes)
    assert (root.mine, root.theirs, root.player) == (*solver.fill(mine, theirs, player), player)
    assert 0 < root.proof_number < UNSETTLED and 0 < root.disproof_number < UNSETTLED
    settled = solver.prove(mine, theirs, player)
    assert settled is not None
    done = root_of(solver.export_table(below=(mine, theirs, player)), solver.entry_bytes)
    assert (done.mine, done.theirs) == (root.mine, root.theirs)
    assert (done.proof_number, done.disproof_number) == ((0, UNSETTLED) if settled[0] else (UNSETTLED, 0))
    assert root_of(b"", solver.entry_bytes) is None and root_of(b"x" * 47, 48) is None


def test_book_show_skips_damaged_saved_searches(tmp_path):
    """A saved search that is not one (a header of another shape, a count that is no number, entries
    cut short) is left out of the report or reported without proof numbers: never a traceback."""
    import gzip

    from conhex_zero.book import carried

    folder = tmp_path / carried.FOLDER
    folder.mkdir()
    (folder / "a.gz").write_bytes(gzip.compress(b"[1, 2]\n"))
    (folder / "b.gz").write_bytes(gzip.compress(b'{"entries": "many", "entry_bytes": 48}\n'))
    (folder / "c.gz").write_bytes(gzip.compress(b'{"entries": 2, "entry_bytes": 48, "seconds": 5}\n' + b"x" * 50))
    (folder / "d.gz").write_bytes(b"not gzip")
    (saved,) = carried.saved_searches(tmp_path)
    assert saved["seconds"] == 5 and saved["proof_number"] is None and carried.numbers_text(saved) == ""
    assert carried.describe({**saved, "runs": "three"}) == "5 CPU seconds, 0 runs"


def test_a_deadline_before_a_search_begins_counts_it_not_tried_not_cut_short(tmp_path, capsys):
    """With two workers and more candidates than the run has time for, the end line counts the
    searches the deadline stopped apart from the candidates it came before (which were never begun)."""
    from conhex_zero.book.prove import NOT_STARTED, _solve

    solver = NativeHexSolver(hex_board(6), table_bits=14)
    assert _solve(solver, KEPT_KEY, 10**6, time.monotonic() - 1) == (KEPT_KEY, None, NOT_STARTED, 0.0)
    folder = tmp_path / "b"
    assert main(["book", "grow", HEX4, "--out", str(folder), "--nodes", "25", "--sims", "8", "--quiet",
                 "--no-exact"]) == 0
    capsys.readouterr()
    assert main(["book", "prove", str(folder), "--minutes", "0.000001", "--quiet", "--workers", "2",
                 "--table-bits", "14", "--no-keep"]) == 0
    out = capsys.readouterr().out
    todo = int(out.split(" candidate")[0].rsplit(" ", 1)[1])
    assert todo > 2 and f"0 searches cut short, {todo} candidates not tried" in out


def test_book_prove_keeps_searches_cut_short_unless_told_not_to(tmp_path, capsys):
    """--keep-after 0 with a one-expansion budget: the searches it cuts short are kept in the book
    and named by the run and by book show (text and JSON); a second run with a larger budget goes on
    from them and deletes each one it proves; one of a position the book has settled otherwise is deleted
    too (``forget_settled_searches``, at the end of every run); --no-keep neither loads nor writes any."""
    folder = tmp_path / "b"
    assert main(["book", "grow", HEX4, "--out", str(folder), "--nodes", "25", "--sims", "8", "--quiet",
                 "--no-exact"]) == 0
    plain = tmp_path / "plain"
    import shutil

    shutil.copytree(folder, plain)
    assert main(["book", "prove", str(plain), "--nodes", "1", "--no-keep", "--quiet", "--table-bits", "14"]) == 0
    assert not (plain / "searches").exists()
    capsys.readouterr()
    assert main(["book", "prove", str(folder), "--nodes", "1", "--keep-after", "0", "--quiet", "--table-bits", "14"]) == 0
    out = capsys.readouterr().out
    kept = sorted((folder / "searches").glob("*.xz"))
    assert kept and f"{len(kept)} search" in out and "kept in" in out
    assert out.count("1 run; proof numbers") == len(kept)  # a line per search, its root's numbers
    assert main(["book", "show", str(folder), "--json", str(tmp_path / "t.json")]) == 0
    shown = capsys.readouterr().out
    assert "proofs under way" in shown and "proof numbers" in shown
    assert shown.count("1 run; proof numbers") == len(kept)  # each kept search named: an opening, or its line
    deeper = re.findall(r"^  ([a-d]\d(?: [a-d]\d)+): ", shown, re.M)
    assert deeper and "a deeper position" not in shown
    table = json.loads((tmp_path / "t.json").read_text())
    assert len(table["searches_kept"]) == len(kept) and all(s["runs"] == 1 for s in table["searches_kept"])
    assert all(s["proof_number"] > 0 and s["disproof_number"] > 0 for s in table["searches_kept"])
    from conhex_zero.book import carried
    from conhex_zero.book.prove import forget_settled_searches

    opened = open_book(folder)  # one kept position settled (as a proof below it would): its search goes
    first, *others = [h["key"] for h in carried.saved_searches(folder)]
    opened.book.nodes[first].exact = 1
    assert forget_settled_searches(opened) == [first] and opened.book.nodes[first].proven == 1
    assert sorted(h["key"] for h in carried.saved_searches(folder)) == sorted(others)
    assert main(["book", "prove", str(folder), "--keep-after", "0", "--quiet", "--table-bits", "14"]) == 0
    assert not list((folder / "searches").glob("*.xz"))
    assert main(["book", "prove", str(folder), "--keep-after", "-1"]) != 0


def _cpu_seconds_of_children(pid: int) -> list[float]:
    """CPU seconds (user + system) of each child process of ``pid``, from /proc (Linux)."""
    import os

    ticks = os.sysconf("SC_CLK_TCK")
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:  # the parent's id
            out.append((int(fields[11]) + int(fields[12])) / ticks)
    return out


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the workers' CPU time from /proc")
def test_ctrl_c_on_two_workers_keeps_both_searches(tmp_path):
    """Ctrl-C (SIGINT) on a two-worker run: the pool ends its workers with SIGTERM, and each saves
    the search in flight before it exits (nothing of it is lost since its last save); no traceback."""
    import shutil
    import signal
    import subprocess
    import sys
    import time

    from conhex_zero.book import carried

    book = tmp_path / "b7"
    shutil.copytree(ROOT / "checkpoints" / "books" / "hex7-l4h64c-v5", book)
    process = subprocess.Popen([sys.executable, "-m", "conhex_zero", "book", "prove", str(book), "--first-moves", "a2,b2",
                                "--depth", "1", "--workers", "2", "--keep-after", "0", "--nodes", "1000000000",
                                "--table-bits", "18", "--quiet"], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    # wait until both workers have searched a while (CPU seconds, not the clock: the verdict must not
    # depend on the machine's load); each search needs over a minute of CPU to finish
    def both_searching() -> bool:
        cpu = sorted(_cpu_seconds_of_children(process.pid), reverse=True)  # the workers, the resource tracker
        return len(cpu) >= 2 and cpu[1] >= 8.0

    deadline = time.time() + 600
    while time.time() < deadline and not both_searching():
        time.sleep(1)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in out
    kept = carried.saved_searches(book)
    assert len(kept) == 2 and all(h["runs"] == 1 and h["expansions"] > 0 for h in kept), kept


def test_book_prove_refuses_what_it_cannot_prove(tmp_path, capsys):
    assert main(["book", "prove", str(tmp_path / "none")]) != 0
    assert "no book at" in capsys.readouterr().err
    assert main(["book", "prove", str(tmp_path), "--nodes", "0"]) != 0
    capsys.readouterr()
    for game, words in (("conhex", "Hex boards only"), ("hex-9", "81 holes")):
        folder = tmp_path / game
        new_book(folder, game, [], "start", "model.pt", "0", 8)  # a header: enough to be refused
        assert main(["book", "prove", str(folder)]) != 0
        assert words in capsys.readouterr().err


def test_first_moves_are_a_queue_in_the_order_given(tmp_path):
    """--first-moves d1,a1: at each depth the positions below d1 (or its image a4) come before those
    below a1 (or d4), and the other way round for a1,d1; the set is the same whichever order is given."""
    from conhex_zero.book.prove import candidates, first_move_images, first_move_ranks

    folder = tmp_path / "b"
    assert main(["book", "grow", HEX4, "--out", str(folder), "--nodes", "40", "--sims", "8", "--quiet",
                 "--no-exact"]) == 0
    opened = open_book(folder)
    board = hex_board(4)
    ranks = first_move_ranks(board, ["d1", "a1"])
    assert ranks == {3: 0, 12: 0, 0: 1, 15: 1} and frozenset(ranks) == first_move_images(board, ["a1", "d1"])
    nodes = opened.book.nodes
    for names in (["d1", "a1"], ["a1", "d1"]):  # both orders: the keys' own order cannot pass both
        ranks = first_move_ranks(board, names)
        queue = candidates(opened, first_moves=ranks)
        assert sorted(queue) == sorted(candidates(opened, first_moves=first_move_images(board, ["a1", "d1"])))
        for depth in {nodes[k].pieces for k in queue}:
            order = [ranks[nodes[k].line[0]] for k in queue if nodes[k].pieces == depth]
            assert order == sorted(order), (names, depth)
        assert {ranks[nodes[k].line[0]] for k in queue if nodes[k].pieces == 1} == {0, 1}


def test_the_resume_benchmark_measures_what_a_reloaded_search_redoes(tmp_path, monkeypatch, capsys):
    """benchmarks/solver_resume.py on Hex 6x6 f1: an uninterrupted row and one row per kept count,
    each search run to its end after the reload (the extra work is what the cut cost)."""
    import runpy
    import sys

    out = tmp_path / "r.json"
    monkeypatch.setattr(sys, "argv", ["solver_resume.py", "--size", "6", "--opening", "f1", "--cut", "100",
                                      "--keep", "4,100000", "--table-bits", "16", "--json", str(out)])
    runpy.run_path(str(Path(__file__).parents[1] / "benchmarks" / "solver_resume.py"), run_name="__main__")
    rows = json.loads(out.read_text())["rows"]
    assert [r["kept"] for r in rows] == [None, 4, 100000]
    assert rows[0]["after"] > 100 and all(r["after"] > 0 for r in rows)
    assert rows[1]["entries"] <= 4 < rows[2]["entries"]
    assert "uninterrupted" in capsys.readouterr().out


@pytest.mark.parametrize("doubts", [False, True], ids=["best-replies", "doubts"])
def test_the_best_reply_benchmark_compares_an_opening_with_its_best_reply(tmp_path, monkeypatch, capsys, doubts):
    """benchmarks/solver_best_reply.py on a Hex 4x4 book: a row for each opening the book has won for
    the replier (--doubts: lost for the replier, and the replier's best try), both searches settled,
    the move's verdict the exact solver's."""
    import runpy
    import sys

    from conhex_zero.book.hints import best_move, best_reply, best_try
    from conhex_zero.book.prove import key_depth

    folder = tmp_path / "b"
    assert main(["book", "grow", HEX4, "--out", str(folder), "--nodes", "40", "--sims", "8", "--quiet",
                 "--no-exact", "--seed", "1"]) == 0
    opened = open_book(folder)
    deeper = best_try if doubts else best_reply
    expected = [k for k in opened.book.nodes if key_depth(k) == 1 and deeper(opened, k) is not None]
    out = tmp_path / "r.json"
    monkeypatch.setattr(sys, "argv", ["solver_best_reply.py", str(folder), "--table-bits", "16", "--json", str(out),
                                      *(["--doubts", "--next-best", "3"] if doubts else [])])
    runpy.run_path(str(Path(__file__).parents[1] / "benchmarks" / "solver_best_reply.py"), run_name="__main__")
    rows = json.loads(out.read_text())["rows"]
    assert expected and len(rows) == len(expected)
    truth = HexSolver(hex_board(4))
    for key, row in zip(sorted(expected), rows):
        mine, theirs, player = solver_form(key)
        action = best_move(opened, key, losing=doubts)
        assert (row["book_value"] < 0) == doubts
        assert row["opening_search"]["mover_wins"] == truth.mover_wins(mine, theirs, player)
        assert row["reply_wins"] == (not truth.mover_wins(theirs, mine | 1 << action, 1 - player))
        later = row["next_moves"]
        assert len(later) <= (2 if doubts else 0) and (not later or row["reply_wins"] is False)
        hole = {hole_name: i for i, hole_name in enumerate(hex_board(4).hole_names)}
        for m in later:  # each next move's verdict the exact solver's
            assert m["wins"] == (not truth.mover_wins(theirs, mine | 1 << hole[m["move"]], 1 - player))
    assert f"best {'tries' if doubts else 'replies'} won" in capsys.readouterr().out


def test_a_saved_search_keeps_its_entries_in_stone_order(tmp_path):
    """carried.save writes the solver's records sorted by their stones (they compress better so) and
    read gives back every record unchanged."""
    from conhex_zero.book import carried

    solver = NativeHexSolver(hex_board(6), table_bits=16)
    solver.lib.hs_clear()
    solver.prove(1 << 5, 0, 1, 2000)  # Hex 6x6 f1 within 2,000 expansions: the table fills with its entries
    entries = solver.export_table(4096)
    size = solver.entry_bytes
    records = [entries[i:i + size] for i in range(0, len(entries), size)]
    assert len(records) > 10
    shuffled = b"".join(reversed(records))
    path = carried.save(tmp_path, carried.Carried(KEPT_KEY, 1, 2000, 1.0, shuffled), solver.size, size)
    back = carried.read(path, solver.size, size).entries
    got = [back[i:i + size] for i in range(0, len(back), size)]
    assert sorted(got) == sorted(records)
    stones = [(int.from_bytes(r[:8], sys.byteorder), int.from_bytes(r[8:16], sys.byteorder)) for r in got]
    assert stones == sorted(stones) and got != list(reversed(records))

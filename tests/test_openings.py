"""Opening analysis: the exact solver, symmetry groups, winning moves, the swap map against the
solver, the command's JSON and pictures."""

import json
import random
import struct

import pytest
import torch

from conhex_zero.analysis.hex_openings import SOLVED_OPENINGS
from conhex_zero.analysis.openings import analyse_moves, symmetry_groups
from conhex_zero.analysis.solver import HexSolver, SolverError
from conhex_zero.cli.main import main
from conhex_zero.env.notation import play_moves
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.games.conhex import conhex_board
from conhex_zero.games.hex import hex_board
from conhex_zero.nn.checkpoint import load_checkpoint
from hex_solver import HexSolver as ReferenceSolver

HEX4 = "checkpoints/hex4-l3h32.pt"
HEX5 = "checkpoints/hex5-l4h64.pt"
HEX7 = "checkpoints/hex7-l4h64.pt"
HEX7_AVG = "checkpoints/hex7-l4h64-avg.pt"

# Hex 5x5 without swap: the openings after which the first player (top-bottom) wins, as solved by
# analysis/solver.py (the slow test below solves all 25 again). The other 12 lose.
HEX5_FIRST_PLAYER_WINS = {"e1", "b2", "c2", "d2", "e2", "b3", "c3", "d3", "a4", "b4", "c4", "d4", "a5"}


def turned(name, n):
    """The hole's image under the 180-degree turn of the n x n board."""
    c, r = ord(name[0]) - ord("a"), int(name[1:]) - 1
    return f"{chr(ord('a') + n - 1 - c)}{n - r}"


@pytest.mark.parametrize("n", [2, 3, 4])
def test_solver_openings_match_an_independent_solver(n):
    truths = HexSolver(hex_board(n)).opening_truths()
    reference = ReferenceSolver(n).winning_openings()
    assert {t.action for t in truths if t.first_player_wins} == reference
    assert HexSolver(hex_board(n)).winning_openings() == reference


def test_hex5_opening_table():
    names = hex_board(5).hole_names
    assert len(names) == 25 and HEX5_FIRST_PLAYER_WINS <= set(names) and len(HEX5_FIRST_PLAYER_WINS) == 13
    # The 180-degree turn keeps both players' sides: an opening and its turn have the same outcome.
    assert {turned(m, 5) for m in HEX5_FIRST_PLAYER_WINS} == HEX5_FIRST_PLAYER_WINS
    assert {"c3", "e1", "d2", "b4", "a5"} <= HEX5_FIRST_PLAYER_WINS  # the centre and the short diagonal
    assert SOLVED_OPENINGS[5] == HEX5_FIRST_PLAYER_WINS  # the package's table, answered by the book
    solver = HexSolver(hex_board(5))
    assert {names[a] for a in solver.winning_openings()} == HEX5_FIRST_PLAYER_WINS and solver.nodes == 0


@pytest.mark.parametrize("opening", ["c3", "d2", "a1", "c1", "e5"])
def test_solver_settles_some_hex5_openings_quickly(opening):
    board = hex_board(5)
    solver = HexSolver(board, book=False)
    a = board.hole_names.index(opening)
    assert (solver.winner(1 << a, 0, 1) == 0) == (opening in HEX5_FIRST_PLAYER_WINS)
    assert solver.nodes > 0


def test_solver_refuses_boards_above_5x5():
    assert HexSolver(hex_board(5)).size == 25
    with pytest.raises(SolverError, match="stops at 25"):
        HexSolver(hex_board(6))


def test_edge_templates_hold_by_brute_force():
    """Every edge template the solver uses connects its stone to its side against any defence,
    checked by exhaustive play inside the template's holes (nothing shared with the solver's code)."""
    for n in (5, 7):
        board = hex_board(n)
        solver = HexSolver(board, max_holes=n * n)
        nbrs = {i: set() for i in range(n * n)}
        for i, j in board.adjacency:
            nbrs[i].add(j)
            nbrs[j].add(i)
        side_cells = [{h for h in range(n * n) if s in board.cell_sides[h]} for s in range(4)]
        for player, (sa, sb) in enumerate(((0, 1), (2, 3))):
            for side, templates in zip((sa, sb), solver.templates[player]):
                assert len(templates) == 2 * (n - 3)  # two mirror forms, wherever they fit
                for stone, carrier in templates:
                    s = stone.bit_length() - 1
                    holes = frozenset(h for h in range(n * n) if carrier >> h & 1)
                    assert len(holes) == 8 and s not in holes and holes & side_cells[side]
                    assert template_connects(s, holes, side_cells[side], nbrs)


def template_connects(stone, holes, side, nbrs):
    """Does the owner of ``stone`` reach ``side`` inside ``holes`` when the defender moves first?"""
    from functools import cache

    def reaches(owned):
        seen, todo = {stone}, [stone]
        while todo:
            x = todo.pop()
            if x in side:
                return True
            for y in nbrs[x]:
                if y in owned and y not in seen:
                    seen.add(y)
                    todo.append(y)
        return False

    @cache
    def owner_wins(owned, taken, defender_to_move):
        if reaches(owned):
            return True
        free = holes - owned - taken
        if not free:
            return False
        if defender_to_move:
            return all(owner_wins(owned, taken | {x}, False) for x in free)
        return any(owner_wins(owned | {x}, taken, True) for x in free)

    return owner_wins(frozenset(), frozenset(), True)


def test_solver_known_results():
    # Hex 4x4 (a classic result): exactly the four cells of the short diagonal win for the opener.
    win4 = {hex_board(4).hole_names[t.action] for t in HexSolver(hex_board(4)).opening_truths()
            if t.first_player_wins}
    assert win4 == {"d1", "c2", "b3", "a4"}


def open_positions(solver, n, count, stones, seed):
    """``count`` random positions (first player's and second player's stone bitmasks, player to
    move) with ``stones`` = (low, high) stones placed alternately and no side connected yet."""
    rnd = random.Random(seed)
    found = 0
    while found < count:
        cells = rnd.sample(range(n * n), rnd.randint(*stones))
        first = sum(1 << c for c in cells[0::2])
        second = sum(1 << c for c in cells[1::2])
        if solver.connected(first, 0) or solver.connected(second, 1):
            continue
        found += 1
        yield first, second, len(cells) % 2


@pytest.mark.parametrize("n, count, stones", [(3, 40, (0, 5)), (4, 60, (4, 10)), (5, 30, (12, 16))])
def test_solver_agrees_on_random_positions(n, count, stones):
    solver, ref = HexSolver(hex_board(n), book=False), ReferenceSolver(n)
    for first, second, to_move in open_positions(solver, n, count, stones, seed=3):
        ref_mover_wins = ref.mover_wins(first, second)
        assert (solver.winner(first, second, to_move) == to_move) == ref_mover_wins, (first, second)


def test_solver_proof_sets_are_proofs():
    """A proof set really decides the position: give the loser every empty hole outside it and an
    independent brute force still finds the same winner."""
    n = 4
    solver, ref = HexSolver(hex_board(n), book=False), ReferenceSolver(n)
    full = (1 << n * n) - 1
    for first, second, p in open_positions(solver, n, 60, (4, 9), seed=5):
        mine, theirs = (first, second) if p == 0 else (second, first)
        wins, proof = solver.prove(mine, theirs, p)
        empty = full & ~(first | second)
        assert proof & ~empty == 0
        if wins:  # the loser takes every empty hole outside the proof set
            theirs |= empty & ~proof
        else:
            mine |= empty & ~proof
        assert brute_mover_wins(ref, mine, theirs, p) == wins, (first, second, proof)


def brute_mover_wins(ref, mine, theirs, player):
    """Does ``player`` to move win, whatever the stone counts (plain negamax, the reference's
    connection test only)?"""
    from functools import cache

    full = (1 << ref.cells) - 1

    @cache
    def wins(mine, theirs, player):
        if ref.connected(theirs, 1 - player):
            return False
        empty = full & ~(mine | theirs)
        moves = [1 << i for i in range(ref.cells) if empty >> i & 1]
        if any(ref.connected(mine | m, player) for m in moves):
            return True
        return any(not wins(theirs, mine | m, 1 - player) for m in moves)

    return wins(mine, theirs, player)


def test_solver_refuses_what_it_cannot_solve():
    with pytest.raises(SolverError, match="Hex boards only"):
        HexSolver(conhex_board())
    with pytest.raises(SolverError, match="stops at"):
        HexSolver(hex_board(7))


@pytest.mark.heavy
def test_solver_settles_every_hex5_opening():
    """The full solve (about 25 s of CPU time): every opening on its own, no symmetry and no book."""
    board = hex_board(5)
    solver = HexSolver(board, book=False)
    wins = {board.hole_names[a] for a in range(25) if solver.winner(1 << a, 0, 1) == 0}
    assert wins == HEX5_FIRST_PLAYER_WINS
    truths = HexSolver(board, book=False).opening_truths()
    assert {board.hole_names[t.action] for t in truths if t.first_player_wins} == HEX5_FIRST_PLAYER_WINS


def test_symmetry_groups_of_the_empty_boards():
    env = VecEnv("hex-5")
    groups = symmetry_groups(env, env.initial_state(1), list(range(25)))
    assert len(set(groups)) == 13  # the centre alone, every other cell paired by the half turn
    assert groups[0] == groups[24] and groups[12] not in (groups[i] for i in range(25) if i != 12)

    env = VecEnv("conhex")
    board = env.game.board
    actions = list(range(env.num_holes))
    groups = symmetry_groups(env, env.initial_state(1), actions)
    # Independent count: orbits of the grid points under the two mirrors (the side-keeping symmetries).
    names = set(board.hole_names)
    orbits = set()
    for name in board.hole_names:
        c, r = ord(name[0]) - ord("A"), int(name[1:]) - 1
        images = {(c, r), (10 - c, r), (c, 10 - r), (10 - c, 10 - r)}
        assert all(f"{chr(65 + x)}{y + 1}" in names for x, y in images)
        orbits.add(frozenset(images))
    assert len(set(groups)) == len(orbits)


def test_a_winning_move_is_marked_winning():
    env = VecEnv("hex-4")
    # X (top-bottom) holds b1 b2 b3 and O (left-right) a4 c4 d4: b4 wins at once for either player,
    # so it is X's only winning move and every other move loses.
    state = play_moves(env, "b1 a4 b2 c4 b3 d4")
    analysis = analyse_moves(env, state, load_checkpoint(HEX5), sims=8, repeats=1,
                             exact=HexSolver(env.game.board))
    assert analysis.moves[0].move == "b4" and analysis.moves[0].win_rate == 1.0
    assert [m.move for m in analysis.moves if m.exact_win] == ["b4"]
    assert all(m.win_rate == 0.0 for m in analysis.moves[1:])
    assert analysis.exact_errors() == []
    assert not analysis.is_opening and all(m.swap is None for m in analysis.moves)


@pytest.mark.parametrize("sims", [16, 32, 64])
def test_the_shipped_hex4_model_classifies_every_opening_at_low_effort(sims):
    """The bar of the convergence issue on Hex 4x4: 16 of 16, stable, at every effort (measured at 16,
    32, 64, 128, 200, 400, 800, 1600 and 3200 simulations; the model trained before on a CPU got 14
    and 12 at 32 and 64, misjudging c3/b2 and d1/a4)."""
    env = VecEnv("hex-4")
    analysis = analyse_moves(env, env.initial_state(1), load_checkpoint(HEX4), HEX4, sims=sims, repeats=2,
                             exact=HexSolver(env.game.board))
    assert len(analysis.moves) == 16
    assert [m.move for m in analysis.exact_errors()] == []
    assert analysis.stable_count == 16


def test_swap_map_matches_the_exact_solver_on_hex4():
    env = VecEnv("hex-4")
    analysis = analyse_moves(env, env.initial_state(1), load_checkpoint(HEX4), HEX4, sims=200, repeats=2,
                             exact=HexSolver(env.game.board))
    assert len(analysis.moves) == 16
    assert analysis.exact_errors() == []
    truth = {t.action: t.first_player_wins for t in HexSolver(env.game.board).opening_truths()}
    for m in analysis.moves:
        assert m.swap == truth[m.action] == (m.win_rate > 0.5), m
    # Strongest first: every winning opening ranks above every losing one.
    ranks = [m.exact_win for m in analysis.moves]
    assert ranks == sorted(ranks, reverse=True)


@pytest.mark.parametrize("sims", [64, 1600])
def test_the_shipped_hex5_model_classifies_every_opening(sims):
    """The bar of the convergence issue: 25 of 25 openings as the exact solver says, stable over the
    repeats, at every effort (measured: 64, 200, 400, 800, 1600 and 3200 simulations; the model
    trained before, on a CPU, misjudged a2/e4 at 64 and a5/e1 from 400 on; checkpoints/README.md)."""
    env = VecEnv("hex-5")
    analysis = analyse_moves(env, env.initial_state(1), load_checkpoint(HEX5), HEX5, sims=sims, repeats=2,
                             exact=HexSolver(env.game.board), compare_sims=0)
    assert len(analysis.moves) == 25
    assert [m.move for m in analysis.exact_errors()] == []
    assert analysis.stable_count == 25


def test_every_reply_to_a5_keeps_its_side_over_repeated_deep_searches():
    """``openings hex5 --after a5 --sims 1600``: each of the 24 replies searched twice, both searches
    on the second player's losing side, as the solver says (the model trained before gave one reply,
    b3, 15% in one search and 70% in the other)."""
    env = VecEnv("hex-5")
    analysis = analyse_moves(env, play_moves(env, ["a5"]), load_checkpoint(HEX5), HEX5, sims=1600, repeats=2,
                             exact=HexSolver(env.game.board), compare_sims=0)
    assert len(analysis.moves) == 24
    assert [m.move for m in analysis.exact_errors()] == []
    assert analysis.stable_count == 24
    assert all(m.win_rate < 0.5 for m in analysis.moves)  # every reply loses for the second player


@pytest.mark.parametrize("sims", [64, 200])
def test_the_earlier_gumbel_search_classifies_every_hex5_opening_at_low_effort(sims):
    """The search the analysis used before (mctx's Gumbel, no proofs), kept as ``--search mctx``:
    25 of 25 at 64 and 200 simulations (with the released model also at 400 and 1600, measured; with the
    model trained before on a CPU it drifted to 23 from 400 on: docs/analysis.md, "Convergence")."""
    env = VecEnv("hex-5")
    analysis = analyse_moves(env, env.initial_state(1), load_checkpoint(HEX5), HEX5, sims=sims, repeats=2,
                             exact=HexSolver(env.game.board), compare_sims=0, search="mctx")
    assert [m.move for m in analysis.exact_errors()] == []
    assert {m.move for m in analysis.moves if m.win_rate > 0.5} == HEX5_FIRST_PLAYER_WINS


@pytest.mark.parametrize("sims", [64, 200])
def test_the_shipped_hex7_model_meets_the_bar_of_45_openings(sims):
    """The run's last checkpoint (iteration 500, chosen as the last, not by the table): 45, 45, 45 and
    47 of 49 at 64, 200, 400 and 800 simulations with the analysis search, 45-47 over seeds 0-3 at
    200, 400 and 800 (checkpoints/README.md)."""
    env = VecEnv("hex-7")
    analysis = analyse_moves(env, env.initial_state(1), load_checkpoint(HEX7), HEX7, sims=sims, repeats=2,
                             compare_sims=0)
    assert analysis.truth_source == "published" and len(analysis.moves) == 49
    assert 49 - len(analysis.exact_errors()) >= 45, [m.move for m in analysis.exact_errors()]
    # The clearest openings are never wrong: the centre wins, the corners a1 and g7 lose.
    rates = {m.move: m.win_rate for m in analysis.moves}
    assert rates["d4"] > 0.6 and rates["a1"] < 0.4 and rates["g7"] < 0.4


@pytest.mark.parametrize("sims, measured", [(64, 47), (200, 45)])
def test_the_shipped_hex7_average_classifies_most_openings(sims, measured):
    """The mean of the run's last four checkpoints (chosen earlier by the table itself): 47 of 49 at
    64 simulations and 45 at 200 with the analysis search. Two openings of slack: its errors are
    close calls, which the last bits of another processor can flip."""
    env = VecEnv("hex-7")
    analysis = analyse_moves(env, env.initial_state(1), load_checkpoint(HEX7_AVG), HEX7_AVG, sims=sims, repeats=2,
                             compare_sims=0)
    assert analysis.truth_source == "published" and len(analysis.moves) == 49
    assert 49 - len(analysis.exact_errors()) >= measured - 2, [m.move for m in analysis.exact_errors()]


def test_symmetric_openings_agree_within_the_spread():
    env = VecEnv("hex-5")
    analysis = analyse_moves(env, env.initial_state(1), load_checkpoint(HEX5), sims=16, repeats=2, seed=1)
    for group in analysis.groups():
        lo = min(s for m in group for s in m.samples)
        hi = max(s for m in group for s in m.samples)
        for m in group:
            assert m.win_rate_spread == pytest.approx(hi - lo)
            assert lo - 1e-6 <= m.own_win_rate <= hi + 1e-6
        for a in group:
            for b in group:
                assert abs(a.own_win_rate - b.own_win_rate) <= a.win_rate_spread + 1e-6
    priors = sum(m.prior for m in analysis.moves)
    assert priors == pytest.approx(1.0, abs=1e-4)


def png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_openings_command_json_and_pictures(tmp_path, capsys):
    out = tmp_path / "o.json"
    png, svg = tmp_path / "o.png", tmp_path / "o.svg"
    code = main(["openings", HEX4, "--sims", "16", "--repeats", "2", "--json", str(out), "--png", str(png),
                 "--svg", str(svg), "--size", "640x480", "--quiet"])
    assert code == 0
    text = capsys.readouterr().out
    assert "swap map" in text and "fairest openings" in text and "exact solver" in text
    data = json.loads(out.read_text())
    assert data["game"] == "hex-4" and data["checkpoint"] == HEX4 and data["sims"] == 16
    assert len(data["openings"]) == 16
    for row in data["openings"]:
        assert {"move", "prior", "value", "win_rate", "win_rate_spread", "swap"} <= set(row)
        assert 0 <= row["win_rate"] <= 1 and -1 <= row["value"] <= 1
        assert row["swap"] == (row["win_rate"] > 0.5)
    rates = [r["win_rate"] for r in data["openings"]]
    assert rates == sorted(rates, reverse=True)
    assert png_size(png) == (640, 480)
    head = svg.read_text()[:2000]
    assert 'width="640' in head and 'height="480' in head


def test_openings_command_checks_hex5_against_the_exact_solver(tmp_path, capsys):
    out = tmp_path / "o.json"
    assert main(["openings", HEX5, "--sims", "2", "--repeats", "1", "--json", str(out), "--quiet"]) == 0
    assert "exact solver: the search classifies" in capsys.readouterr().out
    rows = json.loads(out.read_text())["openings"]
    assert len(rows) == 25 and {r["move"] for r in rows if r["exact_win"]} == HEX5_FIRST_PLAYER_WINS


def test_openings_command_checks_hex7_against_the_published_solution(tmp_path, capsys):
    from conhex_zero.analysis.hex_openings import PUBLISHED_OPENINGS

    out = tmp_path / "o.json"
    assert main(["openings", HEX5, "--game", "hex-7:swap", "--sims", "2", "--repeats", "1", "--json", str(out),
                 "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "published solution (Hayward et al. 2003): the search classifies" in text and "published" in text
    data = json.loads(out.read_text())
    assert data["truth_source"] == "published" and len(data["openings"]) == 49
    assert {r["move"] for r in data["openings"] if r["exact_win"]} == PUBLISHED_OPENINGS[7]
    assert main(["openings", HEX5, "--game", "hex-7:swap", "--after", "d4", "--sims", "2", "--repeats", "1",
                 "--json", str(out), "--quiet"]) == 0  # a later position: no published truth
    assert json.loads(out.read_text())["truth_source"] is None


def test_state_winners_reports_progress():
    from conhex_zero.env.state import State

    env = VecEnv("hex-5")
    # X (top-bottom) c3: two disjoint edge templates, a win. X a1, O c3: the same for O.
    state = State.cat([play_moves(env, "c3"), play_moves(env, "a1 c3")])
    calls = []
    winners = HexSolver(env.game.board, book=False).state_winners(state, calls.append)
    assert winners.tolist() == [0, 1] and calls == [0, 1, 2]


@pytest.mark.parametrize("args, message", [
    (["--size", "big"], "WIDTHxHEIGHT"),
    (["--png", "x.jpg"], "must end in .png"),
    (["--json", "pyproject.toml/x.json"], "is not a directory"),
    (["--after", "a1", "a1"], "already taken"),
    (["--game", "hex-4:random=1"], "random opening"),
])
def test_openings_command_errors(args, message, capsys):
    assert main(["openings", HEX4, "--sims", "2", "--quiet", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_openings_command_makes_the_output_folders(tmp_path, capsys):
    out = tmp_path / "new" / "folder" / "hex4.json"
    assert main(["openings", HEX4, "--sims", "2", "--quiet", "--json", str(out)]) == 0
    assert out.is_file()


def test_openings_command_missing_checkpoint(capsys):
    assert main(["openings", "no/such.pt"]) == 2
    assert "no/such.pt" in capsys.readouterr().err


def test_openings_command_reviews_a_record(tmp_path, capsys):
    from conhex_zero.records import record_from_moves, write_sgf

    sgf = tmp_path / "game.sgf"
    # A short unfinished game: the review covers every move of it.
    sgf.write_text(write_sgf(record_from_moves("hex-4", "c2 b3 c3 a4 a1 b4".split())))
    out = tmp_path / "review.json"
    assert main(["openings", HEX4, "--record", str(sgf), "--sims", "32", "--json", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "biggest mistakes" in text
    data = json.loads(out.read_text())
    assert [m["move"] for m in data["moves"]] == "c2 b3 c3 a4 a1 b4".split()


def test_search_can_bar_root_actions_and_reports_progress():
    from conhex_zero.agents.evaluators import UniformEvaluator
    from conhex_zero.agents.game_search import GameSearch
    from conhex_zero.search import rng
    from conhex_zero.search.mcts import SearchConfig

    env = VecEnv("hex-3:swap")
    state = play_moves(env, "a1")  # the second player may swap
    swap = env.game.swap_action
    search = GameSearch(env, UniformEvaluator(env), SearchConfig(scheme="puct", num_simulations=40, fpu=1.0))
    keys = rng.make_keys(0, 1)
    free = search.run(state, keys)
    assert int(free.visit_counts[0, swap]) > 0
    barred = torch.zeros(1, env.num_actions, dtype=torch.bool)
    barred[0, swap] = True
    calls = []
    out = search.run(state, keys, exclude=barred, on_simulation=calls.append)
    assert int(out.visit_counts[0, swap]) == 0 and int(out.action[0]) != swap
    assert calls == list(range(1, 41))


@pytest.mark.parametrize("model, other, trained", [(HEX5, HEX4, "hex-4"), ("checkpoints/conhex-l4h64.pt", HEX4, "hex-4")])
def test_openings_refuses_another_game_as_other(capsys, model, other, trained):
    game = "hex-5" if model == HEX5 else "conhex"
    assert main(["openings", model, "--other", other, "--sims", "2", "--repeats", "1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == (f"conhex-zero openings: error: --other {other} was trained on {trained}, not {game}: the two "
                   f"models' openings cannot be compared (give --other a model of {game})\n")


def test_openings_refuses_searches_that_cannot_fit_before_any(capsys, monkeypatch):
    from conhex_zero.cli import numbers

    searched = []
    monkeypatch.setattr("conhex_zero.analysis.openings.analyse_moves", lambda *a, **k: searched.append(1))
    monkeypatch.setattr(numbers, "_available_bytes", lambda: 1e9)  # 1 GB free
    assert main(["openings", HEX5, "--sims", "20000", "--repeats", "4", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("conhex-zero openings: error: --sims x --repeats: 100 searches of 20,000 simulations "
                          "need about ") and "more than the 1.0 GB free on this machine" in err, err
    assert main(["openings", HEX5, "--sims", "2", "--repeats", "1", "--check-games", "10000", "--check-sims",
                 "1000", "--quiet"]) == 2
    assert "--check-games x --check-sims: 200,000 searches of 1,000 simulations" in capsys.readouterr().err
    assert searched == []


def test_openings_refuses_pictures_of_a_review(capsys, tmp_path):
    assert main(["openings", HEX4, "--record", "tests/fixtures/records/lg-hex-1804563.hsgf", "--png", str(tmp_path / "x.png")]) == 2
    assert "--png and --svg draw the openings map" in capsys.readouterr().err

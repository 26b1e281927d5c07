"""Opening analysis: the exact solver, symmetry groups, winning moves, the swap map against the
solver, the command's JSON and pictures."""

import json
import random
import struct

import pytest
import torch

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




@pytest.mark.parametrize("n", [2, 3, 4])
def test_solver_openings_match_an_independent_solver(n):
    truths = HexSolver(hex_board(n)).opening_truths()
    assert {t.action for t in truths if t.first_player_wins} == ReferenceSolver(n).winning_openings()


def test_solver_known_results():
    # Hex 4x4 (a classic result): exactly the four cells of the short diagonal win for the opener.
    win4 = {hex_board(4).hole_names[t.action] for t in HexSolver(hex_board(4)).opening_truths()
            if t.first_player_wins}
    assert win4 == {"d1", "c2", "b3", "a4"}


def test_solver_agrees_on_random_positions():
    solver, ref = HexSolver(hex_board(4)), ReferenceSolver(4)
    rnd = random.Random(3)
    for _ in range(40):
        cells = rnd.sample(range(16), rnd.randint(0, 7))
        first = sum(1 << c for c in cells[0::2])
        second = sum(1 << c for c in cells[1::2])
        if solver.connected(first, 0) or solver.connected(second, 1):
            continue
        to_move = len(cells) % 2
        ref_mover_wins = ref.mover_wins(first, second)
        assert (solver.winner(first, second, to_move) == to_move) == ref_mover_wins


def test_solver_refuses_what_it_cannot_solve():
    with pytest.raises(SolverError, match="Hex boards only"):
        HexSolver(conhex_board())
    with pytest.raises(SolverError, match="stops at"):
        HexSolver(hex_board(7))


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


@pytest.mark.parametrize("args, message", [
    (["--size", "big"], "WIDTHxHEIGHT"),
    (["--png", "x.jpg"], "must end in .png"),
    (["--json", "nodir/x.json"], "does not exist"),
    (["--after", "a1", "a1"], "already taken"),
    (["--game", "hex-4:random=1"], "random opening"),
])
def test_openings_command_errors(args, message, capsys):
    assert main(["openings", HEX4, "--sims", "2", "--quiet", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


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

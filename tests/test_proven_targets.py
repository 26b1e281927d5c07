"""Proven value targets (issue 56, item 3): late Hex positions of the replay learn their exact result.

Checked against an independent brute-force solver (``tests/hex_solver.py``) on Hex 4x4 self-play
positions whose value targets were all set wrong on purpose; the solver's node budget gives up
instead of guessing; the config refuses games the solver's results do not hold for.
"""

from __future__ import annotations

import json

import pytest

from conhex_zero.analysis.solver import HexSolver
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.games.hex import hex_board
from conhex_zero.games.game import parse_game
from conhex_zero.train.config import ConfigError
from conhex_zero.train.config_load import load_config
from conhex_zero.train.loop import train
from conhex_zero.train.proven_targets import ProvenTargets, ProvenTargetsError, check_game
from conhex_zero.train.replay import ReplayBuffer
from conhex_zero.train.selfplay import SelfPlay
from tests.hex_solver import HexSolver as BruteForce
from tests.test_train import TINY, FavoursFirstHole


def played_replay(positions: int = 400) -> tuple[VecEnv, ReplayBuffer]:
    env = VecEnv("hex-4")
    cfg = load_config(TINY, ["game=hex-4", "selfplay.full_fraction=1", "selfplay.random_first_moves=2"]).selfplay
    replay = ReplayBuffer(env, 5000)
    SelfPlay(env, cfg, FavoursFirstHole(env), seed=3).run(replay, positions)
    return env, replay


def bitboards(holes: list[int]) -> tuple[int, int]:
    return (sum(1 << i for i, v in enumerate(holes) if v == 0), sum(1 << i for i, v in enumerate(holes) if v == 1))


def test_a_node_budget_gives_up_rather_than_guess():
    solver = HexSolver(hex_board(5), book=False)
    b2 = 1 << 6  # the first player wins (hex_openings.SOLVED_OPENINGS) after about 10,000 positions
    assert solver.winner_within(b2, 0, 1, max_nodes=100) is None
    assert solver.node_limit is None  # the budget ends with the call
    fresh, size = HexSolver(hex_board(5), book=False), 25
    for key, hit in solver.table.items():  # only finished results were kept: each one is right
        mine, theirs, player = key & (1 << size) - 1, key >> size & (1 << size) - 1, key >> 2 * size
        assert bool(hit & 1) == fresh.mover_wins(mine, theirs, player)
    assert solver.winner_within(b2, 0, 1, max_nodes=10_000_000) == 0


@pytest.mark.parametrize("solver", ["python", "native"])
def test_late_positions_get_their_exact_value_and_only_they(solver):
    env, replay = played_replay()
    n = len(replay)
    ready = replay.ready[:n].clone()
    assert ready.sum() > 100
    replay.value[:n] = 1  # every target claims the mover wins: about half of them are wrong
    stats = ProvenTargets(env.game, max_empty=12, max_nodes=1_000_000, solver=solver).relabel(replay)
    holes = replay.store["holes"][:n]
    empty = (holes < 0).sum(1)
    in_range = ready & (empty <= 12)
    assert stats.examined == int(ready.sum()) and stats.in_range == stats.solved == int(in_range.sum()) > 50
    brute = BruteForce(4)
    wrong_before = 0
    for row in range(n):
        if not in_range[row]:
            assert replay.value[row] == 1  # out of range, or no targets yet: left as it was
            continue
        first, second = bitboards(holes[row].tolist())
        mover = int(replay.store["to_move"][row])
        assert bin(first).count("1") - bin(second).count("1") == mover  # no swap: the counts say who moves
        exact = 1 if brute.mover_wins(first, second) else -1
        assert int(replay.value[row]) == exact, row
        wrong_before += exact != 1
    assert stats.changed == wrong_before > 10
    again = ProvenTargets(env.game, max_empty=12, max_nodes=1_000_000, solver=solver).relabel(replay)
    assert again.examined == 0  # every ready row is looked at once


def test_rows_written_again_are_examined_again():
    env, replay = played_replay(300)
    proven = ProvenTargets(env.game, max_empty=16, max_nodes=1_000_000)
    proven.relabel(replay)
    n = len(replay)
    assert replay.examined[:n].equal(replay.ready[:n])
    state = replay.load_state_dict(replay.state_dict())  # the flag is saved with the buffer
    assert state.numel() and replay.examined[:n].equal(replay.ready[:n])
    SelfPlay(env, load_config(TINY, ["game=hex-4", "selfplay.full_fraction=1"]).selfplay,
             FavoursFirstHole(env), seed=4).run(replay, 200)
    assert proven.relabel(replay).examined > 0


@pytest.mark.parametrize("spec, words", [("conhex", "Hex board"), ("hex-5:forbid=2", "plain Hex"),
                                         ("hex-5:extra-stone", "plain Hex")])
def test_games_the_solver_does_not_hold_for_are_refused(spec, words):
    with pytest.raises(ProvenTargetsError, match=words):
        check_game(parse_game(spec))
    with pytest.raises(ConfigError, match="selfplay.proven_targets"):
        load_config(TINY, [f"game={spec}", "selfplay.proven_targets=20"])


def test_the_solver_choice_is_checked():
    with pytest.raises(ConfigError, match="selfplay.proven_solver: python or native"):
        load_config(TINY, ["game=hex-4", "selfplay.proven_solver=nativ"])
    with pytest.raises(ProvenTargetsError, match="native solver"):
        check_game(parse_game("hex-9"), "native")  # 81 holes: the C solver's bitboards hold 64
    with pytest.raises(ConfigError, match="selfplay.proven_targets: the native solver"):
        load_config(TINY, ["game=hex-9", "selfplay.proven_targets=20", "selfplay.proven_solver=native"])
    check_game(parse_game("hex-9"))  # the Python solver takes any board


def test_the_native_solver_settles_middle_game_positions_the_python_one_does_not():
    """Hex 6x6 positions with 18-26 empty cells, the same budget of positions each: the C solver
    (fill-in, H-search) settles more of them, and where both settle one they agree."""
    env = VecEnv("hex-6")
    cfg = load_config(TINY, ["game=hex-6", "selfplay.games=16", "selfplay.full_fraction=1",
                             "selfplay.random_first_moves=8"]).selfplay
    replay = ReplayBuffer(env, 5000)
    SelfPlay(env, cfg, FavoursFirstHole(env), seed=5).run(replay, 800)
    n = len(replay)
    replay.value[:n] = 0  # neither +1 nor -1: a solved row is one whose target moved
    empty = (replay.store["holes"][:n] < 0).sum(1)
    replay.ready[:n] &= (empty >= 18)
    native, python = replay, ReplayBuffer(env, 5000)
    python.load_state_dict(native.state_dict())
    a = ProvenTargets(env.game, max_empty=26, max_nodes=200, solver="python").relabel(python)
    b = ProvenTargets(env.game, max_empty=26, max_nodes=200, solver="native").relabel(native)
    assert a.in_range == b.in_range > 30
    assert b.solved > a.solved
    both = (python.value[:n] != 0) & (native.value[:n] != 0)
    assert int(both.sum()) == a.solved  # what the Python solver settled, the native one did too
    assert python.value[:n][both].equal(native.value[:n][both])


def test_positions_that_may_still_swap_are_left_alone():
    proven = ProvenTargets(parse_game("hex-4:swap"), max_empty=16, max_nodes=1000)
    assert proven.first_ply == 2  # the position after the first move may still be swapped


def test_a_run_with_proven_targets_logs_what_it_solved(tmp_path):
    config = load_config(TINY, ["game=hex-4", "iterations=2", "eval.every=2", "selfplay.proven_targets=10"])
    train(config, tmp_path / "run", progress=False, log=lambda *_: None)
    lines = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert sum(x["proven/solved"] for x in lines) > 0
    assert all(x["proven/solved"] <= x["proven/examined"] for x in lines)


def test_a_run_with_the_native_solver_logs_what_it_solved(tmp_path):
    config = load_config(TINY, ["game=hex-4", "iterations=2", "eval.every=2", "selfplay.proven_targets=10",
                                "selfplay.proven_solver=native"])
    train(config, tmp_path / "run", progress=False, log=lambda *_: None)
    lines = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert sum(x["proven/solved"] for x in lines) > 0

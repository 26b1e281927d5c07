"""The knowledge bench of issue 56 (``benchmarks/knowledge_data.py``, ``benchmarks/knowledge_bench.py``):
positions with exact values, made small here and checked against the solver; the committed set's
values checked on a sample; a bench run scored on held-out positions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conhex_zero.analysis.solver import HexSolver
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data" / "knowledge.pt"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, timeout=600)


def _check_values(board: dict, count: int) -> None:
    """``count`` positions of a board of the set, solved again: the stored values are exact."""
    env = VecEnv(board["game"])
    solver = HexSolver(env.game.board, max_holes=env.num_holes, book=False)
    states = State(**board["states"])
    for i in range(0, board["value"].shape[0], max(1, board["value"].shape[0] // count)):
        row = states[i]
        winner = int(solver.state_winners(row)[0])
        assert (1 if winner == int(row.to_move[0]) else -1) == int(board["value"][i]), i
        assert int(board["empty"][i]) == int((row.holes < 0).sum()) and not bool(row.done[0])


@pytest.mark.slow
def test_a_small_set_is_made_solved_and_benched(tmp_path):
    data, results = tmp_path / "k.pt", tmp_path / "k.json"
    made = _run("benchmarks/knowledge_data.py", "--out", str(data), "--boards", "hex-5:48", "hex-6:12", "--seconds", "120")
    assert made.returncode == 0, made.stderr
    boards = torch.load(data, weights_only=True)["boards"]
    assert set(boards) == {"hex-5", "hex-6"} and boards["hex-5"]["value"].shape[0] == 48
    assert set(boards["hex-5"]["value"].tolist()) == {-1, 1}  # wins and losses for the mover
    assert int(boards["hex-6"]["empty"].max()) <= 24
    _check_values(boards["hex-5"], 12)
    bench = _run("benchmarks/knowledge_bench.py", "--data", str(data), "--models", "l1h8", "l1h8c", "--seconds", "1",
                 "--json", str(results))
    assert bench.returncode == 0, bench.stderr
    out = json.loads(results.read_text())
    assert set(out["candidates"]) == {"l1h8", "l1h8c"} and out["sizes"]["hex-5"]["test"] > 0
    for row in out["candidates"].values():
        final = row["final"]
        assert row["steps"] > 0 and 0 <= final["all"]["sign"] <= 1 and final["all"]["positions"] == 10 + 2
        assert final["hex-5"]["positions"] + final["hex-6"]["positions"] == final["all"]["positions"]
    assert "l1h8c" in bench.stdout and "all sign" in bench.stdout


def test_the_committed_set_holds_exact_values():
    data = torch.load(DATA, weights_only=True)
    sizes = {b: d["value"].shape[0] for b, d in data["boards"].items()}
    assert sizes == {"hex-5": 3000, "hex-6": 2400, "hex-7": 2400, "hex-8": 1200}
    _check_values(data["boards"]["hex-5"], 40)
    _check_values(data["boards"]["hex-7"], 10)


@pytest.mark.parametrize("game", ["hex-6", "hex-7", "hex-8"])
def test_no_position_of_the_set_is_an_opening(game):
    """The first moves of Hex 6x6-8x8 are the books' exam: the set holds no position after one stone."""
    board = torch.load(DATA, weights_only=True)["boards"][game]
    cells = int(game.split("-")[1]) ** 2
    assert int(board["empty"].max()) <= cells - 10


def test_solver_reach_settles_a_small_book_and_gives_up_within_a_budget(tmp_path):
    """``benchmarks/solver_reach.py`` on the shipped Hex 5x5 book: with room, every position tried is
    settled; with a budget of one position searched, only those its static rules decide."""
    book = str(ROOT / "checkpoints" / "books" / "hex5-l4h64")
    roomy, tight = tmp_path / "roomy.json", tmp_path / "tight.json"
    for out, nodes in ((roomy, "1000000"), (tight, "1")):
        result = _run("benchmarks/solver_reach.py", book, "--nodes", nodes, "--per-count", "4", "--json", str(out))
        assert result.returncode == 0, result.stderr
        assert "settled" in result.stdout
    roomy_rows = json.loads(roomy.read_text())["results"][0]["by_empty"]
    tight_rows = json.loads(tight.read_text())["results"][0]["by_empty"]
    assert roomy_rows and all(r["settled"] == r["tried"] <= 4 for r in roomy_rows)
    assert sum(r["settled"] for r in tight_rows) < sum(r["settled"] for r in roomy_rows)
    bad = _run("benchmarks/solver_reach.py", str(tmp_path / "no-such-book"), "--json", str(tmp_path / "x.json"))
    assert bad.returncode == 2 and "no-such-book" in bad.stderr and "Traceback" not in bad.stderr

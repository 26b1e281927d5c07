"""The report: winning chains on hand-made positions, counts that add up, the Markdown and pictures."""

import json
import struct

import torch

from conhex_zero.analysis.game_stats import random_games, winning_chain
from conhex_zero.cli.main import main
from conhex_zero.env.notation import play_moves
from conhex_zero.env.vec_env import VecEnv

HEX4 = "checkpoints/hex4-l3h32.pt"




def test_winning_chain_is_the_connecting_group():
    env = VecEnv("hex-3")
    # X (top-bottom): b1 b2 b3 connect; X's c1 touches b1, so it belongs to the group. O: a1 a2 c3.
    state = play_moves(env, "b1 a1 c1 a2 b2 c3 b3")
    assert int(state.winner[0]) == 0
    chain = {env.game.board.hole_names[c] for c in winning_chain(state)[0].nonzero().flatten().tolist()}
    assert chain == {"b1", "c1", "b2", "b3"}
    assert not winning_chain(env.initial_state(1)).any()


def test_winning_chain_leaves_out_stray_stones():
    env = VecEnv("hex-4")
    # X: b1 b2 b3 b4 connect; X's d4 touches none of them. O: a1 a2 a3 c4.
    state = play_moves(env, "b1 a1 d4 a2 b2 a3 b3 c4 b4")
    assert int(state.winner[0]) == 0
    chain = {env.game.board.hole_names[c] for c in winning_chain(state)[0].nonzero().flatten().tolist()}
    assert chain == {"b1", "b2", "b3", "b4"}


def test_conhex_winning_chain_touches_both_sides():
    env = VecEnv("conhex:noswap")
    draws, first_wins, lengths = random_games(env, 64, seed=5)
    assert draws == 0 and 0 < first_wins < 64 and len(lengths) == 64
    # One random game to the end: its chain holds cells of both of the winner's sides.
    gen = torch.Generator().manual_seed(1)
    state = env.initial_state(1)
    while not bool(state.done[0]):
        state = env.step(state, env.random_actions(state, gen))
    winner = int(state.winner[0])
    cells = winning_chain(state)[0].nonzero().flatten().tolist()
    sides = {s for c in cells for s in env.game.board.cell_sides[c]}
    assert {0, 1} <= sides if winner == 0 else {2, 3} <= sides
    assert all(int(state.cells[0, c]) == winner for c in cells)


def test_report_command_writes_markdown_and_pictures(tmp_path, capsys):
    out = tmp_path / "rep"
    code = main(["report", HEX4, "--games", "4", "--sims", "4", "--random-games", "200", "--opening-sims", "4",
                 "--out", str(out), "--size", "400x400", "--quiet"])
    assert code == 0
    md = (out / "report.md").read_text()
    for heading in ("## 1. Do all holes", "## 2. Which cells", "## 4. Does the first player",
                    "## 5. How can the game be made fairer", "## 6. Can the game end in a draw"):
        assert heading in md
    for picture in ("holes_influence.png", "policy_weight.png", "winning_chains.png", "first_player.png",
                    "openings.png", "game_lengths.png"):
        path = out / picture
        assert f"({picture})" in md and path.stat().st_size > 1000
    assert struct.unpack(">II", (out / "openings.png").read_bytes()[16:24]) == (400, 400)
    data = json.loads((out / "report.json").read_text())
    stats = data["stats"]
    assert stats["no_swap"]["games"] == stats["swap"]["games"] == 4
    assert stats["no_swap"]["draws"] == stats["swap"]["draws"] == stats["random_draws"] == 0
    assert stats["decided_games"] == 8 and stats["random_games"] == 200
    assert stats["swap"]["game"] == "hex-4:swap" and stats["no_swap"]["swaps"] == 0
    # Every decided game has a chain, and a chain cell is a conquered cell.
    assert all(c <= k for c, k in zip(stats["cell_on_chain"], stats["cell_conquered"]))
    assert sum(stats["cell_on_chain"]) >= 4 * stats["decided_games"]  # a Hex 4x4 chain has >= 4 cells
    assert "0 draws in 8 self-play games" in md
    assert len(data["openings"]["openings"]) == 16
    # the terminal gets the main numbers, the same as report.json's
    text = capsys.readouterr().out
    ns, ws = stats["no_swap"], stats["swap"]
    assert f"wrote {out / 'report.md'} (and its pictures in {out})\nsummary (95% intervals, over distinct games):" in text
    assert f"  first player won, no pie rule:  {100 * ns['first_wins'] / 4:.1f}% [" in text
    assert f"({ns['first_wins']}/4)\n  first player won, pie rule:     {100 * ws['first_wins'] / 4:.1f}% [" in text
    assert f"the second player swapped in {100 * ws['swaps'] / 4:.1f}% [" in text
    assert f"  first player won, random play:  {100 * stats['random_first_wins'] / 200:.1f}% [" in text
    assert (f"  mean game length: {sum(ns['lengths']) / 4:.1f} without the pie rule, {sum(ws['lengths']) / 4:.1f} "
            f"with it (pieces placed); 0 drawn games") in text
    assert "  most influential cells (the player holding one at the end won): " in text  # Hex: cells
    assert "  strongest opening: " in text and " openings stable at 2 and 4 simulations" in text


def test_report_command_errors(tmp_path, capsys):
    assert main(["report", HEX4, "--games", "0"]) == 2
    assert main(["report", HEX4, "--game", "hex-4:noswap,extra-stone", "--games", "1"]) == 2
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["report", HEX4, "--out", str(blocker), "--games", "1"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "extra-stone" in err and "not a directory" in err


def test_rate_chart_takes_certain_results(tmp_path):
    from conhex_zero.analysis.pictures import draw_rates
    from conhex_zero.ladder.ratings import wilson

    rows = [(name, w / g, *wilson(w, g)) for name, w, g in (("all", 100, 100), ("none", 0, 100), ("one", 1, 1))]
    path = draw_rates(rows, tmp_path / "r.svg", title="rates")
    assert path.stat().st_size > 1000


def test_report_without_a_network(tmp_path, capsys):
    out = tmp_path / "rollout"
    assert main(["report", "mcts-rollout:4", "--game", "hex-3", "--games", "2", "--random-games", "50",
                 "--out", str(out), "--size", "300x300", "--quiet"]) == 0
    md = (out / "report.md").read_text()
    assert "mcts-rollout:4" in md and "Dirichlet root noise" in md and "## 6." in md
    assert not (out / "policy_weight.png").exists() and not (out / "openings.png").exists()
    data = json.loads((out / "report.json").read_text())
    assert data["openings"] is None and data["stats"]["positions"] == 0
    text = capsys.readouterr().out
    assert "summary (95% intervals, over distinct games):" in text and "strongest opening" not in text


def test_report_refuses_what_it_would_ignore_or_could_not_do(tmp_path, capsys, monkeypatch):
    from conhex_zero.cli import numbers

    played = []
    monkeypatch.setattr("conhex_zero.analysis.game_stats.collect", lambda *a, **k: played.append(1))
    out = ["--out", str(tmp_path / "r"), "--quiet"]
    assert main(["report", HEX4, "--opening-sims", "0", "--other", HEX4, *out]) == 2
    assert "--opening-sims 0 skips the opening table, which --other and --check-games add to" in \
        capsys.readouterr().err
    assert main(["report", HEX4, "--opening-sims", "0", "--check-games", "2", *out]) == 2
    assert "--opening-sims 0 skips the opening table" in capsys.readouterr().err
    assert main(["report", "mcts-rollout:4", "--other", HEX4, "--game", "hex-4", *out]) == 2
    assert "--other and --check-games need a checkpoint" in capsys.readouterr().err
    assert main(["report", HEX4, "--other", "checkpoints/hex5-l4h64.pt", *out]) == 2
    assert "--other checkpoints/hex5-l4h64.pt was trained on hex-5, not hex-4" in capsys.readouterr().err
    assert main(["report", HEX4, "--game", "hex-4:random=1", "--other", HEX4, *out]) == 2
    assert "a game with random opening pieces has no opening table" in capsys.readouterr().err
    monkeypatch.setattr(numbers, "_available_bytes", lambda: 1e9)
    assert main(["report", HEX4, "--games", "10000", "--sims", "1000", *out]) == 2
    assert "--games x --sims: 10,000 searches of 1,000 simulations need about" in capsys.readouterr().err
    assert played == [] and not (tmp_path / "r").exists()


def test_report_out_is_checked_before_the_work(tmp_path, capsys, monkeypatch):
    played = []
    monkeypatch.setattr("conhex_zero.analysis.game_stats.collect", lambda *a, **k: played.append(1))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for out in (blocker / "report", "/proc/report"):
        assert main(["report", HEX4, "--out", str(out), "--games", "1", "--quiet"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"conhex-zero report: error: --out {out}: ") and err.count("\n") == 1, err
    assert played == []

"""Ratings that can be trusted: the Bradley-Terry fit, the ladder file and command, the schedule."""

import json
import random

from conhex_zero.cli.main import main
from conhex_zero.ladder.ratings import Result, fit, score_to_elo, wilson
from conhex_zero.ladder.store import Ladder, nearest, trim


def synthetic(true, first_move, games, seed):
    rng = random.Random(seed)
    out = []
    names = list(true)
    for a in names:
        for b in names:
            if a != b:
                p = 1 / (1 + 10 ** (-(true[a] - true[b] + first_move) / 400))
                w = sum(rng.random() < p for _ in range(games))
                out.append(Result(a, b, w, games - w))
    return out


def test_fit_recovers_known_ratings_within_their_error_bars():
    inside_2se = total = 0
    for seed in range(6):
        rng = random.Random(100 + seed)
        true = {"random": 0.0, **{f"p{i}": rng.uniform(-300, 900) for i in range(6)}}
        first_move = rng.uniform(-80, 120)
        r = fit(synthetic(true, first_move, 120, seed), "random")
        for name, value in true.items():
            if name == "random":
                assert r.elo[name] == 0 and r.stderr[name] == 0
                continue
            z = abs(r.elo[name] - value) / r.stderr[name]
            assert z < 3.5, (seed, name)
            inside_2se += z < 2
            total += 1
        assert abs(r.first_move - first_move) < 3.5 * r.first_move_stderr
    assert inside_2se / total >= 0.85  # about 95% of estimates lie within two standard errors


def test_more_games_mean_smaller_errors_and_perfect_records_stay_finite():
    true = {"random": 0, "a": 200, "b": 400}
    few, many = fit(synthetic(true, 0, 20, 1), "random"), fit(synthetic(true, 0, 500, 1), "random")
    assert many.stderr["a"] < few.stderr["a"] / 3
    r = fit([Result("a", "random", 30, 0), Result("random", "a", 0, 30)], "random")
    assert 500 < r.elo["a"] < 5000 and r.stderr["a"] > 100


def test_conversions():
    assert score_to_elo(0.5) == 0 and round(score_to_elo(0.76)) == 200 and score_to_elo(1.0) == float("inf")
    low, high = wilson(50, 100)
    assert low < 0.5 < high and round(high - 0.5, 3) == round(0.5 - low, 3)


def test_elo_interval_ends_at_a_perfect_score_are_infinite_every_time():
    """All games won: the interval's upper end is a score of exactly 1, so its Elo end is inf (never
    +6382 from a score of 0.9999999999999999); none won: the lower end is -inf."""
    for games in range(1, 301):
        low, high = wilson(games, games)
        assert high == 1.0 and score_to_elo(high) == float("inf") and score_to_elo(low) < 2000
        low, high = wilson(0, games)
        assert low == 0.0 and score_to_elo(low) == float("-inf") and score_to_elo(high) > -2000
        if games > 1:  # otherwise the ends stay finite
            low, high = wilson(games - 1, games)
            assert 0 < low < high < 1 and abs(score_to_elo(high)) < 2000  # finite, far from 6382


def test_ladder_file_round_trip_trim_and_schedule(tmp_path):
    ladder = Ladder.open(tmp_path)
    ladder.add_player("random", "reference")
    for i, (a, b) in enumerate([(18, 2), (14, 6), (11, 9)], start=1):
        name = f"iter_{i:04d}"
        ladder.add_player(name, "checkpoint", iteration=i, minutes=float(i), step=10 * i)
        ladder.add_match(name, "random", {"player1": [a // 2, a - a // 2], "player2": [(20 - a) // 2, 20 - a - (20 - a) // 2]},
                         "hex-5", iteration=i)
    again = Ladder.open(tmp_path)
    assert again.players.keys() == ladder.players.keys() and again.results == ladder.results
    ratings = again.fit()
    assert ratings.anchor == "random"
    assert ratings.elo["iter_0001"] > ratings.elo["iter_0002"] > ratings.elo["iter_0003"] > 0
    assert nearest(ratings, ["iter_0001", "iter_0003"], ratings.elo["iter_0002"], 1) in (["iter_0001"], ["iter_0003"])
    trim(tmp_path, 2)
    trimmed = Ladder.open(tmp_path)
    assert "iter_0003" not in trimmed.players and len(trimmed.results) == 4


def test_ladder_command_prints_a_table_and_draws_a_png(tmp_path, capsys):
    for p1, p2 in (("mcts-rollout:32", "random"), ("mcts-rollout:32", "mcts-rollout:4"), ("mcts-rollout:4", "random")):
        assert main(["arena", p1, p2, "--game", "hex-4", "--games", "12", "--quiet", "--ladder", str(tmp_path),
                     "--records", str(tmp_path / f"{p1}-{p2}.jsonl")]) == 0
    capsys.readouterr()
    assert main(["ladder", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "anchor random = 0 Elo" in out and "first-move advantage" in out and "mcts-rollout:32" in out
    png = tmp_path / "ladder.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    assert main(["ladder", str(tmp_path), "--json", "--anchor", "mcts-rollout:4"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["anchor"] == "mcts-rollout:4" and {p["name"] for p in data["players"]} == {
        "random", "mcts-rollout:4", "mcts-rollout:32"}


def test_ladder_command_errors(tmp_path, capsys):
    assert main(["ladder", str(tmp_path)]) == 2
    assert "no results" in capsys.readouterr().err

"""The opening table that stands up (``analysis/opening_table.py``): several efforts at once, a
second model's verdicts and where the two agree, and self-play checks of the openings that matter."""

import json

import pytest

from conhex_zero.analysis.opening_table import OpeningCheck, OpeningTable, check_openings, openings_to_check
from conhex_zero.analysis.openings import MoveAnalysis, PositionAnalysis, analyse_moves
from conhex_zero.cli.main import main
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import load_checkpoint

HEX4 = "checkpoints/hex4-l3h32.pt"
HEX5 = "checkpoints/hex5-l4h64.pt"


def test_every_effort_is_searched_as_it_would_be_alone():
    env = VecEnv("hex-4")
    ckpt = load_checkpoint(HEX4)
    table = analyse_moves(env, env.initial_state(1), ckpt, sims=32, repeats=2, seed=3, compare_sims=(8, 16))
    assert table.efforts == [8, 16, 32] and table.compare_sims == 8
    alone = {sims: analyse_moves(env, env.initial_state(1), ckpt, sims=sims, repeats=2, seed=seed, compare_sims=0)
             for sims, seed in ((8, 3 + 7919), (16, 3 + 2 * 7919))}
    for m in table.moves:
        assert set(m.efforts) == {8, 16, 32} and m.efforts[32] == m.win_rate
        if m.proven:
            continue  # a proof settles every effort
        for sims, other in alone.items():
            assert m.efforts[sims] == pytest.approx(next(x for x in other.moves if x.move == m.move).win_rate)
        # stable exactly when every effort's searches fall on one side (the pooled rates do too)
        if m.stable:
            assert len({rate > 0.5 for rate in m.efforts.values()}) == 1


def test_stability_needs_the_same_side_at_every_effort():
    env = VecEnv("hex-5")
    ckpt = load_checkpoint(HEX5)
    two = analyse_moves(env, env.initial_state(1), ckpt, sims=16, repeats=2, seed=0, compare_sims=8)
    three = analyse_moves(env, env.initial_state(1), ckpt, sims=16, repeats=2, seed=0, compare_sims=(8, 2))
    assert three.stable_count <= two.stable_count  # one more effort can only unsettle openings
    by_move = {m.move: m for m in three.moves}
    for m in two.moves:
        if not m.stable:
            assert not by_move[m.move].stable


def _move(name: str, group: int, win: float, stable: bool = True) -> MoveAnalysis:
    return MoveAnalysis(move=name, action=group, prior=0.1, net_win_rate=win, value=1 - 2 * win, win_rate=win,
                        win_rate_spread=0.0, own_win_rate=win, visits=10, group=group, swap=win > 0.5, stable=stable)


def _analysis(name: str, rows: list[tuple[str, float, bool]]) -> PositionAnalysis:
    moves = sorted((_move(m, k, w, s) for k, (m, w, s) in enumerate(rows)), key=lambda x: -x.win_rate)
    return PositionAnalysis(game="hex-3", checkpoint=name, sims=8, repeats=2, mover=0, moves=moves, is_opening=True)


def test_agreement_counts_only_openings_stable_for_both_models():
    mine = _analysis("a", [("a1", 0.8, True), ("b1", 0.6, True), ("c1", 0.4, True), ("a2", 0.3, False),
                           ("b2", 0.55, True)])
    other = _analysis("b", [("a1", 0.7, True), ("b1", 0.45, True), ("c1", 0.2, True), ("a2", 0.6, True),
                            ("b2", 0.3, False)])
    table = OpeningTable(mine, other)
    assert table.agreement() == (2, 3)  # a1, c1 agree, b1 differs; a2 and b2 are not stable for both
    assert {m.move for m in table.differing()} == {"b1", "a2", "b2"}
    chosen = openings_to_check(mine, other, count=1)
    assert [(g[0].move, why) for g, why in chosen] == [("a1", "best"), ("b1", "lines differ"),
                                                        ("b2", "lines differ"), ("a2", "worst")]
    data = table.to_json()
    assert data["other"] == {"checkpoint": "b", "stable": 4, "agree_on_stable": 2, "stable_in_both": 3}
    assert {r["move"]: r["lines_agree"] for r in data["openings"]} == {
        "a1": True, "b1": False, "c1": True, "a2": False, "b2": False}


def test_a_check_agrees_only_where_its_interval_excludes_one_half():
    check = OpeningCheck(moves=["a1"], reason="best", table_win_rate=0.7, table_swap=True, games=20, first_wins=17,
                         low=0.64, high=0.95)
    assert check.verdict == "first" and check.agrees is True
    assert OpeningCheck(["a1"], "worst", 0.7, True, 20, 20, 3, 0.05, 0.36).agrees is False
    assert OpeningCheck(["a1"], "worst", 0.3, False, 20, 20, 3, 0.05, 0.36).agrees is True
    assert OpeningCheck(["a1"], "best", 0.7, True, 20, 20, 11, 0.34, 0.74).agrees is None


def test_self_play_checks_count_distinct_games_from_each_opening():
    env = VecEnv("hex-4")
    ckpt = load_checkpoint(HEX4)
    analysis = analyse_moves(env, env.initial_state(1), ckpt, sims=16, repeats=1, compare_sims=0)
    chosen = openings_to_check(analysis, None, count=1)
    assert [why for _, why in chosen] == ["best", "worst"]
    checks = check_openings(env, ckpt, HEX4, chosen, games=8, sims=8, seed=1, progress=False)
    for check, (group, _) in zip(checks, chosen):
        assert check.moves == [m.move for m in group] and check.played == 8
        assert 1 <= check.games <= 8 and 0 <= check.first_wins <= check.games and check.low <= check.high
    best, worst = checks
    assert best.first_wins / best.games > worst.first_wins / worst.games  # the model's own play says so too
    with pytest.raises(ValueError, match="even"):
        check_openings(env, ckpt, HEX4, chosen, games=3, sims=8)


def test_openings_command_writes_the_whole_table(tmp_path, capsys):
    out = tmp_path / "t.json"
    assert main(["openings", HEX4, "--sims", "8,16,32", "--other", HEX4, "--check-games", "2", "--check-count",
                 "1", "--check-sims", "4", "--json", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "every search at 8 and 16 and 32 simulations" in text
    assert "the swap decisions agree on 16 of the 16 openings stable for both" in text
    assert "2 openings checked;" in text
    data = json.loads(out.read_text())
    assert data["efforts"] == [8, 16, 32] and data["other"]["agree_on_stable"] == data["other"]["stable_in_both"]
    assert all(set(row["efforts"]) == {"8", "16", "32"} and row["lines_agree"] for row in data["openings"])
    assert data["checks"]["games_per_opening"] == 2 and len(data["checks"]["openings"]) == 2
    assert main(["openings", HEX4, "--check-games", "3"]) == 2
    assert "--check-games must be an even number" in capsys.readouterr().err

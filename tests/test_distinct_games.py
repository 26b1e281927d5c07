"""Arena matches are distinct games: openings drawn without replacement, copies counted once."""

import json

import pytest
import torch

from conhex_zero.agents.arena import GameRecord, MatchResult, play_until_decided
from conhex_zero.agents.distinct import GameCanon
from conhex_zero.agents.match_openings import OpeningError, plan_openings
from conhex_zero.agents.players import make_player
from conhex_zero.cli.main import main
from conhex_zero.env.notation import play_moves
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.games.game import parse_game
from conhex_zero.ladder.ratings import score_to_elo, wilson

HEX5 = "checkpoints/hex5-l4h64.pt"


def orbits(game: str) -> int:
    """Classes of one-move openings, counted straight from the board's colour-keeping symmetries."""
    board = parse_game(game).board
    perms = [s.hole_perm for s in board.symmetries if not s.exchanges_sides]
    return len({min(p[h] for p in perms) for h in range(board.num_holes)})


@pytest.mark.parametrize("game, one_move", [("hex-5", 13), ("hex-4", 8), ("hex-11", 61), ("conhex", None)])
def test_one_move_openings_are_the_symmetry_classes(game, one_move):
    expected = orbits(game) if one_move is None else one_move
    assert orbits(game) == expected  # Hex: (n*n + 1) // 2 for odd n, n*n / 2 for even n
    plan = plan_openings(parse_game(game), expected, 1, seed=0)
    assert plan.plies == 1 and plan.available == expected and not plan.repeats
    canon = GameCanon(game)
    assert len({canon.opening_key(row) for row in plan.moves.tolist()}) == expected  # every class once


def test_openings_grow_longer_when_the_short_ones_run_out():
    game = parse_game("hex-5")
    plan = plan_openings(game, 14, 1, seed=3)  # one more pair than Hex 5x5 has distinct first moves
    assert plan.plies == 2 and plan.available == 300 and plan.pairs == 14 and not plan.repeats
    canon = GameCanon(game)
    assert len({canon.opening_key(row) for row in plan.moves.tolist()}) == 14
    # 25 x 24 two-move openings; the 180-degree turn pairs them up (no two-move opening is its own image).
    assert plan_openings(game, 301, 1, seed=0).plies == 3
    # Same seed, same openings; another seed, others.
    assert torch.equal(plan.moves, plan_openings(game, 14, 1, seed=3).moves)
    assert not torch.equal(plan.moves, plan_openings(game, 14, 1, seed=4).moves)


def test_three_move_openings_are_positions_not_move_orders():
    game = parse_game("hex-4")
    plan = plan_openings(game, 60, 3, seed=0)  # a1 b2 c3 and c3 b2 a1 are one position
    canon = GameCanon(game)
    keys = [canon.opening_key(row) for row in plan.moves.tolist()]
    assert len(set(keys)) == 60
    env = VecEnv(game)
    for row in plan.moves.tolist():
        assert int(play_moves(env, row).winner[0]) < 0  # legal, and the game still runs


def test_a_tiny_board_reuses_its_openings_evenly():
    game = parse_game("hex-2")
    plan = plan_openings(game, 40, 1, seed=0)
    assert plan.repeats and plan.available < 40
    canon = GameCanon(game)
    counts: dict = {}
    for row in plan.moves.tolist():
        key = canon.opening_key(row)
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == plan.available and max(counts.values()) - min(counts.values()) <= 1


def test_fixed_openings_keep_their_length():
    game = parse_game("hex-5")
    plan = plan_openings(game, 20, 1, seed=0, fixed=True)
    assert plan.plies == 1 and plan.repeats and plan.available == 13
    empty = plan_openings(game, 5, 0, seed=0, fixed=True)
    assert empty.plies == 0 and empty.moves.shape == (5, 0)


def test_an_opening_that_cannot_fit_is_a_clear_error(capsys):
    with pytest.raises(OpeningError, match="would fill the board"):
        plan_openings(parse_game("hex-3"), 1, 20, seed=0)
    assert main(["arena", "random", "random", "--game", "hex-3", "--opening-plies", "20"]) == 2
    err = capsys.readouterr().err
    assert "--opening-plies 20" in err and "would fill the board" in err and "Traceback" not in err


def test_a_game_and_its_mirror_image_are_one_game():
    canon = GameCanon("conhex")
    env = VecEnv("conhex")
    game = [env.game.parse_move(m) for m in ["B3", "swap", "F6", "D3", "E4", "H9", "G2"]]
    tables = env.symmetries
    for k in range(1, len(canon)):
        image = canon.map_moves(game, k)
        assert canon.game_key(image) == canon.game_key(game)
        # The image is a legal game whose every position is the image of the original's: under the
        # symmetry before the swap, under its conjugate by the swap symmetry after it.
        def named(perm):
            return tables.index(next(n for n in tables.names if tuple(env.game.board.symmetry(n).hole_perm) == perm))

        for ply in range(1, len(game) + 1):
            sym = named(canon.before_swap[k] if ply < 2 else canon.after_swap[k])
            mapped = tables.apply(play_moves(env, game[:ply]), sym)
            assert torch.equal(mapped.holes, play_moves(env, image[:ply]).holes)
            assert torch.equal(mapped.cells, play_moves(env, image[:ply]).cells)
        assert canon.after_swap[k] != canon.before_swap[k] or k == 1  # the mirrors change places
    other = game[:-1] + [env.game.parse_move("G3")]
    assert canon.game_key(other) != canon.game_key(game)


def test_a_deterministic_hex5_match_of_200_games_is_200_distinct_games(capsys, tmp_path):
    records = tmp_path / "m.jsonl"
    code = main(["arena", f"policy:{HEX5}", "mcts-rollout:8", "--games", "200", "--seed", "101", "--json",
                 "--records", str(records)])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["games"] == 200
    assert data["distinct_games"] == 200 and data["distinct_openings"] == 100 and data["opening_plies"] == 2
    games = [json.loads(line) for line in records.read_text().splitlines()]
    assert len({(g["first"], tuple(g["moves"])) for g in games}) == 200  # not one copy, counted plainly
    assert len({tuple(g["moves"][:2]) for g in games}) == 100
    low, high = data["score_ci95"]
    assert (low, high) == pytest.approx(wilson(data["wins"][0], 200), abs=1e-4)


def _record(index: int, first: str, second: str, moves: list[str], winner: int) -> GameRecord:
    return GameRecord(index=index, game="hex-5", seed=0, first=first, second=second, moves=moves, opening=1,
                      winner=winner, winner_name=(first, second)[winner], result="connection")


def test_copies_count_once_in_the_interval_the_elo_and_the_ladder(tmp_path):
    a, b = "A", "B"
    m, m2 = ["a1", "e1", "b2", "e2"], ["c3", "b3", "c2", "b2"]
    games = [
        _record(0, a, b, m, 0),
        _record(1, b, a, m, 1),  # the same moves with the players' colours exchanged: another game
        _record(2, a, b, ["e5", "a5", "d4", "a4"], 0),  # the 180-degree image of game 0: a copy
        _record(3, a, b, m2, 1),
        _record(4, a, b, m2, 1),  # a plain copy of game 3
    ]
    result = MatchResult("hex-5", (a, b), 5, [3, 2], {"player1": [2, 1], "player2": [0, 2]}, records=games)
    assert result.distinct_indices() == [0, 1, 3]
    assert result.distinct_games == 3 and result.distinct_wins == [2, 1]
    assert result.score == 3 / 5 and result.distinct_score == 2 / 3
    assert result.score_ci95 == wilson(2, 3) and result.elo == score_to_elo(2 / 3)
    by = result.distinct_wins_by_colour()
    assert by == {"player1": [1, 1], "player2": [0, 1]}
    from conhex_zero.ladder.store import Ladder

    ladder = Ladder.open(tmp_path)
    ladder.add_match(a, b, by, "hex-5")
    assert sum(r.first_wins + r.second_wins for r in ladder.results) == 3


def test_until_decided_never_repeats_an_opening_between_rounds():
    env = VecEnv("hex-5")
    r = play_until_decided(env, make_player("mcts-rollout:4", env, 0), make_player("mcts-rollout:4", env, 1),
                           max_games=40, round_games=10, seed=2, progress=False, opening_plies=1)
    assert r.games == 40 and r.rounds == 4 and r.decided is False
    canon = GameCanon("hex-5")
    openings = {canon.opening_key([env.game.parse_move(m) for m in rec.moves[:rec.opening]]) for rec in r.records}
    assert len(openings) == 20 and r.distinct_openings == 20 and r.opening_plies == 2

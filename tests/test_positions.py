"""Hand-made positions with known outcomes, on the vectorised engine and the reference together."""

import pytest
import torch

from conhex_zero.env.vec_env import IllegalActionError, VecEnv
from conhex_zero.env.notation import play_moves
from helpers import play_both

X, O, NONE = 0, 1, -1


def cell(states, k, c):
    return int(states[k].cells[0, c])


def test_first_to_half_conquers_and_keeps_the_cell():
    # Cell 5 = C2 D2 B3 D3 B4 C4 (need 3); cell 1 = C2 D2 E2 and cell 0 = A1 C2 B3 (need 2).
    moves = ["C2", "D3", "D2", "B4", "B3", "C4", "B5"]
    env, s, _ = play_both("conhex", moves)
    assert cell(s, 2, 1) == NONE and cell(s, 2, 5) == NONE
    assert cell(s, 3, 1) == X  # D2: 2 of 3 around an edge cell
    assert cell(s, 4, 5) == NONE  # O holds 2 of 6 around cell 5
    # B3 conquers two cells at once: 5 (3 of 6) and the corner 0 (2 of 3).
    assert cell(s, 5, 5) == X and cell(s, 5, 0) == X
    assert cell(s, 5, 9) == NONE  # cell 9 = B3 B4 B5: one piece each
    # O now also holds 3 of cell 5's holes, but the cell stays X's.
    assert cell(s, 6, 5) == X
    assert int(s[6].counts[0, O, 5]) == 3 and int(s[6].counts[0, X, 5]) == 3
    assert cell(s, 7, 9) == X  # B5: 2 of 3, although O took B4 first


def test_centre_cell_needs_three_of_five():
    moves = ["F5", "A1", "E6", "K1", "F6"]
    env, s, _ = play_both("conhex", moves)
    assert cell(s, 3, 20) == NONE  # F5 + E6: 2 of 5
    assert cell(s, 5, 20) == X  # + the centre hole F6


def test_first_player_wins_down_the_left_edge_through_both_corners():
    # Corner cells 0 (top+left) and 36 (bottom+left) count as top and bottom for the first player.
    x = ["A1", "B3", "B5", "B7", "B9", "A11"]
    o = ["F6", "F5", "F7", "E6", "G6"]
    moves = [m for pair in zip(x, o + [None]) for m in pair if m]
    env, s, _ = play_both("conhex", moves)
    assert all(int(st.winner[0]) == NONE for st in s[:-1])
    assert int(s[-1].winner[0]) == X and int(s[-1].ply[0]) == 11
    assert [cell(s, -1, c) for c in (0, 9, 18, 27, 36)] == [X] * 5


def test_second_player_wins_along_the_top_through_both_corners():
    o = ["A1", "C2", "E2", "G2", "I2", "K1"]
    x = ["F6", "F5", "F7", "E6", "G6", "D6"]
    moves = [m for pair in zip(x, o) for m in pair]
    env, s, _ = play_both("conhex:noswap", moves)
    assert all(int(st.winner[0]) == NONE for st in s[:-1])
    assert int(s[-1].winner[0]) == O
    assert [cell(s, -1, c) for c in (0, 1, 2, 3, 4)] == [O] * 5


def test_swap_mirrors_the_piece_and_changes_its_colour():
    env, s, _ = play_both("conhex", ["C2", "swap"])
    after = s[2]
    b3, c2 = env.game.parse_move("B3"), env.game.parse_move("C2")
    assert int(after.holes[0, b3]) == O and int(after.holes[0, c2]) == NONE
    assert int(after.to_move[0]) == X and int(after.ply[0]) == 2
    assert int(after.counts[0, O].sum()) == 3  # B3 lies on cells 0, 5 and 9
    # A swap of a piece that had conquered a cell carries the cell over (Hex: need 1).
    env, s, _ = play_both("hex-5:swap", ["b3", "swap"])
    c2 = env.game.parse_move("c2")
    assert int(s[2].cells[0, c2]) == O and int(s[2].to_move[0]) == X


def test_swap_on_the_diagonal_keeps_the_hole():
    env, s, _ = play_both("conhex", ["F6", "swap", "F5"])
    assert int(s[2].holes[0, env.game.parse_move("F6")]) == O


@pytest.mark.parametrize("spec, moves, reason", [
    ("conhex", ["swap"], "only allowed as the second player's first move"),
    ("conhex", ["F6", "E6", "swap"], "only allowed"),
    ("conhex", ["F6", "swap", "swap"], "only allowed"),
    ("conhex:noswap", ["F6", "swap"], "swap rule is off"),
    ("hex-5", ["c3", "swap"], "swap rule is off"),
    ("conhex", ["F6", "F6"], "already taken"),
    ("hex-5:forbid=1", ["c3"], "forbidden zone"),
])
def test_illegal_moves_are_reported(spec, moves, reason):
    env = VecEnv(spec)
    with pytest.raises(Exception, match=reason) as info:
        play_moves(env, moves)
    assert info.value.move_number == len(moves)


def test_forbidden_zone_only_bans_the_first_move():
    env = VecEnv("hex-5:forbid=1")
    state = play_moves(env, ["a1", "c3"])  # the second player may play the centre
    assert int(state.holes[0, env.game.parse_move("c3")]) == O


def test_hex_wins_follow_the_six_neighbour_grid():
    env, s, _ = play_both("hex-3", ["a1", "c1", "a2", "c2", "a3"])
    assert [int(st.winner[0]) for st in s] == [-1, -1, -1, -1, -1, X]
    env, s, _ = play_both("hex-3", ["a1", "a2", "b1", "b2", "a3", "c2"])
    assert int(s[-1].winner[0]) == O
    # c1-b2-a3 is connected (the (c+1, r-1) diagonal); a1-b2-c3 is not.
    env, s, _ = play_both("hex-3", ["c1", "a1", "b2", "b1", "a3"])
    assert int(s[-1].winner[0]) == X
    env, s, _ = play_both("hex-3", ["a1", "a2", "b2", "b1", "c3"])
    assert int(s[-1].winner[0]) == NONE


def test_extra_stone_gives_the_second_player_two_pieces():
    env, s, _ = play_both("hex-5:extra-stone", ["c3", "b2", "d2", "a1"])
    assert [int(st.to_move[0]) for st in s] == [X, O, O, X, O]


def test_finished_games_do_not_change():
    env = VecEnv("hex-3")
    state = play_moves(env, ["a1", "c1", "a2", "c2", "a3"])
    assert bool(state.done[0])
    for action in (1, 4, 8, env.game.swap_action):
        assert env.step(state, torch.tensor([action])).equal(state)
    with pytest.raises(IllegalActionError, match="already over"):
        env.step(state, torch.tensor([4]), check=True)


def test_checked_step_names_every_bad_game():
    env = VecEnv("conhex")
    state = env.initial_state(3)
    f6 = env.game.parse_move("F6")
    state = env.step(state, torch.tensor([f6, f6, f6]))
    with pytest.raises(IllegalActionError) as info:
        env.step(state, torch.tensor([0, f6, 99]), check=True)
    assert info.value.games == [1, 2]
    assert "already taken" in info.value.reasons[0] and "out of range" in info.value.reasons[1]

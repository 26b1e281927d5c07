"""Terminal pictures: pieces at their holes, conquered cells marked, status lines."""

from conhex_zero.env.notation import play_moves, render_state
from conhex_zero.env.vec_env import VecEnv


def test_conhex_picture_marks_pieces_and_cells():
    env = VecEnv("conhex:noswap")
    state = play_moves(env, ["C2", "F6", "E2"])  # X conquers edge cell 1 (C2 D2 E2)
    text = render_state(env, state)
    lines = text.splitlines()
    row2 = lines[3]
    assert row2.startswith(" 2  |") and row2[16] == "X" and row2[28] == "X"  # C2 and E2
    assert "@" not in text and lines[11][34] == "O"  # the centre hole F6
    assert lines[2][21:23] == "XX"  # cell 1's label
    assert lines[-1] == "O to move (left-right), ply 4"


def test_cell_ids_and_hex_picture():
    env = VecEnv("conhex")
    text = render_state(env, env.initial_state(1), cell_ids=True)
    assert "20" in text and "40" in text
    env = VecEnv("hex-3")
    state = play_moves(env, ["a1", "c1", "a2", "c2", "a3"])
    lines = render_state(env, state).splitlines()
    assert lines[0] == "    a b c"
    assert lines[1] == " 1  X . O" and lines[2] == "  2  X . O" and lines[3] == "   3  X . ."
    assert lines[-1].startswith("X wins (top-bottom connected)")


def test_colour_only_when_asked():
    env = VecEnv("hex-3")
    state = play_moves(env, ["b2"])
    assert "\033[" not in render_state(env, state)
    assert "\033[" in render_state(env, state, color=True)

"""Game spec strings, rule options, turn order and move names; bad input gets clear errors."""

import pytest

from conhex_zero.games.game import GameSpecError, MoveError, parse_game


def test_defaults():
    assert parse_game("conhex").swap is True  # published rules: pie rule on
    assert parse_game("hex-11").swap is False
    assert parse_game("hex").board.name == "hex-11"
    assert parse_game("HEX-7").board.name == "hex-7"
    assert parse_game(" conhex ").spec == "conhex"


@pytest.mark.parametrize("spec, canonical", [
    ("conhex:noswap", "conhex:noswap"),
    ("conhex:swap=off", "conhex:noswap"),
    ("conhex:swap", "conhex"),
    ("hex-7:swap", "hex-7:swap"),
    ("hex-11:forbid=2,random=1", "hex-11:forbid=2,random=1"),
    ("hex-9:extra-stone", "hex-9:extra-stone"),
    ("hex-9:extra_stone", "hex-9:extra-stone"),
    ("hex-5: random=2 , swap", "hex-5:swap,random=2"),
])
def test_options_round_trip(spec, canonical):
    g = parse_game(spec)
    assert g.spec == canonical
    assert parse_game(g.spec) == g


@pytest.mark.parametrize("spec, message", [
    ("", "empty game spec"),
    ("chess", "unknown game 'chess'"),
    ("conhx", "Did you mean 'conhex'"),
    ("hex-1", "between 2 and 19"),
    ("hex-20", "between 2 and 19"),
    ("hex-x", "unknown game"),
    ("conhex:swpa", "Did you mean 'swap'"),
    ("conhex:swap=maybe", "expected on or off"),
    ("hex-5:forbid", "needs a whole number"),
    ("hex-5:forbid=-1", "needs a whole number"),
    ("hex-5:forbid=0", "at least 1"),
    ("hex-5:forbid=3", "bans no cell"),
    ("hex-3:random=5", "would fill"),
    ("conhex:extra-stone", "choose one"),
    ("hex-5:swap,noswap", "given twice"),
])
def test_bad_specs(spec, message):
    with pytest.raises(GameSpecError, match=message):
        parse_game(spec)


def test_turn_tables():
    assert parse_game("hex-5").turn_table[:6].tolist() == [0, 1, 0, 1, 0, 1]
    # Extra stone: the second player's first turn has two pieces.
    assert parse_game("hex-5:extra-stone").turn_table[:7].tolist() == [0, 1, 1, 0, 1, 0, 1]
    # Random opening pieces come first (alternating), then the first player moves.
    g = parse_game("hex-5:random=1,extra-stone")
    assert g.turn_table[:7].tolist() == [0, 1, 0, 1, 1, 0, 1]
    assert parse_game("conhex").swap_ply == 1
    assert parse_game("conhex:random=2").swap_ply == 5
    assert parse_game("hex-5").swap_ply is None


def test_forbidden_zone():
    g = parse_game("hex-5:forbid=1")
    names = [g.board.hole_names[h] for h in range(g.num_holes) if g.forbidden_holes[h]]
    assert len(names) == 9 and "c3" in names and "a1" not in names and "b2" in names
    assert parse_game("hex-5:forbid=2").forbidden_holes.sum() == 1  # only c3


def test_move_names():
    g = parse_game("conhex")
    assert g.parse_move("F6") == g.parse_move("f6") == g.board.hole_index["f6"]
    assert g.parse_move("SWAP") == g.swap_action == 69
    assert g.action_name(69) == "swap"
    assert all(g.parse_move(g.action_name(a)) == a for a in range(g.num_actions))
    with pytest.raises(MoveError, match="nearby holes: D5, E4, E6, F5"):
        g.parse_move("E5")
    with pytest.raises(MoveError, match="not a move"):
        g.parse_move("hello")
    with pytest.raises(MoveError, match="out of range"):
        g.action_name(70)
    h = parse_game("hex-11")
    assert h.parse_move("k11") == 120 and h.num_actions == 122


@pytest.mark.parametrize("spec, typed, suggested", [
    ("conhex", "Z9", "nearby holes: J9"),  # no column Z: the nearest hole of row 9
    ("conhex", "f7x", "nearby holes: F7"),  # a character too many
    ("conhex", "F6F", "nearby holes: F6"),
    ("conhex", "6f", "nearby holes: F6"),  # two characters exchanged
    ("conhex", "ff6", "nearby holes: F6"),
    ("conhex", "E5", "nearby holes: D5, E4, E6, F5"),  # no hole E5: its neighbours on the board
    ("hex-11", "Z9", "nearby cells: k9"),
    ("hex-11", "f7x", "nearby cells: f7"),
    ("hex-11", "F6F", "nearby cells: f6"),
    ("hex-3", "d4", "nearby cells: c3"),
])
def test_typos_near_a_name_get_the_nearest_names(spec, typed, suggested):
    with pytest.raises(MoveError) as err:
        parse_game(spec).parse_move(typed)
    assert str(err.value).endswith(suggested)


@pytest.mark.parametrize("typed", ["hello", "x", "help", "12345", "a", "swapp"])
def test_texts_far_from_every_name_get_no_suggestion(typed):
    with pytest.raises(MoveError) as err:
        parse_game("conhex").parse_move(typed)
    assert "nearby" not in str(err.value)


def test_hex_messages_say_cell_and_conhex_messages_say_hole():
    from conhex_zero.env.notation import play_moves
    from conhex_zero.env.vec_env import VecEnv

    with pytest.raises(MoveError, match=r"\(cells are named like a1 .. e5\)"):
        parse_game("hex-5").parse_move("q")
    with pytest.raises(MoveError, match=r"\(holes are named like A1 .. "):
        parse_game("conhex").parse_move("q")
    for spec, move, word in (("hex-5", "c3", "cell"), ("conhex", "F6", "hole")):
        env = VecEnv(spec)
        state = play_moves(env, [move])
        assert env.why_illegal(state, 0, env.game.parse_move(move)) == f"{move}: the {word} is already taken"
    with pytest.raises(GameSpecError, match="would fill 18 of the 25 cells of hex-5"):
        parse_game("hex-5:random=9")
    with pytest.raises(GameSpecError, match="bans no hole on conhex"):
        parse_game("conhex:forbid=9")

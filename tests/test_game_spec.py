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
    ("hex-5:forbid=3", "bans no hole"),
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

"""Game records: real Little Golem / olympiad games replay to their results, SGF round trips, clear
errors for broken files, the replay command on records, and review_game finding a blunder."""

import json
from pathlib import Path

import pytest

from conhex_zero.agents.arena import play_match
from conhex_zero.agents.players import make_player
from conhex_zero.cli.main import main
from conhex_zero.env.notation import play_moves
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.records import (GameRecordData, RecordError, check_record, parse_records, read_records,
                                 select_record, write_sgf)
from conhex_zero.records.review import format_review, review_game

FIXTURES = Path(__file__).parent / "fixtures" / "records"
CHECKPOINT = Path(__file__).parent.parent / "checkpoints" / "hex5-l4h64.pt"

# file, format, game, players, winner, ending, number of moves
REAL_GAMES = [
    ("lg-conhex-2203451.sgf", "littlegolem-conhex", "conhex", ("David Milne", "leandro ?"), 0, "resign", 31),
    ("lg-conhex-2169205.sgf", "littlegolem-conhex", "conhex", ("David Milne", "mmKALLL"), 1, "resign", 24),
    ("lg-conhex-2273728.sgf", "littlegolem-conhex", "conhex", ("David Milne", "mmKALLL"), 1, "resign", 22),
    ("lg-conhex-2282829-move30.sgf", "littlegolem-conhex", "conhex", ("mmKALLL%20?", "Jos%20Dekker"),
     None, "unknown", 30),
    ("lg-hex-2424182.hsgf", "littlegolem-hex", "hex-13:swap", ("Alan Turing", "bennok"), 1, "resign", 78),
    ("lg-hex-1804563.hsgf", "littlegolem-hex", "hex-11:swap", ("lazy\\player", "Shumacher;]"), 0, "resign", 3),
    ("hex-olympiad2009-mohex-wolve.sgf", "sgf-hex", "hex-11:swap", ("Mohex 0.9.GIT", "Wolve 0.9.GIT"), 0,
     "connection", 87),
    ("hex-olympiad2009-six-mohex.sgf", "sgf-hex", "hex-11:swap", ("Six 0.5.4", "Mohex 0.9.GIT"), 1,
     "connection", 62),
]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ real games
@pytest.mark.parametrize("name, fmt, game, players, winner, ending, length", REAL_GAMES)
def test_real_games_replay_to_their_recorded_result(name, fmt, game, players, winner, ending, length):
    (record,) = read_records(FIXTURES / name)
    assert (record.format, record.game, record.players) == (fmt, game, players)
    assert (record.winner, record.ending, len(record.moves)) == (winner, ending, length)
    assert len(record.notation) == length
    state = check_record(record)  # every move legal
    if ending == "connection":  # our engine declares the recorded winner
        assert int(state.winner[0]) == winner
    else:  # a resignation (or an unfinished record) leaves a running position
        assert not bool(state.done[0])
        if ending == "resign" and fmt.startswith("littlegolem"):
            assert int(state.to_move[0]) == 1 - winner  # the loser resigned on their own turn
    # the engine's moves replay on their own, as conhex-zero replay GAME MOVES would
    assert int(play_moves(VecEnv(game), record.moves).ply[0]) == length


def test_little_golem_conhex_counts_rows_from_the_bottom():
    text = "(;FF[CONHEX]VA[CONHEX]PB[a]PW[b];B[F6];R[A1];B[K11];R[C10];B[J3];R[E9])"
    (record,) = parse_records(text)
    assert record.moves == ["F6", "A11", "K1", "C2", "J9", "E3"]  # our rows count from the top
    assert record.notation == ["F6", "A1", "K11", "C10", "J3", "E9"]
    with pytest.raises(RecordError, match="rows counted from the bottom"):
        parse_records("(;FF[CONHEX]VA[CONHEX];B[B1])")  # our B11 is no hole


def test_little_golem_conhex_swap_mirrors_in_its_own_diagonal():
    # game 2169205 begins B[J3];R[swap];B[J9]: Little Golem's J3 is our J9, and its swap leaves
    # the second player's piece at label C10 (our C2), so J9 and J3 (label J9) are free after it
    (record,) = parse_records("(;FF[CONHEX]VA[CONHEX];B[J3];R[swap];B[J9])")
    assert record.moves == ["B3", "swap", "J3"] and record.notation == ["J3", "swap", "J9"]
    env = VecEnv("conhex")
    state = check_record(record)
    holes = state.holes[0].tolist()
    owner = {name: holes[env.game.parse_move(name)] for name in ("C2", "J3", "J9", "B3")}
    assert owner == {"C2": 1, "J3": 0, "J9": -1, "B3": -1}
    text = write_sgf(record)
    assert ";B[J3];R[swap];B[J9]" in text  # written back in Little Golem's own terms


def test_hex_sgf_old_hexgui_swap_pieces_is_swap_sides():
    # HexGui <= 1.0 wrote swap-pieces and let the swapper's colour move again (a swap of sides):
    # the piece stays; we store our swap with the later moves mirrored, and the first player is X
    (old,) = parse_records("(;FF[4]GM[11]SZ[5]PB[a]PW[b];B[b1];W[swap-pieces];W[c3];B[e2])")
    assert old.moves == ["b1", "swap", "c3", "b5"]
    (new,) = parse_records("(;FF[4]GM[11]SZ[5]PB[a]PW[b];B[b1];W[swap-pieces];B[c3];W[e2])")
    assert new.moves == ["b1", "swap", "c3", "e2"]
    for record in (old, new):
        check_record(record)


# ---------------------------------------------------------------- round trips
ROUND_TRIPS = [
    GameRecordData("conhex", ["F6", "swap", "E6", "G6", "C2"], ("Ann", "Bob]\\"), 0, "resign"),
    GameRecordData("conhex", ["C2", "F6", "F5"], ("Ann", "Bob"), 1, "forfeit"),
    GameRecordData("conhex:random=1", ["A1", "K11", "F6"], ("Ann", "Bob")),
    GameRecordData("hex-5:swap", ["c3", "swap", "b2", "d2", "b4"], ("Ann", "Bob"), 1, "resign"),
    GameRecordData("hex-5", "e1 a3 e2 b3 a5 c3 e4 d3 a1 e3".split(), ("Ann", "Bob"), 1, "connection"),
    GameRecordData("hex-9:extra-stone", ["e5", "a1", "b1", "c3"], ("", "")),
]


@pytest.mark.parametrize("record", ROUND_TRIPS, ids=lambda r: r.game)
def test_sgf_round_trip(record):
    check_record(record)
    text = write_sgf(record)
    assert ("FF[CONHEX]" in text) == record.game.startswith("conhex")
    assert ("GM[11]" in text) == record.game.startswith("hex")
    if record.game.startswith("hex"):
        assert f"SZ[{record.game.split('-')[1].split(':')[0]}]" in text
    (back,) = parse_records(text)
    assert (back.game, back.moves, back.players, back.winner, back.ending) == \
        (record.game, record.moves, record.players, record.winner, record.ending)


@pytest.mark.parametrize("name", [g[0] for g in REAL_GAMES])
def test_real_games_round_trip(name):
    (record,) = read_records(FIXTURES / name)
    (back,) = parse_records(write_sgf(record))
    assert (back.game, back.moves, back.players, back.winner, back.ending) == \
        (record.game, record.moves, record.players, record.winner, record.ending)
    if record.format == "littlegolem-conhex":
        assert back.notation == record.notation  # the same Little Golem labels


def test_a_file_may_hold_several_games(tmp_path, capsys):
    names = [g[0] for g in REAL_GAMES if g[1] == "littlegolem-conhex"]
    path = tmp_path / "many.sgf"
    path.write_text("\n".join((FIXTURES / n).read_text() for n in names))
    records = read_records(path)
    assert [r.index for r in records] == [0, 1, 2, 3]
    assert [len(r.moves) for r in records] == [31, 24, 22, 30]
    assert select_record(records, 2).players == ("David Milne", "mmKALLL")
    code, out, _ = run(capsys, "replay", "--record", path, "--index", 1, "--json")
    data = json.loads(out)
    assert code == 0 and data["record"]["index"] == 1 and data["record"]["ending"] == "resign"
    assert data["record"]["notation"][:3] == ["J3", "swap", "J9"] and data["moves"][:3] == ["B3", "swap", "J3"]


# ---------------------------------------------------------------------- errors
@pytest.mark.parametrize("text, message", [
    ("(;FF[CONHEX]VA[CONHEX];B[J3];R[H5", "line 1, column 31: a property value is not closed"),
    ("(;FF[4]GM[11]SZ[5]\n;B[c3];W[d2]\n;B[e1]W[a2])", "line 3: a node has two moves"),
    ("(;FF[4]GM[11]SZ[5]\n;B[c3]\n;W[d2]", "line 1, column 1: the game is not closed"),
    ("(;FF[4]GM[11]SZ[5];B[c3];W[d2]#)", "line 1, column 31: expected ';', '(' or ')', found '#'"),
    ("(;FF[4]GM[11]SZ[5];B[c3];W[d2];B 4)", "expected '[' after the property B"),
    ("(;FF[4]GM[11]SZ[5];B[c3];W[d2])\nhello", "line 2, column 1: expected '(' to start a game"),
    ("(;FF[4]GM[11]SZ[5];B[z9])", "'z9' is not a point of the hex-5 board"),
    ("(;FF[4]GM[11]SZ[5];B[c3];B[d4])", "move 2 (B[d4]): B moves out of turn"),
    ("(;FF[4]GM[11]SZ[5];B[c3];W[c3])", "move 2 (c3): c3: the cell is already taken"),
    ("(;FF[4]GM[11]SZ[5];B[a1];W[resign];B[b2])", "the game already ended with a resign"),
    ("(;FF[4]GM[11]SZ[5]RE[W+];B[c3];W[resign])", "RE[W+] says the second player won"),
    ("(;FF[4]GM[11]SZ[5];AB[c3])", "setup stones (AB) are not supported"),
    ("(;GM[1]SZ[19];B[dd])", "GM[1] is not Hex"),
    ("(;FF[4]GM[11]SZ[5:7];B[a1])", "SZ[5:7] is not a square board size"),
    ("(;FF[4]GM[11]SZ[5]RU[conhex];B[a1])", "RU[conhex] is a conhex game, but the record is hex-5"),
    ("hello", "not a game record file"),
    ('{"game": "hex-4"}', "line 1: not an arena record (missing moves"),
    ('{"game": "hex-4",', "line 1, column 18: not a JSON object"),
])
def test_malformed_records_give_a_record_error(text, message):
    with pytest.raises(RecordError) as info:
        parse_records(text, "bad.sgf")
    assert message in str(info.value) and str(info.value).startswith("bad.sgf")
    assert "\n" not in str(info.value)


def test_replay_command_on_real_records(capsys):
    code, out, _ = run(capsys, "replay", "--record", FIXTURES / "lg-conhex-2169205.sgf")
    assert code == 0 and "mmKALLL (O) won: David Milne (X) resigned" in out
    code, out, _ = run(capsys, "replay", "--record", FIXTURES / "hex-olympiad2009-six-mohex.sgf")
    assert code == 0 and "Mohex 0.9.GIT (O) won by connection" in out and "O wins" in out
    code, out, _ = run(capsys, "replay", "--record", FIXTURES / "lg-hex-2424182.hsgf", "--json")
    data = json.loads(out)
    assert data["winner"] is None and data["record"]["winner_name"] == "bennok"
    assert data["record"]["format"] == "littlegolem-hex" and data["moves"][0] == "a4"


def test_replay_command_on_broken_records(tmp_path, capsys):
    bad = tmp_path / "bad.sgf"
    bad.write_text("(;FF[CONHEX]VA[CONHEX]\n;B[J3];R[Z5])")
    code, _, err = run(capsys, "replay", "--record", bad)
    assert code == 2 and err.count("\n") == 1
    assert "line 2" in err and "'Z5' is not a point of the conhex board" in err
    bad.write_text("(;FF[CONHEX]VA[CONHEX];B[J3];R[H5]")
    code, _, err = run(capsys, "replay", "--record", bad)
    assert code == 2 and err.count("\n") == 1 and "line 1, column 1: the game is not closed" in err
    code, _, err = run(capsys, "replay", "--record", FIXTURES / "lg-conhex-2169205.sgf", "--index", 5)
    assert code == 2 and "has no game with index 5" in err
    code, _, err = run(capsys, "replay", "--record", tmp_path / "missing.sgf")
    assert code == 2 and "no record file" in err


def test_arena_records_convert_to_sgf(tmp_path, capsys):
    env = VecEnv("hex-4")
    result = play_match(env, make_player("random", env, 0), make_player("random", env, 1), 4, seed=3, progress=False)
    path = result.write_records(tmp_path / "games.jsonl")
    records = read_records(path)
    assert [r.index for r in records] == [0, 1, 2, 3]
    for rec, original in zip(records, result.records):
        assert rec.format == "arena" and rec.moves == original.moves and rec.winner == original.winner
        assert rec.players == (original.first, original.second) and rec.ending == "connection"
    out_path = tmp_path / "g2.sgf"
    code, out, _ = run(capsys, "replay", "--record", path, "--index", 2, "--to-sgf", out_path)
    assert code == 0 and "as recorded" in out and f"SGF written to {out_path}" in out
    (back,) = read_records(out_path)
    assert back.moves == result.records[2].moves and back.winner == result.records[2].winner
    assert back.game == "hex-4" and back.players == (result.records[2].first, result.records[2].second)
    code, _, _ = run(capsys, "replay", "hex-5", "c3", "swap", "--to-sgf", tmp_path / "m.sgf")
    assert code == 2  # swap is not legal in hex-5 (no swap rule)
    code, _, _ = run(capsys, "replay", "hex-5:swap", "c3", "swap", "b2", "--to-sgf", tmp_path / "m.sgf")
    assert code == 0 and read_records(tmp_path / "m.sgf")[0].moves == ["c3", "swap", "b2"]


# ---------------------------------------------------------------------- review
BLUNDER_GAME = "e1 a3 e2 b3 a5 c3 e4 d3 a1 e3".split()  # move 9 (X a1) ignores O's threat at e3


def test_review_finds_the_blunder():
    review = review_game("hex-5", BLUNDER_GAME, str(CHECKPOINT), simulations=8, seed=0)
    assert len(review.moves) == len(BLUNDER_GAME) and review.winner == 1
    assert [m.ply for m in review.moves] == list(range(1, 11))
    assert [m.player for m in review.moves] == [0, 1] * 5
    for m in review.moves:
        assert 0.0 <= m.value_before <= 100.0 and 0.0 <= m.value_after <= 100.0 and m.best_move
    for a, b in zip(review.moves, review.moves[1:]):
        assert a.value_after == b.value_before
    worst = review.mistakes[0]
    assert worst.ply == 9 and worst.move == "a1" and worst.best_move == "e3" and worst.loss > 80
    assert review.moves[-1].value_after == 0.0  # O connected
    assert all(m.loss < 50 for m in review.moves if m.ply != 9)
    text = format_review(review)
    assert "move 9: X a1" in text and "the AI preferred e3" in text


def test_review_with_rollouts_is_batched_and_deterministic():
    one = review_game("hex-5", BLUNDER_GAME, "mcts-rollout:16", seed=1)
    chunked = review_game("hex-5", BLUNDER_GAME, "mcts-rollout:16", seed=1, max_batch=3)
    assert [m.to_json() for m in one.moves] == [m.to_json() for m in chunked.moves]
    assert len(one.moves) == 10 and one.simulations == 16
    assert all(0.0 <= m.value_before <= 100.0 for m in one.moves)
    data = one.to_json()
    assert set(data["moves"][0]) == {"ply", "move", "notation", "player", "value_before", "value_after",
                                     "best_move", "loss", "best_value_after", "mistake"}


def _swing(m) -> float:
    """The mover's win percent before a move minus after the AI's preferred move."""
    return (m.value_before - m.best_value_after) * (1 if m.player == 0 else -1)


def test_review_lists_a_blunder_beyond_the_search_noise():
    review = review_game("hex-5", BLUNDER_GAME, str(CHECKPOINT), simulations=8, seed=0)
    swings = [_swing(m) for m in review.moves]
    assert review.noise == pytest.approx((sum(x * x for x in swings) / len(swings)) ** 0.5)
    assert review.threshold == pytest.approx(2 * review.noise) and 0 < review.threshold < 50
    assert [m.ply for m in review.mistakes] == sorted((m.ply for m in review.moves if m.loss > review.threshold),
                                                       key=lambda p: -review.moves[p - 1].loss)[:3]
    assert all(m.mistake == (m.loss > review.threshold) for m in review.moves)
    blunder = review.moves[8]
    assert blunder.mistake and review.mistakes[0] is blunder and blunder.best_value_after > 99
    for m in review.moves:
        if m.best_move == m.move:  # the AI's preferred move: never a loss, never a mistake
            assert m.loss == 0.0 and not m.mistake and m.best_value_after == m.value_after
    data = review.to_json()
    assert data["threshold"] == round(review.threshold, 2) and data["noise_multiple"] == 2.0
    assert data["mistakes"][0]["ply"] == 9 and data["mistakes"][0]["mistake"] is True
    text = format_review(review)
    assert f"a mistake loses over {review.threshold:.1f} points" in text
    assert "   9  X a1         100.0     0.0  e3       100.0          100.0  mistake" in text


@pytest.mark.parametrize("spec, player", [("hex-5", f"{CHECKPOINT}:sims=8"), ("hex-4", "mcts-rollout:16")])
def test_review_never_lists_the_ai_preferred_moves(spec, player):
    """A game in which every move is the reviewing AI's own choice has no mistake, however much its
    values swing from ply to ply."""
    env = VecEnv(spec)
    ai = make_player(player, env, seed=3)
    state, moves = env.initial_state(1), []
    while not bool(state.done[0]):
        action = ai.act(state)
        moves.append(env.game.action_name(int(action[0])))
        state = env.step(state, action)
    review = review_game(spec, moves, player, seed=3)
    # The review searches the game's positions together, the game searched them one at a time: a
    # choice between two moves that the search values exactly alike (two symmetric moves, in a lost
    # position) may fall either way with the last bit of the network's rounding; any other differs.
    # Such a tie loses exactly the preferred move's swing, which is noise, never a mistake.
    for m, played in zip(review.moves, moves):
        if m.best_move == played:
            assert m.loss == 0.0, m
        else:
            assert m.best_value_after == m.value_after and m.loss == pytest.approx(max(0.0, _swing(m))), m
    assert not any(m.mistake for m in review.moves) and review.mistakes == []
    # values do swing after the AI's own moves: measured as before minus after, its preferred moves
    # would have lost points (the old review listed them as mistakes)
    assert any(_swing(m) > 0 for m in review.moves)
    assert "biggest mistakes: none (a mistake loses over" in format_review(review)


def test_replay_analyse_command(capsys):
    code, out, _ = run(capsys, "replay", "hex-5", *BLUNDER_GAME, "--analyse", f"{CHECKPOINT}:sims=8", "--json")
    data = json.loads(out)
    assert code == 0 and data["game"] == "hex-5" and len(data["moves"]) == 10
    assert data["mistakes"][0]["ply"] == 9 and data["mistakes"][0]["best_move"] == "e3"
    assert data["threshold"] == pytest.approx(2 * data["noise"], abs=0.02)  # both rounded to 0.01
    assert data["mistakes"][0]["loss"] > data["threshold"]
    code, out, _ = run(capsys, "replay", "--record", FIXTURES / "lg-hex-1804563.hsgf", "--analyse", "mcts-rollout:4")
    assert code == 0 and "review of a hex-11:swap game, by mcts-rollout:4" in out
    assert "   1  X a4    ad" in out  # our name beside Little Golem's
    code, _, err = run(capsys, "replay", "hex-5", "c3", "--analyse", "random")
    assert code == 2 and "cannot review a game" in err

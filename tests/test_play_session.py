"""PlaySession: moves and their errors, exact undo, the AI's move and analysis, JSON for a page."""

import json
from pathlib import Path

import pytest

from conhex_zero.agents.players import PlayerSpecError
from conhex_zero.env.notation import IllegalMoveError
from conhex_zero.games.game import MoveError
from conhex_zero.play.session import PlayError, PlaySession

CKPT = str(Path(__file__).resolve().parent.parent / "checkpoints" / "hex5-l4h64.pt")
# X (first, top-bottom) holds c1-c4, O (left-right) a5, b5, d5, e5: c5 wins for whoever plays it,
# so X's only move that does not lose is the winning c5.
ONE_FROM_WIN = ["c1", "a5", "c2", "b5", "c3", "d5", "c4", "e5"]
# The same with b5 empty and O to move: X threatens b5 and c5, O cannot stop both.
HOPELESS_FOR_O = ["c1", "a1", "c2", "a2", "c3", "a3", "c4"]




def test_moves_by_name_or_id_and_clear_errors():
    s = PlaySession("hex-3", "random")
    assert s.to_move == 0 and s.legal_moves() == ["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"]
    assert s.play("B2") == 4 and s.play(0) == 0 and s.moves == ["b2", "a1"] and s.to_move == 0
    with pytest.raises(IllegalMoveError) as err:
        s.play("b2")
    assert err.value.reason == "b2: the cell is already taken" and err.value.move_number == 3
    with pytest.raises(IllegalMoveError) as err:
        s.play("swap")
    assert err.value.reason == "swap: the swap rule is off in this game"
    with pytest.raises(IllegalMoveError) as err:
        s.play(99)
    assert "out of range" in err.value.reason
    with pytest.raises(MoveError, match=r"'d4' is not a move in hex-3 .*nearby cells: c3"):
        s.play("d4")
    with pytest.raises(MoveError, match="'hello' is not a move"):
        s.play("hello")
    assert s.moves == ["b2", "a1"]  # failed attempts change nothing


def test_swap_and_its_other_names():
    s = PlaySession("conhex", "random")
    s.play("F6")
    assert s.swap_legal and "swap" in s.legal_moves()
    s.play("swap-pieces")
    assert s.moves == ["F6", "swap"] and s.to_move == 0 and not s.swap_legal
    with pytest.raises(IllegalMoveError, match="only allowed as the second player's first move"):
        s.play("swap")


def test_undo_restores_the_exact_previous_state():
    s = PlaySession("conhex", "random")
    snapshots = [(s.state.clone(), s.to_json())]
    for move in ["F6", "swap", "E4", "C2", "G4", "D3"]:
        s.play(move)
        snapshots.append((s.state.clone(), s.to_json()))
    assert s.undo() == ["D3"]
    assert s.state.equal(snapshots[5][0]) and s.to_json() == snapshots[5][1]
    assert s.undo(3) == ["E4", "C2", "G4"]
    assert s.state.equal(snapshots[2][0]) and s.to_json() == snapshots[2][1]
    with pytest.raises(PlayError, match="only 2 moves can be taken back"):
        s.undo(3)
    s.undo(2)
    assert s.state.equal(snapshots[0][0]) and s.moves == []
    with pytest.raises(PlayError, match="nothing to undo"):
        s.undo()


def test_undo_reopens_a_finished_game():
    s = PlaySession("hex-3", "random")
    for m in ["a1", "c1", "a2", "c2", "a3"]:
        s.play(m)
    assert s.is_over and s.winner == 0 and s.to_move is None and s.legal_moves() == []
    with pytest.raises(PlayError, match="the game is over: X won"):
        s.ai_move()
    s.undo()
    assert not s.is_over and s.to_move == 0 and "a3" in s.legal_moves()


def test_random_opening_is_reproducible_and_cannot_be_undone():
    a, b = PlaySession("hex-5:random=1", "random", seed=3), PlaySession("hex-5:random=1", "random", seed=3)
    assert a.opening == 2 and a.moves == b.moves and len(a.moves) == 2 and a.undoable == 0
    assert a.to_json()["opening_moves"] == 2 and a.last_action is None
    with pytest.raises(PlayError, match="nothing to undo"):
        a.undo()
    assert len(PlaySession("hex-5:random=1", "random", random_opening=False).moves) == 0


def _check_analysis_shape(analysis, mover, top):
    assert analysis.player == mover and -1 <= analysis.value <= 1
    assert abs(analysis.win_percent - 50 * (1 + analysis.value)) < 1e-9
    assert 1 <= len(analysis.candidates) <= top
    for c in analysis.candidates:
        assert c.pv[0] == c.move and c.visits >= 0 and 0 <= c.prior <= 1
        assert (c.value is None) == (c.visits == 0) and (c.value is None or -1 <= c.value <= 1)
    json.dumps(analysis.to_json())


def test_search_analysis_and_the_move_played():
    s = PlaySession("hex-4", "mcts-rollout:40")
    s.play("b2")
    analysis = s.analyse(top=4)
    _check_analysis_shape(analysis, 1, 4)
    assert analysis.source == "search" and analysis.simulations == 40 == s.simulations
    visits = [c.visits for c in analysis.candidates]
    assert visits == sorted(visits, reverse=True) and visits[0] > 0
    assert all(len(c.pv) >= 2 for c in analysis.candidates if c.visits >= 2)  # lines continue
    hint = s.hint(top=4)
    assert hint.move == analysis.best.move and s.moves == ["b2"]  # a hint plays nothing
    reply = s.ai_move(top=4)
    assert reply.move == analysis.best.move and s.moves == ["b2", reply.move]
    assert reply.analysis.to_json() == analysis.to_json()  # the same search, reused
    assert set(reply.to_json()) == {"action", "move", "analysis"}


@pytest.mark.parametrize("player", ["mcts-rollout:100", f"{CKPT}:sims=8"])
def test_one_move_from_a_win_the_top_move_wins(player):
    s = PlaySession("hex-5", player)
    for m in ONE_FROM_WIN:
        s.play(m)
    analysis = s.analyse(top=3)
    assert analysis.best.move == "c5" and analysis.best.value == 1.0 and analysis.value == 1.0
    assert s.ai_move().move == "c5" and s.winner == 0 and s.is_over


def test_a_network_player_sees_a_lost_position():
    s = PlaySession("hex-5", f"{CKPT}:sims=8")
    for m in HOPELESS_FOR_O:
        s.play(m)
    assert s.analyse().value < -0.9


def test_policy_and_random_players_analyses():
    s = PlaySession("hex-5", f"policy:{CKPT}")
    s.play("c3")
    analysis = s.analyse(top=5)
    assert analysis.source == "network" and analysis.simulations == 0
    _check_analysis_shape(analysis, 1, 5)
    priors = [c.prior for c in analysis.candidates]
    assert priors == sorted(priors, reverse=True) and sum(priors) <= 1 + 1e-6
    assert s.ai_move().move == analysis.best.move
    r = PlaySession("hex-5", "random", seed=4)
    hint = r.hint()
    assert hint.analysis.value is None and hint.analysis.candidates == [] and hint.analysis.source == "none"
    assert hint.move in r.legal_moves() and r.ai_move().move == hint.move


def test_temperature_samples_reproducibly():
    def first_reply(seed, temperature):
        s = PlaySession("hex-4", "mcts-rollout:24", seed=seed, temperature=temperature)
        s.play("a1")
        return s.ai_move().move

    assert first_reply(1, 3.0) == first_reply(1, 3.0)
    sampled = {first_reply(seed, 3.0) for seed in range(8)}
    assert len(sampled) >= 3
    with pytest.raises(PlayError, match="temperature"):
        PlaySession("hex-4", "random", temperature=-1)


def test_json_for_a_page():
    s = PlaySession("conhex", "random")
    s.play("F6")
    data = s.to_json()
    json.dumps(data)
    assert {"game", "board", "rules", "player", "moves", "opening_moves", "ply", "to_move", "winner", "is_over",
            "hole_names", "hole_owners", "cell_owners", "legal_moves", "swap_legal", "last_move",
            "undoable", "book"} == set(data)
    assert data["book"] is None  # no opening book given
    assert data["moves"] == ["F6"] and data["to_move"] == 1 and data["winner"] is None and data["swap_legal"]
    assert len(data["hole_owners"]) == 69 and len(data["cell_owners"]) == 41 and len(data["hole_names"]) == 69
    assert data["hole_owners"][data["hole_names"].index("F6")] == 0 and data["last_move"] == "F6"
    assert "swap" in data["legal_moves"] and len(data["legal_moves"]) == 69
    assert "[X]" in s.board_text()  # the last move is marked


def test_bad_players():
    with pytest.raises(PlayerSpecError, match="unknown player"):
        PlaySession("hex-5", "no-such-player")
    with pytest.raises(PlayError, match="simulations"):
        PlaySession("hex-5", "random", simulations=0)


def test_a_third_mirror_move_is_refused_with_the_reason():
    s = PlaySession("hex-5:mirror=2", "random")
    for move in ["a1", "e5", "b1", "d5", "c1"]:  # O answers X's a1 and b1 with their 180-degree turns
        s.play(move)
    with pytest.raises(IllegalMoveError) as err:
        s.play("c5")
    assert "third consecutive move mirroring the opponent's (rot180)" in err.value.reason
    assert err.value.move_number == 6 and s.moves == ["a1", "e5", "b1", "d5", "c1"]
    assert "c5" not in s.legal_moves()
    s.play("c4")  # any other move is fine

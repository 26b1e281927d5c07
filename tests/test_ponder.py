"""Pondering: a search player thinks on the opponent's time, and its next search continues from
the subtree of the reply the opponent played."""

from pathlib import Path

import torch

from conhex_zero.agents.players import network_player
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.play.session import PlaySession

HEX5 = Path(__file__).resolve().parent.parent / "checkpoints" / "hex5-l4h64.pt"


def _after_batches(n: int):
    """A ``stop`` that says stop after it was asked ``n`` times (one ask per batch of leaves): a
    pondering search of a fixed length, whatever the machine's speed."""
    asked = [0]

    def stop() -> bool:
        asked[0] += 1
        return asked[0] > n

    return stop


def _carried_after_reply(ponder_batches: int | None) -> tuple[int, int, int]:
    """(simulations pondered, the reply's visits in the tree, the visits the next search carried)."""
    env = VecEnv("hex-5")
    player = network_player(env, HEX5, simulations=64)
    state = env.initial_state(1)
    first = int(player.act(state, history=[[]])[0])
    after = env.step(state, torch.tensor([first]))
    pondered = 0
    if ponder_batches is not None:
        pondered = player.ponder(after, [first], _after_batches(ponder_batches))
        assert player.search.config.num_simulations == 64  # the player's own effort is untouched
    tree = player._trees[(first,)]
    if ponder_batches is not None:
        assert int(tree.edge_visits[0].sum()) >= pondered  # the root of the pondered position
        reply = int(tree.edge_visits[0].argmax())  # the reply the pondering thought most likely
    else:
        reply = int(torch.as_tensor(tree.edge_visits[0]).argmax())
    visits = int(tree.edge_visits[0, reply])
    player.act(env.step(after, torch.tensor([reply])), history=[[first, reply]])
    return pondered, visits, player.last_carried[0]


def test_pondering_grows_the_tree_that_the_next_search_continues():
    pondered, visits, carried = _carried_after_reply(ponder_batches=30)
    _, _, carried_without = _carried_after_reply(ponder_batches=None)
    assert pondered > 200  # 30 batches of up to 64 leaves (fewer while the tree is small)
    # The reply's subtree came along: its visits below the reply (the reply's own evaluations and
    # the batches' duplicate visits of a leaf on its way end at the reply, not below it).
    assert 0 < carried < visits
    assert carried > carried_without  # more than the move's own search left below the reply


def test_a_session_ponders_in_the_background_and_stops_before_thinking():
    session = PlaySession("hex-5", str(HEX5), simulations=32, ponder=True, random_opening=False)
    try:
        session.ai_move()
        assert session._pondering is not None  # searching while the opponent thinks
        session.stop_pondering()
        assert session._pondering is None and len(session.pondered) == 1 and session.pondered[0] > 0
        session.start_pondering()
        session.play(session.legal_moves()[0])  # while it ponders: fine, its tree is of the position before
        analysis = session.ai_move().analysis  # stops the pondering first, then continues its tree
        assert len(session.pondered) == 2
        assert analysis.simulations == analysis.carried + 32  # its 32 on top of what came along
        session.undo(2)  # stops the pondering started by the last AI move
        assert session._pondering is None and session.simulations == 32
    finally:
        session.close()
    assert session._pondering is None
    quiet = PlaySession("hex-5", str(HEX5), simulations=32, random_opening=False)
    quiet.ai_move()
    assert quiet._pondering is None and quiet.pondered == []  # off unless asked for


def test_a_gtp_engine_ponders_between_its_moves():
    from conhex_zero.play.gtp_engine import GTPEngine

    engine = GTPEngine(str(HEX5), game="hex-5", simulations=16, ponder=True)
    try:
        assert engine.handle("genmove b").startswith("= ")
        assert engine.session._pondering is not None  # thinking on the opponent's time
        reply = engine.session.legal_moves()[0]
        assert engine.handle(f"play w {reply}") == "= \n\n"
        assert engine.handle("genmove b").startswith("= ")  # stopped, then continued its tree
        assert len(engine.session.pondered) == 1 and engine.session.pondered[0] > 0
    finally:
        engine.close()
    assert engine.session._pondering is None

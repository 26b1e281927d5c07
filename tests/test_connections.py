"""H-search at the search's nodes (``agents/connections.py``): its verdicts and must-play moves
against the pure-Python solver on random Hex positions, what it changes in a search (a position a
virtual connection decides is proven at once), and where it refuses to judge."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from conhex_zero.agents.connections import ConnectionsUnavailable, LeafConnections
from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.agents.game_search import GameSearch
from conhex_zero.agents.search_configs import analysis_config
from conhex_zero.analysis.solver import HexSolver
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.search import rng

ROOT = Path(__file__).resolve().parent.parent
HEX5 = str(ROOT / "checkpoints" / "hex5-l4h64.pt")


def random_states(env: VecEnv, plies: int, games: int, seed: int):
    """``games`` positions after ``plies`` uniformly random moves (finished games among them)."""
    gen = torch.Generator().manual_seed(seed)
    state = env.reset(games, gen)
    for _ in range(plies):
        state = env.step(state, torch.where(state.done, 0, env.random_actions(state, gen)))
    return state


@pytest.mark.parametrize("spec,plies", [("hex-4:noswap", 3), ("hex-4:noswap", 6), ("hex-5:noswap", 4),
                                        ("hex-5:noswap", 8), ("hex-5:noswap", 12)])
def test_verdicts_and_moves_agree_with_the_pure_solver(spec, plies):
    """Every verdict is the exact value; where there is none and the mover wins, one of the moves
    worth searching wins (the others may be cut from the search without losing the value)."""
    env = VecEnv(spec)
    state = random_states(env, plies, 60, seed=plies)
    connections = LeafConnections(env)
    verdict, moves = connections(state)
    solver = HexSolver(env.game.board, book=False)
    winners = solver.state_winners(state)
    H = env.num_holes
    judged = 0
    for i in range(state.batch_size):
        if state.winner[i] >= 0:
            assert verdict[i] == 0 and moves[i].all()  # finished games are not judged
            continue
        judged += 1
        mover_wins = int(winners[i]) == int(state.to_move[i])
        if verdict[i] != 0:
            assert (verdict[i] > 0) == mover_wins
            continue
        live = moves[i, :H] & (state.holes[i] < 0)
        assert live.any() and not moves[i, H]
        assert not (moves[i, :H] & (state.holes[i] >= 0)).any()  # only empty holes
        if mover_wins:
            actions = torch.nonzero(live).flatten()
            children = env.step(state[torch.full((len(actions),), i)], actions)
            child_winners = solver.state_winners(children)
            assert (child_winners == int(state.to_move[i])).any(), f"position {i}: every kept move loses"
    assert judged > 20


def test_the_cache_gives_the_same_answers():
    env = VecEnv("hex-6:noswap")
    state = random_states(env, 9, 50, seed=5)
    connections = LeafConnections(env)
    first = connections(state)
    calls, hits = connections.solver.verdict_counts()
    again = connections(state)
    calls2, hits2 = connections.solver.verdict_counts()
    running = int((state.winner < 0).sum())
    assert calls2 - calls == running and hits2 - hits == running  # all answered by the cache
    assert torch.equal(first[0], again[0]) and torch.equal(first[1], again[1])


def test_hex_5x5_centre_is_proven_at_once_with_connections():
    """A stone on c3 of Hex 5x5 joins both its sides by two ziggurats: the opponent to move has
    lost. The network's search alone does not prove it in 64 simulations; with H-search at its
    nodes the root is proven lost before any simulation."""
    checkpoint = load_checkpoint(HEX5)
    env = VecEnv("hex-5:noswap")
    state = env.reset(1)
    state = env.step(state, torch.tensor([12]))  # c3 (row 3, column c)
    evaluator = NetworkEvaluator(checkpoint.model, env, backend="eager")
    plain = GameSearch(env, evaluator, analysis_config(64)).run(state, rng.make_keys(0, 1))
    with_vc = GameSearch(env, evaluator, analysis_config(64), connections=True).run(state, rng.make_keys(0, 1))
    assert plain.root_proven is None or int(plain.root_proven[0]) == 0
    assert int(with_vc.root_proven[0]) == -1
    assert float(with_vc.action_value[0]) == -1.0


def test_a_search_with_connections_plays_only_must_play_moves():
    """Hex 5x5 after b2 c3 (the second player holds the centre's two ziggurats... unless the first
    intrudes): whatever the first player's root moves, each is inside the must-play region, and
    the searched values agree with the exact ones where proven."""
    checkpoint = load_checkpoint(HEX5)
    env = VecEnv("hex-5:noswap")
    state = env.reset(1)
    state = env.step(state, torch.tensor([6]))  # b2, first player
    state = env.step(state, torch.tensor([12]))  # c3, second player
    connections = LeafConnections(env)
    verdict, moves = connections(state)
    evaluator = NetworkEvaluator(checkpoint.model, env, backend="eager")
    out = GameSearch(env, evaluator, analysis_config(64), connections=True).run(state, rng.make_keys(0, 1))
    visited = out.visit_counts[0] > 0
    if int(verdict[0]) == 0:
        assert not (visited & ~moves[0]).any()  # no move outside the region was searched
    solver = HexSolver(env.game.board, book=False)
    truth = 1 if int(solver.state_winners(state)[0]) == int(state.to_move[0]) else -1
    if out.root_proven is not None and int(out.root_proven[0]) != 0:
        assert int(out.root_proven[0]) == truth


def test_the_swap_ply_is_not_judged():
    env = VecEnv("hex-5:swap")
    state = env.step(env.reset(1), torch.tensor([12]))  # c3: the second player may swap
    verdict, moves = LeafConnections(env)(state)
    assert int(verdict[0]) == 0 and bool(moves[0].all())


@pytest.mark.parametrize("spec", ["conhex", "hex-5:extra-stone", "hex-9"])
def test_games_h_search_cannot_judge_are_refused(spec):
    with pytest.raises(ConnectionsUnavailable):
        LeafConnections(VecEnv(spec))


def test_a_player_with_vc_on_searches_with_connections():
    from conhex_zero.agents.player_specs import PlayerSpecError, parse_player
    from conhex_zero.agents.players import make_player

    assert parse_player(f"{HEX5}:sims=8:vc=on").connections
    assert not parse_player(f"{HEX5}:sims=8:vc=off").connections and not parse_player(HEX5).connections
    with pytest.raises(PlayerSpecError, match="vc=on"):
        parse_player(f"{HEX5}:vc=yes")
    from conhex_zero.play.checkpoints import player_checkpoint

    assert player_checkpoint(f"{HEX5}:seconds=0.5:vc=on") == HEX5  # the commands' checks find the file
    env = VecEnv("hex-5:noswap")
    player = make_player(f"{HEX5}:sims=8:vc=on:backend=eager", env)
    assert player.name.endswith(":vc=on") and player.search.connections is not None
    with pytest.raises(ConnectionsUnavailable):
        make_player(f"{HEX5}:sims=8:vc=on:backend=eager", VecEnv("conhex"))


def test_book_grow_uses_connections_unless_told_not_to(tmp_path, capsys):
    """On Hex 6x6 (no exact solver there), a book grown with connections proves positions the
    network alone leaves open; --connections off and --no-exact grow the network's book;
    --connections on where H-search cannot judge is a clear error."""
    from conhex_zero.book.folder import open_book
    from conhex_zero.cli.main import main

    hex6 = str(ROOT / "checkpoints" / "hex6-l4h64c-v3.pt")
    proven = {}
    for name, flags in (("vc", []), ("off", ["--connections", "off"]), ("plain", ["--no-exact"])):
        folder = tmp_path / name
        assert main(["book", "grow", hex6, "--out", str(folder), "--nodes", "60", "--sims", "16", "--quiet",
                     "--backend", "eager", *flags]) == 0
        opened = open_book(folder)
        assert opened.runs[-1]["connections"] is (name == "vc")  # the book's record says how it grew
        book = opened.book
        proven[name] = sum(1 for node in book.nodes.values() if node.first.proven != 0)
    assert proven["vc"] > proven["off"] and proven["off"] == proven["plain"]
    capsys.readouterr()
    assert main(["book", "grow", str(ROOT / "checkpoints" / "conhex-l4h64-v4.pt"), "--out", str(tmp_path / "c"),
                 "--nodes", "2", "--sims", "4", "--quiet", "--connections", "on"]) == 2
    assert "--connections on" in capsys.readouterr().err

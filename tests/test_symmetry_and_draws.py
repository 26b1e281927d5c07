"""Symmetry (a transformed game has the transformed result) and the absence of draws."""

import random

import pytest
import torch

from conhex_zero.env.vec_env import VecEnv
from conhex_zero.games.game import parse_game
from helpers import connects, random_actions


def random_histories(spec, games, seed):
    env = VecEnv(spec)
    gen = torch.Generator().manual_seed(seed)
    state = env.initial_state(games)
    history = []
    while not bool(state.done.all()):
        action = random_actions(env, state, gen, swap_prob=0.0)
        history.append((state.to_move.clone(), action))
        state = env.step(state, action)
    return env, history, state


@pytest.mark.parametrize("spec", ["conhex:noswap", "hex-6", "hex-9"])
def test_every_symmetry_maps_games_to_games(spec):
    """Play every game's moves through a symmetry; side-exchanging ones also exchange colours."""
    env, history, final = random_histories(spec, 64, seed=11)
    board = env.game.board
    for sym in board.symmetries:
        hole_perm = torch.tensor(list(sym.hole_perm) + [env.game.swap_action])
        cell_perm = torch.tensor(sym.cell_perm)
        state = env.initial_state(final.batch_size)
        for mover, action in history:
            if sym.exchanges_sides:  # the colours trade places, so the other player moves
                state = type(state)(**{**state.__dict__, "to_move": torch.where(state.done, state.to_move, 1 - mover)})
            state = env.step(state, hole_perm[action])
        want_cells = torch.empty_like(final.cells)
        want_cells[:, cell_perm] = final.cells
        want_winner = final.winner
        if sym.exchanges_sides:
            want_cells = torch.where(want_cells >= 0, 1 - want_cells, want_cells)
            want_winner = 1 - final.winner
        assert torch.equal(state.cells, want_cells), sym.name
        assert torch.equal(state.winner, want_winner), sym.name
        assert torch.equal(state.ply, final.ply), sym.name


@pytest.mark.parametrize("spec", ["conhex", "hex-2", "hex-5", "hex-11"])
def test_a_full_board_is_never_a_draw(spec):
    """Fill every hole in a random order (playing on after a win): exactly one player connects."""
    game = parse_game(spec)
    rng = random.Random(1)
    for _ in range(300):
        order = list(range(game.num_holes))
        rng.shuffle(order)
        cells = [None] * game.num_cells
        holes = [None] * game.num_holes
        for ply, h in enumerate(order):
            p = ply % 2
            holes[h] = p
            for c in game.board.hole_cells[h]:
                mine = sum(holes[x] == p for x in game.board.cell_holes[c])
                if cells[c] is None and mine >= game.board.cell_need[c]:
                    cells[c] = p
        assert None not in cells  # a full board conquers every cell
        assert connects(game.board, cells, 0) != connects(game.board, cells, 1)


@pytest.mark.parametrize("spec", ["conhex", "hex-11:swap"])
def test_every_game_ends_with_exactly_one_winner(spec):
    env, history, final = random_histories(spec, 500, seed=2)
    assert bool(final.done.all())
    assert set(final.winner.unique().tolist()) == {0, 1}
    # The winner connects; the loser does not.
    for b in range(0, 500, 25):
        cells = final.cells[b].tolist()
        w = int(final.winner[b])
        assert connects(env.game.board, cells, w) and not connects(env.game.board, cells, 1 - w)


def chain_view(state):
    """Labels as partitions (smallest cell id of each chain) and each cell's chain side bits."""
    label = state.label.long()
    canon = torch.full_like(label, 10**6)
    canon = canon.scatter_reduce(1, label, torch.arange(label.shape[1]).expand_as(label), "amin")
    owned = state.cells >= 0
    return torch.where(owned, canon.gather(1, label), -1), torch.where(owned, state.reach.gather(1, label), 0)


@pytest.mark.parametrize("spec", ["conhex:noswap", "hex-7"])
def test_symmetry_tables_equal_playing_the_transformed_game(spec):
    env, history, final = random_histories(spec, 48, seed=4)
    tables = env.symmetries
    state = env.initial_state(final.batch_size)
    for mover, action in history[: len(history) // 2]:
        state = env.step(state, action)
    for k in range(len(tables)):
        image = tables.apply(state, k)
        # Play the transformed moves from scratch, with colours exchanged if the symmetry says so.
        replay = env.initial_state(final.batch_size)
        for mover, action in history[: len(history) // 2]:
            if tables.exchanges[k]:
                replay = type(replay)(**{**replay.__dict__, "to_move": torch.where(replay.done, replay.to_move, 1 - mover)})
            replay = env.step(replay, tables.map_action(action, k))
        for name in ("holes", "cells", "counts", "winner", "ply"):
            assert torch.equal(getattr(image, name), getattr(replay, name)), (tables.names[k], name)
        live = ~replay.done  # the replay's turn order is the table's; the image's is exchanged
        want_to_move = 1 - replay.to_move if tables.exchanges[k] else replay.to_move
        assert torch.equal(image.to_move[live], want_to_move[live]), tables.names[k]
        a, b = chain_view(image), chain_view(replay)
        assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]), tables.names[k]

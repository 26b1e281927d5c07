"""The scoring variant ("Variante Punteggio"): pairs of games with colours exchanged, the winner of
a game scores the pieces placed, the lower total over the pair wins."""

import torch

from conhex_zero.agents.arena import play_match
from conhex_zero.agents.players import make_player
from conhex_zero.agents.scoring import pair_result, pieces_placed
from conhex_zero.env.vec_env import VecEnv


def test_pair_rules():
    # Each player wins one game: the lower total wins the pair.
    assert pair_result((0, 1), (5, 7)).result == "player1"
    assert pair_result((1, 0), (5, 7)).result == "player2"
    # Equal totals: a draw, worth half a pair.
    tie = pair_result((0, 1), (6, 6))
    assert tie.result == "draw" and tie.score == 0.5 and tie.totals == (6, 6)
    # Winning both games wins the pair, whatever the pieces.
    both = pair_result((1, 1), (30, 40))
    assert both.result == "player2" and both.totals == (None, 70) and both.score == 0.0


def test_pieces_placed_counts_the_winners_stones():
    env = VecEnv("hex-3")
    state = env.initial_state(1)
    for move in ["b1", "a2", "b2", "a3", "b3"]:  # the first player connects top and bottom with 3 pieces
        state = env.step(state, torch.tensor([env.game.parse_move(move)]), check=True)
    assert int(state.winner[0]) == 0
    assert pieces_placed(state.holes, state.winner).tolist() == [3]
    assert pieces_placed(env.initial_state(1).holes, torch.tensor([-1])).tolist() == [0]


def test_an_arena_match_scored_as_pairs():
    env = VecEnv("hex-5")
    a, b = make_player("random", env, seed=1), make_player("mcts-rollout:16", env, seed=2)
    result = play_match(env, a, b, 12, seed=3, progress=False, opening_plies=1)
    summary = result.scoring()
    assert len(summary.pairs) == 6
    for pair, g in zip(summary.pairs, range(0, 12, 2)):
        r1, r2 = result.records[g], result.records[g + 1]
        assert pair.opening == tuple(r1.moves[:r1.opening]) == tuple(r2.moves[:r2.opening])
        for k, rec in enumerate((r1, r2)):  # colours alternate (no swap): the winner's moves are every other
            assert (pair.winners[k] == 0) == (rec.winner_name == a.name)
            assert pair.pieces[k] == len(rec.moves[rec.winner::2])
    data = summary.to_json()
    assert set(data) == {"pairs", "pair_score", "pieces_per_win"}
    assert 0.0 <= data["pair_score"]["player1"] <= 1.0 and len(data["pairs"]) == 6
    # The rollout player beats random and wins most pairs.
    assert summary.pair_score < 0.5

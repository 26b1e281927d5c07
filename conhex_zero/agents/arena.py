"""Matches between two players, all games at once.

Games come in pairs that start from the same opening with colours exchanged: in game 2i player 1
moves first, in game 2i + 1 player 2 does. The opening is ``opening_plies`` uniformly random moves
(no swap) drawn from the pair's own seed, so games differ even between deterministic players (a
match of identical games would only look like many games). Each game also has its own random key
for the players, and a ``random=K`` game spec adds its random pieces. Every step, each player is
asked for the moves of the games where it is to move (one batched call each); actions are checked
before they are played.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from tqdm import tqdm

from conhex_zero.agents.players import Player
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.search import rng


@dataclass
class MatchResult:
    game: str
    players: tuple[str, str]
    games: int
    wins: list[int]  # [player 1, player 2]
    wins_by_colour: dict[str, list[int]]  # player -> [wins as first, wins as second]
    lengths: list[int] = field(default_factory=list)  # plies of each game

    @property
    def score(self) -> float:
        return self.wins[0] / self.games if self.games else 0.0

    @property
    def mean_length(self) -> float:
        return sum(self.lengths) / len(self.lengths) if self.lengths else 0.0

    def to_json(self) -> dict:
        return {"game": self.game, "players": list(self.players), "games": self.games,
                "wins": self.wins, "score": self.score,
                "wins_by_colour": {"player1": self.wins_by_colour["player1"],
                                   "player2": self.wins_by_colour["player2"]},
                "mean_length": self.mean_length}


def random_openings(env: VecEnv, state, keys: torch.Tensor, plies: int):
    """``plies`` uniformly random moves (never swap) in every game, drawn from ``keys`` [B]."""
    for ply in range(plies):
        legal = env.legal_mask(state)
        legal[:, env.game.swap_action] = False
        u = rng.uniform(rng.fold(keys, 0x0BE), ply, env.num_actions)
        state = env.step(state, (u * legal).argmax(1))
    return state


def play_match(env: VecEnv, player1: Player, player2: Player, games: int, seed: int = 0,
               progress: bool = True, opening_plies: int = 0) -> MatchResult:
    """Play ``games`` games between two players: pairs with colours exchanged over a shared opening."""
    if games < 1:
        raise ValueError("a match needs at least one game")
    dev = env.device
    generator = torch.Generator(device=dev).manual_seed(seed)
    state = env.reset(games, generator)
    game_keys = rng.make_keys(seed * 1_000_003, games, device=dev)
    pair_keys = rng.make_keys(seed * 1_000_003 + 7_777_777, (games + 1) // 2, device=dev)
    state = random_openings(env, state, pair_keys.repeat_interleave(2)[:games], opening_plies)
    p1_first = torch.arange(games, device=dev) % 2 == 0  # [G]
    players = (player1, player2)
    bar = tqdm(total=games, desc=f"{player1.name} vs {player2.name}", unit="game", disable=not progress,
               leave=False)
    finished = 0
    while True:
        live = ~state.done
        if not bool(live.any()):
            break
        # Colour 0 moves first: player 1 has colour 0 in the games where it moves first.
        p1_to_move = (state.to_move == 0) == p1_first
        actions = torch.zeros(games, dtype=torch.long, device=dev)
        for k, player in enumerate(players):
            rows = (live & (p1_to_move if k == 0 else ~p1_to_move)).nonzero().squeeze(1)
            if rows.numel():
                keys = rng.fold(game_keys[rows], state.ply[rows])
                actions[rows] = player.act(state[rows], keys)
        running = live.nonzero().squeeze(1)
        env.check_actions(state[running], actions[running])  # a player's illegal move is an error
        state = env.step(state, actions)
        done_now = int(state.done.sum())
        bar.update(done_now - finished)
        finished = done_now
    bar.close()
    winner_is_p1 = (state.winner == 0) == p1_first
    wins = [int(winner_is_p1.sum()), int((~winner_is_p1).sum())]
    by_colour = {
        "player1": [int((winner_is_p1 & p1_first).sum()), int((winner_is_p1 & ~p1_first).sum())],
        "player2": [int((~winner_is_p1 & ~p1_first).sum()), int((~winner_is_p1 & p1_first).sum())],
    }
    return MatchResult(game=env.game.spec, players=(player1.name, player2.name), games=games,
                       wins=wins, wins_by_colour=by_colour, lengths=state.ply.tolist())

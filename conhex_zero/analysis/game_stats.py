"""Measured answers to the rules sheet's questions, from many games.

Self-play games of one player against itself (a checkpoint with root Gumbel noise, or rollout MCTS
with Dirichlet root noise, so games differ) are played
twice over: without the pie rule and with it. From their final positions and move lists come

* per hole: how often it was taken, how often its owner won (influence), and the network's
  average prior on it over all positions of the games (how much the policy cares);
* per cell: how often it lies on the winning chain (the winner's connected group of conquered
  cells that touches both of the winner's sides);
* the first player's win rate with and without the pie rule, how often the second player swapped,
  game lengths and the number of drawn games;
* uniformly random games played to the end in one batch: drawn games again (the rules say there
  are none), and their lengths.

Everything is plain counts (``GameStats``) that ``report.py`` turns into Markdown and pictures.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import torch

from conhex_zero.agents.arena import play_match
from conhex_zero.agents.players import SearchPlayer, network_player, rollout_player
from conhex_zero.agents.search_configs import play_config
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.games.game import Game, parse_game
from conhex_zero.nn.checkpoint import Checkpoint


@dataclass
class RuleStats:
    """Counts from the self-play games of one rule setting (pie rule on or off)."""

    game: str
    games: int = 0
    """Distinct games: a copy of an earlier game (same moves up to symmetry) is counted once."""
    played: int = 0
    """Games played, copies included."""
    first_wins: int = 0
    swaps: int = 0
    draws: int = 0
    lengths: list[int] = field(default_factory=list)
    """Pieces placed per game (the swap is not counted)."""
    first_moves: dict[str, int] = field(default_factory=dict)


@dataclass
class GameStats:
    """Everything the report needs, as plain numbers."""

    game: str
    player: str
    sims: int
    no_swap: RuleStats
    swap: RuleStats
    hole_taken: list[int]  # [H] games in which the hole held a piece at the end
    hole_taken_by_winner: list[int]  # [H] ... a piece of the game's winner
    hole_prior_sum: list[float]  # [H] sum of the network's prior over all positions
    positions: int  # positions the priors were summed over (0: no network, no priors)
    cell_on_chain: list[int]  # [C] games in which the cell lay on the winning chain
    cell_conquered: list[int]  # [C] games in which the cell was conquered at the end
    decided_games: int  # games with a winner (the denominators of the cell counts)
    random_games: int = 0
    random_draws: int = 0
    random_first_wins: int = 0
    random_lengths: list[int] = field(default_factory=list)

    def to_json(self) -> dict:
        from dataclasses import asdict

        return asdict(self)


def noisy_player(env: VecEnv, checkpoint: Checkpoint | None, name: str, sims: int, seed: int) -> SearchPlayer:
    """The checkpoint with Gumbel search and root noise (strong, but games differ); without a
    checkpoint, rollout MCTS (as ``mcts-rollout:K``) with Dirichlet root noise."""
    if checkpoint is None:
        return rollout_player(env, sims, seed, root_noise=True)
    config = play_config(sims, gumbel_scale=1.0)
    return network_player(env, checkpoint.model, sims, seed, config=config, name=f"{name}:sims={sims}")


def winning_chain(state: State) -> torch.Tensor:
    """``[B, C]`` bool: the cells of the winner's chain that touches both of its sides."""
    label = state.label.long()  # [B, C] chain id of each cell
    chain_reach = state.reach.gather(1, label)  # [B, C] the reach bits of each cell's chain
    owner = state.cells.long()
    return (owner == state.winner[:, None]) & (owner >= 0) & (chain_reach == 3)


def replay_games(env: VecEnv, games: list[list[int]]) -> tuple[State, list[State]]:
    """Replay games in lockstep: the final positions ``[G]`` and, for each ply k, the batch of
    positions of the games that still make a move at k (finished games never change)."""
    G = len(games)
    length = torch.tensor([len(g) for g in games])  # [G]
    plies = int(length.max()) if G else 0
    actions = torch.zeros(G, plies, dtype=torch.long)  # [G, L], 0-padded past each game's end
    for g, moves in enumerate(games):
        actions[g, :len(moves)] = torch.tensor(moves, dtype=torch.long)
    state = env.initial_state(G)
    before_move = []
    for k in range(plies):
        before_move.append(state[(length > k).to(env.device)])
        state = env.step(state, actions[:, k])
    return state, before_move


def random_games(env: VecEnv, games: int, seed: int) -> tuple[int, int, list[int]]:
    """Play ``games`` uniformly random games to the end, in one batch: (draws, first-player wins,
    lengths)."""
    gen = torch.Generator(device=env.device).manual_seed(seed)
    state = env.initial_state(games)
    for _ in range(env.game.max_plies):
        if bool(state.done.all()):
            break
        state = env.step(state, env.random_actions(state, gen))
    draws = int((state.winner < 0).sum())
    return draws, int((state.winner == 0).sum()), state.ply.tolist()


def collect(game: str | Game, checkpoint: Checkpoint | None, name: str, games: int, sims: int, seed: int = 0,
            device: torch.device | str = "cpu", progress: bool = True, random_count: int = 0) -> GameStats:
    """Play ``games`` self-play games without and ``games`` with the pie rule, and count.

    ``checkpoint`` None plays rollout MCTS with ``sims`` simulations instead (no policy weights)."""
    base = parse_game(game)
    if base.extra_stone:
        raise ValueError(f"{base.spec}: the report compares play with and without the pie rule; "
                         f"extra-stone games have no pie rule")
    specs = {False: replace(base, swap=False), True: replace(base, swap=True)}
    envs = {k: VecEnv(spec, device) for k, spec in specs.items()}
    env = envs[False]
    H, C = env.num_holes, env.game.num_cells
    taken, taken_win = torch.zeros(H), torch.zeros(H)
    on_chain, conquered = torch.zeros(C), torch.zeros(C)
    prior_sum = torch.zeros(H)
    positions = decided = 0
    rules = {}
    for swap, rule_env in envs.items():
        player = noisy_player(rule_env, checkpoint, name, sims, seed)
        # From the empty board (the first move is the player's own); root noise makes games differ,
        # and the few that still repeat an earlier game are counted once.
        match = play_match(rule_env, player, player, games, seed=seed + (1 if swap else 0), progress=progress,
                           fixed_openings=True)
        stats = RuleStats(game=rule_env.game.spec, played=match.games)
        evaluator = player.search.evaluator if checkpoint is not None else None
        records = [match.records[g] for g in match.distinct_indices()]
        actions = [[rule_env.game.parse_move(m) for m in record.moves] for record in records]
        for record, moves in zip(records, actions):
            stats.games += 1
            stats.first_wins += int(record.winner == 0)
            swapped = rule_env.game.swap_action in moves
            stats.swaps += int(swapped)
            stats.lengths.append(len(moves) - int(swapped))
            first = record.moves[record.opening] if len(record.moves) > record.opening else "-"
            stats.first_moves[first] = stats.first_moves.get(first, 0) + 1
        final, positions_by_ply = replay_games(rule_env, actions)
        decided_games = final.winner >= 0  # [G]
        stats.draws = int((~decided_games).sum())
        decided += int(decided_games.sum())
        owner = final.holes.long()  # [G, H]
        won = decided_games[:, None].float()  # [G, 1]
        taken += ((owner >= 0).float() * won).sum(0).cpu()
        taken_win += ((owner == final.winner[:, None]) & (owner >= 0)).float().sum(0).cpu()
        on_chain += winning_chain(final).float().sum(0).cpu()
        conquered += ((final.cells >= 0).float() * won).sum(0).cpu()
        if evaluator is not None:
            running = State.cat(positions_by_ply)  # every position before a move, all games
            logits, _ = evaluator(running)
            prior_sum += torch.softmax(logits.float(), 1)[:, :H].sum(0).cpu()  # [H]
            positions += running.batch_size
        rules[swap] = stats
    result = GameStats(
        game=base.spec, player=name, sims=sims, no_swap=rules[False], swap=rules[True],
        hole_taken=taken.int().tolist(), hole_taken_by_winner=taken_win.int().tolist(),
        hole_prior_sum=prior_sum.tolist(), positions=positions,
        cell_on_chain=on_chain.int().tolist(), cell_conquered=conquered.int().tolist(), decided_games=decided)
    if random_count:
        result.random_games = random_count
        result.random_draws, result.random_first_wins, result.random_lengths = random_games(env, random_count, seed)
    return result

"""Evaluation of training checkpoints through the run's Elo ladder.

Each evaluated checkpoint plays the fixed references (random, rollout-MCTS, or a checkpoint file
such as the shipped model a run must beat: their strength never moves; a checkpoint reference
searches with ``eval.sims`` like the network), its predecessor, and the ``eval.neighbours`` earlier checkpoints rated nearest to it (so a
checkpoint is measured against several opponents, not only the last one). Games come in
colour-exchanged pairs over distinct random openings (at least ``eval.opening_plies`` moves, longer
when the board has too few; see ``agents.match_openings``), so they are distinct games even between
deterministic players; the win rates, their intervals and the ladder count distinct games only
(``MatchResult.distinct_wins_by_colour``). Every result goes to ``RUN/ladder.jsonl``; ratings are then
fitted over all recorded games (``conhex-zero ladder RUN`` shows them). The network plays with
Gumbel search without root noise (``eval.sims`` simulations).

With ``eval.mode: check`` a run does not rate its checkpoints itself: ``check`` plays a few games
against random in seconds (the raw policy by default) and the checkpoint is written unrated;
``conhex-zero rate`` (``rating.py``) plays the ladder's games later, on any machine.
"""

from __future__ import annotations

from pathlib import Path

import time

from conhex_zero.agents.arena import play_match
from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.agents.players import PolicyPlayer, RandomPlayer, make_player, network_player
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.ladder.store import Ladder, nearest
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.nn.model import GraphNet
from conhex_zero.train.config import EvalConfig


def _stored_path(run_path: Path, path: str) -> Path:
    """A checkpoint path as the ladder stores it: relative to the run directory (older runs: as written)."""
    p = Path(path)
    return p if p.is_absolute() or not (run_path / p).is_file() and p.is_file() else run_path / p


def _on_disk(run_path: Path, info: dict) -> bool:
    return bool(info.get("path")) and _stored_path(run_path, info["path"]).is_file()


def _win_rate_metrics(key: str, result) -> dict[str, float]:
    """Win rates over the distinct games (a copy of a game is no new evidence)."""
    low, high = result.score_ci95
    by = result.distinct_wins_by_colour()
    first, second = by["player1"]
    as_first = first + by["player2"][1]  # distinct games in which the checkpoint moved first
    as_second = result.distinct_games - as_first
    return {f"{key}/win_rate": result.distinct_score, f"{key}/win_rate_low": low, f"{key}/win_rate_high": high,
            f"{key}/win_rate_first": first / max(1, as_first),
            f"{key}/win_rate_second": second / max(1, as_second),
            f"{key}/distinct_games": float(result.distinct_games)}


def is_checkpoint_reference(ref: str) -> bool:
    """A reference that names a checkpoint file (random and mcts-rollout:K are built-in players)."""
    return ref != "random" and not ref.startswith("mcts-rollout")


def reference_key(ref: str) -> str:
    """The metrics key of a reference: ``eval/vs_mcts-rollout_200``, ``eval/vs_conhex-l4h64`` (a
    checkpoint by its file's stem)."""
    name = Path(ref).stem if is_checkpoint_reference(ref) else ref
    return f"eval/vs_{name.replace(':', '_')}"


def reference_player(ref: str, env: VecEnv, sims: int, seed: int):
    """The player of a fixed reference; a checkpoint searches with ``sims`` simulations, named by
    its path as written in the config (the ladder's name for it)."""
    if not is_checkpoint_reference(ref):
        return make_player(ref, env, seed=seed)
    model = load_checkpoint(ref, env.device).model
    return network_player(env, model, sims, seed, name=ref, backend="eager")


def evaluate(env: VecEnv, model: GraphNet, previous: tuple[str, GraphNet] | None, config: EvalConfig,
             run_path: Path, name: str, info: dict, seed: int, progress: bool = True) -> tuple[dict, str | None]:
    """Play the checkpoint ``name`` against its opponents, record everything in the ladder.

    Returns the metrics and the name of the best-rated checkpoint whose file still exists.
    """
    ladder = Ladder.open(run_path)
    tag = {"iteration": info["iteration"]}
    for ref in config.references:
        if ref not in ladder.players:
            ladder.add_player(ref, "reference", **tag)
    ladder.add_player(name, "checkpoint", **info)
    me = network_player(env, model, config.sims, seed, name=name, backend="eager")
    metrics: dict[str, float] = {}

    def play(opponent, games: int, key: str | None) -> None:
        result = play_match(env, me, opponent, games, seed=seed, progress=progress, opening_plies=config.opening_plies)
        ladder.add_match(name, opponent.name, result.distinct_wins_by_colour(), env.game.spec, **tag)
        if key:
            metrics.update(_win_rate_metrics(key, result))

    for ref in config.references:
        if config.games:
            play(reference_player(ref, env, config.sims, seed + 2), config.games, reference_key(ref))
    if previous is not None and config.previous_games:
        prev_name, prev_model = previous
        play(network_player(env, prev_model, config.sims, seed + 1, name=prev_name, backend="eager"), config.previous_games,
             "eval/vs_previous")
        if config.neighbours and prev_name in {r.first for r in ladder.results}:
            ratings = ladder.fit()
            candidates = [n for n, i in ladder.players.items() if i.get("kind") == "checkpoint"
                          and n not in (name, prev_name) and _on_disk(run_path, i)]
            for other in nearest(ratings, candidates, ratings.elo.get(prev_name, 0.0), config.neighbours):
                model_other = load_checkpoint(_stored_path(run_path, ladder.players[other]["path"]), env.device).model
                play(network_player(env, model_other, config.sims, seed + 3, name=other, backend="eager"), config.previous_games, None)
    if name not in {r.first for r in ladder.results}:  # no evaluation games configured
        return metrics, name
    ratings = ladder.fit()
    metrics.update({"eval/elo": ratings.elo[name], "eval/elo_stderr": ratings.stderr[name],
                    "eval/first_move_elo": ratings.first_move})
    on_disk = [n for n, i in ladder.players.items() if i.get("kind") == "checkpoint"
               and (n == name or _on_disk(run_path, i)) and n in ratings.elo]
    best = max(on_disk, key=lambda n: ratings.elo[n]) if on_disk else None
    return metrics, best


def check(env: VecEnv, model: GraphNet, config: EvalConfig, seed: int) -> dict[str, float]:
    """The check of ``eval.mode: check``: ``config.check_games`` games against random, the network
    playing its raw policy (``check_sims`` 0) or a search. Seconds on any device: one network call a
    move for a few games. Metrics: ``check/wins``, ``check/games``, ``check/passed`` (more than half
    won) and ``check/seconds``."""
    start = time.perf_counter()
    if config.check_sims:
        me = network_player(env, model, config.check_sims, seed, name="checked", backend="eager")
    else:
        me = PolicyPlayer(env, NetworkEvaluator(model, env, backend="eager"), "checked")
    result = play_match(env, me, RandomPlayer(env, seed + 5), config.check_games, seed=seed, progress=False,
                        opening_plies=config.opening_plies)
    wins = result.wins[0]
    games = config.check_games
    return {"check/wins": float(wins), "check/games": float(games), "check/passed": float(2 * wins > games),
            "check/seconds": time.perf_counter() - start}

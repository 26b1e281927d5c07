"""Other boards in the same run: one network trained on several boards of its family at once (``mix``).

Issue 56 asks for a curriculum across board sizes "with one network trained on Hex 5-8 ... together".
A graph network's weights do not depend on the board, so a run of ``game: hex-7`` can also play
``mix.games: [hex-5]``: each of those *side boards* has its own environment, self-play (the run's
``selfplay`` settings, without its start lines, which name the main board's cells) and replay buffer,
and the one network plays and learns on all of them.

* **Self-play**: a ``mix.share`` share of each iteration's ``selfplay.positions_per_iteration``
  recorded positions comes from the side boards, split evenly between them
  (``positions_split``); the main board plays the rest.
* **Learning**: the optimiser steps of an iteration stay ``positions * sample_reuse / batch_size``;
  a ``mix.share`` share of them take their batch from a side board's replay (``side_step``: fixed by
  the learner's step count, so a resumed run and every torchrun rank take the same steps), the rest
  from the main board's. A side board whose replay does not yet hold ``replay.min_size`` positions
  gives its steps to the main board.
* **What stays the main board's**: evaluation, the ladder, checkpoints' game, ``train/...`` metrics
  (the side boards' own are ``mix/<game>/...``), exact value targets (``selfplay.proven_targets``).

Side boards are saved with the training state (``state_dict``: replay and games in progress) and
restored on ``--resume``; a carried state (a line's piece) starts them afresh, as it does the main
board's games.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.model import GraphNet
from conhex_zero.train.config import TrainConfig
from conhex_zero.train.replay import ReplayBuffer
from conhex_zero.train.selfplay import SelfPlay, SelfPlayStats

SIDE_SEED_STRIDE = 7919
"""Side board k's self-play is seeded ``seed + (k + 1) * SIDE_SEED_STRIDE`` (never the main board's)."""


@dataclass(eq=False)
class SideBoard:
    """One side board of a mixed run: its environment, self-play, replay and learner board index."""
    game: str
    env: VecEnv
    evaluator: NetworkEvaluator
    replay: ReplayBuffer
    selfplay: SelfPlay
    board: int
    """The learner's index of this board (``Learner.add_board``)."""
    seed: int

    def metrics(self, stats: SelfPlayStats) -> dict[str, float]:
        """The side board's self-play figures as ``mix/<game>/...`` (its replay's size included)."""
        out = {f"mix/{self.game}/{k.split('/', 1)[1]}": v for k, v in stats.metrics().items()
               if k in ("selfplay/games", "selfplay/recorded", "selfplay/positions_per_s", "selfplay/mean_length",
                        "selfplay/first_player_win_rate")}
        out[f"mix/{self.game}/replay_size"] = len(self.replay)
        return out

    def fresh_games(self, seed: int) -> None:
        """New games, seeded afresh (a carried state: the main board's games restart too)."""
        self.selfplay = SelfPlay(self.env, self.selfplay.cfg, self.evaluator, seed)


def positions_split(total: int, share: float, sides: int) -> tuple[int, list[int]]:
    """``(main board's positions, [each side board's])`` of an iteration's ``total``: the side boards
    take ``share`` of them (rounded, at least one each), split evenly, the first ones the remainder."""
    if sides == 0:
        return total, []
    side_total = max(sides, round(total * share))
    each, extra = divmod(side_total, sides)
    per_side = [each + (k < extra) for k in range(sides)]
    return max(1, total - side_total), per_side


def side_step(step: int, share: float, sides: int) -> int | None:
    """The side board (0 ... sides-1) whose replay feeds the learner's ``step``-th optimiser step, or
    None for the main board: the step is a side board's when ``floor((step + 1) * share)`` passes a
    whole number, so that ``share`` of any long run of steps are the side boards', in turn."""
    if sides == 0 or share <= 0:
        return None
    before, after = int(step * share), int((step + 1) * share)
    if after == before:
        return None
    return (after - 1) % sides


def build_sides(config: TrainConfig, model: GraphNet, device, seed: int, add_board) -> list[SideBoard]:
    """The run's side boards (``mix.games``), each with the network's evaluator for that board;
    ``add_board(env)`` registers the board with the learner and returns its index."""
    sides = []
    selfplay_config = replace(config.selfplay, start_lines="")  # the main board's lines name its cells
    for k, game in enumerate(config.mix.games):
        env = VecEnv(game, device)
        evaluator = NetworkEvaluator(model, env, compile=config.selfplay.compile, precision=config.selfplay.precision,
                                     backend=config.selfplay.evaluator_backend,
                                     label=f"self-play's {config.model} on {game}", live_weights=True)
        side_seed = seed + (k + 1) * SIDE_SEED_STRIDE
        sides.append(SideBoard(game, env, evaluator, ReplayBuffer(env, config.replay.capacity),
                               SelfPlay(env, selfplay_config, evaluator, side_seed), add_board(env), side_seed))
    return sides


def state_dict(sides: list[SideBoard]) -> dict:
    """The side boards' part of a rank's state: ``{game: {"replay": ..., "selfplay": ...}}``."""
    return {s.game: {"replay": s.replay.state_dict(), "selfplay": s.selfplay.state_dict()} for s in sides}


def load_state_dict(sides: list[SideBoard], saved: dict | None, log) -> None:
    """Restore the side boards a saved state holds; a board it lacks (added since) starts afresh."""
    saved = saved or {}
    for s in sides:
        part = saved.get(s.game)
        if part is None:
            log(f"note: the saved state has no games of the side board {s.game}: it starts with fresh games")
            continue
        row_map = s.replay.load_state_dict(part["replay"])
        s.selfplay.load_state_dict(part["selfplay"], row_map)
    dropped = sorted(set(saved) - {s.game for s in sides})
    if dropped:
        log(f"note: the side board{'s' * (len(dropped) > 1)} {', '.join(dropped)} of the saved state "
            f"{'are' if len(dropped) > 1 else 'is'} no longer in mix.games: {'their' if len(dropped) > 1 else 'its'} "
            f"replay is dropped")

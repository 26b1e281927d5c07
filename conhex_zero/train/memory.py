"""An up-front estimate of a training config's memory, so that absurd sizes fail at once.

A run whose replay buffer or search trees cannot fit would otherwise die in the allocator minutes
later (or take the machine down with it). The estimate adds the big, size-proportional parts:

* the replay ring (``replay.capacity`` rows of int8/int16 positions, float16 policy targets and
  int8 targets; twice, since a checkpoint copies it to host memory),
* self-play's search trees (``selfplay.games`` x nodes x actions of statistics, plus a state per
  node) and its one-move tactics (every action of every game tried at the root),
* evaluation's search trees (``eval.games`` games at ``eval.sims`` simulations),
* the learner's activations (``optim.batch_size`` positions through the network, kept for backward).

It is a lower bound of what the run needs (Python, torch and the allocator come on top), so a
config is refused only when even this does not fit in the memory the device has available.
"""

from __future__ import annotations

from dataclasses import dataclass

from conhex_zero.train.config import ConfigError, TrainConfig

GB = 1e9


@dataclass(frozen=True)
class MemoryEstimate:
    replay: float
    selfplay: float
    evaluation: float
    learner: float

    @property
    def total(self) -> float:
        return self.replay + self.selfplay + self.evaluation + self.learner


def estimate(config: TrainConfig) -> MemoryEstimate:
    """Bytes needed by the size-proportional parts of a run (see the module docstring)."""
    from conhex_zero.games.game import parse_game
    from conhex_zero.nn.model import ModelConfig

    game = parse_game(config.game)
    H, C, A = game.num_holes, game.num_cells, game.num_actions
    nodes = H + C + 4
    model = ModelConfig.from_name(config.model)
    hidden = model.hidden
    layers = model.layers * model.repeat  # a repeated block keeps its activations once per pass
    state = H + 6 * C + 24  # one engine state (int8 / int16 fields, three int64 scalars)
    row = H + 7 * C + 2 * A + 14  # one replay row
    replay = 2.0 * (config.replay.capacity + 1) * row

    def tree(batch: int, sims: int) -> float:
        per_node = 25 * A + state + 90  # edge statistics, children, legal, node fields, stored state
        return float(batch) * (sims + 2) * per_node

    sp = config.selfplay
    network = float(sp.games) * nodes * hidden * 4 * 8  # inference activations, a few live at once
    tactics = float(sp.games) * A * (state + 20 * C)
    selfplay = tree(sp.games, max(sp.full_sims, sp.cheap_sims)) + network + tactics
    evaluation = tree(max(config.eval.games, config.eval.previous_games), config.eval.sims)
    learner = float(config.optim.batch_size) * nodes * hidden * 4 * 12 * layers
    return MemoryEstimate(replay, selfplay, evaluation, learner)


def available_bytes(device: str) -> float | None:
    """Memory the device can still give (None when unknown)."""
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            return None
        free, _total = torch.cuda.mem_get_info(torch.device(device))
        return float(free)
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        import os

        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(config: TrainConfig) -> None:
    """Raise ``ConfigError`` when the estimate exceeds the device's available memory."""
    need = estimate(config)
    have = available_bytes(config.device)
    if have is None or need.total <= have:
        return
    parts = {"replay.capacity": need.replay, "selfplay.games and *_sims": need.selfplay,
             "eval.games and eval.sims": need.evaluation, "optim.batch_size": need.learner}
    biggest = max(parts, key=parts.get)
    where = "GPU" if config.device.startswith("cuda") else "this machine"
    raise ConfigError(f"the config needs at least {need.total / GB:,.1f} GB ({biggest}: {parts[biggest] / GB:,.1f} GB) "
                      f"but {where} has {have / GB:,.1f} GB available: lower {biggest}")

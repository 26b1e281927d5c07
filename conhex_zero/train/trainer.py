"""One rank's training: what it trains with (network, self-play, replay, learner, the run's
counters), and the steps of an iteration that make the network learn, each with one job.

``loop.py`` calls the steps in order, once per iteration (AlphaZero's cycle):

* ``play``: self-play until ``selfplay.positions_per_iteration`` new positions are in this rank's
  replay buffer; the ranks' counts are summed (the phase's time is the slowest rank's);
* ``learn``: ``steps_per_iteration`` optimiser steps once every rank's replay holds
  ``replay.min_size`` positions (none before; DDP averages the gradients); the ranks' metrics merged;
* ``plan``: rank 0's clock and its caller's ``Hooks.stop_now`` decide, for every rank, whether the
  iteration is evaluated, saves the state, or ends the session;

then ``save.py`` writes the iteration (checkpoint and evaluation when due, the training state), and
``start.py`` restores a saved state into a new ``Trainer``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import torch

from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.console.progress import progress_bar
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.model import GraphNet, ModelConfig
from conhex_zero.train import distributed
from conhex_zero.train.config import TrainConfig
from conhex_zero.train.distributed import Context
from conhex_zero.train.learner import Learner
from conhex_zero.train.mix import SideBoard, build_sides, positions_split
from conhex_zero.train.proven_targets import ProvenStats, ProvenTargets
from conhex_zero.train.replay import ReplayBuffer
from conhex_zero.train.run_dir import RunDir
from conhex_zero.train.selfplay import SelfPlay, SelfPlayStats


@dataclass
class Hooks:
    """Ways for a caller (a training piece, ``piece.py``) to steer the loop from outside."""
    stop_now: Callable[[int], bool] | None = None
    """Asked (on rank 0) when an iteration's training has finished, with its number: True makes it
    this session's last iteration (evaluated and saved)."""
    after_save: Callable[[int, bool], None] | None = None
    """Called (on rank 0) after each saved training state, with its iteration and whether that
    iteration was evaluated (a checkpoint written)."""
    resume_hint: str | None = None
    """What to tell the user after a pause (``stop_after``): the command that continues. None: the
    loop's own advice (``--resume RUN``); a piece continues its line, not its scratch run."""
    phases: dict[str, float] | None = None
    """When given, rank 0 adds the seconds of each phase into it: ``compile`` (the self-play
    network's first call, when compiled, and the native packages built at the start), ``selfplay`` (the rest of self-play), ``learning``,
    ``evaluation`` (the ladder's games, or the check of ``eval.mode: check``) and ``writing``
    (checkpoint, training state, ``after_save``)."""


@dataclass
class Where:
    """How far the run got, for ``TrainingInterrupted``: the last iteration begun, finished, saved."""
    iteration: int | None = None
    completed: int | None = None
    saved: int | None = None


@dataclass
class Played:
    """One iteration's self-play, over all ranks."""
    stats: SelfPlayStats
    ready: bool
    """Every rank's replay holds ``replay.min_size`` positions: training may begin."""
    size: int
    """Positions in the replay buffers."""
    added: int
    """Positions ever added to them."""
    timing: dict[str, float]
    """``time/selfplay_s``, and ``time/compile_s`` in the first iteration of a compiled network."""
    proven: ProvenStats | None = None
    """What ``selfplay.proven_targets`` solved this iteration (None: off)."""
    side_ready: tuple[bool, ...] = ()
    """Per side board (``mix.games``): every rank's side replay holds ``replay.min_size`` positions."""
    side_metrics: dict[str, float] | None = None
    """The side boards' self-play figures (``mix/<game>/...``, rank 0's)."""


@dataclass
class Learned:
    """One iteration's optimiser steps, over all ranks."""
    metrics: dict[str, float]
    """The learner's metrics (``train/...``; none when no step was taken)."""
    steps: int
    seconds: float


@dataclass(frozen=True)
class Plan:
    """What follows an iteration's training, decided by rank 0 for every rank."""
    minutes: float
    """The run's training minutes so far (all its sessions)."""
    out_of_time: bool
    """``max_minutes`` reached: the run stops."""
    save_due: bool
    """``state_minutes`` since the last save: the state is saved, even unevaluated."""
    stopped: bool
    """The caller's ``Hooks.stop_now`` made this the session's last iteration."""
    pause: bool
    """``stop_after`` iterations done in this session."""
    evaluate: bool
    """A checkpoint and its evaluation (every ``eval.every`` iterations, and at the end)."""


class RunClock:
    """The run's training time: seconds since it began (over all its sessions) and since the last save.
    ``cpu``: the run's time (``max_minutes``, the metrics' minutes) is this process's CPU time instead
    of the wall's, so that recipes compared on a shared machine get the same work whatever else runs
    (``clock: cpu``); saves stay on the wall clock."""

    def __init__(self, elapsed_before: float, cpu: bool = False):
        self.elapsed_before = elapsed_before
        self.started = time.perf_counter()
        self.cpu = cpu
        self.cpu_started = time.process_time()
        self.last_save = self.started  # state_minutes counts from here, then from each save

    def seconds(self) -> float:
        if self.cpu:
            return self.elapsed_before + time.process_time() - self.cpu_started
        return self.elapsed_before + time.perf_counter() - self.started

    def minutes(self) -> float:
        return self.seconds() / 60

    def since_save(self) -> float:
        return time.perf_counter() - self.last_save

    def saved(self) -> None:
        self.last_save = time.perf_counter()


def rng_states() -> dict:
    """torch's global generators (self-play, replay sampling and evaluation use their own)."""
    states = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def restore_rng(states: dict) -> None:
    torch.set_rng_state(states["torch"])
    if "cuda" in states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])


def merge_train_metrics(parts: list[dict]) -> dict:
    """The ranks' training metrics: throughput summed, the rest averaged (equal values kept as is)."""
    out = {}
    for k in parts[0]:
        values = [p[k] for p in parts]
        if k == "train/samples_per_s":
            out[k] = sum(values)
        else:
            out[k] = values[0] if all(v == values[0] for v in values) else sum(values) / len(values)
    return out


@dataclass(eq=False)
class Trainer:
    """One rank's network, self-play, replay and learner, the run's counters, and the iteration's steps."""
    ctx: Context
    config: TrainConfig
    run: RunDir
    hooks: Hooks
    where: Where
    log: Callable[[str], None]
    progress: bool
    env: VecEnv
    model: GraphNet
    evaluator: NetworkEvaluator
    replay: ReplayBuffer
    selfplay: SelfPlay
    learner: Learner
    steps_per_iteration: int
    previous: tuple[str, GraphNet] | None = None
    """The model the next evaluation compares with (rank 0): the last one evaluated."""
    start_iteration: int = 0
    """The saved iteration this session continues from (0: a new run)."""
    elapsed_before: float = 0.0
    """Training seconds of the run's earlier sessions."""
    games: int = 0
    """Self-play games finished, all ranks, all sessions."""
    clock: RunClock | None = None
    compile_counted: bool = False
    """The self-play network's compilation is timed once, in its first iteration."""
    proven: ProvenTargets | None = None
    """Exact value targets for late Hex positions (``selfplay.proven_targets``; None: off)."""
    sides: list[SideBoard] = field(default_factory=list)
    """The side boards of a mixed run (``mix.games``, ``train.mix``); empty: one board."""

    @classmethod
    def build(cls, ctx: Context, config: TrainConfig, run: RunDir, hooks: Hooks, where: Where,
              log: Callable[[str], None], progress: bool) -> Trainer:
        """A new network (the same initial weights on every rank) and what trains it."""
        torch.manual_seed(config.seed)  # the same initial weights on every rank
        env = VecEnv(config.game, ctx.device)
        model = GraphNet(ModelConfig.from_name(config.model)).to(ctx.device).eval()
        replay = ReplayBuffer(env, config.replay.capacity)
        evaluator = NetworkEvaluator(model, env, compile=config.selfplay.compile, precision=config.selfplay.precision,
                                     backend=config.selfplay.evaluator_backend, label=f"self-play's {config.model}",
                                     live_weights=True)
        seed = distributed.rank_seed(config.seed, ctx.rank)  # config.seed itself on rank 0
        selfplay = SelfPlay(env, config.selfplay, evaluator, seed)
        steps = math.ceil(config.selfplay.positions_per_iteration * config.optim.sample_reuse / config.optim.batch_size)
        learner = Learner(model, env, config.optim, config.iterations * steps, seed + 1, ctx)
        trainer = cls(ctx, config, run, hooks, where, log, progress, env, model, evaluator, replay, selfplay,
                      learner, steps)
        if config.selfplay.proven_targets:
            trainer.proven = ProvenTargets(env.game, config.selfplay.proven_targets, config.selfplay.proven_nodes,
                                           config.selfplay.proven_solver)
        trainer.sides = build_sides(config, model, ctx.device, seed, learner.add_board)
        # Native packages built here (self-play's network and its search's step: the first run of a
        # size and board on a machine) are the run's compile time, not unaccounted set-up.
        parts = [(evaluator, selfplay)] + [(side.evaluator, side.selfplay) for side in trainer.sides]
        built = {id(p): p.build_seconds for e, sp in parts for p in (e.native, sp.full_search.leaf, sp.cheap_search.leaf)
                 if getattr(p, "build_seconds", None)}
        if built:
            trainer.add_phase("compile", sum(built.values()))
        return trainer

    def start_clock(self) -> None:
        """The run's clock starts (after set-up and resume: they are not training time)."""
        self.clock = RunClock(self.elapsed_before, cpu=self.config.clock == "cpu")

    def add_phase(self, phase: str, seconds: float) -> None:
        if self.hooks.phases is not None:
            self.hooks.phases[phase] = self.hooks.phases.get(phase, 0.0) + seconds

    # ------------------------------------------------------------------ play
    def play(self, iteration: int) -> Played:
        """Self-play until this rank's replay took ``positions_per_iteration`` new positions (a mixed
        run: the main board's share of them, then each side board's)."""
        sides = self.sides
        target, side_targets = positions_split(self.config.selfplay.positions_per_iteration, self.config.mix.share,
                                               len(sides))
        clock = time.perf_counter()
        self.evaluator.refresh()  # a bf16 copy of the weights follows the last training (CUDA graphs run no Python)
        with progress_bar(total=target + sum(side_targets), desc=f"iter {iteration} self-play", unit="pos",
                          disable=not self.progress, leave=False) as bar:
            stats = self.selfplay.run(self.replay, target, bar)
            side_metrics: dict[str, float] = {}
            for side, side_target in zip(sides, side_targets):
                side.evaluator.refresh()
                side_metrics.update(side.metrics(side.selfplay.run(side.replay, side_target, bar)))
        side_ready = tuple(len(side.replay) >= self.config.replay.min_size for side in sides)
        proven = self.proven.relabel(self.replay) if self.proven is not None else None  # part of self-play's time
        timing = {"time/selfplay_s": time.perf_counter() - clock}
        if self.evaluator.compile_seconds is not None and not self.compile_counted:
            self.compile_counted = True
            timing["time/compile_s"] = self.evaluator.compile_seconds
            timing["time/selfplay_s"] -= self.evaluator.compile_seconds
        ready, size, added = len(self.replay) >= self.config.replay.min_size, len(self.replay), self.replay.total_added
        if self.ctx.enabled:  # every rank has played: counts summed, phase time the slowest rank's
            parts = self.ctx.all_gather_object((stats, ready, size, added, proven, side_ready),
                                               f"iteration {iteration}: the end of self-play")
            side_ready = tuple(all(p[5][k] for p in parts) for k in range(len(sides)))
            stats = distributed.merge_stats([p[0] for p in parts])
            if proven is not None:
                proven = distributed.merge_stats([p[4] for p in parts])
            ready = all(p[1] for p in parts)  # the ranks must take the same number of steps
            size, added = sum(p[2] for p in parts), sum(p[3] for p in parts)
        self.games += stats.games
        self.add_phase("compile", timing.get("time/compile_s", 0.0))
        self.add_phase("selfplay", timing["time/selfplay_s"])
        return Played(stats, ready, size, added, timing, proven, side_ready, side_metrics if sides else None)

    # ------------------------------------------------------------------ learn
    def learn(self, iteration: int, played: Played) -> Learned:
        """The iteration's optimiser steps (none until every rank's replay is ready); the ranks'
        metrics merged: throughput summed, the rest averaged."""
        steps = self.steps_per_iteration if played.ready else 0
        clock = time.perf_counter()
        with progress_bar(total=steps, desc=f"iter {iteration} training", unit="step", disable=not self.progress,
                          leave=False) as bar:
            sides = [(side.game, side.board, side.replay if ready else None)
                     for side, ready in zip(self.sides, played.side_ready)]
            metrics = self.learner.train(self.replay, steps, self.config.replay.symmetries, bar, sides,
                                         self.config.mix.share)
        seconds = time.perf_counter() - clock
        self.add_phase("learning", seconds)
        if self.ctx.enabled:
            parts = self.ctx.all_gather_object(metrics, f"iteration {iteration}: the end of training")
            metrics = merge_train_metrics(parts)
        return Learned(metrics if steps else {}, steps, seconds)

    # ------------------------------------------------------------------ plan
    def plan(self, iteration: int, stop_after: int | None) -> Plan:
        """Whether this iteration is evaluated, saves the state or ends the session: rank 0's clock
        (``max_minutes``, ``state_minutes``) and its caller's ``stop_now`` decide for every rank."""
        minutes = self.clock.minutes()
        out_of_time = self.config.max_minutes > 0 and minutes >= self.config.max_minutes
        save_due = self.config.state_minutes > 0 and self.clock.since_save() >= 60 * self.config.state_minutes
        stopped = bool(self.ctx.is_main and self.hooks.stop_now is not None and self.hooks.stop_now(iteration))
        out_of_time, save_due, stopped = self.ctx.broadcast_object(
            (out_of_time, save_due, stopped), what=f"iteration {iteration}: rank 0's clock")
        pause = stop_after is not None and iteration - self.start_iteration >= stop_after
        last = iteration == self.config.iterations or out_of_time or pause or stopped
        return Plan(minutes, out_of_time, save_due, stopped, pause, iteration % self.config.eval.every == 0 or last)

    def metrics(self, iteration: int, played: Played, learned: Learned) -> dict:
        """The iteration's metrics line (evaluation adds its own)."""
        metrics = {"iteration": iteration, **played.stats.metrics(), **learned.metrics,
                   "selfplay/total_games": self.games, "replay/size": played.size, "replay/total_added": played.added,
                   **played.timing, "time/train_s": learned.seconds}
        if played.proven is not None:
            metrics.update(played.proven.metrics())
        if played.side_metrics:
            metrics.update(played.side_metrics)
        if self.ctx.enabled:
            metrics["dist/world_size"] = self.ctx.world_size
        return metrics

    def log_metrics(self, metrics: dict, minutes: float) -> None:
        """Rank 0 writes the iteration's line to ``metrics.jsonl`` (and TensorBoard)."""
        if self.ctx.is_main:
            metrics["time/minutes"] = minutes
            self.run.log(metrics, step=metrics["iteration"])

"""How a training session starts: the run directory locked, then the run resumed from its state or begun anew.

Resuming restores everything a saved state holds (model, optimiser, replay buffer, games in
progress, random generators, counters), each part checked against this run's own first
(``state_check.py``), so a resumed run continues exactly as if it had not stopped. A carried state
(a line's carry.pt, ``line.py``: a piece's weights, optimiser and counters, no replay and no games
in progress) resumes with fresh games and an empty replay. Under torchrun each rank restores its own
shard; when the number of processes changed, see ``_local_state``.
"""

from __future__ import annotations

import copy
import sys

import torch

from conhex_zero.console.words import plural
from conhex_zero.ladder.store import trim as trim_ladder
from conhex_zero.nn.checkpoint import CheckpointError, load_checkpoint
from conhex_zero.nn.model import GraphNet, ModelConfig, with_connection_inputs
from conhex_zero.train import distributed, mix
from conhex_zero.train.config import ReplayConfig, TrainConfig
from conhex_zero.train.distributed import Context
from conhex_zero.train.run_dir import RunDir, TrainStateError
from conhex_zero.train.run_lock import RunInUseError, RunLock
from conhex_zero.train.selfplay import SelfPlay
from conhex_zero.train.state_check import check_config, check_local, check_shared
from conhex_zero.train.trainer import Trainer, restore_rng, rng_states


def warn(text: str) -> None:
    """A warning of the run (a lock taken over, a damaged or missing file): one line on stderr."""
    print(text, file=sys.stderr, flush=True)


def take_run(run: RunDir, ctx: Context, log) -> RunLock | None:
    """Rank 0 takes the run directory's lock (``run_lock.py``) for the whole job, before anything of
    the run is read or written; every rank learns whether it did, so a refused job stops on all of
    them with the same message (``RunInUseError`` naming the holder, or ``TrainStateError``)."""
    lock, failure = None, None
    if ctx.is_main:
        try:
            run.create()  # checks the layout first
            lock = RunLock(run.path)
            lock.acquire(note=warn if log is print else log)  # a warning: to stderr
        except (RunInUseError, TrainStateError, OSError) as err:  # OSError: the directory cannot be made
            failure = (type(err).__name__, str(err))
    failure = ctx.broadcast_object(failure, what="taking the run directory's lock")
    if failure is not None:
        raise (RunInUseError if failure[0] == "RunInUseError" else TrainStateError)(failure[1])
    return lock


# ------------------------------------------------------------------ a new run
def start_fresh(t: Trainer) -> None:
    """A new run: what an earlier attempt in its directory left is dropped; the warm start's weights."""
    if t.ctx.is_main:  # a new run where an earlier attempt saved no state: its lines would repeat
        _forget_unsaved_attempt(t.run, t.log)
    if t.config.init:
        t.model.load_state_dict(_initial_weights(t.config, t.log).state_dict())


def _forget_unsaved_attempt(run: RunDir, log) -> None:
    """Before a new run: metric and ladder lines of iterations that an earlier attempt in the same
    directory logged but never saved a state for (it was stopped, diverged, or found the disk full)
    are dropped, so the new run's lines do not follow them; so are its leftover ``.tmp`` files.
    (A directory that holds a state is never started anew: ``train`` asks for ``--resume``.)"""
    for leftover in run.remove_leftovers():
        log(f"removed {leftover}, left by an interrupted write")
    before = len(run.read_metrics())
    if before:
        run.truncate_metrics(0)
        log(f"note: dropped {before} metric line{'s' * (before != 1)} of an earlier attempt in {run.path} that "
            f"saved no training state")
    trim_ladder(run.path, 0)


def _initial_weights(config: TrainConfig, log) -> GraphNet:
    """The warm start's network (``config.init``), checked against the run's network size."""
    try:
        ckpt = load_checkpoint(config.init)
    except CheckpointError as err:
        raise TrainStateError(f"init: {err}") from None
    size = ckpt.model.config.name
    wanted = ModelConfig.from_name(config.model)
    if size != wanted.name and size + "c" == wanted.name:  # a plain network warm-starts its ...c twin
        log(f"initial weights from {config.init} ({size}, trained on {ckpt.game}), with zero weights on the "
            f"connection features ({wanted.name})")
        return with_connection_inputs(ckpt.model)
    if size != wanted.name:
        raise TrainStateError(f"init: {config.init} holds a {size} network; this run trains {config.model} "
                              f"(set model={size}, or start without init)")
    log(f"initial weights from {config.init} ({size}, trained on {ckpt.game})")
    return ckpt.model


# ------------------------------------------------------------------ a resumed run
def resume_from_state(t: Trainer) -> None:
    """The run's saved state, checked, restored into ``t``; rank 0 trims the metric and ladder lines
    of iterations after it (a resume repeats them)."""
    saved = _load_checked(t)
    carried = bool(saved.get("carried"))  # a piece's state: weights, optimiser, counters only
    notes: list[str] = []  # logged after the schedule's note, in the order they happen
    local = None if carried else _local_state(t.run, saved, t.ctx, notes.append)
    if local is not None:
        check_local(local, t.run.state_file if local is saved else t.run.shard_path(saved["iteration"], t.ctx.rank),
                    int(saved["config"].get("replay", {}).get("capacity", ReplayConfig.capacity)),
                    t.replay.state_dict(), t.selfplay.state_dict(), rng_states(), t.learner.generator.get_state())
    try:
        _restore_shared(t, saved)
        for note in notes:
            t.log(note)
        if local is not None:
            _restore_local(t, local)
        else:
            _fresh_games(t, saved)
        if t.ctx.is_main and saved.get("previous") is not None:
            t.previous = (saved["previous_name"], copy.deepcopy(t.model))
            t.previous[1].load_state_dict(saved["previous"])
        if local is not None:
            restore_rng(local["rng"])
    except (KeyError, TypeError, ValueError, RuntimeError, IndexError) as err:  # what the checks cannot foresee
        reason = str(err).strip().splitlines()[0][:160] if str(err).strip() else type(err).__name__
        raise TrainStateError(f"{t.run.state_file} is damaged: it cannot be restored ({reason})") from None
    if t.ctx.is_main:
        for note in t.run.resume_notes(t.start_iteration):  # files the curve and the ladder read
            (warn if t.log is print else t.log)(note)
        t.run.truncate_metrics(t.start_iteration)
        trim_ladder(t.run.path, t.start_iteration)
    positions = sum(t.ctx.all_gather_object(len(t.replay)))
    t.log(f"resumed {t.run.path} at iteration {t.start_iteration} ({plural(t.games, 'game')}, "
          f"{plural(positions, 'position')})")


def _load_checked(t: Trainer) -> dict:
    """The saved state, its shared part checked against this run's own before anything is restored."""
    for leftover in t.run.remove_leftovers():
        t.log(f"removed {leftover}, left by an interrupted write")
    saved = t.run.load_state()
    check_config(saved, t.run.state_file)
    check_resumable(saved, t.config, t.log)
    if saved.get("carried") and isinstance(saved.get("learner"), dict):
        # A carried state's learner generator is drawn afresh (``_fresh_games``), so its device (a
        # line carried from a GPU, continued on a CPU) does not matter: it is not restored.
        saved["learner"] = {**saved["learner"], "generator": t.learner.generator.get_state()}
    check_shared(saved, t.run.state_file, t.model.state_dict(), t.learner.state_dict(), list(t.model.parameters()))
    return saved


def check_resumable(saved: dict, config: TrainConfig, log) -> None:
    """A resumed run must keep its game and network (and, unless its state is carried without games
    in progress, the number of games it plays at once); differences that break exactness are noted."""
    before = saved["config"]
    for key in ("game", "model"):
        if before.get(key) != getattr(config, key):
            raise TrainStateError(f"the run was trained with {key}={before.get(key)}; it cannot resume with "
                                  f"{key}={getattr(config, key)} (start a new run instead)")
    if not saved.get("carried") and before.get("selfplay", {}).get("games") != config.selfplay.games:
        raise TrainStateError(f"the run plays selfplay.games={before.get('selfplay', {}).get('games')} at once; it "
                              f"cannot resume with selfplay.games={config.selfplay.games}")
    threads = saved.get("threads")
    if threads is not None and threads != torch.get_num_threads():
        log(f"note: the run was saved with {threads} torch thread{'s' * (threads != 1)} and resumes with "
            f"{torch.get_num_threads()}: floating-point sums round differently, so it will not repeat an "
            f"uninterrupted run bit for bit (set threads={threads} for that)")
    old_capacity = before.get("replay", {}).get("capacity", config.replay.capacity)
    if old_capacity > config.replay.capacity:
        log(f"note: replay.capacity shrinks from {old_capacity} to {config.replay.capacity}: the oldest positions "
            f"beyond it are dropped")


def _local_state(run: RunDir, saved: dict, ctx: Context, log) -> dict | None:
    """This rank's part of a saved training state (replay shard, games in progress, generators),
    or None for a rank that the saved run did not have.

    Policy when the number of processes changed: rank r restores shard r when the saved run had
    one (one process keeps its shard inside train_state.pt); ranks beyond the saved run start
    fresh games with an empty replay shard; shards of ranks beyond the new world size are dropped.
    """
    saved_world = int(saved.get("world_size", 1))
    if saved_world != ctx.world_size:
        lo, hi = sorted((saved_world, ctx.world_size))
        ranks = f"rank {lo}" if hi - lo == 1 else f"ranks {lo}-{hi - 1}"
        note = f"resuming a run saved by {saved_world} process{'es' * (saved_world > 1)} with {ctx.world_size}: "
        if ctx.world_size > saved_world:
            note += (f"{ranks} start{'s' * (hi - lo == 1)} fresh games with an empty replay shard (training "
                     f"waits until every shard holds replay.min_size positions)")
        else:
            note += f"the replay shard{'s' * (hi - lo > 1)} of {ranks} {'is' if hi - lo == 1 else 'are'} dropped"
        log(note)
    if ctx.rank >= saved_world:
        return None
    if saved_world == 1:
        return saved
    shard = run.load_shard(saved["iteration"], ctx.rank)
    if shard is None:
        raise TrainStateError(f"{run.shard_path(saved['iteration'], ctx.rank)} is missing: the run's state was "
                              f"written by {saved_world} processes and every rank's shard is needed to resume it")
    return shard


def _restore_shared(t: Trainer, saved: dict) -> None:
    """Weights, optimiser and counters; the learning-rate schedule follows the run's iterations
    (more of them stretch it, fewer end it sooner)."""
    t.model.load_state_dict(saved["model"])
    t.learner.load_state_dict(saved["learner"])
    planned, was, rate = t.config.iterations * t.steps_per_iteration, t.learner.planned_steps, t.learner.learning_rate()
    t.learner.planned_steps = planned
    if planned != was:
        t.log(f"note: the learning-rate schedule now spans {plural(t.config.iterations, 'iteration')} "
              f"({plural(planned, 'step')}, was {was}): the rate at step {t.learner.step} goes from {rate:.3g} to "
              f"{t.learner.learning_rate():.3g}")
    t.start_iteration, t.elapsed_before, t.games = saved["iteration"], saved["elapsed"], saved["games"]


def _restore_local(t: Trainer, local: dict) -> None:
    """This rank's replay, games in progress and replay-sampling generator."""
    row_map = t.replay.load_state_dict(local["replay"])
    t.selfplay.load_state_dict(local["selfplay"], row_map)
    if t.sides:
        mix.load_state_dict(t.sides, local.get("mix"), t.log)
    if "learner_generator" in local:
        t.learner.generator.set_state(local["learner_generator"])


def _fresh_games(t: Trainer, saved: dict) -> None:
    """A carried state, or a rank new to this run: fresh games (never ones played before) and a
    fresh replay-sampling generator, both seeded from the rank and the iteration."""
    fresh = distributed.rank_seed(t.config.seed, t.ctx.rank, t.start_iteration)
    t.selfplay = SelfPlay(t.env, t.config.selfplay, t.evaluator, fresh)
    for k, side in enumerate(t.sides):
        side.fresh_games(fresh + (k + 1) * mix.SIDE_SEED_STRIDE)
    t.learner.generator.manual_seed(fresh + 1)
    if saved.get("carried"):
        t.replay.total_added = int(saved.get("positions", 0))  # the count goes on
        t.log(f"note: {t.run.state_file} is a carried state (no replay, no games in progress): the replay "
              f"refills from fresh games; training resumes once it holds {plural(t.config.replay.min_size, 'position')}")

"""The training loop: self-play and optimisation alternate; evaluated checkpoints; exact resume.

Each iteration plays until ``selfplay.positions_per_iteration`` new positions are in the replay
buffer, then takes ``positions * optim.sample_reuse / batch_size`` optimiser steps. Every
``eval.every`` iterations (and at the end) the network is evaluated through the run's Elo ladder
(fixed references, the previous checkpoint and nearest-rated earlier ones; see ``evaluate.py``),
and a checkpoint plus the full training state are written; best.pt is the best-rated checkpoint.
Resuming restores all of it (model, optimizer, replay buffer, games in progress, random
generators), so a resumed run continues exactly as if it had not stopped. One process (one torchrun
job) trains a run directory at a time: rank 0 holds its lock (``run_lock.py``) throughout.

Under ``torchrun`` every process runs this same loop (``distributed.py``): each rank plays its own
games into its own replay shard, the learner averages gradients over the ranks, counts are summed
over the ranks at the end of self-play, and rank 0 alone evaluates and writes logs, checkpoints
and the shared training state while the others wait; each rank saves its shard beside it.
"""

from __future__ import annotations

import copy
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.console.progress import progress_bar
from conhex_zero.console.words import plural
from conhex_zero.env.allocator import keep_freed_memory
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.ladder.store import trim as trim_ladder
from conhex_zero.nn.checkpoint import FORMAT, SCHEMA_VERSION, CheckpointError, load_checkpoint
from conhex_zero.nn.encode import NUM_FEATURES
from conhex_zero.nn.model import GraphNet, ModelConfig
from conhex_zero.train import distributed
from conhex_zero.train.config import ReplayConfig, TrainConfig
from conhex_zero.train.distributed import Context
from conhex_zero.train.evaluate import check, evaluate
from conhex_zero.train.interrupt import TrainingInterrupted
from conhex_zero.train.learner import Learner
from conhex_zero.train.replay import ReplayBuffer
from conhex_zero.train.run_dir import RunDir, TrainStateError
from conhex_zero.train.run_lock import RunInUseError, RunLock
from conhex_zero.train.selfplay import SelfPlay
from conhex_zero.train.state_check import check_config, check_local, check_shared


@dataclass
class _Where:
    """How far the run got, for ``TrainingInterrupted``: the last iteration begun, finished, saved."""
    iteration: int | None = None
    completed: int | None = None
    saved: int | None = None


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
    network's first call, when compiled), ``selfplay`` (the rest of self-play), ``learning``,
    ``evaluation`` (the ladder's games, or the check of ``eval.mode: check``) and ``writing``
    (checkpoint, training state, ``after_save``)."""


@dataclass
class TrainResult:
    run_dir: Path
    iterations: int
    last_metrics: dict


def _rng_states() -> dict:
    """torch's global generators (self-play, replay sampling and evaluation use their own)."""
    states = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def _restore_rng(states: dict) -> None:
    torch.set_rng_state(states["torch"])
    if "cuda" in states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])


class TrainingDiverged(ValueError):
    """The loss became NaN or infinite; the run stops before saving anything of that iteration."""


def check_resumable(saved: dict, config: TrainConfig, log) -> None:
    """A resumed run must keep its game and network (and, unless its state is carried without games
    in progress, the number of games it plays at once); differences that break exactness are noted."""
    before = saved["config"]
    for key in ("game", "model"):
        if before.get(key) != getattr(config, key):
            raise TrainStateError(f"the run was trained with {key}={before.get(key)}; it cannot resume with "
                             f"{key}={getattr(config, key)} (start a new run instead)")
    if not saved.get("carried") and before.get("selfplay", {}).get("games") != config.selfplay.games:
        raise TrainStateError(f"the run plays selfplay.games={before.get('selfplay', {}).get('games')} at once; it cannot "
                         f"resume with selfplay.games={config.selfplay.games}")
    threads = saved.get("threads")
    if threads is not None and threads != torch.get_num_threads():
        log(f"note: the run was saved with {threads} torch thread{'s' * (threads != 1)} and resumes with "
            f"{torch.get_num_threads()}: floating-point sums round differently, so it will not repeat an "
            f"uninterrupted run bit for bit (set threads={threads} for that)")
    old_capacity = before.get("replay", {}).get("capacity", config.replay.capacity)
    if old_capacity > config.replay.capacity:
        log(f"note: replay.capacity shrinks from {old_capacity} to {config.replay.capacity}: the oldest positions "
            f"beyond it are dropped")


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
    if size != ModelConfig.from_name(config.model).name:
        raise TrainStateError(f"init: {config.init} holds a {size} network; this run trains {config.model} "
                              f"(set model={size}, or start without init)")
    log(f"initial weights from {config.init} ({size}, trained on {ckpt.game})")
    return ckpt.model


def _summary(it: int, total: int, m: dict, minutes: float) -> str:
    """The iteration's line: games finished, self-play speed, the losses, each evaluation's score
    with its 95% interval, the checkpoint's rating on the run's Elo ladder (± one standard error;
    ``conhex-zero ladder RUN`` shows the whole ladder) and the training time so far."""
    parts = [f"iter {it}/{total}", plural(int(m.get("selfplay/games", 0)), "game"),
             f"{m.get('selfplay/positions_per_s', 0):,.0f} pos/s"]
    if "train/total_loss" in m:
        parts.append(f"loss {m['train/total_loss']:.3f} (policy {m['train/policy_loss']:.2f}, value "
                     f"{m['train/value_loss']:.2f}, ownership {m['train/ownership_loss']:.2f})")
    for k, v in m.items():
        if k.startswith("eval/") and k.endswith("/win_rate"):
            name = k[len("eval/vs_"):-len("/win_rate")]
            parts.append(f"score vs {name} {v:.2f} (95% {m[k + '_low']:.2f}-{m[k + '_high']:.2f})")
    if "eval/elo" in m:
        parts.append(f"Elo {m['eval/elo']:.0f} ± {m['eval/elo_stderr']:.0f} (ladder, ± 1 s.e.)")
    if "check/wins" in m:
        parts.append(f"check: {m['check/wins']:.0f} of {m['check/games']:.0f} against random"
                     f"{'' if m['check/passed'] else ' (FAILED)'} in {m['check/seconds']:.1f} s")
    parts.append(f"{minutes:.1f} min")
    return "  ".join(parts)


def _add_phase(hooks: Hooks, phase: str, seconds: float) -> None:
    if hooks.phases is not None:
        hooks.phases[phase] = hooks.phases.get(phase, 0.0) + seconds


def _silent(*_args, **_kwargs) -> None:
    pass


def warn(text: str) -> None:
    """A warning of the run (a lock taken over, a damaged or missing file): one line on stderr."""
    print(text, file=sys.stderr, flush=True)


def _merge_train_metrics(parts: list[dict]) -> dict:
    """The ranks' training metrics: throughput summed, the rest averaged (equal values kept as is)."""
    out = {}
    for k in parts[0]:
        values = [p[k] for p in parts]
        if k == "train/samples_per_s":
            out[k] = sum(values)
        else:
            out[k] = values[0] if all(v == values[0] for v in values) else sum(values) / len(values)
    return out


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
        raise TrainStateError(f"{run.shard_path(saved['iteration'], ctx.rank)} is missing: the run's state was written "
                         f"by {saved_world} processes and every rank's shard is needed to resume it")
    return shard


def train(config: TrainConfig, run_dir: str | Path, resume: bool = False, progress: bool = True,
          log=print, stop_after: int | None = None, hooks: Hooks | None = None) -> TrainResult:
    """Run (or resume) training in ``run_dir``; ``stop_after`` ends this session after that many
    iterations with a checkpoint (the run can be resumed as if it had never stopped). A carried
    state (``carry.py``: no replay, no games in progress) resumes with fresh games and an empty
    replay; ``hooks`` let a caller stop the session and act on each save.

    Under torchrun every process calls this (and joins the job if the caller has not yet)."""
    keep_freed_memory()
    if config.threads:
        torch.set_num_threads(config.threads)
    created = distributed.launched() and not distributed.initialized()
    ctx = distributed.setup(config.device, config.dist.timeout_s, config.dist.wait_timeout_s)
    lock = _take_run(RunDir(run_dir), ctx, log)
    where = _Where()
    try:
        result = _train(ctx, config, run_dir, resume, progress, log, stop_after, where, hooks or Hooks())
    except KeyboardInterrupt:  # Ctrl-C, kill -INT: say where a resume continues
        raise TrainingInterrupted(RunDir(run_dir).path, where.iteration, where.completed, where.saved,
                                  config.eval.every, config.iterations, resuming=resume,
                                  state_minutes=config.state_minutes) from None
    finally:
        if lock is not None:
            lock.release()
    if created:  # on an exception the process ends and torchrun stops the job
        distributed.teardown()
    return result


def _take_run(run: RunDir, ctx: Context, log) -> RunLock | None:
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


def _train(ctx: Context, config: TrainConfig, run_dir: str | Path, resume: bool, progress: bool, log,
           stop_after: int | None, where: _Where, hooks: Hooks) -> TrainResult:
    main = ctx.is_main
    if not main:  # rank 0 alone reports
        progress, log = False, _silent
    run = RunDir(run_dir)
    run.create()
    device = ctx.device
    torch.manual_seed(config.seed)  # the same initial weights on every rank
    env = VecEnv(config.game, device)
    model = GraphNet(ModelConfig.from_name(config.model), NUM_FEATURES).to(device).eval()
    replay = ReplayBuffer(env, config.replay.capacity)
    evaluator = NetworkEvaluator(model, env, compile=config.selfplay.compile, precision=config.selfplay.precision)
    seed = distributed.rank_seed(config.seed, ctx.rank)  # config.seed itself on rank 0
    selfplay = SelfPlay(env, config.selfplay, evaluator, seed)
    steps_per_iteration = math.ceil(config.selfplay.positions_per_iteration * config.optim.sample_reuse
                                    / config.optim.batch_size)
    learner = Learner(model, env, config.optim, config.iterations * steps_per_iteration, seed + 1, ctx)
    previous: tuple[str, GraphNet] | None = None
    start_iteration, elapsed_before, games = 0, 0.0, 0

    if resume:
        for leftover in run.remove_leftovers():
            log(f"removed {leftover}, left by an interrupted write")
        saved = run.load_state()
        # Every part is checked against this run's own before anything is restored (state_check.py).
        check_config(saved, run.state_file)
        check_resumable(saved, config, log)
        if saved.get("carried") and isinstance(saved.get("learner"), dict):
            # A carried state's learner generator is drawn afresh below, so its device (a line
            # carried from a GPU, continued on a CPU) does not matter: it is not restored.
            saved["learner"] = {**saved["learner"], "generator": learner.generator.get_state()}
        check_shared(saved, run.state_file, model.state_dict(), learner.state_dict(), list(model.parameters()))
        shard_notes: list[str] = []  # logged after the schedule's note, in the order they happen
        carried = bool(saved.get("carried"))  # a piece's state: weights, optimiser, counters only
        local = None if carried else _local_state(run, saved, ctx, shard_notes.append)
        if local is not None:
            check_local(local, run.state_file if local is saved else run.shard_path(saved["iteration"], ctx.rank),
                        int(saved["config"].get("replay", {}).get("capacity", ReplayConfig.capacity)),
                        replay.state_dict(), selfplay.state_dict(), _rng_states(), learner.generator.get_state())
        try:
            model.load_state_dict(saved["model"])
            learner.load_state_dict(saved["learner"])
            # The schedule follows the run's iterations: more of them stretch it, fewer end it sooner.
            planned, was, rate = config.iterations * steps_per_iteration, learner.planned_steps, learner.learning_rate()
            learner.planned_steps = planned
            if planned != was:
                log(f"note: the learning-rate schedule now spans {plural(config.iterations, 'iteration')} "
                    f"({plural(planned, 'step')}, "
                    f"was {was}): the rate at step {learner.step} goes from {rate:.3g} to "
                    f"{learner.learning_rate():.3g}")
            start_iteration, elapsed_before, games = saved["iteration"], saved["elapsed"], saved["games"]
            for note in shard_notes:
                log(note)
            if local is not None:
                row_map = replay.load_state_dict(local["replay"])
                selfplay.load_state_dict(local["selfplay"], row_map)
                if "learner_generator" in local:
                    learner.generator.set_state(local["learner_generator"])
            else:  # a carried state or a rank new to this run: fresh games (never ones played before)
                fresh = distributed.rank_seed(config.seed, ctx.rank, start_iteration)
                selfplay = SelfPlay(env, config.selfplay, evaluator, fresh)
                learner.generator.manual_seed(fresh + 1)
                if carried:
                    replay.total_added = int(saved.get("positions", 0))  # the count goes on
                    log(f"note: {run.state_file} is a carried state (no replay, no games in progress): the "
                        f"replay refills from fresh games; training resumes once it holds "
                        f"{plural(config.replay.min_size, 'position')}")
            if main and saved.get("previous") is not None:
                previous = (saved["previous_name"], copy.deepcopy(model))
                previous[1].load_state_dict(saved["previous"])
            if local is not None:
                _restore_rng(local["rng"])
        except (KeyError, TypeError, ValueError, RuntimeError, IndexError) as err:  # what the checks cannot foresee
            reason = str(err).strip().splitlines()[0][:160] if str(err).strip() else type(err).__name__
            raise TrainStateError(f"{run.state_file} is damaged: it cannot be restored ({reason})") from None
        if main:
            for note in run.resume_notes(start_iteration):  # files the curve and the ladder read
                (warn if log is print else log)(note)
            run.truncate_metrics(start_iteration)
            trim_ladder(run.path, start_iteration)
        positions = sum(ctx.all_gather_object(len(replay)))
        log(f"resumed {run.path} at iteration {start_iteration} ({plural(games, 'game')}, "
            f"{plural(positions, 'position')})")
    else:
        if main:  # a new run where an earlier attempt saved no state: its lines would repeat
            _forget_unsaved_attempt(run, log)
        if config.init:
            model.load_state_dict(_initial_weights(config, log).state_dict())
    if main:
        run.write_config(config.dump())

    started = time.perf_counter()
    last_save = started  # state_minutes counts from here, then from each save
    metrics: dict = {}
    iteration = start_iteration
    compile_counted = False  # the self-play network's compilation is timed once, in its first iteration
    where.iteration = where.completed = where.saved = start_iteration or None
    for iteration in range(start_iteration + 1, config.iterations + 1):
        where.iteration = iteration
        target = config.selfplay.positions_per_iteration
        clock = time.perf_counter()
        evaluator.refresh()  # a bf16 copy of the weights follows the last training (CUDA graphs run no Python)
        with progress_bar(total=target, desc=f"iter {iteration} self-play", unit="pos", disable=not progress,
                          leave=False) as bar:
            sp = selfplay.run(replay, target, bar)
        timing = {"time/selfplay_s": time.perf_counter() - clock}
        if evaluator.compile_seconds is not None and not compile_counted:
            compile_counted = True
            timing["time/compile_s"] = evaluator.compile_seconds
            timing["time/selfplay_s"] -= evaluator.compile_seconds
        ready, size, added = len(replay) >= config.replay.min_size, len(replay), replay.total_added
        if ctx.enabled:  # every rank has played: counts summed, phase time the slowest rank's
            parts = ctx.all_gather_object((sp, ready, size, added), f"iteration {iteration}: the end of self-play")
            sp = distributed.merge_stats([p[0] for p in parts])
            ready = all(p[1] for p in parts)  # the ranks must take the same number of steps
            size, added = sum(p[2] for p in parts), sum(p[3] for p in parts)
        games += sp.games
        steps = steps_per_iteration if ready else 0
        clock = time.perf_counter()
        with progress_bar(total=steps, desc=f"iter {iteration} training", unit="step", disable=not progress,
                          leave=False) as bar:
            tm = learner.train(replay, steps, config.replay.symmetries, bar)
        timing["time/train_s"] = time.perf_counter() - clock
        for phase, key in (("compile", "time/compile_s"), ("selfplay", "time/selfplay_s"), ("learning", "time/train_s")):
            _add_phase(hooks, phase, timing.get(key, 0.0))
        if steps and not all(math.isfinite(tm[k]) for k in ("train/total_loss", "train/grad_norm")):
            after = (f"the last good state is in {run.path} (resume it with a lower optim.lr=...)" if run.resumable
                     else "no state had been saved yet (start the run again with a lower optim.lr=...)")
            raise TrainingDiverged(
                f"iteration {iteration}: the training loss is {tm['train/total_loss']} (not finite): the network "
                f"diverged (optim.lr={config.optim.lr} too high?); nothing of this iteration was saved, {after}")
        minutes = (elapsed_before + time.perf_counter() - started) / 60
        out_of_time = config.max_minutes > 0 and minutes >= config.max_minutes
        save_due = config.state_minutes > 0 and time.perf_counter() - last_save >= 60 * config.state_minutes
        stopped = bool(main and hooks.stop_now is not None and hooks.stop_now(iteration))
        if ctx.enabled:  # rank 0's clock decides for all
            parts = ctx.all_gather_object((tm, out_of_time, save_due, stopped),
                                          f"iteration {iteration}: the end of training")
            tm = _merge_train_metrics([p[0] for p in parts])
            out_of_time, save_due, stopped = parts[0][1], parts[0][2], parts[0][3]
        metrics = {"iteration": iteration, **sp.metrics(), **(tm if steps else {}),
                   "selfplay/total_games": games, "replay/size": size, "replay/total_added": added, **timing}
        if ctx.enabled:
            metrics["dist/world_size"] = ctx.world_size
        pause = stop_after is not None and iteration - start_iteration >= stop_after
        last = iteration == config.iterations or out_of_time or pause or stopped
        evaluate_now = iteration % config.eval.every == 0 or last
        if main and not evaluate_now:  # the iteration's line now (before a state_minutes state, as below)
            metrics["time/minutes"] = minutes
            run.log(metrics, step=iteration)
        if evaluate_now or save_due:  # a checkpoint, an evaluation and the state; or the state alone
            save_started = time.perf_counter()
            name = f"iter_{iteration:04d}"
            if ctx.enabled:  # DDP keeps the ranks in step; check it, cheaply, at every save
                digest = distributed.weights_digest(model)
                digests = ctx.all_gather_object(digest, f"iteration {iteration}: the weights check")
                if len(set(digests)) != 1:
                    raise RuntimeError(f"iteration {iteration}: the ranks' weights differ ({digests})")
            if main and evaluate_now:
                minutes = (elapsed_before + time.perf_counter() - started) / 60
                info = {"iteration": iteration, "step": learner.step, "minutes": round(minutes, 3),
                        "games": games, "path": run.relative(run.checkpoint_path(iteration))}
                clock = time.perf_counter()
                if config.eval.mode == "check":  # rated later, off this machine (``conhex-zero rate``)
                    eval_metrics, best = check(env, model, config.eval, seed=config.seed + 1000 * iteration), name
                    if not eval_metrics["check/passed"]:
                        log(f"warning: iteration {iteration}'s check failed: the network won "
                            f"{eval_metrics['check/wins']:.0f} of {eval_metrics['check/games']:.0f} games "
                            f"against random")
                else:
                    eval_metrics, best = evaluate(env, model, previous, config.eval, run.path, name, info,
                                                  seed=config.seed + 1000 * iteration, progress=progress)
                metrics.update(eval_metrics)
                metrics["time/eval_s"] = time.perf_counter() - clock
                _add_phase(hooks, "evaluation", metrics["time/eval_s"])
                meta = {"config": config.to_dict(), "model_name": config.model, "iteration": iteration,
                        "step": learner.step, "games": games, "positions": added,
                        "minutes": minutes, "eval": {k: v for k, v in metrics.items()
                                                     if k.startswith(("eval/", "check/"))}}
                if ctx.enabled:
                    meta["world_size"] = ctx.world_size
                best_path = run.checkpoint_path(int(best.split("_")[1])) if best else None
                saved_path = run.save_model(iteration, model, env.game.spec, meta, best_path)
                metrics["time/minutes"] = minutes
                run.log(metrics, step=iteration)  # before the state: a resume trims lines past the state
            if ctx.enabled:  # each rank's shard first; train_state.pt, written last, commits them
                run.save_shard(iteration, ctx.rank, {
                    "format": FORMAT, "schema": SCHEMA_VERSION, "iteration": iteration, "rank": ctx.rank,
                    "world_size": ctx.world_size, "replay": replay.state_dict(), "selfplay": selfplay.state_dict(),
                    "learner_generator": learner.generator.get_state(), "rng": _rng_states(),
                    "weights_digest": digest,
                })
                ctx.barrier(f"iteration {iteration}: waiting for evaluation and checkpoint")  # every shard is on disk
            if main:
                state = {"format": FORMAT, "schema": SCHEMA_VERSION, "config": config.to_dict(),
                         "model": model.state_dict(), "learner": learner.state_dict()}
                if not ctx.enabled:  # one process: its shard lives in the state itself
                    state.update({"replay": replay.state_dict(), "selfplay": selfplay.state_dict()})
                # The model the next evaluation compares with: this one, or the last one evaluated.
                compared = (name, model) if evaluate_now else previous
                state.update({"iteration": iteration, "games": games,
                              "elapsed": elapsed_before + time.perf_counter() - started,
                              "previous_name": compared[0] if compared else None,
                              "previous": compared[1].state_dict() if compared else None})
                if ctx.enabled:
                    state["world_size"] = ctx.world_size
                else:
                    state["rng"] = _rng_states()
                state["threads"] = torch.get_num_threads()
                run.save_state(state)  # commits the iteration; only now may older files go
                where.saved = iteration
                if evaluate_now:
                    run.prune_checkpoints(config.keep_checkpoints, protect=(saved_path, best_path))
                run.remove_shards(iteration if ctx.enabled else None)
                if evaluate_now:
                    previous = (name, copy.deepcopy(model))
                _add_phase(hooks, "writing", time.perf_counter() - save_started - metrics.get("time/eval_s", 0.0))
                if hooks.after_save is not None:
                    clock = time.perf_counter()
                    hooks.after_save(iteration, evaluate_now)
                    _add_phase(hooks, "writing", time.perf_counter() - clock)
            last_save = time.perf_counter()
        where.completed = iteration
        log(_summary(iteration, config.iterations, metrics, minutes))
        if out_of_time:
            log(f"stopping: max_minutes={config.max_minutes} reached")
            break
        if pause and iteration < config.iterations:
            hint = hooks.resume_hint if hooks.resume_hint is not None else f"--resume {run.path}"
            log(f"pausing after {plural(stop_after, 'iteration')}; continue with {hint}")
            break
        if stopped and iteration < config.iterations:
            break
    ctx.barrier("the end of the run")  # no rank leaves before rank 0's last training state is on disk
    if main:
        run.close()
    return TrainResult(run.path, iteration, metrics)

"""The training loop: self-play and optimisation alternate; evaluated checkpoints; exact resume.

Each iteration plays until ``selfplay.positions_per_iteration`` new positions are in the replay
buffer, then takes ``positions * optim.sample_reuse / batch_size`` optimiser steps. Every
``eval.every`` iterations (and at the end) the network is evaluated through the run's Elo ladder
(fixed references, the previous checkpoint and nearest-rated earlier ones; see ``evaluate.py``),
and a checkpoint plus the full training state are written; best.pt is the best-rated checkpoint.
Resuming restores all of it (model, optimizer, replay buffer, games in progress, random
generators; ``start.py``), so a resumed run continues exactly as if it had not stopped. One
process (one torchrun job) trains a run directory at a time: rank 0 holds its lock
(``run_lock.py``) throughout.

Each step of an iteration has its own place: ``trainer.py`` (play, learn, plan), ``save.py`` (the
checkpoint, its evaluation and the training state), ``start.py`` (the lock, resume, a new run); this
module says their order. Under ``torchrun`` every process runs this same loop (``distributed.py``):
each rank plays its own games into its own replay shard, the learner averages gradients over the
ranks, counts are summed over the ranks at the end of self-play, and rank 0 alone evaluates and
writes logs, checkpoints and the shared training state while the others wait; each rank saves its
shard beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import torch

from conhex_zero.console.words import plural
from conhex_zero.env.allocator import keep_freed_memory
from conhex_zero.train import distributed
from conhex_zero.train.config import TrainConfig
from conhex_zero.train.distributed import Context
from conhex_zero.train.interrupt import TrainingInterrupted
from conhex_zero.train.run_dir import RunDir
from conhex_zero.train.save import save
from conhex_zero.train.start import resume_from_state, start_fresh, take_run
from conhex_zero.train.trainer import Hooks, Learned, Plan, Trainer, Where


@dataclass
class TrainResult:
    run_dir: Path
    iterations: int
    last_metrics: dict


class TrainingDiverged(ValueError):
    """The loss became NaN or infinite; the run stops before saving anything of that iteration."""


def train(config: TrainConfig, run_dir: str | Path, resume: bool = False, progress: bool = True,
          log=print, stop_after: int | None = None, hooks: Hooks | None = None) -> TrainResult:
    """Run (or resume) training in ``run_dir``; ``stop_after`` ends this session after that many
    iterations with a checkpoint (the run can be resumed as if it had never stopped). A carried
    state (a line's carry.pt, ``line.py``: no replay, no games in progress) resumes with fresh games
    and an empty replay; ``hooks`` let a caller stop the session and act on each save.

    Under torchrun every process calls this (and joins the job if the caller has not yet)."""
    keep_freed_memory()
    if config.threads:
        torch.set_num_threads(config.threads)
    created = distributed.launched() and not distributed.initialized()
    ctx = distributed.setup(config.device, config.dist.timeout_s, config.dist.wait_timeout_s)
    lock = take_run(RunDir(run_dir), ctx, log)
    where = Where()
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


def _train(ctx: Context, config: TrainConfig, run_dir: str | Path, resume: bool, progress: bool, log,
           stop_after: int | None, where: Where, hooks: Hooks) -> TrainResult:
    if not ctx.is_main:  # rank 0 alone reports
        progress, log = False, _silent
    run = RunDir(run_dir)
    run.create()
    trainer = Trainer.build(ctx, config, run, hooks, where, log, progress)
    if resume:
        resume_from_state(trainer)
    else:
        start_fresh(trainer)
    if ctx.is_main:
        run.write_config(config.dump())
    trainer.start_clock()
    iteration, metrics = trainer.start_iteration, {}
    where.iteration = where.completed = where.saved = trainer.start_iteration or None
    for iteration in range(trainer.start_iteration + 1, config.iterations + 1):
        where.iteration = iteration
        played = trainer.play(iteration)  # self-play into the replay buffer
        learned = trainer.learn(iteration, played)  # optimiser steps on replayed positions
        _check_finite(learned, iteration, run, config)  # a diverged network saves nothing
        plan = trainer.plan(iteration, stop_after)  # evaluate, save, stop: rank 0 decides
        metrics = trainer.metrics(iteration, played, learned)
        if not plan.evaluate:
            trainer.log_metrics(metrics, plan.minutes)  # the line now, before a state-only save
        if plan.evaluate or plan.save_due:
            save(trainer, iteration, plan.evaluate, metrics)  # checkpoint and evaluation when due; the state
        where.completed = iteration
        minutes = metrics.get("time/minutes", plan.minutes)  # as rank 0 logged it (after an evaluation: anew)
        log(_summary(iteration, config.iterations, metrics, minutes))
        if _stops_here(plan, iteration, config, stop_after, hooks, run, log):
            break
    ctx.barrier("the end of the run")  # no rank leaves before rank 0's last training state is on disk
    if ctx.is_main:
        run.close()
    return TrainResult(run.path, iteration, metrics)


def _check_finite(learned: Learned, iteration: int, run: RunDir, config: TrainConfig) -> None:
    """``TrainingDiverged`` when the iteration's loss or gradient norm is not finite."""
    metrics = learned.metrics
    if learned.steps and not all(math.isfinite(metrics[k]) for k in ("train/total_loss", "train/grad_norm")):
        after = (f"the last good state is in {run.path} (resume it with a lower optim.lr=...)" if run.resumable
                 else "no state had been saved yet (start the run again with a lower optim.lr=...)")
        raise TrainingDiverged(
            f"iteration {iteration}: the training loss is {metrics['train/total_loss']} (not finite): the network "
            f"diverged (optim.lr={config.optim.lr} too high?); nothing of this iteration was saved, {after}")


def _stops_here(plan: Plan, iteration: int, config: TrainConfig, stop_after: int | None, hooks: Hooks,
                run: RunDir, log) -> bool:
    """Whether the session ends after this iteration (before the run's last), saying why."""
    if plan.out_of_time:
        log(f"stopping: max_minutes={config.max_minutes} reached")
        return True
    if plan.pause and iteration < config.iterations:
        hint = hooks.resume_hint if hooks.resume_hint is not None else f"--resume {run.path}"
        log(f"pausing after {plural(stop_after, 'iteration')}; continue with {hint}")
        return True
    return plan.stopped and iteration < config.iterations


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


def _silent(*_args, **_kwargs) -> None:
    pass

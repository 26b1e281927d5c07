"""Saving an iteration: a checkpoint and its evaluation when due, and always the training state.

The order is what makes a save safe to interrupt at any moment: the ranks' weights are compared
(DDP keeps them in step; the check is cheap); rank 0 evaluates the network (the run's Elo ladder, or
the quick check of ``eval.mode: check``), writes it as a checkpoint and its metrics line; each rank
writes its shard (replay, games in progress, generators) and waits for the others; rank 0 writes
``train_state.pt`` last, which commits the iteration: only then are older checkpoints and shards
removed. A resume never sees a checkpoint or a shard without the state that names it.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path

import torch

from conhex_zero.nn.checkpoint import FORMAT, SCHEMA_VERSION
from conhex_zero.train import distributed, mix
from conhex_zero.train.evaluate import check, evaluate
from conhex_zero.train.trainer import Trainer, rng_states


def save(t: Trainer, iteration: int, evaluated: bool, metrics: dict) -> None:
    """The training state, with an evaluated checkpoint when ``evaluated``: the ranks' weights
    compared; rank 0's evaluation and checkpoint; each rank's shard; rank 0's state, which
    commits the iteration (a resume never sees a checkpoint or shard without its state)."""
    started = time.perf_counter()
    name = f"iter_{iteration:04d}"
    digest = _check_weights(t, iteration)
    protect = _checkpoint(t, iteration, name, metrics) if t.ctx.is_main and evaluated else ()
    if t.ctx.enabled:  # each rank's shard first; train_state.pt, written last, commits them
        t.run.save_shard(iteration, t.ctx.rank, _shard(t, iteration, digest))
        t.ctx.barrier(f"iteration {iteration}: waiting for evaluation and checkpoint")  # every shard is on disk
    if t.ctx.is_main:
        _commit(t, iteration, name, evaluated, protect)
        t.add_phase("writing", time.perf_counter() - started - metrics.get("time/eval_s", 0.0))
        if t.hooks.after_save is not None:
            clock = time.perf_counter()
            t.hooks.after_save(iteration, evaluated)
            t.add_phase("writing", time.perf_counter() - clock)
    t.clock.saved()


def _check_weights(t: Trainer, iteration: int) -> str | None:
    """DDP keeps the ranks in step; checked, cheaply, at every save (the digest goes in each shard)."""
    if not t.ctx.enabled:
        return None
    digest = distributed.weights_digest(t.model)
    digests = t.ctx.all_gather_object(digest, f"iteration {iteration}: the weights check")
    if len(set(digests)) != 1:
        raise RuntimeError(f"iteration {iteration}: the ranks' weights differ ({digests})")
    return digest


def _checkpoint(t: Trainer, iteration: int, name: str, metrics: dict) -> tuple[Path, Path | None]:
    """Rank 0: the network evaluated and written as a checkpoint, and the iteration's metrics line
    (before the state: a resume trims lines past the state). The paths the pruning must keep."""
    minutes = t.clock.minutes()
    info = {"iteration": iteration, "step": t.learner.step, "minutes": round(minutes, 3),
            "games": t.games, "path": t.run.relative(t.run.checkpoint_path(iteration))}
    clock = time.perf_counter()
    eval_metrics, best = _evaluate(t, iteration, name, info)
    metrics.update(eval_metrics)
    metrics["time/eval_s"] = time.perf_counter() - clock
    t.add_phase("evaluation", metrics["time/eval_s"])
    meta = {"config": t.config.to_dict(), "model_name": t.config.model, "iteration": iteration,
            "step": t.learner.step, "games": t.games, "positions": metrics["replay/total_added"],
            "minutes": minutes, "eval": {k: v for k, v in metrics.items() if k.startswith(("eval/", "check/"))}}
    if t.ctx.enabled:
        meta["world_size"] = t.ctx.world_size
    best_path = t.run.checkpoint_path(int(best.split("_")[1])) if best else None
    saved_path = t.run.save_model(iteration, t.model, t.env.game.spec, meta, best_path)
    t.log_metrics(metrics, minutes)
    return saved_path, best_path


def _evaluate(t: Trainer, iteration: int, name: str, info: dict) -> tuple[dict, str | None]:
    """The ladder's games (``eval.mode: full``), or the quick check (``check``): metrics and the
    best-rated checkpoint's name."""
    seed = t.config.seed + 1000 * iteration
    if t.config.eval.mode == "full":
        return evaluate(t.env, t.model, t.previous, t.config.eval, t.run.path, name, info, seed=seed,
                        progress=t.progress)
    metrics = check(t.env, t.model, t.config.eval, seed=seed)  # rated later, off this machine (rate)
    if not metrics["check/passed"]:
        t.log(f"warning: iteration {iteration}'s check failed: the network won {metrics['check/wins']:.0f} "
              f"of {metrics['check/games']:.0f} games against random")
    return metrics, name


def _shard(t: Trainer, iteration: int, digest: str | None) -> dict:
    """This rank's part of the state: its replay, games in progress and generators."""
    return {"format": FORMAT, "schema": SCHEMA_VERSION, "iteration": iteration, "rank": t.ctx.rank,
            "world_size": t.ctx.world_size, "replay": t.replay.state_dict(),
            "selfplay": t.selfplay.state_dict(), "learner_generator": t.learner.generator.get_state(),
            "rng": rng_states(), "weights_digest": digest, **_sides(t)}


def _sides(t: Trainer) -> dict:
    """A mixed run's side boards (replay and games in progress), under ``mix``; nothing for one board."""
    return {"mix": mix.state_dict(t.sides)} if t.sides else {}


def _state(t: Trainer, iteration: int, name: str, evaluated: bool) -> dict:
    """Rank 0's training state: model, optimiser, counters, the model the next evaluation compares
    with; one process's shard inside it, a torchrun job's beside it."""
    state = {"format": FORMAT, "schema": SCHEMA_VERSION, "config": t.config.to_dict(),
             "model": t.model.state_dict(), "learner": t.learner.state_dict()}
    if not t.ctx.enabled:  # one process: its shard lives in the state itself
        state.update({"replay": t.replay.state_dict(), "selfplay": t.selfplay.state_dict(), **_sides(t)})
    compared = (name, t.model) if evaluated else t.previous  # this one, or the last one evaluated
    state.update({"iteration": iteration, "games": t.games, "elapsed": t.clock.seconds(),
                  "previous_name": compared[0] if compared else None,
                  "previous": compared[1].state_dict() if compared else None})
    if t.ctx.enabled:
        state["world_size"] = t.ctx.world_size
    else:
        state["rng"] = rng_states()
    state["threads"] = torch.get_num_threads()
    return state


def _commit(t: Trainer, iteration: int, name: str, evaluated: bool, protect: tuple[Path | None, ...]) -> None:
    """Rank 0 writes the state, which commits the iteration; only then may older files go."""
    t.run.save_state(_state(t, iteration, name, evaluated))
    t.where.saved = iteration
    if evaluated:
        t.run.prune_checkpoints(t.config.keep_checkpoints, protect=protect)
    t.run.remove_shards(iteration if t.ctx.enabled else None)
    if evaluated:
        t.previous = (name, copy.deepcopy(t.model))

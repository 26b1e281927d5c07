"""The training loop: self-play and optimisation alternate; evaluated checkpoints; exact resume.

Each iteration plays until ``selfplay.positions_per_iteration`` new positions are in the replay
buffer, then takes ``positions * optim.sample_reuse / batch_size`` optimiser steps. Every
``eval.every`` iterations (and at the end) the network is evaluated through the run's Elo ladder
(fixed references, the previous checkpoint and nearest-rated earlier ones; see ``evaluate.py``),
and a checkpoint plus the full training state are written; best.pt is the best-rated checkpoint. Resuming restores all of it (model, optimizer, replay buffer, games in progress, random
generators), so a resumed run continues exactly as if it had not stopped.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from tqdm import tqdm

from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.env.allocator import keep_freed_memory
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.ladder.store import trim as trim_ladder
from conhex_zero.nn.checkpoint import FORMAT, SCHEMA_VERSION
from conhex_zero.nn.encode import NUM_FEATURES
from conhex_zero.nn.model import GraphNet, ModelConfig
from conhex_zero.train.config import TrainConfig
from conhex_zero.train.evaluate import evaluate
from conhex_zero.train.learner import Learner
from conhex_zero.train.replay import ReplayBuffer
from conhex_zero.train.run_dir import RunDir
from conhex_zero.train.selfplay import SelfPlay


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


def _summary(it: int, total: int, m: dict, minutes: float) -> str:
    parts = [f"iter {it}/{total}", f"games {m.get('selfplay/games', 0)}",
             f"{m.get('selfplay/positions_per_s', 0):,.0f} pos/s"]
    if "train/total_loss" in m:
        parts.append(f"loss {m['train/total_loss']:.3f} (p {m['train/policy_loss']:.2f} v {m['train/value_loss']:.2f} "
                     f"o {m['train/ownership_loss']:.2f})")
    for k, v in m.items():
        if k.startswith("eval/") and k.endswith("/win_rate"):
            name = k[len("eval/vs_"):-len("/win_rate")]
            parts.append(f"vs {name} {v:.2f} [{m[k + '_low']:.2f},{m[k + '_high']:.2f}]")
    if "eval/elo" in m:
        parts.append(f"Elo {m['eval/elo']:.0f} ± {m['eval/elo_stderr']:.0f}")
    parts.append(f"{minutes:.1f} min")
    return "  ".join(parts)


def train(config: TrainConfig, run_dir: str | Path, resume: bool = False, progress: bool = True,
          log=print, stop_after: int | None = None) -> TrainResult:
    """Run (or resume) training in ``run_dir``; ``stop_after`` ends this session after that many
    iterations with a checkpoint (the run can be resumed as if it had never stopped)."""
    keep_freed_memory()
    if config.threads:
        torch.set_num_threads(config.threads)
    run = RunDir(run_dir)
    run.create()
    device = torch.device(config.device)
    torch.manual_seed(config.seed)
    env = VecEnv(config.game, device)
    model = GraphNet(ModelConfig.from_name(config.model), NUM_FEATURES).to(device).eval()
    replay = ReplayBuffer(env, config.replay.capacity)
    selfplay = SelfPlay(env, config.selfplay, NetworkEvaluator(model, env), config.seed)
    steps_per_iteration = math.ceil(config.selfplay.positions_per_iteration * config.optim.sample_reuse
                                    / config.optim.batch_size)
    learner = Learner(model, env, config.optim, config.iterations * steps_per_iteration, config.seed + 1)
    previous: tuple[str, GraphNet] | None = None
    start_iteration, elapsed_before, games = 0, 0.0, 0

    if resume:
        saved = run.load_state()
        if saved.get("format") != FORMAT or saved.get("schema") != SCHEMA_VERSION:
            raise ValueError(f"{run.state_file} is not a training state of this version")
        model.load_state_dict(saved["model"])
        learner.load_state_dict(saved["learner"])
        learner.planned_steps = max(learner.planned_steps, config.iterations * steps_per_iteration)
        replay.load_state_dict(saved["replay"])
        selfplay.load_state_dict(saved["selfplay"])
        if saved.get("previous") is not None:
            previous = (saved["previous_name"], copy.deepcopy(model))
            previous[1].load_state_dict(saved["previous"])
        start_iteration, elapsed_before, games = saved["iteration"], saved["elapsed"], saved["games"]
        _restore_rng(saved["rng"])
        run.truncate_metrics(start_iteration)
        trim_ladder(run.path, start_iteration)
        log(f"resumed {run.path} at iteration {start_iteration} ({games} games, {len(replay)} positions)")
    run.write_config(config.dump())

    started = time.perf_counter()
    metrics: dict = {}
    iteration = start_iteration
    for iteration in range(start_iteration + 1, config.iterations + 1):
        target = config.selfplay.positions_per_iteration
        with tqdm(total=target, desc=f"iter {iteration} self-play", unit="pos", disable=not progress,
                  leave=False) as bar:
            sp = selfplay.run(replay, target, bar)
        games += sp.games
        steps = steps_per_iteration if len(replay) >= config.replay.min_size else 0
        with tqdm(total=steps, desc=f"iter {iteration} training", unit="step", disable=not progress,
                  leave=False) as bar:
            tm = learner.train(replay, steps, config.replay.symmetries, bar)
        metrics = {"iteration": iteration, **sp.metrics(), **(tm if steps else {}),
                   "selfplay/total_games": games, "replay/size": len(replay),
                   "replay/total_added": replay.total_added}
        minutes = (elapsed_before + time.perf_counter() - started) / 60
        out_of_time = config.max_minutes > 0 and minutes >= config.max_minutes
        pause = stop_after is not None and iteration - start_iteration >= stop_after
        last = iteration == config.iterations or out_of_time or pause
        if iteration % config.eval.every == 0 or last:
            name = f"iter_{iteration:04d}"
            minutes = (elapsed_before + time.perf_counter() - started) / 60
            info = {"iteration": iteration, "step": learner.step, "minutes": round(minutes, 3),
                    "games": games, "path": str(run.checkpoint_path(iteration))}
            eval_metrics, best = evaluate(env, model, previous, config.eval, run.path, name, info,
                                          seed=config.seed + 1000 * iteration, progress=progress)
            metrics.update(eval_metrics)
            meta = {"config": config.to_dict(), "model_name": config.model, "iteration": iteration,
                    "step": learner.step, "games": games, "positions": replay.total_added,
                    "minutes": minutes, "eval": {k: v for k, v in metrics.items() if k.startswith("eval/")}}
            best_path = run.checkpoint_path(int(best.split("_")[1])) if best else None
            run.save_model(iteration, model, env.game.spec, meta, best_path, config.keep_checkpoints)
            metrics["time/minutes"] = minutes
            run.log(metrics, step=iteration)  # before the state: a resume trims lines past the state
            run.save_state({
                "format": FORMAT, "schema": SCHEMA_VERSION, "config": config.to_dict(),
                "model": model.state_dict(), "learner": learner.state_dict(), "replay": replay.state_dict(),
                "selfplay": selfplay.state_dict(), "iteration": iteration, "games": games,
                "elapsed": elapsed_before + time.perf_counter() - started,
                "previous_name": name, "previous": model.state_dict(), "rng": _rng_states(),
            })
            previous = (name, copy.deepcopy(model))
        else:
            metrics["time/minutes"] = minutes
            run.log(metrics, step=iteration)
        log(_summary(iteration, config.iterations, metrics, minutes))
        if out_of_time:
            log(f"stopping: max_minutes={config.max_minutes} reached")
            break
        if pause and iteration < config.iterations:
            log(f"pausing after {stop_after} iteration{'s' * (stop_after > 1)}; continue with --resume {run.path}")
            break
    run.close()
    return TrainResult(run.path, iteration, metrics)

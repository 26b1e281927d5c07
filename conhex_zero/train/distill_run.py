"""``conhex-zero distill``'s work: the teacher's positions (played or read), then the student's
training in chunks, saved every few minutes with its training state (``OUT.state.pt``) so that
``--resume`` continues it."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from conhex_zero.console.progress import progress_bar
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import load_checkpoint, save_checkpoint
from conhex_zero.nn.model import GraphNet, ModelConfig, with_connection_inputs
from conhex_zero.train.config import OptimConfig
from conhex_zero.train.distill import DistillSet, generate, planned_steps
from conhex_zero.train.learner import Learner

CHUNK_STEPS = 100


def _positions(args: argparse.Namespace, teacher, env: VecEnv) -> DistillSet:
    if args.data and Path(args.data).is_file():
        data = DistillSet.load(args.data)
        if data.game != env.game.spec:
            raise ValueError(f"--data {args.data} holds {data.game} positions; the teacher plays {env.game.spec}")
        print(f"read {len(data):,} positions of {data.teacher} from {args.data}")
        return data
    started = time.perf_counter()
    with progress_bar(total=args.positions, desc="teacher's positions", unit="pos", disable=args.quiet) as bar:
        data = generate(teacher.model, env, args.positions, args.games, args.temperature, args.random_moves,
                        args.seed, bar, name=str(args.teacher))
    seconds = time.perf_counter() - started
    print(f"played {len(data):,} positions with {args.teacher} in {seconds / 60:.1f} min "
          f"({len(data) / seconds:,.0f} a second)")
    if args.data:
        Path(args.data).parent.mkdir(parents=True, exist_ok=True)
        data.save(args.data)
        print(f"kept them in {args.data}")
    return data


def _student(args: argparse.Namespace, device) -> GraphNet:
    size = ModelConfig.from_name(args.model)
    if args.resume:
        model = load_checkpoint(args.out, device).model
    elif args.init:
        model = load_checkpoint(args.init, device).model
        if model.config.name + "c" == size.name:  # a plain network warm-starts its ...c twin
            model = with_connection_inputs(model)
    else:
        torch.manual_seed(args.seed)
        model = GraphNet(size).to(device)
    if model.config.name != size.name:
        raise ValueError(f"the student is {model.config.name}, not --model {args.model}")
    return model


def distill(args: argparse.Namespace, device) -> str:
    """Distil ``args.teacher`` into a student of ``args.model`` (see the module docstring)."""
    teacher = load_checkpoint(args.teacher, device)
    env = VecEnv(teacher.game, device)
    data = _positions(args, teacher, env)
    model = _student(args, device)
    steps = planned_steps(len(data), args.epochs, args.batch)
    optim = OptimConfig(batch_size=args.batch, lr=args.lr, warmup_steps=min(200, steps // 10), schedule="cosine")
    learner = Learner(model, env, optim, steps, args.seed + 1)
    state_file = Path(args.out).with_suffix(".state.pt")
    if args.resume and state_file.is_file():
        saved = torch.load(state_file, weights_only=True)
        learner.load_state_dict(saved["learner"])
        learner.planned_steps = steps  # more --epochs stretch the schedule
        print(f"resumed {args.out} at step {learner.step} of {steps}")
    meta = {"distilled_from": str(args.teacher), "positions": len(data), "epochs": args.epochs,
            "batch": args.batch, "lr": args.lr, "temperature": args.temperature, "random_moves": args.random_moves,
            "init": args.init or None, "planned_steps": steps}
    last_save, metrics = time.perf_counter(), {}
    with progress_bar(total=steps, initial=learner.step, desc=f"{args.model} learns", unit="step",
                      disable=args.quiet) as bar:
        while learner.step < steps:
            metrics = learner.train(data, min(CHUNK_STEPS, steps - learner.step), symmetries=False, progress=bar)
            bar.set_postfix_str(f"loss {metrics['train/total_loss']:.3f}")
            if learner.step >= steps or time.perf_counter() - last_save > 60 * args.save_minutes:
                _save(args, model, teacher.game, {**meta, "step": learner.step, "loss": metrics}, learner, state_file)
                last_save = time.perf_counter()
    if not metrics:
        _save(args, model, teacher.game, {**meta, "step": learner.step}, learner, state_file)
    loss = metrics.get("train/total_loss")
    return (f"{args.model} student of {args.teacher} after {learner.step} steps of {args.batch} over {len(data):,} "
            f"positions" + (f", loss {loss:.3f} (policy {metrics['train/policy_loss']:.3f}, value "
                            f"{metrics['train/value_loss']:.4f})" if loss is not None else ""))


def _save(args, model: GraphNet, game: str, meta: dict, learner: Learner, state_file: Path) -> None:
    save_checkpoint(args.out, model, game, meta)
    torch.save({"learner": learner.state_dict()}, state_file)

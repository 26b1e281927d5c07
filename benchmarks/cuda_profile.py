"""Where a GPU's self-play time goes, and what still synchronises with the host.

    python benchmarks/cuda_profile.py syncs [--config configs/conhex.yaml] [--games 512] [--steps 6]
    python benchmarks/cuda_profile.py net [--model l8h128] [--batch 4096]

``syncs`` runs self-play steps of a training config under ``torch.cuda.set_sync_debug_mode("warn")``
and prints, for each place in the project's code that synchronised, how often it did (with the
calling lines): the test ``tests/test_cuda.py`` stops at the first such op, this lists them all.
``net`` profiles the evaluator (encoder + network, bf16 autocast) on a batch of positions and
prints the ops that take the most device time. Both need CUDA (on a CPU ``net`` runs on the CPU).
"""

from __future__ import annotations

import argparse
import collections
import json
import traceback
import warnings

import torch

from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.model import GraphNet, ModelConfig
from conhex_zero.train.config_load import load_config
from conhex_zero.train.replay import ReplayBuffer
from conhex_zero.train.selfplay import SelfPlay, SelfPlayStats


def find_syncs(config_path: str, games: int, steps: int) -> dict[str, int]:
    """``{calling lines: count}`` of synchronising ops in ``steps`` self-play steps."""
    config = load_config(config_path, [f"selfplay.games={games}", "device=cuda"])
    env = VecEnv(config.game, "cuda")
    torch.manual_seed(0)
    model = GraphNet(ModelConfig.from_name(config.model)).to("cuda").eval()
    selfplay = SelfPlay(env, config.selfplay, NetworkEvaluator(model, env), config.seed)
    replay = ReplayBuffer(env, config.replay.capacity, "cuda")
    stats = SelfPlayStats()
    with torch.no_grad():
        for _ in range(2):  # lazy initialisation may synchronise
            selfplay.step(replay, stats)
        torch.cuda.synchronize()
        places: collections.Counter[str] = collections.Counter()

        def record(message, category, filename, lineno, file=None, line=None):
            if "synchroniz" not in str(message).lower():
                return
            stack = traceback.extract_stack()[:-1]
            if any("set_sync_debug_mode" in (f.line or "") for f in stack):
                return  # switching the check on warns once itself: not a sync of the self-play
            frames = [f for f in stack if "conhex_zero" in f.filename] or stack[-3:]  # torch's own, if none
            places[" <- ".join(f"{f.filename.split('conhex_zero/')[-1]}:{f.lineno} {f.line}"
                               for f in reversed(frames[-3:]))] += 1

        shown = warnings.showwarning
        warnings.showwarning = record
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("always")
                warnings.showwarning = record
                torch.cuda.set_sync_debug_mode("warn")
                for _ in range(steps):
                    selfplay.step(replay, stats)
                torch.cuda.set_sync_debug_mode(0)
        finally:
            warnings.showwarning = shown
    return dict(places.most_common())


def sync_ops_with_stacks(config_path: str, games: int, steps: int, device: str = "cuda") -> dict[str, int]:
    """``{op <- Python stack: count}`` of the ops that ``bench selfplay`` counts as syncs
    (``SYNC_OPS``), found by the profiler with stacks: the warning above misses ops that
    synchronise without going through CUDA's sync check."""
    from conhex_zero.bench.timing import SYNC_OPS, synchronize

    config = load_config(config_path, [f"selfplay.games={games}", f"device={device}"])
    env = VecEnv(config.game, device)
    torch.manual_seed(0)
    model = GraphNet(ModelConfig.from_name(config.model)).to(device).eval()
    selfplay = SelfPlay(env, config.selfplay, NetworkEvaluator(model, env), config.seed)
    replay = ReplayBuffer(env, config.replay.capacity, device)
    stats = SelfPlayStats()
    with torch.no_grad():
        for _ in range(2):
            selfplay.step(replay, stats)
        synchronize(env.device)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], with_stack=True) as prof:
            for _ in range(steps):
                selfplay.step(replay, stats)
    found: collections.Counter[str] = collections.Counter()
    for e in prof.events():
        if e.name in SYNC_OPS:
            stack = [line for line in (e.stack or []) if ".py" in line][:6]
            found[e.name + " <- " + " <- ".join(stack)] += 1
    return dict(found.most_common())


def profile_net(model_name: str, batch: int, device: str) -> list[dict]:
    """The evaluator's ops by device time (self time), most first."""
    env = VecEnv("conhex", device)
    torch.manual_seed(0)
    model = GraphNet(ModelConfig.from_name(model_name)).to(device).eval()
    evaluator = NetworkEvaluator(model, env, autocast=device == "cuda")
    state = env.initial_state(batch)
    gen = torch.Generator(device=device).manual_seed(0)
    for _ in range(20):  # positions in mid-game
        legal = env.legal_mask(state).float()
        state = env.step(state, torch.multinomial(legal + 1e-9 * (legal.sum(1, keepdim=True) == 0), 1,
                                                  generator=gen)[:, 0])
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.no_grad():
        for _ in range(5):
            evaluator(state)
        if device == "cuda":
            torch.cuda.synchronize()
        with torch.profiler.profile(activities=activities) as prof:
            for _ in range(10):
                evaluator(state)
            if device == "cuda":
                torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        device_us = getattr(e, "self_device_time_total", None)
        if device_us is None:
            device_us = getattr(e, "self_cuda_time_total", 0)
        rows.append({"op": e.key, "calls": e.count // 10, "device_ms": device_us / 1e3 / 10,
                     "cpu_ms": e.self_cpu_time_total / 1e3 / 10})
    key = "device_ms" if device == "cuda" else "cpu_ms"
    return sorted(rows, key=lambda r: -r[key])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    s = sub.add_parser("syncs", help="synchronising ops in self-play steps, by calling line")
    s.add_argument("--config", default="configs/conhex.yaml")
    s.add_argument("--games", type=int, default=512)
    s.add_argument("--steps", type=int, default=6)
    n = sub.add_parser("net", help="the evaluator's ops by device time, per call")
    n.add_argument("--model", default="l8h128")
    n.add_argument("--batch", type=int, default=4096)
    n.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    if args.what == "syncs":
        if not torch.cuda.is_available():
            raise SystemExit("cuda_profile.py syncs: needs a CUDA device")
        places = find_syncs(args.config, args.games, args.steps)
        ops = sync_ops_with_stacks(args.config, 64, 2)  # stacks are slow to collect: few games, 2 steps
        print(json.dumps({"steps": args.steps, "syncs": sum(places.values()), "places": places,
                          "sync_ops_in_2_steps": sum(ops.values()), "sync_op_stacks": ops}, indent=1))
    else:
        device = "cuda" if torch.cuda.is_available() else "cpu"
        rows = profile_net(args.model, args.batch, device)
        print(f"{args.model} batch {args.batch} on {device}: per call, ops by "
              f"{'device' if device == 'cuda' else 'CPU'} self time")
        for r in rows[:args.top]:
            print(f"{r['device_ms']:9.3f} ms device {r['cpu_ms']:9.3f} ms cpu {r['calls']:5d} calls  {r['op'][:90]}")
        print(json.dumps({"model": args.model, "batch": args.batch, "device": device, "top": rows[:args.top]}))


if __name__ == "__main__":
    main()

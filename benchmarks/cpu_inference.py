"""What torch offers for the network's inference on this CPU (issue 42): the network's evaluations a
second at the batch sizes the lean search calls it with, for each way of running it, with the largest
difference of its outputs from the shipped way (eager float32 with the sparse aggregation).

    python benchmarks/cpu_inference.py                         # l4h64, batches 1 4 16 64
    python benchmarks/cpu_inference.py --models l3h48 l4h64 l6h96 --batches 1 8 32 --seconds 2 --repeats 3

Ways (each in this process, one thread, interleaved over --repeats rounds; the best round counts):

* ``eager``: what play, GTP and serve run today (``Block.infer_``, float32, sparse aggregation);
* ``eager-dense``: the same with dense aggregation products (what CUDA and compiled code use);
* ``compiled``: ``torch.compile`` of the model (dense: the compiler cannot trace sparse tensors),
  one compilation per batch size (its seconds are reported apart);
* ``bf16``: every tensor in bfloat16 (``NetworkEvaluator(precision="bf16")``'s arithmetic).

The positions are from random ConHex games; the outputs compared are the policy logits over legal
moves and the value. Writes runs/bench/cpu_inference-TIME.json (``--publish``: also
benchmarks/results/cpu_inference.json).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conhex_zero.env.vec_env import VecEnv  # noqa: E402
from conhex_zero.nn.encode import Encoder  # noqa: E402
from conhex_zero.nn.model import GraphNet, ModelConfig  # noqa: E402

WAYS = ("eager", "eager-dense", "compiled", "bf16")


def positions(env: VecEnv, batch: int, seed: int):
    gen = torch.Generator().manual_seed(seed)
    state = env.initial_state(batch)
    for _ in range(12):
        state = env.reset_done(env.step(state, env.random_actions(state, gen)), gen)
    return state


def runner(way: str, model: GraphNet, encoder: Encoder):
    """A function of an encoded batch: the model's logits and value, run ``way``."""
    dense = encoder.graph.__class__(**{**encoder.graph.__dict__, "sparse": None})
    if way == "eager":
        return lambda e: model(e, encoder.graph)[:2]
    if way == "eager-dense":
        return lambda e: model(e, dense)[:2]
    if way == "compiled":
        compiled = torch.compile(model, dynamic=False)
        return lambda e: compiled(e, dense)[:2]
    weights = {n: p.detach().to(torch.bfloat16) for n, p in model.named_parameters()}
    return lambda e: torch.func.functional_call(model, weights, (e, dense))[:2]


def rate(fn, e, seconds: float) -> float:
    with torch.no_grad():
        fn(e)
        calls, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            fn(e)
            calls += 1
    return calls * e.x.shape[0] / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["l4h64"])
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 4, 16, 64])
    parser.add_argument("--ways", nargs="+", choices=WAYS, default=list(WAYS))
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--publish", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    env = VecEnv("conhex")
    rows = []
    for name in args.models:
        torch.manual_seed(0)
        model = GraphNet(ModelConfig.from_name(name)).eval()
        encoder = Encoder(env, connection=model.config.connection)
        for p in model.parameters():  # away from the initial values, so that every term counts
            p.data.add_(0.05 * torch.randn_like(p))
        for batch in args.batches:
            state = positions(env, batch, seed=batch)
            legal = env.legal_mask(state)
            e = encoder(state, legal)
            fns, compile_s = {}, None
            for way in args.ways:
                start = time.perf_counter()
                fns[way] = runner(way, model, encoder)
                with torch.no_grad():
                    fns[way](e)
                if way == "compiled":
                    compile_s = time.perf_counter() - start
            with torch.no_grad():
                ref_logits, ref_value = fns["eager"](e) if "eager" in fns else runner("eager", model, encoder)(e)
            best = {w: 0.0 for w in args.ways}
            for _ in range(args.repeats):
                for way in args.ways:
                    best[way] = max(best[way], rate(fns[way], e, args.seconds))
            for way in args.ways:
                with torch.no_grad():
                    logits, value = fns[way](e)
                diff = max(float((logits.float() - ref_logits)[legal[:, :logits.shape[1]]].abs().max()),
                           float((value.float() - ref_value).abs().max()))
                row = {"model": name, "batch": batch, "way": way, "evals_per_s": round(best[way], 1),
                       "vs_eager": round(best[way] / best["eager"], 3) if best.get("eager") else None,
                       "max_output_diff": round(diff, 5)}
                if way == "compiled":
                    row["compile_s"] = round(compile_s, 1)
                rows.append(row)
                print(f"{name} batch {batch:3d} {way:<12} {best[way]:9.0f} evals/s  x{row['vs_eager'] or 0:.2f}  "
                      f"max diff {diff:.2e}" + (f"  (compiled in {compile_s:.0f} s)" if way == "compiled" else ""),
                      flush=True)
    result = {"benchmark": "cpu_inference", "date": time.strftime("%Y-%m-%d"), "torch": torch.__version__,
              "cpu": platform.processor() or platform.machine(), "load_1min": round(os.getloadavg()[0], 2),
              "seconds": args.seconds, "repeats": args.repeats, "rows": rows}
    targets = [ROOT / "runs" / "bench" / f"cpu_inference-{time.strftime('%Y%m%d-%H%M%S')}.json"]
    if args.publish:
        targets.append(ROOT / "benchmarks" / "results" / "cpu_inference.json")
    for target in targets:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

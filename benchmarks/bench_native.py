"""Native inference for the CPU's searches (issue 49's first measurement): the network's eager path
against ONNX Runtime and AOTInductor, at the batch sizes a search evaluates (1-64 positions).

    python benchmarks/bench_native.py                                   # conhex-l4h64-v4.pt
    python benchmarks/bench_native.py --models checkpoints/hex7-l4h64.pt --ways eager aoti

Ways (one torch thread; ONNX Runtime with one intra-op thread and every graph optimisation):

* ``eager``: the shipped path, ``model(encoded, graph)`` under ``torch.inference_mode``
  (``Block.infer_``, the graph's sparse products).
* ``ort``: ``torch.onnx.export`` (the TorchScript exporter, ``dynamo=False``) of the functional
  path (``Block.forward``, the graph's dense blocks), a dynamic batch; inputs and outputs cross
  torch -> NumPy -> torch in every call, as a search would pay. Needs ``pip install onnxruntime
  onnx`` (not a dependency; skipped with a line when missing). The exporter of the in-place
  ``infer_`` path drops an input, so the functional path is exported.
* ``aoti``: ``torch.export`` of the in-place path, compiled ahead of time by
  ``torch._inductor.aoti_compile_and_package`` (a dynamic batch) and loaded with
  ``aoti_load_package``.

Every way's outputs are compared with the eager path's (largest absolute difference; the eager
functional path's own difference beside them is the floor of float reordering). Timing: warm-up,
then ``--rounds`` interleaved rounds of ``--calls`` calls of every way at every batch size; the best
round counts. Start-up: the first use (export, compile, load) and a later use in a new process
(import and load). Writes ``runs/native/results.json`` (or ``--out``), the exported files in
``runs/native`` (``--artifacts``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import torch
from torch import nn

from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.nn.encode import Encoded, Encoder, Graph

WAYS = ("eager", "ort", "aoti")


class Inference(nn.Module):
    """``forward(x [B, N, F], contact [B, C, 4]) -> (logits [B, A], value [B])``: the model's own
    forward on the graph's dense blocks (buffers), in place under ``no_grad`` (``lean``) or functional."""

    def __init__(self, model: nn.Module, graph: Graph, lean: bool):
        super().__init__()
        self.model, self.lean = model, lean
        self.register_buffer("from_cells", graph.from_cells.clone())
        self.register_buffer("cells_from_holes", graph.cells_from_holes.clone())
        self.register_buffer("cells_from_sides", graph.cells_from_sides.clone())
        self.meta = (graph.num_types, graph.num_holes, graph.num_cells)

    def forward(self, x: torch.Tensor, contact: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        graph = Graph(self.from_cells, self.cells_from_holes, self.cells_from_sides, *self.meta, None)
        with torch.no_grad() if self.lean else torch.enable_grad():
            logits, value, _ = self.model(Encoded(x=x, contact=contact), graph)
        return logits, value


def positions(env: VecEnv, encoder: Encoder, batch: int, seed: int, plies: int = 12) -> Encoded:
    """``batch`` positions after ``plies`` random moves (finished games start again), encoded."""
    gen = torch.Generator().manual_seed(seed)
    state = env.initial_state(batch)
    for _ in range(plies):
        state = env.reset_done(env.step(state, env.random_actions(state, gen)), gen)
    return encoder(state)


def in_new_process(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if out.returncode:
        return {"error": out.stderr[-1000:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def build(path: str, ways: list[str], folder: Path, info: dict) -> tuple:
    ckpt = load_checkpoint(path)
    env = VecEnv(ckpt.game)
    encoder = Encoder(env, connection=ckpt.model.config.connection)
    model, graph = ckpt.model.eval(), encoder.graph
    stem = Path(path).stem
    sample = positions(env, encoder, 4, 0)
    batch = torch.export.Dim("batch", min=1, max=4096)
    runners = {}

    def eager(e: Encoded):
        with torch.inference_mode():
            return model(e, graph)[:2]

    runners["eager"] = eager
    if "ort" in ways:
        try:
            import onnxruntime as ort
        except ImportError:
            print("ort: onnxruntime is not installed (pip install onnxruntime onnx): left out", flush=True)
        else:
            onnx_path = folder / f"{stem}.onnx"
            started = time.perf_counter()
            torch.onnx.export(Inference(model, graph, lean=False).eval(), (sample.x, sample.contact), str(onnx_path),
                              dynamo=False, input_names=["x", "contact"], output_names=["logits", "value"],
                              dynamic_axes={k: {0: "batch"} for k in ("x", "contact", "logits", "value")},
                              opset_version=18)
            exported = time.perf_counter()
            options = ort.SessionOptions()
            options.intra_op_num_threads = options.inter_op_num_threads = 1
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
            loaded = time.perf_counter()
            info["ort"] = {"version": ort.__version__, "export_s": exported - started, "first_use_s": loaded - started,
                           "new_process": in_new_process(
                               "import time, json; t0 = time.perf_counter(); import onnxruntime as ort; "
                               "o = ort.SessionOptions(); o.intra_op_num_threads = 1; "
                               f"s = ort.InferenceSession({str(onnx_path)!r}, o, providers=['CPUExecutionProvider']); "
                               "print(json.dumps({'import_and_load_s': time.perf_counter() - t0}))")}

            def run_ort(e: Encoded):
                logits, value = session.run(["logits", "value"], {"x": e.x.numpy(), "contact": e.contact.numpy()})
                return torch.from_numpy(logits), torch.from_numpy(value)

            runners["ort"] = run_ort
    if "aoti" in ways:
        package = folder / f"{stem}.pt2"
        started = time.perf_counter()
        program = torch.export.export(Inference(model, graph, lean=True).eval(), (sample.x, sample.contact),
                                      dynamic_shapes={"x": {0: batch}, "contact": {0: batch}}, strict=False)
        exported = time.perf_counter()
        torch._inductor.aoti_compile_and_package(program, package_path=str(package))
        compiled = time.perf_counter()
        compiled_fn = torch._inductor.aoti_load_package(str(package))
        loaded = time.perf_counter()
        info["aoti"] = {"export_s": exported - started, "compile_s": compiled - exported, "first_use_s": loaded - started,
                        "new_process": in_new_process(
                            "import time, json; t0 = time.perf_counter(); import torch; t1 = time.perf_counter(); "
                            f"f = torch._inductor.aoti_load_package({str(package)!r}); "
                            "print(json.dumps({'import_torch_s': t1 - t0, 'load_s': time.perf_counter() - t1}))")}

        def run_aoti(e: Encoded):
            with torch.inference_mode():
                logits, value = compiled_fn(e.x, e.contact)
            return logits, value

        runners["aoti"] = run_aoti
    return ckpt, env, encoder, runners


def measure(path: str, args: argparse.Namespace, folder: Path) -> dict:
    info: dict = {}
    ckpt, env, encoder, runners = build(path, args.ways, folder, info)
    ways = [w for w in args.ways if w in runners]
    print(f"\n== {path} ({ckpt.game}); start-up: {json.dumps({w: info[w] for w in ways if w in info})}", flush=True)
    functional = Inference(ckpt.model, encoder.graph, lean=False).eval()
    diffs: dict = {}
    for b in args.batches:
        e = positions(env, encoder, b, 5000 + b)
        ref_logits, ref_value = runners["eager"](e)
        with torch.no_grad():
            outputs = {"eager functional (the floor)": functional(e.x, e.contact)}
        outputs.update({w: runners[w](e) for w in ways[1:]})
        for w, (logits, value) in outputs.items():
            d = diffs.setdefault(w, {"logits": 0.0, "value": 0.0})
            d["logits"] = max(d["logits"], float((logits.detach() - ref_logits).abs().max()))
            d["value"] = max(d["value"], float((value.detach() - ref_value).abs().max()))
    info["max_abs_diff"] = diffs
    for w, d in diffs.items():
        print(f"largest difference from eager, {w}: logits {d['logits']:.2g}, value {d['value']:.2g}")
    inputs = {b: positions(env, encoder, b, 1000 + b) for b in args.batches}
    for b in args.batches:
        for w in ways:
            for _ in range(5):
                runners[w](inputs[b])
    best = {w: {b: float("inf") for b in args.batches} for w in ways}
    for _ in range(args.rounds):
        for b in args.batches:
            for w in ways:
                run, e = runners[w], inputs[b]
                started = time.perf_counter()
                for _ in range(args.calls):
                    run(e)
                best[w][b] = min(best[w][b], (time.perf_counter() - started) / args.calls)
    print(f"{'batch':>5} " + " ".join(f"{w + ' pos/s':>12}" for w in ways) + " " + " ".join(f"{w + '/eager':>11}" for w in ways[1:]))
    table = {}
    for b in args.batches:
        table[b] = {w: {"positions_per_s": b / best[w][b], "vs_eager": best["eager"][b] / best[w][b]} for w in ways}
        print(f"{b:>5} " + " ".join(f"{table[b][w]['positions_per_s']:>12.0f}" for w in ways) + " "
              + " ".join(f"{table[b][w]['vs_eager']:>10.2f}x" for w in ways[1:]))
    info["positions_per_s"] = table
    return info


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["checkpoints/conhex-l4h64-v4.pt"], metavar="CKPT")
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 2, 4, 8, 16, 32, 64], metavar="B")
    parser.add_argument("--ways", nargs="+", default=list(WAYS), choices=WAYS)
    parser.add_argument("--calls", type=int, default=200, help="calls a round per way and batch (default: 200)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the best counts (default: 3)")
    parser.add_argument("--out", default="runs/native/results.json", metavar="FILE")
    parser.add_argument("--artifacts", default="runs/native", metavar="DIR", help="where the exported files go "
                        "(default: runs/native)")
    args = parser.parse_args()
    if "eager" not in args.ways:
        args.ways = ["eager", *args.ways]
    torch.set_num_threads(1)
    folder = Path(args.artifacts)
    folder.mkdir(parents=True, exist_ok=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    results = {"torch": torch.__version__, "python": platform.python_version(), "torch_threads": 1,
               "calls": args.calls, "rounds": args.rounds, "load_before": os.getloadavg()[0], "models": {}}
    for path in args.models:
        results["models"][path] = measure(path, args, folder)
    results["load_after"] = os.getloadavg()[0]
    Path(args.out).write_text(json.dumps(results, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

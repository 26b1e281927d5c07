"""How long a person waits for the AI's first move with an empty native cache (issue 57).

    python benchmarks/bench_first_move.py                       # play and gtp, quiet and beside 2 busy processes
    python benchmarks/bench_first_move.py --busy 0 --repeats 1  # a quick look

For each load (``--busy``: that many busy processes beside the command, each a Python loop on a
core) and each command, in turn (interleaved, ``--repeats`` rounds):

* ``play CKPT --sims N``, a human move piped in: the seconds from the command's start to the line
  with the AI's first move;
* ``gtp CKPT --sims N``, ``genmove b`` piped in: the seconds to the answer;
* ``openings OPENINGS_CKPT`` (``--openings``, default the Hex 5x5 model, its default settings): the
  whole command's seconds;

once with ``--backend eager`` and once with the default backend and an **empty** native cache (a
new ``CONHEX_ZERO_CACHE`` folder each time: what a new user meets; the packages are then built
beside the command by a low-priority process). The ratio auto / eager is the issue's measure (at
most 1.2). Each command is stopped once it has answered, with the background builds it started,
and its cache folder is removed.

Writes ``--json`` (default ``runs/bench/first_move.json``; the published results are
``benchmarks/results/first_move.json``) and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _busy(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def _first_answer(command: list[str], feed: str, marker: str, env: dict, timeout: float) -> float:
    """Seconds from the start of ``command`` to the first stdout line containing ``marker``."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True, cwd=ROOT, env=env)
    process.stdin.write(feed)
    process.stdin.flush()
    try:
        while True:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"{' '.join(command)} ended without {marker!r}")
            if marker in line:
                return time.perf_counter() - started
            if time.perf_counter() - started > timeout:
                raise RuntimeError(f"{' '.join(command)}: no {marker!r} within {timeout} s")
    finally:
        process.kill()
        process.wait()


def measure(kind: str, backend: str, checkpoint: str, move: str, sims: int, timeout: float) -> float:
    cache = Path(tempfile.mkdtemp(prefix="conhex-cache-"))
    env = {**os.environ, "CONHEX_ZERO_CACHE": str(cache), "CONHEX_ZERO_BACKEND": backend}
    env.pop("CONHEX_ZERO_BUILD", None)
    base = [sys.executable, "-m", "conhex_zero"]
    try:
        if kind == "play":
            return _first_answer(base + ["play", checkpoint, "--sims", str(sims)], f"{move}\n", " plays ", env, timeout)
        if kind == "openings":
            started = time.perf_counter()
            subprocess.run(base + ["openings", checkpoint, "--json", str(cache / "o.json")], capture_output=True,
                           cwd=ROOT, env=env, timeout=timeout, check=True)
            return time.perf_counter() - started
        return _first_answer(base + ["gtp", checkpoint, "--sims", str(sims)], "genmove b\n", "= ", env, timeout)
    finally:  # the background builds this command started are stopped, then their folder goes
        subprocess.run(["pkill", "-f", f"native_worker {cache}"], capture_output=True)
        time.sleep(0.5)
        shutil.rmtree(cache, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", default="checkpoints/conhex-l4h64-v4.pt")
    parser.add_argument("--move", default="F6", help="the human's first move in play (default F6)")
    parser.add_argument("--sims", type=int, default=200)
    parser.add_argument("--openings", default="checkpoints/hex5-l4h64.pt", help="the model of the openings run")
    parser.add_argument("--kinds", nargs="+", default=["play", "gtp", "openings"], choices=["play", "gtp", "openings"])
    parser.add_argument("--busy", type=int, nargs="+", default=[0, 2], help="busy processes beside (default 0 2)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--json", default="runs/bench/first_move.json",
                        help="where the results go (benchmarks/results/first_move.json holds the published ones)")
    args = parser.parse_args(argv)
    rows: dict = {}
    for busy in args.busy:
        workers = _busy(busy)
        try:
            for kind in args.kinds:
                times: dict[str, list[float]] = {"eager": [], "auto": []}
                for _ in range(args.repeats):
                    for backend in ("eager", "auto"):
                        model = args.openings if kind == "openings" else args.checkpoint
                        seconds = measure(kind, backend, model, args.move, args.sims, args.timeout)
                        times[backend].append(seconds)
                        print(f"busy {busy} {kind} {backend}: {seconds:.2f} s", file=sys.stderr, flush=True)
                eager, auto = statistics.median(times["eager"]), statistics.median(times["auto"])
                rows[f"busy{busy}-{kind}"] = {"busy": busy, "command": kind, "eager_s": times["eager"],
                                              "auto_empty_cache_s": times["auto"], "median_eager_s": eager,
                                              "median_auto_s": auto, "ratio": auto / eager}
        finally:
            for w in workers:
                w.kill()
    result = {"checkpoint": args.checkpoint, "sims": args.sims, "repeats": args.repeats, "cpus": os.cpu_count(),
              "machine": platform.processor() or platform.machine(), "rows": rows}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    print(f"{'load':<8} {'command':<6} {'eager (s)':>10} {'empty cache (s)':>16} {'ratio':>6}")
    for row in rows.values():
        print(f"busy {row['busy']:<3} {row['command']:<6} {row['median_eager_s']:>10.2f} {row['median_auto_s']:>16.2f} "
              f"{row['ratio']:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The network's backends at the board (issue 49): eager PyTorch against the AOTInductor package, in
one process, interleaved, on the same positions.

    python benchmarks/bench_backends.py                       # conhex-l4h64-v4.pt, 3 rounds
    python benchmarks/bench_backends.py --rounds 5 --out benchmarks/results/backends.json

Three measures, each way in turn within every round (so that a change in the machine's load hits
both alike), the best round of each reported:

* ``network``: positions a second of the model alone at batch 1-64 (``--batches``), as the search
  calls it (``NetworkEvaluator``, legal mask and encoding done before timing);
* ``search``: the players' one-position search (lean tree, Gumbel, exact one-move tactics) of
  ``--sims`` simulations from ``--positions`` positions of random games: simulations a second,
  the network's share of the time (the model call alone), and whether both ways chose the same
  moves;
* ``gtp``: a new ``conhex-zero gtp MODEL --sims S`` process from its start to the answer of its
  first ``genmove`` (import, checkpoint, the package from the cache, one search), at ``--gtp-sims``
  (a list), interleaved ``--gtp-runs`` times.

The package is built into the cache first if it is not there (said on stderr, not timed).
Writes runs/bench/backends.json (or ``--out``).
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conhex_zero.agents.evaluators import NetworkEvaluator  # noqa: E402
from conhex_zero.agents.game_search import LEAN_MAX_BATCH, GameSearch  # noqa: E402
from conhex_zero.agents.search_configs import play_config  # noqa: E402
from conhex_zero.bench.search_bench import sample_positions  # noqa: E402
from conhex_zero.bench.timing import DeviceTimer  # noqa: E402
from conhex_zero.env.vec_env import VecEnv  # noqa: E402
from conhex_zero.nn.checkpoint import load_checkpoint  # noqa: E402
from conhex_zero.search import rng  # noqa: E402

WAYS = ("eager", "aoti")


def network_round(evaluators: dict, env: VecEnv, batches: list[int], calls: int, best: dict) -> None:
    for b in batches:
        state = sample_positions(env, b, seed=b)
        legal = env.legal_mask(state)
        for way, ev in evaluators.items():
            encoded = ev.encoder(state, legal)
            forward = ev.native or ev.model
            with torch.no_grad():
                forward(encoded, ev.encoder.graph)
                started = time.perf_counter()
                for _ in range(calls):
                    forward(encoded, ev.encoder.graph)
            rate = b * calls / (time.perf_counter() - started)
            best[way][b] = max(best[way].get(b, 0.0), rate)


def search_round(searches: dict, timers: dict, env: VecEnv, positions: int, sims: int, best: dict, moves: dict) -> None:
    states = [sample_positions(env, 1, plies=10 + 4 * i, seed=100 + i) for i in range(positions)]
    for way, gs in searches.items():
        timers[way].reset()
        chosen = []
        started = time.perf_counter()
        for i, state in enumerate(states):
            out = gs.run(state, rng.make_keys(i, 1))
            chosen.append(int(out.action[0]))
        elapsed = time.perf_counter() - started
        rate = positions * sims / elapsed
        if rate > best[way].get("sims_per_s", 0.0):
            best[way] = {"sims_per_s": rate, "network_fraction": timers[way].seconds() / elapsed}
        moves[way] = chosen


def gtp_first_genmove(model: str, sims: int, backend: str) -> float:
    """Seconds from a new ``gtp`` process's start to its first ``genmove`` answer."""
    env = {**os.environ, "CONHEX_ZERO_BACKEND": backend, "OMP_NUM_THREADS": "1"}
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "conhex_zero", "gtp", model, "--sims", str(sims), "--threads", "1"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=ROOT)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("genmove b\n")
    proc.stdin.flush()
    answer = proc.stdout.readline()
    seconds = time.perf_counter() - started
    proc.stdin.write("quit\n")
    proc.stdin.flush()
    err = proc.communicate(timeout=60)[1]
    if not answer.startswith("="):
        raise SystemExit(f"gtp ({backend}) answered {answer!r}: {err[-500:]}")
    if "unavailable" in err:
        raise SystemExit(f"gtp ({backend}): {err.strip()}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="checkpoints/conhex-l4h64-v4.pt", help="checkpoint (default: %(default)s)")
    p.add_argument("--batches", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32, 64], metavar="B")
    p.add_argument("--calls", type=int, default=100, help="network calls a batch size and round (default: 100)")
    p.add_argument("--sims", type=int, default=800, help="simulations of each search (default: 800)")
    p.add_argument("--positions", type=int, default=4, help="positions searched a round (default: 4)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the best counts (default: 3)")
    p.add_argument("--gtp-sims", type=int, nargs="*", default=[64, 800], metavar="S",
                   help="gtp start-up at these --sims (default: 64 800; none: skip)")
    p.add_argument("--gtp-runs", type=int, default=3, help="interleaved gtp start-ups a way (default: 3)")
    p.add_argument("--out", default="runs/bench/backends.json", metavar="FILE")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    checkpoint = load_checkpoint(args.model)
    env = VecEnv(checkpoint.game)
    evaluators, searches, timers = {}, {}, {}
    for way in WAYS:
        timers[way] = DeviceTimer(env.device)
        evaluators[way] = NetworkEvaluator(checkpoint.model, env, backend=way, label=args.model, timer=timers[way])
        if way == "aoti" and evaluators[way].native is None:
            raise SystemExit("the AOTInductor package could not be built here (see above)")
        searches[way] = GameSearch(env, evaluators[way], play_config(args.sims), tactics=True,
                                   lean_max_batch=LEAN_MAX_BATCH)
    network: dict = {w: {} for w in WAYS}
    search: dict = {w: {} for w in WAYS}
    same_moves = True
    for r in range(args.rounds):
        network_round(evaluators, env, args.batches, args.calls, network)
        moves: dict = {}
        search_round(searches, timers, env, args.positions, args.sims, search, moves)
        same_moves &= moves["eager"] == moves["aoti"]
        print(f"round {r + 1}: search {search['eager']['sims_per_s']:,.0f} (eager) and {search['aoti']['sims_per_s']:,.0f} "
              f"(aoti) simulations/s so far", flush=True)
    gtp: dict = {}
    for sims in args.gtp_sims:
        times: dict = {w: [] for w in WAYS}
        for _ in range(args.gtp_runs):
            for way in WAYS:
                times[way].append(gtp_first_genmove(args.model, sims, way))
        gtp[sims] = {w: min(t) for w, t in times.items()} | {"runs": times}
    print(f"\n{args.model} ({checkpoint.game}), one torch thread, torch {torch.__version__}")
    print(f"{'batch':>5} {'eager pos/s':>12} {'aoti pos/s':>12} {'aoti/eager':>10}")
    for b in args.batches:
        e, a = network["eager"][b], network["aoti"][b]
        print(f"{b:>5} {e:>12,.0f} {a:>12,.0f} {a / e:>9.2f}x")
    e, a = search["eager"], search["aoti"]
    print(f"search, {args.sims} simulations: eager {e['sims_per_s']:,.0f}/s (network {e['network_fraction']:.0%}), "
          f"aoti {a['sims_per_s']:,.0f}/s (network {a['network_fraction']:.0%}): {a['sims_per_s'] / e['sims_per_s']:.2f}x; "
          f"same moves: {same_moves}")
    for sims, t in gtp.items():
        print(f"gtp first genmove at --sims {sims}: eager {t['eager']:.2f} s, aoti {t['aoti']:.2f} s "
              f"({t['aoti'] / t['eager']:.2f}x)")
    results = {"model": args.model, "game": checkpoint.game, "torch": torch.__version__, "python": platform.python_version(),
               "cpu": platform.processor() or platform.machine(), "threads": 1, "rounds": args.rounds,
               "load_before_after": os.getloadavg()[0], "network_positions_per_s": network,
               "search": {"simulations": args.sims, "positions": args.positions, **search,
                          "aoti_vs_eager": a["sims_per_s"] / e["sims_per_s"], "same_moves": same_moves},
               "gtp_first_genmove_s": gtp}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

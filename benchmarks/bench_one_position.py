"""The search where a person waits: one position, the lean tree against the batched tree, and the
batched self-play search against an earlier checkout of the code.

    python benchmarks/bench_one_position.py                       # lean vs batched, batch 1, 800 sims
    python benchmarks/bench_one_position.py --baseline ../old      # + that checkout at batch 1 and 256

Each figure is ``conhex-zero bench search --model MODEL --batch B --sims S --json`` run in its own
process (one torch thread unless --threads says more), the variants interleaved ``--repeats`` times
so that a change in the machine's load hits them alike; the best run of each is reported (the
least disturbed). ``--baseline DIR`` names a checkout of another commit (``git worktree add DIR
COMMIT``): its ``bench search`` runs from there (its own ``conhex_zero`` package first on
``PYTHONPATH``) at ``--batch-large`` for the "no slower than before" comparison; that checkout has no
``--tree`` option when it predates the lean search, and at a large batch both use the batched tree.
Results are printed and written to runs/bench/ (``--publish``: benchmarks/results/one_position.json;
``--out FILE``: there).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conhex_zero.bench.output import add_output_arguments, add_threads_option, check_threads, result_path, write_results  # noqa: E402


def bench_search(args: list[str], threads: int, code: Path = ROOT) -> dict:
    """One ``bench search`` run of the code in ``code``, in a fresh process; its JSON result."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    command = [sys.executable, "-c", "from conhex_zero.cli.main import main; raise SystemExit(main())",
               "bench", "search", *args, "--threads", str(threads), "--json"]
    done = subprocess.run(command, cwd=code, env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"bench search {' '.join(args)} failed in {code}:\n{done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="l4h64", help="network size (default: l4h64)")
    p.add_argument("--game", default="conhex", help="game spec (default: conhex)")
    p.add_argument("--sims", type=int, default=800, help="simulations per search at batch 1 (default: 800)")
    p.add_argument("--seconds", type=float, default=10.0, help="measuring time per run (default: 10)")
    p.add_argument("--repeats", type=int, default=3, help="interleaved runs of each variant (default: 3)")
    p.add_argument("--baseline", type=Path, metavar="DIR", help="a checkout of earlier code for the batch-256 comparison")
    p.add_argument("--batch-large", type=int, default=256, help="the large batch compared with --baseline (default: 256)")
    p.add_argument("--sims-large", type=int, default=64, help="simulations at the large batch (default: 64)")
    add_output_arguments(p, "one_position")
    add_threads_option(p)
    args = p.parse_args(argv)
    check_threads(p, args.threads)
    threads = args.threads
    if args.baseline is not None and not (args.baseline / "conhex_zero").is_dir():
        p.error(f"--baseline {args.baseline}: not a checkout of this project (no conhex_zero/ in it)")
    common = ["--game", args.game, "--model", args.model, "--seconds", str(args.seconds)]
    variants: dict[str, tuple[list[str], Path]] = {
        "lean, batch 1": (common + ["--batch", "1", "--sims", str(args.sims), "--tree", "lean"], ROOT),
        "batched, batch 1": (common + ["--batch", "1", "--sims", str(args.sims), "--tree", "batched"], ROOT),
    }
    large = common + ["--batch", str(args.batch_large), "--sims", str(args.sims_large)]
    if args.baseline is not None:  # the earlier code at batch 1 (its only tree), then both at the large batch
        variants["baseline, batch 1"] = (common + ["--batch", "1", "--sims", str(args.sims)], args.baseline.resolve())
        variants[f"batched, batch {args.batch_large}"] = (large + ["--tree", "batched"], ROOT)
        variants[f"baseline, batch {args.batch_large}"] = (large, args.baseline.resolve())
    runs: dict[str, list[dict]] = {name: [] for name in variants}
    for repeat in range(args.repeats):
        for name, (bench_args, code) in variants.items():
            r = bench_search(bench_args, threads, code)
            runs[name].append(r)
            per_eval = (f", {r['evals_per_sim']:.2f} evaluations a simulation, {r['network_us_per_eval']:.0f} us each"
                        if "evals_per_sim" in r else "")  # an earlier checkout's bench has no such keys
            print(f"[{repeat + 1}/{args.repeats}] {name:<22} {r['sims_per_s']:9.0f} simulations/s, "
                  f"network {r['network_fraction']:.2f}{per_eval}", flush=True)
    best = {name: max(rs, key=lambda r: r["sims_per_s"]) for name, rs in runs.items()}
    lean, batched = best["lean, batch 1"], best["batched, batch 1"]
    summary = {"lean_sims_per_s": lean["sims_per_s"], "batched_sims_per_s": batched["sims_per_s"],
               "speedup": lean["sims_per_s"] / batched["sims_per_s"],
               "lean_network_fraction": lean["network_fraction"],
               "lean_evals_per_sim": lean.get("evals_per_sim"), "lean_network_us_per_eval": lean.get("network_us_per_eval")}
    print(f"\nbatch 1, {args.sims} simulations: lean {lean['sims_per_s']:.0f}/s (network {lean['network_fraction']:.2f}), "
          f"batched {batched['sims_per_s']:.0f}/s: {summary['speedup']:.1f}x")
    if args.baseline is not None:
        old = best["baseline, batch 1"]
        summary.update(baseline_sims_per_s=old["sims_per_s"], speedup_vs_baseline=lean["sims_per_s"] / old["sims_per_s"])
        print(f"batch 1, {args.sims} simulations at {args.baseline}: {old['sims_per_s']:.0f}/s: the lean search makes "
              f"{summary['speedup_vs_baseline']:.1f}x")
        now, before = best[f"batched, batch {args.batch_large}"], best[f"baseline, batch {args.batch_large}"]
        summary.update(large_sims_per_s=now["sims_per_s"], baseline_large_sims_per_s=before["sims_per_s"],
                       large_ratio=now["sims_per_s"] / before["sims_per_s"])
        print(f"batch {args.batch_large}, {args.sims_large} simulations: {now['sims_per_s']:.0f}/s now, "
              f"{before['sims_per_s']:.0f}/s at {args.baseline} ({summary['large_ratio']:.2f}x)")
    result = {"summary": summary, "best": best, "runs": runs, "threads": threads,
              "baseline": str(args.baseline) if args.baseline else None, "load_average": os.getloadavg()}
    write_results(result_path(args, "one_position"), result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

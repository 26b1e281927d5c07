"""Play every arena match whose result README.md, docs/ or checkpoints/README.md quotes, and tabulate them.

    python benchmarks/published_matches.py                    # all of them (about 20 CPU minutes)
    python benchmarks/published_matches.py --only hex5-vs-rollout200 --jobs 2

Each match is one ``conhex-zero arena ... --json`` run with its own seed (one torch thread each, up
to --jobs at once); the records and JSON results go to OUT (default runs/published/), the table
(games, distinct games and openings, wins, score with its 95% interval over the distinct games,
seconds per move) is printed and written to OUT/results.json. The ConHex model's table comes from
``benchmarks/measure_model.py`` (it scales the model's simulations for the equal-time match).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

MATCHES: dict[str, list[str]] = {
    "hex5-vs-rollout200": ["checkpoints/hex5-l4h64.pt", "mcts-rollout:200", "--games", "200", "--sims", "32",
                           "--seed", "101"],
    "hex5-vs-rollout1000": ["checkpoints/hex5-l4h64.pt", "mcts-rollout:1000", "--games", "100", "--sims", "32",
                            "--seed", "202"],
    "hex5-scoring-vs-rollout200": ["checkpoints/hex5-l4h64.pt", "mcts-rollout:200", "--games", "40", "--scoring"],
    "hex7avg-vs-hex7": ["checkpoints/hex7-l4h64-avg.pt", "checkpoints/hex7-l4h64.pt", "--games", "100", "--sims", "32",
                        "--seed", "7"],
    "hex7avg-vs-rollout200": ["checkpoints/hex7-l4h64-avg.pt", "mcts-rollout:200", "--games", "100", "--sims", "32",
                              "--seed", "101"],
    "hex7-vs-rollout200": ["checkpoints/hex7-l4h64.pt", "mcts-rollout:200", "--games", "100", "--sims", "32",
                           "--seed", "101"],
    "hex4-vs-random": ["checkpoints/hex4-l3h32.pt", "random", "--games", "40", "--sims", "16"],
    "hex4-vs-rollout64": ["checkpoints/hex4-l3h32.pt", "mcts-rollout:64", "--games", "40", "--sims", "16"],
}


def play(name: str, args: list[str], out: Path) -> dict:
    cmd = ["conhex-zero", "arena", *args, "--json", "--quiet", "--threads", "1", "--records", str(out / f"{name}.jsonl")]
    print("$", " ".join(cmd), flush=True)
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{name}: arena failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    result = json.loads(done.stdout)
    result["command"] = "conhex-zero arena " + " ".join(args)
    result["wall_seconds"] = round(time.perf_counter() - start, 1)
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="+", choices=sorted(MATCHES), help="play only these matches")
    ap.add_argument("--jobs", type=int, default=1, help="matches played at once (default: 1)")
    ap.add_argument("--out", default="runs/published", help="records and results.json (default: runs/published)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = args.only or list(MATCHES)
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        futures = {n: pool.submit(play, n, MATCHES[n], out) for n in names}
        results = {n: f.result() for n, f in futures.items()}
    meta = {"processor": platform.processor() or platform.machine(), "date": time.strftime("%Y-%m-%d"),
            "python": platform.python_version()}
    (out / "results.json").write_text(json.dumps({"meta": meta, "matches": results}, indent=1) + "\n")
    print(f"\n{'match':<28} {'games':>5} {'distinct':>8} {'openings':>8} {'plies':>5} {'wins':>9} {'score':>6}  "
          f"{'95% interval':<15} s/move")
    for name, r in results.items():
        low, high = r["score_ci95"]
        spm = ", ".join("-" if x is None else f"{x:.3f}" for x in r["seconds_per_move"])
        pair = f"  pairs {r['pair_score']['player1']:.3f} {r['pair_score']['ci95']}" if "pair_score" in r else ""
        print(f"{name:<28} {r['games']:>5} {r['distinct_games']:>8} {r['distinct_openings']:>8} {r['opening_plies']:>5} "
              f"{r['wins'][0]:>4}/{r['games']:<4} {r['score']:>6.3f}  [{low:.3f}, {high:.3f}] {spm}{pair}")
    print(f"results: {out / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

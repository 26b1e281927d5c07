"""Measure a trained model against the fixed references, the way checkpoints/README.md reports it.

    python benchmarks/measure_model.py checkpoints/conhex-l4h64.pt --games 200 --out runs/measure-conhex

For each reference (mcts-rollout:1000, mcts-rollout:200, random): a match of --games games in
colour-exchanged pairs over distinct random openings (the arena's: longer than one move where the
board has too few distinct first moves; the game's own rules: ConHex with the swap rule on),
Wilson 95% intervals over the distinct games, every game added to an Elo ladder (OUT/ladder.jsonl, random = 0). Then the
equal-time match: the model's simulations are scaled so that its thinking time per move equals
rollout-MCTS 1000's, measured in the first match, and it plays rollout-MCTS 1000 again. Writes
OUT/results.json and prints the table; every match's records go to OUT/.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def arena(p1: str, p2: str, games: int, out: Path, seed: int, extra: list[str]) -> dict:
    """One match; its games go to ``out/ladder-<seed>/ladder.jsonl`` (merged at the end, so that
    matches may run at once)."""
    def name(player: str) -> str:  # the whole spec, simulations included: every match its own file
        return Path(player).name.replace(".pt", "").replace(":", "_").replace("=", "")

    records = out / f"{name(p1)}-vs-{name(p2)}.jsonl"
    cmd = ["conhex-zero", "arena", p1, p2, "--games", str(games), "--seed", str(seed), "--json", "--quiet",
           "--records", str(records), "--ladder", str(out / f"ladder-{seed}"), *extra]
    print("$", " ".join(cmd), flush=True)
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"arena failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    result = json.loads(done.stdout)
    result["wall_seconds"] = round(time.perf_counter() - start, 1)
    return result


def merge_ladders(out: Path) -> None:
    """Concatenate the matches' ladders into ``out/ladder.jsonl`` (for ``conhex-zero ladder OUT``)."""
    parts = sorted(out.glob("ladder-*/ladder.jsonl"))
    (out / "ladder.jsonl").write_text("".join(p.read_text() for p in parts))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoint")
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--sims", type=int, default=64, help="the model's simulations (its default: 64)")
    ap.add_argument("--references", nargs="+", default=["mcts-rollout:1000", "mcts-rollout:200", "random"])
    ap.add_argument("--out", default="runs/measure")
    ap.add_argument("--equal-time-games", type=int, default=None,
                    help="games of the equal-time match (default: --games; 0 skips it)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="matches played at once, one process (one thread) each (default: 1)")
    ap.add_argument("--extra", nargs=argparse.REMAINDER, default=[], help="more arena arguments (e.g. --scoring)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model = f"{args.checkpoint}:sims={args.sims}"
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        futures = {ref: pool.submit(arena, model, ref, args.games, out, k, args.extra)
                   for k, ref in enumerate(args.references)}
        results = {ref: f.result() for ref, f in futures.items()}
    strongest = args.references[0]
    mine, theirs = results[strongest]["seconds_per_move"]
    equal_games = args.games if args.equal_time_games is None else args.equal_time_games
    if mine and theirs and equal_games > 0:
        sims = max(1, round(args.sims * theirs / mine))
        name = f"{strongest} at equal time"
        results[name] = arena(f"{args.checkpoint}:sims={sims}", strongest, equal_games, out,
                              seed=len(args.references), extra=args.extra)
        results[name]["model_sims"] = sims
    merge_ladders(out)
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"\n{'opponent':<32} {'score':>7}  {'95% interval':<16} {'wins':>9}  {'distinct':>8}  {'s/move (model, ref)'}")
    for name, r in results.items():
        low, high = r["score_ci95"]  # over the distinct games
        spm = ", ".join("-" if x is None else f"{x:.3f}" for x in r["seconds_per_move"])
        print(f"{name:<32} {r['score']:>7.3f}  [{low:.3f}, {high:.3f}]  {r['wins'][0]:>4}/{r['games']:<4}  "
              f"{r['distinct_games']:>8}  {spm}")
    print(f"ladder: conhex-zero ladder {out}; results: {out / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

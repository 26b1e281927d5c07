"""Measure a trained model against the fixed references, the way checkpoints/README.md reports it.

    python benchmarks/measure_model.py checkpoints/conhex-l4h64.pt --games 200 --out runs/measure-conhex

For each reference (mcts-rollout:1000, mcts-rollout:200, random): a match of --games games in
colour-exchanged pairs over random openings (the game's own rules: ConHex with the swap rule on),
Wilson 95% intervals, every game added to an Elo ladder (OUT/ladder.jsonl, random = 0). Then the
equal-time match: the model's simulations are scaled so that its thinking time per move equals
rollout-MCTS 1000's, measured in the first match, and it plays rollout-MCTS 1000 again. Writes
OUT/results.json and prints the table; every match's records go to OUT/.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path


def arena(p1: str, p2: str, games: int, out: Path, seed: int, extra: list[str]) -> dict:
    records = out / f"{Path(p1).stem}-vs-{p2.replace(':', '_')}.jsonl"
    cmd = ["conhex-zero", "arena", p1, p2, "--games", str(games), "--seed", str(seed), "--json", "--quiet",
           "--records", str(records), "--ladder", str(out), *extra]
    print("$", " ".join(cmd), flush=True)
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoint")
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--sims", type=int, default=64, help="the model's simulations (its default: 64)")
    ap.add_argument("--references", nargs="+", default=["mcts-rollout:1000", "mcts-rollout:200", "random"])
    ap.add_argument("--out", default="runs/measure")
    ap.add_argument("--extra", nargs=argparse.REMAINDER, default=[], help="more arena arguments (e.g. --scoring)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model = f"{args.checkpoint}:sims={args.sims}"
    results = {}
    for k, ref in enumerate(args.references):
        results[ref] = arena(model, ref, args.games, out, seed=k, extra=args.extra)
    strongest = args.references[0]
    mine, theirs = results[strongest]["seconds_per_move"]
    if mine and theirs:
        sims = max(1, round(args.sims * theirs / mine))
        results[f"{strongest} at equal time"] = arena(f"{args.checkpoint}:sims={sims}", strongest, args.games, out,
                                                      seed=len(args.references), extra=args.extra)
        results[f"{strongest} at equal time"]["model_sims"] = sims
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"\n{'opponent':<32} {'score':>7}  {'95% interval':<16} {'wins':>9}  {'s/move (model, ref)'}")
    for name, r in results.items():
        low, high = r["score_ci95"]
        spm = ", ".join("-" if x is None else f"{x:.3f}" for x in r["seconds_per_move"])
        print(f"{name:<32} {r['score']:>7.3f}  [{low:.3f}, {high:.3f}]  {r['wins'][0]:>4}/{r['games']:<4}  {spm}")
    print(f"ladder: conhex-zero ladder {out}; results: {out / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Pieces per win (the scoring variant's measure) from arena records, per winning player.

    python benchmarks/pieces_per_win.py runs/measure-conhex/*.jsonl

Replays every recorded game from the empty board and counts the pieces of the winner's colour on
the final board (``agents.scoring.pieces_placed``), as ``arena --scoring`` does for its own games.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from conhex_zero.agents.scoring import pieces_placed
from conhex_zero.env.notation import play_moves
from conhex_zero.env.vec_env import VecEnv


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("records", nargs="+", help="arena records (JSON lines)")
    args = ap.parse_args()
    for path in args.records:
        lines = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
        if not lines:
            print(f"{path}: no games")
            continue
        if not all(isinstance(r, dict) and "game" in r and "moves" in r for r in lines):
            print(f"{path}: not arena records (skipped)")
            continue
        env = VecEnv(lines[0]["game"])
        wins: dict[str, list[int]] = {}
        for record in lines:
            final = play_moves(env, record["moves"])
            wins.setdefault(record["winner_name"], []).append(int(pieces_placed(final.holes, final.winner)[0]))
        summary = ", ".join(f"{name}: {len(v)} wins, {sum(v) / len(v):.2f} pieces per win" for name, v in wins.items())
        print(f"{path}: {summary}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

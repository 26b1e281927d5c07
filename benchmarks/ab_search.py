"""A/B test of search settings: one network, two SearchConfig variants, an arena match between them.

    python benchmarks/ab_search.py checkpoints/hex5-l4h64.pt --a q_range=fixed --b q_range=minmax --games 200
    python benchmarks/ab_search.py checkpoints/conhex-l4h64.pt --a solver=true --b solver=false --sims 64

Both players are the checkpoint with the play search (``agents.search_configs.play_config``, no root
noise) at --sims simulations, differing only in the given SearchConfig fields (``key=value``:
numbers, true/false, or words). The match is
the arena's: colour-exchanged pairs over distinct random openings, Wilson interval over distinct
games. Prints the result and writes it as JSON (--out).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import torch

from conhex_zero.agents.arena import play_match
from conhex_zero.agents.players import network_player
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.agents.search_configs import play_config
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.search.mcts import SearchConfig


def parse_fields(pairs: list[str]) -> dict:
    fields = {f.name: f for f in dataclasses.fields(SearchConfig)}
    out = {}
    for pair in pairs:
        key, _, text = pair.partition("=")
        if key not in fields:
            raise SystemExit(f"unknown SearchConfig field {key!r}; fields: {', '.join(fields)}")
        value: object = text
        if text.lower() in ("true", "false"):
            value = text.lower() == "true"
        else:
            try:
                value = int(text)
            except ValueError:
                try:
                    value = float(text)
                except ValueError:
                    value = text
        out[key] = value
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoint")
    ap.add_argument("--a", nargs="+", default=[], metavar="KEY=VALUE", help="player A's SearchConfig fields")
    ap.add_argument("--b", nargs="+", default=[], metavar="KEY=VALUE", help="player B's SearchConfig fields")
    ap.add_argument("--sims", type=int, default=64)
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--game", default=None, help="default: the checkpoint's game")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=None, help="write the result as JSON to this file")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    ckpt = load_checkpoint(args.checkpoint)
    env = VecEnv(args.game or ckpt.game)
    base = play_config(args.sims)
    a, b = parse_fields(args.a), parse_fields(args.b)
    name_a = "A:" + ",".join(args.a or ["default"])
    name_b = "B:" + ",".join(args.b or ["default"])
    player_a = network_player(env, ckpt.model, args.sims, args.seed, config=dataclasses.replace(base, **a), name=name_a)
    player_b = network_player(env, ckpt.model, args.sims, args.seed + 1, config=dataclasses.replace(base, **b),
                              name=name_b)
    start = time.perf_counter()
    result = play_match(env, player_a, player_b, args.games, seed=args.seed, opening_plies=1)
    low, high = result.score_ci95
    seconds = [round(x, 5) if x is not None else None for x in result.seconds_per_move]
    print(f"{env.game.spec}, {args.checkpoint} at {args.sims} simulations: {name_a} vs {name_b}")
    print(f"  A wins {result.wins[0]} of {result.games} ({result.distinct_games} distinct games, "
          f"{result.distinct_openings} openings of {result.opening_plies} plies): score {result.distinct_score:.3f} "
          f"[{low:.3f}, {high:.3f}]; seconds per move A {seconds[0]}, B {seconds[1]}; "
          f"{time.perf_counter() - start:.0f} s")
    if args.out:
        data = {"checkpoint": args.checkpoint, "game": env.game.spec, "sims": args.sims, "a": a, "b": b,
                **result.to_json()}
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(data, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

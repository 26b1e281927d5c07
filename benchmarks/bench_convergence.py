"""Does the search converge to the truth? Sign agreement with the exact solver versus simulations.

    python benchmarks/bench_convergence.py --game hex-4 --positions 400     # every variant, ~45 min
    python benchmarks/bench_convergence.py --game hex-4 --positions 2000 --networks shipped --configs play analysis
    python benchmarks/bench_convergence.py --game hex-5 --positions 2000 --sims 16 64 256 1024 3200 \
        --networks shipped --configs play analysis                           # about 35 min per setting

Distinct random positions at every stage of a Hex 4x4 or 5x5 game (uniformly random play of 0 .. H -
2 plies, running positions only, no two equal up to the board's symmetry) are solved exactly
(``analysis.solver``); then every configuration searches them all at every simulation count, and the
benchmark counts the positions whose search value has the solver's sign (a value of exactly 0 counts
as wrong). A configuration is a named search setting (``agents.search_configs.VARIANTS``: ``play``
and ``analysis`` are what the players and the opening analysis use; the others take one ingredient
away; ``-no-tactics`` turns the one-move tactics off) and a network (the shipped checkpoint of the
board, or ``uniform``: uniform prior, value 0). Three
values of one search are scored:

* ``action_q``: the Q of the move the search plays (what ``openings``, play and GTP report);
* ``root``: the root's mean value over all simulations (its proven result when it has one);
* ``policy``: the improved policy's expected Q (Gumbel's pi' weighting of completed Q).

Writes OUT/convergence-<game>.json (per configuration, estimator and simulation count: the share
that agrees, and how many roots were proven) and a plot OUT/convergence-<game>.png, and prints the
table. One torch thread unless --threads says otherwise.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import sys
import time
from pathlib import Path

import torch

from conhex_zero.agents.distinct import GameCanon
from conhex_zero.agents.evaluators import NetworkEvaluator, UniformEvaluator
from conhex_zero.agents.search_configs import VARIANTS, variant_config
from conhex_zero.agents.game_search import GameSearch
from conhex_zero.analysis.solver import HexSolver
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.search import rng
from conhex_zero.search import select as rules
from conhex_zero.search.mcts import SearchConfig

SHIPPED = {"hex-4": "checkpoints/hex4-l3h32.pt", "hex-5": "checkpoints/hex5-l4h64.pt"}


def random_positions(env: VecEnv, count: int, seed: int) -> State:
    """``count`` distinct running positions (up to symmetry), each after a uniformly random number
    (0 .. H - 2) of random plies."""
    gen = torch.Generator().manual_seed(seed)
    H = env.num_holes
    canon = GameCanon(env.game)
    seen: set = set()
    kept: list[State] = []
    have = 0
    while have < count:
        batch = 4 * count
        plies = torch.randint(0, H - 1, (batch,), generator=gen)
        state = env.initial_state(batch)
        for ply in range(H - 1):
            moved = env.step(state, env.random_actions(state, gen, swap=False))
            state = state.where(plies > ply, moved)  # games still in their opening take the move
        rows = []
        for b in (~state.done).nonzero().squeeze(1).tolist():
            key = canon.board_key(state.holes[b].tolist())
            if key not in seen:
                seen.add(key)
                rows.append(b)
        chosen = state[torch.tensor(rows, dtype=torch.long)]
        kept.append(chosen)
        have += chosen.batch_size
    return State.cat(kept)[torch.arange(count)]


def estimates(out, cfg: SearchConfig) -> dict[str, torch.Tensor]:
    """The three values of a search for the player to move (``[B]`` each)."""
    t = out.tree
    root = torch.zeros(t.batch_size, dtype=torch.long)
    action_q = out.action_value
    n = t.rows(t.edge_visits, root)
    legal, prior, logits = t.rows(t.legal, root), t.rows(t.prior, root), t.rows(t.logits, root)
    q = out.q_values
    sigma = rules.sigma_completed_q(n, q * n.clamp(min=1), prior, legal, t.raw_value[:, 0], cfg.c_visit, cfg.c_scale,
                                    cfg.q_range == "fixed", cfg.q_min_spread)
    improved = rules.masked_softmax(logits + sigma, legal)
    visited = n > 0
    pi_seen = (prior * visited).sum(1)
    total = n.sum(1)
    mean_seen = (prior * q * visited).sum(1) / pi_seen.clamp(min=1e-12)
    v_mix = (t.raw_value[:, 0] + total * mean_seen) / (1 + total)
    completed = torch.where(visited, q, v_mix[:, None])
    policy = (improved * completed).sum(1)
    return {"action_q": action_q, "root": out.root_value, "policy": policy}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--game", default="hex-4", choices=sorted(SHIPPED))
    ap.add_argument("--positions", type=int, default=400)
    ap.add_argument("--sims", type=int, nargs="+", default=[16, 32, 64, 128, 256, 512, 1024, 3200])
    ap.add_argument("--configs", nargs="+", default=["play", "analysis", "analysis-no-mix", "play-no-solver", "mctx",
                                                      "puct", "analysis-no-tactics"],
                    help="search settings by name (agents/search_configs.py VARIANTS, -no-tactics suffix allowed)")
    ap.add_argument("--networks", nargs="+", default=["shipped", "uniform"])
    ap.add_argument("--checkpoint", help="the network called 'shipped' (default: the shipped model of --game)")
    ap.add_argument("--batch", type=int, default=100, help="positions searched at once")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default="runs/convergence")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    env = VecEnv(args.game)
    solver = HexSolver(env.game.board)
    started = time.perf_counter()
    positions = random_positions(env, args.positions, args.seed)
    truth = solver.state_winners(positions) == positions.to_move  # [P] the player to move wins
    print(f"{args.game}: {args.positions} positions solved in {time.perf_counter() - started:.1f} s "
          f"(player to move wins {int(truth.sum())}); plies {positions.ply.min().item()}..{positions.ply.max().item()}",
          flush=True)
    checkpoint = args.checkpoint or SHIPPED[args.game]
    try:
        loaded = load_checkpoint(checkpoint)
    except (OSError, ValueError) as err:
        raise SystemExit(f"--checkpoint: {err}") from None
    if loaded.game != args.game:
        raise SystemExit(f"--checkpoint: {checkpoint} plays {loaded.game}, not {args.game} (set --game)")
    model = loaded.model
    results = []
    for network in args.networks:
        evaluator = NetworkEvaluator(model, env) if network == "shipped" else UniformEvaluator(env)
        for name in args.configs:
            if name.removesuffix("-no-tactics") not in VARIANTS:
                raise SystemExit(f"unknown config {name!r}: one of {', '.join(VARIANTS)} (optionally -no-tactics)")
            tactics = "off" if name.endswith("-no-tactics") else "on"
            row = {"network": network, "config": name, "settings": VARIANTS[name.removesuffix("-no-tactics")],
                   "tactics": tactics, "sims": {}}
            for sims in args.sims:
                cfg = variant_config(name, sims)
                if network == "uniform" and cfg.scheme == "puct":
                    cfg = dataclasses.replace(cfg, fpu=1.0)  # uniform priors: try every move once
                search = GameSearch(env, evaluator, cfg, tactics=tactics == "on")
                agree = {k: 0 for k in ("action_q", "root", "policy")}
                proven = 0
                signs = []  # per position: does the chosen move's value have the solver's sign
                tick = time.perf_counter()
                for start in range(0, args.positions, args.batch):
                    idx = torch.arange(start, min(start + args.batch, args.positions))
                    batch = positions[idx]
                    out = search.run(batch, rng.make_keys(args.seed + sims, len(idx)))
                    for k, v in estimates(out, cfg).items():
                        right = ((v > 0) == truth[idx]).logical_and(v != 0)
                        agree[k] += int(right.sum())
                        if k == "action_q":
                            signs += right.int().tolist()
                    proven += int((out.root_proven != 0).sum()) if out.root_proven is not None else 0
                row["sims"][sims] = {k: v / args.positions for k, v in agree.items()}
                row["sims"][sims]["proven"] = proven / args.positions
                row["sims"][sims]["seconds"] = round(time.perf_counter() - tick, 1)
                row["sims"][sims]["right"] = "".join(map(str, signs))  # per position, action_q
                print(f"{network:<8} {name:<20} sims {sims:>5}: "
                      + "  ".join(f"{k} {v:.3f}" for k, v in row["sims"][sims].items()
                                  if k not in ("seconds", "right"))
                      + f"  ({row['sims'][sims]['seconds']} s)", flush=True)
            results.append(row)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = {"game": args.game, "positions": args.positions, "seed": args.seed, "threads": args.threads,
            "processor": platform.processor() or platform.machine(), "torch": torch.__version__,
            "date": time.strftime("%Y-%m-%d"), "checkpoint": checkpoint}
    path = out / f"convergence-{args.game}.json"
    path.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
    plot(results, args.sims, out / f"convergence-{args.game}.png", args.game, args.positions)
    print(f"results: {path}")
    return 0


def plot(results: list[dict], sims: list[int], path: Path, game: str, positions: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    networks = [n for n in ("shipped", "uniform") if any(row["network"] == n for row in results)]
    fig, axes = plt.subplots(1, len(networks), figsize=(6 * len(networks), 5), sharey=True, squeeze=False)
    axes = axes[0]
    for ax, network in zip(axes, networks):
        for row in results:
            if row["network"] != network:
                continue
            label = row["config"]
            style = "-" if row["config"] in ("play", "analysis") else "--"
            ax.plot(sims, [row["sims"][s]["action_q"] for s in sims], style, marker="o", label=label)
        ax.set_xscale("log")
        ax.set_xlabel("simulations")
        ax.set_title(f"{game}, {network} network: value of the chosen move")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel(f"share of {positions} positions with the solver's sign")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


if __name__ == "__main__":
    sys.exit(main())

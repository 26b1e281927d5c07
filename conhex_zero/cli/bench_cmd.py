"""``conhex-zero bench env ...``: throughput benchmarks (the rules engine for now)."""

from __future__ import annotations

import argparse

from conhex_zero.cli.common import CliError, print_json, resolve_device


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="measure throughput",
                       description="Measure throughput. 'bench env': live steps per second of random "
                       "games through the batched rules engine.")
    what = p.add_subparsers(dest="what", metavar="WHAT")
    env = what.add_parser("env", help="rules engine: live steps per second of random games",
                          description="Random games (a random permutation of the holes per game, "
                          "finished games replaced at once) through the batched rules engine; counts "
                          "only steps of games that were still running.")
    env.add_argument("--game", default="conhex", help="game spec (default: conhex)")
    env.add_argument("--batch", type=int, default=4096, help="games played at once (default: 4096)")
    env.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    env.add_argument("--seconds", type=float, default=3.0, help="measuring time (default: 3)")
    env.add_argument("--threads", type=int, default=None,
                     help="torch CPU threads (default: torch's default, all cores)")
    env.add_argument("--seed", type=int, default=0)
    env.add_argument("--json", action="store_true", help="print the result as JSON")
    env.set_defaults(run=run_env)
    p.set_defaults(run=lambda args: (p.print_help(), 2)[1])


def run_env(args: argparse.Namespace) -> int:
    from conhex_zero.bench.env_bench import bench_env

    if args.batch < 1:
        raise CliError("--batch must be at least 1")
    if args.seconds <= 0:
        raise CliError("--seconds must be positive")
    if args.threads is not None and args.threads < 1:
        raise CliError("--threads must be at least 1")
    device = resolve_device(args.device)
    result = bench_env(args.game, args.batch, device=str(device), seconds=args.seconds,
                       threads=args.threads, seed=args.seed)
    if args.json:
        print_json(result)
    else:
        print(f"{result['game']} batch {result['batch']} on {result['device']} "
              f"({result['threads']} threads): {result['steps_per_s']:,.0f} steps/s, "
              f"{result['games_per_s']:,.0f} games/s")
    return 0

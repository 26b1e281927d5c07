"""``conhex-zero bench env|net|search|selfplay ...``: throughput of the engine, the network, the
search and the whole self-play loop of a training config."""

from __future__ import annotations

import argparse

from conhex_zero.cli.common import (MAX_THREADS, add_backend_argument, CliError, preflight_game, add_threads_argument, check_range, plural,
                                    print_json, resolve_device)
from conhex_zero.cli.numbers import SECONDS, SEED, SIMS, THREADS, Whole


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="measure throughput",
                       description="Measure throughput: 'bench env' (rules engine), 'bench net' (network "
                       "evaluations), 'bench search' (batched MCTS with the network), 'bench selfplay' (the "
                       "self-play loop of a training config).")
    what = p.add_subparsers(dest="what", metavar="WHAT")
    env = what.add_parser("env", help="rules engine: live steps per second of random games",
                          description="Random games (a random permutation of the holes per game, "
                          "finished games replaced at once) through the batched rules engine; counts "
                          "only steps of games that were still running.")
    env.add_argument("--game", default="conhex", help="game spec (default: conhex)")
    env.add_argument("--batch", type=Whole(1, 262_144), default=4096, help="games played at once (default: 4096)")
    env.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    env.add_argument("--seconds", type=SECONDS, default=3.0, help="measuring time (default: 3)")
    add_threads_argument(env)
    env.add_argument("--seed", type=SEED, default=0)
    env.add_argument("--json", action="store_true", help="print the result as JSON")
    env.set_defaults(run=run_env)

    net = what.add_parser("net", help="network: evaluations per second (the model alone)",
                          description="Evaluate encoded positions from random games with a freshly "
                          "initialised network of the given size (bf16 autocast on CUDA). The figure "
                          "counts the model alone; the encoder's throughput is reported apart.")
    search = what.add_parser("search", help="batched search: simulations per second, network share",
                             description="Full searches (Gumbel, exact one-move tactics) with a freshly "
                             "initialised network; reports simulations per second and the fraction of time "
                             "spent in the network.")
    for sp, batch in ((net, 256), (search, 256)):
        sp.add_argument("--game", default="conhex", help="game spec (default: conhex)")
        sp.add_argument("--model", default="l8h128", help="network size (default: l8h128)")
        sp.add_argument("--batch", type=Whole(1, 16_384), default=batch, help=f"positions at once (default: {batch})")
        sp.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
        sp.add_argument("--seconds", type=SECONDS, default=3.0, help="measuring time (default: 3)")
        add_threads_argument(sp)
        add_backend_argument(sp)
        sp.add_argument("--json", action="store_true", help="print the result as JSON")
    net.add_argument("--compile", action="store_true", help="run the model through torch.compile")
    search.add_argument("--sims", type=SIMS, default=64, help="simulations per search (default: 64)")
    search.add_argument("--scheme", default="gumbel", choices=["gumbel", "puct"])
    search.add_argument("--tree", default="auto", choices=["auto", "lean", "batched"],
                        help="auto (default): as players search, the lean tree (NumPy, several leaves per network "
                        "call) up to 4 positions and the batched tensor tree above; lean or batched to compare")
    net.set_defaults(run=run_net)
    search.set_defaults(run=run_search)

    sp = what.add_parser("selfplay", help="the self-play loop of a training config: positions/s, syncs",
                         description="Run the real self-play loop of a training config (its games, "
                         "searches, playout cap, resignation and replay writes) with a freshly "
                         "initialised network for about --seconds, after a warm-up. Reports positions "
                         "(moves) and simulations per second, the network's share of the time (the model "
                         "call alone), batched steps, host-synchronising ops per step (counted under "
                         "torch's profiler over three extra steps) and peak memory.")
    sp.add_argument("--config", metavar="FILE", help="training config (default: configs/tiny.yaml's "
                    "built-in defaults)")
    sp.add_argument("--device", help="cpu or cuda (default: the config's)")
    sp.add_argument("--seconds", type=SECONDS, default=10.0, help="measuring time (default: 10)")
    sp.add_argument("--threads", type=THREADS, default=None, metavar="N",
                    help="torch CPU threads (default: the config's 'threads', which is 1 unless the config says "
                    "otherwise; 0: one per core)")
    sp.add_argument("--backend", choices=("eager", "aoti"), default=None,
                    help="the network's and the search steps' kernels: eager (PyTorch's) or aoti (native packages, "
                    "built once per network size and board and cached, the trained weights loaded into them); default: "
                    "the config's selfplay.backend, as training runs it")
    sp.add_argument("--json", action="store_true", help="print the result as JSON")
    sp.add_argument("overrides", nargs="*", metavar="key=value", help="config overrides, e.g. selfplay.games=1024")
    sp.set_defaults(run=run_selfplay)
    p.set_defaults(run=lambda args: (p.print_help(), 2)[1])


def _check_threads(args: argparse.Namespace) -> None:
    if args.threads is not None:
        check_range("--threads", args.threads, 0, MAX_THREADS)


def _common(args: argparse.Namespace, sims: int = 0) -> str:
    """The options of ``bench net`` and ``bench search`` checked (numbers by their argparse types):
    a model name, a game, and, for a search, trees that fit in this machine's free memory."""
    from conhex_zero.cli.numbers import search_memory
    from conhex_zero.games.game import parse_game
    from conhex_zero.nn.model_names import parse_model_name

    _check_threads(args)
    try:
        parse_model_name(args.model)
    except ValueError as err:
        raise CliError(str(err)) from None
    preflight_game(args.game)
    if sims:
        game = parse_game(args.game)
        try:
            search_memory("--batch x --sims", args.batch, sims, game.num_actions, game.num_cells)
        except ValueError as err:
            raise CliError(str(err)) from None
    return str(resolve_device(args.device))


def run_net(args: argparse.Namespace) -> int:
    device = _common(args)
    from conhex_zero.bench.search_bench import bench_network

    r = bench_network(args.game, args.model, args.batch, device, args.seconds, args.threads, args.compile,
                      backend=args.backend)
    if args.json:
        print_json(r)
    else:
        print(f"{r['model']} ({r['parameters']:,} parameters) on {r['game']}, batch {r['batch']}, "
              f"{r['device']} ({plural(r['threads'], 'thread')}, {r['dtype']}, {'compiled' if r['compiled'] else r['backend']}): "
              f"{r['evals_per_s']:,.0f} evaluations/s (encoder apart: {r['encodings_per_s']:,.0f} positions/s)")
    return 0


def run_search(args: argparse.Namespace) -> int:
    device = _common(args, args.sims)
    from conhex_zero.bench.search_bench import bench_search

    r = bench_search(args.game, args.model, args.batch, args.sims, device, args.scheme, args.seconds, args.threads,
                     tree=args.tree, backend=args.backend)
    if args.json:
        print_json(r)
    else:
        print(f"{r['scheme']} search ({r['tree']} tree, {r['backend']} network, {r['leaf']} leaf step), "
              f"{plural(r['simulations'], 'simulation')}, {r['model']} on "
              f"{r['game']}, batch {r['batch']}, "
              f"{r['device']} ({plural(r['threads'], 'thread')}): {r['sims_per_s']:,.0f} simulations/s, "
              f"{r['positions_per_s']:,.1f} positions/s, network {100 * r['network_fraction']:.0f}% of the time "
              f"({r['evals_per_sim']:.2f} evaluations a simulation, {r['network_us_per_eval']:,.0f} us each)")
    return 0


def run_env(args: argparse.Namespace) -> int:
    _check_threads(args)
    preflight_game(args.game)
    device = resolve_device(args.device)
    from conhex_zero.bench.env_bench import bench_env

    result = bench_env(args.game, args.batch, device=str(device), seconds=args.seconds,
                       threads=args.threads, seed=args.seed)
    if args.json:
        print_json(result)
    else:
        print(f"{result['game']} batch {result['batch']} on {result['device']} "
               f"({plural(result['threads'], 'thread')}): {result['steps_per_s']:,.0f} steps/s, "
              f"{result['games_per_s']:,.0f} games/s")
    return 0


def run_selfplay(args: argparse.Namespace) -> int:
    from conhex_zero.train.config import ConfigError
    from conhex_zero.train.config_load import check_schema

    _check_threads(args)
    try:  # keys and value types before torch (a typo is answered at once)
        check_schema(args.config, args.overrides)
    except ConfigError as err:
        raise CliError(str(err)) from None
    from conhex_zero.bench.selfplay_bench import bench_selfplay
    from conhex_zero.train.config_load import load_config

    overrides = list(args.overrides)
    if args.device:
        overrides.append(f"device={resolve_device(args.device)}")
    try:
        config = load_config(args.config, overrides)
    except ConfigError as err:
        raise CliError(str(err)) from None
    resolve_device(config.device)
    threads = args.threads if args.threads is not None else config.threads
    r = bench_selfplay(config, args.seconds, threads=threads, backend=args.backend or config.selfplay.evaluator_backend)
    r["config"] = args.config
    if args.json:
        print_json(r)
    else:
        syncs = "not counted (a profiler is running)" if r["syncs_per_step"] is None else f"{r['syncs_per_step']:.2f}"
        print(f"self-play of {args.config or 'the default config'}: {r['game']}, {r['model']}, {plural(r['games'], 'game')}, "
              f"{r['device']} ({plural(r['threads'], 'thread')})\n"
              f"  {r['positions_per_s']:,.0f} positions/s, {r['simulations_per_s']:,.0f} simulations/s, "
              f"{r['recorded_per_s']:,.0f} recorded/s over {plural(r['steps'], 'step')} in {r['seconds']:.1f} s\n"
              f"  network {100 * r['network_fraction']:.0f}% of the time; host syncs per step {syncs}; "
              f"peak memory {r['peak_memory_mb']:,.0f} MiB")
    return 0

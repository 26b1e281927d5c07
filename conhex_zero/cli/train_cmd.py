"""``conhex-zero train`` (and ``python train.py``): train an agent by self-play.

    train.py --config FILE [--run-dir DIR] [--resume DIR] [--device cpu|cuda] [key=value ...]
    torchrun --standalone --nproc-per-node K train.py --config FILE ...   (K processes, data-parallel)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from conhex_zero.cli.common import CliError, HelpFormatter, check_output_dir, plural, resolve_device
from conhex_zero.cli.numbers import THREADS, Whole

EPILOG = """\
examples:
  conhex-zero train --config configs/tiny.yaml
  conhex-zero train --config configs/hex5.yaml --run-dir runs/hex5 optim.lr=1e-3 selfplay.games=128
  conhex-zero train --resume runs/hex5 iterations=200
  conhex-zero train --config configs/hex7.yaml --init checkpoints/hex7-l4h64.pt
  torchrun --standalone --nproc-per-node 4 train.py --config configs/conhex.yaml --device cuda
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", metavar="FILE", help="YAML config (see configs/); default: built-in defaults")
    p.add_argument("--run-dir", metavar="DIR", help="where to write the run (default: runs/<config>-<time>)")
    p.add_argument("--resume", metavar="DIR", help="continue the run in DIR exactly where it stopped")
    p.add_argument("--init", metavar="CKPT", help="warm start: begin with this checkpoint's weights (same network "
                   "size; optimiser, replay and iterations start fresh), the same as the override init=CKPT")
    p.add_argument("--device", help="cpu or cuda (overrides the config's device)")
    p.add_argument("--stop-after", type=Whole(1, 10**9), metavar="N",
                   help="stop after N iterations in this session (with a checkpoint; --resume continues)")
    p.add_argument("--threads", type=THREADS, metavar="N", help="torch CPU threads, the same as the override threads=N "
                   "(default: the config's, 1 unless set; 0: one per core)")
    p.add_argument("--quiet", action="store_true", help="no progress bars and no resolved config (one line per "
                   "iteration)")
    p.add_argument("overrides", nargs="*", metavar="key=value",
                   help="config overrides with dotted keys, e.g. optim.lr=3e-4 selfplay.games=128")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train", help="train an agent by self-play",
                       description="Self-play training: batched search, replay buffer, evaluated checkpoints "
                       "in a run directory (config.yaml, metrics.jsonl, tb/, checkpoints/, latest.pt, best.pt). "
                       "Config keys and values (the file's and key=value overrides) are checked before anything "
                       "starts; --resume of a run that has done all its iterations says so and trains nothing.",
                       epilog=EPILOG, formatter_class=HelpFormatter)
    add_arguments(p)
    p.set_defaults(run=run)


def finished(run_dir, iterations: int) -> bool:
    """Whether a run to resume has done all its ``iterations`` already; if so, says so in one line
    (and how to go on), so that ``--resume`` of a finished run is not taken for training done."""
    from conhex_zero.train.run_dir import TrainStateError

    try:
        done = run_dir.load_state(mmap=True).get("iteration")
    except TrainStateError as err:
        raise CliError(str(err)) from None
    if not isinstance(done, int) or done < iterations:
        return False
    print(f"{run_dir.path} has done all its {plural(iterations, 'iteration')} (its state is at iteration {done}): "
          f"nothing to train; to go on, raise iterations, e.g. conhex-zero train --resume {run_dir.path} "
          f"iterations={done + max(1, iterations // 2)}")
    return True


def run(args: argparse.Namespace) -> int:
    # What can be refused without torch is refused first (importing it costs seconds): options, the
    # run directory and its lock (a second trainer of a run is told at once who holds it).
    from conhex_zero.train.config import ConfigError
    from conhex_zero.train.run_dir import RunDir, TrainStateError
    from conhex_zero.train.run_lock import RunInUseError, RunLock

    overrides = list(args.overrides)
    if args.threads is not None:
        overrides.append(f"threads={args.threads}")
    if args.init:
        if args.resume:
            raise CliError("--init starts a new run from a checkpoint's weights; --resume continues a run with its own")
        overrides.append(f"init={args.init}")
    from conhex_zero.train.config_load import check_schema

    try:  # keys and value types against the config's own dataclasses: no torch needed
        check_schema(None if args.resume else args.config, overrides, ranges=not args.resume)
    except ConfigError as err:
        raise CliError(str(err)) from None
    try:
        if args.resume:
            if args.config or args.run_dir:
                raise CliError("--resume continues a run with its own config and directory; change settings "
                               "with key=value overrides instead of --config/--run-dir")
            run_dir = RunDir(args.resume)
            if not Path(args.resume).exists():
                raise CliError(f"{args.resume} does not exist: no training state to resume")
            if not Path(args.resume).is_dir():
                raise CliError(f"{args.resume} is a file, not a run directory: no training state to resume")
            RunLock(run_dir.path).check_free()  # at once, before reading anything (the loop takes the lock)
            run_dir.check_layout()
            if not run_dir.resumable:
                raise CliError(f"{args.resume} has no training state to resume ({run_dir.state_file} is missing)")
            path = run_dir.path
        else:
            if args.config and not Path(args.config).is_file():
                raise CliError(f"config file {args.config} does not exist")
            name = Path(args.config).stem if args.config else "default"
            path = Path(args.run_dir or Path("runs") / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}")
            if path.exists() and not path.is_dir():
                raise CliError(f"--run-dir {path} is a file, not a directory")
            check_output_dir("--run-dir", path)  # under a file, read-only, /proc: the cause, before torch
            RunLock(path).check_free()
            if RunDir(path).resumable:
                raise CliError(f"{path} already holds a run; resume it with --resume {path} or choose another "
                               f"--run-dir")
    except (TrainStateError, RunInUseError) as err:
        raise CliError(str(err)) from None
    from conhex_zero.train import distributed
    from conhex_zero.train.config_load import load_config
    from conhex_zero.train.interrupt import TrainingInterrupted, handle_sigint
    from conhex_zero.train.loop import TrainingDiverged, train
    from conhex_zero.train.resume_config import resume_base

    handle_sigint()  # Ctrl-C and kill -INT stop the run, also when it was started in the background
    if args.device:
        resolve_device(args.device)
        overrides.append(f"device={args.device}")
    try:
        if args.resume:
            base = resume_base(run_dir, note=lambda line: print(line, file=sys.stderr))  # the stored config
            config = load_config(None, overrides, base=base)
        else:
            config = load_config(args.config, overrides)
    except (ConfigError, TrainStateError, RunInUseError) as err:
        raise CliError(str(err)) from None
    if args.resume and finished(run_dir, config.iterations):
        return 0
    resolve_device(config.device)
    # Under torchrun: join the job now, and every rank takes rank 0's run directory (a default name
    # carries each process's own start time).
    ctx = distributed.setup(config.device, config.dist.timeout_s, config.dist.wait_timeout_s)
    path = Path(ctx.broadcast_object(str(path), what="agreeing on the run directory"))
    if ctx.is_main:
        where = f" on {ctx.world_size} processes ({ctx.backend}, {ctx.device.type})" if ctx.enabled else ""
        print(f"run directory: {path}{where}")
        if not args.quiet:
            print("resolved config:\n" + "\n".join("  " + line for line in config.dump().splitlines()))
    try:
        result = train(config, path, resume=bool(args.resume), progress=not args.quiet, stop_after=args.stop_after)
    except (TrainStateError, TrainingDiverged, RunInUseError) as err:
        raise CliError(str(err)) from None
    except TrainingInterrupted as stop:
        if ctx.is_main:
            print(f"\nconhex-zero train: {stop.message()}", file=sys.stderr, flush=True)
        return 130
    distributed.teardown()
    if ctx.is_main:
        print(f"done: {plural(result.iterations, 'iteration')}; checkpoints in {result.run_dir} (latest.pt, best.pt)")
    return 0

"""``conhex-zero average INPUT [INPUT ...] --out FILE``: one checkpoint from the mean of several."""

from __future__ import annotations

import argparse
from pathlib import Path

from conhex_zero.nn.checkpoint_files import path_exists, shown
from conhex_zero.cli.common import CliError, HelpFormatter, check_output_file
from conhex_zero.cli.numbers import Whole


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "average", help="average the weights of several checkpoints of one run into one checkpoint",
        description="Write a checkpoint whose weights are the mean of the inputs' (stochastic weight "
        "averaging). Late snapshots of a run scatter around a good solution; their mean is usually "
        "steadier than any one of them, above all in its value estimates. The inputs must be one "
        "network size trained on one game. An input that is a training run directory stands for its "
        "newest --last iteration checkpoints (RUN/checkpoints/iter_*.pt). The output records its "
        "sources (meta 'averaged_from') and the newest source's training figures.",
        epilog="examples:\n  conhex-zero average runs/hex5 --last 4 --out hex5-avg.pt\n"
               "  conhex-zero average checkpoints/hex7-l4h64.pt checkpoints/hex7-l4h64-avg.pt --out hex7-mean.pt\n"
               "  conhex-zero openings hex5-avg.pt",
        formatter_class=HelpFormatter)
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="checkpoint files or training run directories")
    p.add_argument("--out", required=True, metavar="FILE", help="the averaged checkpoint to write (.pt)")
    p.add_argument("--last", type=Whole(1, 10_000), default=4, metavar="K",
                   help="how many of a run directory's newest iteration checkpoints to take (default: 4)")
    p.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    for item in args.inputs:  # before torch: a typo is answered at once
        if not path_exists(item):
            raise CliError(f"{shown(item)} does not exist")
    out = Path(args.out)
    if out.suffix != ".pt":
        raise CliError(f"--out {args.out!r}: the file name must end in .pt")
    check_output_file("--out", out)  # not a directory or device, in a folder that can be written
    if any(Path(item).is_file() and Path(item).resolve() == out.resolve() for item in args.inputs):
        raise CliError(f"--out {args.out} is one of the inputs: write the average elsewhere")
    if out.exists() and not args.force:
        raise CliError(f"{args.out} exists: choose another --out, or add --force to overwrite it")
    from conhex_zero.nn.average import average_checkpoints, last_run_checkpoints
    from conhex_zero.nn.checkpoint import save_checkpoint

    paths: list[Path] = []
    for item in args.inputs:
        path = Path(item)
        if path.is_dir():
            paths.extend(last_run_checkpoints(path, args.last))
        elif path.exists():
            paths.append(path)
        else:
            raise CliError(f"{item} does not exist")
    if any(p.resolve() == out.resolve() for p in paths):
        raise CliError(f"--out {args.out} is one of the inputs: write the average elsewhere")
    averaged = average_checkpoints(paths)
    save_checkpoint(out, averaged.model, averaged.game, averaged.meta)
    names = ", ".join(str(p) for p in paths)
    print(f"wrote {out}: the mean of {len(paths)} {averaged.model.config.name} checkpoint"
          f"{'s' * (len(paths) != 1)} of {averaged.game} ({names})")
    return 0

"""``conhex-zero distill TEACHER --model SIZE --out FILE``: a network of another size trained on a
teacher network's outputs (``train/distill.py``), e.g. the GPU line's network into one fast on a CPU."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from conhex_zero.cli.common import CliError, HelpFormatter, add_threads_argument, check_output_file, preflight_checkpoint
from conhex_zero.cli.numbers import TEMPERATURE, Real, Whole

EPILOG = """\
The teacher plays --games games at once, every move drawn from its raw policy (--temperature; a
--random-moves share uniformly random), and every position is kept with the teacher's policy, value
and ownership: --positions of them (--data FILE keeps them, and a later call with the same --data
reads them instead of playing again). The student, new or --init, then learns those outputs for
--epochs passes (AdamW, batches of --batch, cosine schedule from --lr). It is saved to --out every
--save-minutes and at the end; --resume continues a student from its --out file's training state.

examples:
  conhex-zero distill checkpoints/conhex-l4h64-v2.pt --model l3h48 --data runs/distill/v2.pt --out runs/distill/a.pt
  conhex-zero distill checkpoints/conhex-l4h64-v2.pt --model l3h48 --data runs/distill/v2.pt --out runs/distill/b.pt
      (the same positions, read from --data: no teacher games the second time)
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("distill", help="train a network of another size on a teacher network's outputs",
                       description="Distillation: the teacher plays positions with its raw policy; a student "
                       "network learns its policy, value and ownership there. Moves what a large network "
                       "knows into one that searches more positions a second.",
                       epilog=EPILOG, formatter_class=HelpFormatter)
    p.add_argument("teacher", metavar="TEACHER", help="the teacher's checkpoint (.pt)")
    p.add_argument("--model", default="l4h64", help="the student's size (default l4h64)")
    p.add_argument("--init", metavar="CKPT", help="start the student from this checkpoint (of --model's size; a plain "
                   "network also starts its ...c twin, with zero weights on the connection features)")
    p.add_argument("--out", required=True, metavar="FILE", help="the student's checkpoint (.pt)")
    p.add_argument("--positions", type=Whole(1, 50_000_000), default=200_000, metavar="N",
                   help="positions the teacher plays (default 200000)")
    p.add_argument("--data", metavar="FILE", help="keep the positions here; read them if the file exists")
    p.add_argument("--games", type=Whole(1, 65_536), default=256, metavar="G", help="games the teacher plays at once (default 256)")
    p.add_argument("--temperature", type=TEMPERATURE, default=1.0, metavar="T", help="of the teacher's moves (default 1)")
    p.add_argument("--random-moves", type=Real(0.0, 1.0), default=0.1, metavar="P", help="share of uniformly random moves (default 0.1)")
    p.add_argument("--epochs", type=Real(0.0, 1000.0, above=True), default=3.0, metavar="E", help="passes over the positions (default 3)")
    p.add_argument("--batch", type=Whole(1, 65_536), default=256, metavar="B", help="training batch (default 256)")
    p.add_argument("--lr", type=Real(0.0, 1.0, above=True), default=1e-3, metavar="LR", help="peak learning rate (default 1e-3)")
    p.add_argument("--seed", type=Whole(0, 2**31 - 1), default=0, metavar="S", help="seed of the games and of training (default 0)")
    p.add_argument("--save-minutes", type=Real(0.0, 10_000.0, above=True), default=10.0, metavar="M",
                   help="save the student this often (default 10)")
    p.add_argument("--resume", action="store_true", help="continue the student saved at --out")
    add_threads_argument(p)
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(run=run)


def _check_arguments(args: argparse.Namespace) -> None:
    """Everything that can be checked before torch is imported."""
    preflight_checkpoint(args.teacher, "TEACHER")
    if args.init:
        preflight_checkpoint(args.init, "--init")
    if not args.out.endswith(".pt"):
        raise CliError(f"--out {args.out!r}: the file name must end in .pt")
    check_output_file("--out", args.out)
    if args.data:
        check_output_file("--data", args.data)
    if args.resume and not Path(args.out).is_file():
        raise CliError(f"--resume: {args.out} does not exist yet (start without --resume)")
    if not args.resume and Path(args.out).exists():
        raise CliError(f"{args.out} exists: add --resume to continue it, or choose another --out")


def run(args: argparse.Namespace) -> int:
    _check_arguments(args)
    from conhex_zero.cli.common import resolve_device
    from conhex_zero.train.distill_run import distill

    device = resolve_device(args.device)
    started = time.perf_counter()
    try:
        result = distill(args, device)
    except ValueError as err:  # a --data set of another game, a student of another size
        raise CliError(str(err)) from None
    print(f"wrote {args.out}: {result}, {(time.perf_counter() - started) / 60:.1f} min")
    return 0

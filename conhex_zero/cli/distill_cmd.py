"""``conhex-zero distill TEACHER --model SIZE --out FILE``: a network of another size trained on a
teacher network's outputs (``train/distill.py``), e.g. the GPU line's network into one fast on a CPU."""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from conhex_zero.cli.common import CliError, HelpFormatter, check_output_file, preflight_checkpoint

EPILOG = """\
The teacher plays --games games at once, every move drawn from its raw policy (--temperature; a
--random-moves share uniformly random), and every position is kept with the teacher's policy, value
and ownership: --positions of them (--data FILE keeps them, and a later call with the same --data
reads them instead of playing again). The student, new or --init, then learns those outputs for
--epochs passes (AdamW, batches of --batch, cosine schedule from --lr). It is saved to --out every
--save-minutes and at the end; --resume continues a student from its --out file's training state.

examples:
  conhex-zero distill checkpoints/lines/conhex-gpu/checkpoints/iter_0020.pt --model l4h64 \\
      --positions 200000 --data runs/distill/set.pt --out runs/distill/l4h64.pt
  conhex-zero distill TEACHER.pt --model l3h48 --data runs/distill/set.pt --epochs 4 --out l3h48.pt
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("distill", help="train a network of another size on a teacher network's outputs",
                       description="Distillation: the teacher plays positions with its raw policy; a student "
                       "network learns its policy, value and ownership there. Moves what a large network "
                       "knows into one that searches more positions a second.",
                       epilog=EPILOG, formatter_class=HelpFormatter)
    p.add_argument("teacher", metavar="TEACHER", help="the teacher's checkpoint (.pt)")
    p.add_argument("--model", default="l4h64", help="the student's size (default l4h64)")
    p.add_argument("--init", metavar="CKPT", help="start the student from this checkpoint (of --model's size)")
    p.add_argument("--out", required=True, metavar="FILE", help="the student's checkpoint (.pt)")
    p.add_argument("--positions", default="200000", metavar="N", help="positions the teacher plays (default 200000)")
    p.add_argument("--data", metavar="FILE", help="keep the positions here; read them if the file exists")
    p.add_argument("--games", default="256", metavar="G", help="games the teacher plays at once (default 256)")
    p.add_argument("--temperature", default="1.0", metavar="T", help="of the teacher's moves (default 1)")
    p.add_argument("--random-moves", default="0.1", metavar="P", help="share of uniformly random moves (default 0.1)")
    p.add_argument("--epochs", default="3", metavar="E", help="passes over the positions (default 3)")
    p.add_argument("--batch", default="256", metavar="B", help="training batch (default 256)")
    p.add_argument("--lr", default="1e-3", metavar="LR", help="peak learning rate (default 1e-3)")
    p.add_argument("--seed", default="0", metavar="S", help="seed of the games and of training (default 0)")
    p.add_argument("--save-minutes", default="10", metavar="M", help="save the student this often (default 10)")
    p.add_argument("--resume", action="store_true", help="continue the student saved at --out")
    p.add_argument("--threads", type=int, metavar="N", help="torch CPU threads (default 1; 0: one per core)")
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(run=run)


def _number(flag: str, text: str, low: float, high: float, whole: bool = False) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not low <= value <= high or (whole and value != int(value)):
        kind = "a whole number" if whole else "a number"
        raise CliError(f"{flag} expects {kind} from {low:g} to {high:g}, got {text[:40]!r}")
    return int(value) if whole else value


def _check_arguments(args: argparse.Namespace) -> None:
    """Everything that can be checked before torch is imported."""
    preflight_checkpoint(args.teacher, "TEACHER")
    if args.init:
        preflight_checkpoint(args.init, "--init")
    args.positions = _number("--positions", args.positions, 1, 50_000_000, whole=True)
    args.games = _number("--games", args.games, 1, 65_536, whole=True)
    args.temperature = _number("--temperature", args.temperature, 0, 100)
    args.random_moves = _number("--random-moves", args.random_moves, 0, 1)
    args.epochs = _number("--epochs", args.epochs, 0.001, 1000)
    args.batch = _number("--batch", args.batch, 1, 65_536, whole=True)
    args.lr = _number("--lr", args.lr, 1e-8, 1)
    args.seed = _number("--seed", args.seed, 0, 2**31 - 1, whole=True)
    args.save_minutes = _number("--save-minutes", args.save_minutes, 0.1, 10_000)
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

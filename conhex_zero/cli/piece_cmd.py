"""``conhex-zero piece``: train one piece of a training line, continuing where the last one stopped.

    conhex-zero piece LINE --config FILE [--minutes M] ...     start a line (its first piece)
    conhex-zero piece LINE [--minutes M] [--out DIR] ...       continue it
    conhex-zero piece LINE --list                              its pieces so far
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conhex_zero.cli.common import CliError, check_output_dir, resolve_device
from conhex_zero.cli.numbers import THREADS, Real, Whole

EPILOG = """\
A line (train/line.py) is a long training run kept in a small directory, for machines that are
lent for minutes: each piece copies it into a scratch run directory (runs/pieces/), trains until
its minutes are nearly up, ends with a checkpoint and writes the line back after every saved state:
carry.pt (weights, optimiser and schedule position, counters, the line's id), metrics.jsonl,
ladder.jsonl, pieces.jsonl (one record per piece, with where its minutes went), line.yaml,
checkpoints/iter_NNNN.pt (every evaluated one; with --out the piece's newest), logs/piece-NNN.log
and, when self-play is compiled, compile-cache.bin. What the line holds past its carry.pt (an
older carry.pt checked out) is first moved into LINE/dropped/, said in one line. The replay is not
carried: each piece refills it from its own first self-play. A line whose config says eval.mode:
check (the GPU line) only checks its checkpoints in seconds; `conhex-zero rate LINE` rates them
later, on any machine.

examples:
  conhex-zero piece runs/my-line --config configs/tiny.yaml --minutes 1   (a new line)
  conhex-zero piece runs/my-line --minutes 1 iterations=6   (its next piece: three more iterations)
  conhex-zero piece runs/my-line --list
  conhex-zero piece checkpoints/lines/conhex-gpu --minutes 9.5 --out runs/out/line --commit 79285e4
      (a lent GPU: docs/gpu.md adds --command-start $(date +%s.%N), taken before installing)
  conhex-zero piece checkpoints/lines/conhex-cpu --minutes 0 --device cpu   (until Ctrl-C)
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("piece", help="train one piece of a training line (continue a long run in pieces)",
                       description="Train one piece of a training line: continue the line's run from its "
                       "carried state for at most --minutes of wall time, end with a checkpoint, and "
                       "write the line again (to --out, default the line itself).",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("line", metavar="LINE", help="the line directory (made by the first piece, with --config)")
    p.add_argument("--config", metavar="FILE", help="start a new line with this config (only for its first piece)")
    p.add_argument("--minutes", type=Real(0.0, 1e6), default=9.0, metavar="M",
                   help="wall-clock minutes for the whole command, counted from --command-start (default: "
                   "this process's start), the last check or evaluation and writing included (default 9; "
                   "0: no limit, until the line's iterations or Ctrl-C)")
    p.add_argument("--command-start", type=Real(0.0, 1e11), metavar="UNIX_TIME",
                   help="when the command began (e.g. $(date +%%s.%%N) before installing the project on a lent "
                   "machine): --minutes and the record's start-up count from it")
    p.add_argument("--out", metavar="DIR", help="write the updated line here instead of into LINE (e.g. $OUT on a "
                   "lent machine): an empty folder or a copy of this line; its files are the line's, to copy "
                   "over LINE")
    p.add_argument("--run-dir", metavar="DIR", help="the scratch run directory (default runs/pieces/LINE-piece-NNN-TIME)")
    p.add_argument("--device", help="cpu or cuda (overrides the line's device)")
    p.add_argument("--stop-after", type=Whole(1, 10**9), metavar="N", help="end the piece after at most N iterations")
    p.add_argument("--commit", metavar="SHA", help="the commit to record when the code is not a git checkout")
    p.add_argument("--threads", type=THREADS, metavar="N", help="torch CPU threads (the override threads=N)")
    p.add_argument("--no-compile-cache", action="store_true",
                   help="neither load nor save LINE/compile-cache.bin (the compiled self-play kernels)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--list", action="store_true", help="print the line's pieces and stop")
    p.add_argument("overrides", nargs="*", metavar="key=value",
                   help="config overrides with dotted keys, e.g. optim.lr=5e-4 iterations=600")
    p.set_defaults(run=run)


def _check_identity(line, out: str | None) -> None:
    """The line's files name one line, its checkpoints are its records' models, and ``--out`` is an
    empty folder or a copy of this line: checked from carry.pt's plain fields, before torch (issue
    58: these refusals cost 2.8-3.6 s of CPU). ``LineError`` otherwise; the piece checks again."""
    from conhex_zero.files.file_seal import peek
    from conhex_zero.train.line import Line
    from conhex_zero.train.line_identity import check_checkpoints, check_identity, check_out_folder

    carry = peek(line.carry_file, ("line", "iteration"))
    records = line.pieces(warn=lambda _: None)
    own = check_identity(line, carry, records)
    iteration = int(carry.get("iteration") or 0)
    check_checkpoints(line, [r for r in records if int(r.get("last_iteration", 0)) <= iteration])
    if out and own is not None:
        check_out_folder(Line(out), line, {"id": own})


def _check_arguments(args: argparse.Namespace) -> None:
    """Everything that can be checked before torch is imported."""
    line = Path(args.line)
    if line.exists() and not line.is_dir():
        raise CliError(f"{args.line} is a file, not a line directory")
    if args.list:
        if not any((line / name).is_file() for name in ("pieces.jsonl", "carry.pt", "line.yaml")):
            raise CliError(f"{args.line} holds no line (no line.yaml, carry.pt or pieces.jsonl)")
        return
    import math

    if not math.isfinite(args.minutes) or args.minutes < 0:
        raise CliError("--minutes must be 0 (no limit) or a positive number of minutes")
    if args.config and not Path(args.config).is_file():
        raise CliError(f"config file {args.config} does not exist")
    if not args.config and not (line / "carry.pt").is_file() and not (line / "line.yaml").is_file():
        hint = "" if line.exists() else " (it does not exist)"
        raise CliError(f"{args.line} holds no line{hint}: start one with --config FILE")
    from conhex_zero.train.line import Line, LineError, check_carry_file, refuse_line_without_carry

    try:
        if (line / "carry.pt").is_file():
            check_carry_file(line / "carry.pt")
            _check_identity(Line(line), args.out)
        refuse_line_without_carry(Line(line))
    except LineError as err:
        raise CliError(str(err)) from None
    if args.out:
        check_output_dir("--out", args.out)
    check_output_dir("LINE", line)
    from conhex_zero.train.run_lock import RunInUseError, RunLock

    try:
        RunLock(line).check_free()  # a second piece of a line is refused at once
    except RunInUseError as err:
        raise CliError(str(err)) from None
    if args.stop_after is not None and args.stop_after < 1:
        raise CliError("--stop-after must be at least 1")
    if args.command_start is not None:
        import time

        if not math.isfinite(args.command_start) or not 0 <= time.time() - args.command_start <= 86400:
            raise CliError("--command-start must be a UNIX time of the last day (e.g. $(date +%s.%N)), not in "
                           "the future")
    if args.threads is not None and args.threads < 0:
        raise CliError("--threads must be 0 (one per core) or more")


def _command_start(args: argparse.Namespace) -> float | None:
    """--command-start, else this process's start: the command's minutes count from there."""
    from conhex_zero.train.piece_clock import process_start_time

    return args.command_start if args.command_start is not None else process_start_time()


def list_pieces(line: str) -> int:
    from conhex_zero.train.line import Line

    records = Line(line).pieces()
    if not records:
        print(f"{line}: no pieces yet")
        return 0
    print(f"{'piece':>5} {'iterations':>11} {'device':<24} {'min':>5} {'games':>8} {'positions':>10} {'pos/s':>7} "
          f"{'train%':>6} {'Elo':>10}  commit")
    for r in records:
        its = f"{r.get('first_iteration', '?')}-{r.get('last_iteration', '?')}"
        elo = f"{r['elo']:.0f}±{r['elo_stderr']:.0f}" if r.get("elo") is not None else "-"
        speed = r.get("selfplay_positions_per_s")
        share = f"{r['training_share']:.0%}" if r.get("training_share") is not None else "-"
        print(f"{r.get('piece', '?'):>5} {its:>11} {str(r.get('device', '?'))[:24]:<24} {r.get('minutes', 0):>5.1f} "
              f"{r.get('games', 0):>8,} {r.get('positions', 0):>10,} {speed if speed is not None else '-':>7} "
              f"{share:>6} {elo:>10}  {r.get('commit', '?')}")
    return 0


def run(args: argparse.Namespace) -> int:
    _check_arguments(args)
    if args.list:
        return list_pieces(args.line)
    from conhex_zero.train.config import ConfigError
    from conhex_zero.train.line import LineError
    from conhex_zero.train.loop import TrainingDiverged
    from conhex_zero.train.piece import run_piece
    from conhex_zero.train.run_dir import TrainStateError
    from conhex_zero.train.run_lock import RunInUseError

    overrides = list(args.overrides)
    if args.threads is not None:
        overrides.append(f"threads={args.threads}")
    if args.device:
        resolve_device(args.device)
        overrides.append(f"device={args.device}")
    try:
        result = run_piece(args.line, config_file=args.config, overrides=overrides, minutes=args.minutes,
                           out=args.out, run_dir=args.run_dir, commit=args.commit, progress=not args.quiet,
                           stop_after=args.stop_after, command_start=_command_start(args),
                           compile_cache=not args.no_compile_cache)
    except (ConfigError, LineError, TrainStateError, TrainingDiverged, RunInUseError) as err:
        raise CliError(str(err)) from None
    if result.interrupted:
        print(f"conhex-zero piece: interrupted; the line in {result.out} holds the piece's last saved state "
              f"(run the same command to continue)", file=sys.stderr)
        return 130
    return 0

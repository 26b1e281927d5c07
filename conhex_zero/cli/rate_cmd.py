"""``conhex-zero rate LINE``: rate a training line's checkpoints off the device that trained them.

    conhex-zero rate LINE                        every checkpoint not yet rated, the line's settings
    conhex-zero rate LINE --games 100 --json     larger matches against the references
    conhex-zero rate LINE --list                 what each checkpoint still has to play
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from conhex_zero.cli.common import CliError, HelpFormatter, add_threads_argument, print_json, resolve_device
from conhex_zero.cli.numbers import MAX_GAMES, SIMS, Whole

if TYPE_CHECKING:
    from conhex_zero.train.line_past import Past

EPILOG = """\
A line trained on lent GPUs (eval.mode: check) only checks its checkpoints in seconds there; this
command plays the rating games on any machine, e.g. in the background of a CPU session. For each
checkpoint of LINE/checkpoints, oldest first: --games against each fixed reference of the line's
eval.references, --previous-games against its predecessor and against the --neighbours checkpoints
rated nearest to it, wherever the ladder holds no match of at least that many games yet (run it
again at any time: it plays only what is missing). Every match is appended to LINE/ladder.jsonl as
it ends; then the ratings are fitted and written into LINE/pieces.jsonl (elo, elo_stderr, scores,
rated) and LINE/metrics.jsonl (eval/...), so `piece LINE --list`, `ladder LINE` and `curve LINE`
show them. Run it again after copying a piece from a lent machine into the line. Checkpoints past
the line's carried state (an older carry.pt checked out) are not rated: they are moved, with the
records, metrics and ladder entries of those iterations, into LINE/dropped/ (as a piece does).

It takes minutes to an hour on a CPU: run it in the background (e.g. with setsid nohup ... &) and
keep working.

examples:
  conhex-zero rate checkpoints/lines/conhex-gpu --list
  conhex-zero rate checkpoints/lines/conhex-gpu
  conhex-zero rate checkpoints/lines/conhex-gpu --games 100 --previous-games 100 --quiet
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rate", help="rate a training line's checkpoints (its ladder), on any machine",
                       description="Play the rating games of a training line's checkpoints (fixed references, "
                       "predecessor, nearest-rated) that its ladder lacks, then write the ratings into the "
                       "line's piece records and metrics.",
                       epilog=EPILOG, formatter_class=HelpFormatter)
    p.add_argument("line", metavar="LINE", help="the line directory (e.g. checkpoints/lines/conhex-gpu)")
    p.add_argument("--games", type=Whole(0, MAX_GAMES, even=True), metavar="N", help="games against each fixed reference (default: the "
                   "line's eval.games)")
    p.add_argument("--previous-games", type=Whole(0, MAX_GAMES, even=True), metavar="N", help="games against the predecessor and each "
                   "neighbour (default: the line's eval.previous_games)")
    p.add_argument("--neighbours", type=Whole(0, 1000), metavar="K", help="nearest-rated checkpoints to play besides "
                   "(default: the line's eval.neighbours)")
    p.add_argument("--sims", type=SIMS, metavar="N", help="simulations a move of every network player (default: "
                   "the line's eval.sims)")
    p.add_argument("--references", nargs="+", metavar="REF", help="fixed references instead of the line's "
                   "eval.references (random, mcts-rollout:K, checkpoint files)")
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    add_threads_argument(p)
    p.add_argument("--list", action="store_true", help="print what each checkpoint still has to play, and stop")
    p.add_argument("--json", action="store_true", help="print the matches played and the ratings as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(run=run)


def _check_arguments(args: argparse.Namespace) -> None:
    """What can be checked before torch is imported."""
    line = Path(args.line)
    if not line.is_dir():
        raise CliError(f"{args.line} is not a line directory" + ("" if line.exists() else " (it does not exist)"))
    if not (line / "checkpoints").is_dir() or not any((line / "checkpoints").glob("iter_*.pt")):
        raise CliError(f"{args.line} holds no checkpoints to rate (no {args.line}/checkpoints/iter_*.pt)")
    if not (line / "carry.pt").is_file() and not (line / "line.yaml").is_file():
        raise CliError(f"{args.line} holds no line (no carry.pt, no line.yaml)")
    if (line / "carry.pt").is_file():
        from conhex_zero.train.line import LineError, check_carry_file

        try:
            check_carry_file(line / "carry.pt")
        except LineError as err:
            raise CliError(str(err)) from None
    from conhex_zero.train.run_lock import RunInUseError, RunLock

    try:
        RunLock(line).check_free()  # a piece or another rating of this line is running
    except RunInUseError as err:
        raise CliError(str(err)) from None


def _line_config(line, carry: dict | None):
    """The line's settings: line.yaml over the config stored in carry.pt (as a piece reads them)."""
    from conhex_zero.train.config import ConfigError, TrainConfig
    from conhex_zero.train.config_load import _build, load_config

    try:
        base = _build(TrainConfig, carry["config"]).to_dict() if carry is not None else None
        return load_config(line.config_file if line.config_file.is_file() else None, base=base)
    except ConfigError as err:
        raise CliError(str(err)) from None


def _carried(line) -> tuple[dict | None, "Past | None"]:
    """The line's carried state and what the line holds past it (``line_past``; None without a
    carry.pt), after checking that the line's files name the carried state's line."""
    from conhex_zero.train.line import LineError
    from conhex_zero.train.line_identity import check_identity
    from conhex_zero.train.line_past import past_of
    from conhex_zero.train.run_dir import TrainStateError

    if not line.started:
        return None, None
    try:
        carry = line.read_carry()
        check_identity(line, carry, line.pieces())
    except (LineError, TrainStateError) as err:
        raise CliError(str(err)) from None
    return carry, past_of(line, carry)


def run(args: argparse.Namespace) -> int:
    _check_arguments(args)
    device = resolve_device(args.device)
    from conhex_zero.train.line import Line
    from conhex_zero.train.rating import LineRater, RateOptions
    from conhex_zero.train.run_lock import RunLock

    line = Line(args.line)
    carry, past = _carried(line)
    config = _line_config(line, carry)
    options = RateOptions(games=args.games, previous_games=args.previous_games, neighbours=args.neighbours,
                          sims=args.sims, references=tuple(args.references) if args.references else None,
                          device=str(device), progress=not args.quiet and not args.json)
    if options.references:
        _check_references(options.references, config.game)
    log = (lambda text: print(text, file=sys.stderr)) if args.json else print
    upto = int(carry["iteration"]) if carry is not None else None
    rater = LineRater(line, config, options, log, upto=upto)
    if args.list:
        if past and past.checkpoints:
            names = [p.stem for p in past.checkpoints]
            print(f"note: {', '.join(names[:3])}{f' ... {names[-1]}' if len(names) > 3 else ''} are past the carried "
                  f"state (iteration {upto}): dropped, not listed (`conhex-zero rate {line.path}` or its next piece "
                  f"moves them into {line.path / 'dropped'})")
        return _list(rater)
    lock = RunLock(line.path)
    lock.acquire(note=lambda text: print(text, file=sys.stderr))
    try:
        if past:
            from conhex_zero.train.line_past import set_aside

            set_aside(line, past, log, by="conhex-zero rate")
        report = rater.run()
    finally:
        lock.release()
    _report(rater, report, args.json)
    if report.interrupted:
        print(f"conhex-zero rate: interrupted; the matches that ended are in {line.ladder_file} (run the same "
              f"command to play the rest)", file=sys.stderr)
        return 130
    return 0


def _check_references(references: tuple[str, ...], game: str) -> None:
    from conhex_zero.train.config import ConfigError, EvalConfig, TrainConfig
    from conhex_zero.train.config_check import validate

    try:
        validate(TrainConfig(game=game, eval=EvalConfig(references=references)))
    except ConfigError as err:
        raise CliError(str(err).replace("eval.references", "--references")) from None


def _list(rater) -> int:
    for index, name in enumerate(rater.names):
        missing = rater.missing(name, rater.fixed_opponents(index))
        todo = ", ".join(f"{opp} ({n} games)" for opp, n in missing) or "nothing (rated)"
        print(f"{name}: still to play {todo}")
    return 0


def _report(rater, report, as_json: bool) -> None:
    ratings = report.ratings
    if as_json:
        print_json({"line": str(rater.line.path), "sims": rater.sims, "interrupted": report.interrupted,
                    "matches": [{"checkpoint": m.first, "opponent": m.second, "games": m.games, "wins": m.wins,
                                 "losses": m.losses, "score": m.score[0], "low": m.score[1], "high": m.score[2],
                                 "seconds": round(s, 1)} for m, s in report.played],
                    "ratings": {n: {"elo": ratings.elo[n], "stderr": ratings.stderr[n]} for n in ratings.elo}
                    if ratings else {}})
        return
    if not report.played:
        print(f"{rater.line.path}: every checkpoint is rated (nothing to play); records and metrics written")
    if ratings is not None:
        print(f"ratings ({ratings.anchor} = 0 Elo, ± one standard error):")
        for name in rater.names:
            if name in ratings.elo:
                print(f"  {name}  {ratings.elo[name]:6.0f} ± {ratings.stderr[name]:.0f}")

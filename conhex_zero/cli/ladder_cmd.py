"""``conhex-zero ladder DIR``: Elo ratings over every recorded game in DIR/ladder.jsonl."""

from __future__ import annotations

import argparse
from pathlib import Path

from conhex_zero.cli.common import CliError, HelpFormatter, check_output_file, plural, print_json
from conhex_zero.files.disk import writing


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ladder", help="fit Elo ratings over every recorded game of a directory",
                       description="Maximum-likelihood Bradley-Terry ratings (Elo scale) over all results in "
                       "DIR/ladder.jsonl (a training run directory, or any directory that arena --ladder "
                       "wrote to), anchored to a fixed reference, with standard errors and a first-move "
                       "advantage term. Prints a table and draws the ladder as a PNG.",
                       formatter_class=HelpFormatter)
    p.add_argument("dir", metavar="DIR")
    p.add_argument("--anchor", help="player fixed at 0 Elo (default: random, else the first reference)")
    p.add_argument("--png", help="picture of the ladder (default: DIR/ladder.png)")
    p.add_argument("--x", choices=["minutes", "iteration", "step"], default="minutes",
                   help="horizontal axis of the picture (default: minutes of training)")
    p.add_argument("--json", action="store_true", help="print the ratings as JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if not Path(args.dir).exists():
        raise CliError(f"{args.dir} does not exist (a training run's or line's folder, or an arena --records folder)")
    if Path(args.dir).exists() and not Path(args.dir).is_dir():
        raise CliError(f"{args.dir} is not a directory")
    if not (Path(args.dir) / "ladder.jsonl").exists():  # before torch: answered at once
        raise CliError(f"{Path(args.dir) / 'ladder.jsonl'} holds no results yet")
    png = check_output_file("--png", args.png or Path(args.dir) / "ladder.png")
    from conhex_zero.ladder.plot import plot_ladder
    from conhex_zero.ladder.store import Ladder

    try:
        ladder = Ladder.open(args.dir)
        _leave_out_dropped(ladder, Path(args.dir), args.json)
        ratings = ladder.fit(args.anchor)
    except ValueError as err:
        raise CliError(str(err)) from None
    with writing(png):
        png = plot_ladder(ladder, ratings, png, x=args.x)
    if args.json:
        print_json({"anchor": ratings.anchor, "first_move": ratings.first_move,
                    "first_move_stderr": ratings.first_move_stderr, "png": str(png),
                    "players": [{"name": n, "elo": e, "stderr": se, "games": g, "score": s,
                                 "kind": ladder.players.get(n, {}).get("kind")}
                                for n, e, se, g, s in ratings.table()]})
        return 0
    print(f"{ladder.path}: {plural(sum(r.first_wins + r.second_wins for r in ladder.results), 'game')}, "
          f"{plural(len(ratings.elo), 'player')}; anchor {ratings.anchor} = {ratings.elo[ratings.anchor]:.0f} Elo")
    print(f"first-move advantage {ratings.first_move:+.0f} ± {ratings.first_move_stderr:.0f} Elo (± one standard error)")
    width = max(len(n) for n in ratings.elo)
    print(f"  {'player':<{width}}  {'Elo':>6}  {'±':>4}  {'games':>5}  score")
    for name, elo, se, games, score in ratings.table():
        print(f"  {name:<{width}}  {elo:>6.0f}  {se:>4.0f}  {games:>5}  {score:.2f}")
    print(f"picture: {png}")
    return 0


def _leave_out_dropped(ladder, directory: Path, as_json: bool) -> None:
    """In a training line (``DIR/carry.pt``), the results and players of checkpoints past its carried
    state are dropped work (``train/line_past.py``): left out, with a note."""
    if not (directory / "carry.pt").is_file():
        return
    import sys

    from conhex_zero.train.line import Line, LineError, check_carry_file
    from conhex_zero.train.line_past import DROPPED, checkpoint_iteration
    from conhex_zero.train.run_dir import TrainStateError

    try:
        check_carry_file(directory / "carry.pt")
        iteration = int(Line(directory).read_carry()["iteration"])
    except (LineError, TrainStateError) as err:
        raise CliError(str(err)) from None

    def past(name: str) -> bool:
        return (checkpoint_iteration(name) or 0) > iteration

    kept = [r for r in ladder.results if not past(r.first) and not past(r.second)]
    if len(kept) == len(ladder.results):
        return
    left_out = len(ladder.results) - len(kept)
    ladder.results[:] = kept
    ladder.players = {n: info for n, info in ladder.players.items() if not past(n)}
    print(f"note: {plural(left_out, 'result')} of checkpoints past the line's carried state (iteration {iteration}) "
          f"left out: dropped work (the next piece or `conhex-zero rate {directory}` moves it into "
          f"{directory / DROPPED})", file=sys.stderr if as_json else sys.stdout)

"""``conhex-zero curve RUN_DIR [--out FILE.svg]``: evaluation win rates of a run, as an SVG chart."""

from __future__ import annotations

import argparse
from pathlib import Path

from conhex_zero.cli.common import CliError, HelpFormatter, check_output_file
from conhex_zero.files.disk import writing


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("curve", help="plot a training run's evaluation win rates (SVG)",
                       description="Read RUN_DIR/metrics.jsonl and draw the win rate against each evaluation "
                       "opponent (95% interval shaded) versus wall-clock minutes or iterations.",
                       formatter_class=HelpFormatter)
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("--out", help="SVG file (default: RUN_DIR/curve.svg)")
    p.add_argument("--x", choices=["minutes", "iteration"], default="minutes", help="horizontal axis")
    p.add_argument("--title", default=None)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if not Path(args.run_dir).exists():
        raise CliError(f"{args.run_dir} does not exist (a training run's folder: conhex-zero train --run-dir DIR)")
    if Path(args.run_dir).exists() and not Path(args.run_dir).is_dir():
        raise CliError(f"{args.run_dir} is not a directory")
    if not (Path(args.run_dir) / "metrics.jsonl").exists():  # before anything is imported
        raise CliError(f"{args.run_dir} has no evaluated iterations in metrics.jsonl")
    from conhex_zero.train.run_dir import RunDir
    from conhex_zero.viz.svg import Series, line_chart

    out = check_output_file("--out", args.out or Path(args.run_dir) / "curve.svg")
    run_dir = RunDir(args.run_dir)
    records = [r for r in run_dir.read_metrics() if any(k.startswith("eval/") for k in r)]
    if not records:
        raise CliError(f"{args.run_dir} has no evaluated iterations in metrics.jsonl")
    opponents = sorted({k[len("eval/vs_"):-len("/win_rate")] for r in records for k in r
                        if k.startswith("eval/vs_") and k.endswith("/win_rate")})
    x_key = "time/minutes" if args.x == "minutes" else "iteration"
    series = []
    for name in opponents:
        key = f"eval/vs_{name}"
        needed = (x_key, f"{key}/win_rate", f"{key}/win_rate_low", f"{key}/win_rate_high")
        rows = [r for r in records if all(r.get(k) is not None for k in needed)]  # null: not finite when written
        series.append(Series(name.replace("_", ":") if name.startswith("mcts-rollout") else name,
                             [r[x_key] for r in rows], [r[f"{key}/win_rate"] for r in rows],
                             [r[f"{key}/win_rate_low"] for r in rows], [r[f"{key}/win_rate_high"] for r in rows]))
    title = args.title or f"{Path(args.run_dir).name}: win rate against each opponent"
    svg = line_chart(series, title, "wall-clock minutes" if args.x == "minutes" else "iteration",
                     "win rate (95% interval)", y_range=(0.0, 1.0))
    with writing(out):
        out.write_text(svg)
    print(f"wrote {out}")
    return 0

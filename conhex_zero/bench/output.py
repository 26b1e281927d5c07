"""Where a benchmark script writes its JSON results, and its ``--threads`` option.

A run writes ``runs/bench/<name>-<YYYYmmdd-HHMMSS>.json`` (``runs/`` is ignored by git), so that
running a benchmark never changes the tracked, published ``benchmarks/results/<name>.json``. That
file is written only when asked: ``--publish`` (the published name) or ``--out FILE`` (any file).
Every benchmark takes ``--threads`` with the project's default of one torch CPU thread
(``cli.common.THREADS_HELP`` says why).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from conhex_zero.files.disk import new_file, write_text_atomic

RESULTS_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
"""The tracked folder of published results."""
RUNS_DIR = Path("runs") / "bench"
"""Where a run's results go unless ``--out`` or ``--publish`` says otherwise."""


def add_output_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    """``--out FILE`` and ``--publish`` for results named ``name`` (e.g. ``env_cpu``; the device
    part may be chosen later: ``result_path`` takes the final name)."""
    parser.add_argument("--out", metavar="FILE", default=None,
                        help=f"JSON results file (default: a new {RUNS_DIR}/{name}-TIME.json, leaving the "
                        f"published benchmarks/results/{name}.json alone)")
    parser.add_argument("--publish", action="store_true",
                        help=f"write the published benchmarks/results/{name}.json (tracked by git)")


def add_threads_option(parser: argparse.ArgumentParser, many: bool = False) -> None:
    """``--threads`` (default one thread); ``many``: a list of thread counts to try, one each."""
    from conhex_zero.cli.common import THREADS_HELP

    if many:
        parser.add_argument("--threads", type=int, nargs="+", default=[1], metavar="N",
                            help="torch CPU thread counts to try, each in turn (default: 1; 0: one per "
                            "core), e.g. --threads 1 2")
    else:
        parser.add_argument("--threads", type=int, default=1, metavar="N", help=THREADS_HELP)


def check_threads(parser: argparse.ArgumentParser, threads: int | list[int]) -> None:
    """A parser error (one line, exit 2) for a negative thread count."""
    for t in threads if isinstance(threads, list) else [threads]:
        if t < 0:
            parser.error("--threads must be 0 (one per core) or more")


def result_path(args: argparse.Namespace, name: str, stamp: str | None = None) -> Path:
    """The file a run writes: ``--out``, else the published file with ``--publish``, else a new
    file in ``runs/bench`` named after ``name`` and the time (``stamp``: ``YYYYmmdd-HHMMSS``)."""
    if getattr(args, "out", None):
        return Path(args.out)
    if getattr(args, "publish", False):
        return RESULTS_DIR / f"{name}.json"
    return RUNS_DIR / f"{name}-{stamp or time.strftime('%Y%m%d-%H%M%S')}.json"


def write_results(path: Path, data: Any) -> Path:
    """Write ``data`` as indented JSON to ``path`` (folders made), print and return the path."""
    if path.parent.resolve() == RUNS_DIR.resolve():  # a default name: another run's in the same second gets -2
        path = new_file(path)
    write_text_atomic(path, json.dumps(data, indent=2) + "\n")
    print(f"wrote {path}")
    return path

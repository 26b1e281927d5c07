"""Helpers shared by the command-line modules: errors, devices, JSON output."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any, Iterator, Sequence

import torch


class CliError(Exception):
    """A user error the command reports in one line (exit code 2)."""


HELP_WIDTH = 100


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs as written, but with their paragraphs wrapped: consecutive lines
    that start without a space are one paragraph, filled to the terminal (at most ``HELP_WIDTH``
    columns); indented lines (examples, tables) and blank lines are kept as they are. Descriptions
    and epilogs are not %-formatted by argparse: write '95%' there ('95%%' only in help= strings)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        width = max(40, min(width, HELP_WIDTH))
        out: list[str] = []
        paragraph: list[str] = []

        def flush() -> None:
            if paragraph:
                out.extend(textwrap.wrap(" ".join(paragraph), width, initial_indent=indent,
                                         subsequent_indent=indent, break_on_hyphens=False))
                paragraph.clear()

        for line in text.splitlines():
            if line.strip() and not line[0].isspace():
                paragraph.append(line.strip())
                continue
            flush()
            out.append(indent + line.rstrip() if line.strip() else "")
        flush()
        return "\n".join(out)


def resolve_device(name: str) -> torch.device:
    """A torch device from ``cpu``, ``cuda``, ``cuda:N``; a clear error when it is not available."""
    try:
        device = torch.device(name)
    except RuntimeError:
        raise CliError(f"unknown device {name!r}: use cpu or cuda") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise CliError("CUDA is not available on this machine (this torch build or driver); use --device cpu")
    if device.type not in ("cpu", "cuda"):
        raise CliError(f"unsupported device {name!r}: use cpu or cuda")
    return device


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 ply``, ``2 plies``, ``3 rounds``."""
    return f"{n} {word if n == 1 else (words or word + 's')}"


def warn(command: str, message: str) -> None:
    """One warning line on standard error."""
    print(f"conhex-zero {command}: warning: {message}", file=sys.stderr, flush=True)


def game_for_players(command: str, game: str | None, players: Sequence[str]) -> str:
    """The game a command plays: ``--game`` when given, else the game the first checkpoint among
    the players was trained on, else conhex; warns (one line each) when a model plays a game it was
    not trained on, and stops when two checkpoints disagree and ``--game`` is not given (see
    ``play.checkpoints``). A player spec that looks like a path to a missing file is reported so."""
    from conhex_zero.nn.checkpoint import CheckpointError
    from conhex_zero.play.checkpoints import GameChoiceError, choose_game

    try:
        spec, warnings = choose_game(game, players)
    except (CheckpointError, GameChoiceError) as err:
        raise CliError(str(err)) from None
    for message in warnings:
        warn(command, message)
    return spec


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2)
    sys.stdout.write("\n")


def output_json(data: Any, target: str | None) -> None:
    """``--json`` with a file argument: '-' prints to standard output, a path is written (and named)."""
    if target == "-":
        print_json(data)
    elif target is not None:
        Path(target).write_text(json.dumps(data, indent=2) + "\n")
        print(f"wrote {target}")


def load_record(path: str, index: int):
    """Game ``index`` of a record file (SGF, Little Golem or arena JSON lines), checked by replaying it."""
    from conhex_zero.records import RecordError, check_record, read_records, select_record

    if not Path(path).is_file():
        raise CliError(f"no record file at {path}")
    try:
        record = select_record(read_records(path, check=False), index, path)
        check_record(record)
    except RecordError as err:
        raise CliError(str(err)) from None
    return record


def is_terminal(stream: Any) -> bool:
    try:
        return hasattr(stream, "isatty") and stream.isatty()
    except ValueError:  # a closed stream
        return False


def use_color(stream: Any = sys.stdout) -> bool:
    return is_terminal(stream)


THREADS_HELP = ("torch CPU threads (default: 1; 0: one per core). One thread is fastest for the small "
                "tensors of play and search and never collapses: with more threads than free cores, "
                "torch runs 6-14 times slower while another process holds a core")


def add_threads_argument(parser, default: int = 1) -> None:
    """``--threads N`` for a long-running command (applied by ``main.run_command``)."""
    parser.add_argument("--threads", type=int, default=default, metavar="N", help=THREADS_HELP)


@contextlib.contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """torch limited to ``threads`` CPU threads inside the block (0: one per core; None: unchanged)."""
    if threads is None:
        yield
        return
    if threads < 0:
        raise CliError("--threads must be 0 (one per core) or more")
    before = torch.get_num_threads()
    torch.set_num_threads(threads or os.cpu_count() or 1)
    try:
        yield
    finally:
        torch.set_num_threads(before)

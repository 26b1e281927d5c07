"""Helpers shared by the command-line modules: errors, devices, JSON output, checks of numbers and
output paths made before any work starts. Nothing here imports torch until it is needed, so that
``--help`` and option errors answer at once (importing torch costs seconds of CPU)."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from conhex_zero.console.terminal import is_terminal
from conhex_zero.console.words import plural  # noqa: F401  (the commands' counted words)

if TYPE_CHECKING:  # torch is imported where it is used: --help and option errors stay fast
    import torch


class CliError(Exception):
    """A user error the command reports in one line (exit code 2)."""


class UsageError(Exception):
    """An option argparse could not take (a bad number, an unknown option): ``main`` reports it in one
    line, ``conhex-zero CMD: error: ...``, and returns 2, as for ``CliError``."""

    def __init__(self, prog: str, message: str):
        super().__init__(message)
        self.prog, self.message = prog, message


class Parser(argparse.ArgumentParser):
    """argparse's parser, with errors in one line and no usage block: ``--sims must be from 1 to
    100000, not 0`` for the bounded numbers of ``cli/numbers.py`` (without argparse's ``argument``
    prefix), argparse's own words for the rest. The subcommands' parsers are of this class too."""

    def error(self, message: str):  # type: ignore[override]
        m = re.fullmatch(r"argument ([^:/\s]+)(?:/\S+)?: (must .*)", message, flags=re.DOTALL)
        raise UsageError(self.prog, f"{m.group(1)} {m.group(2)}" if m else message)


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


def resolve_device(name: str) -> "torch.device":
    """A torch device from ``cpu``, ``cuda``, ``cuda:N``; a clear error when it is not available."""
    import torch

    try:
        device = torch.device(name)
    except RuntimeError:
        raise CliError(f"unknown device {name!r}: use cpu or cuda") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise CliError("CUDA is not available on this machine (this torch build or driver); use --device cpu")
    if device.type not in ("cpu", "cuda"):
        raise CliError(f"unsupported device {name!r}: use cpu or cuda")
    return device


def handle_sigterm() -> None:
    """SIGTERM stops a long command as Ctrl-C does (``KeyboardInterrupt``), so that it ends cleanly,
    keeping and reporting what it finished (a match's games), when a machine or a script ends it."""
    import signal
    import threading

    def stop(_signum, _frame) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, stop)


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
        from conhex_zero.files.disk import write_text_atomic

        write_text_atomic(target, json.dumps(data, indent=2) + "\n")
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


def use_color(stream: Any = sys.stdout) -> bool:
    return is_terminal(stream)


THREADS_HELP = ("torch CPU threads (default: 1; 0: one per core). One thread is fastest for the small "
                "tensors of play and search and never collapses: with more threads than free cores, "
                "torch runs 6-14 times slower while another process holds a core")


def add_threads_argument(parser, default: int = 1) -> None:
    """``--threads N`` for a long-running command (applied by ``main.run_command``)."""
    from conhex_zero.cli.numbers import THREADS

    parser.add_argument("--threads", type=THREADS, default=default, metavar="N", help=THREADS_HELP)


BACKEND_HELP = ("how the network and the search's rules run on a CPU: auto (default: AOTInductor's native "
                "kernels, about 1.6 times the search's simulations a second; built once per model, and once per "
                "game, about 20 s each, then cached; the eager path where they cannot be had), aoti (the same), or "
                "eager (PyTorch's own kernels, the reference). A player may say it alone: CKPT:backend=eager")


def add_backend_argument(parser) -> None:
    """``--backend auto|aoti|eager`` for a command that runs a network (applied by ``main.run_command``
    as the process's default, ``CONHEX_ZERO_BACKEND``)."""
    from conhex_zero.nn.model_names import BACKENDS

    parser.add_argument("--backend", choices=BACKENDS, default=None, help=BACKEND_HELP)


@contextlib.contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """torch limited to ``threads`` CPU threads inside the block (0: one per core; None: unchanged).
    When torch is not imported yet, the block's environment says it (``OMP_NUM_THREADS``, which torch
    reads when it starts), so that a command that fails before it needs torch never imports it."""
    if threads is None:
        yield
        return
    if threads < 0:
        raise CliError("--threads must be 0 (one per core) or more")
    if threads > MAX_THREADS:
        raise CliError(f"--threads must be at most {MAX_THREADS}")
    count = threads or os.cpu_count() or 1
    if "torch" not in sys.modules:
        saved = {name: os.environ.get(name) for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
        os.environ.update({name: str(count) for name in saved})
        try:
            yield
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


# ------------------------------------------------------------ checks made up front
MAX_THREADS = 4096
MAX_MATCH_GAMES = 100_000
"""The most games a match may play (its records and results are held in memory)."""
MAX_SECONDS = 86_400.0
"""The longest timeout an option may set (a day)."""
DEFAULT_RECORDS_DIR = Path("runs") / "arena"
"""Where an arena match without --records keeps its records (``match_records.default_records_path``)."""


def check_range(flag: str, value: int, low: int, high: int) -> None:
    """``CliError`` unless ``low <= value <= high``."""
    if not low <= value <= high:
        raise CliError(f"{flag} must be from {low} to {high}, not {value if abs(value) < 10**12 else 'that'}")


def check_seconds(flag: str, value: float, high: float = MAX_SECONDS) -> None:
    """``CliError`` unless ``value`` is a positive, finite number of seconds, at most ``high``."""
    if not math.isfinite(value) or not 0 < value <= high:
        raise CliError(f"{flag} must be a positive number of seconds, at most {high:g} (not {value:g})")


def check_clock_options(args) -> None:
    """``--seconds`` (play, gtp, serve): a valid clock, and not together with ``--sims`` (a player
    thinks either a number of simulations or a time a move)."""
    if args.seconds is None:
        return
    check_seconds("--seconds", args.seconds)
    if getattr(args, "sims", None) is not None:
        raise CliError("--sims and --seconds: give one (a number of simulations or a time a move)")


def _writable_folder(flag: str, path: Path, folder: Path) -> None:
    """The nearest existing folder of ``folder`` is a directory where files can be made."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise CliError(f"{flag} {path}: {existing} is not a directory")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as err:
        raise CliError(f"{flag} {path}: cannot write in {existing} ({err.strerror or err})") from None


def check_output_file(flag: str, path: str | Path) -> Path:
    """A file a command will write: not a directory, not a device or other special file (such as
    /dev/null, which an atomic write would replace), in a folder that is, or can be made, writable.
    Returns it as a ``Path``; ``CliError`` (one line) otherwise."""
    p = Path(path)
    if p.is_dir():
        raise CliError(f"{flag} {path} is a directory, not a file")
    if p.exists() and not p.is_file():
        raise CliError(f"{flag} {path} is not a regular file")
    _writable_folder(flag, p, p.parent if str(p.parent) else Path("."))
    return p


def check_appendable(flag: str, path: str | Path) -> Path:
    """A file a command appends to as it works (an arena's records): ``check_output_file``'s checks,
    and an existing file opened for appending (and closed, unchanged), so that a file that cannot be
    written (read-only, on a read-only mount) is found before the work, not after its first result."""
    p = check_output_file(flag, path)
    if p.exists():
        try:
            with open(p, "ab"):
                pass
        except OSError as err:
            raise CliError(f"{flag} {path}: cannot be written ({err.strerror or err})") from None
    return p


def check_output_dir(flag: str, path: str | Path) -> Path:
    """A directory a command will write into (made if missing): ``CliError`` (one line) when it is a
    file, lies under a file, or cannot be written."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise CliError(f"{flag} {path} is not a directory")
    _writable_folder(flag, p, p)
    return p


def check_arena_arguments(args: argparse.Namespace) -> None:
    """Everything of ``arena``'s options that can be checked before a game is played: counts and
    timeouts within bounds, the records file and the ladder directory writable."""
    check_range("--games", args.games, 1, MAX_MATCH_GAMES)
    check_range("--round", args.round, 1, MAX_MATCH_GAMES)
    check_range("--gtp-parallel", args.gtp_parallel, 1, 256)
    check_range("--seed", args.seed, 0, 2**63 - 1)
    if args.sims is not None:
        check_range("--sims", args.sims, 1, 100_000)
    check_seconds("--gtp-timeout", args.gtp_timeout)
    if args.records:
        check_appendable("--records", args.records)
    else:  # the default records file goes into runs/arena (its name needs the players, made later)
        try:
            check_output_dir("--records", DEFAULT_RECORDS_DIR)
        except CliError as err:
            raise CliError(f"{err} (the default records folder: give --records FILE)") from None
    if args.ladder:
        check_output_dir("--ladder", args.ladder)


# ------------------------------------------------------------ checks made before torch
# A user's typo must be answered at once: importing torch costs seconds of CPU (tens of seconds on a
# loaded machine), so names, paths and game specs are checked with torch-free code first.
def preflight_game(game: str | None) -> None:
    """A ``--game`` spec (None: none given) that names a game, or ``CliError`` with a suggestion."""
    if game is None:
        return
    from conhex_zero.games.game import GameSpecError, parse_game

    try:
        parse_game(game)
    except GameSpecError as err:
        raise CliError(str(err)) from None


def preflight_players(specs: Sequence[str], simulations: int | None = None) -> None:
    """Player names that name players (checkpoint files that exist, whole and undamaged as far as
    can be told without torch), or ``CliError``."""
    from conhex_zero.agents.player_specs import PlayerSpecError, parse_player
    from conhex_zero.nn.checkpoint_files import CheckpointError, check_checkpoint_archive, check_checkpoint_file

    for spec in specs:
        try:
            path = parse_player(spec, simulations).path
            if path is not None:
                check_checkpoint_archive(check_checkpoint_file(path))
        except (PlayerSpecError, CheckpointError) as err:
            raise CliError(str(err)) from None


def preflight_checkpoint(path: str | None, flag: str = "") -> None:
    """A checkpoint path (None: none given) that names a file, whole and undamaged as far as can be
    told without torch (``check_checkpoint_archive``), or ``CliError``."""
    if path is None:
        return
    from conhex_zero.nn.checkpoint_files import CheckpointError, check_checkpoint_archive, check_checkpoint_file

    try:
        check_checkpoint_file(path)
        check_checkpoint_archive(path)
    except CheckpointError as err:
        raise CliError(f"{flag}: {err}" if flag else str(err)) from None


def preflight_book(path: str | None) -> None:
    """An opening book folder (None: none given) that holds a book file, or ``CliError``."""
    if path is None:
        return
    if not ((Path(path) / "book.jsonl").is_file() or (Path(path) / "book.jsonl.gz").is_file()):
        raise CliError(f"--book {path}: no opening book there (a folder made by conhex-zero book grow)")


def book_for_game(path: str | None, spec: str) -> str | None:
    """Why the book at ``path`` cannot serve ``spec``'s game (it was grown for another), or None."""
    if path is None:
        return None
    from conhex_zero.book.store import header_game
    from conhex_zero.play.checkpoints import same_game

    game = header_game(path)
    try:
        if game is None or same_game(game, spec):
            return None
    except ValueError:  # a spec this version does not know
        pass
    return f"--book {path} is a book of {game}, not of {spec}"


def preflight_file(path: str | None, what: str) -> None:
    """An input file (None: none given) that exists and is a regular file, or ``CliError``."""
    if path is None:
        return
    from conhex_zero.nn.checkpoint_files import path_exists, shown

    if not path_exists(path):
        raise CliError(f"no {what} at {shown(path)}")
    if not Path(path).is_file():
        raise CliError(f"{shown(path)} is not a file")

"""``conhex-zero``: the one command-line entry point. Each subcommand lives in its own module with
``add_parser(subparsers)`` and ``run(args) -> int``; this module only wires them up and turns
expected errors (bad game specs, bad moves, bad options) into one clear line and exit code 2.
Building the parser imports no torch (the command modules import their heavy modules inside their
``run``), so ``--help`` and option errors answer at once.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from typing import Sequence

from conhex_zero import __version__
from conhex_zero.cli import (arena_cmd, average_cmd, bench_cmd, book_cmd, curve_cmd, distill_cmd, gtp_cmd, ladder_cmd, openings_cmd,
                             piece_cmd, play_cmd, rate_cmd, replay_cmd, report_cmd, rules_cmd, serve_cmd, train_cmd)
from conhex_zero.cli.common import CliError, HelpFormatter, Parser, UsageError, torch_threads

COMMANDS = (train_cmd, piece_cmd, rate_cmd, distill_cmd, average_cmd, arena_cmd, ladder_cmd, curve_cmd, rules_cmd,
            replay_cmd, openings_cmd, book_cmd, report_cmd, play_cmd, gtp_cmd, serve_cmd, bench_cmd)

DESCRIPTION = """\
conhex-zero: AlphaZero-style self-play for the connection games ConHex and Hex.

Games are named by spec strings: 'conhex' (pie rule on, as published), 'hex-11', 'hex-7:swap',
'hex-11:forbid=2,random=1', 'hex-9:extra-stone' ... (see 'conhex-zero rules --help').
"""


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="conhex-zero", description=DESCRIPTION,
        formatter_class=HelpFormatter)
    parser.add_argument("--version", action="version", version=f"conhex-zero {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS:
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        # key=value overrides may stand anywhere among a command's options (argparse takes positionals
        # only in one run): the rest of what was not understood is an error, as parse_args would say.
        stray = [a for a in extra if not (hasattr(args, "overrides") and "=" in a and not a.startswith("-"))]
        if stray:
            parser.error(f"unrecognized arguments: {' '.join(stray)}")
    except UsageError as err:  # one line, as every other refusal
        print(f"{err.prog}: error: {err.message}", file=sys.stderr)
        return 2
    if extra:
        args.overrides = list(args.overrides) + extra
    if args.command is None:
        parser.print_help()
        return 2
    refusal = empty_option(parser, args) or environment_problem()
    if refusal:  # one line, before anything runs (issue 58: an empty --out wrote into the working folder)
        print(f"conhex-zero {args.command}: error: {refusal}", file=sys.stderr)
        return 2
    from conhex_zero.train.interrupt import handle_sigint

    handle_sigint()  # Ctrl-C and kill -INT stop every command, also one started in the background
    return run_command(args.command, args.run, args)


def _chosen_parsers(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[argparse.ArgumentParser]:
    """The parser and every subparser on the command's path (``book html`` -> main, book, html)."""
    chain, current = [parser], parser
    while True:
        sub = next((a for a in current._actions if isinstance(a, argparse._SubParsersAction)), None)
        name = getattr(args, sub.dest, None) if sub is not None else None
        if sub is None or name not in sub.choices:
            return chain
        current = sub.choices[name]
        chain.append(current)


def empty_option(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str | None:
    """Why an option was given an empty value (``--out ''``), or None: an empty string is never a
    file, a folder, a host or a move list, and taking it as one does the wrong thing quietly."""
    for chosen in _chosen_parsers(parser, args):
        for action in chosen._actions:
            if not action.option_strings or action.dest in ("help", "version"):
                continue
            value = getattr(args, action.dest, None)
            values = value if isinstance(value, (list, tuple)) else [value]
            if any(isinstance(v, str) and not v.strip() for v in values):
                return f"{action.option_strings[-1]}: an empty value (give one, or leave the option out)"
    return None


ENVIRONMENT = {
    "CONHEX_ZERO_BACKEND": ("auto", "aoti", "eager"),
    "CONHEX_ZERO_BUILD": ("background", "wait"),
    "CONHEX_ZERO_HOST_READS": ("0", "1"),
}
"""The environment variables conhex-zero reads, with the values each takes (``CONHEX_ZERO_CACHE``:
any folder, not empty)."""


def environment_problem() -> str | None:
    """Why a conhex-zero environment variable cannot be used, or None (issue 58:
    ``CONHEX_ZERO_BACKEND=bogus`` ran as auto without a word)."""
    for name, allowed in ENVIRONMENT.items():
        value = os.environ.get(name)
        if value is not None and value.strip().lower() not in allowed:
            return f"the environment variable {name}={value[:40]!r} is none of {', '.join(allowed)}"
    cache = os.environ.get("CONHEX_ZERO_CACHE")
    if cache is not None and not cache.strip():
        return "the environment variable CONHEX_ZERO_CACHE is empty (a folder for the native packages, or unset)"
    return None


EXPECTED_ERRORS = (
    ("conhex_zero.agents.player_specs", "PlayerSpecError"), ("conhex_zero.files.disk", "DiskFullError"),
    ("conhex_zero.files.disk", "WriteError"), ("conhex_zero.games.game", "IllegalMoveError"),
    ("conhex_zero.games.game", "GameSpecError"), ("conhex_zero.games.game", "MoveError"),
    ("conhex_zero.files.jsonl", "JsonlError"), ("conhex_zero.book.store", "BookError"),
    ("conhex_zero.book.keys", "UnsupportedGame"), ("conhex_zero.nn.checkpoint_files", "CheckpointError"),
    ("conhex_zero.records.model", "RecordError"), ("conhex_zero.train.config", "ConfigError"),
)
"""The errors a user can cause, reported in one line, by module and name."""


def expected_errors() -> tuple[type[Exception], ...]:
    """The classes of ``EXPECTED_ERRORS`` whose modules are loaded: an error can only be an instance
    of a class that exists, so nothing is imported here (a command that fails before it needs torch
    never imports it, not even to report the failure)."""
    found: list[type[Exception]] = [CliError]
    for module, name in EXPECTED_ERRORS:
        loaded = sys.modules.get(module)
        if loaded is not None:
            found.append(getattr(loaded, name))
    return tuple(found)


def run_command(name: str, fn, args: argparse.Namespace) -> int:
    """Run a command; expected errors become one line on stderr and exit code 2: bad options, game
    specs and moves, files that are not what they should be (checkpoints, records, JSON lines), and
    writes that fail (a full disk names its mount point)."""
    from conhex_zero.env.allocator import keep_freed_memory

    keep_freed_memory()
    if getattr(args, "backend", None) is not None:  # --backend: this process's (and its workers') default
        os.environ["CONHEX_ZERO_BACKEND"] = args.backend
    threads = getattr(args, "threads", None) if name not in ("train", "piece", "bench") else None
    # A command never waits for a native package it lacks: a low-priority process builds it beside
    # the command (nn.native_background), except where the build is the work (bench) or counted as a
    # run's compile time (train, piece, distill). CONHEX_ZERO_BUILD=wait builds first, as before.
    build_env = os.environ.get("CONHEX_ZERO_BUILD")
    if name not in ("train", "piece", "bench", "distill") and build_env is None:
        os.environ["CONHEX_ZERO_BUILD"] = "background"
    try:
        with torch_threads(threads):
            return int(fn(args) or 0)
    except CliError as err:
        print(f"conhex-zero {name}: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into head & co.: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as err:
        if isinstance(err, expected_errors()):  # DiskFullError and WriteError are OSErrors with a message
            print(f"conhex-zero {name}: error: {err}", file=sys.stderr)
            return 2
        if err.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        from conhex_zero.files.disk import no_space

        print(f"conhex-zero {name}: error: {no_space(err.filename or '.')}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"conhex-zero {name}: interrupted", file=sys.stderr)
        return 130
    except Exception as err:
        if not isinstance(err, expected_errors()):
            raise
        print(f"conhex-zero {name}: error: {err}", file=sys.stderr)
        return 2
    finally:
        if build_env is None:  # a caller's environment as it was (tests run many commands in one process)
            os.environ.pop("CONHEX_ZERO_BUILD", None)


if __name__ == "__main__":
    sys.exit(main())

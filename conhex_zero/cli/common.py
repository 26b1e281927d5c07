"""Helpers shared by the command-line modules: errors, devices, JSON output."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import torch


class CliError(Exception):
    """A user error the command reports in one line (exit code 2)."""


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


def use_color(stream: Any = sys.stdout) -> bool:
    return hasattr(stream, "isatty") and stream.isatty()

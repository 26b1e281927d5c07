"""Helpers shared by the command-line modules: errors, devices, JSON output."""

from __future__ import annotations

import json
import sys
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


def use_color(stream: Any = sys.stdout) -> bool:
    return hasattr(stream, "isatty") and stream.isatty()

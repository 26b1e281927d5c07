"""Optional test groups: tests that need something not every machine has (OpenSpiel, a browser, a
GPU, pgx). Without it they skip with the reason, except where the environment variable
``CONHEX_ZERO_REQUIRE`` (comma-separated group names, set by ``.ci/run`` for what CI installs) says
the group must run: then a missing dependency fails the suite instead of hiding a gap.
"""

from __future__ import annotations

import importlib
import os

import pytest

GROUPS = {
    "openspiel": "cross-checks Hex against OpenSpiel's hex (the dev extra installs open-spiel)",
    "browser": "plays the serve page in headless chromium through playwright",
    "cuda": "runs the engine, network, search and self-play on a CUDA device",
    "pgx": "cross-checks Hex against pgx's (the bench extra installs pgx and JAX)",
}

REQUIRED = {g.strip() for g in os.environ.get("CONHEX_ZERO_REQUIRE", "").split(",") if g.strip()}
if os.environ.get("CONHEX_ZERO_BROWSER_TEST") == "required":  # the variable's older name
    REQUIRED.add("browser")


def missing(group: str, reason: str) -> None:
    """Skip (or, where ``group`` is required, fail) the current test because ``reason``."""
    if group in REQUIRED:
        pytest.fail(f"the {group} tests must run here (CONHEX_ZERO_REQUIRE) but {reason}", pytrace=False)
    pytest.skip(reason)


def optional_import(module: str):
    """The module, or None when it cannot be imported (tests then call ``missing``)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None

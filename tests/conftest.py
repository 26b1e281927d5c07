"""Shared test set-up: one torch thread for the whole suite.

A test's verdict must not depend on the machine's core count or load. Float reductions split over
threads round differently, so a training test could learn differently with 1 or 2 threads; and
torch's default of one thread per core collapses (6 to 14 times slower) when another process holds
a core. So every test, and every subprocess a test starts, runs torch on one thread.
"""

import os

os.environ["OMP_NUM_THREADS"] = "1"  # before torch is imported: also read by subprocesses
os.environ.setdefault("MKL_NUM_THREADS", "1")

from collections import defaultdict  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402

from optional import GROUPS, REQUIRED  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _one_thread():
    """Restores one thread after a test that changed it (commands set their own thread count)."""
    yield
    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)




# ------------------------------------------------------------- the groups' summary
_outcomes: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
_reasons: dict[str, set[str]] = defaultdict(set)


def pytest_runtest_logreport(report):
    for group in GROUPS:
        if group not in report.keywords:
            continue
        if report.skipped and report.when in ("setup", "call"):
            _outcomes[group]["skipped"] += 1
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            _reasons[group].add(reason.removeprefix("Skipped: "))
        elif report.when == "call":
            _outcomes[group]["passed" if report.passed else "failed"] += 1
        elif report.failed:
            _outcomes[group]["failed"] += 1


def pytest_terminal_summary(terminalreporter):
    """Which optional groups ran and which were skipped, and why (so a skip cannot hide a gap)."""
    terminalreporter.section("optional test groups")
    for group, what in GROUPS.items():
        counts = _outcomes.get(group, {})
        required = " (required here)" if group in REQUIRED else ""
        if counts.get("passed") or counts.get("failed"):
            line = f"{group}: ran, {counts.get('passed', 0)} passed, {counts.get('failed', 0)} failed{required}"
        elif counts.get("skipped"):
            line = f"{group}: skipped: {'; '.join(sorted(_reasons[group]))}"
        else:
            line = f"{group}: not collected (deselected or filtered){required}"
        terminalreporter.write_line(f"{line}  [{what}]")

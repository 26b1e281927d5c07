"""Shared test set-up: one torch thread and the eager network for the whole suite.

A test's verdict must not depend on the machine's core count or load. Float reductions split over
threads round differently, so a training test could learn differently with 1 or 2 threads; and
torch's default of one thread per core collapses (6 to 14 times slower) when another process holds
a core. So every test, and every subprocess a test starts, runs torch on one thread.
"""

import os

os.environ["OMP_NUM_THREADS"] = "1"  # before torch is imported: also read by subprocesses
os.environ.setdefault("MKL_NUM_THREADS", "1")
# The network's eager kernels for the suite (and its subprocesses): the golden search results are
# eager's, and a native package costs 15-25 s to build. tests/test_native.py builds and checks the
# native path (the commands' default, nn/native.py) in a cache of its own.
os.environ["CONHEX_ZERO_BACKEND"] = "eager"

from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402

from optional import GROUPS, REQUIRED  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def native_cache(tmp_path_factory):
    """A folder of native packages (``CONHEX_ZERO_CACHE``) for one test module: what it builds is
    built once for the module and never touches the user's cache."""
    from conhex_zero.nn.native import CACHE_ENV

    folder = tmp_path_factory.mktemp("native-cache")
    before = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = str(folder)
    try:
        yield folder
    finally:
        if before is None:
            os.environ.pop(CACHE_ENV, None)
        else:
            os.environ[CACHE_ENV] = before


@pytest.fixture(autouse=True)
def _one_thread():
    """Restores one thread after a test that changed it (commands set their own thread count)."""
    yield
    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)




# ------------------------------------------------------------- the slow cases
SLOW_CASES = Path(__file__).with_name("slow_cases.txt")


def _slow_entries() -> list[str]:
    """``file::name``, ``file::name[params]`` or ``file::prefix*`` entries of tests/slow_cases.txt."""
    entries, current = [], None
    for line in SLOW_CASES.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            current = line.strip()
        elif current is not None:
            entries.append(f"{current}::{line.strip()}")
    return entries


def _is_listed(nodeid: str, entry: str) -> bool:
    if entry.endswith("*"):
        return nodeid.startswith(entry[:-1])
    return nodeid == entry or nodeid.startswith(entry + "[")


_unmatched: list[str] = []


def pytest_collection_modifyitems(config, items):
    """Marks the tests of tests/slow_cases.txt slow (run by ``-m slow``, not by the fast suite)."""
    entries = _slow_entries()
    used: set[str] = set()
    for item in items:
        for entry in entries:
            if _is_listed(item.nodeid, entry):
                item.add_marker(pytest.mark.slow)
                used.add(entry)
                break
    files = {item.nodeid.split("::")[0] for item in items}
    _unmatched[:] = [e for e in entries if e not in used and e.split("::")[0] in files
                     and not any(i.nodeid.startswith(e.rstrip("*").split("[")[0]) for i in items)]


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
    """Which optional groups ran and which were skipped, and why (so a skip cannot hide a gap); and
    entries of tests/slow_cases.txt that name no test any more (renamed or removed tests)."""
    if _unmatched:
        terminalreporter.section("tests/slow_cases.txt")
        for entry in _unmatched:
            terminalreporter.write_line(f"names no test: {entry}")
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

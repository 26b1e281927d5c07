"""Shared test set-up: one torch thread for the whole suite.

A test's verdict must not depend on the machine's core count or load. Float reductions split over
threads round differently, so a training test could learn differently with 1 or 2 threads; and
torch's default of one thread per core collapses (6 to 14 times slower) when another process holds
a core. So every test, and every subprocess a test starts, runs torch on one thread.
"""

import os

os.environ["OMP_NUM_THREADS"] = "1"  # before torch is imported: also read by subprocesses
os.environ.setdefault("MKL_NUM_THREADS", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _one_thread():
    """Restores one thread after a test that changed it (commands set their own thread count)."""
    yield
    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)



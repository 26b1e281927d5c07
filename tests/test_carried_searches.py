"""Saved proof searches (``book/carried.py``): written xz-compressed, and the gzip files of earlier
sessions still read, listed, replaced by the next save and deleted by a proof."""

from __future__ import annotations

import gzip
import json
import sys

import numpy as np
import pytest

from conhex_zero.book import carried

ENTRY_BYTES = 48
HOLES = 36
KEY = "." * 5 + "x" + "." * 30 + "|o|-"


def _entries(count: int, seed: int = 0) -> bytes:
    """``count`` random records of the solver's saved size (what is saved is bytes to this module)."""
    rng = np.random.default_rng(seed)
    words = rng.integers(0, 1 << 36, size=(count, ENTRY_BYTES // 8), dtype=np.uint64)  # [E, 6]
    return words.tobytes()


def _gzip_save(folder, saved: carried.Carried):
    """A save as sessions before 2026-12-08 wrote it: gzip, at ``<digest>.gz``."""
    path = carried.search_path(folder, saved.key).with_suffix(".gz")
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"format": carried.FORMAT, "key": saved.key, "holes": HOLES, "entry_bytes": ENTRY_BYTES,
              "byteorder": sys.byteorder, "entries": len(saved.entries) // ENTRY_BYTES, "runs": saved.runs,
              "expansions": saved.expansions, "seconds": saved.seconds, "saved": "2026-12-07T23:00:00Z"}
    path.write_bytes(gzip.compress(json.dumps(header).encode() + b"\n" + saved.entries))
    return path


def test_a_search_is_saved_as_xz_and_loads_back(tmp_path):
    saved = carried.Carried(KEY, 2, 12_345, 67.8, _entries(500))
    path = carried.save(tmp_path, saved, HOLES, ENTRY_BYTES)
    assert path.suffix == ".xz" and path.read_bytes().startswith(carried.XZ_MAGIC)
    back = carried.load(tmp_path, KEY, HOLES, ENTRY_BYTES)
    assert back is not None and (back.runs, back.expansions, back.seconds) == (2, 12_345, 67.8)
    assert back.entries == carried.in_stone_order(saved.entries, ENTRY_BYTES)
    assert carried.read(path, HOLES, ENTRY_BYTES).entries == back.entries
    (header,) = carried.saved_searches(tmp_path)
    assert header["key"] == KEY and header["entries"] == 500


def test_a_gzip_search_saved_before_is_read_then_replaced_by_the_next_save(tmp_path):
    old = carried.Carried(KEY, 3, 1_000, 10.0, _entries(200, seed=1))
    gz = _gzip_save(tmp_path, old)
    back = carried.load(tmp_path, KEY, HOLES, ENTRY_BYTES)
    assert back is not None and back.entries == old.entries and back.runs == 3
    assert carried.read(gz, HOLES, ENTRY_BYTES).entries == old.entries  # --from FILE takes it too
    assert [h["runs"] for h in carried.saved_searches(tmp_path)] == [3]  # book show lists it
    xz = carried.save(tmp_path, carried.Carried(KEY, 4, 2_000, 20.0, back.entries), HOLES, ENTRY_BYTES)
    assert xz.is_file() and not gz.exists()  # one file per search, never two
    assert [h["runs"] for h in carried.saved_searches(tmp_path)] == [4]
    _gzip_save(tmp_path, old)  # a proof deletes whichever files the search has
    carried.forget(tmp_path, KEY)
    assert not xz.exists() and not gz.exists() and carried.saved_searches(tmp_path) == []


def test_a_damaged_xz_save_is_set_aside_and_refused_by_name(tmp_path):
    path = carried.save(tmp_path, carried.Carried(KEY, 1, 10, 1.0, _entries(50)), HOLES, ENTRY_BYTES)
    path.write_bytes(path.read_bytes()[:60])
    with pytest.raises(ValueError, match="not a saved search"):
        carried.read(path, HOLES, ENTRY_BYTES)
    assert carried.saved_searches(tmp_path) == []
    assert carried.load(tmp_path, KEY, HOLES, ENTRY_BYTES) is None
    assert path.with_suffix(".unreadable").exists() and not path.exists()

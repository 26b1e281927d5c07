"""The compiled kernels a line keeps between pieces (``train/compile_cache.py``): written with a
header that names torch and the device, used only when both match and the digest holds; a real
piece on the CPU saves them and the next piece loads them (heavy: two compilations)."""

from pathlib import Path

import pytest
import torch

from conhex_zero.train import compile_cache

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def fake_compiler(monkeypatch):
    """torch's cache functions replaced: ``saved`` is what save returns, ``loaded`` what load got."""
    calls = {"saved": b"kernels" * 100, "loaded": []}
    monkeypatch.setattr(torch.compiler, "save_cache_artifacts", lambda: (calls["saved"], None))
    monkeypatch.setattr(torch.compiler, "load_cache_artifacts", lambda blob: calls["loaded"].append(blob))
    return calls


def test_a_saved_cache_loads_on_the_same_torch_and_device_only(tmp_path, fake_compiler):
    path = tmp_path / compile_cache.FILENAME
    assert compile_cache.save(path, "NVIDIA H200") == 700
    notes: list[str] = []
    assert compile_cache.load(path, "NVIDIA H200", notes.append)
    assert fake_compiler["loaded"] == [b"kernels" * 100] and notes == []
    assert not compile_cache.load(path, "NVIDIA H100 80GB HBM3", notes.append)
    assert "on NVIDIA H200" in notes[-1] and "compiles anew" in notes[-1]
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    assert not compile_cache.load(path, "NVIDIA H200", notes.append) and "damaged" in notes[-1]
    path.write_bytes(b"not a cache at all")
    assert not compile_cache.load(path, "NVIDIA H200", notes.append) and "not a compile cache" in notes[-1]
    assert len(fake_compiler["loaded"]) == 1
    assert not compile_cache.load(tmp_path / "none.bin", "NVIDIA H200", notes.append)


def test_nothing_or_too_much_to_keep_writes_nothing(tmp_path, fake_compiler):
    fake_compiler["saved"] = b""
    assert compile_cache.save(tmp_path / "a.bin", "cpu") == 0 and not (tmp_path / "a.bin").exists()
    fake_compiler["saved"] = b"x" * (compile_cache.MAX_BYTES + 1)
    assert compile_cache.save(tmp_path / "b.bin", "cpu") == 0 and not (tmp_path / "b.bin").exists()


@pytest.mark.heavy
def test_a_compiled_piece_saves_its_kernels_and_the_next_piece_loads_them(tmp_path, monkeypatch):
    from conhex_zero.train.line import Line
    from conhex_zero.train.piece import run_piece

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))  # a bare machine's
    quiet = dict(progress=False, log=lambda *_: None, install_signals=False)
    line = tmp_path / "line"
    first = run_piece(line, config_file=str(ROOT / "configs" / "tiny.yaml"),
                      overrides=["selfplay.compile=true", "iterations=1", "eval.mode=check"], minutes=10,
                      run_dir=tmp_path / "r1", **quiet)
    assert first.record["compile_cache"] == "saved" and first.record["seconds"]["compile"] > 0
    assert (line / compile_cache.FILENAME).stat().st_size > 0
    second = run_piece(line, overrides=["iterations=2"], minutes=10, run_dir=tmp_path / "r2", **quiet)
    assert second.record["compile_cache"] in ("loaded", "loaded, saved")
    assert Line(line).read_carry()["iteration"] == 2

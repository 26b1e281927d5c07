"""Every checkpoint and training state carries a checksum of its bytes, verified on load: flipping any
16 bytes anywhere, cutting the file or appending to it is a one-line error naming the file. Files
from before checksums (the shipped checkpoints) still load; weights that are not finite are refused;
a refused pickle prints no torch warning; a full disk is "no space left on MOUNT"."""

from __future__ import annotations

import errno
import shutil
import warnings
from pathlib import Path

import pytest
import torch

from conhex_zero.cli.main import main
from conhex_zero.files import disk, file_seal
from conhex_zero.nn.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from conhex_zero.nn.encode import NUM_FEATURES
from conhex_zero.nn.model import GraphNet, ModelConfig
from conhex_zero.train.config_load import load_config
from conhex_zero.train.loop import train
from conhex_zero.train.run_dir import RunDir, TrainStateError, read_state

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "tiny.yaml"
STATE_KEYS = ("format", "schema", "config", "model", "learner", "iteration")


def quiet(*_args) -> None:
    pass


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("sealed") / "run"
    train(load_config(TINY, ["iterations=2", "eval.games=2", "eval.previous_games=2"]), run, progress=False,
          log=quiet, stop_after=1)
    return run


def flipped(data: bytes, offset: int, width: int = 16) -> bytes:
    out = bytearray(data)
    for i in range(offset, min(offset + width, len(out))):
        out[i] ^= 0xFF
    return bytes(out)


def offsets(size: int, count: int = 120) -> list[int]:
    """Offsets spread over the whole file, and every one near its end (the zip's end record, the seal)."""
    spread = {round(i * (size - 16) / (count - 1)) for i in range(count)}
    return sorted(spread | set(range(max(0, size - 140), size - 15)))


@pytest.mark.parametrize("name", ["state/train_state.pt", "latest.pt"])
def test_flipping_16_bytes_anywhere_is_detected(saved_run, tmp_path, name):
    source = saved_run / name
    data = source.read_bytes()
    assert file_seal.verify(source)
    target = tmp_path / source.name

    def load() -> None:
        if name.startswith("state"):
            read_state(target, STATE_KEYS)
        else:
            load_checkpoint(target)

    tried = offsets(len(data))
    assert len(tried) > 200
    for offset in tried:
        target.write_bytes(flipped(data, offset))
        with pytest.raises((TrainStateError, CheckpointError)) as info:
            load()
        assert str(target) in str(info.value) and "\n" not in str(info.value), (offset, info.value)
    for damaged in (data[:-1], data[:-83], data[:-84], data[:-200], data + b"\0", data + b"x" * 500):
        target.write_bytes(damaged)
        with pytest.raises((TrainStateError, CheckpointError), match="damaged|not a conhex-zero|cannot be read"):
            load()
    target.write_bytes(data)
    load()  # the intact copy loads


def test_a_flipped_state_or_checkpoint_is_a_one_line_error_on_the_command_line(saved_run, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(saved_run, run)
    state = run / "state" / "train_state.pt"
    before = state.read_bytes()
    state.write_bytes(flipped(before, len(before) // 2))
    capsys.readouterr()
    assert main(["train", "--resume", str(run), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"conhex-zero train: error: {state} is damaged: its checksum does not match its content " \
                          f"(bytes changed since it was written: a disk or copy error?)"
    latest = run / "latest.pt"
    latest.write_bytes(flipped(latest.read_bytes(), 1000))
    assert main(["arena", str(latest), "random", "--games", "2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{latest} is damaged" in err and len(err.strip().splitlines()) == 1


def test_files_without_a_seal_still_load_unverified(saved_run, tmp_path):
    unsealed = 0
    for shipped in sorted((ROOT / "checkpoints").glob("*.pt")):  # older releases have no seal, newer ones do
        before = shipped.stat().st_mtime_ns
        sealed = file_seal.verify(shipped)  # True: sealed and intact; False: no seal (a damaged seal raises)
        unsealed += not sealed
        assert load_checkpoint(shipped).model is not None
        assert shipped.stat().st_mtime_ns == before  # never rewritten (no seal added on load)
    assert unsealed >= 1  # a real file of an earlier version among them
    plain = tmp_path / "plain.pt"
    torch.save(torch.load(saved_run / "latest.pt", weights_only=True), plain)  # as by hand, or an older version
    assert not file_seal.verify(plain)
    assert load_checkpoint(plain).game == "hex-3"


def test_a_sealed_file_is_a_valid_zip_for_torch(saved_run):
    data = torch.load(saved_run / "latest.pt", weights_only=True)  # torch itself reads it
    assert data["game"] == "hex-3"
    assert (saved_run / "latest.pt").read_bytes()[-file_seal.SEAL_LENGTH:].startswith(file_seal.MAGIC)


def test_weights_that_are_not_finite_are_refused_naming_the_file(tmp_path, capsys):
    model = GraphNet(ModelConfig(1, 16), NUM_FEATURES)
    for value in (float("nan"), float("inf")):
        with torch.no_grad():
            next(model.parameters()).view(-1)[3] = value
        path = save_checkpoint(tmp_path / f"bad-{value}.pt", model, "hex-3")
        with pytest.raises(CheckpointError, match="NaN or infinite"):
            load_checkpoint(path)
        capsys.readouterr()
        assert main(["average", str(path), str(path), "--out", str(tmp_path / "avg.pt")]) == 2
        err = capsys.readouterr().err
        assert str(path) in err and "NaN or infinite" in err and len(err.strip().splitlines()) == 1
        assert not (tmp_path / "avg.pt").exists()
        assert main(["arena", str(path), "random", "--games", "2", "--quiet"]) == 2
        assert "NaN or infinite" in capsys.readouterr().err


class Evil:
    def __reduce__(self):
        return (print, ("this must never run",))


def test_a_refused_pickle_prints_no_torch_warning(saved_run, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(saved_run, run)
    state = run / "state" / "train_state.pt"
    torch.save({"format": "conhex-zero-checkpoint", "schema": 1, "x": Evil()}, state)
    evil_ckpt = tmp_path / "evil.pt"
    shutil.copyfile(state, evil_ckpt)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(TrainStateError, match="could run code"):
            read_state(state, STATE_KEYS)
        with pytest.raises(CheckpointError, match="could run code"):
            load_checkpoint(evil_ckpt)
        capsys.readouterr()
        assert main(["train", "--resume", str(run), "--quiet"]) == 2
    assert not caught, [str(w.message)[:100] for w in caught]
    captured = capsys.readouterr()
    assert "this must never run" not in captured.out + captured.err
    assert "Warning" not in captured.err and len(captured.err.strip().splitlines()) == 1


# ---------------------------------------------------------------- disk full
TORCH_FULL = ["[enforce fail at inline_container.cc:672] . unexpected pos 5248 vs 5144",
              "basic_ios::clear: iostream error", "PytorchStreamWriter failed writing file data/3: file write failed"]


@pytest.mark.parametrize("message", TORCH_FULL + ["errno"])
def test_a_full_disk_while_saving_is_no_space_left_and_keeps_the_old_file(tmp_path, monkeypatch, message):
    model = GraphNet(ModelConfig(1, 16), NUM_FEATURES)
    path = save_checkpoint(tmp_path / "a.pt", model, "hex-3")
    before = path.read_bytes()
    real_save = torch.save

    def full(obj, f, *args, **kwargs):
        real_save(obj, f, *args, **kwargs)
        Path(f).write_bytes(Path(f).read_bytes()[:100])  # what reached the disk
        if message == "errno":
            raise OSError(errno.ENOSPC, "No space left on device")
        raise RuntimeError(message)

    monkeypatch.setattr(torch, "save", full)
    monkeypatch.setattr(disk, "free_bytes", lambda _path: 0)
    with pytest.raises(disk.DiskFullError) as info:
        save_checkpoint(path, model, "hex-3")
    assert str(info.value) == f"no space left on {disk.mount_point(path)} (writing {path}): free some space " \
                              f"there, then try again"
    assert path.read_bytes() == before and not list(tmp_path.glob("*.tmp"))


def test_other_write_failures_are_one_line_and_bugs_stay_bugs(tmp_path, monkeypatch):
    monkeypatch.setattr(disk, "free_bytes", lambda _path: 10**12)
    with pytest.raises(disk.WriteError, match=r"cannot write .*x\.pt: .*unexpected pos 1 vs 2"):
        with disk.writing(tmp_path / "x.pt"):
            raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 1 vs 2")
    with pytest.raises(RuntimeError, match="a bug"):
        with disk.writing(tmp_path / "x.pt"):
            raise RuntimeError("a bug")


def test_a_full_disk_during_training_is_one_line_and_the_state_stays(saved_run, tmp_path, monkeypatch, capsys):
    run = tmp_path / "run"
    shutil.copytree(saved_run, run)
    before = (run / "state" / "train_state.pt").read_bytes()

    def full(self, state):
        raise disk.no_space(self.state_file)

    monkeypatch.setattr(RunDir, "save_state", full)
    capsys.readouterr()
    assert main(["train", "--resume", str(run), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"conhex-zero train: error: no space left on {disk.mount_point(run)} (writing ")
    assert len(err.strip().splitlines()) == 1
    assert (run / "state" / "train_state.pt").read_bytes() == before and not (run / "train.lock").exists()


def test_mount_point_of_a_path_to_be_created(tmp_path):
    assert disk.mount_point(tmp_path / "a" / "b" / "c.pt") == disk.mount_point(tmp_path)
    assert disk.mount_point("/") == Path("/")


@pytest.mark.parametrize("code", [errno.EACCES, errno.EROFS, errno.ENOTDIR, errno.ENOENT])
def test_an_error_with_a_cause_of_its_own_is_not_a_full_disk(code):
    """/proc has no free space at all: a refused write there is the refusal's cause, not "no space"."""
    assert not disk.is_disk_full(OSError(code, "refused"), "/proc/x/run")
    assert disk.is_disk_full(OSError(errno.ENOSPC, "full"), "/proc/x/run")

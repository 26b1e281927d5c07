"""A training run's directory: config, metrics, checkpoints, and the state needed to resume.

    RUN/config.yaml                 the resolved configuration
    RUN/metrics.jsonl               one JSON object per iteration (namespaced keys)
    RUN/tb/                         the same metrics for TensorBoard
    RUN/checkpoints/iter_NNNN.pt    model checkpoints of evaluated iterations (rolling history)
    RUN/latest.pt, RUN/best.pt      the newest and the best-rated evaluated model
    RUN/ladder.jsonl                every evaluation game's result, for the Elo ladder
    RUN/state/train_state.pt        everything to resume: model, optimizer, replay buffer,
                                    games in progress, random generators, counters
    RUN/state/shard-NNNN-rankR.pt   torchrun jobs only: rank R's replay shard, games in progress
                                    and generators at iteration NNNN (train_state.pt then holds
                                    the shared part; it is written last and names the iteration)
    RUN/train.lock                  while a process trains the run: who (see ``run_lock.py``)

Every file is written to ``NAME.tmp`` and renamed, so a killed process loses at most the work
since the last checkpoint and never leaves a corrupt file; state files and checkpoints are sealed
with a checksum of their bytes (``file_seal``), verified when they are read. Model checkpoints load
with ``conhex_zero.nn.checkpoint.load_checkpoint`` (``torch.load(weights_only=True)``).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conhex_zero.files import file_seal
from conhex_zero.files.disk import writing
from conhex_zero.files.jsonl import JsonlError, append_jsonl, iter_jsonl, rewrite_jsonl

if TYPE_CHECKING:  # torch is imported where a model is saved: RunDir's checks stay fast
    from conhex_zero.nn.model import GraphNet


def _json_number(v: Any) -> Any:
    """Floats rounded for the metrics file; NaN and infinities (not JSON) as null."""
    if isinstance(v, float):
        return round(v, 6) if math.isfinite(v) else None
    return v


class TrainStateError(ValueError):
    """A training state file is missing, damaged or not a training state of this version."""


def read_state(path: Path, required: tuple[str, ...], mmap: bool = False) -> dict:
    """``torch.load(weights_only=True)`` of a state file, with one-line errors for damaged files."""
    from conhex_zero.nn.checkpoint import FORMAT, SCHEMA_VERSION, unreadable_reason

    if not path.is_file():
        raise TrainStateError(f"{path} is missing")
    if path.stat().st_size == 0:
        raise TrainStateError(f"{path} is empty (a crash while it was first written?)")
    try:
        data = file_seal.load(path, mmap=mmap)  # the checksum is verified first
    except file_seal.SealError as err:
        raise TrainStateError(str(err)) from None
    except OSError as err:
        raise TrainStateError(f"{path} cannot be read ({err.strerror or err})") from None
    except Exception as err:  # torch raises many types for truncated or foreign files
        reason = unreadable_reason(err)  # never torch's advice to load it unsafely
        raise TrainStateError(f"{path} is damaged or not a training state ({reason[:200]})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise TrainStateError(f"{path} is not a conhex-zero training state")
    if data.get("schema") != SCHEMA_VERSION:
        raise TrainStateError(f"{path} has schema {data.get('schema')}; this version reads {SCHEMA_VERSION}")
    missing = [k for k in required if k not in data]
    if missing:
        kind = "a model checkpoint, not a training state" if "state_dict" in data else "incomplete"
        raise TrainStateError(f"{path} is {kind} (missing {', '.join(missing)})")
    return data


def atomic_torch_save(obj: dict, path: Path) -> None:
    """Write a state file atomically, sealed with its checksum (``file_seal.save``)."""
    file_seal.save(obj, path)


TEXT_METRICS = ("line_id",)
"""Metric keys that hold text: the line a piece's metric lines belong to (``train/line.py``)."""


class RunDir:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.checkpoints = self.path / "checkpoints"
        self.state_file = self.path / "state" / "train_state.pt"
        self.metrics_file = self.path / "metrics.jsonl"
        self.config_file = self.path / "config.yaml"
        self._writer = None

    FILES = ("config.yaml", "metrics.jsonl", "ladder.jsonl", "latest.pt", "best.pt", "train.lock",
             "state/train_state.pt")
    FOLDERS = ("state", "checkpoints", "tb")

    def check_layout(self) -> None:
        """``TrainStateError`` (one line) when a file of the run is a directory, a folder of it is
        a file, or the run directory itself is not a directory."""
        if self.path.exists() and not self.path.is_dir():
            raise TrainStateError(f"{self.path} is a file, not a run directory")
        for name in self.FOLDERS:
            p = self.path / name
            if p.exists() and not p.is_dir():
                raise TrainStateError(f"{p} is a file where the run keeps a folder: move it away")
        for name in self.FILES:
            p = self.path / name
            if p.is_dir():
                raise TrainStateError(f"{p} is a directory where the run keeps a file: move it away")

    def create(self) -> None:
        self.check_layout()
        with writing(self.path):
            (self.path / "state").mkdir(parents=True, exist_ok=True)
            self.checkpoints.mkdir(parents=True, exist_ok=True)

    @property
    def resumable(self) -> bool:
        return self.state_file.is_file()

    def write_config(self, text: str) -> None:
        tmp = self.config_file.with_name("config.yaml.tmp")
        try:
            with writing(self.config_file):
                tmp.write_text(text)
                os.replace(tmp, self.config_file)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    # ---------------------------------------------------------------- metrics
    def log(self, metrics: dict[str, float], step: int) -> None:
        record = {"time": time.time(), **{k: _json_number(v) for k, v in metrics.items()}}
        append_jsonl(self.metrics_file, [record])
        with writing(self.path / "tb"):
            writer = self._tensorboard()
            if writer is not None:
                for k, v in metrics.items():
                    if isinstance(v, (int, float)) and not isinstance(v, bool):
                        writer.add_scalar(k, v, step)
                writer.flush()

    def _tensorboard(self):
        if self._writer is None:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError:  # tensorboard is a dependency, but a broken install should not stop a run
                self._writer = False
                return None
            self._writer = SummaryWriter(str(self.path / "tb"))
        return self._writer or None

    def read_metrics(self) -> list[dict]:
        """The metric lines; ``JsonlError`` naming the line when one holds anything but numbers (null
        for a value that was not finite, true or false; the text of ``TEXT_METRICS``), or an iteration
        that is not a whole number."""
        if self.metrics_file.is_dir():
            raise JsonlError(f"{self.metrics_file} is a directory, not a metrics file")
        if not self.metrics_file.is_file():
            return []
        records = []
        for number, record in iter_jsonl(self.metrics_file):
            for key, value in record.items():
                whole = key == "iteration"
                if not whole and (value is None or isinstance(value, bool)
                                  or (key in TEXT_METRICS and isinstance(value, str))):
                    continue
                if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)):
                    raise JsonlError(f"{self.metrics_file}:{number}: {key!r} is {json.dumps(value)[:40]}, not "
                                     f"{'a whole number' if whole else 'a number'}; fix or delete that line")
            records.append(record)
        return records

    def truncate_metrics(self, last_iteration: int) -> None:
        """Drop metric lines of iterations after ``last_iteration`` (work lost before a resume)."""
        rewrite_jsonl(self.metrics_file, [r for r in self.read_metrics() if r.get("iteration", 0) <= last_iteration])

    def close(self) -> None:
        if self._writer:
            self._writer.close()

    # ------------------------------------------------------------ checkpoints
    def checkpoint_path(self, iteration: int) -> Path:
        return self.checkpoints / f"iter_{iteration:04d}.pt"

    def save_model(self, iteration: int, model: "GraphNet", game: str, meta: dict, best: Path | None) -> Path:
        """Write the iteration's checkpoint and latest.pt; copy ``best`` (a checkpoint) to best.pt.
        Old checkpoints are pruned only once the training state names this iteration
        (``prune_checkpoints``), so a kill in between loses nothing a resume needs."""
        from conhex_zero.nn.checkpoint import save_checkpoint

        path = save_checkpoint(self.checkpoint_path(iteration), model, game, meta)
        for name, source in (("latest.pt", path), ("best.pt", best)):
            if source is None or not source.is_file():
                continue
            tmp = self.path / (name + ".tmp")
            try:
                with writing(self.path / name):
                    shutil.copyfile(source, tmp)
                    os.replace(tmp, self.path / name)
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
        return path

    def iteration_checkpoints(self) -> list[Path]:
        """The run's evaluated-iteration checkpoints (``checkpoints/iter_NNNN.pt``), oldest first."""
        return sorted(self.checkpoints.glob("iter_*.pt"))

    def prune_checkpoints(self, keep: int, protect: tuple[Path | None, ...] = ()) -> None:
        """Delete all but the newest ``keep`` iteration checkpoints (and those in ``protect``)."""
        history = self.iteration_checkpoints()
        keep_always = {p for p in protect if p is not None}
        for old in history[:-keep]:
            if old not in keep_always:
                old.unlink(missing_ok=True)

    def relative(self, path: Path) -> str:
        """``path`` relative to the run directory (how the ladder stores checkpoint paths)."""
        try:
            return str(Path(path).relative_to(self.path))
        except ValueError:
            return str(path)

    def resolve(self, path: str) -> Path:
        """A stored path: relative ones are taken from the run directory, wherever it now is."""
        p = Path(path)
        return p if p.is_absolute() else self.path / p

    def remove_leftovers(self) -> list[Path]:
        """Delete ``*.tmp`` files a killed process left (a training state's is as large as the replay)."""
        removed = []
        for folder in (self.path, self.path / "state", self.checkpoints):
            for tmp in folder.glob("*.tmp"):
                tmp.unlink(missing_ok=True)
                removed.append(tmp)
        return removed

    def resume_notes(self, iteration: int) -> list[str]:
        """What a resume at ``iteration`` finds missing or damaged besides the state (one line each):
        a checkpoint whose checksum does not match (the ladder cannot play it, ``average`` and
        ``arena`` refuse it), and a metrics or ladder file gone although iterations were logged (the
        curve and the ladder then start after them)."""
        notes = []
        for path in [*self.iteration_checkpoints(), self.path / "latest.pt", self.path / "best.pt"]:
            if not path.is_file():
                continue
            try:
                file_seal.verify(path)
            except (file_seal.SealError, OSError) as err:
                notes.append(f"warning: {path} is damaged ({str(err).split(' is damaged: ')[-1]}); it is kept as "
                             f"it is, but no command can use it: delete it, or copy it back from a backup")
        expected = [(self.metrics_file, "the metrics")] if iteration > 0 else []
        if self.iteration_checkpoints():  # evaluations were made: their games are in the ladder
            expected.append((self.path / "ladder.jsonl", "the evaluation games (the Elo ladder)"))
        for path, what in expected:
            if not path.is_file():
                notes.append(f"warning: {path} is missing: {what} of iterations 1-{iteration} are lost; it is "
                             f"written again from iteration {iteration + 1}")
        return notes

    def save_state(self, state: dict) -> None:
        atomic_torch_save(state, self.state_file)

    def load_state(self, mmap: bool = False) -> dict:
        """The training state; ``TrainStateError`` with a clear message if it is not one. With
        ``mmap`` its tensors are mapped, not read (to look at its config)."""
        return read_state(self.state_file, ("format", "schema", "config", "model", "learner", "iteration"), mmap)

    # ------------------------------------------------- per-rank state (torchrun)
    def shard_path(self, iteration: int, rank: int) -> Path:
        return self.path / "state" / f"shard-{iteration:04d}-rank{rank}.pt"

    def save_shard(self, iteration: int, rank: int, shard: dict) -> None:
        atomic_torch_save(shard, self.shard_path(iteration, rank))

    def load_shard(self, iteration: int, rank: int) -> dict | None:
        path = self.shard_path(iteration, rank)
        return read_state(path, ("format", "replay", "selfplay")) if path.is_file() else None

    def remove_shards(self, keep_iteration: int | None = None) -> None:
        """Delete rank shards of other iterations than ``keep_iteration`` (all when None): called
        once train_state.pt names the iteration whose shards it needs."""
        keep = f"shard-{keep_iteration:04d}-" if keep_iteration is not None else None
        for old in (self.path / "state").glob("shard-*-rank*.pt"):
            if keep is None or not old.name.startswith(keep):
                old.unlink(missing_ok=True)

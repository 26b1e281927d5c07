"""A training line: one long run kept in a small directory (in the repository), continued in pieces.

A device is lent for minutes at a time, and the next one starts bare, so a long run cannot live in a
run directory: its replay alone is hundreds of MB. A line keeps what the next piece needs, a few MB::

    LINE/line.yaml                 the line's config (its resolved TrainConfig)
    LINE/carry.pt                  the carried state: weights, optimiser (moments and step, so the
                                   learning-rate schedule goes on where it stood), the learner's
                                   generator, iteration, games, recorded positions, training time,
                                   and the model the next evaluation compares with; no replay and
                                   no games in progress (sealed, ``file_seal``)
    LINE/metrics.jsonl             every iteration of every piece
    LINE/ladder.jsonl              every evaluation game (the Elo ladder: ``conhex-zero ladder LINE``)
    LINE/pieces.jsonl              one record per piece: device, torch, commit, minutes, games,
                                   positions, self-play speed, Elo (``piece.py``)
    LINE/checkpoints/iter_NNNN.pt  every evaluated checkpoint (with --out, only the piece's newest goes
                                   there: few files for a lent machine to send back)
    LINE/logs/piece-NNN.log        each piece's log

A piece copies the line into a scratch run directory (``prepare_run``), trains there with the
ordinary loop (a carried state resumes with fresh games and an empty replay), and writes the line
back (``export``) after every saved state: the files first, ``carry.pt`` last (it names the
iteration the others are trimmed to on the next read), so a piece killed at any moment leaves a
line that the next piece continues from its last save.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Callable

from conhex_zero import file_seal
from conhex_zero.disk import write_text_atomic, writing
from conhex_zero.jsonl import read_jsonl, rewrite_jsonl
from conhex_zero.train.run_dir import RunDir, TrainStateError, read_state

CARRIED_KEYS = ("format", "schema", "config", "model", "learner", "iteration", "games", "elapsed",
                "previous_name", "previous", "threads")
"""What a carried state keeps of a training state (``loop.py`` writes them all)."""


class LineError(ValueError):
    """A line directory that cannot be used as asked; the message says why and what to do."""


def carry_from_state(state: dict, positions: int) -> dict:
    """A training state without its replay, games in progress and generators of self-play, marked
    ``carried`` (a resume then starts fresh games), with the recorded positions so far."""
    carry = {key: state[key] for key in CARRIED_KEYS if key in state}
    carry.update({"carried": True, "positions": int(positions), "world_size": 1})
    return carry


class Line:
    """The files of a line directory (see the module docstring)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.config_file = self.path / "line.yaml"
        self.carry_file = self.path / "carry.pt"
        self.metrics_file = self.path / "metrics.jsonl"
        self.ladder_file = self.path / "ladder.jsonl"
        self.pieces_file = self.path / "pieces.jsonl"
        self.checkpoints = self.path / "checkpoints"
        self.logs = self.path / "logs"

    @property
    def name(self) -> str:
        return self.path.resolve().name

    @property
    def started(self) -> bool:
        """A piece has saved a state here."""
        return self.carry_file.is_file()

    def check(self) -> None:
        """``LineError`` when the path is not a line directory a piece can read."""
        if self.path.exists() and not self.path.is_dir():
            raise LineError(f"{self.path} is a file, not a line directory")
        for folder in (self.checkpoints, self.logs):
            if folder.exists() and not folder.is_dir():
                raise LineError(f"{folder} is a file where a line keeps a folder: move it away")
        for file in (self.config_file, self.carry_file, self.metrics_file, self.ladder_file, self.pieces_file):
            if file.is_dir():
                raise LineError(f"{file} is a directory where a line keeps a file: move it away")

    def read_carry(self) -> dict:
        """The carried state (``TrainStateError`` for a damaged or foreign file)."""
        data = read_state(self.carry_file, ("format", "schema", "config", "model", "learner", "iteration"))
        if not data.get("carried"):
            raise TrainStateError(f"{self.carry_file} is a full training state, not a carried one")
        return data

    def pieces(self, warn: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
        """The piece records, oldest first (a missing file: none)."""
        if not self.pieces_file.is_file():
            return []
        return read_jsonl(self.pieces_file, warn) if warn else read_jsonl(self.pieces_file)

    def checkpoint_files(self) -> list[Path]:
        return sorted(self.checkpoints.glob("iter_*.pt")) if self.checkpoints.is_dir() else []

    # ------------------------------------------------------------------ into a run directory
    def prepare_run(self, run: RunDir) -> None:
        """Copy the line into the new run directory ``run``: the carried state as its training
        state, its config, metrics, ladder and checkpoints (the ladder's earlier players)."""
        run.create()
        shutil.copyfile(self.carry_file, run.state_file)
        if self.config_file.is_file():
            shutil.copyfile(self.config_file, run.config_file)
        for source, target in ((self.metrics_file, run.metrics_file), (self.ladder_file, run.path / "ladder.jsonl")):
            if source.is_file():
                shutil.copyfile(source, target)
        for checkpoint in self.checkpoint_files():
            shutil.copyfile(checkpoint, run.checkpoints / checkpoint.name)

    # ------------------------------------------------------------------ out of a run directory
    def export(self, run: RunDir, record: dict[str, Any], earlier: list[dict[str, Any]], log_text: str,
               first_iteration: int = 1, drop_checkpoints: tuple[str, ...] = ()) -> dict:
        """Write the run's last saved state into this line directory as a carried state, with the
        run's metrics and ladder up to that iteration, its newest evaluated checkpoint when the
        piece made it (at ``first_iteration`` or later; ``drop_checkpoints``: names this piece wrote
        before, now removed), the piece records (``earlier`` and ``record``) and the piece's log.
        Returns the carried state."""
        state = run.load_state()
        iteration = int(state["iteration"])
        metrics = [m for m in run.read_metrics() if m.get("iteration", 0) <= iteration]
        positions = (int(state["replay"]["total_added"]) if isinstance(state.get("replay"), dict)
                     else int(state.get("positions", 0)))
        if metrics and "replay/total_added" in metrics[-1]:
            positions = max(positions, int(metrics[-1]["replay/total_added"]))
        ladder_path = run.path / "ladder.jsonl"
        ladder = [e for e in read_jsonl(ladder_path) if int(e.get("iteration", 0)) <= iteration] \
            if ladder_path.is_file() else []
        evaluated = [p for p in run.iteration_checkpoints() if first_iteration <= int(p.stem.split("_")[1]) <= iteration]
        with writing(self.path):
            self.checkpoints.mkdir(parents=True, exist_ok=True)
            self.logs.mkdir(parents=True, exist_ok=True)
            rewrite_jsonl(self.metrics_file, metrics)
            rewrite_jsonl(self.ladder_file, ladder)
            if evaluated:
                newest = evaluated[-1]
                target = self.checkpoints / newest.name
                if not target.is_file():
                    tmp = target.with_name(target.name + ".tmp")
                    shutil.copyfile(newest, tmp)
                    tmp.replace(target)
                for name in drop_checkpoints:
                    if name != newest.name:
                        (self.checkpoints / name).unlink(missing_ok=True)
            write_text_atomic(self.logs / f"piece-{record['piece']:03d}.log", log_text)
            import yaml

            write_text_atomic(self.config_file, yaml.safe_dump(state["config"], sort_keys=False))
            carry = carry_from_state(state, positions)
            file_seal.save(carry, self.carry_file)  # the commit: the files above are trimmed to it
            rewrite_jsonl(self.pieces_file, [*earlier, record])
        return carry


def reconcile_pieces(records: list[dict[str, Any]], iteration: int, note: Callable[[str], None]) -> list[dict[str, Any]]:
    """The piece records that the carried state (at ``iteration``) stands on. A piece writes its
    record after its state, so a record never ends past the state unless the line's files were
    mixed by hand (an older ``carry.pt`` checked out beside newer records): such records are
    dropped with a note. A state past the last record (a piece killed between the two writes) is
    noted too: that piece's record stops at its previous save."""
    kept = [r for r in records if int(r.get("last_iteration", 0)) <= iteration]
    if len(kept) != len(records):
        note(f"note: {len(records) - len(kept)} piece record(s) end after the carried state's iteration "
             f"{iteration}: they are dropped")
    if kept and int(kept[-1].get("last_iteration", 0)) < iteration:
        note(f"note: the carried state is at iteration {iteration} but the last piece record ends at "
             f"{kept[-1].get('last_iteration')}: that piece was stopped before its record was written")
    return kept

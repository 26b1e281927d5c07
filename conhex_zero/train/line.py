"""A training line: one long run kept in a small directory (in the repository), continued in pieces.

A device is lent for minutes at a time, and the next one starts bare, so a long run cannot live in a
run directory: its replay alone is hundreds of MB. A line keeps what the next piece needs, a few MB::

    LINE/line.yaml                 the line's settings: read by every piece on top of the config
                                   stored in carry.pt (so a key it leaves out keeps its stored value,
                                   and an edit changes the recipe from the next piece on, noted);
                                   rewritten only when a piece's key=value overrides change it
    LINE/carry.pt                  the carried state: weights, optimiser (moments and step, so the
                                   learning-rate schedule goes on where it stood), iteration, games,
                                   recorded positions, training time, the model the next evaluation
                                   compares with, and the line's identity (its id and the number of
                                   the piece that wrote it); no replay and no games in progress
                                   (sealed, ``file_seal``)
    LINE/metrics.jsonl             every iteration of every piece
    LINE/ladder.jsonl              every rating game (the Elo ladder: ``conhex-zero ladder LINE``)
    LINE/pieces.jsonl              one record per piece: device, torch, commit, its key=value overrides,
                                   minutes and where they went, games, positions, self-play speed, Elo
                                   (``piece.py``)
    LINE/checkpoints/iter_NNNN.pt  every evaluated checkpoint (with --out, only the piece's newest goes
                                   there: few files for a lent machine to send back)
    LINE/logs/piece-NNN.log        each piece's log
    LINE/dropped/                  what a piece or ``rate`` found past the carried state, moved aside
                                   (``line_past.py``)
    LINE/compile-cache.bin         the self-play network's compiled kernels (``compile_cache.py``)

A piece copies the line into a scratch run directory (``prepare_run``), trains there with the
ordinary loop (a carried state resumes with fresh games and an empty replay), and writes the line
back (``export``) after every saved state: the files first, ``carry.pt`` last (it names the
iteration the others are trimmed to on the next read), so a piece killed at any moment leaves a
line that the next piece continues from its last save.

A line knows itself: its first piece draws an id, kept in carry.pt, in every piece record, log and
metric line, and each carry.pt names the piece that wrote it, so piece numbers come from the carried
state (not from counting records). ``line_identity.identity_of`` checks that the line's files and a
piece's ``--out`` folder belong to the same line before anything is written; ``line_past`` moves
aside what the line holds past its carried state (``LINE/dropped/``). Each piece record names its
checkpoint's digest (``checkpoint_digest``), and a checkpoint is never kept over another model of
the same name.
"""

from __future__ import annotations

import re
import shutil
import time
import uuid
from pathlib import Path
from typing import Any, Callable

from conhex_zero.files import file_seal
from conhex_zero.files.disk import write_text_atomic, writing
from conhex_zero.files.jsonl import read_jsonl, rewrite_jsonl
from conhex_zero.nn.checkpoint_files import checkpoint_digest
from conhex_zero.train.line_past import DROPPED, checkpoint_iteration, is_past_entry
from conhex_zero.train.run_dir import RunDir, TrainStateError, read_state

CARRIED_KEYS = ("format", "schema", "config", "model", "learner", "iteration", "games", "elapsed",
                "previous_name", "previous", "threads")
"""What a carried state keeps of a training state (``loop.py`` writes them all)."""


class LineError(ValueError):
    """A line directory that cannot be used as asked; the message says why and what to do."""


def check_carry_file(path: Path) -> None:
    """``LineError`` when a line's carry.pt is cut short or damaged, found without torch (its seal:
    every carried state is sealed when written, ``file_seal``)."""
    try:
        sealed = file_seal.verify(path)
    except file_seal.SealError as err:
        raise LineError(f"{err}: restore the line's carry.pt (e.g. git checkout -- {path})") from None
    except OSError as err:
        raise LineError(f"{path} cannot be read ({err.strerror})") from None
    if not sealed:
        raise LineError(f"{path} is damaged or cut short (it has no checksum, which every carried state is "
                        f"written with): restore the line's carry.pt (e.g. git checkout -- {path})")


def new_line_id() -> str:
    return uuid.uuid4().hex[:16]


def carry_from_state(state: dict, positions: int, identity: dict[str, Any]) -> dict:
    """A training state without its replay, games in progress and generators of self-play, marked
    ``carried`` (a resume then starts fresh games), with the recorded positions so far and the
    line's ``identity`` (``{"id": ..., "piece": N}``)."""
    carry = {key: state[key] for key in CARRIED_KEYS if key in state}
    carry.update({"carried": True, "positions": int(positions), "world_size": 1, "line": dict(identity)})
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

    def log_numbers(self) -> list[int]:
        """The piece numbers of the logs in ``logs/``."""
        found = (re.fullmatch(r"piece-(\d+)\.log", p.name) for p in self.logs.glob("piece-*.log")) \
            if self.logs.is_dir() else ()
        return sorted(int(m.group(1)) for m in found if m)

    def is_empty(self) -> bool:
        return not self.path.exists() or not any(self.path.iterdir())

    def work_without_carry(self) -> list[str]:
        """What a line folder without ``carry.pt`` holds of earlier pieces' work (records, metrics,
        ratings, checkpoints, logs): a piece must not start a new line over it (issue 58)."""
        if self.carry_file.is_file():
            return []
        found = []
        for file, what in ((self.pieces_file, "piece record"), (self.metrics_file, "metric line"),
                           (self.ladder_file, "rating game")):
            if file.is_file():
                lines = sum(1 for line in file.read_text(errors="replace").splitlines() if line.strip())
                if lines:
                    found.append(f"{lines} {what}{'s' * (lines != 1)} in {file.name}")
        checkpoints = len(self.checkpoint_files())
        if checkpoints:
            found.append(f"{checkpoints} checkpoint{'s' * (checkpoints != 1)} in checkpoints/")
        logs = len(self.log_numbers())
        if logs:
            found.append(f"{logs} piece log{'s' * (logs != 1)} in logs/")
        return found

    # ------------------------------------------------------------------ into a run directory
    def prepare_run(self, run: RunDir, iteration: int) -> None:
        """Copy the line into the new run directory ``run``: the carried state (at ``iteration``) as
        its training state, its metrics, ladder and checkpoints (the ladder's earlier players), none
        of them past ``iteration`` (``line_past``: a line written to ``--out`` may still hold such
        files). The run's config is the one the piece resolves (``piece.py``), written by the loop."""
        run.create()
        shutil.copyfile(self.carry_file, run.state_file)
        if self.metrics_file.is_file():
            rewrite_jsonl(run.metrics_file, [m for m in read_jsonl(self.metrics_file)
                                             if int(m.get("iteration", 0)) <= iteration])
        if self.ladder_file.is_file():
            rewrite_jsonl(run.path / "ladder.jsonl", [e for e in read_jsonl(self.ladder_file)
                                                      if not is_past_entry(e, iteration)])
        for checkpoint in self.checkpoint_files():
            if (checkpoint_iteration(checkpoint.stem) or 0) <= iteration:
                shutil.copyfile(checkpoint, run.checkpoints / checkpoint.name)

    # ------------------------------------------------------------------ out of a run directory
    def export(self, run: RunDir, record: dict[str, Any], earlier: list[dict[str, Any]], log_text: str,
               identity: dict[str, Any], config_text: str, first_iteration: int = 1,
               drop_checkpoints: tuple[str, ...] = (), ladder: bool = True) -> dict:
        """Write the run's last saved state into this line directory as a carried state (with the
        line's ``identity``), with the run's metrics up to that iteration, its ladder (unless
        ``ladder`` is False: the piece added nothing to it, and a line copied back from ``--out``
        keeps its own, rated since), its newest evaluated checkpoint when the piece made it (at
        ``first_iteration`` or later; ``drop_checkpoints``: names this piece wrote before, now
        removed), ``config_text`` as line.yaml, the piece records (``earlier`` and ``record``) and
        the piece's log. The metric lines of this piece's iterations name the line (``line_id``).
        Returns the carried state."""
        state = run.load_state()
        iteration = int(state["iteration"])
        metrics = [{**m, "line_id": identity["id"]} if m.get("iteration", 0) >= first_iteration else m
                   for m in run.read_metrics() if m.get("iteration", 0) <= iteration]
        positions = (int(state["replay"]["total_added"]) if isinstance(state.get("replay"), dict)
                     else int(state.get("positions", 0)))
        if metrics and "replay/total_added" in metrics[-1]:
            positions = max(positions, int(metrics[-1]["replay/total_added"]))
        ladder_path = run.path / "ladder.jsonl"
        entries = [e for e in read_jsonl(ladder_path) if int(e.get("iteration", 0)) <= iteration] \
            if ladder and ladder_path.is_file() else []
        evaluated = [p for p in run.iteration_checkpoints() if first_iteration <= int(p.stem.split("_")[1]) <= iteration]
        with writing(self.path):
            self.checkpoints.mkdir(parents=True, exist_ok=True)
            self.logs.mkdir(parents=True, exist_ok=True)
            rewrite_jsonl(self.metrics_file, metrics)
            if ladder:
                rewrite_jsonl(self.ladder_file, entries)
            if evaluated:
                self._keep_checkpoint(evaluated[-1], drop_checkpoints)
            write_text_atomic(self.logs / f"piece-{record['piece']:03d}.log", log_text)
            write_text_atomic(self.config_file, config_text)
            carry = carry_from_state(state, positions, identity)
            file_seal.save(carry, self.carry_file)  # the commit: the files above are trimmed to it
            rewrite_jsonl(self.pieces_file, [*earlier, record])
        return carry

    def _keep_checkpoint(self, newest: Path, drop: tuple[str, ...]) -> None:
        """Copy ``newest`` into the line's checkpoints: once (a later save of the same piece keeps
        the same file), and never over another model of the same name, which is moved into
        ``dropped/`` first (``line_past`` has moved aside what a rolled-back line held, so this is
        for a file put there by hand)."""
        target = self.checkpoints / newest.name
        if target.is_file() and checkpoint_digest(target) != checkpoint_digest(newest):
            aside = self.path / DROPPED / f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-replaced"
            aside.mkdir(parents=True, exist_ok=True)
            target.replace(aside / target.name)
        if not target.is_file():
            tmp = target.with_name(target.name + ".tmp")
            shutil.copyfile(newest, tmp)
            tmp.replace(target)
        for name in drop:
            if name != newest.name:
                (self.checkpoints / name).unlink(missing_ok=True)


def refuse_line_without_carry(line: "Line") -> None:
    """``LineError`` when ``line`` holds earlier pieces' work but no ``carry.pt``: a new line there
    would rewrite its records and metrics in place (issue 58)."""
    found = line.work_without_carry()
    if found:
        raise LineError(f"{line.path} has no carry.pt but holds an earlier line's work ({', '.join(found)}): restore "
                        f"its carry.pt (e.g. git checkout -- {line.carry_file}) to continue it, or start a new line "
                        f"in another folder; nothing was changed")


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

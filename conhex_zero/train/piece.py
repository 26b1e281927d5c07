"""One piece of a training line (``line.py``): minutes of training that continue where the last
piece stopped, on whatever machine runs it, and leave the line ready for the next.

A piece copies the line into a scratch run directory, trains it with the ordinary loop until its
time is nearly up, and ends with a checkpoint: evaluated through the line's ladder
(``eval.mode: full``), or only checked in seconds (``eval.mode: check``, the GPU line: ``conhex-zero
rate`` rates it later on any machine, ``rating.py``). Its clock (``piece_clock.Deadline``) counts
from the command's start and ends the piece after the iteration whose successor, plus the last
evaluation and a margin, would no longer fit in ``minutes``. After every saved state the line is
written again (``Line.export``), with the piece's record:

    piece, line_id, started (UTC), device, device_type, torch, commit, minutes (wall time of the
    command), minutes_allowed, train_minutes (the loop's own), first_iteration, last_iteration,
    games, positions (recorded), steps (optimiser steps), lr (at the end), selfplay_positions_per_s
    (median over the piece's iterations), selfplay_recorded_per_s, eval_seconds, seconds (where the
    minutes went: startup, compile, selfplay, learning, evaluation, writing, other, total),
    training_share (self-play and learning over the time after start-up), check ({wins, games,
    passed} in check mode), elo and elo_stderr (the line's ladder, random = 0), scores ({reference:
    [score, low, high]}), checkpoint, checkpoint_digest (``checkpoint_files.checkpoint_digest`` of its
    bytes), compile_cache ("loaded", "saved", "loaded, saved" or null), stopped (null
    while it runs; "deadline", "complete" (the line's iterations), "stop-after", "interrupted")

What a piece loses against an uninterrupted run: the replay (a piece refills it from its own first
self-play, with the current network: ``replay.min_size`` positions before training resumes, and
until the ring fills again the network trains on newer, fewer positions than it would have), the
games in progress (restarted), and bit-for-bit exactness (fresh random streams). The weights, the
optimiser's moments and step (so the learning-rate schedule), the iteration count, the model the
next evaluation plays, the metrics and the ladder all carry over.
"""

from __future__ import annotations

import os
import platform
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from conhex_zero.files.disk import write_text_atomic
from conhex_zero.files.jsonl import rewrite_jsonl
from conhex_zero.train import compile_cache
from conhex_zero.train.line import Line, LineError, reconcile_pieces, refuse_line_without_carry
from conhex_zero.train.line_identity import check_checkpoints, check_out_folder, identity_of, log_header
from conhex_zero.train.line_past import find_past, set_aside
from conhex_zero.train.piece_clock import Deadline, startup_seconds, time_split, training_share
from conhex_zero.train.piece_config import resolve_config
from conhex_zero.train.piece_record import piece_record, summary
from conhex_zero.train.run_dir import RunDir

EVAL_SECONDS = 120.0
"""The time kept for the final evaluation when none has been measured yet (a full evaluation)."""
CHECK_SECONDS = 15.0
"""The same for the check of ``eval.mode: check`` (seconds on any device; measured, then replaced)."""
MARGIN_SECONDS = 20.0
"""Kept besides the next iteration and the final evaluation (writing the line, the process's exit)."""


def describe_device(device: str) -> tuple[str, str]:
    """A device in words (``NVIDIA H200``, ``cpu: AMD EPYC 9B14 (2 cores)``) and its type."""
    import torch

    dev = torch.device(device)
    if dev.type == "cuda":
        return torch.cuda.get_device_name(dev), "cuda"
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"cpu: {model} ({os.cpu_count()} cores)", "cpu"


def current_commit(given: str | None = None) -> str:
    """The commit the code runs from: ``given`` (a machine without git), else git's HEAD, with
    ``-dirty`` when the working tree differs from it, else ``unknown``."""
    if given:
        return given
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("-dirty" if dirty else "") if head else "unknown"


@dataclass
class PieceLog:
    """The piece's lines: printed, and kept for ``LINE/logs/piece-NNN.log`` (with the time)."""
    print_line: Callable[[str], None] = print
    lines: list[str] = field(default_factory=list)

    def __call__(self, text: str) -> None:
        self.print_line(text)
        stamp = datetime.now(timezone.utc).strftime("%H:%M:%S")
        self.lines.extend(f"{stamp} {line}" for line in str(text).splitlines() or [""])

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


class _DeferredSignals:
    """SIGINT and SIGTERM wait while the line is written (``held``), then stop the piece."""

    def __init__(self) -> None:
        self.holding = False
        self.pending: int | None = None

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._handle)

    def _handle(self, signum: int, _frame: Any) -> None:
        if self.holding:
            self.pending = signum
            return
        raise KeyboardInterrupt

    def held(self) -> "_Held":
        return _Held(self)


class _Held:
    def __init__(self, owner: _DeferredSignals):
        self.owner = owner

    def __enter__(self) -> None:
        self.owner.holding = True

    def __exit__(self, *exc: Any) -> None:
        self.owner.holding = False
        if self.owner.pending is not None and exc[0] is None:
            self.owner.pending = None
            raise KeyboardInterrupt


@dataclass
class PieceResult:
    record: dict[str, Any] | None
    """The piece's record (None when it saved nothing: the line is unchanged)."""
    out: Path
    run_dir: Path
    interrupted: bool = False


@dataclass
class PieceOptions:
    """How ``run_piece`` runs (see its docstring)."""
    config_file: str | None = None
    overrides: list[str] | None = None
    minutes: float = 9.0
    out: str | Path | None = None
    run_dir: str | Path | None = None
    commit: str | None = None
    progress: bool = True
    log: Callable[[str], None] = print
    clock: Callable[[], float] = time.monotonic
    install_signals: bool = True
    stop_after: int | None = None
    command_start: float | None = None
    compile_cache: bool = True


def run_piece(line_path: str | Path, **options: Any) -> PieceResult:
    """Train one piece of the line at ``line_path`` and write the line (to ``out``, default the line
    itself). Options (``PieceOptions``): ``config_file`` starts a new line; ``overrides``
    (key=value); at most ``minutes`` of wall time counted from ``command_start`` (a UNIX time; default
    now: the command line passes its process's start) and at most ``stop_after`` iterations; ``run_dir`` (the scratch run);
    ``commit`` (recorded when there is no git); ``compile_cache`` (load and save
    ``LINE/compile-cache.bin``)."""
    from conhex_zero.train.run_lock import RunLock

    opts = PieceOptions(**options)
    line = Line(line_path)
    line.check()
    target = Line(opts.out) if opts.out is not None else line
    target.check()
    line.path.mkdir(parents=True, exist_ok=True)
    lock = RunLock(line.path)  # one piece of a line at a time (RunInUseError names the other)
    lock.acquire(note=lambda text: print(text, file=sys.stderr))
    try:
        return _Piece(line, target, opts).run()
    finally:
        lock.release()


class _Piece:
    """One piece's work, step by step: set up, train (writing the line after each save), finish."""

    def __init__(self, line: Line, target: Line, opts: PieceOptions):
        self.line, self.target, self.opts = line, target, opts
        self.startup = startup_seconds(opts.command_start)
        self.log = PieceLog(opts.log)
        self.signals = _DeferredSignals()
        self.phases: dict[str, float] = {}
        self.written: list[str] = []  # checkpoint names this piece wrote into an --out folder
        self.record: dict[str, Any] | None = None
        self.cache_state: str | None = None
        self.digests: dict[str, str] = {}  # the run's checkpoints' digests, by relative path

    # ------------------------------------------------------------------ set up
    def _set_up(self) -> None:
        line, opts = self.line, self.opts
        if line.started and opts.config_file:
            raise LineError(f"{line.path} has begun (carry.pt): it continues with its own config; change settings "
                            f"with key=value overrides (or by editing {line.config_file}) instead of --config")
        if not line.started and not opts.config_file and not line.config_file.is_file():
            raise LineError(f"{line.path} holds no line (no carry.pt, no line.yaml): start one with --config FILE")
        refuse_line_without_carry(line)
        self.carry = line.read_carry() if line.started else None
        self.identity = identity_of(line, self.carry, line.pieces(), self.log)
        check_out_folder(self.target, line, self.identity)
        self.number = self.identity["piece"]
        iteration = int(self.carry["iteration"]) if self.carry is not None else 0
        check_checkpoints(line, [r for r in line.pieces() if int(r.get("last_iteration", 0)) <= iteration])
        self.config, self.config_text = resolve_config(line, self.carry, opts.config_file, opts.overrides,
                                                       self.number, self.log)
        if self.carry is not None and iteration >= self.config.iterations:
            raise LineError(f"{line.path} has run all its {self.config.iterations} iterations; continue it with a "
                            f"longer schedule, e.g. the override iterations={2 * self.config.iterations}")
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.run = RunDir(opts.run_dir or Path("runs") / "pieces" / f"{line.name}-piece-{self.number:03d}-{stamp}")
        if self.run.path.exists() and any(self.run.path.iterdir()):
            raise LineError(f"--run-dir {self.run.path} is not empty: a piece trains in a new directory")
        self.records = []
        if self.carry is not None:  # what the line holds past its state goes first (line_past.py)
            set_aside(self.target, find_past(self.target, iteration, self.number - 1), self.log,
                      by=f"piece {self.number}")
            self.records = reconcile_pieces(line.pieces(), iteration, self.log)
        self._keep_earlier_log()
        if self.carry is not None:
            line.prepare_run(self.run, iteration)

    def _keep_earlier_log(self) -> None:
        """A log of this piece's number left by an attempt that saved nothing is kept under another name."""
        old = self.target.logs / f"piece-{self.number:03d}.log"
        if old.is_file():
            attempt = 1
            while (kept := old.with_name(f"piece-{self.number:03d}-unsaved-{attempt}.log")).exists():
                attempt += 1
            old.rename(kept)
            self.log(f"note: {old} was left by an earlier attempt at piece {self.number} that saved nothing: kept "
                     f"as {kept.name}")

    def _base_record(self) -> dict[str, Any]:
        import torch

        self.device, device_type = describe_device(self.config.device)
        return {"piece": self.number, "line_id": self.identity["id"],
                "started": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "device": self.device,
                "device_type": device_type, "torch": torch.__version__, "commit": current_commit(self.opts.commit),
                "minutes_allowed": self.opts.minutes,
                "overrides": list(self.opts.overrides or [])}  # key=value settings of this piece alone

    def _deadline(self) -> Deadline:
        check = self.config.eval.mode == "check"
        measured = [float(r["eval_seconds"]) for r in self.records if r.get("eval_seconds")
                    and (r.get("check") is not None) == check]
        eval_seconds = measured[-1] if measured else (CHECK_SECONDS if check else EVAL_SECONDS)
        clock = self.opts.clock
        return Deadline(self.opts.minutes * 60, eval_seconds, clock, MARGIN_SECONDS, elapsed_before=self.startup,
                        eval_every=self.config.eval.every)

    # ------------------------------------------------------------------ train
    def run(self) -> PieceResult:
        if self.opts.install_signals:
            self.signals.install()
        self._set_up()
        self.base = self._base_record()
        self.deadline = self._deadline()
        carry = self.carry
        self.carried = {"games": int(carry.get("games", 0)) if carry else 0,
                        "positions": int(carry.get("positions", 0)) if carry else 0,
                        "steps": int(carry["learner"]["step"]) if carry else 0,
                        "minutes": float(carry.get("elapsed", 0.0)) / 60 if carry else 0.0}
        self.first_iteration = (int(carry["iteration"]) if carry else 0) + 1
        self._load_compile_cache()
        origin = f"continued from iteration {self.first_iteration - 1}" if carry else "a new line"
        self.log(log_header(self.number, self.line.path, self.identity["id"], origin) + f": {self.opts.minutes:g} "
                 f"minutes on {self.device}, {self.startup:.0f} s of them gone at its start; scratch run {self.run.path}; "
                 f"the line is written to {self.target.path}")
        interrupted, result = self._train()
        stopped = ("interrupted" if interrupted else "deadline" if self.deadline.hit
                   else "complete" if result.iterations >= self.config.iterations else "stop-after")
        return self._finish(stopped, interrupted)

    def _train(self):
        from conhex_zero.train.loop import train
        from conhex_zero.train.trainer import Hooks

        hooks = Hooks(stop_now=self.deadline.stop_now, after_save=self._after_save, phases=self.phases,
                      resume_hint=f"conhex-zero piece {self.target.path}")
        try:
            return False, train(self.config, self.run.path, resume=self.carry is not None, progress=self.opts.progress,
                                log=self.log, stop_after=self.opts.stop_after, hooks=hooks)
        except KeyboardInterrupt:
            return True, None

    def _record_now(self, stopped: str | None) -> dict:
        rec = piece_record({**self.base, "_minutes_before": self.carried["minutes"]}, self.run.read_metrics(),
                           self.first_iteration, self.carried)
        split = time_split(self.phases, self.startup, self.deadline.elapsed())
        rec.update({"minutes": round(self.deadline.elapsed() / 60, 2), "eval_seconds": round(self.deadline.eval_seconds, 1),
                    "seconds": split, "training_share": training_share(split), "compile_cache": self.cache_state,
                    "stopped": stopped})
        if rec.get("checkpoint"):
            rec["checkpoint_digest"] = self._digest(rec["checkpoint"])
        return rec

    def _digest(self, checkpoint: str) -> str:
        """The digest of the run's checkpoint (``LINE/checkpoints/...`` gets the same bytes), once."""
        from conhex_zero.nn.checkpoint_files import checkpoint_digest

        if checkpoint not in self.digests:
            self.digests[checkpoint] = checkpoint_digest(self.run.path / checkpoint)
        return self.digests[checkpoint]

    def _after_save(self, iteration: int, evaluated: bool) -> None:
        if evaluated:  # the record below keeps what the evaluation took, not the estimate made before it
            self.deadline.evaluation_ended()
        with self.signals.held():
            self._save_compile_cache()
            rec = self._record_now(None)
            rec["last_iteration"] = iteration
            ladder = self.target is self.line or self.config.eval.mode == "full" or not self.line.ladder_file.is_file()
            carried = self.target.export(self.run, rec, self.records, self.log.text(), self.identity,
                                         self.config_text, self.first_iteration, tuple(self.written), ladder=ladder)
            if evaluated and self.target is not self.line:
                self.written[:] = [f"iter_{int(carried['iteration']):04d}.pt"]
            self.record = rec
            self.deadline.saved(evaluated)

    def _finish(self, stopped: str, interrupted: bool) -> PieceResult:
        if self.record is None:
            self.log(f"piece {self.number} saved nothing: the line {self.target.path} is unchanged")
            return PieceResult(None, self.target.path, self.run.path, interrupted)
        with self.signals.held():
            split = time_split(self.phases, self.startup, self.deadline.elapsed())
            final = {**self.record, "minutes": round(self.deadline.elapsed() / 60, 2), "seconds": split,
                     "eval_seconds": round(self.deadline.eval_seconds, 1),
                     "training_share": training_share(split), "stopped": stopped}
            self.log(summary(final, self.target.path))
            write_text_atomic(self.target.logs / f"piece-{self.number:03d}.log", self.log.text())
            rewrite_jsonl(self.target.pieces_file, [*self.records, final])
        return PieceResult(final, self.target.path, self.run.path, interrupted)

    # ------------------------------------------------------------------ compiled kernels
    def _load_compile_cache(self) -> None:
        if self.opts.compile_cache and self.config.selfplay.compile:
            if compile_cache.load(self.line.path / compile_cache.FILENAME, self.device, self.log):
                self.cache_state = "loaded"
                self.log(f"loaded the compiled kernels of {self.line.path / compile_cache.FILENAME}")

    def _save_compile_cache(self) -> None:
        """Once, after the first save that follows the compilation (the kernels are all built)."""
        if (not self.opts.compile_cache or not self.config.selfplay.compile or "saved" in (self.cache_state or "")
                or not self.phases.get("compile")):
            return
        size = compile_cache.save(self.target.path / compile_cache.FILENAME, self.device)
        if size:
            self.cache_state = "loaded, saved" if self.cache_state == "loaded" else "saved"
            self.log(f"saved the compiled kernels ({size / 2**20:.1f} MiB) to {self.target.path / compile_cache.FILENAME}")

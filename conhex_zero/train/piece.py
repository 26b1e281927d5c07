"""One piece of a training line (``line.py``): minutes of training that continue where the last
piece stopped, on whatever machine runs it, and leave the line ready for the next.

A piece copies the line into a scratch run directory, trains it with the ordinary loop until its
time is nearly up, and ends with an evaluated checkpoint. Its clock (``Deadline``) ends the piece
after the iteration whose successor, plus the final evaluation and a margin, would no longer fit in
``minutes``: the iteration's time is the last one measured, the evaluation's the last measured (in
this piece, else the line's previous piece, else ``EVAL_SECONDS``). After every saved state the line
is written again (``Line.export``), with the piece's record:

    piece, started (UTC), device, device_type, torch, commit, minutes (wall time of the piece),
    train_minutes (the loop's own), first_iteration, last_iteration, games, positions (recorded),
    steps (optimiser steps), lr (at the end), selfplay_positions_per_s (median over the piece's
    iterations), selfplay_recorded_per_s, eval_seconds, elo and elo_stderr (the line's ladder,
    random = 0), scores ({reference: [score, low, high]} at the last evaluation), checkpoint,
    stopped (null while it runs; "deadline", "complete" (the line's iterations), "stop-after",
    "interrupted")

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
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from conhex_zero.disk import write_text_atomic
from conhex_zero.jsonl import rewrite_jsonl
from conhex_zero.train.line import Line, LineError, reconcile_pieces
from conhex_zero.train.run_dir import RunDir

EVAL_SECONDS = 120.0
"""The time kept for the final evaluation when none has been measured yet (the line's first piece)."""
MARGIN_SECONDS = 20.0
"""Kept besides the next iteration and the final evaluation (writing the line, the process's exit)."""


class Deadline:
    """The piece's clock: asked after each iteration's training whether it must be the last."""

    def __init__(self, seconds: float, eval_seconds: float, clock: Callable[[], float] = time.monotonic,
                 margin: float = MARGIN_SECONDS):
        self.clock = clock
        self.start = clock()
        self.end = self.start + seconds if seconds > 0 else float("inf")
        self.eval_seconds = eval_seconds
        self.iteration_seconds: float | None = None
        self.margin = margin
        self._mark = self.start  # the end of the last iteration, or of the save after it
        self.hit = False

    def stop_now(self, iteration: int) -> bool:
        now = self.clock()
        self.iteration_seconds = now - self._mark
        self._mark = now
        self.hit = self.end - now < self.iteration_seconds + self.eval_seconds + self.margin
        return self.hit

    def saved(self, evaluated: bool) -> None:
        """After a save (and the line's export): an evaluated one measures the evaluation."""
        now = self.clock()
        if evaluated:
            self.eval_seconds = now - self._mark
        self._mark = now

    def elapsed(self) -> float:
        return self.clock() - self.start


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


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def piece_record(base: dict[str, Any], metrics: list[dict], first_iteration: int, carried_positions: int,
                 carried_games: int, carried_steps: int) -> dict[str, Any]:
    """The record of a piece from the metric lines of its iterations (``first_iteration`` on)."""
    own = [m for m in metrics if m.get("iteration", 0) >= first_iteration]
    record = dict(base)
    if not own:
        return record
    last = own[-1]
    record.update({
        "first_iteration": first_iteration,
        "last_iteration": int(last["iteration"]),
        "train_minutes": round(float(last.get("time/minutes", 0.0)) - float(base.get("_minutes_before", 0.0)), 2),
        "games": int(last.get("selfplay/total_games", carried_games)) - carried_games,
        "positions": int(last.get("replay/total_added", carried_positions)) - carried_positions,
        "selfplay_positions_per_s": _median([m["selfplay/positions_per_s"] for m in own if "selfplay/positions_per_s" in m]),
        "selfplay_recorded_per_s": _median([m["selfplay/recorded_per_s"] for m in own if "selfplay/recorded_per_s" in m]),
    })
    steps = [m["train/steps"] for m in own if "train/steps" in m]
    record["steps"] = int(steps[-1]) - carried_steps if steps else 0
    rates = [m["train/lr"] for m in own if "train/lr" in m]
    record["lr"] = rates[-1] if rates else None
    evaluated = [m for m in own if "eval/elo" in m]
    if evaluated:
        e = evaluated[-1]
        record["elo"], record["elo_stderr"] = round(e["eval/elo"], 1), round(e["eval/elo_stderr"], 1)
        record["scores"] = {k[len("eval/vs_"):-len("/win_rate")]: [round(e[k], 3), round(e[k + "_low"], 3),
                                                                    round(e[k + "_high"], 3)]
                            for k in e if k.startswith("eval/vs_") and k.endswith("/win_rate")}
        record["checkpoint"] = f"checkpoints/iter_{int(e['iteration']):04d}.pt"
    record.pop("_minutes_before", None)
    return record


def run_piece(line_path: str | Path, *, config_file: str | None = None, overrides: list[str] | None = None,
              minutes: float = 9.0, out: str | Path | None = None, run_dir: str | Path | None = None,
              commit: str | None = None, progress: bool = True, log: Callable[[str], None] = print,
              clock: Callable[[], float] = time.monotonic, install_signals: bool = True,
              stop_after: int | None = None) -> PieceResult:
    """Train one piece of the line at ``line_path`` for at most ``minutes`` of wall time (and at
    most ``stop_after`` iterations) and write the line (to ``out``, default the line itself).
    ``config_file`` starts a new line."""
    from conhex_zero.train.run_lock import RunLock

    line = Line(line_path)
    line.check()
    target = Line(out) if out is not None else line
    target.check()
    line.path.mkdir(parents=True, exist_ok=True)
    lock = RunLock(line.path)  # one piece of a line at a time (RunInUseError names the other)
    lock.acquire(note=lambda text: print(text, file=sys.stderr))
    try:
        return _run_piece(line, target, config_file, overrides, minutes, run_dir, commit, progress, log, clock,
                          install_signals, stop_after)
    finally:
        lock.release()


def _run_piece(line: Line, target: Line, config_file: str | None, overrides: list[str] | None, minutes: float,
               run_dir: str | Path | None, commit: str | None, progress: bool, log: Callable[[str], None],
               clock: Callable[[], float], install_signals: bool, stop_after: int | None) -> PieceResult:
    from conhex_zero.train.config import load_config
    from conhex_zero.train.loop import Hooks, train
    from conhex_zero.train.resume_config import resume_base

    signals = _DeferredSignals()
    if install_signals:
        signals.install()
    piece_log = PieceLog(log)
    started = line.started
    if started and config_file:
        raise LineError(f"{line.path} has begun (carry.pt): it continues with its own config; change settings "
                        f"with key=value overrides instead of --config")
    if not started and not config_file and not line.config_file.is_file():
        raise LineError(f"{line.path} holds no line (no carry.pt, no line.yaml): start one with --config FILE")
    records: list[dict] = []
    carry: dict | None = None
    if started:
        carry = line.read_carry()
        records = reconcile_pieces(line.pieces(), int(carry["iteration"]), piece_log)
    number = len(records) + 1
    run = RunDir(run_dir or Path("runs") / "pieces" / f"{line.name}-piece-{number:03d}-{time.strftime('%Y%m%d-%H%M%S')}")
    if run.path.exists() and any(run.path.iterdir()):
        raise LineError(f"--run-dir {run.path} is not empty: a piece trains in a new directory")
    if started:
        line.prepare_run(run)
        config = load_config(None, overrides, base=resume_base(run, note=piece_log))
        if int(carry["iteration"]) >= config.iterations:
            raise LineError(f"{line.path} has run all its {config.iterations} iterations; continue it with a "
                            f"longer schedule, e.g. the override iterations={2 * config.iterations}")
    else:
        config = load_config(config_file or line.config_file, overrides)
    device, device_type = describe_device(config.device)
    base = {"piece": number, "started": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "device": device, "device_type": device_type, "torch": _torch_version(), "commit": current_commit(commit),
            "minutes_allowed": minutes}
    carried_games = int(carry.get("games", 0)) if carry else 0
    carried_positions = int(carry.get("positions", 0)) if carry else 0
    carried_steps = int(carry["learner"]["step"]) if carry else 0
    carried_minutes = float(carry.get("elapsed", 0.0)) / 60 if carry else 0.0
    first_iteration = (int(carry["iteration"]) if carry else 0) + 1
    eval_seconds = next((float(r["eval_seconds"]) for r in reversed(records) if r.get("eval_seconds")), EVAL_SECONDS)
    deadline = Deadline(minutes * 60, eval_seconds, clock)
    # The line keeps every evaluated checkpoint (its history: candidates, the ladder's players); an
    # --out directory only the piece's newest, so that a lent machine sends back few files.
    written: list[str] = []
    drop_older = target.path.resolve() != line.path.resolve()
    state: dict[str, Any] = {"record": None}

    def record_now(stopped: str | None) -> dict:
        rec = piece_record({**base, "_minutes_before": carried_minutes}, run.read_metrics(), first_iteration,
                           carried_positions, carried_games, carried_steps)
        rec.update({"minutes": round(deadline.elapsed() / 60, 2), "eval_seconds": round(deadline.eval_seconds, 1),
                    "stopped": stopped})
        return rec

    def after_save(iteration: int, evaluated: bool) -> None:
        with signals.held():
            rec = record_now(None)
            rec["last_iteration"] = iteration
            carried = target.export(run, rec, records, piece_log.text(), first_iteration, tuple(written))
            if evaluated and drop_older:
                written[:] = [f"iter_{int(carried['iteration']):04d}.pt"]
            state["record"] = rec
            deadline.saved(evaluated)

    origin = f"continued from iteration {first_iteration - 1}" if started else "a new line"
    piece_log(f"piece {number} of line {line.path} ({origin}): {minutes:g} minutes on {device}; scratch run "
              f"{run.path}; the line is written to {target.path}")
    interrupted = False
    try:
        result = train(config, run.path, resume=started, progress=progress, log=piece_log, stop_after=stop_after,
                       hooks=Hooks(stop_now=deadline.stop_now, after_save=after_save,
                                   resume_hint=f"conhex-zero piece {target.path}"))
    except KeyboardInterrupt:
        interrupted = True
    if interrupted:
        stopped = "interrupted"
    elif deadline.hit:
        stopped = "deadline"
    else:
        stopped = "complete" if result.iterations >= config.iterations else "stop-after"
    if state["record"] is None:
        piece_log(f"piece {number} saved nothing: the line {target.path} is unchanged")
        return PieceResult(None, target.path, run.path, interrupted)
    with signals.held():
        final = {**state["record"], "minutes": round(deadline.elapsed() / 60, 2), "stopped": stopped}
        piece_log(_summary(final, target.path))
        write_text_atomic(target.logs / f"piece-{number:03d}.log", piece_log.text())
        rewrite_jsonl(target.pieces_file, [*records, final])
    return PieceResult(final, target.path, run.path, interrupted)


def _torch_version() -> str:
    import torch

    return torch.__version__


def _summary(rec: dict, where: Path) -> str:
    scores = ", ".join(f"{k} {v[0]:.2f} ({v[1]:.2f}-{v[2]:.2f})" for k, v in (rec.get("scores") or {}).items())
    elo = f"Elo {rec['elo']:.0f} ± {rec['elo_stderr']:.0f}" if rec.get("elo") is not None else "not evaluated"
    speed = rec.get("selfplay_positions_per_s")
    return (f"piece {rec['piece']} {rec['stopped']}: iterations {rec.get('first_iteration')}-{rec.get('last_iteration')}, "
            f"{rec.get('games', 0):,} games, {rec.get('positions', 0):,} recorded positions, "
            f"{speed if speed is not None else '-'} self-play positions/s, {rec['minutes']:.1f} min; {elo}"
            f"{'; ' + scores if scores else ''}; line written to {where}")


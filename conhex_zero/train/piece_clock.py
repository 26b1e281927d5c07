"""The clock of a training piece: when the command began, when the piece must stop, where its
minutes went.

A lent machine runs one command of at most ten minutes; a piece should fill it. The command's
minutes start before the piece does (installing the project, starting Python, importing torch),
so the piece's ``Deadline`` counts from the command's start: the ``--command-start`` time the
command line passes (``date +%s.%N`` before ``pip install``), else this process's own start
(``process_start_time``). After each iteration's training it asks whether the next iteration, the
last check or evaluation and a margin still fit.

``time_split`` turns the training loop's phase seconds (``Hooks.phases``) into the piece record's
account of its minutes: start-up, compile, self-play, learning, evaluation, writing and the rest,
and the share of the time after start-up spent on self-play and learning (``training_share``).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable

PHASES = ("compile", "selfplay", "learning", "evaluation", "writing")
"""The training loop's phases, in the order the record lists them (``trainer.Hooks.phases``)."""


def process_start_time() -> float | None:
    """This process's start as a UNIX time (Linux: ``/proc``), or None where it cannot be read."""
    try:
        stat = Path("/proc/self/stat").read_text()
        ticks = int(stat[stat.rindex(")") + 2:].split()[19])  # field 22: start time, clock ticks after boot
        boot = next(int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def startup_seconds(command_start: float | None, now: float | None = None) -> float:
    """Seconds between the command's start (a UNIX time; None: now) and ``now``. The command line
    passes ``--command-start``, else this process's start (``process_start_time``); a caller inside
    a longer-lived process (a test, a notebook) passes nothing: its piece starts its clock now."""
    now = time.time() if now is None else now
    return max(0.0, now - command_start) if command_start is not None else 0.0


class Deadline:
    """The piece's clock: asked after each iteration's training whether it must be the last.

    ``seconds`` is the whole command's allowance, of which ``elapsed_before`` had gone before the
    clock was made (start-up); ``eval_seconds`` is the time kept for the last evaluation (or check),
    replaced by each one measured. ``eval_every`` (0: none) names the iterations the loop evaluates
    anyway: such an iteration is the last unless another iteration and its evaluation still fit after
    its own evaluation (else a piece whose evaluations take minutes would evaluate at iteration 25,
    find too little left and evaluate again at 26, past its minutes)."""

    def __init__(self, seconds: float, eval_seconds: float, clock: Callable[[], float] = time.monotonic,
                 margin: float = 20.0, elapsed_before: float = 0.0, eval_every: int = 0):
        self.clock = clock
        self.start = clock() - elapsed_before
        self.end = self.start + seconds if seconds > 0 else float("inf")
        self.eval_seconds = eval_seconds
        self.iteration_seconds: float | None = None
        self.margin = margin
        self.eval_every = eval_every
        self._mark = clock()  # the end of the last iteration, or of the save after it
        self.hit = False

    def stop_now(self, iteration: int) -> bool:
        now = self.clock()
        self.iteration_seconds = now - self._mark
        self._mark = now
        needed = self.iteration_seconds + self.eval_seconds + self.margin  # the next iteration and the last evaluation
        if self.eval_every > 0 and iteration % self.eval_every == 0:
            needed += self.eval_seconds  # this iteration's own evaluation comes first
        self.hit = self.end - now < needed
        return self.hit

    def evaluation_ended(self) -> None:
        """An evaluation (and the save before it) just ended: its time is the estimate from now on, in
        the record written next (``saved`` measures it again with the line's writing)."""
        self.eval_seconds = self.clock() - self._mark

    def saved(self, evaluated: bool) -> None:
        """After a save (and the line's export): an evaluated one measures the evaluation."""
        now = self.clock()
        if evaluated:
            self.eval_seconds = now - self._mark
        self._mark = now

    def elapsed(self) -> float:
        """Seconds since the command began."""
        return self.clock() - self.start


def time_split(phases: dict[str, float], startup: float, total: float) -> dict[str, float]:
    """The piece record's ``seconds``: ``startup``, each phase of ``PHASES``, ``other`` (what the
    rest of the ``total`` went to: reading and copying the line, building the network, the final
    record) and ``total``, rounded to 0.01 s."""
    split = {"startup": startup, **{p: phases.get(p, 0.0) for p in PHASES}}
    split["other"] = max(0.0, total - sum(split.values()))
    split["total"] = total
    return {k: round(v, 2) for k, v in split.items()}


def training_share(split: dict[str, float]) -> float | None:
    """The share of the time after start-up that went to self-play and learning (None: no time)."""
    after_startup = split["total"] - split["startup"]
    if after_startup <= 0:
        return None
    return round((split["selfplay"] + split["learning"]) / after_startup, 3)

"""Stopping training with Ctrl-C or ``kill -INT``: the signal is always heard, and the message says
from which iteration ``--resume`` continues.

A shell that starts a command in the background (``train ... &`` in a script) sets SIGINT to
"ignore" for it, and Python keeps that, so such a run would ignore ``kill -INT`` silently.
``handle_sigint`` puts Python's handler back (it raises ``KeyboardInterrupt``), as ``serve`` does.

The loop turns a ``KeyboardInterrupt`` into ``TrainingInterrupted``, which knows the iteration that
was running and the last one whose training state is on disk: a resume continues after that one.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path


def handle_sigint() -> None:
    """SIGINT raises ``KeyboardInterrupt`` again, even where the process was started ignoring it
    (only the main thread may set handlers: elsewhere nothing changes)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)


class TrainingInterrupted(KeyboardInterrupt):
    """Training stopped by SIGINT. ``iteration``: the last iteration begun (None: none yet);
    ``completed``: the last one finished (None: none yet); ``saved``: the last one whose training
    state is saved (None: none yet); ``save_every``: a state is saved every this many iterations
    (``eval.every``) and at the end; ``iterations``: the run's length; ``resuming``: the session was a
    ``--resume`` (stopped before its state was read, the state is unchanged); ``state_minutes``: a
    state is also saved this many minutes after the last save (0: not)."""

    def __init__(self, run_dir: Path, iteration: int | None, completed: int | None, saved: int | None,
                 save_every: int, iterations: int, resuming: bool = False, state_minutes: float = 0.0):
        super().__init__(f"training in {run_dir} interrupted")
        self.run_dir = Path(run_dir)
        self.iteration = iteration
        self.completed = completed
        self.saved = saved
        self.save_every = save_every
        self.iterations = iterations
        self.resuming = resuming
        self.state_minutes = state_minutes

    @property
    def resume_from(self) -> int | None:
        """The iteration a resume plays first (None: not known here, or nothing to resume)."""
        return None if self.saved is None else self.saved + 1

    def message(self) -> str:
        """What was lost and how to go on, in a sentence or two."""
        if self.iteration is None:
            where = "interrupted before the first iteration began"
        elif self.iteration == self.completed:
            where = f"interrupted after iteration {self.iteration} of {self.iterations}"
            where += " was saved" if self.saved == self.iteration else ""
        else:
            where = f"interrupted during iteration {self.iteration} of {self.iterations}"
        if self.saved is None and self.resuming:
            return (f"{where}; the training state is unchanged: conhex-zero train --resume {self.run_dir} "
                    f"continues where it stood")
        if self.saved is None:
            first = min(self.save_every, self.iterations)
            sooner = f", or after {self.state_minutes:g} minutes" if self.state_minutes else ""
            return (f"{where}, before the first training state was saved (after iteration {first}{sooner}): "
                    f"there is nothing to resume; run the same command again to start over")
        if self.saved >= self.iterations:
            return f"{where}; the run is complete: its last iteration, {self.iterations}, is saved"
        text = (f"{where}; the training state of iteration {self.saved} is kept: conhex-zero train --resume "
                f"{self.run_dir} continues from iteration {self.resume_from}")
        completed = self.completed or 0
        if completed > self.saved:
            lost = (f"iteration {completed}" if completed == self.saved + 1
                    else f"iterations {self.saved + 1}-{completed}")
            every = "after every iteration" if self.save_every == 1 else f"every {self.save_every} iterations"
            timed = (f", and {self.state_minutes:g} minutes after the last save, state_minutes" if self.state_minutes
                     else "")
            text += (f" ({lost} finished but will be played again, exactly: a state is saved {every}, "
                     f"eval.every{timed})")
        return text

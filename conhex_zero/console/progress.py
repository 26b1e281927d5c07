"""Progress bars for every command: tqdm's bar on a terminal, whole lines now and then in a log.

tqdm redraws its bar with carriage returns, which a terminal turns into one changing line; written
to a file or a pipe (``train ... > log 2>&1``), the redraws pile up into one endless line. So
``progress_bar`` gives tqdm's bar when its stream is a terminal, and otherwise a ``LogLines`` bar:
no carriage returns and no bar graphics, the bar's text written as a whole line at most once every
``LINE_INTERVAL`` seconds, and once more when it ends (only if it wrote a line before and has moved
since: a bar that finishes within the interval writes nothing).
"""

from __future__ import annotations

import sys
import time
from typing import Any, Iterable, TextIO

from tqdm import tqdm

from conhex_zero.console.terminal import is_terminal

LINE_INTERVAL = 30.0
"""Seconds between two lines of a bar in a log."""


def progress_bar(iterable: Iterable | None = None, *, file: TextIO | None = None, disable: bool = False,
                 interval: float = LINE_INTERVAL, **kwargs: Any) -> tqdm:
    """A progress bar on ``file`` (default standard error): tqdm's own on a terminal, else
    ``LogLines`` (see the module docstring). Takes tqdm's arguments."""
    stream = sys.stderr if file is None else file
    if disable or is_terminal(stream):
        return tqdm(iterable, file=stream, disable=disable, **kwargs)
    return LogLines(iterable, file=stream, interval=interval, **kwargs)


class LogLines(tqdm):
    """A tqdm bar for a stream that is not a terminal: whole lines, at most one per ``interval``
    seconds, and a last one at the end when any was written."""

    def __init__(self, *args: Any, interval: float = LINE_INTERVAL, **kwargs: Any):
        self._interval = interval
        self._lines = 0
        self._last_n: float | None = None
        self._last_line = time.monotonic()
        kwargs.setdefault("mininterval", min(interval, 10.0))  # tqdm's own gate: fewer calls
        super().__init__(*args, **kwargs)
        self._last_line = time.monotonic()

    def line(self) -> str:
        """The bar as one line of text, without bar graphics."""
        known = self.total is not None and self.total > 0
        form = (f"{{desc}}{': ' if self.desc else ''}" +
                ("{percentage:3.0f}% {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}{postfix}]" if known
                 else "{n_fmt} [{elapsed}, {rate_fmt}{postfix}]"))
        return self.format_meter(**{**self.format_dict, "bar_format": form}).strip()

    def _write_line(self) -> None:
        self.fp.write(self.line() + "\n")
        self.fp.flush()
        self._lines += 1
        self._last_n = self.n
        self._last_line = time.monotonic()

    def display(self, msg: str | None = None, pos: int | None = None) -> bool:
        """Write the bar's line when ``interval`` seconds have passed since the last one; nothing
        for tqdm's clearing (``msg=''``) and no cursor movement."""
        if msg is None and time.monotonic() - self._last_line >= self._interval:
            self._write_line()
        return False

    def clear(self, nolock: bool = False) -> None:
        """Nothing to clear: a written line stays."""

    def close(self) -> None:
        if getattr(self, "disable", True):
            return
        if self._lines and self.n != self._last_n:
            self._ema_dt = lambda: None  # the overall rate in the last line, as tqdm does
            self._write_line()
        self.disable = True
        self._decr_instances(self)

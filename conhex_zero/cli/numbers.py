"""Numeric command-line options with their bounds: argparse types that parse a number and check it
at once, so that every count, size, rate and time a command takes is refused in one line before any
work starts (and before torch is imported): huge values (``99999999999999999999``, ``1e20``),
negatives where a count is meant, ``nan`` and ``inf``, and empty items of lists (``8,,16``).

Every ``type=`` of a numeric option is one of these (``tests/test_cli_numbers.py`` walks every
command's parser and fails on a bare ``int`` or ``float``). The bounds are generous but safe:
large enough for any real use, small enough that no allocation sized by them can take the machine
down; where the memory a value needs depends on the game, the command checks it again once the
game is known (``search_memory``). The messages read ``--sims must be ...`` (``main`` drops
argparse's ``argument`` prefix for them).
"""

from __future__ import annotations

import argparse
import math

MAX_SIMULATIONS = 100_000
"""The most simulations per search any option may ask for (as ``player_specs.MAX_SIMULATIONS``)."""
MAX_GAMES = 100_000
"""The most games a command may play in one match or batch (as ``common.MAX_MATCH_GAMES``)."""
MAX_SEED = 2**63 - 1
MAX_SECONDS = 86_400.0
"""The longest time an option may set (a day)."""
MAX_THREADS = 4096


def _shown(text: str) -> str:
    text = text.strip()
    return text if len(text) <= 24 else text[:21] + "..."


class Whole:
    """A whole number from ``low`` to ``high`` (``even``: an even one)."""

    def __init__(self, low: int, high: int, even: bool = False, what: str = "a whole number"):
        self.low, self.high, self.even, self.what = low, high, even, what

    def describe(self, kind: bool = False) -> str:
        what = "an even number " if self.even else f"{self.what} " if kind else ""
        return f"{what}from {self.low} to {self.high}"

    def __call__(self, text: str) -> int:
        digits = text.strip().replace("_", "")
        body = digits[1:] if digits[:1] in "+-" else digits
        if not body.isdigit() or not body.isascii():
            raise argparse.ArgumentTypeError(f"must be {self.describe(kind=True)}, not {_shown(text)!r}")
        if len(body.lstrip("0")) > len(str(max(abs(self.low), abs(self.high)))) + 1:
            raise argparse.ArgumentTypeError(f"must be {self.describe()}, not {_shown(text)}")
        value = int(digits)
        if not self.low <= value <= self.high:
            raise argparse.ArgumentTypeError(f"must be {self.describe()}, not {_shown(text)}")
        if self.even and value % 2:
            raise argparse.ArgumentTypeError(f"must be {self.describe()} (games come in pairs), not {value}")
        return value

    def __repr__(self) -> str:
        return f"Whole({self.low}, {self.high})"


class Real:
    """A finite number from ``low`` to ``high`` (``above``: strictly above ``low``)."""

    def __init__(self, low: float, high: float, above: bool = False, what: str = "a number"):
        self.low, self.high, self.above, self.what = low, high, above, what

    def describe(self) -> str:
        if self.above and self.low == 0:
            return f"{self.what.replace('a ', 'a positive ', 1)}, at most {self.high:g}"
        return f"{self.what} {'above' if self.above else 'from'} {self.low:g}{', at most' if self.above else ' to'} " \
               f"{self.high:g}"

    def __call__(self, text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {self.describe()}, not {_shown(text)!r}") from None
        if not math.isfinite(value) or value < self.low or value > self.high or (self.above and value == self.low):
            raise argparse.ArgumentTypeError(f"must be {self.describe()}, not {_shown(text)}")
        return value

    def __repr__(self) -> str:
        return f"Real({self.low}, {self.high})"


class Wholes:
    """One or more whole numbers, comma-separated (``200`` or ``200,800,3200``), each from ``low`` to
    ``high``; an empty item (``8,,16``, ``8,``) is refused."""

    def __init__(self, low: int, high: int, what: str = "simulations"):
        self.item, self.what = Whole(low, high), what

    def __call__(self, text: str) -> list[int]:
        items = [x.strip() for x in text.split(",")]
        if len(items) > 64:
            raise argparse.ArgumentTypeError(f"must be at most 64 counts of {self.what}, not {len(items)}")
        if any(not x for x in items):
            raise argparse.ArgumentTypeError(f"must be N or N,N,... (e.g. 200,800,3200) without empty items, not "
                                             f"{_shown(text)!r}")
        values = []
        for x in items:
            try:
                values.append(self.item(x))
            except argparse.ArgumentTypeError as err:
                if len(items) == 1:
                    raise
                raise argparse.ArgumentTypeError(f"{err} (in {_shown(text)!r})".replace("must be", "must each be", 1)) \
                    from None
        return values

    def __repr__(self) -> str:
        return f"Wholes({self.item.low}, {self.item.high})"


# The options most commands share.
SIMS = Whole(1, MAX_SIMULATIONS)
SEED = Whole(0, MAX_SEED)
THREADS = Whole(0, MAX_THREADS)
SECONDS = Real(0.0, MAX_SECONDS, above=True, what="a number of seconds")
TEMPERATURE = Real(0.0, 100.0)
TOP = Whole(0, 50)
INDEX = Whole(0, 10**9)
CHECK_GAMES = Whole(0, 10_000, even=True)
"""``--check-games`` of openings and book show: self-play games from each checked opening (pairs; 0: no check)."""


def is_bounded(kind: object) -> bool:
    """Whether an argparse ``type`` is one of this module's (a bounded number)."""
    return isinstance(kind, (Whole, Real, Wholes))


def search_memory(what: str, batch: int, sims: int, actions: int, cells: int) -> None:
    """``ValueError`` (the message for the user) when ``batch`` searches of ``sims`` simulations on a
    board of ``actions`` actions and ``cells`` cells need more memory than this machine has free:
    the trees' statistics and stored states (the estimate of ``train/memory.py``), a lower bound."""
    per_node = 25 * actions + (actions - 1 + 6 * cells + 24) + 90
    needed = float(batch) * (sims + 2) * per_node
    available = _available_bytes()
    if available is not None and needed > available:
        raise ValueError(f"{what}: {batch:,} searches of {sims:,} simulations need about {needed / 1e9:,.1f} GB for "
                         f"their trees, more than the {available / 1e9:,.1f} GB free on this machine")


def _available_bytes() -> float | None:
    """Memory this machine can still give (``MemAvailable``; None when unknown)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    return None

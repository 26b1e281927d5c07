"""Player names, read without torch: which kind of player a name asks for, with its numbers checked
and its checkpoint file found, so that a command refuses a bad name at once (importing torch costs
seconds of CPU, tens of seconds on a loaded machine). ``players.make_player`` builds the player from
the parsed spec.

Names: ``random``; ``mcts-rollout:K``; ``policy:CKPT``; ``CKPT``, ``CKPT:sims=N``, ``CKPT:seconds=S``;
``gtp:COMMAND``, ``gtp@NAME:COMMAND``. A checkpoint player may end in ``:book=DIR``: it plays the
opening book's move while the position is in the book (``book.lookup``); and in ``:backend=B``
(``auto``, ``aoti`` or ``eager``: how its network runs, ``nn.native``), as may ``policy:CKPT``; and in
``:vc=on`` (Hex up to 8 x 8): H-search's virtual connections at its search's nodes
(``agents.connections``), ``:vc=off`` (the default) the network alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from conhex_zero.nn.checkpoint_files import CheckpointError, path_exists, shown  # noqa: F401  (re-exported)
from conhex_zero.nn.model_names import BACKENDS

DEFAULT_SIMS = 64
MAX_SIMULATIONS = 100_000
"""The most simulations per search a player may ask for (as for training's searches)."""


class PlayerSpecError(ValueError):
    """A player name cannot be understood."""


@dataclass(frozen=True)
class PlayerSpec:
    kind: str
    """random, rollout, gtp, policy or network."""
    text: str
    simulations: int = DEFAULT_SIMS
    """rollout and network players' simulations a search."""
    seconds: float | None = None
    """A network player's clock per move (``:seconds=S``)."""
    explicit_sims: bool = False
    """``:sims=N`` given in the name (it wins over a command's --seconds)."""
    path: str | None = None
    """The checkpoint file (policy and network players)."""
    command: str | None = None
    """A GTP engine's command line."""
    name: str | None = None
    """A GTP engine's name (``gtp@NAME``)."""
    book: str | None = None
    """A network player's opening book folder (``:book=DIR``)."""
    backend: str | None = None
    """How a policy or network player's network runs (``:backend=B``; None: the command's)."""
    connections: bool = False
    """A network player's search with H-search's verdicts at its nodes (``:vc=on``)."""


def _simulations(digits: str, spec: str) -> int:
    """A simulation count from a player name, at most ``MAX_SIMULATIONS``."""
    digits = digits.lstrip("0") or "0"
    if len(digits) > len(str(MAX_SIMULATIONS)) or int(digits) > MAX_SIMULATIONS:
        raise PlayerSpecError(f"{spec[:40]!r}: at most {MAX_SIMULATIONS} simulations per search")
    return int(digits)


def parse_seconds(text: str, where: str) -> float:
    """A thinking time in seconds: a positive finite number, at most a day."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (0 < value <= 86_400):  # also refuses nan and inf
        raise PlayerSpecError(f"{where[:60]}: seconds must be a positive number of seconds, at most 86400 (a day)")
    return value


def _is_file(path: str) -> bool:
    try:
        return Path(path).is_file()
    except (OSError, ValueError):  # a name the system cannot look up
        return False


def _shown(spec: str) -> str:
    return repr(spec if len(spec) <= 60 else spec[:57] + "...")


def parse_player(spec: str, simulations: int | None = None) -> PlayerSpec:
    """The player a name asks for (``simulations``: a command's --sims for checkpoints without
    ``:sims=N``); ``PlayerSpecError`` (one line, the name shortened) when it names none, or a
    checkpoint file that is not there."""
    text = spec.strip()
    if text == "random":
        return PlayerSpec("random", text)
    named = re.fullmatch(r"gtp@([A-Za-z0-9_.+-]{1,40}):(.*)", text, flags=re.DOTALL)
    if named or text.startswith("gtp:"):
        command = (named.group(2) if named else text[len("gtp:"):]).strip()
        if not command:
            raise PlayerSpecError("gtp: needs the engine's command line, e.g. gtp:\"mohex --seed 1\"")
        return PlayerSpec("gtp", text, command=command, name=f"gtp@{named.group(1)}" if named else None)
    if text.startswith("gtp@"):
        raise PlayerSpecError(f"{_shown(spec)}: name a GTP engine as gtp@NAME:COMMAND, NAME of letters, digits and "
                              f"_.+- (at most 40), e.g. gtp@mohex:\"mohex --use-book false\"")
    m = re.fullmatch(r"mcts-rollout:(\d+)", text)
    if m:
        k = _simulations(m.group(1), text)
        if k < 1:
            raise PlayerSpecError("mcts-rollout needs at least 1 simulation")
        return PlayerSpec("rollout", text, simulations=k)
    if text.startswith("mcts-rollout"):
        raise PlayerSpecError(f"{_shown(spec)}: write mcts-rollout:K with K simulations, e.g. mcts-rollout:200")
    book = backend = connections = None
    while True:  # the trailing options, in any order
        booked = re.fullmatch(r"(.+):book=([^:]+)", text, flags=re.DOTALL)
        backed = re.fullmatch(r"(.+):backend=([^:]*)", text, flags=re.DOTALL)
        vc = re.fullmatch(r"(.+):vc=([^:]*)", text, flags=re.DOTALL)
        if booked and book is None and not text.startswith("policy:"):
            text, book = booked.group(1), booked.group(2)
            if not ((Path(book) / "book.jsonl").is_file() or (Path(book) / "book.jsonl.gz").is_file()):
                raise PlayerSpecError(f"{_shown(spec)}: no opening book at {book[:60]!r} (a folder made by conhex-zero "
                                      f"book grow)")
        elif backed and backend is None:
            text, backend = backed.group(1), backed.group(2).strip().lower()
            if backend not in BACKENDS:
                raise PlayerSpecError(f"{_shown(spec)}: backend={backed.group(2)[:20]!r} is none of "
                                      f"{', '.join(BACKENDS)}")
        elif vc and connections is None and not text.startswith("policy:"):
            text, choice = vc.group(1), vc.group(2).strip().lower()
            if choice not in ("on", "off"):
                raise PlayerSpecError(f"{_shown(spec)}: vc={vc.group(2)[:20]!r}: write vc=on (H-search's virtual "
                                      f"connections in the search, Hex up to 8x8) or vc=off")
            connections = choice == "on"
        else:
            break
    if text.startswith("policy:"):
        path = text[len("policy:"):]
        if not path_exists(path):
            raise PlayerSpecError(f"no checkpoint file at {_shown(path)[1:-1]}")
        return PlayerSpec("policy", spec.strip(), path=path, backend=backend)
    seconds = None
    timed = re.fullmatch(r"(.+):seconds=([^:]+)", text, flags=re.DOTALL)
    if timed:
        text, seconds = timed.group(1), parse_seconds(timed.group(2), _shown(spec))
    m = re.fullmatch(r"(.+):sims=(\d+)", text, flags=re.DOTALL)
    if m and timed:
        raise PlayerSpecError(f"{_shown(spec)}: give :sims=N or :seconds=S, not both")
    path, sims = (m.group(1), _simulations(m.group(2), text)) if m else (text, simulations or DEFAULT_SIMS)
    if sims > MAX_SIMULATIONS:
        raise PlayerSpecError(f"{sims} simulations: at most {MAX_SIMULATIONS} per search")
    if not path_exists(path):
        cuts = [i for i, c in enumerate(path[:4096]) if c == ":" and _is_file(path[:i])]
        if cuts:  # a typo in the option after a checkpoint that exists (:sim=10)
            head, option = path[:cuts[0]], spec.strip()[cuts[0] + 1:]
            raise PlayerSpecError(f"{_shown(spec)}: unknown option {option[:30]!r} after the checkpoint "
                                  f"{shown(head)}: write CKPT:sims=N (simulations), CKPT:seconds=S (a clock), "
                                  f":book=DIR, :backend=auto|aoti|eager or :vc=on|off")
        if m or path.endswith(".pt") or "/" in path or "\\" in path:  # meant as a checkpoint file
            raise PlayerSpecError(f"no checkpoint file at {_shown(path)[1:-1]}")
        raise PlayerSpecError(f"unknown player {_shown(spec)}: expected random, mcts-rollout:K, policy:CKPT, "
                              f"gtp:COMMAND, or the path of a checkpoint (optionally CKPT:sims=N or CKPT:seconds=S)")
    return PlayerSpec("network", spec.strip(), simulations=sims, seconds=None if m else seconds, explicit_sims=bool(m),
                      path=path, book=book, backend=backend, connections=bool(connections))


def check_players(specs: list[str], simulations: int | None = None) -> list[PlayerSpec]:
    """Every name parsed (the first bad one raises)."""
    return [parse_player(spec, simulations) for spec in specs]


def checkpoint_path(spec: PlayerSpec) -> Path | None:
    return Path(spec.path) if spec.path is not None else None

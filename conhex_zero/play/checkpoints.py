"""Which game a player plays: the checkpoints named in player specs, and the games they were trained on.

A checkpoint stores the game spec it was trained on (``nn.checkpoint``). Commands that take player
specs (``play``, ``serve``, ``gtp``, ``arena``) play that game unless ``--game`` says otherwise, and
warn when a model plays a game it was not trained on. Games that differ only in their random opening
pieces (``random=K``) count as the same game: the pieces are an opening, not other rules.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Callable, Sequence

from conhex_zero.games.game import Game, parse_game
from conhex_zero.nn.checkpoint_files import CheckpointError, path_exists, shown


def checkpoint_game(path: str | Path) -> str:
    """The game a checkpoint was trained on (reading it imports torch: only when it exists)."""
    from conhex_zero.nn.checkpoint import checkpoint_game as read_game

    return read_game(path)

DEFAULT_GAME = "conhex"


class GameChoiceError(ValueError):
    """Two checkpoints were trained on different games and no game was chosen."""


def player_checkpoint(spec: str) -> str | None:
    """The checkpoint path inside a player spec (``policy:CKPT``, ``CKPT``, ``CKPT:sims=N``,
    ``CKPT:seconds=S``, any of these ending in ``:book=DIR``, ``:backend=B`` and/or ``:vc=on|off``), None for players
    without one (``random``, ``mcts-rollout:K``, ``gtp:COMMAND``, ``gtp@NAME:COMMAND``)."""
    text = spec.strip()
    while (option := re.fullmatch(r"(.+):(?:book=[^:]+|backend=[^:]*|vc=[^:]*)", text, flags=re.DOTALL)) is not None:
        text = option.group(1)
    if text == "random" or text.startswith(("gtp:", "gtp@", "mcts-rollout")):
        return None
    if text.startswith("policy:"):
        return text[len("policy:"):]
    m = re.fullmatch(r"(.+):(?:sims=\d+|seconds=[^:]+)", text)
    return m.group(1) if m else text


def looks_like_path(spec: str) -> bool:
    """Whether a player spec names a file: ``policy:...``, a name ending in ``.pt``, with a slash,
    or ``CKPT:sims=N`` (then a missing file is reported as such, not as an unknown player name)."""
    text = spec.strip()
    path = player_checkpoint(text)
    if path is None:
        return False
    return (text.startswith("policy:") or path.endswith(".pt") or "/" in path or "\\" in path
            or bool(re.fullmatch(r"(.+):sims=(\d+)", text)))


def existing_checkpoint(spec: str) -> str | None:
    """The checkpoint file of a player spec; ``CheckpointError`` when the spec looks like a path
    (see ``looks_like_path``) to a file that does not exist; None for other players."""
    path = player_checkpoint(spec)
    if path is None:
        return None
    if not path_exists(path):
        if looks_like_path(spec):
            raise CheckpointError(f"no checkpoint file at {shown(path)}")
        return None  # not a file: make_player reports the unknown player name
    return path


def same_game(a: str | Game, b: str | Game) -> bool:
    """Same board and rules (random opening pieces aside)."""
    ga, gb = parse_game(a), parse_game(b)
    return dataclasses.replace(ga, random_pieces=0) == dataclasses.replace(gb, random_pieces=0)


def _same(trained: str, game: str | Game) -> bool:
    try:
        return same_game(trained, game)
    except ValueError:  # a spec this version does not know
        return False


def _hex_sizes(trained: str, game: Game) -> bool:
    """Whether both are Hex boards (of other sizes or rules): a Hex network plays the others of its
    family, and a 7x7 one plays 8x8 as well as an 8x8 one trained from it (docs/knowledge.md)."""
    try:
        return parse_game(trained).spec.startswith("hex-") and game.spec.startswith("hex-")
    except ValueError:
        return False


def _mismatch(path: str, trained: str, game: Game) -> str | None:
    if _same(trained, game):
        return None
    if _hex_sizes(trained, game):
        return f"{path} was trained on {trained}, not {game.spec}: it plays every Hex board, but only a match says how well"
    return f"{path} was trained on {trained}, not {game.spec}: expect weak play"


def game_warning(spec: str, game: str | Game) -> str | None:
    """A warning when the player's checkpoint was trained on another game than ``game`` (None when
    it was, or when the player has no checkpoint)."""
    path = existing_checkpoint(spec)
    return None if path is None else _mismatch(path, checkpoint_game(path), parse_game(game))


class GameWarnings:
    """Tells ``warn`` once per game when the player's checkpoint was not trained on the game (the
    GTP engine on ``boardsize``, the browser page on a new game); ``told`` are games already warned
    about (or chosen by the command line, which warned itself)."""

    def __init__(self, player_spec: str, warn: Callable[[str], None] | None, told: Sequence[str] = ()):
        self.player_spec, self.warn = player_spec, warn
        self.told: set[str] = set(told)

    def about(self, spec: str) -> None:
        if self.warn is None or spec in self.told:
            return
        self.told.add(spec)
        try:
            message = game_warning(self.player_spec, spec)
        except ValueError:
            return  # the session was made from this checkpoint: it cannot be unreadable now
        if message:
            self.warn(message)


def choose_game(game: str | None, specs: Sequence[str]) -> tuple[str, list[str]]:
    """The game to play and the warnings to show: ``game`` when given, else the game of the first
    checkpoint among the players (``GameChoiceError`` when two checkpoints disagree), else conhex.
    A missing or unreadable checkpoint raises ``CheckpointError``."""
    trained = []
    for spec in specs:
        path = existing_checkpoint(spec)
        if path is not None:
            trained.append((path, checkpoint_game(path)))
    if game is None:
        game = trained[0][1] if trained else DEFAULT_GAME
        try:
            parse_game(game)
        except ValueError:
            raise CheckpointError(f"{trained[0][0]} was trained on {game!r}, a game this version does not know: "
                                  f"choose one with --game") from None
        for path, other in trained[1:]:
            if not _same(other, game):
                raise GameChoiceError(f"{trained[0][0]} was trained on {game} and {path} on {other}: "
                                      f"choose the game with --game")
    chosen = parse_game(game)
    warnings = []
    for path, other in trained:
        w = _mismatch(path, other, chosen)
        if w and w not in warnings:
            warnings.append(w)
    return chosen.spec, warnings

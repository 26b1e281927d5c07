"""A playable game: a board plus rule options, parsed from a spec string such as ``hex-11:swap``.

Spec grammar: ``NAME[:OPTION[,OPTION...]]`` with NAME ``conhex``, ``hex`` (= ``hex-11``) or
``hex-N`` (2 <= N <= 19) and options

* ``swap`` / ``noswap`` (or ``swap=on|off``): the pie rule. On by default for ConHex, as published;
  off for Hex.
* ``forbid=K``: the first player's first move may not be on a hole at depth >= K from the frame
  (the Hex "forbidden zone" variant).
* ``random=K``: K random opening pieces per player are placed (alternately) before play starts.
* ``extra-stone``: the second player places two pieces on their first turn (the Hex variant in which
  Black may add a stone; an extra piece never hurts in these games, so it is always placed).
* ``mirror=K``: no more than K consecutive mirror moves (the Hex variant "Mosse Speculari", K = 2
  in the rules sheet). A move *mirrors* when it is the image of the opponent's immediately preceding
  move under one fixed non-identity symmetry of the board (Hex: the 180-degree turn and the two
  diagonal reflections; ConHex: its seven turns and reflections); a player's (K+1)-th consecutive
  mirror under the same symmetry is illegal. The swap, and a move that follows one's own move (the
  extra stone), mirror nothing and end the player's streaks; the swap ends both players' streaks.

Actions are hole ids ``0..H-1`` plus ``SWAP = H``; ``num_actions = H + 1`` for every game (swap is
simply never legal when the rule is off). The turn order, the ply on which swap is legal and the
forbidden-zone ply are derived here as small tables the engine reads.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import numpy as np

from conhex_zero.games.board import BoardGraph
from conhex_zero.games.conhex import conhex_board
from conhex_zero.games.hex import MAX_SIZE, MIN_SIZE, hex_board
from conhex_zero.games.near_names import nearest_names

SWAP_NAME = "swap"
_TRUE = {"1", "on", "yes", "true"}
_FALSE = {"0", "off", "no", "false"}
_OPTIONS = ("swap", "noswap", "forbid", "random", "extra-stone", "mirror")


class GameSpecError(ValueError):
    """A game spec string cannot be understood; the message says why and what is accepted."""


class MoveError(ValueError):
    """A move name cannot be understood for this game."""


def split_moves(moves: Sequence[str] | str) -> list[str]:
    """Move tokens from strings that may hold several moves separated by spaces, commas or ``;``."""
    if isinstance(moves, str):
        moves = [moves]
    return [tok for text in moves for tok in re.split(r"[\s,;]+", text) if tok]


class IllegalMoveError(ValueError):
    """A move of a move list is malformed or illegal; says which one (1-based) and why."""

    def __init__(self, move_number: int, move: str, reason: str):
        super().__init__(f"move {move_number} ({move}): {reason}")
        self.move_number = move_number
        self.move = move
        self.reason = reason


def parse_moves(game: Game, moves: Sequence[str] | str) -> list[int]:
    """Action ids of move names; a malformed name raises ``IllegalMoveError`` with its number."""
    actions = []
    for number, token in enumerate(split_moves(moves), start=1):
        try:
            actions.append(game.parse_move(token))
        except MoveError as err:
            raise IllegalMoveError(number, token, str(err)) from None
    return actions


@dataclass(frozen=True)
class Game:
    """A board with its rule options. Build with ``parse_game``; immutable and hashable."""

    board: BoardGraph
    swap: bool
    forbid_depth: int | None = None
    random_pieces: int = 0
    extra_stone: bool = False
    mirror: int | None = None

    @property
    def mirror_symmetries(self) -> tuple[str, ...]:
        """The symmetries whose mirror moves are limited (all but the identity; none without the option)."""
        if self.mirror is None:
            return ()
        return tuple(s.name for s in self.board.symmetries[1:])

    # ----------------------------------------------------------------- sizes
    @property
    def num_holes(self) -> int:
        return self.board.num_holes

    @property
    def num_cells(self) -> int:
        return self.board.num_cells

    @property
    def num_actions(self) -> int:
        """Holes plus the swap action (always present; legal only when the rule allows it)."""
        return self.board.num_holes + 1

    @property
    def swap_action(self) -> int:
        return self.board.num_holes

    # ----------------------------------------------------------------- turns
    @property
    def opening_plies(self) -> int:
        """Plies taken by random opening pieces (both players)."""
        return 2 * self.random_pieces

    @property
    def first_move_ply(self) -> int:
        """Ply of the first player's first chosen move (after any random opening)."""
        return self.opening_plies

    @property
    def swap_ply(self) -> int | None:
        """The only ply on which swap is legal (the second player's first chosen action)."""
        return self.opening_plies + 1 if self.swap else None

    @property
    def max_plies(self) -> int:
        """An upper bound on the length of a game (every hole filled, plus one swap)."""
        return self.num_holes + 1

    @cached_property
    def turn_table(self) -> np.ndarray:
        """``[max_plies + 2]`` int: the player to move at each ply."""
        turns = []
        for ply in range(self.max_plies + 2):
            k = ply - self.first_move_ply
            if k < 0:
                turns.append(ply % 2)
            elif self.extra_stone:
                turns.append(0 if k == 0 else (1 if k in (1, 2) else (k - 3) % 2))
            else:
                turns.append(k % 2)
        return np.asarray(turns, dtype=np.int64)

    @cached_property
    def forbidden_holes(self) -> np.ndarray:
        """``[H]`` bool: holes banned on the first move (all False without ``forbid``)."""
        depth = np.asarray(self.board.hole_depth)
        if self.forbid_depth is None:
            return np.zeros(self.num_holes, dtype=bool)
        return depth >= self.forbid_depth

    # ----------------------------------------------------------------- names
    @property
    def spec(self) -> str:
        """The canonical spec string (options that differ from the game's defaults)."""
        opts = []
        if self.swap != _default_swap(self.board.name):
            opts.append("swap" if self.swap else "noswap")
        if self.forbid_depth is not None:
            opts.append(f"forbid={self.forbid_depth}")
        if self.random_pieces:
            opts.append(f"random={self.random_pieces}")
        if self.extra_stone:
            opts.append("extra-stone")
        if self.mirror is not None:
            opts.append(f"mirror={self.mirror}")
        return self.board.name + (":" + ",".join(opts) if opts else "")

    def __str__(self) -> str:
        return self.spec

    @property
    def rules_summary(self) -> str:
        """The rule options in words, e.g. ``swap on, 1 random opening piece per player``."""
        parts = [f"swap {'on' if self.swap else 'off'}"]
        if self.forbid_depth is not None:
            parts.append(f"first move not at depth >= {self.forbid_depth}")
        if self.random_pieces:
            parts.append(f"{self.random_pieces} random opening piece{'s' * (self.random_pieces > 1)} per player")
        if self.extra_stone:
            parts.append("second player's first turn places two pieces")
        if self.mirror is not None:
            parts.append(f"at most {self.mirror} consecutive mirror move{'s' * (self.mirror != 1)}")
        return ", ".join(parts)

    def action_name(self, action: int) -> str:
        """Name of an action: a hole name, or ``swap``."""
        if action == self.swap_action:
            return SWAP_NAME
        if not 0 <= action < self.num_holes:
            raise MoveError(f"action {action} is out of range 0..{self.swap_action}")
        return self.board.hole_names[action]

    def parse_move(self, text: str) -> int:
        """Action id of a move name (case-insensitive), e.g. ``F6``, ``c3`` or ``swap``."""
        name = text.strip().lower()
        if name == SWAP_NAME:
            return self.swap_action
        if name in self.board.hole_index:
            return self.board.hole_index[name]
        near = nearest_names(name, self.board.hole_names)
        word = self.board.hole_word
        hint = f"; nearby {word}s: {', '.join(near)}" if near else ""
        first, last = self.board.hole_names[0], self.board.hole_names[-1]
        swap = ", or 'swap'" if self.swap else ""
        raise MoveError(f"{text!r} is not a move in {self.board.name} ({word}s are named like "
                        f"{first} .. {last}{swap}){hint}")


def _shown(text: str, limit: int = 40) -> str:
    """Text from the user, for a message: its repr, shortened."""
    shown = repr(text)
    return shown if len(shown) <= limit else shown[:limit - 4] + "...'"


def _default_swap(board_name: str) -> bool:
    return board_name == "conhex"


def _board_from_name(name: str) -> BoardGraph:
    if name == "conhex":
        return conhex_board()
    if name == "hex":
        return hex_board(11)
    m = re.fullmatch(r"hex-?(\d+)", name)
    if m:
        digits = m.group(1).lstrip("0") or "0"
        if len(digits) > 6:  # never convert thousands of digits (Python refuses beyond 4,300)
            raise GameSpecError(f"Hex board size must be between {MIN_SIZE} and {MAX_SIZE}, got a number of "
                                f"{len(digits)} digits")
        n = int(digits)
        if not MIN_SIZE <= n <= MAX_SIZE:
            raise GameSpecError(f"Hex board size must be between {MIN_SIZE} and {MAX_SIZE}, got {n}")
        return hex_board(n)
    close = difflib.get_close_matches(name[:40], ["conhex", "hex", "hex-11"], n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise GameSpecError(f"unknown game {_shown(name)}: expected 'conhex', 'hex' or 'hex-N' "
                        f"(N from {MIN_SIZE} to {MAX_SIZE}).{hint}")


def _int_option(key: str, value: str | None, low: int, high: int) -> int:
    """A whole-number option from ``low`` to ``high`` (what the board allows)."""
    if value is None or not re.fullmatch(r"\d+", value.strip()):
        raise GameSpecError(f"option {key} needs a whole number, as in {key}=2")
    digits = value.strip().lstrip("0") or "0"
    if len(digits) > 7:  # never convert thousands of digits (Python refuses beyond 4,300)
        raise GameSpecError(f"option {key}: a number of {len(digits)} digits is too large")
    v = int(digits)
    if v < low:
        raise GameSpecError(f"option {key}={v} must be at least {low}")
    return v


def max_random_pieces(board: BoardGraph) -> int:
    """The most random opening pieces per player a board takes: a third of its holes each, two
    thirds in all. The game is then still open after almost every such opening (on Hex 3x3 about
    one in six is decided and drawn again, see ``VecEnv.reset``; fewer on larger boards), and
    placing them takes a few steps."""
    return board.num_holes // 3


def max_mirror(board: BoardGraph) -> int:
    """The largest mirror limit that can matter: a player makes at most half the moves (rounded up),
    and streaks are counted in 8 bits."""
    return min((board.num_holes + 1) // 2, 127)


def parse_game(spec: str | Game) -> Game:
    """Parse a game spec string (see the module docstring). A ``Game`` is returned unchanged."""
    if isinstance(spec, Game):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise GameSpecError("empty game spec: expected e.g. 'conhex' or 'hex-11:swap'")
    name, _, opt_text = spec.strip().lower().partition(":")
    board = _board_from_name(name.strip())
    swap = _default_swap(board.name)
    forbid: int | None = None
    random_pieces = 0
    extra = False
    mirror: int | None = None
    seen: set[str] = set()
    for raw in filter(None, (o.strip() for o in opt_text.split(","))):
        key, eq, value = raw.partition("=")
        key = key.strip().replace("_", "-")
        value = value.strip() if eq else None
        canon = "swap" if key == "noswap" else key
        if canon in seen:
            raise GameSpecError(f"option {canon!r} is given twice in {_shown(spec)}")
        seen.add(canon)
        if key == "swap":
            if value is None or value in _TRUE:
                swap = True
            elif value in _FALSE:
                swap = False
            else:
                raise GameSpecError(f"swap={_shown(value)}: expected on or off")
        elif key == "noswap" and value is None:
            swap = False
        elif key == "forbid":
            deepest = max(board.hole_depth)
            forbid = _int_option("forbid", value, 1, 1000)
            if forbid > deepest:
                raise GameSpecError(f"forbid={forbid} bans no {board.hole_word} on {board.name} "
                                    f"(the deepest {board.hole_word} has depth {deepest})")
        elif key == "random":
            random_pieces = _int_option("random", value, 0, board.num_holes)
            if 2 * random_pieces >= board.num_holes:
                raise GameSpecError(f"random={random_pieces} would fill the {board.name} board")
            if random_pieces > max_random_pieces(board):
                raise GameSpecError(f"random={random_pieces} would fill {2 * random_pieces} of the {board.num_holes} "
                                    f"{board.hole_word}s of {board.name}, which decides most games before they start: at most "
                                    f"random={max_random_pieces(board)} (two thirds of the board)")
        elif key == "extra-stone" and value is None:
            extra = True
        elif key == "mirror":
            mirror = _int_option("mirror", value, 1, max_mirror(board))
            if mirror > max_mirror(board):
                raise GameSpecError(f"mirror={mirror} cannot matter on {board.name}: at most mirror={max_mirror(board)} "
                                    f"(a player makes at most {(board.num_holes + 1) // 2} moves)")
        else:
            close = difflib.get_close_matches(key, list(_OPTIONS), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise GameSpecError(f"unknown option {_shown(raw)} in {_shown(spec)}: options are swap, noswap, "
                                f"forbid=K, random=K, extra-stone, mirror=K.{hint}")
    if extra and swap:
        raise GameSpecError(f"extra-stone and swap are alternative ways to balance the first move; "
                            f"choose one (e.g. '{board.name}:noswap,extra-stone')")
    return Game(board=board, swap=swap, forbid_depth=forbid, random_pieces=random_pieces,
                extra_stone=extra, mirror=mirror)

"""Self-play games that start from chosen positions: lines of moves read from a text file.

Issue 56 asks for self-play aimed at what the opening book is unsure of. ``selfplay.start_lines``
names a file of lines, one a row, moves in the game's notation separated by spaces (``#`` starts a
comment; ``conhex-zero book starts`` writes one from a book's undecided positions). A share
``selfplay.start_fraction`` of the games plays one of them first, drawn uniformly per game from the
game's id (so a resumed run draws the same); the other games open as before. The line's moves are
forced, like ``random_first_moves``: their positions are searched and recorded for their policy
targets, but a position before the line's last move gets no value or ownership target (the game's
outcome says nothing of a position whose next move was not chosen), and the temperature plies
count from the line's end.

Read once, when self-play starts: every line is replayed on the engine and a move that is not legal
where it stands (or a line that ends the game) is a ``StartLinesError`` naming the file's line.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import Tensor

from conhex_zero.games.game import Game, parse_moves

MAX_LINES = 1_000_000
"""More lines than this is surely not a start file."""


class StartLinesError(ValueError):
    """The start file cannot be read or one of its lines cannot be played."""


def read_start_lines(path: str | Path, game: Game) -> list[list[int]]:
    """The file's lines as actions (each at least one move), checked on the rules engine."""
    from conhex_zero.env.vec_env import VecEnv

    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StartLinesError(f"no start-lines file at {str(path)[:200]}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise StartLinesError(f"cannot read the start-lines file {str(path)[:200]}: {err}") from None
    lines: list[list[int]] = []
    numbers: list[int] = []
    for number, raw in enumerate(text.splitlines(), 1):
        words = raw.split("#", 1)[0].strip()
        if not words:
            continue
        try:
            lines.append(parse_moves(game, words))
        except ValueError as err:
            raise StartLinesError(f"{file.name}, line {number}: {err}") from None
        numbers.append(number)
        if len(lines) > MAX_LINES:
            raise StartLinesError(f"{file.name}: more than {MAX_LINES} lines")
    if not lines:
        raise StartLinesError(f"{file.name} holds no line of moves")
    _check_playable(VecEnv(game), lines, numbers, file.name)
    return lines


def _check_playable(env, lines: list[list[int]], numbers: list[int], name: str) -> None:
    """Replay every line at once; a move that is illegal where it stands, or a finished game, is an error."""
    table = start_line_tensor(lines, torch.device("cpu"))  # [N, K]
    state = env.reset(len(lines))
    for ply in range(table.shape[1]):
        action = table[:, ply]  # [N]
        playing = action >= 0
        legal = env.legal_mask(state).gather(1, action.clamp(min=0)[:, None])[:, 0]
        bad = playing & (~legal | state.done)
        if bool(bad.any()):
            row = int(bad.nonzero()[0, 0])
            move = env.game.action_name(int(action[row]))
            raise StartLinesError(f"{name}, line {numbers[row]}: move {ply + 1} ({move}) is not legal there")
        state = env.step(state, action.clamp(min=0)).where(~playing, state)  # lines that ended stay
    ended = state.done
    if bool(ended.any()):
        row = int(ended.nonzero()[0, 0])
        raise StartLinesError(f"{name}, line {numbers[row]}: the game is over at its end (a start must leave moves)")


def start_line_tensor(lines: list[list[int]], device: torch.device) -> Tensor:
    """``[N, K]`` the lines' actions, padded with -1 to the longest (K)."""
    width = max(len(line) for line in lines)
    out = torch.full((len(lines), width), -1, dtype=torch.long)
    for row, line in enumerate(lines):
        out[row, :len(line)] = torch.tensor(line, dtype=torch.long)
    return out.to(device)

"""Self-play start lines from a book: the positions it is unsure of (issue 56, item 3).

A book node is *unsure* when its minimax value is within ``margin`` of even (a win chance between
35% and 65% for the default 0.3, the band the decided rule leaves undecided) and nothing proves it.
``unsure_lines`` lists the lines that reach them, nearest the start first; ``conhex-zero book
starts`` writes them as the file ``selfplay.start_lines`` reads (``train.start_lines``), so that
self-play spends its games where the book would most like to know more.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from conhex_zero.book.graph import DECIDED_MARGIN
from conhex_zero.games.game import Game


@dataclass(frozen=True)
class StartLine:
    moves: list[str]
    """The moves from the empty board (the book's start moves first)."""
    value: float
    """The book's value for the player to move at the line's end."""


def unsure_lines(opened, game: Game, max_plies: int, margin: float = DECIDED_MARGIN) -> list[StartLine]:
    """Every unproven book node at 1 to ``max_plies`` moves from the book's start whose value is
    within ``margin`` of even; nearest the start first, then by the moves."""
    out = []
    for node in opened.book.nodes.values():
        if not node.line or len(node.line) > max_plies or node.proven or abs(node.value) >= margin:
            continue
        moves = list(opened.start_moves) + [game.action_name(a) for a in node.line]
        out.append(StartLine(moves, node.value))
    return sorted(out, key=lambda s: (len(s.moves), s.moves))


def write_lines(path: str | Path, lines: list[StartLine], about: str) -> None:
    """The file ``selfplay.start_lines`` reads: a comment, then one line of moves a row (its folder
    made if missing; written to a side file and renamed, so a file is whole or absent)."""
    text = [f"# {about}", "# moves from the empty board; after '#': the book's win % for the player to move there"]
    text += [f"{' '.join(s.moves)}  # {50 * (1 + s.value):.1f}%" for s in lines]
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    partial.write_text("\n".join(text) + "\n", encoding="utf-8")
    partial.replace(out)  # whole or not at all

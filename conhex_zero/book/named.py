"""Book positions named by their moves: ``book prove --position "f2 d5"``.

A user names a position the way the book's pages and ``book show`` do, by the moves from the book's
start; the book keeps it under its canonical key (``keys``: one node for every symmetric image and
every move order). ``named_positions`` plays each line and returns the key of the position it reaches
and of the position one move before it (the position whose move led there: where a proof shows that
move fails, ``book prove --next-best`` turns to the book's next best move there), with an error that
says which move of which line is wrong, or that the book does not hold the position.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conhex_zero.book.folder import OpenBook


@dataclass(frozen=True)
class NamedPosition:
    """One line's position in the book: its key, and the key one move before (None where the book does
    not hold that position)."""

    key: str
    above: str | None


def named_positions(opened: OpenBook, lines: list[str]) -> list[NamedPosition]:
    """The book position each line of moves reaches from the book's start (``f2 d5``, ``f2,d5``; hole
    names), in the order given, each once. ``ValueError`` (one line) for a malformed or illegal move, a
    line that ends the game, or a position the book does not hold."""
    from conhex_zero.book.keys import Canonical
    from conhex_zero.env.notation import play_moves
    from conhex_zero.env.vec_env import VecEnv
    from conhex_zero.games.game import IllegalMoveError, split_moves

    env = VecEnv(opened.game, "cpu")
    canon = Canonical(env)
    nodes = opened.book.nodes
    start = list(opened.start_moves)
    out: list[NamedPosition] = []
    seen: set[str] = set()
    for text in lines:
        moves = split_moves(text)
        if not moves:
            raise ValueError("an empty line of moves: name a position by its moves from the book's start (e.g. 'f2 d5')")
        shown = " ".join(m.lower() for m in moves)
        try:
            state = play_moves(env, start + moves)
        except IllegalMoveError as err:
            number = err.move_number - len(start)
            raise ValueError(f"'{shown}': move {number} ({err.move}): {err.reason}") from None
        if bool(state.done[0]):
            raise ValueError(f"'{shown}': the game is over after these moves (nothing to prove)")
        key = canon.keys(state).keys[0]
        if key not in nodes:
            raise ValueError(f"'{shown}': the book does not hold this position (it holds the positions it has grown; "
                             f"`conhex-zero book show` lists its openings)")
        above_state = play_moves(env, start + moves[:-1])
        above = canon.keys(above_state).keys[0]
        if key not in seen:
            seen.add(key)
            out.append(NamedPosition(key, above if above in nodes else None))
    return out

"""The book's best moves as the positions a proof search is given.

Where the book has the player to move winning, its best move is the move a proof most likely needs:
``best_move`` names it, ``best_reply`` the position after it (``book prove --best-replies`` proves
that position instead: one winning move decides the position above it, and the search spends nothing
on the other moves). On Hex 7x7 the v5 book's best reply won at all 7 openings it has won for the
replier, and its proof cost about half the opening's in all (cheaper on 5 of 7; a search free to
choose among the replies sometimes proves another, cheaper one); on Hex 8x8 it proved h3/a6
(docs/knowledge.md, the eleventh session).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conhex_zero.book.folder import OpenBook


def best_move(opened: OpenBook, key: str) -> int | None:
    """The book's best move at ``key`` (canonical frame), where the book has the mover winning there
    (its minimax value above 0) and the move is a book move that the search of the moves not in the
    book does not rate below another; else None."""
    nodes = opened.book.nodes
    node = nodes[key]
    if node.value <= 0 or not node.children or not key.endswith("|-"):
        return None
    action, child = min(node.children.items(), key=lambda ac: (nodes[ac[1]].value, ac[1]))  # the mover's best
    if node.rest is not None and node.rest.value > -nodes[child].value:
        return None  # the best move is one the book has not entered
    return action


def best_reply(opened: OpenBook, key: str) -> str | None:
    """The position after ``best_move`` at ``key`` where that position is not settled yet (a proof that
    the mover there loses proves ``key`` won); else None."""
    action = best_move(opened, key)
    if action is None:
        return None
    child = opened.book.nodes[opened.book.nodes[key].children[action]]
    if child.exact or child.proven or not child.key.endswith("|-"):
        return None
    return child.key

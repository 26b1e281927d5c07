"""The book's best moves as the positions a proof search is given.

Where the book has the player to move winning, its best move is the move a proof most likely needs:
``best_move`` names it, ``best_reply`` the position after it (``book prove --best-replies`` proves
that position instead: one winning move decides the position above it, and the search spends nothing
on the other moves). On Hex 7x7 the v5 book's best reply won at all 7 openings it has won for the
replier, and its proof cost about half the opening's in all (cheaper on 5 of 7; a search free to
choose among the replies sometimes proves another, cheaper one); on Hex 8x8 it proved h3/a6
(docs/knowledge.md, the eleventh session).

Where the book has the player to move losing, its best move is the mover's best try: ``best_try`` names
the position after it (``book prove --doubts``). A proof that the try wins overturns the book there (the
position is won after all, whatever the network believed); a proof that it loses settles that move,
and the book's minimax turns to the next best. Near 50% the book can be wrong (the tenth session's
c2/f7): this is the cheapest check of such a claim, one move instead of all of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conhex_zero.book.folder import OpenBook


def best_move(opened: OpenBook, key: str, losing: bool = False) -> int | None:
    """The book's best move at ``key`` (canonical frame), where the book has the mover winning there
    (its minimax value above 0; ``losing``: below 0) and the move is a book move that the search of
    the moves not in the book does not rate below another; else None."""
    node = opened.book.nodes[key]
    if (node.value >= 0 if losing else node.value <= 0) or not node.children or not key.endswith("|-"):
        return None
    ranked = ranked_moves(opened, key)
    return ranked[0] if ranked else None  # none: the best move is one the book has not entered


def ranked_moves(opened: OpenBook, key: str) -> list[int]:
    """The book's moves at ``key`` (canonical frame), the mover's best first, as long as the search of
    the moves not in the book does not rate a move it has not entered above them."""
    nodes = opened.book.nodes
    node = nodes[key]
    out = []
    for action, child in sorted(node.children.items(), key=lambda ac: (nodes[ac[1]].value, ac[1])):
        if node.rest is not None and node.rest.value > -nodes[child].value:
            break
        out.append(action)
    return out


def best_reply(opened: OpenBook, key: str, losing: bool = False) -> str | None:
    """The position after ``best_move`` at ``key`` where that position is not settled yet (a proof that
    the mover there loses proves ``key`` won); else None. ``losing``: where the book has the mover at
    ``key`` losing (``best_try``)."""
    action = best_move(opened, key, losing)
    if action is None:
        return None
    child = opened.book.nodes[opened.book.nodes[key].children[action]]
    if child.exact or child.proven or not child.key.endswith("|-"):
        return None
    return child.key


def best_try(opened: OpenBook, key: str) -> str | None:
    """Where the book has the mover at ``key`` losing: the position after the mover's best book move,
    not settled yet (a proof that the opponent loses there overturns the book at ``key``); else None."""
    return best_reply(opened, key, losing=True)


def best_move_position(opened: OpenBook, key: str, best_replies: bool, doubts: bool) -> str | None:
    """The position a proof run tries instead of ``key``: ``best_reply`` where the book has the mover
    winning (with ``best_replies``), ``best_try`` where losing (with ``doubts``); else None."""
    value = opened.book.nodes[key].value
    if best_replies and value > 0:
        return best_reply(opened, key)
    return best_try(opened, key) if doubts and value < 0 else None

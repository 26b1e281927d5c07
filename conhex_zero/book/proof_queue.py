"""The order a proof run takes its positions in, and the next best move where the best one fails.

With ``book prove --best-replies`` or ``--doubts`` a run tries, instead of a position, the position
after the book's best move there (``hints.best_move_position``). Where the solver proves that move
does not win (the position after it is won for its mover), the book's minimax turns to the mover's
next best move; ``--next-best K`` queues it at once, at the front (it belongs to a position ranked
before those waiting), up to K moves a position. A position the book has settled meanwhile (another
search's table, or a proof below it) is skipped when its turn comes.
"""

from __future__ import annotations

from collections import deque

from conhex_zero.book.folder import OpenBook
from conhex_zero.book.hints import best_move_position


class ProofQueue:
    """Candidates in order (``prove.candidate_pairs``), and each failed best move's follow-up."""

    def __init__(self, opened: OpenBook, pairs: list[tuple[str | None, str]], next_best: int = 1,
                 best_replies: bool = False, doubts: bool = False):
        if next_best < 1:
            raise ValueError(f"next_best must be at least 1, not {next_best}")
        self.opened = opened
        self.waiting: deque[str] = deque(key for _, key in pairs)
        self.above: dict[str, str] = {key: above for above, key in pairs if above is not None}
        self.moves_tried: dict[str, int] = {}  # position above -> its moves queued so far
        for above in self.above.values():
            self.moves_tried[above] = self.moves_tried.get(above, 0) + 1
        self.next_best = next_best
        self.best_replies, self.doubts = best_replies, doubts

    def pop(self) -> str | None:
        """The next position not settled yet; None when none is left."""
        nodes = self.opened.book.nodes
        while self.waiting:
            key = self.waiting.popleft()
            node = nodes[key]
            if not (node.exact or node.proven):
                return key
        return None

    def settled(self, key: str, result: int | None) -> str | None:
        """After ``key``'s search (``result`` +1/-1 for its mover, None unsettled; the book's node is
        already marked exact): where it was a best move's position and the move failed (its mover
        wins there), the next best move's position is queued first and returned, if the position
        above has another book move worth it and fewer than ``next_best`` were tried."""
        above = self.above.get(key)
        if above is None or result is None or result < 0 or self.next_best <= 1:
            return None
        if self.moves_tried.get(above, 0) >= self.next_best:
            return None
        book = self.opened.book
        book.update()  # the failed move is now exact: the minimax turns to the next best
        if book.nodes[above].exact or book.nodes[above].proven:
            return None
        follow = best_move_position(self.opened, above, self.best_replies, self.doubts)
        if follow is None or follow in self.above:
            return None
        self.above[follow] = above
        self.moves_tried[above] += 1
        self.waiting.appendleft(follow)
        return follow

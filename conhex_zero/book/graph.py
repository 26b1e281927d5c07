"""The opening book in memory: nodes (positions up to symmetry), their searches, the moves between
them, values backed up by minimax, proofs, and which position to expand next.

Every value is for the player to move at the node, in [-1, 1] (a win is +1). In the games a book
supports every action, the swap included, passes the move to the other player, so a move's value
is minus its child's (negamax).

**A node's value.** A node was searched when it entered the book, and again each time the move its
last search preferred entered the book: every search *excludes the node's book moves*, so its value
is the search's estimate of the best move *not* in the book (``rest``; KataGo's books do the same).
The node's value is the best of that estimate and of its book children's values::

    value(n) = max(rest(n), max over book moves a of -value(child(n, a)))

so a refuted line gives way to the next best, and the search's value stands in only where the book
has not grown. ``search_value`` keeps the node's first search (the single-search value that
``openings`` would give), for comparison.

**Proofs.** A proven result (the search's MCTS-solver or tactics, the exact solver on small Hex
boards, a game that ends) is exact and never replaced by an estimate: a node is a proven win when
one of its moves is proven to win (a child proven lost, or a search that proved the rest won), and
a proven loss when every move is proven to lose (each book child proven won, and the rest proven
lost by its search, or no rest left).

**What to expand next (best first).** Each node offers one candidate: its rest's best move. A
candidate's cost is the cost of reaching its node plus the cost of the move::

    cost(start) = 0
    move cost   = 1 + SURE x |value after the move| + GAP x (value(n) - value of the move)

(the gap term is left out at the start position, whose every move is in the table). A node's cost
is its cheapest way in from the start. So: the book grows along the best lines (a move worse than
the best by a tenth of the value range costs GAP/10 = 1 ply more); shallow before deep (each ply
costs at least 1); and deeper where the value is close to even, the positions where the search is
most likely to be on the wrong side of one half (a position at 95% costs 1 + SURE x 0.9 a ply, one at
50% costs 1). Proven nodes are closed: nothing below them is expanded on their account. The
rounds of ``grow`` take the cheapest candidates, many at a time.

**Decided.** The book calls a position decided (it is sure which side wins) when it is proven, or
when its minimax value is at least ``DECIDED_MARGIN`` from even, its best move is a book move (the
book has looked at least one move deeper than a single search), and every search on its principal
line (the node's own first search, and the first search of each book node the line reaches) gives
the same side at least the same margin; a line that reaches a proof is decided from there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

GAP_COST = 10.0
"""Cost (in plies) of a move per unit of value below the best move's (the value range is 2)."""
SURE_COST = 2.0
"""Extra cost of a ply per unit of |value| after it: sure positions grow slower than even ones."""
DECIDED_MARGIN = 0.3
"""A decided estimate is at least this far from 0 (a win chance outside 35%-65%)."""


@dataclass
class Search:
    """One search of a node's position, with some moves excluded (moves in the canonical frame)."""

    value: float
    """The value of the search's best move (exact where proven), for the player to move."""
    best: int | None
    """The move the search would play (None: every move was excluded)."""
    proven: int = 0
    """+1: the search proved a win among its moves; -1: that all its moves lose; 0: neither."""
    excluded: frozenset[int] = frozenset()
    visits: int = 0
    pv: list[int] = field(default_factory=list)
    """The search's principal line from the node (canonical frame at the node only for its first move)."""


@dataclass
class MoveStats:
    """A move of the node's first search (canonical frame)."""

    prior: float
    visits: int
    q: float
    proven: int = 0


@dataclass
class Node:
    key: str
    line: list[int]
    """Real actions from the book's start that reach a position this node names."""
    legal: int
    """Legal moves of the position."""
    first: Search
    """The search the node was entered with (``search_value``)."""
    moves: dict[int, MoveStats] = field(default_factory=dict)
    rest: Search | None = None
    """The latest search of the moves not in the book (None: every legal move is a book move)."""
    exact: int = 0
    """The exact solver's result for the player to move (+1/-1), 0 where unknown."""
    children: dict[int, str] = field(default_factory=dict)
    """Book moves (canonical frame) -> child key."""
    # Derived by ``Book.update``:
    value: float = 0.0
    proven: int = 0
    cost: float = math.inf
    parents: list[tuple[str, int]] = field(default_factory=list)
    size: int = 1
    """Book nodes reachable from this one, itself included (each counted once)."""

    @property
    def pieces(self) -> int:
        return sum(c != "." for c in self.key.split("|")[0])

    @property
    def swap_legal(self) -> bool:
        return self.key.endswith("|s")

    @property
    def search_value(self) -> float:
        return self.first.value

    @property
    def rest_stale(self) -> bool:
        """The rest's best move has entered the book since: the rest must be searched again."""
        return self.rest is not None and self.rest.best is not None and self.rest.best in self.children


@dataclass(frozen=True)
class Candidate:
    """A book move to add (``action`` at ``key``, canonical frame) or a rest to search again (``action`` None)."""

    cost: float
    key: str
    action: int | None


class Book:
    """Nodes by key; ``update()`` recomputes values, proofs, costs and sizes after changes."""

    def __init__(self, start: str, gap_cost: float = GAP_COST, sure_cost: float = SURE_COST):
        self.start = start
        self.nodes: dict[str, Node] = {}
        self.rounds: list[dict] = []
        """The ``round`` lines of the book's file (what each round of growth added, and its seconds)."""
        self.gap_cost, self.sure_cost = gap_cost, sure_cost

    def __len__(self) -> int:
        return len(self.nodes)

    def __contains__(self, key: str) -> bool:
        return key in self.nodes

    def order(self) -> list[Node]:
        """Nodes with every child after all its parents (a topological order of the book's DAG;
        every move adds a piece or spends the swap, so there are no cycles)."""
        waiting = {key: 0 for key in self.nodes}
        for node in self.nodes.values():
            for child in set(node.children.values()):
                waiting[child] += 1
        ready = sorted((n for n in self.nodes.values() if waiting[n.key] == 0), key=lambda n: n.key, reverse=True)
        out = []
        while ready:
            node = ready.pop()
            out.append(node)
            for child in sorted(set(node.children.values()), reverse=True):
                waiting[child] -= 1
                if waiting[child] == 0:
                    ready.append(self.nodes[child])
        if len(out) != len(self.nodes):
            raise ValueError("the book's moves form a cycle")
        return out

    # ----------------------------------------------------------------- minimax
    def update(self) -> None:
        order = self.order()
        for node in self.nodes.values():
            node.parents = []
        for node in order:
            for a, child in node.children.items():
                self.nodes[child].parents.append((node.key, a))
        for node in reversed(order):  # children first
            node.value, node.proven = self._backup(node)
        self._costs(order)
        self._sizes(order)

    def _backup(self, node: Node) -> tuple[float, int]:
        if node.exact:
            return float(node.exact), node.exact
        options: list[tuple[float, int]] = []  # (value, proof) of every move group the node can choose
        rest = node.rest
        if rest is not None:
            options.append((rest.value, rest.proven))
        for child in node.children.values():
            c = self.nodes[child]
            options.append((-c.value, -c.proven))
        if not options:
            return 0.0, 0
        if any(p > 0 for _, p in options) or node.first.proven > 0 or (rest is not None and rest.proven > 0):
            return 1.0, 1
        no_rest_left = rest is None or rest.proven < 0
        children_lost = all(-self.nodes[c].proven < 0 for c in node.children.values())
        if (no_rest_left and children_lost) or (node.first.proven < 0 and not node.first.excluded):
            return -1.0, -1
        return max(v for v, _ in options), 0

    def _costs(self, order: list[Node]) -> None:
        for node in order:
            node.cost = math.inf
        start = self.nodes.get(self.start)
        if start is None:
            return
        start.cost = 0.0
        for node in order:
            if node.cost == math.inf or (node.proven and node is not start):
                continue  # a proven node is closed (the start never: its every move is in the table)
            for a, child in node.children.items():
                c = self.nodes[child]
                step = self.move_cost(node, -c.value)
                c.cost = min(c.cost, node.cost + step)

    def move_cost(self, node: Node, move_value: float) -> float:
        """The cost of a move of ``node`` whose value (for the player to move there) is ``move_value``."""
        gap = 0.0 if node.key == self.start else max(0.0, node.value - move_value)
        return 1.0 + self.sure_cost * abs(move_value) + self.gap_cost * gap

    def _sizes(self, order: list[Node]) -> None:
        below: dict[str, set[str]] = {}
        for node in reversed(order):
            reach = {node.key}
            for child in node.children.values():
                reach |= below[child]
            below[node.key] = reach
            node.size = len(reach)

    # ----------------------------------------------------------------- growth
    def candidates(self) -> list[Candidate]:
        """Every open candidate, cheapest first: stale rests (searched again at their node's cost)
        and each node's rest move."""
        out = []
        for node in self.nodes.values():
            if node.cost == math.inf or node.proven or node.rest is None:
                continue
            if node.rest_stale:
                out.append(Candidate(node.cost, node.key, None))
            elif node.rest.best is not None:
                out.append(Candidate(node.cost + self.move_cost(node, node.rest.value), node.key, node.rest.best))
        return sorted(out, key=lambda c: (c.cost, c.key))

    # ----------------------------------------------------------------- reading
    def value_without(self, node: Node, excluded: frozenset[int] | set[int] = frozenset()) -> tuple[float, int]:
        """A node's minimax value and proof with some of its book moves left out (the swap of an
        opening, for its value when the second player does not swap)."""
        if not excluded:
            return node.value, node.proven
        if node.exact:
            return float(node.exact), node.exact
        saved = node.children
        node.children = {a: c for a, c in saved.items() if a not in excluded}
        try:
            return self._backup(node)
        finally:
            node.children = saved

    def principal_line(self, key: str, limit: int = 60, exclude: frozenset[int] | set[int] = frozenset()
                       ) -> list[tuple[str, int]]:
        """The book's best line from a node: (node key, its best book move) while the best move is
        a book move (``exclude``: moves not taken at the first node)."""
        line = []
        seen = set()
        while len(line) < limit and key not in seen:
            seen.add(key)
            node = self.nodes[key]
            best = self.best_move(node, exclude if not line else frozenset())
            if best is None or best not in node.children:
                break
            line.append((key, best))
            key = node.children[best]
        return line

    def best_move(self, node: Node, exclude: frozenset[int] | set[int] = frozenset()) -> int | None:
        """The move the book plays at a node: the best book child, or the rest's best move where the
        rest is better (canonical frame); a proven win before any estimate."""
        best, best_value = None, -math.inf
        for a, child in sorted(node.children.items()):
            if a in exclude:
                continue
            c = self.nodes[child]
            v = -c.value + (2.0 if -c.proven > 0 else 0.0)
            if v > best_value:
                best, best_value = a, v
        rest = node.rest
        if rest is not None and rest.best is not None and not node.rest_stale:
            v = rest.value + (2.0 if rest.proven > 0 else 0.0)
            if v > best_value:
                best = rest.best
        return best

    def decided(self, key: str, margin: float = DECIDED_MARGIN, exclude: frozenset[int] | set[int] = frozenset()
                ) -> bool:
        """Whether the book is sure which side wins at the node (the module docstring's rule;
        ``exclude``: moves left out at the node, as in ``value_without``)."""
        node = self.nodes[key]
        value, proof = self.value_without(node, exclude)
        if proof:
            return True
        side = 1.0 if value > 0 else -1.0
        line = self.principal_line(key, exclude=exclude)
        if not line or abs(value) < margin:
            return False
        for k, _ in line:
            n = self.nodes[k]
            sign = side if (len(n.line) - len(node.line)) % 2 == 0 else -side  # every move passes the turn
            if n.proven:
                return n.proven * sign > 0  # the line reaches a proof: exact from there on
            if n.first.value * sign < margin:
                return False
        end = self.nodes[self.nodes[line[-1][0]].children[line[-1][1]]]
        sign = side if (len(end.line) - len(node.line)) % 2 == 0 else -side
        return end.proven * sign > 0 if end.proven else end.first.value * sign >= margin

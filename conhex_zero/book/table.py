"""The book's move table at its start position (the first-move table from the empty board): every
legal move with the book's minimax value beside its single-search value, decided and proven marks,
the swap decision and the best line, in the JSON form of ``openings --json``.

Values are for the player who makes the move. ``win`` (JSON ``win_percent``) follows the book's one
convention (``CONVENTION``: after the opponent's best answer, the swap included), the number every
view shows first; ``win_rate`` is, as in ``openings``, the first player's chance after an opening
when the second player does *not* swap (the swap is a book move of every
opening, so the value without it is the minimax over the other moves). ``value`` is, as there, the
value for the player to move after the move, in [-1, 1]; ``minimax_value`` is the same number and
``search_value`` the first search of that position (what ``openings`` would give with one search
at the book's simulations).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from conhex_zero.book.graph import Book
from conhex_zero.book.keys import Canonical
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv

CONVENTION = ("win %: the chance of the player who makes the move, after the opponent's best answer (the swap "
              "included where the pie rule allows it), by the book's minimax; a position's: the chance of the player "
              "to move there")
"""Whose chance every book number is: the same words on the pages, in ``book show`` and in ``serve``."""


@dataclass
class BookMove:
    move: str
    action: int
    group: int
    key: str
    value: float
    """Minimax value (without swap) for the player to move after the move."""
    search_value: float
    proven: str | None
    decided: bool
    nodes: int
    best_line: list[str]
    swap: bool | None
    exact_win: bool | None = None
    extra: dict = field(default_factory=dict)
    answered_value: float | None = None
    """The position after the move's minimax value for the player to move there, *every* answer
    included (the swap too): ``win`` follows the book's one convention (``CONVENTION``). None: as
    ``value`` (no swap to leave out)."""
    answered_proven: str | None = None
    replies_refuted: int = 0
    """The opponent's replies to the move that the book has proven to fail (a win for the mover after
    them, exact or by the minimax of exact results): ``book prove --doubts`` works through them, each
    a proof on the mover's side that falls short of a proof of the move until every reply is one."""
    replies_legal: int = 0
    """The opponent's legal replies to the move (the swap included where allowed)."""

    @property
    def win_rate(self) -> float:
        """The mover's chance when the opponent does not swap (the opening analysis's number)."""
        if self.proven is not None:
            return 1.0 if self.proven == "win" else 0.0
        return (1 - self.value) / 2

    @property
    def win(self) -> float:
        """The mover's chance after the opponent's best answer, the swap included (``CONVENTION``):
        the number on the pages' boards, in ``serve`` and first in ``book show``."""
        if self.answered_value is None:
            return self.win_rate
        if self.answered_proven is not None:
            return 1.0 if self.answered_proven == "win" else 0.0
        return (1 - self.answered_value) / 2

    @property
    def search_win_rate(self) -> float:
        return (1 - self.search_value) / 2


class LineReader:
    """Book lines as real move names, from a real position."""

    def __init__(self, env: VecEnv, book: Book, canon: Canonical):
        self.env, self.book, self.canon = env, book, canon

    def best_line(self, state: State, key: str, limit: int = 12, skip: set[int] | None = None) -> list[str]:
        """The book's principal line from a position (``skip``: moves not taken at the first node)."""
        names = []
        first = True
        while len(names) < limit and key in self.book.nodes:
            node = self.book.nodes[key]
            best = self.book.best_move(node, skip if first and skip else frozenset())
            first = False
            if best is None:
                break
            k = self.canon.keys(state).symmetry[0]
            real = self.canon.to_real([best], k)[0]
            names.append(self.env.game.action_name(real))
            if best not in node.children:
                break  # the rest's move: the line leaves the book
            state = self.env.step(state, torch.tensor([real], device=self.env.device))
            key = node.children[best]
        return names


def move_table(env: VecEnv, book: Book, start_state: State, truth: dict[str, bool] | None = None) -> list[BookMove]:
    """Every legal move of the start position, strongest first for the player making it."""
    canon = Canonical(env)
    reader = LineReader(env, book, canon)
    start = book.nodes[book.start]
    k = canon.keys(start_state).symmetry[0]
    legal = torch.nonzero(env.legal_mask(start_state)[0]).flatten().tolist()
    swap = env.game.swap_action if env.game.swap else None
    opening = int(start_state.ply[0]) == env.game.first_move_ply
    rows: list[BookMove] = []
    groups: dict[str, int] = {}
    for real in legal:
        canonical = canon.to_canonical([real], k)[0]
        key = start.children.get(canonical)
        if key is None:
            continue  # not in the book yet
        child = book.nodes[key]
        state = env.step(start_state, torch.tensor([real], device=env.device))
        skip = {swap} if swap is not None and child.swap_legal else set()
        value, proof = book.value_without(child, skip)
        name = env.game.action_name(real)
        refuted, replies = _replies_refuted(env, canon, book, state, child)
        rows.append(BookMove(
            move=name, action=real, group=groups.setdefault(key, len(groups)), key=key, value=value,
            search_value=child.first.value, proven=None if not proof else ("loss" if proof > 0 else "win"),
            decided=book.decided(key, exclude=skip), nodes=child.size,
            best_line=reader.best_line(state, key, skip=skip),
            swap=(value < 0) if opening and real != swap else None,
            exact_win=None if truth is None else truth.get(name),
            answered_value=child.value if skip else None,
            answered_proven=None if not child.proven else ("loss" if child.proven > 0 else "win"),
            replies_refuted=refuted, replies_legal=replies))
    rows.sort(key=lambda m: (-m.win, -m.win_rate, m.group, m.action))
    renumber = {g: n for n, g in enumerate(dict.fromkeys(m.group for m in rows))}
    for m in rows:
        m.group = renumber[m.group]
    return rows


def _replies_refuted(env: VecEnv, canon: Canonical, book: Book, state: State, node) -> tuple[int, int]:
    """(replies proven to fail, legal replies) at the position ``state`` ``[1]`` of book node ``node``:
    each real reply counted once, also where a symmetry of the position joins two in one book child."""
    legal = torch.nonzero(env.legal_mask(state)[0]).flatten().tolist()
    k = canon.keys(state).symmetry[0]
    children = (node.children.get(a) for a in canon.to_canonical(legal, k))
    return sum(1 for c in children if c is not None and book.nodes[c].proven > 0), len(legal)


def table_json(rows: list[BookMove], *, game: str, checkpoint: str, digest: str, sims: int, folder: str, nodes: int,
               opening: bool, truth_source: str | None) -> dict:
    def r(x: float) -> float:
        return round(x, 4)

    return {
        "game": game, "checkpoint": checkpoint, "model_digest": digest, "sims": sims, "book": folder,
        "book_nodes": nodes, "truth_source": truth_source,
        "decided": sum(m.decided for m in rows), "proven": sum(m.proven is not None for m in rows),
        "convention": CONVENTION + "; win_rate and search_win_rate: the mover's chance if the opponent does not swap",
        "openings" if opening else "moves": [
            {"move": m.move, "win_percent": round(100 * m.win, 1), "win_rate": r(m.win_rate), "value": r(m.value),
             "minimax_value": r(m.value),
             "search_value": r(m.search_value), "search_win_rate": r(m.search_win_rate), "swap": m.swap,
             "decided": m.decided, "proven": m.proven, "nodes": m.nodes, "best_line": m.best_line, "group": m.group,
             "exact_win": m.exact_win, "replies_refuted": m.replies_refuted, "replies_legal": m.replies_legal}
            for m in rows],
    }


def book_section(rows: list[BookMove], *, folder: str, nodes: int, minutes: float, model: str, sims: int,
                 table_win: dict[str, float] | None = None, pie_rule: bool = True) -> list[str]:
    """The book's first-move table as Markdown (the report's "The opening book"): one row per
    group of symmetric moves, with the single-search table's win % beside it where given
    (``table_win``: move -> the opener's win %, e.g. the report's opening table)."""
    groups: dict[int, list[BookMove]] = {}
    for m in rows:
        groups.setdefault(m.group, []).append(m)
    swap = any(m.swap is not None for m in rows)
    md = ["### The opening book", "",
          f"The book `{folder}` ({nodes} positions, grown with `{model}` for {minutes:.0f} minutes at {sims} "
          "simulations a position; `conhex-zero book show` prints it): each opening's win % for the first player "
          "by the book's minimax" + (" (the second player does not swap)" if pie_rule else "") + ", beside one search of the position"
          + (" and the opening table above" if table_win else "") + "; decided: the book is sure which side wins "
          "(docs/analysis.md, \"The opening book\").", "",
          "| openings | book | one search |" + (" table |" if table_win else "") + " decided | positions |"
          + (" swap |" if swap else "") + " best replies |",
          "|---|---|---|" + ("---|" if table_win else "") + "---|---|" + ("---|" if swap else "") + "---|"]
    differ = []
    for group in groups.values():
        m = group[0]
        decided = f"proven {m.proven}" if m.proven else ("yes" if m.decided else "no")
        row = (f"| {' '.join(x.move for x in group)} | {100 * m.win_rate:.1f}% | {100 * m.search_win_rate:.1f}% |")
        if table_win:
            t = table_win.get(m.move)
            row += f" {'-' if t is None else f'{100 * t:.1f}%'} |"
            if t is not None and (t > 0.5) != (m.win_rate > 0.5):
                differ.append(m)
        row += f" {decided} | {m.nodes} |" + (f" {'yes' if m.swap else 'no'} |" if swap else "")
        row += f" {' '.join(m.best_line[:4])} |"
        md.append(row)
    if table_win:
        md += ["", f"The book and the table put {len(differ)} of {len(groups)} opening groups on different sides of "
               "50%" + (": " + ", ".join(f"{m.move} (book {100 * m.win_rate:.1f}%, table "
                                          f"{100 * table_win[m.move]:.1f}%)" for m in differ) if differ else "") + "."]
    return md + [""]

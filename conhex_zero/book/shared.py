"""Exact results shared: what a solver's table holds for a book's positions (``harvest``: a search's
table settles many positions below the one it was asked about; a saved search file's too), and one
book's exact results copied into another book of the same game (``copy_exact``). A book's key names
its position whatever book it is in, and an exact result is the position's: it carries wherever the
position is, in any of its symmetric images or filled-in forms.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from conhex_zero.book import carried, store
from conhex_zero.book.folder import OpenBook


def parse_key(key: str) -> tuple[int, int, int, int]:
    """A book key's (first player's stones, second's, player to move, empty cells) as bitboards."""
    holes, mover, _swap = key.split("|")
    first = sum(1 << i for i, c in enumerate(holes) if c == "x")
    second = sum(1 << i for i, c in enumerate(holes) if c == "o")
    return first, second, "xo".index(mover), holes.count(".")


Images = tuple[tuple[int, int, int], ...]
"""A position in the solver's form, once per symmetry of the board: (the mover's stones, the
opponent's, the mover)."""


def open_positions(opened: OpenBook, include_exact: bool = False) -> list[tuple[str, Images]]:
    """The book's positions that are not exact yet (``include_exact``: those too; no swap left), each
    with all its images in the solver's form: a search's table holds its positions in the frame of its
    root, which need not be the frame of a book key below it."""
    from conhex_zero.book.keys import Canonical
    from conhex_zero.env.vec_env import VecEnv

    canonical = Canonical(VecEnv(opened.game))
    out = []
    for key, node in sorted(opened.book.nodes.items()):
        if (node.exact and not include_exact) or not key.endswith("|-"):
            continue
        images = set()
        for k in range(len(canonical.tables)):
            images.add(solver_form(canonical.image_key(key, k)))
        out.append((key, tuple(sorted(images))))
    return out


def solver_form(key: str) -> tuple[int, int, int]:
    """A key's position as the solver takes it: (the mover's stones, the opponent's, the mover)."""
    first, second, mover, _ = parse_key(key)
    return (first, second, mover) if mover == 0 else (second, first, mover)


def harvest(solver, positions: list[tuple[str, Images]], skip: str = "") -> dict[str, int]:
    """The exact results ``solver``'s table holds (``NativeHexSolver.known``: the solved entries of its
    searches, or of a table imported into it) for ``positions`` (``open_positions``), ``skip`` left out:
    key -> +1/-1 for the player to move. Every image is looked up: fill-in can make a position that
    lacks the search's first stones one the search met (about 5 microseconds a look-up)."""
    out = {}
    for key, images in positions:
        if key == skip:
            continue
        for image in images:
            known = solver.known(*image)
            if known is not None:
                out[key] = 1 if known else -1
                break
    return out


class Harvester:
    """``harvest`` after a search, at most a tenth of the time: a solver's table keeps every search of
    the run (a worker's: of its searches), so a harvest after a long search takes in what the short ones
    before it settled too."""

    def __init__(self, positions: list[tuple[str, Images]], share: float = 0.1):
        self.positions = positions
        self.share = share
        self.cost = 0.0
        self.last = -math.inf

    def after(self, solver, key: str, force: bool = False) -> dict[str, int]:
        now = time.monotonic()
        if not self.positions or (not force and now - self.last < self.cost / self.share):
            return {}
        found = harvest(solver, self.positions, skip=key)
        self.last = time.monotonic()
        self.cost = self.last - now
        return found


@dataclass
class Copied:
    """What ``copy_exact`` found: the keys it copied (with their results for the mover), the
    positions both books had exact already (agreeing), and those where the books disagree."""

    copied: dict[str, int] = field(default_factory=dict)
    agreed: int = 0
    conflicts: list[tuple[str, int, int]] = field(default_factory=list)
    """(key, the source's result, the target's exact or proven result), each for the mover."""


def copy_exact(source: OpenBook, target: OpenBook) -> Copied:
    """The exact results of ``source`` (another book of the same game) for positions ``target``
    holds too: a book's key names its position whatever book it is in, and an exact result is the
    position's, not the book's. Nothing is written: ``copied`` is what would be new to ``target``;
    ``conflicts`` lists where ``target`` already says the opposite (an exact result, or a value its
    minimax proved), which must not happen between two right solvers. ValueError when the games
    differ."""
    if source.game != target.game:
        raise ValueError(f"{source.folder} is a book of {source.game}, {target.folder} of {target.game}: "
                         f"proofs carry only between books of one game")
    return compare(target, {key: node.exact for key, node in source.book.nodes.items() if node.exact})


def copy_from_table(solver, target: OpenBook) -> Copied:
    """``copy_exact`` for the solved entries of ``solver``'s table (a saved search imported into it):
    every position of ``target`` the table holds solved, in any image or filled-in form."""
    return compare(target, harvest(solver, open_positions(target, include_exact=True)))


def compare(target: OpenBook, results: dict[str, int]) -> Copied:
    """Exact results (key -> +1/-1 for the mover) set against ``target``'s own: new to it, agreeing
    with its exact or proven value, or contradicting it. Keys ``target`` does not hold are left out."""
    out = Copied()
    nodes = target.book.nodes
    for key, result in sorted(results.items()):
        if key not in nodes:
            continue
        known = nodes[key].exact or nodes[key].proven
        if known == result:
            out.agreed += 1
        elif known:
            out.conflicts.append((key, result, known))
        else:
            out.copied[key] = result
    return out


def write_copied(target: OpenBook, copied: dict[str, int]) -> None:
    """Append the copied results to ``target``'s file (sealed, as ``book prove`` appends its own)
    and update its values."""
    if not copied:
        return
    for key in copied:
        carried.forget(target.folder, key)  # a search of a position now exact is of no more use
    store.append(target.folder, [store.exact_entry(key, result) for key, result in sorted(copied.items())])
    apply_copied(target, copied)


def apply_copied(target: OpenBook, copied: dict[str, int]) -> None:
    """The copied results into ``target``'s values in memory only (``write_copied`` stores them too)."""
    for key, result in copied.items():
        target.book.nodes[key].exact = result
    target.book.update()

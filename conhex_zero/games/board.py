"""Graph connection games as data: the static tables every other module reads.

A board is a set of *holes* (the moves) and a set of *cells*. Each cell lists the holes around it and
a threshold ``need``: the first player to hold ``need`` of those holes conquers the cell for good.
Cells are adjacent along an explicit edge list; each player owns two *sides* (sets of cells) and wins
by conquering a chain of adjacent cells that touches both. ConHex (69 holes, 41 cells) and n x n Hex
(holes = cells, ``need`` = 1) are two instances of this one type; nothing downstream special-cases a
game by name.

Symmetries are given as hole permutations; the cell permutation and whether the symmetry exchanges
the players' sides are derived and checked here, so a table with a wrong symmetry cannot be built.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

SIDE_NAMES: tuple[str, ...] = ("top", "bottom", "left", "right")
"""Side names, indexed by side id. Player 0 connects sides 0 and 1, player 1 sides 2 and 3."""

PLAYER_SIDES: tuple[tuple[int, int], tuple[int, int]] = ((0, 1), (2, 3))


class BoardError(ValueError):
    """A board table is inconsistent (a bug in a game definition, never a user error)."""


@dataclass(frozen=True)
class Symmetry:
    """A permutation of the board that keeps the rules.

    ``hole_perm[h]`` is the image of hole ``h``; ``cell_perm[c]`` the image of cell ``c``;
    ``side_perm[s]`` the image of side ``s`` (ids as in ``SIDE_NAMES``). ``exchanges_sides`` is True
    when player 0's sides map onto player 1's (then the symmetry maps a position to the mirror
    position with colours exchanged).
    """

    name: str
    hole_perm: tuple[int, ...]  # [H]
    cell_perm: tuple[int, ...]  # [C]
    side_perm: tuple[int, ...]  # [4]
    exchanges_sides: bool


@dataclass(frozen=True)
class AsciiLayout:
    """Where a terminal picture shows each hole and cell.

    ``lines`` is the empty picture; ``hole_pos[h]`` the (line, column) of hole ``h``'s one-character
    marker; ``cell_pos[c]`` the (line, column) of cell ``c``'s two-character label, or None when cells
    are not drawn separately (Hex, where a cell is its hole).
    """

    lines: tuple[str, ...]
    hole_pos: tuple[tuple[int, int], ...]  # [H]
    cell_pos: tuple[tuple[int, int], ...] | None  # [C]


@dataclass(frozen=True)
class BoardGraph:
    """Static description of a graph connection game board.

    Attributes:
        name: short name, e.g. ``conhex`` or ``hex-11``.
        hole_names: move names, indexed by hole id (= action id).
        hole_xy: drawing coordinates (x to the right, y downwards) of each hole.
        hole_depth: distance of each hole from the board's frame (0 on the frame); the forbidden
            zone option bans holes at depth >= K on the first move.
        cell_holes: for each cell, the ids of its holes.
        cell_need: for each cell, how many of its holes conquer it.
        cell_kind: a descriptive kind per cell (``corner``, ``edge``, ``inner``, ``centre``, ``cell``).
        cell_sides: for each cell, the side ids (see ``SIDE_NAMES``) it lies on.
        adjacency: cell adjacency as sorted pairs ``(i, j)`` with ``i < j``.
        symmetry_hole_perms: (name, hole permutation) pairs; the identity must come first.
        swap_symmetry: name of the side-exchanging symmetry used by the swap (pie) rule.
        ascii: terminal picture layout.
    """

    name: str
    hole_names: tuple[str, ...]
    hole_xy: tuple[tuple[float, float], ...]
    hole_depth: tuple[int, ...]
    cell_holes: tuple[tuple[int, ...], ...]
    cell_need: tuple[int, ...]
    cell_kind: tuple[str, ...]
    cell_sides: tuple[tuple[int, ...], ...]
    adjacency: tuple[tuple[int, int], ...]
    symmetry_hole_perms: tuple[tuple[str, tuple[int, ...]], ...]
    swap_symmetry: str
    ascii: AsciiLayout = field(repr=False)

    def __post_init__(self) -> None:
        self._validate()

    # ------------------------------------------------------------------ sizes
    @property
    def num_holes(self) -> int:
        return len(self.hole_names)

    @property
    def num_cells(self) -> int:
        return len(self.cell_holes)

    @property
    def hole_word(self) -> str:
        """What a player calls a place for a piece, in messages: ``cell`` on Hex (whose cells are
        the places), ``hole`` on ConHex."""
        return "cell" if self.name.startswith("hex") else "hole"

    # ------------------------------------------------------------ dense tables
    @cached_property
    def incidence(self) -> np.ndarray:
        """``[C, H]`` bool: cell ``c`` has hole ``h``."""
        m = np.zeros((self.num_cells, self.num_holes), dtype=bool)
        for c, holes in enumerate(self.cell_holes):
            m[c, list(holes)] = True
        return m

    @cached_property
    def adjacency_matrix(self) -> np.ndarray:
        """``[C, C]`` bool, symmetric, no self loops."""
        a = np.zeros((self.num_cells, self.num_cells), dtype=bool)
        for i, j in self.adjacency:
            a[i, j] = a[j, i] = True
        return a

    @cached_property
    def side_masks(self) -> np.ndarray:
        """``[4, C]`` bool: cell lies on side ``s``."""
        m = np.zeros((len(SIDE_NAMES), self.num_cells), dtype=bool)
        for c, sides in enumerate(self.cell_sides):
            m[list(sides), c] = True
        return m

    @cached_property
    def hole_cells(self) -> tuple[tuple[int, ...], ...]:
        """For each hole, the cells that contain it."""
        out: list[list[int]] = [[] for _ in range(self.num_holes)]
        for c, holes in enumerate(self.cell_holes):
            for h in holes:
                out[h].append(c)
        return tuple(tuple(cs) for cs in out)

    @cached_property
    def neighbours(self) -> tuple[tuple[int, ...], ...]:
        """For each cell, its adjacent cells."""
        out: list[list[int]] = [[] for _ in range(self.num_cells)]
        for i, j in self.adjacency:
            out[i].append(j)
            out[j].append(i)
        return tuple(tuple(sorted(n)) for n in out)

    @cached_property
    def symmetries(self) -> tuple[Symmetry, ...]:
        """All symmetries with derived cell permutations and side behaviour."""
        return tuple(self._derive_symmetry(n, p) for n, p in self.symmetry_hole_perms)

    def symmetry(self, name: str) -> Symmetry:
        for s in self.symmetries:
            if s.name == name:
                return s
        raise KeyError(f"{self.name} has no symmetry {name!r}")

    @cached_property
    def hole_index(self) -> dict[str, int]:
        """Lower-cased hole name -> hole id."""
        return {n.lower(): i for i, n in enumerate(self.hole_names)}

    # ------------------------------------------------------------- validation
    def _derive_symmetry(self, name: str, hole_perm: tuple[int, ...]) -> Symmetry:
        by_holes = {frozenset(hs): c for c, hs in enumerate(self.cell_holes)}
        cell_perm = []
        for c, hs in enumerate(self.cell_holes):
            image = frozenset(hole_perm[h] for h in hs)
            if image not in by_holes:
                raise BoardError(f"{self.name}: symmetry {name} maps cell {c} onto no cell")
            cell_perm.append(by_holes[image])
        if sorted(cell_perm) != list(range(self.num_cells)):
            raise BoardError(f"{self.name}: symmetry {name} is not a cell permutation")
        adj = {frozenset(p) for p in self.adjacency}
        for i, j in self.adjacency:
            if frozenset((cell_perm[i], cell_perm[j])) not in adj:
                raise BoardError(f"{self.name}: symmetry {name} breaks the adjacency of {i}-{j}")
        for c in range(self.num_cells):
            if self.cell_need[cell_perm[c]] != self.cell_need[c]:
                raise BoardError(f"{self.name}: symmetry {name} changes the need of cell {c}")
        # Each side must map onto a whole side; find out which.
        side_sets = [frozenset(np.flatnonzero(m).tolist()) for m in self.side_masks]
        side_image = []
        for s, cells in enumerate(side_sets):
            image = frozenset(cell_perm[c] for c in cells)
            if image not in side_sets:
                raise BoardError(f"{self.name}: symmetry {name} maps side {SIDE_NAMES[s]} onto no side")
            side_image.append(side_sets.index(image))
        owner = [0, 0, 1, 1]
        keeps = all(owner[side_image[s]] == owner[s] for s in range(4))
        swaps = all(owner[side_image[s]] != owner[s] for s in range(4))
        if not (keeps or swaps):
            raise BoardError(f"{self.name}: symmetry {name} mixes the players' sides")
        return Symmetry(name, tuple(hole_perm), tuple(cell_perm), tuple(side_image), exchanges_sides=swaps)

    def _validate(self) -> None:
        H, C = self.num_holes, self.num_cells
        if len(set(n.lower() for n in self.hole_names)) != H:
            raise BoardError(f"{self.name}: duplicate hole names")
        for name, seq in (("hole_xy", self.hole_xy), ("hole_depth", self.hole_depth),
                          ("ascii.hole_pos", self.ascii.hole_pos)):
            if len(seq) != H:
                raise BoardError(f"{self.name}: {name} has {len(seq)} entries, expected {H}")
        for name, seq in (("cell_need", self.cell_need), ("cell_kind", self.cell_kind),
                          ("cell_sides", self.cell_sides)):
            if len(seq) != C:
                raise BoardError(f"{self.name}: {name} has {len(seq)} entries, expected {C}")
        for c, holes in enumerate(self.cell_holes):
            if not holes or len(set(holes)) != len(holes) or not all(0 <= h < H for h in holes):
                raise BoardError(f"{self.name}: cell {c} has a bad hole list {holes}")
            if not 1 <= self.cell_need[c] <= len(holes):
                raise BoardError(f"{self.name}: cell {c} needs {self.cell_need[c]} of {len(holes)}")
        if any(not cs for cs in self.hole_cells):
            raise BoardError(f"{self.name}: a hole lies on no cell")
        for i, j in self.adjacency:
            if not 0 <= i < j < C:
                raise BoardError(f"{self.name}: bad adjacency pair ({i}, {j})")
        if len(set(self.adjacency)) != len(self.adjacency):
            raise BoardError(f"{self.name}: duplicate adjacency pairs")
        for s in range(len(SIDE_NAMES)):
            if not self.side_masks[s].any():
                raise BoardError(f"{self.name}: side {SIDE_NAMES[s]} has no cells")
        if self.ascii.cell_pos is not None and len(self.ascii.cell_pos) != C:
            raise BoardError(f"{self.name}: ascii.cell_pos needs {C} entries")
        names = [n for n, _ in self.symmetry_hole_perms]
        if not names or self.symmetry_hole_perms[0][1] != tuple(range(H)):
            raise BoardError(f"{self.name}: the first symmetry must be the identity")
        for n, perm in self.symmetry_hole_perms:
            if sorted(perm) != list(range(H)):
                raise BoardError(f"{self.name}: symmetry {n} is not a hole permutation")
        if self.swap_symmetry not in names:
            raise BoardError(f"{self.name}: unknown swap symmetry {self.swap_symmetry}")
        if not self.symmetry(self.swap_symmetry).exchanges_sides:
            raise BoardError(f"{self.name}: the swap symmetry must exchange the sides")


def adjacency_from_shared_holes(cell_holes: tuple[tuple[int, ...], ...]) -> tuple[tuple[int, int], ...]:
    """Cell pairs that share at least one hole (ConHex's adjacency)."""
    sets = [set(hs) for hs in cell_holes]
    return tuple((i, j) for i in range(len(sets)) for j in range(i + 1, len(sets)) if sets[i] & sets[j])

"""Proven value targets: late Hex positions learn their exact result, not their game's outcome.

A recorded position's value target is the outcome of the game it came from: right when both sides
played well from there, wrong when the loser of the position won because the winner erred later
(a 32-simulation search does, and a game played from a lost position teaches the network that it
was won). On Hex, the exact solver (``analysis.solver``) settles late positions in milliseconds: its
virtual connections (bridges, the ziggurat) and must-play rule prove the result of a 7x7 position
with 20-26 empty cells after a few hundred nodes. ``ProvenTargets`` looks, once, at every position
whose targets have come in (``ReplayBuffer.ready``) and that has at most ``max_empty`` empty cells,
solves it within a budget of ``max_nodes`` positions and, where the solver finishes, replaces the
value target with the exact result for the player to move (+1 wins, -1 loses). Where it does not
finish, the outcome stays. The ownership target (the game's final owners) is left as played.

Only plain Hex rules (the swap rule and random opening stones allowed; positions up to the swap's
ply are skipped, since the solver knows no swap): ``check_game`` says why not otherwise. The labels
are computed between self-play and learning, on the host (a few host reads per iteration, none per
self-play step); the solver's transposition table is kept between iterations and cleared when it
holds more than ``TABLE_LIMIT`` entries.

``solver="native"`` uses the C solver instead (``analysis.native_solver``, Hex up to 8x8): fill-in of
dead and captured cells, then H-search's full and semi connections at every node, so it settles
middle-game positions (an 8x8 position with 40-50 empty cells within a few thousand expansions) that
the Python solver's bridges and ziggurats do not reach; its budget counts expansions, each dearer
than a Python node. Its table (``NATIVE_TABLE_BITS``) lives in the C library and replaces old entries
itself.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from conhex_zero.analysis.solver import HexSolver, SolverError, stone_masks
from conhex_zero.games.game import Game
from conhex_zero.train.replay import ReplayBuffer

if TYPE_CHECKING:
    from conhex_zero.analysis.native_solver import NativeHexSolver

SOLVERS = ("python", "native")
"""``selfplay.proven_solver``'s choices."""

NATIVE_TABLE_BITS = 20
"""The native solver's table in self-play: 2^20 entries (tens of MB), kept between iterations."""

TABLE_LIMIT = 2_000_000
"""Solver table entries kept between iterations (about 0.3 GB of Python integers)."""


class ProvenTargetsError(ValueError):
    """The game is not one the exact solver's results hold for."""


def check_game(game: Game, solver: str = "python") -> None:
    """``ProvenTargetsError`` unless the exact solver's results are the game's (plain Hex) and
    ``solver`` (one of ``SOLVERS``) can run here."""
    if solver not in SOLVERS:
        raise ProvenTargetsError(f"unknown solver {solver!r}: choose {' or '.join(SOLVERS)}")
    if game.forbid_depth is not None or game.extra_stone or game.mirror is not None:
        raise ProvenTargetsError("proven targets need plain Hex rules: the exact solver knows no forbid, "
                                 "extra-stone or mirror rule")
    try:
        HexSolver(game.board, max_holes=game.num_holes, book=False)
    except SolverError as err:
        raise ProvenTargetsError(f"proven targets need a Hex board: {err}") from None
    if solver == "native":
        _native_solver(game)


def _native_solver(game: Game) -> NativeHexSolver:
    """The C solver for the game's board, or ``ProvenTargetsError`` saying why not (board too big,
    no C compiler)."""
    from conhex_zero.analysis.native_solver import NativeHexSolver

    try:
        return NativeHexSolver(game.board, table_bits=NATIVE_TABLE_BITS)
    except SolverError as err:  # NativeSolverUnavailable is one
        raise ProvenTargetsError(f"the native solver: {err}") from None


@dataclass
class ProvenStats:
    """What one pass found: positions looked at, in range, solved, and those whose target changed."""

    examined: int = 0
    in_range: int = 0
    solved: int = 0
    changed: int = 0
    seconds: float = 0.0

    def metrics(self) -> dict[str, float]:
        out = {"proven/examined": self.examined, "proven/solved": self.solved, "proven/changed": self.changed,
               "proven/seconds": self.seconds}
        if self.in_range:
            out["proven/solved_share"] = self.solved / self.in_range
        if self.solved:
            out["proven/changed_share"] = self.changed / self.solved
        return out


class ProvenTargets:
    """Exact value targets for the late positions of a replay buffer (see the module docstring)."""

    def __init__(self, game: Game, max_empty: int, max_nodes: int, solver: str = "python"):
        check_game(game, solver)
        self.game, self.max_empty, self.max_nodes = game, max_empty, max_nodes
        if solver == "native":
            self.solver = _native_solver(game)
        else:
            self.solver = HexSolver(game.board, max_holes=game.num_holes, book=False)
        swap_ply = game.swap_ply
        self.first_ply = 0 if swap_ply is None else swap_ply + 1  # positions before it may still swap

    def relabel(self, replay: ReplayBuffer) -> ProvenStats:
        """Solve every ready, not yet examined row with at most ``max_empty`` empty cells; set the
        value target of those solved to the exact result for their player to move."""
        clock = time.perf_counter()
        stats = ProvenStats()
        fresh = replay.ready & ~replay.examined  # [R + 1]
        fresh[replay.dump_row] = False
        rows = fresh.nonzero().flatten()  # [M]
        stats.examined = int(rows.numel())
        if not stats.examined:
            return stats
        replay.examined.index_fill_(0, rows, True)
        holes = replay.store["holes"].index_select(0, rows)  # [M, H] int8: -1 empty, 0, 1
        ply = replay.store["ply"].index_select(0, rows).long()  # [M]
        empty = (holes < 0).sum(1)  # [M]
        keep = (empty <= self.max_empty) & (ply >= self.first_ply)
        rows, holes = rows[keep], holes[keep]
        to_move = replay.store["to_move"].index_select(0, rows).tolist()
        old = replay.value.index_select(0, rows).tolist()
        stats.in_range = int(rows.numel())
        solved_rows, solved_values = [], []
        for row, cells, mover, before in zip(rows.tolist(), holes.tolist(), to_move, old):
            winner = self.solver.winner_within(*stone_masks(cells), int(mover), self.max_nodes)
            if winner is None:
                continue
            value = 1 if winner == mover else -1
            solved_rows.append(row)
            solved_values.append(value)
            stats.changed += value != before
        if isinstance(self.solver, HexSolver) and len(self.solver.table) > TABLE_LIMIT:
            self.solver.table.clear()
        stats.solved = len(solved_rows)
        if solved_rows:
            index = torch.tensor(solved_rows, dtype=torch.long, device=replay.device)
            replay.value.index_copy_(0, index, torch.tensor(solved_values, dtype=torch.int8, device=replay.device))
        stats.seconds = time.perf_counter() - clock
        return stats

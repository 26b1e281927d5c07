"""The native Hex solver: H-search and proof-number search in C, for Hex boards up to 8 x 8.

``hexsolve.c`` with ``hsearch.h`` and ``hexfill.h`` (beside this module; its header comment says what it computes and why it is exact)
is compiled at first use with the system's C compiler into a cache folder (``CONHEX_ZERO_CACHE``,
else ``~/.cache/conhex-zero``), keyed by the source's digest, and called through ``ctypes``: no
Python headers, nothing at install time. Where no compiler is found, ``NativeSolverUnavailable``
says so and the pure-Python ``analysis.solver.HexSolver`` (5 x 5 at most) is what remains.

``NativeHexSolver`` has the pure solver's interface (``winner``, ``winner_within``,
``state_winners``, ``opening_truths``) and a node budget on every call, so a book can ask for proofs
of its positions at a bounded cost. Its verdicts are exact or absent, never guessed: the tests check
them against the pure solver and a brute-force one on 3 x 3 to 5 x 5, on thousands of positions.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from conhex_zero.analysis.solver import HexSolver, OpeningTruth, SolverError, batch_winners
from conhex_zero.env.state import State
from conhex_zero.games.board import BoardGraph

SOURCE = Path(__file__).with_name("hexsolve.c")
INCLUDED = tuple(Path(__file__).with_name(name) for name in ("hsearch.h", "hexfill.h"))
"""The parts ``hexsolve.c`` includes (H-search, fill-in): one translation unit, one digest."""
MAX_NATIVE_HOLES = 64
SAVED_ENTRIES = 1 << 18
"""Table entries a search cut short keeps for a later run (48 bytes each: 12 MiB before compression,
about 1.8 MB in the book with xz, ``book/carried.py``). The more are kept, the less of the search the
next run does again: Hex 7x7 g2 cut at 240,000 expansions (474,129 uninterrupted) needed 378,993 more with 349 entries kept,
324,505 with 3,825, 271,865 with 24,836 and 230,753 with 55,124 (docs/knowledge.md); an 8x8 search's
table holds tens of millions, so 2**16 kept lost much of what a run had done."""
TABLE_BITS = 22
"""log2 of the transposition table's entries (48 bytes each: 2**22 is 192 MiB)."""


class NativeSolverUnavailable(SolverError):
    """The C solver cannot be built here (no C compiler, or the build failed)."""


def cache_folder() -> Path:
    return Path(os.environ.get("CONHEX_ZERO_CACHE") or Path.home() / ".cache" / "conhex-zero")


def compile_flags() -> list[str]:
    """-O2, and on x86-64 the popcount instruction (every x86-64 processor since 2008 has it; without
    it each count is a library call, 8% of a 7 x 7 search)."""
    return ["-O2", "-mpopcnt"] if platform.machine().lower() in ("x86_64", "amd64") else ["-O2"]


def build_library() -> Path:
    """The compiled solver, built once per source digest (a file lock-free rename keeps concurrent
    builds, such as test workers', from reading half a file)."""
    try:
        source = b"".join(path.read_bytes() for path in (SOURCE, *INCLUDED))
    except OSError as err:
        raise NativeSolverUnavailable(f"the native Hex solver's source {err.filename} cannot be read ({err.strerror}): "
                                      f"reinstall the package") from None
    flags = compile_flags()
    digest = hashlib.sha256(source + " ".join(flags).encode()).hexdigest()[:16]
    folder = cache_folder()
    target = folder / f"hexsolve-{digest}.so"
    if target.is_file():
        return target
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        raise NativeSolverUnavailable("no C compiler found (cc, gcc or clang; or set CC): the native "
                                      "Hex solver is unavailable, the pure-Python one handles up to 5 x 5")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, suffix=".so", delete=False) as tmp:
            partial = Path(tmp.name)
    except OSError as err:
        raise NativeSolverUnavailable(f"cannot write the native Hex solver into {folder} ({err.strerror}): set "
                                      f"CONHEX_ZERO_CACHE to a writable folder") from None
    try:
        try:
            done = subprocess.run([compiler, *flags, "-shared", "-fPIC", "-o", str(partial), str(SOURCE)],
                                  capture_output=True, text=True)
        except OSError as err:
            raise NativeSolverUnavailable(f"the C compiler {compiler} could not be run ({err.strerror}): the native "
                                          f"Hex solver is unavailable") from None
        if done.returncode != 0:
            raise NativeSolverUnavailable(f"building the native Hex solver with {compiler} failed:\n"
                                          f"{done.stderr.strip()[-2000:]}")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


_library: ctypes.CDLL | None = None
_active: tuple | None = None  # the board the library's tables hold (hs_init resets them)


def _load() -> ctypes.CDLL:
    global _library
    if _library is None:
        lib = ctypes.CDLL(str(build_library()))
        u64p = ctypes.POINTER(ctypes.c_uint64)
        lib.hs_init.argtypes = [ctypes.c_int, u64p, u64p, ctypes.c_int]
        lib.hs_init.restype = ctypes.c_int
        lib.hs_solve.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int, ctypes.c_long, ctypes.c_double,
                                 u64p, ctypes.POINTER(ctypes.c_long)]
        lib.hs_solve.restype = ctypes.c_int
        lib.hs_connection.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int, u64p]
        lib.hs_connection.restype = ctypes.c_int
        lib.hs_evaluations.restype = ctypes.c_long
        lib.hs_set_budget.argtypes = [ctypes.c_long]
        lib.hs_set_cell_carriers.argtypes = [ctypes.c_int]
        lib.hs_set_limits.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.hs_clear.restype = None
        lib.hs_stop.argtypes = [ctypes.c_int]
        lib.hs_stop.restype = None
        lib.hs_set_fill.argtypes = [ctypes.c_int]
        lib.hs_known.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int]
        lib.hs_known.restype = ctypes.c_int
        lib.hs_fill.argtypes = [u64p, u64p, ctypes.c_int]
        lib.hs_fill.restype = None
        lib.hs_fill_cells.restype = ctypes.c_long
        lib.hs_saved_size.restype = ctypes.c_int
        lib.hs_export.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int]
        lib.hs_export.restype = ctypes.c_long
        lib.hs_import.argtypes = [ctypes.c_void_p, ctypes.c_long]
        lib.hs_import.restype = None
        lib.hs_entry.argtypes = [ctypes.c_long, u64p]
        lib.hs_entry.restype = ctypes.c_int
        lib.hs_vulnerable.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int, ctypes.c_uint64, u64p]
        lib.hs_vulnerable.restype = ctypes.c_uint64
        lib.hs_set_prune.argtypes = [ctypes.c_int]
        lib.hs_set_prune.restype = None
        lib.hs_dominated.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int, ctypes.c_uint64, u64p]
        lib.hs_dominated.restype = ctypes.c_uint64
        lib.hs_set_dominate.argtypes = [ctypes.c_int]
        lib.hs_set_dominate.restype = None
        lib.hs_set_through_sides.argtypes = [ctypes.c_int]
        lib.hs_set_through_sides.restype = None
        lib.hs_dominated_count.restype = ctypes.c_long
        lib.hs_pruned.restype = ctypes.c_long
        lib.hs_verdicts.argtypes = [ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                    ctypes.c_void_p, ctypes.c_void_p]
        lib.hs_verdicts.restype = None
        lib.hs_verdict_calls.restype = ctypes.c_long
        lib.hs_verdict_hits.restype = ctypes.c_long
        _library = lib
    return _library


class NativeHexSolver:
    """Exact game values of Hex positions (boards up to 8 x 8), each call within a node budget.

    ``table_bits``: log2 of the transposition table's entries. The table lives in the C library
    (one per process) and is kept between calls on the same board, so what one call proved the next
    reuses; a solver for another board (or another table size) resets it.

    H-search's settings (each sound; they trade what it finds for its time): ``cell_carriers``,
    the most cells a connection between two empty cells may need (None: any; 2, the default, keeps
    bridges and their semi connections and is about four times faster on 7 x 7 than None);
    ``list_limits``, the full and semi connections kept per pair and the OR rule's depth;
    ``through_sides``, the AND rule over a side as the middle (off by default: about three times faster on
    Hex 7x7 openings with the same connections between the sides; ``hsearch.h``).
    ``fill_in``: inferior-cell analysis (cells of no use to a player and captured pairs filled in
    before a position is searched; ``fill``); off, the search is the plain one.
    ``prune_vulnerable``: a move the opponent can make useless with one reply (its killer) is left
    out, and a position whose other moves all lose is lost, the killers joining its proof set
    (``hexfill.h`` has the argument); off, every move of the must-play region is searched.
    ``prune_dominated``: a move whose every neighbour (empty cell, own group, own side) is another
    kept move or a neighbour of it is left out (that move wins whenever it does), and the loss proof
    keeps the dominating move (``hexfill.h``, ``dominated_moves``); off, it is searched.

    A call runs in a worker thread, so Ctrl-C in the main thread stops the C search within 64
    expansions (``KeyboardInterrupt`` is raised again once it has stopped).
    """

    def __init__(self, board: BoardGraph, table_bits: int = TABLE_BITS, cell_carriers: int | None = 2,
                 list_limits: tuple[int, int, int] = (10, 16, 4), fill_in: bool = True,
                 prune_vulnerable: bool = True, prune_dominated: bool = True, through_sides: bool = False):
        self.geometry = HexSolver(board, max_holes=MAX_NATIVE_HOLES, book=False)  # checks it is Hex
        self.size = self.geometry.size
        self.table_bits = table_bits
        self.settings = (cell_carriers, *list_limits, bool(fill_in), bool(prune_vulnerable),
                         bool(prune_dominated), bool(through_sides))
        self.lib = _load()
        self.neighbours = [self.geometry._dilate(1 << i) & ~(1 << i) for i in range(self.size)]
        self.sides = [mask for pair in self.geometry.player_sides for mask in pair]
        self.nodes = 0  # node expansions of the last call
        self._activate()

    def _key(self) -> tuple:
        return (self.size, tuple(self.neighbours), tuple(self.sides), self.table_bits, self.settings)

    def _activate(self, any_table: bool = False) -> None:
        """Load this solver's board and settings into the library (which resets its table) unless
        they are loaded; ``any_table``: a call that uses no table accepts one of any size."""
        global _active
        key = self._key()
        if any_table and _active is not None and _active[:3] + _active[4:] == key[:3] + key[4:]:
            return
        if _active != key:
            restrict, fc, sc, depth, fill, prune, dominate, sides = self.settings
            self.lib.hs_set_cell_carriers(-1 if restrict is None else restrict)
            self.lib.hs_set_fill(int(fill))
            self.lib.hs_set_prune(int(prune))
            self.lib.hs_set_dominate(int(dominate))
            self.lib.hs_set_through_sides(int(sides))
            self.lib.hs_set_limits(fc, sc, depth)
            nb = (ctypes.c_uint64 * 64)(*self.neighbours)
            sides = (ctypes.c_uint64 * 4)(*self.sides)
            if self.lib.hs_init(self.size, nb, sides, self.table_bits) != 0:
                raise NativeSolverUnavailable(f"the native solver could not allocate 2**{self.table_bits} table entries")
            _active = key

    def prove(self, mine: int, theirs: int, player: int, max_nodes: int | None = None,
              max_seconds: float | None = None) -> tuple[bool, int] | None:
        """``(player to move wins, proof set)``, or None when ``max_nodes`` expansions or
        ``max_seconds`` did not settle it."""
        self._activate()
        proof, spent = ctypes.c_uint64(0), ctypes.c_long(0)
        limit = (1 << 62) if max_nodes is None else max(1, int(max_nodes))
        seconds = 0.0 if max_seconds is None else max(1e-3, float(max_seconds))
        outcome: list[int] = []
        finished = threading.Event()  # not Thread.join: an interrupted join can report a live thread dead

        def solve() -> None:
            try:
                outcome.append(self.lib.hs_solve(mine, theirs, player, limit, seconds, ctypes.byref(proof),
                                                 ctypes.byref(spent)))
            finally:
                finished.set()

        self.lib.hs_stop(0)
        threading.Thread(target=solve, daemon=True).start()
        interrupted = False
        while not finished.is_set():
            try:
                finished.wait(0.2)
            except KeyboardInterrupt:
                interrupted = True
                self.lib.hs_stop(1)  # the C search ends within 64 expansions; wait for it (the library is shared)
        if interrupted:
            self.nodes = spent.value
            raise KeyboardInterrupt
        self.nodes = spent.value
        return None if outcome[0] < 0 else (outcome[0] == 1, proof.value)

    @property
    def entry_bytes(self) -> int:
        """The size of one saved table entry (``export_table``)."""
        return int(self.lib.hs_saved_size())

    def export_table(self, most: int = SAVED_ENTRIES, below: tuple[int, int, int] = (0, 0, 0)) -> bytes:
        """The table's entries with the most work below them (at most ``most``), as bytes that
        ``import_table`` takes back, here or in a later process on the same board: a search cut
        short goes on where it stopped instead of from nothing. ``below``: ``(mine, theirs,
        player)`` of a search's root, to keep only the positions below it (the default: all)."""
        self._activate()
        size = self.lib.hs_saved_size()
        buffer = ctypes.create_string_buffer(size * max(1, most))
        mine, theirs, player = below
        count = self.lib.hs_export(buffer, most, mine, theirs, player)
        return buffer.raw[: size * count]

    def import_table(self, data: bytes) -> int:
        """Entries from ``export_table`` into the table; returns their count (ValueError when
        ``data`` is not a whole number of entries)."""
        self._activate()
        size = self.lib.hs_saved_size()
        if len(data) % size:
            raise ValueError(f"saved solver entries are {size} bytes each; {len(data)} bytes is not a whole number of them")
        count = len(data) // size
        self.lib.hs_import(ctypes.create_string_buffer(data, len(data)), count)
        return count

    def solved_entries(self) -> list[tuple[int, int, int, bool, int]]:
        """Every solved position in the table: ``(mine, theirs, player, mover wins, proof set)``
        (filled positions, as the search stores them; for tests of the proofs it made)."""
        self._activate()
        out = (ctypes.c_uint64 * 4)()
        found = []
        for i in range(1 << self.table_bits):
            won = self.lib.hs_entry(i, out)
            if won >= 0:
                found.append((out[0], out[1], int(out[2]), bool(won), out[3]))
        return found

    def verdicts(self, mine: np.ndarray, theirs: np.ndarray, player: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(verdict [B] int8, moves [B] uint64)`` for a batch of positions (bitboards of the mover's
        and the opponent's stones, ``uint64``; the mover's player index): each filled in and evaluated
        as the search evaluates a node, without search and without the table (a solver's table
        loaded for the same board stays). ``verdict``: 1 the mover wins, -1 it loses, 0 not known;
        ``moves``: where not known, the moves worth trying (the must-play region less the vulnerable
        moves: whenever the mover wins, one of them wins), else 0."""
        self._activate(any_table=True)
        mine = np.ascontiguousarray(mine, dtype=np.uint64)
        theirs = np.ascontiguousarray(theirs, dtype=np.uint64)
        player = np.ascontiguousarray(player, dtype=np.int32)
        n = len(mine)
        verdict = np.zeros(n, np.int8)
        moves = np.zeros(n, np.uint64)
        if n:
            self.lib.hs_verdicts(n, mine.ctypes.data, theirs.ctypes.data, player.ctypes.data,
                                 verdict.ctypes.data, moves.ctypes.data)
        return verdict, moves

    def verdict_counts(self) -> tuple[int, int]:
        """``(positions, cache hits)``: what ``verdicts`` was asked in this process, and how many its
        cache answered (the cache holds 2^18 positions and is cleared when another board or other
        settings are loaded)."""
        return int(self.lib.hs_verdict_calls()), int(self.lib.hs_verdict_hits())

    def vulnerable(self, mine: int, theirs: int, player: int) -> dict[int, int]:
        """The mover's vulnerable moves: ``{hole: killer}``, each move of no use to the mover once
        the opponent holds its killer (the search leaves them out; ``hexfill.h``)."""
        self._activate()
        killers = (ctypes.c_uint64 * 64)()
        mask = self.lib.hs_vulnerable(mine, theirs, player, (1 << self.size) - 1, killers)
        return {x: killers[x].bit_length() - 1 for x in range(self.size) if mask >> x & 1}

    def dominated(self, mine: int, theirs: int, player: int) -> dict[int, int]:
        """The mover's dominated moves: ``{hole: dominating hole}``, among the moves that are not
        vulnerable (the search leaves them out; ``hexfill.h``, ``dominated_moves``)."""
        self._activate()
        dominators = (ctypes.c_uint64 * 64)()
        mask = self.lib.hs_dominated(mine, theirs, player, (1 << self.size) - 1, dominators)
        return {x: dominators[x].bit_length() - 1 for x in range(self.size) if mask >> x & 1}

    def fill(self, mine: int, theirs: int, player: int) -> tuple[int, int]:
        """``(mine, theirs)`` after fill-in: the cells of no use to one player given to the other,
        and captured pairs to their captor (each keeps the position's value)."""
        self._activate()
        a, b = ctypes.c_uint64(mine), ctypes.c_uint64(theirs)
        self.lib.hs_fill(ctypes.byref(a), ctypes.byref(b), player)
        return a.value, b.value

    def known(self, mine: int, theirs: int, player: int) -> bool | None:
        """What this solver's table holds on the position (the mover, ``player``, owns ``mine``): True
        the mover wins, False it loses (exact: a solved entry of a search, or of an imported table),
        None not solved there. Searches nothing."""
        self._activate()
        known = self.lib.hs_known(mine, theirs, player)
        return None if known < 0 else bool(known)

    def connection(self, mine: int, theirs: int, player: int) -> tuple[int, int]:
        """``(2 full / 1 semi / 0 none, carrier)``: H-search's verdict on ``player``'s two sides."""
        self._activate()
        carrier = ctypes.c_uint64(0)
        kind = self.lib.hs_connection(mine, theirs, player, ctypes.byref(carrier))
        return kind, carrier.value

    def winner_within(self, first: int, second: int, to_move: int, max_nodes: int | None,
                      max_seconds: float | None = None) -> int | None:
        """The perfect-play winner (0 or 1) from a position, or None when the budget did not settle it."""
        if self.geometry.connected(first, 0):
            return 0
        if self.geometry.connected(second, 1):
            return 1
        mine, theirs = (first, second) if to_move == 0 else (second, first)
        result = self.prove(mine, theirs, to_move, max_nodes, max_seconds)
        if result is None:
            return None
        return to_move if result[0] else 1 - to_move

    def winner(self, first: int, second: int, to_move: int) -> int:
        result = self.winner_within(first, second, to_move, None)
        assert result is not None
        return result

    def opening_truths(self, max_nodes: int | None = None,
                       progress: Callable[[int], None] | None = None) -> list[OpeningTruth | None]:
        """For every first move, whether the first player wins (second to move, no swap); None where
        the budget did not settle it. An opening and its half turn share one search."""
        wins: dict[int, bool | None] = {}
        if progress is not None:
            progress(0)
        for a in range(self.size):
            twin = self.size - 1 - a
            if twin in wins:
                wins[a] = wins[twin]
            else:
                w = self.winner_within(1 << a, 0, 1, max_nodes)
                wins[a] = None if w is None else w == 0
            if progress is not None:
                progress(a + 1)
        return [None if wins[a] is None else OpeningTruth(a, bool(wins[a])) for a in range(self.size)]

    def state_winners(self, state: State, progress: Callable[[int], None] | None = None,
                      max_nodes: int | None = None) -> torch.Tensor:
        """``[B]`` the winner of every position of an engine batch, -1 where ``max_nodes`` did not settle it."""
        return batch_winners(state, lambda first, second, to_move: self.winner_within(first, second, to_move, max_nodes),
                             progress)

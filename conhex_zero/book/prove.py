"""Proofs at a Hex book's positions: the native solver's exact results written into the book.

A book's values are its network's and its searches' estimates; where the native solver
(``analysis.native_solver``: H-search and proof-number search) settles a position within a node
budget, the book gets an ``exact`` line for it, which its minimax treats as it treats every proof:
exact, never replaced by an estimate, and carried up to the positions above (a position is won
when one move reaches a lost one; lost when every move is proven to lose). The first-move table's
openings become decided where they are proven, whatever the network believed.

Positions are tried shallowest first (the openings, then the replies; the start last), each with
the same budget, until a deadline; results are appended (sealed) in batches, so a run stopped at any moment keeps
what it proved. Positions where the swap is still legal are skipped (the solver plays Hex without
the pie rule). After a search, the other book positions its table holds solved get their exact
results too (``book.shared.harvest``).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from conhex_zero.book import carried, store
from conhex_zero.book.folder import OpenBook
from conhex_zero.book.hints import best_move_position
from conhex_zero.book.proof_queue import ProofQueue
from conhex_zero.book.shared import Harvester, Images, open_positions, parse_key

SAVE_EVERY_SECONDS = 600.0
"""A kept search is saved this often while it runs (a killed run loses at most this much)."""


@dataclass(frozen=True)
class Keep:
    """Searches carried between runs (``book/carried.py``): a search cut short after running at
    least ``after_seconds`` of CPU time in this run is saved into the book folder, and loaded by the next
    run; the CPU seconds it cost are added up in the saved file."""

    folder: Path
    after_seconds: float = 300.0
    every_seconds: float = SAVE_EVERY_SECONDS


def key_depth(key: str) -> int:
    """Pieces on the board: the position's ply from the empty board."""
    holes = key.split("|")[0]
    return len(holes) - holes.count(".")


@dataclass
class ProveReport:
    """What one run proved, by depth (pieces on the board)."""

    tried: dict[int, int] = field(default_factory=dict)
    proved: dict[int, int] = field(default_factory=dict)
    seconds: float = 0.0
    stopped: str = ""
    cut: int = 0
    """Searches the deadline cut short (neither tried nor proved; the positions it came before, not
    begun, are not counted)."""
    harvested: int = 0
    """Other positions of the book the searches' tables settled (exact results written too)."""
    conflicts: list[str] = field(default_factory=list)
    """Positions where a table's result contradicted the book's own proof (neither written)."""
    followed: int = 0
    """Next best moves queued where a best move failed (``next_best``)."""

    @property
    def total_tried(self) -> int:
        return sum(self.tried.values())

    @property
    def total_proved(self) -> int:
        return sum(self.proved.values())


def candidates(opened: OpenBook, max_depth: int | None = None, deepest_first: bool = False,
               first_moves: frozenset[int] | dict[int, int] | None = None, best_replies: bool = False,
               doubts: bool = False) -> list[str]:
    """Keys of the book's positions worth a proof (``candidate_pairs``' second members)."""
    return [key for _, key in candidate_pairs(opened, max_depth, deepest_first, first_moves, best_replies, doubts)]


def candidate_pairs(opened: OpenBook, max_depth: int | None = None, deepest_first: bool = False,
                    first_moves: frozenset[int] | dict[int, int] | None = None, best_replies: bool = False,
                    doubts: bool = False) -> list[tuple[str | None, str]]:
    """``(above, key)`` for each of the book's positions worth a proof (``above``: the position whose
    best move led there, with ``best_replies`` or ``doubts``; else None): not exact yet, not proven by the book's own
    searches, no swap left; shallowest first (then in the order of the keys), the book's start
    position last (its moves are the table: what the start's value adds, they already say).
    ``deepest_first``: the book's leaves first, the positions a budget settles most often, whose
    proofs the minimax carries up. ``first_moves``: only positions the book reached by one of these
    first moves (real hole ids; give every symmetric image, ``first_move_images``); as a dict (hole ->
    rank, ``first_move_ranks``), the positions of a depth come in the order of their first moves' ranks.
    ``best_replies``: each candidate the book has won for its mover is replaced by the position after
    its best move (``hints.best_reply``), those it has lost are left out: a proof that one move wins
    decides the position, and the search spends nothing on the mover's other moves. ``doubts``: each
    candidate the book has lost for its mover is replaced by the position after the mover's best try
    (``hints.best_try``), those it has won are left out (unless ``best_replies``): a proof that the try
    wins overturns the book's value. A position two candidates lead to comes once, after the first."""
    out = []
    for key, node in opened.book.nodes.items():
        if node.exact or node.proven or not key.endswith("|-"):
            continue
        if first_moves is not None and not (node.line and node.line[0] in first_moves):
            continue
        depth = key_depth(key)
        if max_depth is not None and depth > max_depth:
            continue
        out.append(key)
    start = opened.book.start
    ranks = first_moves if isinstance(first_moves, dict) else {}
    nodes = opened.book.nodes

    def rank(k: str) -> int:
        line = nodes[k].line
        return ranks.get(line[0], 0) if line else 0

    if deepest_first:
        out = sorted(out, key=lambda k: (k == start, -key_depth(k), rank(k), k))
    else:
        out = sorted(out, key=lambda k: (k == start, key_depth(k), rank(k), k))
    if not best_replies and not doubts:
        return [(None, k) for k in out]
    return deeper_pairs(opened, out, best_replies, doubts)


def deeper_pairs(opened: OpenBook, keys: list[str], best_replies: bool, doubts: bool) -> list[tuple[str, str]]:
    """``(key, deeper)`` for each key in order: ``deeper`` the position after its best move
    (``hints.best_move_position``); keys without one are left out, a deeper position comes once."""
    pairs: dict[str, str] = {}
    for k in keys:
        deeper = best_move_position(opened, k, best_replies, doubts)
        if deeper is not None:
            pairs.setdefault(deeper, k)
    return [(above, key) for key, above in pairs.items()]


def named_pairs(opened: OpenBook, named: list[tuple[str | None, str]], best_replies: bool = False,
                doubts: bool = False) -> list[tuple[str | None, str]]:
    """The candidates of ``book prove --position``: ``(above, key)`` for each named position not
    settled yet (``above``: the position one move before it, ``book.named``), in the order given; with
    ``best_replies`` or ``doubts``, the positions after their best moves instead (``deeper_pairs``)."""
    nodes = opened.book.nodes
    open_ = [(above, key) for above, key in named if not (nodes[key].exact or nodes[key].proven)]
    if best_replies or doubts:
        return deeper_pairs(opened, [key for _, key in open_], best_replies, doubts)
    return open_


def first_move_ranks(board, names: list[str]) -> dict[int, int]:
    """The holes ``names`` name and their images under the board's symmetries that keep each
    player's sides (a book keeps one position for each group; a symmetry that exchanges the sides
    makes a first move the second player's stone, another opening), each with the place of its name
    in ``names`` (the first, where a group is named twice); ValueError naming what is not a hole."""
    index = board.hole_index
    unknown = [n for n in names if n not in index]
    if unknown:
        raise ValueError(f"not a hole of the board: {', '.join(unknown)} (holes are named like {board.hole_names[0]})")
    ranks: dict[int, int] = {}
    for place, name in enumerate(names):
        for symmetry in board.symmetries:
            if not symmetry.exchanges_sides:
                ranks.setdefault(int(symmetry.hole_perm[index[name]]), place)
    return ranks


def first_move_images(board, names: list[str]) -> frozenset[int]:
    """``first_move_ranks``' holes, without their order."""
    return frozenset(first_move_ranks(board, names))


def forget_settled_searches(opened: OpenBook) -> list[str]:
    """Delete the saved searches (``carried``) of positions the book has settled since they were cut
    short: exact, or proven through its minimax (a proof below them, or results copied from another
    book); returns their keys. Such a search would never be resumed (candidates skip settled positions)."""
    opened.book.update()
    gone = []
    for header in carried.saved_searches(opened.folder):
        key = header.get("key")
        node = opened.book.nodes.get(key) if isinstance(key, str) else None
        if node is not None and (node.exact or node.proven):
            carried.forget(opened.folder, key)
            gone.append(key)
    return gone


NOT_STARTED = 2
"""``_solve``'s ``cut`` when the deadline came before the search began (True: it cut the search short)."""


def _solve(solver, key: str, max_nodes: int, deadline: float | None,
           keep: Keep | None = None) -> tuple[str, int | None, int, float]:
    """``(key, result, cut, seconds)``: the result +1/-1 for the mover, None unsettled; ``cut`` true when
    the deadline, not the budget, ended it (``NOT_STARTED`` when it came before it began); ``seconds`` the
    CPU seconds this search took. With ``keep``, a saved search
    of the position is loaded first, and the search is saved while it runs and when it is cut
    short (``Keep``); a proof deletes the saved search."""
    if deadline is not None and time.monotonic() >= deadline:
        return key, None, NOT_STARTED, 0.0
    first, second, mover, _ = parse_key(key)
    before = None
    if keep is not None:
        before = carried.load(keep.folder, key, solver.size, solver.entry_bytes)
        if before is not None:
            solver.import_table(before.entries)
    began = time.process_time()  # CPU time: a search paused or sharing its core counts what it used
    spent = 0

    def save() -> None:
        ran = time.process_time() - began
        if keep is None or ran < keep.after_seconds:
            return
        runs, expansions, seconds = (before.runs, before.expansions, before.seconds) if before else (0, 0, 0.0)
        try:
            root = (first, second, 0) if mover == 0 else (second, first, 1)
            carried.save(keep.folder, carried.Carried(key, runs + 1, expansions + spent, seconds + ran,
                                                      solver.export_table(below=root)), solver.size, solver.entry_bytes)
        except OSError as err:  # a full disk or a read-only book: the proof goes on, unsaved
            print(f"warning: cannot keep the search in {keep.folder / carried.FOLDER} ({err.strerror or err}); "
                  f"it goes on without a save", file=sys.stderr, flush=True)

    try:
        while True:
            now = time.monotonic()
            limits = [x for x in (None if deadline is None else deadline - now,
                                  None if keep is None else keep.every_seconds) if x is not None]
            solver.nodes = 0
            try:
                winner = solver.winner_within(first, second, mover, max(1, max_nodes - spent),
                                              max_seconds=max(1e-3, min(limits)) if limits else None)
            finally:
                spent += solver.nodes  # an interrupted search counts what it spent too
            if winner is not None:
                if keep is not None:
                    carried.forget(keep.folder, key)
                return key, (1 if winner == mover else -1), False, time.process_time() - began
            save()
            over = deadline is not None and time.monotonic() >= deadline
            if over or spent >= max_nodes:
                return key, None, over, time.process_time() - began
    except KeyboardInterrupt:
        save()
        raise


_worker_solver = None


def _start_worker(game: str, table_bits: int, keep: Keep | None = None,
                  positions: list[tuple[str, Images]] | None = None) -> None:
    """A worker process's own solver (and table); Ctrl-C is the main process's to handle."""
    import signal

    from conhex_zero.analysis.native_solver import NativeHexSolver
    from conhex_zero.games.game import parse_game

    global _worker_solver, _worker_keep, _worker_harvester
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # the main process ends the pool with SIGTERM (after Ctrl-C): the search in flight stops and,
    # kept, is saved before the worker exits (_solve), instead of losing what it did since its last save
    signal.signal(signal.SIGTERM, _interrupt)
    _worker_solver = NativeHexSolver(parse_game(game).board, table_bits=table_bits)
    _worker_keep = keep
    _worker_harvester = Harvester(positions or [])


_worker_keep: Keep | None = None
_worker_harvester = Harvester([])


_searching = False


def _interrupt(signum, frame) -> None:
    """A worker's SIGTERM: inside a search, stop it (``_solve`` saves a kept one); else exit."""
    if _searching:
        raise KeyboardInterrupt
    os._exit(0)


def _worker_solve(task: tuple[str, int, float | None]) -> tuple[tuple[str, int | None, int, float], dict[str, int]]:
    """A candidate's search, and what its table settled of the book's other positions (``harvest``)."""
    global _searching
    _searching = True
    try:
        outcome = _solve(_worker_solver, *task, keep=_worker_keep)
    except KeyboardInterrupt:  # the pool is being ended: the search is saved, nothing to report
        os._exit(0)
    finally:
        _searching = False
    return outcome, _worker_harvester.after(_worker_solver, task[0])


def prove_book(opened: OpenBook, solver, max_nodes: int, deadline: float | None = None,
               max_depth: int | None = None, flush_seconds: float = 30.0, deepest_first: bool = False,
               on_position: Callable[[str, int | None, float], None] | None = None, workers: int = 1,
               table_bits: int = 22, first_moves: frozenset[int] | None = None,
               keep: Keep | None = None, best_replies: bool = False, doubts: bool = False,
               next_best: int = 1, on_added: Callable[[str], None] | None = None,
               named: list[tuple[str | None, str]] | None = None) -> ProveReport:
    """Try the solver on every candidate (``candidates``) with ``max_nodes`` each, until ``deadline``
    (``time.monotonic``; the search in flight stops there too); append the results to the book and
    update its values. ``on_position(key, result, seconds)`` is called after each (result +1/-1 for the
    mover, None unsettled; the CPU seconds its search took in this run). ``workers`` > 1: that many
    processes, each with its own solver (``table_bits``), take the candidates in order (``solver`` is
    then not used). Interrupted (``KeyboardInterrupt``), it writes what it proved and returns
    (``stopped``). ``keep``: searches cut short are saved into the book and resumed by a later run
    (``Keep``). ``best_replies``, ``doubts``: the positions after the candidates' best moves instead
    (``candidates``); ``next_best``: where such a move fails, the next best is tried, up to that many
    moves a position (``proof_queue``), each announced to ``on_added``. ``named``: ``(above, key)`` of
    the positions to try instead of the book's candidates (``named_pairs``; ``max_depth``,
    ``deepest_first`` and ``first_moves`` then do not apply); a named position proved won for its mover
    counts as its ``above``'s failed move for ``next_best``."""
    report = ProveReport()
    started = time.monotonic()
    pending: list[dict] = []
    last_flush = started

    def flush() -> None:
        nonlocal pending, last_flush
        if pending:
            store.append(opened.folder, pending)
            pending = []
        last_flush = time.monotonic()

    def record_harvest(found: dict[str, int]) -> None:
        for key, result in sorted(found.items()):
            node = opened.book.nodes.get(key)
            if node is None or node.exact:
                continue
            if node.proven and node.proven != result:  # two exact judgements disagree: write neither
                report.conflicts.append(key)
                continue
            node.exact = result
            report.harvested += 1
            pending.append(store.exact_entry(key, result))

    def record(key: str, result: int | None, cut: int, seconds: float) -> None:
        if cut:  # the deadline, not the budget: neither tried nor proved
            report.stopped = "time"
            report.cut += cut != NOT_STARTED  # a search it cut short (the others: not tried)
            return
        depth = key_depth(key)
        report.tried[depth] = report.tried.get(depth, 0) + 1
        if result is not None:
            report.proved[depth] = report.proved.get(depth, 0) + 1
            opened.book.nodes[key].exact = result
            pending.append(store.exact_entry(key, result))
        if on_position is not None:
            on_position(key, result, seconds)
        if time.monotonic() - last_flush >= flush_seconds:
            flush()

    if named is None:
        pairs = candidate_pairs(opened, max_depth, deepest_first, first_moves, best_replies, doubts)
        todo = ProofQueue(opened, pairs, next_best, best_replies, doubts)
    else:  # a named position's failed move: the book's next best at the position above, either side
        pairs = named_pairs(opened, named, best_replies, doubts)
        plain = not (best_replies or doubts)
        todo = ProofQueue(opened, pairs, next_best, best_replies or plain, doubts or plain)
    positions = open_positions(opened) if pairs else []
    harvester = Harvester(positions)
    pool = None

    def settled(key: str, result: int | None) -> None:
        follow = todo.settled(key, result)
        if follow is not None:
            report.followed += 1
            if on_added is not None:
                on_added(follow)

    try:
        if workers <= 1:
            while (key := todo.pop()) is not None:  # a position settled meanwhile by another search's table: skipped
                outcome = _solve(solver, key, max_nodes, deadline, keep)
                record(*outcome)
                record_harvest(harvester.after(solver, key))
                if outcome[2]:
                    break
                settled(key, outcome[1])
            record_harvest(harvester.after(solver, "", force=True))  # what the last searches settled
        else:
            import multiprocessing
            import queue

            game = opened.game if isinstance(opened.game, str) else str(opened.game)
            pool = multiprocessing.get_context("spawn").Pool(workers, _start_worker, (game, table_bits, keep, positions))
            done: queue.Queue = queue.Queue()
            in_flight = 0

            def submit() -> None:
                nonlocal in_flight
                while in_flight < workers and (key := todo.pop()) is not None:
                    pool.apply_async(_worker_solve, ((key, max_nodes, deadline),), callback=done.put,
                                     error_callback=done.put)
                    in_flight += 1

            submit()
            while in_flight:
                try:
                    item = done.get(timeout=0.5)
                except queue.Empty:
                    continue
                in_flight -= 1
                if isinstance(item, BaseException):
                    raise item
                outcome, found = item
                record(*outcome)
                record_harvest(found)
                if not outcome[2]:
                    settled(outcome[0], outcome[1])
                submit()
            pool.close()
            pool.join()
    except KeyboardInterrupt:  # Ctrl-C, kill -INT: keep what was proved
        report.stopped = "interrupted"
        if pool is not None:
            pool.terminate()
    flush()
    opened.book.update()
    report.seconds = time.monotonic() - started
    return report

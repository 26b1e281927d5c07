"""Growing a book: rounds of many book positions searched at once, written before the next round.

A round takes the cheapest candidates of ``graph.Book.candidates`` (up to ``batch`` of them, one
per node), steps each node's position by its candidate move and searches, in *one* call of the
batched search, every new position (its book moves excluded: the swap, entered with the position)
and every node whose rest must be searched again (its book moves excluded). A move that reaches a
position the book already holds (a transposition, or a symmetric move) only adds an edge. Then,
on small Hex boards, the exact solver settles the new positions; the round's lines are appended to
the book's file and flushed to the disk; values are backed up by minimax.

The first round enters the start position alone (searched with every move); the second enters
every distinct move of the start (the first-move table needs them all), and later rounds grow
best first.

The search is the opening analysis's (``search_configs.analysis_config``: proven values, completed Q
on its fixed range, a floor under the priors below the root), deterministic, with ``connections``
H-search's verdicts at its nodes (``agents.connections``: Hex up to 8 x 8); with few positions at
once it runs as the players' lean search, with many as the batched search (``GameSearch``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import torch

from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.agents.game_search import LEAN_MAX_BATCH, GameSearch
from conhex_zero.agents.search_configs import analysis_config
from conhex_zero.book import store
from conhex_zero.book.graph import Book, MoveStats, Node, Search
from conhex_zero.book.keys import Canonical
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.search import rng


CPU_NETWORK_BATCH = 32
"""On a CPU, a round's batched search evaluates its leaves 32 positions a network call: the
network's products run fastest on a few dozen positions (1.2-1.5 times as many positions a minute
as whole batches of 128 at once, measured with benchmarks/bench_book.py's positions)."""


@dataclass
class Job:
    """One search of a round: a new node (``line`` and ``exclude`` set) or a rest (``key``)."""

    key: str
    state: State
    symmetry: int
    excluded: frozenset[int]  # canonical frame
    new: bool
    line: list[int] = field(default_factory=list)


@dataclass
class RoundResult:
    new_nodes: int
    searches: int
    seconds: float


class Grower:
    """Grows a ``Book`` with one model; ``round()`` runs one round and writes it."""

    def __init__(self, env: VecEnv, model: torch.nn.Module, folder, book: Book, start_state: State, sims: int,
                 batch: int = 128, seed: int = 0, solver=None, sequential: bool = False, connections: bool = False):
        self.env, self.folder, self.book = env, folder, book
        self.canon = Canonical(env)
        self.sims, self.batch, self.seed = sims, batch, seed
        self.solver = solver
        self.sequential = sequential
        """Search the round's positions one after another (the one-position way, for comparison)."""
        slices = CPU_NETWORK_BATCH if env.device.type == "cpu" and not sequential else None
        evaluator = NetworkEvaluator(model, env, max_batch=slices, backend=None)  # the process's backend
        self.search = GameSearch(env, evaluator, analysis_config(sims), tactics=True, lean_max_batch=LEAN_MAX_BATCH,
                                 connections=connections)
        self._states: dict[str, tuple[State, int]] = {}
        self.start_state = start_state
        self.swap = env.game.swap_action if env.game.swap else None

    # ----------------------------------------------------------------- positions
    def position(self, key: str) -> tuple[State, int]:
        """A real position the node names (batch of one) and the symmetry that takes it to the key."""
        kept = self._states.get(key)
        if kept is None:
            state = self.start_state
            for a in self.book.nodes[key].line:
                state = self.env.step(state, torch.tensor([a], device=self.env.device))
            kept = (state, self.canon.keys(state).symmetry[0])
            self._states[key] = kept
        return kept

    def _children(self, state: State, actions: list[int]) -> tuple[State, list[str], list[int]]:
        """The positions after each real action of ``state`` (one position), their keys and symmetries."""
        acts = torch.tensor(actions, device=self.env.device)
        kids = self.env.step(State.cat([state] * len(actions)), acts)
        keyed = self.canon.keys(kids)
        return kids, keyed.keys, keyed.symmetry

    def legal_actions(self, state: State) -> list[int]:
        return torch.nonzero(self.env.legal_mask(state)[0]).flatten().tolist()

    # ----------------------------------------------------------------- rounds
    def plan(self, limit: int | None = None) -> tuple[list[Job], list[tuple[str, list[int], str]]]:
        """The round's searches and the edges it adds ``(node, canonical moves, child)``;
        ``limit``: at most this many new nodes."""
        book = self.book
        jobs: list[Job] = []
        edges: list[tuple[str, list[int], str]] = []
        new: dict[str, Job] = {}
        rests: set[str] = set()
        cap = self.batch if limit is None else max(1, min(self.batch, limit))

        def add_node(line: list[int], state: State, key: str, k: int) -> None:
            exclude: frozenset[int] = frozenset()
            if self.swap is not None and bool(self.env.legal_mask(state)[0, self.swap]):
                # The swap's child enters with the position: the first search is the value without swap.
                kids, keys, syms = self._children(state, [self.swap])
                if keys[0] not in book and keys[0] not in new:
                    job = Job(keys[0], kids[0:1], syms[0], frozenset(), True, line + [self.swap])
                    new[keys[0]] = job
                    jobs.append(job)
                edges.append((key, [self.canon.to_canonical([self.swap], k)[0]], keys[0]))
                exclude = frozenset([self.swap])
            job = Job(key, state, k, exclude, True, line)
            new[key] = job
            jobs.append(job)

        def expand(node: Node, moves: list[int]) -> None:
            """Enter the node's canonical ``moves`` (each with its symmetric images at the node)."""
            state, k = self.position(node.key)
            real = self.canon.to_real(moves, k)
            kids, keys, syms = self._children(state, real)
            stabiliser = self.canon.stabiliser(node.key)
            for j, (move, key) in enumerate(zip(moves, keys)):
                if bool(kids.done[j]):
                    continue  # a move that ends the game is no position (its node is proven by its search)
                images = sorted({int(self.canon.images[s][move]) for s in stabiliser})
                if key not in book and key not in new:
                    add_node(node.line + [real[j]], kids[j:j + 1], key, syms[j])
                edges.append((node.key, images, key))
            if node.key not in new:
                rests.add(node.key)

        start = book.nodes.get(book.start)
        chosen = self._open_start_moves(start, cap) if start is not None else []
        if start is None:
            state = self.start_state
            add_node([], state, self.canon.keys(state).keys[0], self.canon.keys(state).symmetry[0])
        elif chosen:
            expand(start, chosen)
        else:
            for c in book.candidates():
                if len(new) >= cap or len(rests) >= cap:
                    break
                node = book.nodes[c.key]
                if c.action is None:
                    rests.add(node.key)
                else:
                    expand(node, [c.action])
        for key in sorted(rests):
            node = book.nodes[key]
            state, k = self.position(key)
            children = set(node.children) | {a for (n, moves, _) in edges if n == key for a in moves}
            jobs.append(Job(key, state, k, frozenset(children), False))
        return jobs, edges

    def _open_start_moves(self, start: Node, cap: int) -> list[int]:
        """The start's moves not yet in the book (one per position they reach, at most ``cap``;
        moves that end the game are no positions): the table needs every one."""
        if len(start.children) >= start.legal:
            return []
        state, k = self.position(start.key)
        open_moves = [a for a in self.canon.to_canonical(self.legal_actions(state), k) if a not in start.children]
        kids, keys, _ = self._children(state, self.canon.to_real(open_moves, k))
        seen, chosen = set(), []
        for j, (move, key) in enumerate(zip(open_moves, keys)):
            if key not in seen and not bool(kids.done[j]) and len(chosen) < cap:
                seen.add(key)
                chosen.append(move)
        return chosen

    def round(self, limit: int | None = None, on_search: Callable[[int], None] | None = None) -> RoundResult:
        """Plan, search, write and back up one round."""
        started = time.perf_counter()
        jobs, edges = self.plan(limit)
        if not jobs and not edges:
            return RoundResult(0, 0, 0.0)
        results = self._search(jobs, on_search)
        entries = []
        for job, result in zip(jobs, results):
            if job.new:
                node = Node(key=job.key, line=job.line, legal=len(self.legal_actions(job.state)),
                            first=result[0] or Search(value=0.0, best=None), moves=result[1])
                node.rest = result[0]
                entries.append(store.node_entry(node))
                self.book.nodes[job.key] = node
                self._states[job.key] = (job.state, job.symmetry)
        if self.solver is not None:
            fresh = [j for j in jobs if j.new]
            if fresh:
                winners = self.solver.state_winners(State.cat([j.state for j in fresh])).tolist()
                for job, w in zip(fresh, winners):
                    result = 1 if w == int(job.state.to_move[0]) else -1
                    self.book.nodes[job.key].exact = result
                    entries.append(store.exact_entry(job.key, result))
        for key, moves, child in edges:
            for a in moves:
                self.book.nodes[key].children[a] = child
            entries.append(store.edge_entry(key, moves, child))
        for job, result in zip(jobs, results):
            if not job.new:
                self.book.nodes[job.key].rest = result[0]
                entries.append(store.rest_entry(job.key, result[0]))
        new_nodes, searches = sum(j.new for j in jobs), sum(r[0] is not None for r in results)
        seconds = time.perf_counter() - started
        entries.append({"type": "round", "new": new_nodes, "searches": searches, "seconds": round(seconds, 3)})
        store.append(self.folder, entries)
        self.book.rounds.append(entries[-1])
        self.book.update()
        return RoundResult(new_nodes, searches, seconds)

    def _search(self, jobs: list[Job], on_search: Callable[[int], None] | None
                ) -> list[tuple[Search | None, dict[int, MoveStats]]]:
        """Every job's search (None where every legal move is excluded), in one call of the search
        (or one call per job with ``sequential``)."""
        out: list[tuple[Search | None, dict[int, MoveStats]]] = [(None, {}) for _ in jobs]
        todo = []
        for i, job in enumerate(jobs):
            legal = self.legal_actions(job.state)
            excluded_real = set(self.canon.to_real(sorted(job.excluded), job.symmetry))
            if any(a not in excluded_real for a in legal):
                todo.append(i)
        groups = [[i] for i in todo] if self.sequential else ([todo] if todo else [])
        for group in groups:
            batch = State.cat([jobs[i].state for i in group])
            exclude = torch.zeros(len(group), self.env.num_actions, dtype=torch.bool, device=self.env.device)
            for row, i in enumerate(group):
                job = jobs[i]
                real = self.canon.to_real(sorted(job.excluded), job.symmetry)
                if real:
                    exclude[row, real] = True
            keys = rng.fold(torch.arange(len(group), device=self.env.device) + self.seed * 1_000_003, 0xB0)
            result = self.search.run(batch, keys, exclude=exclude)
            for row, i in enumerate(group):
                out[i] = self._read(result, row, jobs[i])
                if on_search is not None:
                    on_search(1)
        return out

    def _read(self, out, row: int, job: Job) -> tuple[Search, dict[int, MoveStats]]:
        k = job.symmetry
        to_canon = self.canon.images[k]
        n = out.visit_counts[row].cpu()
        q = out.q_values[row].cpu()
        prior = out.tree.prior[row, 0].cpu() if out.tree.prior.dim() == 3 else None
        proven_edges = out.edge_proven[row].cpu() if out.edge_proven is not None else torch.zeros_like(n)
        pv = [int(to_canon[a]) for a in out.pv[row].tolist() if a >= 0]
        search = Search(value=float(out.action_value[row]), best=int(to_canon[int(out.action[row])]),
                        proven=int(out.root_proven[row]) if out.root_proven is not None else 0,
                        excluded=job.excluded, visits=int(n.sum()), pv=pv)
        moves = {}
        if job.new:  # the first search's most visited moves (what the book's file keeps)
            for a in torch.argsort(n, descending=True, stable=True)[:store.MOVES_KEPT].tolist():
                if n[a] <= 0:
                    break
                moves[int(to_canon[a])] = MoveStats(prior=float(prior[a]) if prior is not None else 0.0,
                                                    visits=int(n[a]), q=float(q[a]), proven=int(proven_edges[a]))
        return search, moves

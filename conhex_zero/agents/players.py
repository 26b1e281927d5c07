"""Players: one interface, ``act(state, keys=None) -> actions``, for batches of running games.

Names (for the command line): ``random``; ``mcts-rollout:K`` (PUCT with uniform priors and random
rollouts, K simulations: the classic fixed reference, without our tactics); ``policy:CKPT`` (the
network's raw policy, best legal move); ``CKPT`` or ``CKPT:sims=N`` (network + Gumbel search);
``gtp:COMMAND`` or ``gtp@NAME:COMMAND`` (an external engine speaking the Go Text Protocol, see
``gtp_player.py``, named ``gtp:PROGRAM`` after its program, or ``gtp@NAME``);
``CKPT:seconds=S`` searches each position for S seconds (a clock, not a simulation count).
``keys`` are per-game random keys (``search.rng``): given, they make a game's choices independent
of the other games searched with the same kind of search (the lean search serves at most
``LEAN_MAX_BATCH`` positions at once, the batched one more); omitted, they are derived from the
position and the player's seed. ``history``
gives each game's moves so far (players that must replay the game, like external engines).
"""

from __future__ import annotations

import copy
import dataclasses
import time
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Protocol

import torch
from torch import Tensor

from conhex_zero.agents.evaluators import NetworkEvaluator, RolloutEvaluator, position_keys
from conhex_zero.agents.game_search import LEAN_MAX_BATCH, GameSearch
from conhex_zero.agents.player_specs import (DEFAULT_SIMS, MAX_SIMULATIONS, PlayerSpecError,  # noqa: F401
                                             parse_player, parse_seconds)
from conhex_zero.agents.search_configs import play_config
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn.checkpoint import load_checkpoint
from conhex_zero.nn.model import GraphNet
from conhex_zero.search import rng
from conhex_zero.search.lean import LeanTree, subtree
from conhex_zero.search.mcts import SearchConfig, SearchOutput

PONDER_SIMULATIONS = 20_000
"""The most simulations one pondering adds (its trees are allocated for them: about 36 MB of
ConHex rows), so an opponent who never moves does not keep a core busy for ever."""
ROLLOUT_C_PUCT = 2.0  # uniform priors spread exploration thin: a larger constant than the network's


class Player(Protocol):
    name: str

    def act(self, state: State, keys: Tensor | None = None,
            history: list[list[int]] | None = None) -> Tensor: ...


def _keys(state: State, keys: Tensor | None, seed: int) -> Tensor:
    return keys if keys is not None else position_keys(state, seed)


class RandomPlayer:
    """A uniformly random legal action."""

    def __init__(self, env: VecEnv, seed: int = 0):
        self.env, self.seed, self.name = env, seed, "random"

    def act(self, state: State, keys: Tensor | None = None, history: list[list[int]] | None = None) -> Tensor:
        u = rng.uniform(rng.fold(_keys(state, keys, self.seed), 0x52), 0, self.env.num_actions)
        return self.env.random_actions(state, uniforms=u)


class PolicyPlayer:
    """The network's most likely legal action, no search."""

    def __init__(self, env: VecEnv, evaluator: NetworkEvaluator, name: str):
        self.env, self.evaluator, self.name = env, evaluator, name

    def act(self, state: State, keys: Tensor | None = None, history: list[list[int]] | None = None) -> Tensor:
        logits, _ = self.evaluator(state)
        return torch.where(self.env.legal_mask(state), logits, -float("inf")).argmax(1)


class SearchPlayer:
    """An evaluator plus MCTS; ``last`` keeps the latest search output for analysis.

    With ``seconds`` the player has a clock: each position is searched alone (the lean search) for
    at most ``seconds``, with a simulation budget from its measured speed (``rate``), cut short at
    the deadline; its first search is preceded by two short ones that measure the speed. Players
    that search few positions keep their trees: after a search of the position reached by a game's
    move list, the subtree of the move it chose is kept (compact), and the next search of that game
    (after the reply, or at once after an extra-stone move) continues from the matching subtree,
    with its visits, values and proofs (``last_carried`` says how many root visits came along).
    """

    KEPT_TREES = 256  # trees kept for later moves (one per game in progress, the oldest dropped)
    KEPT_NODES = 400_000  # and at most this many nodes in all (about 0.7 GB of ConHex rows)
    CALIBRATION_SIMS = 128  # each of the two searches that measure a timed player's speed (full batches)
    PLANNED_SHARE = 0.9  # a timed search plans this share of what its measured speed fits in the time
    PONDER_FIRST_ROUND = 256  # simulations of pondering's first round (each next round: twice the last)

    def __init__(self, env: VecEnv, game_search: GameSearch, name: str, seed: int = 0, seconds: float | None = None):
        self.env, self.search, self.name, self.seed = env, game_search, name, seed
        self.seconds = seconds
        self.rate: float | None = None  # simulations per second of timed searches, measured
        self.max_simulations: int | None = None  # a timed search's most simulations (None: MAX_SIMULATIONS)
        self.last: SearchOutput | None = None
        self.last_carried: list[int] = []
        self.last_effort: list[tuple[int, bool]] = []  # per position of the last act(): (simulations, cut by the clock)
        self._trees: OrderedDict[tuple[int, ...], LeanTree] = OrderedDict()  # by the moves to its root
        self._kept_nodes = 0

    @property
    def max_parallel_games(self) -> int | None:
        """A timed player searches one position after another, so a match gains nothing by giving
        it all its games at once: it takes them a colour-exchanged pair at a time (the same searches,
        the same time), and the games end, and reach the match's records, one pair after another
        instead of all together at the end. ``None``: no limit (a batched search)."""
        return 2 if self.seconds is not None else None

    def act(self, state: State, keys: Tensor | None = None, history: list[list[int]] | None = None) -> Tensor:
        keys = rng.fold(_keys(state, keys, self.seed), 0x53)
        B = state.batch_size
        if self.search.upgrade():  # native kernels built beside the command: from this move on
            self.rate = None  # a timed player measures its new speed
            self._trees.clear()
            self._kept_nodes = 0
        if self.seconds is not None:  # one position at a time, each with its own clock
            actions, efforts = [], []
            for b in range(B):
                actions.append(self._timed(state[b], keys[b:b + 1], history[b] if history else None))
                efforts.extend(self.last_effort)
            self.last_effort = efforts
            return torch.cat(actions)
        lean = B <= self.search.lean_max_batch
        keep = [self._kept(history[b]) for b in range(B)] if lean and history is not None else None
        self.last = self.search.run(state, keys, keep=keep)
        carried = [0 if not keep or k is None else int(k.edge_visits[0].sum()) for k in (keep or [None] * B)]
        visits = self.last.visit_counts.sum(1).tolist()
        self.last_effort = [(int(v) - c, False) for v, c in zip(visits, carried)]  # the simulations run now
        self._remember(history, keep)
        return self.last.action

    def _timed(self, state: State, key: Tensor, history: list[int] | None) -> Tensor:
        """One position searched for at most ``self.seconds``."""
        start = time.perf_counter()
        config = self.search.config
        if self.rate is None:
            self.rate = self._calibrate(state, key)
        remaining = max(start + self.seconds - time.perf_counter(), 0.0)
        # Planned to end a little before the deadline: a search cut short ends its sequential
        # halving early, choosing among candidates that did not all get their visits.
        budget = max(8, min(MAX_SIMULATIONS, int(self.PLANNED_SHARE * self.rate * remaining)))
        if self.max_simulations is not None:
            budget = min(budget, self.max_simulations)
        keep = [self._kept(history)] if history is not None else None
        self.search.config = dataclasses.replace(config, num_simulations=budget)
        search_start = time.perf_counter()
        try:
            self.last = self.search.run(state, key, keep=keep, deadline=start + self.seconds)
        finally:
            self.search.config = config
        done = int(self.last.visit_counts.sum()) - (self.last_carried_root(keep))
        measured = done / max(time.perf_counter() - search_start, 1e-3)
        proven = self.last.root_proven is not None and bool(self.last.root_proven[0] != 0)
        self.last_effort = [(done, done < budget and not proven)]  # cut: the deadline came first
        if not proven:  # a proven root's descents stop at once: its speed says nothing of the next
            # one search moves the estimate by at most half up or a quarter down (a fast endgame
            # search, a busy moment of the machine), and it still converges from a low first guess
            self.rate = 0.5 * self.rate + 0.5 * min(max(measured, 0.5 * self.rate), 2.0 * self.rate)
        self._remember([history] if history is not None else None, keep)
        return self.last.action

    def ponder(self, state: State, history: list[int], stop: Callable[[], bool],
               max_simulations: int = PONDER_SIMULATIONS) -> int:
        """Search ``state`` (one position, the opponent to move, reached by ``history``) until
        ``stop()`` says so or ``max_simulations`` are done, growing the tree kept for it: the next
        search of this game, after the opponent's reply, continues from the reply's subtree.
        Returns the simulations done. Runs in a background thread while nothing else uses the
        player (``PlaySession`` stops it before any other use)."""
        if state.batch_size != 1 or bool(state.done[0]) or self.search.lean_max_batch < 1 or self.search.persistent:
            return 0  # only the lean search stops when asked and keeps its tree
        key = tuple(history)
        tree = self._trees.pop(key, None)
        if tree is not None:
            self._kept_nodes -= tree.count
        before = int(tree.edge_visits[0].sum()) if tree is not None else 0
        # Rounds of doubling length, each a whole search continuing the tree: each round's
        # sequential halving ends on the opponent's likeliest replies, so that their subtrees grow
        # (one search planned for all the simulations would still be spreading them evenly over
        # its candidates when the opponent moves).
        search = copy.copy(self.search)  # its own config (and lean search): the player's is read meanwhile
        keys = rng.fold(_keys(state, None, self.seed), 0x50)
        done, length, rounds = 0, self.PONDER_FIRST_ROUND, 0
        while done < max_simulations and not (rounds and stop()):
            search.config = dataclasses.replace(self.search.config, num_simulations=min(length, max_simulations - done))
            tree = search.run(state, rng.fold(keys, rounds), keep=[tree], stop=stop).lean_trees[0]
            done, length, rounds = int(tree.edge_visits[0].sum()) - before, 2 * length, rounds + 1
        self._trees[key] = tree
        self._kept_nodes += tree.count
        self._bound_kept()
        return done

    def _calibrate(self, state: State, key: Tensor) -> float:
        """Simulations per second of this player's search on this machine: the second of two short
        searches of ``state`` (the first pays the warm-up); their results are not used."""
        config = self.search.config
        self.search.config = dataclasses.replace(config, num_simulations=self.CALIBRATION_SIMS)
        try:
            for _ in range(2):
                start = time.perf_counter()
                self.search.run(state, key)
                elapsed = time.perf_counter() - start
        finally:
            self.search.config = config
        return self.CALIBRATION_SIMS / max(elapsed, 1e-3)

    @staticmethod
    def last_carried_root(keep: list[LeanTree | None] | None) -> int:
        return int(keep[0].edge_visits[0].sum()) if keep and keep[0] is not None else 0

    def _kept(self, history: list[int]) -> LeanTree | None:
        """The kept subtree for the position after ``history``: from the latest kept tree of a
        position a few moves earlier in the same game (the tree is used once)."""
        moves = tuple(history)
        for back in range(min(4, len(moves)) + 1):
            tree = self._trees.pop(moves[:len(moves) - back], None)
            if tree is not None:
                self._kept_nodes -= tree.count
                return subtree(tree, list(moves[len(moves) - back:])) if back else tree
        return None

    def _remember(self, history: list[list[int]] | None, keep: list[LeanTree | None] | None) -> None:
        """Keep this search's trees under the positions searched (the lean search's only)."""
        out = self.last
        self.last_carried = [0 if not keep or k is None else int(k.edge_visits[0].sum()) for k in (keep or [])]
        if history is None or out is None or out.lean_trees is None:
            return
        for moves, tree, action in zip(history, out.lean_trees, out.action.tolist()):
            chosen = subtree(tree, [action])  # compact: only what the next search can use
            if chosen is None:
                continue
            key = tuple(moves) + (action,)
            old = self._trees.pop(key, None)
            self._kept_nodes += chosen.count - (old.count if old is not None else 0)
            self._trees[key] = chosen
        self._bound_kept()

    def _bound_kept(self) -> None:
        """Drop the oldest kept trees until at most ``KEPT_TREES`` trees and ``KEPT_NODES`` nodes are kept."""
        while self._trees and (len(self._trees) > self.KEPT_TREES or self._kept_nodes > self.KEPT_NODES):
            self._kept_nodes -= self._trees.popitem(last=False)[1].count


def rollout_config(simulations: int, root_noise: bool = False) -> SearchConfig:
    """The search of the ``mcts-rollout:K`` reference: PUCT over uniform priors, every action tried
    once before any is revisited; ``root_noise`` adds Dirichlet noise (for varied analysis games)."""
    return SearchConfig(scheme="puct", num_simulations=simulations, c_puct=ROLLOUT_C_PUCT, fpu=1.0,
                        dirichlet_fraction=0.25 if root_noise else 0.0, dirichlet_alpha=0.3,
                        solver=False, leaves_per_call=1)  # the fixed reference stays as it was measured


def rollout_player(env: VecEnv, simulations: int, seed: int = 0, root_noise: bool = False) -> SearchPlayer:
    gs = GameSearch(env, RolloutEvaluator(env, seed=seed), rollout_config(simulations, root_noise), tactics=False,
                    lean_max_batch=LEAN_MAX_BATCH)  # one leaf per call there: the same results either way
    return SearchPlayer(env, gs, f"mcts-rollout:{simulations}", seed)


def network_player(env: VecEnv, source: GraphNet | str | Path, simulations: int = DEFAULT_SIMS, seed: int = 0,
                   config: SearchConfig | None = None, name: str | None = None,
                   seconds: float | None = None, backend: str | None = None,
                   connections: bool = False) -> SearchPlayer:
    """A network with the play search (``search_configs.play_config``: Gumbel, proven values; no root
    noise unless ``config`` says so), from a model (copied, so later training does not change the
    player) or a checkpoint file. ``backend``: how the network runs (``nn.native``; None: the
    process's default, native kernels on a CPU; training's own players pass ``eager``); ``connections``:
    H-search's verdicts at the search's nodes (``agents.connections``; Hex up to 8 x 8)."""
    if isinstance(source, GraphNet):
        model = copy.deepcopy(source).eval()
        name = name or source.name
    else:
        model = load_checkpoint(source, env.device).model
        name = name or str(source)
    config = config or play_config(simulations)
    gs = GameSearch(env, NetworkEvaluator(model, env, backend=backend, label=name), config, tactics=True,
                    lean_max_batch=LEAN_MAX_BATCH, connections=connections)
    effort = f"seconds={seconds:g}" if seconds is not None else f"sims={config.num_simulations}"
    label = name if isinstance(source, GraphNet) else f"{name}:{effort}"
    return SearchPlayer(env, gs, label, seed, seconds=seconds)


def make_player(spec: str, env: VecEnv, seed: int = 0, simulations: int | None = None,
                gtp_timeout: float = 10.0, gtp_parallel: int = 4, seconds: float | None = None,
                gtp_startup: float = 120.0) -> Player:
    """A player from its name (see the module docstring); ``seconds`` gives checkpoint players
    without ``:sims=N`` or ``:seconds=S`` of their own a clock per move."""
    parsed = parse_player(spec, simulations)  # PlayerSpecError for a name that is no player
    if parsed.kind == "random":
        return RandomPlayer(env, seed)
    if parsed.kind == "gtp":
        from conhex_zero.agents.gtp_player import GTPPlayer

        return GTPPlayer(env, parsed.command, name=parsed.name, timeout=gtp_timeout, parallel=gtp_parallel,
                         startup=gtp_startup)
    if parsed.kind == "rollout":
        return rollout_player(env, parsed.simulations, seed)
    if parsed.kind == "policy":
        ckpt = load_checkpoint(parsed.path, env.device)
        return PolicyPlayer(env, NetworkEvaluator(ckpt.model, env, backend=parsed.backend, label=parsed.path),
                            f"policy:{parsed.path}")
    path, sims = parsed.path, parsed.simulations
    if parsed.explicit_sims:
        seconds = None  # an explicit :sims=N wins over a command's --seconds
    elif parsed.seconds is not None:
        seconds = parsed.seconds
    player = network_player(env, path, sims, seed, seconds=seconds, backend=parsed.backend,
                            connections=parsed.connections)
    if parsed.backend is not None:
        player.name += f":backend={parsed.backend}"  # two backends of one model are two players
    if parsed.connections:
        player.name += ":vc=on"
    if parsed.book is not None:
        from conhex_zero.book.lookup import BookLookup, BookPlayer

        return BookPlayer(player, BookLookup(parsed.book, env))
    return player

"""The game side of the search: turns a ``VecEnv`` and an evaluator into the search's callables.

Transitions carry the exact result of finished games (+1 for the player whose move ended it)
and the sign of the next value (-1 when the other player moves next, +1 when the same player
does, as after the first of two extra-stone moves).

With ``tactics=True`` (the default for network players) one-move tactics are exact: a position
whose player to move can win at once is worth +1 and only its winning moves are searched; at the
root, actions that let the opponent win at once are dropped whenever a safe action exists. So
even a 4-simulation search never walks into an immediate loss it could avoid.
"""

from __future__ import annotations

from typing import Callable

import torch
from torch import Tensor

from conhex_zero.agents.connections import LeafConnections
from conhex_zero.agents.evaluators import Evaluator, NetworkEvaluator
from conhex_zero.agents.leaf_step import Leaf, leaf_step, native_leaf, outcome, winning_focus
from conhex_zero.env.state import State
from conhex_zero.nn import native_background
from conhex_zero.env.tactics import Tactics
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.search.lean import LeanSearch, LeanTree
from conhex_zero.search.mcts import RootInput, SearchConfig, SearchOutput, Searcher, Transition

LEAN_MAX_BATCH = 4
"""Players (``agents.players``) search up to this many positions with the lean search
(``search.lean``: a NumPy tree, several leaves per network call), where a person waits for one
position; more with the batched, sync-free tensor search, as self-play and the opening analysis
always do. The choice follows the number of positions asked for: the last games of an arena match
and a review's small chunks are searched by the lean search too, which gives the batched search's
results in distribution, not simulation by simulation (with more than one leaf per call)."""


class GameSearch:
    def __init__(self, env: VecEnv, evaluator: Evaluator, config: SearchConfig, tactics: bool = True,
                 persistent: bool = False, lean_max_batch: int = 0, connections: bool = False):
        self.env, self.evaluator = env, evaluator
        self.tactics = Tactics(env) if tactics else None
        self.connections = LeafConnections(env) if connections else None
        """H-search's verdicts at every new node (``agents.connections``; Hex up to 8 x 8, else
        ``ConnectionsUnavailable``): exact values where a virtual connection decides, and the
        must-play moves where none does."""
        self.persistent = persistent
        self.lean_max_batch = lean_max_batch  # searches of up to this many positions go to the lean search
        self.leaf: Callable[[State, Tensor], Leaf] | None = None
        """A network player's step to new leaves (``agents.leaf_step``): the native package where its
        network runs natively (a CPU), else the eager function; None for other evaluators."""
        self.leaf_pending = None
        """The leaf package's background build while the eager function runs (``upgrade``)."""
        if tactics and isinstance(evaluator, NetworkEvaluator):
            encoder = evaluator.encoder
            self.leaf = lambda state, action: leaf_step(env, encoder, state, action)
            if evaluator.native is not None or evaluator.pending is not None:
                packaged = native_leaf(env, encoder, wait=evaluator.wait_for_build)
                if isinstance(packaged, native_background.Pending):
                    self.leaf_pending = packaged
                elif packaged is not None:
                    self.leaf = packaged
        self.config = config

    def upgrade(self) -> bool:
        """At a player's move: switch the network and the leaf step to their native packages where
        their background builds are done (``nn.native_background``). True when anything switched."""
        switched = self.evaluator.upgrade() if isinstance(self.evaluator, NetworkEvaluator) else False
        if self.leaf_pending is not None:
            package = self.leaf_pending.poll()
            if package is not None:
                self.leaf_pending = None
                if package is not native_background.FAILED:
                    self.leaf = package
                    switched = True
        return switched

    @property
    def config(self) -> SearchConfig:
        return self._config

    @config.setter
    def config(self, config: SearchConfig) -> None:
        """A new config takes a new ``Searcher`` (buffers and CUDA graphs belong to one config)."""
        self._config = config
        self.searcher = Searcher(self.recurrent, config, persistent=self.persistent)
        self.lean = LeanSearch(self.recurrent, config)

    def _evaluate(self, state: State) -> tuple[Tensor, Tensor, Tensor, Tensor | None]:
        """``(logits, value, legal, wins)``: the evaluator's output, the legal mask and, with tactics,
        the mover's winning holes ``[B, H]``. A network evaluator gets the mask and both players'
        winning holes from here (its encoder needs them too), so each is computed once."""
        legal = self.env.legal_mask(state)
        if self.tactics is None:
            logits, value = self.evaluator(state)
            return logits, value, legal, None
        if isinstance(self.evaluator, NetworkEvaluator):
            both = self.tactics.winning_moves_both(state)  # [B, 2, H]
            logits, value = self.evaluator(state, legal, both)
            return logits, value, legal, both[:, 0]
        logits, value = self.evaluator(state)
        return logits, value, legal, self.tactics.winning_moves(state)

    def root(self, state: State, exclude: Tensor | None = None) -> RootInput:
        """The search's root; ``exclude`` (``[B, A]`` bool) removes actions from consideration."""
        logits, value, legal, mover_wins = self._evaluate(state)
        if exclude is not None:
            legal = legal & ~exclude
        proven = None
        if self.tactics is not None:
            wins = mover_wins.any(1)
            value = torch.where(wins, 1.0, value)
            legal = self.tactics.focus(state, legal, mover_wins)
            proven = wins.to(torch.int8)  # a player who can win at once has won
        if self.connections is not None:
            value, legal, proven = self.connections.apply(state, value, legal, proven)
        return RootInput(logits=logits, value=value, legal=legal, embedding=state, proven=proven)

    def recurrent(self, state: State, action: Tensor) -> Transition:
        if self.leaf is not None:  # a network player with tactics
            leaf = self.leaf(state, action)
            logits, value = self.evaluator.network(leaf.encoded, leaf.legal)
            value = torch.where(leaf.proven.bool(), 1.0, value)  # exact: the player to move wins at once
            legal, proven = leaf.focus, leaf.proven
            if self.connections is not None:
                value, legal, proven = self.connections.apply(leaf.state, value, legal, proven)
            return Transition(logits=logits, value=value, legal=legal, embedding=leaf.state,
                              reward=leaf.reward, discount=leaf.discount, proven=proven)
        nxt = self.env.step(state, action)
        reward, discount = outcome(state, nxt)
        logits, value, legal, wins = self._evaluate(nxt)  # wins: [B, H] with tactics
        proven = None
        if self.tactics is not None:
            legal, can_win = winning_focus(wins, legal)
            value = torch.where(can_win, 1.0, value)
            proven = can_win.to(torch.int8)  # exact: the player to move wins at once
        if self.connections is not None:
            value, legal, proven = self.connections.apply(nxt, value, legal, proven)
        return Transition(logits=logits, value=value, legal=legal, embedding=nxt,
                          reward=reward, discount=discount, proven=proven)

    def run(self, state: State, keys: Tensor, exclude: Tensor | None = None,
            on_simulation: Callable[[int], None] | None = None,
            keep: list[LeanTree | None] | None = None, deadline: float | None = None,
            stop: Callable[[], bool] | None = None) -> SearchOutput:
        """Search every (running) game of ``state``; ``exclude`` [B, A] bars root actions (each
        game must keep at least one legal action). Up to ``lean_max_batch`` games go to the lean
        search, which continues ``keep``'s trees (``search.lean.subtree``) where given and stops at
        ``deadline`` (a ``time.perf_counter()`` instant) if it comes first, or when ``stop()``
        says so (asked between its batches of leaves)."""
        with torch.no_grad():
            root = self.root(state, exclude)
            if state.batch_size <= self.lean_max_batch and not self.persistent:
                return self.lean.run(root, keys, on_simulation, keep=keep, deadline=deadline, stop=stop)
            return self.searcher.run(root, keys, on_simulation)

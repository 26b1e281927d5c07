"""Throughput of the vectorised rules engine: live steps per second of random games.

Each game slot plays a random permutation of the holes (both players read the next hole from it,
so it is always empty), takes the swap when the rule offers it as often as a uniformly random
player would (one legal action among ``H``; the rest of the permutation is then mirrored like the
board), and is replaced by a new game as soon as it ends.
The player therefore costs a few tiny ops, and the figure measures the engine: ``step`` plus the
reset of finished games. Only steps of games that were still running are counted. (With random
opening pieces on the board the permutation would collide with them, so those games fall back to
``VecEnv.random_actions``, which costs about as much as a step.)
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from typing import Iterator

import numpy as np
import torch

from conhex_zero.env import allocator
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.games.game import Game, parse_game


PLAYERS = ("permutation", "permutation+legal", "sampled")


class PermutationPlayer:
    """Random games at almost no cost: per game, a random permutation of the holes."""

    def __init__(self, env: VecEnv, batch: int, seed: int = 0, pool: int = 4096,
                 swap_prob: float | None = None):
        self.env = env
        self.swap_prob = 1.0 / env.num_holes if swap_prob is None else swap_prob
        game = env.game
        self.device = env.device
        self.generator = torch.Generator(device=self.device).manual_seed(seed)
        rng = np.random.default_rng(seed)
        perms = np.argsort(rng.random((pool, env.num_holes)), axis=1)
        if game.forbid_depth is not None:  # the first move must be outside the forbidden zone
            allowed = ~game.forbidden_holes
            for row in perms:
                k = game.first_move_ply + int(np.argmax(allowed[row[game.first_move_ply:]]))
                row[[game.first_move_ply, k]] = row[[k, game.first_move_ply]]
        self.pool = torch.tensor(perms, device=self.device)  # [P, H]
        sym = game.board.symmetry(game.board.swap_symmetry)
        self.swap_image = torch.tensor(sym.hole_perm, device=self.device)  # [H]
        self.order = self.pool[self._draw(batch)]  # [B, H]
        self.next = torch.zeros(batch, dtype=torch.long, device=self.device)  # [B]
        self.wants_swap = self._coins(batch)  # [B]
        self.uniform = game.random_pieces > 0  # random opening pieces: uniform legal moves instead

    def _draw(self, n: int) -> torch.Tensor:
        return torch.randint(self.pool.shape[0], (n,), generator=self.generator, device=self.device)

    def _coins(self, n: int) -> torch.Tensor:
        return torch.rand(n, generator=self.generator, device=self.device) < self.swap_prob

    def actions(self, state: State) -> torch.Tensor:
        """``[B]`` the next hole of each game's permutation, or swap where chosen."""
        if self.uniform:
            return self.env.random_actions(state, self.generator)
        action = self.order.gather(1, self.next.clamp(max=self.env.num_holes - 1)[:, None])[:, 0]
        game = self.env.game
        if game.swap:
            swap_now = self.wants_swap & (state.ply == game.swap_ply)
            action = torch.where(swap_now, game.swap_action, action)
        return action

    def advance(self, action: torch.Tensor, live: torch.Tensor) -> None:
        """Record the actions just played (``live`` [B]: the game was running)."""
        swapped = action == self.env.game.swap_action
        self.next += (live & ~swapped).long()
        rows = (live & swapped).nonzero().squeeze(1)
        if rows.numel():  # the board was mirrored: mirror the rest of the permutation too
            self.order[rows] = self.swap_image[self.order[rows]]

    def restart(self, rows: torch.Tensor) -> None:
        """New permutations for the games ``rows`` that were just reset."""
        self.order[rows] = self.pool[self._draw(rows.numel())]
        self.next[rows] = 0
        self.wants_swap[rows] = self._coins(rows.numel())


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Temporarily set torch's intra-op thread count (None: leave it; 0: one per core)."""
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads or os.cpu_count() or 1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def bench_env(game: str | Game, batch: int, device: str = "cpu", seconds: float = 3.0,
              threads: int | None = None, seed: int = 0, warmup_steps: int = 30, player: str = "permutation") -> dict:
    """Run random games for about ``seconds`` and report throughput.

    ``player``: ``permutation`` (the engine alone, see the module docstring); ``permutation+legal``
    (the same games, and every step also computes the new positions' legal masks, as pgx's step
    does: the work of pgx's benchmark loop); ``sampled`` (every step computes the legal masks and
    draws fresh uniform numbers to pick a legal action, like pgx's categorical player).
    Returns a dict with ``steps_per_s`` (live steps per second), ``games_per_s`` and the settings.
    """
    if player not in PLAYERS:
        raise ValueError(f"player {player!r}: one of {', '.join(PLAYERS)}")
    game = parse_game(game)
    env = VecEnv(game, device=device)
    with torch_threads(threads):
        sampled, with_legal = player == "sampled", player != "permutation"
        masks: list[torch.Tensor] = []
        permutations = PermutationPlayer(env, batch, seed=seed)
        generator = torch.Generator(device=env.device).manual_seed(seed)
        state = env.reset(batch, generator)

        def one_step(state: State) -> tuple[State, torch.Tensor, int]:
            live = ~state.done
            action = env.random_actions(state, generator) if sampled else permutations.actions(state)
            state = env.step(state, action)
            if with_legal:
                masks.append(env.legal_mask(state))  # kept a little, as a caller would use them
                del masks[:-2]
            if not sampled:
                permutations.advance(action, live)
            finished = state.done.nonzero().squeeze(1)
            if finished.numel():
                state = env.reset_done(state, generator, in_place=True, rows=finished)
                if not sampled:
                    permutations.restart(finished)
            return state, live.sum(), finished.numel()

        for _ in range(warmup_steps):
            state, _, _ = one_step(state)
        _sync(env.device)
        live_steps = torch.zeros((), dtype=torch.long, device=env.device)
        games = 0
        batched_steps = 0
        start = time.perf_counter()
        while True:
            for _ in range(10):
                state, live, ended = one_step(state)
                live_steps += live
                games += ended
            batched_steps += 10
            _sync(env.device)
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                break
        used_threads = torch.get_num_threads()
    live_total = int(live_steps)
    return {
        "game": game.spec,
        "batch": batch,
        "device": str(env.device),
        "threads": used_threads,
        "seconds": round(elapsed, 3),
        "batched_steps": batched_steps,
        "live_steps": live_total,
        "steps_per_s": live_total / elapsed,
        "games_per_s": games / elapsed,
        "player": player,
        "torch": torch.__version__,
        "allocator_tuned": allocator._applied,
    }

"""Self-play: G games at once through the batched search, finished games replaced at once.

Each move, every game draws (from its own random key) whether to search fully or cheaply
(playout-cap randomisation): full searches use ``full_sims`` with root noise and are recorded as
training positions; cheap ones use ``cheap_sims`` without noise and are not recorded. The two
groups are searched as two batches. For the first ``temperature_moves`` plies the move is sampled
from the search policy; afterwards it is the search's choice. A player whose searched value falls
below ``-resign_threshold`` resigns, except in a ``resign_playout`` share of games, which are
played out to count how often a resignation would have been wrong. Swap is an action like any other.

Recorded positions wait in per-game slots ``[G, L]`` until their game ends; then each gets the
outcome for its player to move and the final cell owners from that player's view.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch
from torch import Tensor

from conhex_zero.agents.evaluators import Evaluator
from conhex_zero.agents.game_search import GameSearch
from conhex_zero.env.state import FIELDS, State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.search import rng
from conhex_zero.search.mcts import SearchConfig
from conhex_zero.train.config import SelfPlayConfig
from conhex_zero.train.replay import ReplayBuffer

CALIBRATION_BINS = 10


@dataclass
class SelfPlayStats:
    seconds: float = 0.0
    moves: int = 0
    recorded: int = 0
    simulations: int = 0
    games: int = 0
    first_player_wins: int = 0
    plies: int = 0
    swaps: int = 0
    resigned: int = 0
    control_games: int = 0
    control_would_resign: int = 0
    false_resigns: int = 0
    target_entropy: float = 0.0
    calib_count: list[float] = field(default_factory=lambda: [0.0] * CALIBRATION_BINS)
    calib_pred: list[float] = field(default_factory=lambda: [0.0] * CALIBRATION_BINS)
    calib_won: list[float] = field(default_factory=lambda: [0.0] * CALIBRATION_BINS)

    def metrics(self) -> dict[str, float]:
        s = max(self.seconds, 1e-9)
        out = {
            "selfplay/positions_per_s": self.moves / s,
            "selfplay/recorded_per_s": self.recorded / s,
            "selfplay/sims_per_s": self.simulations / s,
            "selfplay/games": self.games,
            "selfplay/recorded": self.recorded,
        }
        if self.games:
            out.update({
                "selfplay/first_player_win_rate": self.first_player_wins / self.games,
                "selfplay/mean_length": self.plies / self.games,
                "selfplay/swap_rate": self.swaps / self.games,
                "selfplay/resign_rate": self.resigned / self.games,
            })
        if self.control_would_resign:
            out["selfplay/false_resign_rate"] = self.false_resigns / self.control_would_resign
        if self.recorded:
            out["selfplay/target_entropy"] = self.target_entropy / self.recorded
            total = sum(self.calib_count)
            err = sum(abs(self.calib_pred[b] - self.calib_won[b]) for b in range(CALIBRATION_BINS)
                      if self.calib_count[b]) / max(total, 1)
            out["selfplay/value_calibration_error"] = err
        return out


class SelfPlay:
    def __init__(self, env: VecEnv, config: SelfPlayConfig, evaluator: Evaluator, seed: int):
        self.env, self.cfg, self.seed = env, config, seed
        dev = env.device
        G, L, A = config.games, env.game.max_plies + 1, env.num_actions
        noise = dict(scheme=config.scheme, max_considered=config.max_considered,
                     dirichlet_alpha=config.dirichlet_alpha)
        full = SearchConfig(num_simulations=config.full_sims, gumbel_scale=1.0,
                            dirichlet_fraction=config.dirichlet_fraction, **noise)
        cheap = SearchConfig(num_simulations=config.cheap_sims, gumbel_scale=0.0, dirichlet_fraction=0.0, **noise)
        self.full_search = GameSearch(env, evaluator, full, tactics=True)
        self.cheap_search = GameSearch(env, evaluator, cheap, tactics=True)
        self.generator = torch.Generator(device=dev).manual_seed(seed)
        self.state = env.reset(G, self.generator)
        self.game_id = torch.arange(G, device=dev)
        self.next_game_id = G
        self.base_key = rng.make_keys(seed, 1, device=dev)[0]
        self.no_resign = self._control_coin(self.game_id)
        self.would_resign = torch.zeros(G, 2, dtype=torch.bool, device=dev)
        self.swapped = torch.zeros(G, dtype=torch.bool, device=dev)
        # Recorded positions waiting for their game's end: slot g, entry k -> row g * L + k.
        template = env.initial_state(1)
        self.pending = State(*(getattr(template, n).new_zeros((G * L,) + tuple(getattr(template, n).shape[1:]))
                               for n in FIELDS))
        self.pending_policy = torch.zeros(G * L, A, device=dev)
        self.pending_value = torch.zeros(G * L, device=dev)
        self.pending_count = torch.zeros(G, dtype=torch.long, device=dev)
        self.L = L
        # Cell c of a position before the swap is cell swap(c) after it.
        swap_sym = env.game.board.symmetry(env.game.board.swap_symmetry)
        self._swap_cell_perm = torch.tensor(swap_sym.cell_perm, dtype=torch.long, device=dev)

    # ------------------------------------------------------------ randomness
    def _keys(self, game_id: Tensor) -> Tensor:
        return rng.fold(self.base_key.expand(game_id.shape[0]), game_id)

    def _control_coin(self, game_id: Tensor) -> Tensor:
        u = rng.uniform(rng.fold(self._keys(game_id), 0xC0), 0, 1)[:, 0]
        return u < self.cfg.resign_playout

    # ----------------------------------------------------------------- play
    def run(self, replay: ReplayBuffer, positions: int, progress=None) -> SelfPlayStats:
        """Play until ``positions`` recorded positions have entered the replay buffer."""
        stats = SelfPlayStats()
        start = time.perf_counter()
        while stats.recorded < positions:
            added = self.step(replay, stats)
            if progress is not None:
                progress.update(min(added, positions - (stats.recorded - added)))
        stats.seconds = time.perf_counter() - start
        return stats

    def step(self, replay: ReplayBuffer, stats: SelfPlayStats) -> int:
        """One move in every game; returns the number of positions pushed to the replay buffer."""
        env, cfg, s = self.env, self.cfg, self.state
        G, A = s.batch_size, env.num_actions
        keys = rng.fold(self._keys(self.game_id), s.ply)
        full = rng.uniform(rng.fold(keys, 0xF1), 0, 1)[:, 0] < cfg.full_fraction
        actions = torch.zeros(G, dtype=torch.long, device=env.device)
        value = torch.zeros(G, device=env.device)
        for is_full, search, sims in ((True, self.full_search, cfg.full_sims),
                                      (False, self.cheap_search, cfg.cheap_sims)):
            rows = (full if is_full else ~full).nonzero().squeeze(1)
            if rows.numel() == 0:
                continue
            sub = s[rows]
            out = search.run(sub, keys[rows])
            act = out.action
            early = sub.ply < cfg.temperature_moves
            if bool(early.any()):  # sample from the search policy
                u = rng.uniform(rng.fold(keys[rows], 0x7E), 0, 1)
                sampled = (out.policy_target.cumsum(1) < u).sum(1).clamp(max=A - 1)
                legal = env.legal_mask(sub).gather(1, sampled[:, None])[:, 0]
                act = torch.where(early & legal, sampled, act)
            actions[rows] = act
            # The value of the move played (its Q), not the root average over Gumbel candidates,
            # which understates strong positions; the root value where the move was not visited.
            visited = out.visit_counts.gather(1, act[:, None])[:, 0] > 0
            chosen = torch.where(visited, out.q_values.gather(1, act[:, None])[:, 0], out.root_value)
            value[rows] = chosen
            stats.simulations += rows.numel() * sims
            if is_full:
                self._record(rows, sub, out.policy_target, chosen, stats)
        stats.moves += G

        # Resignation (control games only note that they would have resigned).
        hopeless = (value < -cfg.resign_threshold) & (s.ply >= cfg.temperature_moves)
        resign = hopeless & ~self.no_resign
        mover = s.to_move
        self.would_resign[torch.arange(G, device=env.device), mover] |= hopeless & self.no_resign
        self.swapped |= actions == env.game.swap_action
        nxt = env.step(s, actions)
        if bool(resign.any()):
            nxt = nxt.where(resign, s)
            nxt = State(nxt.holes, nxt.cells, nxt.counts, nxt.label, nxt.reach, nxt.to_move, nxt.ply,
                        torch.where(resign, 1 - mover, nxt.winner))
            stats.resigned += int(resign.sum())
        self.state = nxt
        return self._finish_games(replay, stats)

    def _record(self, rows: Tensor, sub: State, policy: Tensor, value: Tensor, stats: SelfPlayStats) -> None:
        slot = rows * self.L + self.pending_count[rows]
        self.pending = self.pending.put(slot, sub, in_place=True)
        self.pending_policy[slot] = policy
        self.pending_value[slot] = value
        self.pending_count[rows] += 1
        p = policy.clamp(min=1e-12)
        stats.target_entropy += float(-(policy * p.log()).sum())

    def _finish_games(self, replay: ReplayBuffer, stats: SelfPlayStats) -> int:
        env, s = self.env, self.state
        done = s.done.nonzero().squeeze(1)
        if done.numel() == 0:
            return 0
        n = done.numel()
        counts = self.pending_count[done]  # [n]
        k = torch.arange(self.L, device=env.device)
        valid = (k[None, :] < counts[:, None]).flatten()  # [n * L]
        rows = (done[:, None] * self.L + k[None, :]).flatten()[valid]
        owner = done.repeat_interleave(counts)  # game slot of each recorded position
        positions = self.pending[rows]
        winner = s.winner[owner]
        mover = positions.to_move
        outcome = torch.where(winner == mover, 1, -1)
        final = s.cells[owner].long()  # [m, C]
        if env.game.swap:  # positions before a swap see the board in the pre-swap frame: map back
            pre_swap = self.swapped[owner] & (positions.ply <= env.game.swap_ply)
            unswapped = final[:, self._swap_cell_perm]
            final = torch.where(pre_swap[:, None], unswapped, final)
        ownership = torch.where(final < 0, 0, torch.where(final == mover[:, None], 1, -1))
        replay.add(positions, self.pending_policy[rows], outcome, ownership)
        added = positions.batch_size

        # Statistics.
        pred = (self.pending_value[rows] + 1) / 2  # predicted chance to win, per position
        bins = (pred * CALIBRATION_BINS).long().clamp(0, CALIBRATION_BINS - 1)
        for acc, weights in ((stats.calib_count, None), (stats.calib_pred, pred), (stats.calib_won, (outcome > 0).float())):
            counts = torch.bincount(bins, weights=weights, minlength=CALIBRATION_BINS).tolist()
            for b in range(CALIBRATION_BINS):
                acc[b] += counts[b]
        stats.recorded += added
        stats.games += n
        stats.first_player_wins += int((s.winner[done] == 0).sum())
        stats.plies += int(s.ply[done].sum())
        stats.swaps += int(self.swapped[done].sum())
        control = self.no_resign[done]
        stats.control_games += int(control.sum())
        would = self.would_resign[done]  # [n, 2]
        winner_would = would.gather(1, s.winner[done][:, None])[:, 0]
        stats.control_would_resign += int((control & would.any(1)).sum())
        stats.false_resigns += int((control & winner_would).sum())

        # New games in the finished slots.
        self.state = env.reset_done(s, self.generator, in_place=True)
        ids = torch.arange(self.next_game_id, self.next_game_id + n, device=env.device)
        self.next_game_id += n
        self.game_id[done] = ids
        self.no_resign[done] = self._control_coin(ids)
        self.would_resign[done] = False
        self.swapped[done] = False
        self.pending_count[done] = 0
        return added

    # ------------------------------------------------------------ checkpoint
    def state_dict(self) -> dict:
        """A copy of everything needed to continue exactly (tensors on the CPU, never shared)."""

        def cpu(t: Tensor) -> Tensor:
            return t.detach().to("cpu", copy=True)

        return {
            "state": {n: cpu(getattr(self.state, n)) for n in FIELDS},
            "pending": {n: cpu(getattr(self.pending, n)) for n in FIELDS},
            "pending_policy": cpu(self.pending_policy), "pending_value": cpu(self.pending_value),
            "pending_count": cpu(self.pending_count), "game_id": cpu(self.game_id),
            "next_game_id": self.next_game_id, "no_resign": cpu(self.no_resign),
            "would_resign": cpu(self.would_resign), "swapped": cpu(self.swapped),
            "generator": self.generator.get_state(), "base_key": cpu(self.base_key),
        }

    def load_state_dict(self, d: dict) -> None:
        dev = self.env.device
        if d["game_id"].shape[0] != self.cfg.games:
            raise ValueError(f"saved self-play has {d['game_id'].shape[0]} games; the config says {self.cfg.games}")

        def own(t: Tensor) -> Tensor:
            return t.to(dev, copy=True)

        self.state = State(**{n: own(d["state"][n]) for n in FIELDS})
        self.pending = State(**{n: own(d["pending"][n]) for n in FIELDS})
        self.pending_policy, self.pending_value = own(d["pending_policy"]), own(d["pending_value"])
        self.pending_count, self.game_id = own(d["pending_count"]), own(d["game_id"])
        self.next_game_id = int(d["next_game_id"])
        self.no_resign, self.would_resign = own(d["no_resign"]), own(d["would_resign"])
        self.swapped = own(d["swapped"])
        self.generator.set_state(d["generator"])
        self.base_key = own(d["base_key"])

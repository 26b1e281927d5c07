"""Self-play: G games at once through the batched search, finished games replaced at once.

One self-play step, for every game at once (``SelfPlay.step``; no host synchronisation):

1. **search**: the whole batch takes a full search (``full_sims``, root noise; recorded as training
   positions) or a cheap one (``cheap_sims``, no noise, not recorded), drawn per step with
   probability ``full_fraction`` (playout-cap randomisation; games are at different plies, so each
   game still sees a mix);
2. **choose**: the search's move, or for the first ``temperature_moves`` plies a move sampled from
   the search policy (for the first ``random_first_moves`` plies a uniformly random legal move; in
   a ``start_fraction`` share of the games, first the moves of a line of ``start_lines``:
   ``train.start_lines``);
   its value is the move's Q (the value of what is played);
3. **record** (full steps): each position and its policy target go straight into the replay ring;
   the game remembers the rows, its mover and the move's value; positions before the last forced
   random move get no value or ownership target (the outcome of a game whose next move was random
   says nothing of the position: with two random moves, every first move looked winning);
4. **resign**: a player whose move is worth less than ``-resign_threshold`` resigns, except in a
   ``resign_playout`` share of games, played out to count how often resigning would have been wrong;
5. **step** the rules; **finish** games that ended: their rows get the outcome for their mover and
   the final cell owners from the mover's view (positions before a swap in the mover's pre-swap
   frame); counters accumulate on the device; finished games restart in place under new ids.

Counters are read once, at the end of ``run`` (one synchronisation per self-play phase).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch
from torch import Tensor

from conhex_zero.agents.evaluators import Evaluator
from conhex_zero.agents.game_search import GameSearch
from conhex_zero.device import host_reads
from conhex_zero.env.state import FIELDS, State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.search import rng
from conhex_zero.search.mcts import SearchConfig
from conhex_zero.train.config import SelfPlayConfig
from conhex_zero.train.replay import ReplayBuffer
from conhex_zero.train.start_lines import read_start_lines, start_line_tensor

CALIBRATION_BINS = 10
# Device counters: games, first-player wins, plies, swaps, resignations, control games, control games
# in which someone would have resigned, false resignations, summed policy-target entropy, then the
# calibration bins (positions, predicted wins, actual wins).
_COUNTERS = ("games", "first_player_wins", "plies", "swaps", "resigned", "control_games",
             "control_would_resign", "false_resigns", "target_entropy")
_C = {name: i for i, name in enumerate(_COUNTERS)}
_CALIB = len(_COUNTERS)


@dataclass
class SelfPlayStats:
    seconds: float = 0.0
    steps: int = 0
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
        if total:
            err = sum(abs(self.calib_pred[b] - self.calib_won[b]) for b in range(CALIBRATION_BINS)) / total
            out["selfplay/value_calibration_error"] = err
        return out


def _relative(owner: Tensor, mover: Tensor) -> Tensor:
    """Owners (-1 none, 0, 1) as +1 mover / -1 opponent / 0 none (int8, broadcasting)."""
    return torch.where(owner < 0, 0, torch.where(owner == mover, 1, -1)).to(torch.int8)


class SelfPlay:
    def __init__(self, env: VecEnv, config: SelfPlayConfig, evaluator: Evaluator, seed: int):
        self.env, self.cfg, self.seed = env, config, seed
        dev = env.device
        G, L = config.games, env.game.max_plies + 1
        noise = dict(scheme=config.scheme, max_considered=config.max_considered,
                     dirichlet_alpha=config.dirichlet_alpha, cuda_graphs=config.cuda_graphs, solver=config.solver)
        full = SearchConfig(num_simulations=config.full_sims, gumbel_scale=1.0,
                            dirichlet_fraction=config.dirichlet_fraction, **noise)
        cheap = SearchConfig(num_simulations=config.cheap_sims, gumbel_scale=0.0, dirichlet_fraction=0.0, **noise)
        self.full_search = GameSearch(env, evaluator, full, tactics=True)
        self.cheap_search = GameSearch(env, evaluator, cheap, tactics=True)
        self.L = L
        self.generator = torch.Generator(device=dev).manual_seed(seed)
        self.state = env.reset(G, self.generator)
        self.game_id = torch.arange(G, device=dev)
        self.next_game_id = torch.tensor(G, device=dev)
        self.base_key = rng.make_keys(seed, 1, device=dev)[0]
        self.no_resign = self._control_coin(self.game_id)
        self.would_resign = torch.zeros(G, 2, dtype=torch.bool, device=dev)
        self.swapped = torch.zeros(G, dtype=torch.bool, device=dev)
        self.step_count = 0
        # The recorded positions of each game in progress: replay row, mover, ply, move value.
        self.pending_row = torch.full((G, L), -1, dtype=torch.long, device=dev)
        self.pending_mover = torch.zeros(G, L, dtype=torch.int8, device=dev)
        self.pending_ply = torch.zeros(G, L, dtype=torch.int16, device=dev)
        self.pending_value = torch.zeros(G, L, device=dev)
        self.pending_count = torch.zeros(G, dtype=torch.long, device=dev)
        self.counters = torch.zeros(_CALIB + 3 * CALIBRATION_BINS, dtype=torch.float64, device=dev)
        # Cell c of a position before the swap is cell swap(c) after it.
        board = env.game.board
        swap_perm = board.symmetry(board.swap_symmetry).cell_perm
        self._swap_cell_perm = torch.tensor(swap_perm, dtype=torch.long, device=dev)
        self._slots = torch.arange(G, device=dev)
        self._players = torch.arange(2, device=dev)
        self.start_lines: Tensor | None = None  # [N, K] forced first moves (-1 after a line's end)
        if config.start_lines:
            lines = read_start_lines(config.start_lines, env.game)
            self.start_lines = start_line_tensor(lines, dev)
            self._start_length = (self.start_lines >= 0).sum(1)  # [N]

    # ------------------------------------------------------------ randomness
    def _keys(self, game_id: Tensor) -> Tensor:
        return rng.fold(self.base_key.expand(game_id.shape[0]), game_id)

    def _control_coin(self, game_id: Tensor) -> Tensor:
        u = rng.uniform(rng.fold(self._keys(game_id), 0xC0), 0, 1)[:, 0]
        return u < self.cfg.resign_playout

    def _start(self, game_id: Tensor) -> tuple[Tensor, Tensor]:
        """``([G] line of each game, [G] its forced plies)``: 0 plies for a game without a line.
        Drawn from the game's id alone, so a resumed run draws the same."""
        u = rng.uniform(rng.fold(self._keys(game_id), 0x51), 0, 2)  # [G, 2]
        n = self.start_lines.shape[0]
        line = (u[:, 0] * n).long().clamp(max=n - 1)
        on = u[:, 1] < self.cfg.start_fraction
        return line, torch.where(on, self._start_length[line], 0)

    def _full_step(self) -> bool:
        """Whether this step searches fully: drawn on the host from (seed, step), no device read."""
        return rng.host_uniform(self.seed, self.step_count) < self.cfg.full_fraction

    # ----------------------------------------------------------------- play
    def run(self, replay: ReplayBuffer, positions: int, progress=None) -> SelfPlayStats:
        """Play until ``positions`` recorded positions have entered the replay buffer."""
        stats = SelfPlayStats()
        self.counters.zero_()
        start = time.perf_counter()
        while stats.recorded < positions:
            added = self.step(replay, stats)
            if progress is not None and added:
                progress.update(min(added, positions - (stats.recorded - added)))
        self.read_counters(stats)
        stats.seconds = time.perf_counter() - start
        return stats

    def read_counters(self, stats: SelfPlayStats) -> None:
        """Copy the device counters into ``stats`` (one host synchronisation)."""
        c = self.counters.tolist()
        for name in _COUNTERS:
            value = c[_C[name]]
            setattr(stats, name, value if name == "target_entropy" else int(round(value)))
        bins = CALIBRATION_BINS
        stats.calib_count = c[_CALIB:_CALIB + bins]
        stats.calib_pred = c[_CALIB + bins:_CALIB + 2 * bins]
        stats.calib_won = c[_CALIB + 2 * bins:]

    def step(self, replay: ReplayBuffer, stats: SelfPlayStats) -> int:
        """One move of every game (see the module docstring); returns the positions recorded. Never
        reads a device value on the host, on any device (``host_reads.disabled``)."""
        if torch.compiler.is_compiling():  # traced: no reads anyway, and no context manager to trace
            return self._step(replay, stats)
        with host_reads.disabled():
            return self._step(replay, stats)

    def _step(self, replay: ReplayBuffer, stats: SelfPlayStats) -> int:
        """One move in every game; returns the number of positions recorded (known on the host)."""
        env, cfg, s = self.env, self.cfg, self.state
        G, A = s.batch_size, env.num_actions
        full = self._full_step()
        self.step_count += 1
        game_search = self.full_search if full else self.cheap_search
        keys = rng.fold(self._keys(self.game_id), s.ply)

        # 1-2. search and choose
        out = game_search.run(s, keys)
        legal = env.legal_mask(s)
        u = rng.uniform(rng.fold(keys, 0x7E), 0, 1)
        sampled = (out.policy_target.cumsum(1) < u).sum(1).clamp(max=A - 1)
        temperature_end = cfg.temperature_moves
        if self.start_lines is not None:
            line, forced = self._start(self.game_id)  # [G], [G]
            temperature_end = forced + cfg.temperature_moves  # counted from the line's end
        early = (s.ply < temperature_end) & legal.gather(1, sampled[:, None])[:, 0]
        action = torch.where(early, sampled, out.action)
        if cfg.random_first_moves > 0:  # forced openings: the k-th legal move for a uniform k
            draw = rng.uniform(rng.fold(keys, 0x0F), 0, 1)[:, 0]  # [G]
            opening = env.random_actions(s, swap=False, draw=draw)  # [G]
            action = torch.where(s.ply < cfg.random_first_moves, opening, action)
        if self.start_lines is not None:  # a game on its start line plays the line's move
            K = self.start_lines.shape[1]
            on_line = s.ply < forced
            action = torch.where(on_line, self.start_lines[line, s.ply.clamp(max=K - 1)], action)
        visited = out.visit_counts.gather(1, action[:, None])[:, 0] > 0
        value = torch.where(visited, out.q_values.gather(1, action[:, None])[:, 0], out.root_value)
        stats.steps += 1
        stats.moves += G
        stats.simulations += G * game_search.config.num_simulations

        # 3. record
        recorded = 0
        if full:
            self._record(replay, s, out.policy_target, value)
            recorded = G

        # 4. resign (control games only note that they would have)
        hopeless = (value < -cfg.resign_threshold) & (s.ply >= temperature_end)
        resign = hopeless & ~self.no_resign
        mover = s.to_move
        seat = mover[:, None] == self._players  # [G, 2] (one_hot would check its input on the host)
        self.would_resign |= seat & (hopeless & self.no_resign)[:, None]
        self.swapped |= action == env.game.swap_action

        # 5. rules, then finished games
        nxt = env.step(s, action).where(resign, s)
        self.state = nxt.with_winner(torch.where(resign, 1 - mover, nxt.winner))
        self.counters[_C["resigned"]] += resign.sum()
        self._finish_games(replay)
        stats.recorded += recorded
        return recorded

    def _record(self, replay: ReplayBuffer, s: State, policy: Tensor, value: Tensor) -> None:
        G = s.batch_size
        rows = replay.reserve(G)
        replay.write(rows, s, policy, self.game_id)
        slot = self._slots * self.L + self.pending_count  # [G] entry of each game's list
        self.pending_row.view(-1).index_copy_(0, slot, rows)
        self.pending_mover.view(-1).index_copy_(0, slot, s.to_move.to(torch.int8))
        self.pending_ply.view(-1).index_copy_(0, slot, s.ply.to(torch.int16))
        self.pending_value.view(-1).index_copy_(0, slot, value.float())
        self.pending_count += 1
        entropy = -(policy * policy.clamp(min=1e-12).log()).sum()
        self.counters[_C["target_entropy"]] += entropy

    def _finish_games(self, replay: ReplayBuffer) -> None:
        env, s, cnt = self.env, self.state, self.counters
        G, L, C = s.batch_size, self.L, env.num_cells
        done = s.done  # [G]
        entry = torch.arange(L, device=env.device)
        valid = (entry[None, :] < self.pending_count[:, None]) & done[:, None]  # [G, L]
        # A position whose next move was forced-random has the outcome of a game it did not choose:
        # no value or ownership target for it (its policy target, the search's, still counts).
        forced = self.cfg.random_first_moves
        if self.start_lines is not None:  # a start line's moves were forced as well
            forced = torch.clamp(self._start(self.game_id)[1], min=forced)[:, None]  # [G, 1]
        valid &= self.pending_ply >= forced
        winner = s.winner  # [G]
        mover = self.pending_mover.long()  # [G, L]
        outcome = torch.where(winner[:, None] == mover, 1, -1)  # [G, L]
        final = s.cells.long()  # [G, C]
        own = _relative(final[:, None, :], mover[:, :, None])  # [G, L, C]
        if env.game.swap:  # positions before a swap see the board in the pre-swap frame: map back
            pre_swap = self.swapped[:, None] & (self.pending_ply <= env.game.swap_ply)  # [G, L]
            own_pre = _relative(final[:, self._swap_cell_perm][:, None, :], mover[:, :, None])
            own = torch.where(pre_swap[:, :, None], own_pre, own)
        game = self.game_id[:, None].expand(G, L)
        replay.set_targets(self.pending_row.flatten(), game.flatten(), outcome.flatten(), own.view(G * L, C),
                           valid.flatten())

        # counters
        d = done.double()
        control = self.no_resign & done
        winner_would = self.would_resign.gather(1, winner.clamp(min=0)[:, None])[:, 0]
        cnt[_C["games"]] += d.sum()
        cnt[_C["first_player_wins"]] += (done & (winner == 0)).sum()
        cnt[_C["plies"]] += (s.ply * done).sum()
        cnt[_C["swaps"]] += (self.swapped & done).sum()
        cnt[_C["control_games"]] += control.sum()
        cnt[_C["control_would_resign"]] += (control & self.would_resign.any(1)).sum()
        cnt[_C["false_resigns"]] += (control & winner_would).sum()
        pred = ((self.pending_value + 1) / 2).flatten()  # predicted chance to win, per position
        bins = (pred * CALIBRATION_BINS).long().clamp(0, CALIBRATION_BINS - 1)
        w = valid.flatten().double()
        won = (outcome > 0).flatten().double() * w
        for offset, weights in ((0, w), (CALIBRATION_BINS, pred.double() * w), (2 * CALIBRATION_BINS, won)):
            cnt[_CALIB + offset:_CALIB + offset + CALIBRATION_BINS].index_add_(0, bins, weights)

        # new games in the finished slots, under new ids
        new_id = self.next_game_id + done.long().cumsum(0) - 1
        self.game_id = torch.where(done, new_id, self.game_id)
        self.next_game_id = self.next_game_id + done.long().sum()
        self.no_resign = torch.where(done, self._control_coin(self.game_id), self.no_resign)
        self.would_resign &= ~done[:, None]
        self.swapped &= ~done
        self.pending_count = torch.where(done, 0, self.pending_count)
        self.state = env.reset_done(s, self.generator, in_place=True)

    # ------------------------------------------------------------ checkpoint
    def state_dict(self) -> dict:
        """A copy of everything needed to continue exactly (tensors on the CPU, never shared)."""

        def cpu(t: Tensor) -> Tensor:
            return t.detach().to("cpu", copy=True)

        return {
            "state": {n: cpu(getattr(self.state, n)) for n in FIELDS},
            "pending_row": cpu(self.pending_row), "pending_mover": cpu(self.pending_mover),
            "pending_ply": cpu(self.pending_ply), "pending_value": cpu(self.pending_value),
            "pending_count": cpu(self.pending_count), "game_id": cpu(self.game_id),
            "next_game_id": cpu(self.next_game_id), "no_resign": cpu(self.no_resign),
            "would_resign": cpu(self.would_resign), "swapped": cpu(self.swapped),
            "step_count": self.step_count, "seed": self.seed, "generator": self.generator.get_state(),
            "base_key": cpu(self.base_key),
        }

    def load_state_dict(self, d: dict, row_map: Tensor | None = None) -> None:
        """Restore; ``row_map`` (from ``ReplayBuffer.load_state_dict``) moves the pending rows."""
        dev = self.env.device
        if d["game_id"].shape[0] != self.cfg.games:
            raise ValueError(f"saved self-play has {d['game_id'].shape[0]} games; the config says {self.cfg.games}")

        def own(t: Tensor) -> Tensor:
            return t.to(dev, copy=True)

        self.state = State(**{n: own(d["state"][n]) for n in FIELDS})
        rows = d["pending_row"]
        if row_map is not None:
            rows = torch.where(rows >= 0, row_map[rows.clamp(min=0)], rows)
        self.pending_row = own(rows)
        self.pending_mover, self.pending_ply = own(d["pending_mover"]), own(d["pending_ply"])
        self.pending_value, self.pending_count = own(d["pending_value"]), own(d["pending_count"])
        self.game_id, self.next_game_id = own(d["game_id"]), own(d["next_game_id"])
        self.no_resign, self.would_resign = own(d["no_resign"]), own(d["would_resign"])
        self.swapped = own(d["swapped"])
        self.step_count, self.seed = int(d["step_count"]), int(d["seed"])
        self.generator.set_state(d["generator"])
        self.base_key = own(d["base_key"])

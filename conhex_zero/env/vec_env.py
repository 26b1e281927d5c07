"""The vectorised rules engine: batched ``step``, legal masks, resets, for any ``Game``.

``VecEnv`` holds only constant tables (on its device); states are passed in and returned, never
mutated (except by ``reset_done(..., in_place=True)``, on request). ``step`` is a fixed sequence of
tensor ops over the whole batch (no Python loop over games, holes or cells; no host
synchronisation except to validate actions with ``check=True`` and, on the CPU where it is free,
to find the games that swap: see ``conhex_zero.device.host_reads``):

1. the piece goes on its hole;
2. the mover's counts of the (at most K) cells around that hole go up by one;
3. those cells reach their ``need`` and are still free -> conquered by the mover;
4. chains: the conquered cells and the mover's chains next to them are merged under one label
   (the new label is scattered into an identity relabelling table at the labels that join, and
   every cell's label is looked up in it);
5. the merged chain's side contacts are the union of its parts' (cached per chain in ``reach``);
   touching both of the mover's sides wins;
6. with the mirror-move limit (``mirror=K``), the mover's streak per symmetry grows when the move is
   the image of the opponent's preceding move and restarts otherwise; the legal mask bans the hole
   that would be a (K+1)-th consecutive mirror.

Only step 4's relabelling touches all C cells; everything else works on the K cells of the hole
and their K*D neighbours.

The swap action maps the whole position through the board's swap symmetry with colours exchanged
(the piece swap of the pie rule). Without random opening pieces the board holds a single piece when
the swap is legal, so the swap is that piece's image placed by the swapper on an emptied board: the
step blanks the swapping games and places the image like any move (a few blends, where mapping every
game's whole position through the symmetry costs several times a step). With random pieces the whole
position is mapped. Finished games are left unchanged by later steps.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch
from torch import Tensor

from conhex_zero.device.host_reads import host_reads_free, may_be_true
from conhex_zero.env.ops import both, or_bytes, padded_width, select
from conhex_zero.env.state import FIELDS, State
from conhex_zero.env.symmetry import SymmetryTables
from conhex_zero.games.board import PLAYER_SIDES
from conhex_zero.games.game import Game, parse_game


class IllegalActionError(ValueError):
    """An action is not legal in its game (raised by ``step(..., check=True)``)."""

    def __init__(self, message: str, games: list[int], reasons: list[str]):
        super().__init__(message)
        self.games = games
        self.reasons = reasons


class VecEnv:
    """Batched rules for one ``Game`` on one device."""

    def __init__(self, game: Game | str, device: torch.device | str = "cpu"):
        self.game = parse_game(game)
        self.device = torch.device(device)
        board = self.game.board
        H, C = board.num_holes, board.num_cells
        self.num_holes, self.num_cells, self.num_actions = H, C, self.game.num_actions
        dev = self.device

        # Cells around each hole, padded to K by repeating the first one (repeats are masked out of
        # the counts by hole_cells_valid and are harmless elsewhere).
        K = max(len(cs) for cs in board.hole_cells)
        hc = [list(cs) + [cs[0]] * (K - len(cs)) for cs in board.hole_cells]
        valid = [[1] * len(cs) + [0] * (K - len(cs)) for cs in board.hole_cells]
        self.hole_cells = torch.tensor(hc, dtype=torch.long, device=dev)  # [H, K]
        self.hole_cells_valid = torch.tensor(valid, dtype=torch.int8, device=dev)  # [H, K]
        need = torch.tensor(board.cell_need, dtype=torch.int8, device=dev)  # [C]
        self.hole_cells_need = need[self.hole_cells]  # [H, K]
        # Neighbours of each cell, padded to D by repeating the first (a set is all we need).
        D = max(len(n) for n in board.neighbours)
        nb = [list(n) + [n[0]] * (D - len(n)) if n else [c] * D for c, n in enumerate(board.neighbours)]
        self.neighbours = torch.tensor(nb, dtype=torch.long, device=dev)  # [C, D]
        # side_bits[p * C + c]: bit 0 if cell c is on player p's first side, bit 1 if on the second.
        sides = board.side_masks.astype("int8")  # [4, C]
        bits = np.stack([sides[a] + 2 * sides[b] for a, b in PLAYER_SIDES])  # [2, C]
        self.side_bits = torch.tensor(bits, dtype=torch.int8, device=dev).reshape(2 * C)  # [2C]
        self.turn_table = torch.tensor(self.game.turn_table, device=dev)  # [max_plies + 2]
        self.forbidden = torch.tensor(self.game.forbidden_holes, device=dev)  # [H]
        self.cell_ids = torch.arange(C, dtype=torch.int16, device=dev)[None]  # [1, C]
        self._hole_ids_f = torch.arange(H, dtype=torch.float32, device=dev)  # [H]
        self._cell_ids32 = self.cell_ids.int()  # [1, C] (a gather from int32 is the fastest on the CPU)
        self._zero_holes = torch.zeros((1, H), dtype=torch.int8, device=dev)  # [1, H]
        self._zero_k = torch.zeros((1, K), dtype=torch.int8, device=dev)  # [1, K]
        self._reach_pad = padded_width(K + K * D) - (K + K * D)

        # The swap: the position mapped through a side-exchanging symmetry, colours exchanged.
        self.symmetries = SymmetryTables(board, dev)
        self._swap_symmetry = self.symmetries.index(board.swap_symmetry)
        self._swap_image = torch.tensor(board.symmetry(board.swap_symmetry).hole_perm, device=dev)  # [H]
        # The mirror-move limit: image of every hole under each limited symmetry.
        names = self.game.mirror_symmetries
        self.num_mirrors = len(names)
        images = [board.symmetry(n).hole_perm for n in names]
        self.mirror_image = torch.tensor(images, dtype=torch.long, device=dev).reshape(len(names), H).T  # [H, S]

        self._empty_row = self.initial_state(1)

    def __repr__(self) -> str:
        return f"VecEnv({self.game.spec!r}, device={str(self.device)!r})"

    # ------------------------------------------------------------------ reset
    def initial_state(self, batch_size: int) -> State:
        """``batch_size`` empty boards (before any random opening pieces)."""
        B, H, C, dev = batch_size, self.num_holes, self.num_cells, self.device
        return State(
            holes=torch.full((B, H), -1, dtype=torch.int8, device=dev),
            cells=torch.full((B, C), -1, dtype=torch.int8, device=dev),
            counts=torch.zeros((B, 2, C), dtype=torch.int8, device=dev),
            label=self.cell_ids.expand(B, C).clone(),
            reach=torch.zeros((B, C), dtype=torch.int8, device=dev),
            to_move=self.turn_table[0].expand(B).clone(),
            ply=torch.zeros(B, dtype=torch.long, device=dev),
            winner=torch.full((B,), -1, dtype=torch.long, device=dev),
            last=torch.full((B,), -1, dtype=torch.long, device=dev),
            streak=torch.zeros((B, 2, self.num_mirrors), dtype=torch.int8, device=dev),
        )

    def reset(self, batch_size: int, generator: torch.Generator | None = None) -> State:
        """New games, with the game's random opening pieces placed (drawn from ``generator``)."""
        if self.game.random_pieces == 0:
            return self.initial_state(batch_size)
        state: State | None = None
        for _attempt in range(100):
            fresh = self.initial_state(batch_size)
            for _ply in range(self.game.opening_plies):
                fresh = self.step(fresh, self.random_actions(fresh, generator))
            # An opening that already decided the game (tiny boards only) is drawn again.
            state = fresh if state is None else state.where(state.done, fresh)
            if not bool(state.done.any()):
                return state
        raise RuntimeError(f"{self.game.spec}: random openings keep finishing the game; "
                           f"use fewer random pieces")

    def reset_done(self, state: State, generator: torch.Generator | None = None,
                   in_place: bool = False, rows: Tensor | None = None) -> State:
        """Finished games replaced by new ones; running games untouched.

        Every game is blended with a fresh one under the ``done`` mask (no host synchronisation;
        with random opening pieces the fresh games are drawn for the whole batch). A host loop that
        already knows the finished games' indices passes them as ``rows``: only those are written.
        ``in_place=True`` writes into ``state``'s own tensors instead of new ones: for loops that
        own the state (such as the one ``step`` just returned).
        """
        if rows is not None:
            if rows.numel() == 0:
                return state
            fresh = self.reset(rows.numel(), generator) if self.game.random_pieces else self._empty_row
            return state.put(rows, fresh, in_place=in_place)
        done = state.done
        fresh = self.reset(state.batch_size, generator) if self.game.random_pieces else self._empty_row
        out = state.where(done, fresh)
        if not in_place:
            return out
        for name in FIELDS:
            getattr(state, name).copy_(getattr(out, name))
        return state

    # ------------------------------------------------------------------ legal
    def legal_mask(self, state: State) -> Tensor:
        """``[B, A]`` bool: legal actions (empty holes, and swap on its ply), none once done."""
        live = state.winner < 0  # [B]
        holes_ok = both(state.holes < self._zero_holes, live[:, None])  # [B, H]
        if self.game.forbid_depth is not None:
            first = state.ply == self.game.first_move_ply  # [B]
            holes_ok = both(holes_ok, ~both(first[:, None], self.forbidden))
        if self.game.mirror is not None:
            holes_ok = both(holes_ok, ~self._mirror_banned(state))
        if self.game.swap:
            swap_ok = live & (state.ply == self.game.swap_ply)  # [B]
        else:
            swap_ok = torch.zeros_like(live)
        return torch.cat([holes_ok, swap_ok[:, None]], dim=1)

    def _mirror_candidates(self, state: State) -> tuple[Tensor, Tensor, Tensor]:
        """The holes that would mirror the previous move ``[B, S]``, whether that move was the
        opponent's ``[B]``, and the mover's streaks ``[B, S]``."""
        B, S = state.batch_size, self.num_mirrors
        # Who made the last move: the owner of its piece (pieces never move or change colour, and a
        # swap clears ``last``), which also holds for the colour-exchanged image of a position.
        previous = state.holes.gather(1, state.last.clamp(min=0)[:, None])[:, 0].long()  # [B]
        after_opponent = (state.last >= 0) & (previous >= 0) & (previous != state.to_move)
        images = self.mirror_image.index_select(0, state.last.clamp(min=0))  # [B, S]
        mine = state.streak.gather(1, state.to_move[:, None, None].expand(B, 1, S))[:, 0]  # [B, S]
        return images, after_opponent, mine

    def _mirror_banned(self, state: State) -> Tensor:
        """``[B, H]`` bool: holes that would be the mover's (K+1)-th consecutive mirror move."""
        images, after_opponent, mine = self._mirror_candidates(state)
        banned = (mine >= self.game.mirror) & after_opponent[:, None]  # [B, S]
        count = torch.zeros((state.batch_size, self.num_holes), dtype=torch.int8, device=self.device)
        return count.scatter_add_(1, images, banned.to(torch.int8)) > 0

    def random_actions(self, state: State, generator: torch.Generator | None = None,
                       uniforms: Tensor | None = None, swap: bool = True, draw: Tensor | None = None) -> Tensor:
        """``[B]`` uniformly random legal actions (0 for finished games). With ``uniforms`` ``[B, A]``
        (counter-based randomness, see ``search.rng``): the legal action with the highest of them;
        otherwise one uniform per game in [0, 1), ``draw`` ``[B]`` or drawn from ``generator``,
        picks the k-th legal action (a quarter of the cost: drawing B*A numbers is the dearest op
        here on the CPU). ``swap=False`` never picks the swap."""
        legal = self.legal_mask(state)  # [B, A]
        if not swap:
            legal[:, self.game.swap_action] = False
        if uniforms is not None:
            return (uniforms * legal).argmax(dim=1)
        count = legal.to(torch.int32).cumsum(1, dtype=torch.int32)  # [B, A] legal actions up to each
        n = count[:, -1]  # [B]
        u = torch.rand(n.shape, generator=generator, device=self.device) if draw is None else draw  # [B]
        k = torch.minimum((u * n).to(torch.int32), n - 1)  # [B] in [0, n): the k-th legal action
        index = (count <= k[:, None]).view(torch.uint8).sum(1, dtype=torch.int32)  # [B] its position
        return (index * (n > 0)).long()

    # ------------------------------------------------------------------- step
    def step(self, state: State, action: Tensor, check: bool = False) -> State:
        """Apply ``action`` [B] to every game; returns the new state.

        With ``check=True`` illegal actions raise ``IllegalActionError`` (this synchronises with the
        device); without it they are not detected, except that finished games never change.
        """
        action = action.to(device=self.device, dtype=torch.long)
        if check:
            self.check_actions(state, action)
        H, C = self.num_holes, self.num_cells
        single_piece_swap = self.game.swap and self.game.random_pieces == 0
        if single_piece_swap:
            # At the swap's ply the board holds one piece: swapping is placing its image, for the
            # swapper, on an emptied board (rows that swap are blanked, their action becomes the image).
            swapping = (state.winner < 0) & (action == H)  # [B]
            # On the CPU (a host read is free) only the swapping games are rewritten, if any.
            rows = swapping.nonzero().squeeze(1) if host_reads_free(self.device) else None
            any_swap = rows is None or rows.numel() > 0
            if any_swap:
                # [B] hole of the single piece (the first player's, 0 in ``holes``; elsewhere empty, -1):
                # the sum of the ids of the occupied holes, as one matrix-vector product (argmax over
                # the rows costs four times more on the CPU); clamped for rows that do not swap.
                piece = torch.mv((state.holes + 1).float(), self._hole_ids_f).long().clamp(max=H - 1)
                if rows is None:
                    state = state.where(swapping, self._blank(state))
                else:
                    state = state.put(rows, self._blank(state[rows]))
                action = torch.where(swapping, self._swap_image.index_select(0, piece), action)
        K, D = self.hole_cells.shape[1], self.neighbours.shape[1]
        B = action.shape[0]
        dev = self.device
        p = state.to_move  # [B]
        p8 = p.to(torch.int8)[:, None]  # [B, 1]
        live = state.winner < 0  # [B]
        is_swap = action == H  # [B]
        place = (live & ~is_swap)[:, None]  # [B, 1]
        hole = action.clamp(0, H - 1)  # [B]

        # 1. the piece
        old = state.holes.gather(1, hole[:, None])  # [B, 1]
        holes = state.holes.scatter(1, hole[:, None], select(place, old, p8))  # [B, H]

        # 2. the mover's counts of the cells around the hole
        hc = self.hole_cells.index_select(0, hole)  # [B, K]
        inc = self.hole_cells_valid.index_select(0, hole) * place  # [B, K] int8
        flat = hc + p[:, None] * C  # [B, K]: index into counts viewed as [B, 2C]
        counts = state.counts.reshape(B, 2 * C).scatter_add(1, flat, inc)  # [B, 2C]

        # 3. conquest: the first player to hold `need` holes of a cell owns it
        own = state.cells.gather(1, hc)  # [B, K]
        need = self.hole_cells_need.index_select(0, hole)  # [B, K]
        new = both(both(own < self._zero_k, counts.gather(1, flat) >= need), place)  # [B, K]
        cells = state.cells.scatter(1, hc, select(new, own, p8))  # [B, C]
        any_new = new.any(1)  # [B]

        # 4. chains: the new cells and the mover's chains next to them merge under label `rep`.
        # (Comparisons take pre-expanded operands: broadcasting ones are slow on CPU, see ops.py.)
        rep = hc.gather(1, new.to(torch.int8).argmax(1, keepdim=True))  # [B, 1] a new cell
        nb = self.neighbours.index_select(0, hc.reshape(-1)).view(B, K * D)  # [B, K*D]
        mover = p8.expand(B, K * D).contiguous()  # [B, K*D]
        mine = both((cells.gather(1, nb) == mover).view(B, K, D), new[:, :, None]).view(B, K * D)
        rep16 = rep.to(torch.int16)  # [B, 1]
        nb_label = select(mine, rep16.expand(B, K * D).contiguous(), state.label.gather(1, nb))
        nb_label = nb_label.long()  # [B, K*D]: labels of the mover's chains next to new cells
        joining = torch.cat([nb_label, select(new, rep, hc)], dim=1)  # [B, K*D + K] labels to merge
        relabel = self._cell_ids32.expand(B, C).scatter(  # [B, C]: old label -> new label
            1, joining, rep.to(torch.int32).expand(B, joining.shape[1]))
        label = relabel.gather(1, state.label.long()).to(torch.int16)  # [B, C]

        # 5. the merged chain touches the sides of the new cells and of the chains it absorbed
        side_new = torch.take(self.side_bits, flat) * new  # [B, K]
        side_old = state.reach.gather(1, nb_label) * mine  # [B, K*D]
        pad = torch.zeros((B, self._reach_pad), dtype=torch.int8, device=dev)
        chain_reach = or_bytes(torch.cat([side_new, side_old, pad], dim=1))  # [B]
        chain_reach = select(any_new, state.reach.gather(1, rep)[:, 0], chain_reach.to(torch.int8))
        reach = state.reach.scatter(1, rep, chain_reach[:, None])  # [B, C]
        win = any_new & (chain_reach == 3)  # [B]

        ply = state.ply + live.long()  # [B]
        last, streak = state.last, state.streak
        if self.game.mirror is not None:  # 6. the mover's mirror streaks, the last move
            S = self.num_mirrors
            images, after_opponent, mine = self._mirror_candidates(state)
            mirrors = (images == hole[:, None]) & after_opponent[:, None] & place  # [B, S]
            mine = torch.where(mirrors, mine + 1, 0).to(torch.int8)
            seat = p[:, None, None].expand(B, 1, S)
            streak = torch.where(live[:, None, None], streak.scatter(1, seat, mine[:, None]), streak)
            last = torch.where(place[:, 0], hole, last)
        next_state = State(
            holes=holes,
            cells=cells,
            counts=counts.view(B, 2, C),
            label=label,
            reach=reach,
            to_move=self.turn_table[ply],
            ply=ply,
            winner=torch.where(win, p, state.winner),
            last=last,
            streak=streak,
        )
        if single_piece_swap:  # the image piece does not count as a move to mirror
            if self.game.mirror is not None and any_swap:
                next_state = dataclasses.replace(next_state, last=torch.where(swapping, -1, next_state.last))
        elif self.game.swap and may_be_true(live & is_swap):  # the pie rule: swapping games take the mapped position
            next_state = next_state.where(live & is_swap, self._swapped(state))
        return next_state

    def _blank(self, state: State) -> State:
        """Empty boards that keep each game's turn, ply and result (for the single-piece swap)."""
        empty = self._empty_row
        return State(empty.holes, empty.cells, empty.counts, empty.label, empty.reach, state.to_move, state.ply,
                     state.winner, empty.last, empty.streak)

    def _swapped(self, state: State) -> State:
        """Positions mapped through the swap symmetry with colours exchanged; next player 0."""
        image = self.symmetries.apply(state, self._swap_symmetry)
        ply = state.ply + 1
        return State(image.holes, image.cells, image.counts, image.label, image.reach,
                     to_move=self.turn_table[ply], ply=ply, winner=state.winner,
                     last=torch.full_like(state.last, -1), streak=torch.zeros_like(state.streak))

    # ------------------------------------------------------------- checking
    def check_actions(self, state: State, action: Tensor) -> None:
        """Raise ``IllegalActionError`` naming every game whose action is illegal, and why."""
        A = self.num_actions
        in_range = (action >= 0) & (action < A)
        legal = self.legal_mask(state).gather(1, action.clamp(0, A - 1)[:, None])[:, 0] & in_range
        if bool(legal.all()):
            return
        bad = (~legal).nonzero().squeeze(1).tolist()
        reasons = [self.why_illegal(state, g, int(action[g])) for g in bad]
        shown = "; ".join(f"game {g}: {r}" for g, r in list(zip(bad, reasons))[:5])
        more = f" (and {len(bad) - 5} more)" if len(bad) > 5 else ""
        raise IllegalActionError(f"illegal action: {shown}{more}", bad, reasons)

    def why_illegal(self, state: State, game_index: int, action: int) -> str:
        """A person-readable reason why ``action`` is illegal in game ``game_index``."""
        g, s = self.game, state[game_index]
        if not 0 <= action < self.num_actions:
            return f"action {action} is out of range 0..{self.num_actions - 1}"
        name = g.action_name(action)
        if bool(s.done[0]):
            return f"{name}: the game is already over (player {int(s.winner[0])} won)"
        ply = int(s.ply[0])
        if action == g.swap_action:
            if not g.swap:
                return "swap: the swap rule is off in this game"
            return (f"swap: only allowed as the second player's first move (ply {g.swap_ply + 1}), "
                    f"not at ply {ply + 1}")
        if int(s.holes[0, action]) >= 0:
            return f"{name}: the {g.board.hole_word} is already taken"
        if ply == g.first_move_ply and bool(self.forbidden[action]):
            return f"{name}: the first move may not be in the forbidden zone (depth >= {g.forbid_depth})"
        if g.mirror is not None and bool(self._mirror_banned(s)[0, action]):
            images, _, mine = self._mirror_candidates(s)
            names = [g.mirror_symmetries[k] for k in range(self.num_mirrors)
                     if int(images[0, k]) == action and int(mine[0, k]) >= g.mirror]
            return (f"{name}: it would be the {_ordinal(g.mirror + 1)} consecutive move mirroring the opponent's "
                    f"({' / '.join(names)}); mirror={g.mirror} allows {g.mirror}")
        return f"{name}: illegal"


def _ordinal(n: int) -> str:
    return {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}.get(n, f"{n}th")

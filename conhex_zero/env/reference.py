"""A plain-Python, one-game rules engine: slow on purpose, written to be obviously right.

It is the oracle the vectorised engine is tested against, so it shares nothing with ``VecEnv`` but
the board tables. It keeps the move history and recomputes everything from it: cell ownership by
replaying moves in order (first to reach ``need``), wins by breadth-first search over the mover's
cells. The swap rule rewrites the history (each piece to its mirror image, colours exchanged). The
mirror-move limit is checked by walking back over the moves made since the last swap.
"""

from __future__ import annotations

from collections import deque

from conhex_zero.games.board import PLAYER_SIDES
from conhex_zero.games.game import Game, parse_game


class ReferenceGame:
    """One game of a ``Game``; actions are hole ids or ``game.swap_action``."""

    def __init__(self, game: Game | str):
        self.game = parse_game(game)
        self.board = self.game.board
        self.history: list[tuple[int, int]] = []  # (hole, player) in the order played
        self.since_swap: list[tuple[int, int]] = []  # (hole, player) of the moves after the last swap
        self.ply = 0
        self.to_move = 0
        self.winner: int | None = None
        self.holes: list[int | None] = []
        self.cells: list[int | None] = []
        self._extra_pending = False
        self._rebuild()

    # --------------------------------------------------------------- queries
    def is_legal(self, action: int) -> bool:
        if self.winner is not None:
            return False
        g = self.game
        first_ply = 2 * g.random_pieces
        if action == g.swap_action:
            return g.swap and self.ply == first_ply + 1
        if not 0 <= action < self.board.num_holes or self.holes[action] is not None:
            return False
        if g.forbid_depth is not None and self.ply == first_ply:
            return self.board.hole_depth[action] < g.forbid_depth
        return not self._too_many_mirrors(action)

    def _too_many_mirrors(self, hole: int) -> bool:
        """Would ``hole`` be the mover's (K+1)-th consecutive mirror of the opponent's moves?"""
        if self.game.mirror is None or not self.since_swap:
            return False
        me, moves = self.to_move, self.since_swap
        for sym in self.board.symmetries[1:]:
            perm = sym.hole_perm
            last_hole, last_player = moves[-1]
            if last_player == me or hole != perm[last_hole]:
                continue  # this move would not mirror under sym
            streak = 0
            for i in reversed([i for i, (_, player) in enumerate(moves) if player == me]):
                if i >= 1 and moves[i - 1][1] != me and moves[i][0] == perm[moves[i - 1][0]]:
                    streak += 1
                else:
                    break
            if streak >= self.game.mirror:
                return True
        return False

    def legal_actions(self) -> list[int]:
        return [a for a in range(self.game.num_actions) if self.is_legal(a)]

    # ----------------------------------------------------------------- moves
    def play(self, action: int) -> None:
        if not self.is_legal(action):
            raise ValueError(f"illegal action {action} at ply {self.ply}")
        g = self.game
        first_ply = 2 * g.random_pieces
        mover = self.to_move
        if action == g.swap_action:
            sym = self.board.symmetry(self.board.swap_symmetry)
            self.history = [(sym.hole_perm[h], 1 - p) for h, p in self.history]
            self.since_swap = []
            self._rebuild()
            assert self.winner is None
        else:
            self.history.append((action, mover))
            self.since_swap.append((action, mover))
            self._place(action, mover)
        # Whose turn next: alternate, except that with extra-stone the second player's first turn
        # has two pieces (plies first_ply + 1 and first_ply + 2).
        if g.extra_stone and self.ply == first_ply + 1:
            next_player = 1
        else:
            next_player = 1 - mover
        self.ply += 1
        self.to_move = next_player

    # -------------------------------------------------------------- internals
    def _rebuild(self) -> None:
        self.holes = [None] * self.board.num_holes
        self.cells = [None] * self.board.num_cells
        self.winner = None
        for hole, player in self.history:
            self._place(hole, player)

    def _place(self, hole: int, player: int) -> None:
        self.holes[hole] = player
        for c, holes in enumerate(self.board.cell_holes):
            if hole not in holes or self.cells[c] is not None:
                continue
            mine = sum(1 for h in holes if self.holes[h] == player)
            if mine >= self.board.cell_need[c]:
                self.cells[c] = player
        if self.winner is None and self._connected(player):
            self.winner = player

    def _connected(self, player: int) -> bool:
        side_a, side_b = PLAYER_SIDES[player]
        start = [c for c in range(self.board.num_cells)
                 if self.cells[c] == player and side_a in self.board.cell_sides[c]]
        seen = set(start)
        queue = deque(start)
        while queue:
            c = queue.popleft()
            if side_b in self.board.cell_sides[c]:
                return True
            for n in self.board.neighbours[c]:
                if n not in seen and self.cells[n] == player:
                    seen.add(n)
                    queue.append(n)
        return False

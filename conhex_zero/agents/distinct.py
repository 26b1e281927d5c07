"""When two games, or two openings, are the same: canonical forms under the board's symmetries.

A match's evidence is its *distinct* games: a game played twice, or played once and once more as
its mirror image, says nothing new about the players. Two games are the same when their move lists
map onto each other under a symmetry of the board that keeps each player's colour (Hex: the
180-degree turn; ConHex: the 180-degree turn and the two mirrors between opposite sides), with the
same players in the same colours. Two openings are the same when they reach the same position up
to such a symmetry, whatever the order of their moves.

Side-exchanging symmetries (the diagonal reflections) map a position to the other player's view of
it, with the colours exchanged: not a position of the same game, so they do not identify games.
After a swap (the pie rule), the rest of a game's moves map through the symmetry conjugated by the
swap: the swapped piece's image under g is the image under g' = T g T^-1 of the swapped image, with
T the swap symmetry.
"""

from __future__ import annotations

from collections.abc import Sequence

from conhex_zero.games.game import Game, parse_game

Key = tuple


class GameCanon:
    """Canonical keys of openings and games of one ``Game``."""

    def __init__(self, game: Game | str):
        self.game = parse_game(game)
        board = self.game.board
        self.num_holes = board.num_holes
        swap = board.symmetry(board.swap_symmetry).hole_perm
        swap_inverse = [0] * len(swap)
        for hole, image in enumerate(swap):
            swap_inverse[image] = hole
        self.before_swap: list[tuple[int, ...]] = []  # [G][H]: image of each hole
        self.after_swap: list[tuple[int, ...]] = []  # [G][H]: T g T^-1
        for sym in board.symmetries:
            if sym.exchanges_sides:
                continue
            g = tuple(sym.hole_perm)
            self.before_swap.append(g)
            self.after_swap.append(tuple(swap[g[swap_inverse[h]]] for h in range(len(g))))
        self.turns = [int(t) for t in self.game.turn_table]

    def __len__(self) -> int:
        """The number of colour-keeping symmetries (the identity included)."""
        return len(self.before_swap)

    def map_moves(self, moves: Sequence[int], k: int) -> tuple[int, ...]:
        """A move list's image under colour-keeping symmetry ``k`` (swap stays swap)."""
        g, g_swapped, swap = self.before_swap[k], self.after_swap[k], self.num_holes
        out, swapped = [], False
        for move in moves:
            if move == swap:
                swapped = True
                out.append(move)
            else:
                out.append((g_swapped if swapped else g)[move])
        return tuple(out)

    def game_key(self, moves: Sequence[int]) -> Key:
        """The same key for a game and for each of its symmetric images."""
        return min(self.map_moves(moves, k) for k in range(len(self)))

    def board_key(self, holes: Sequence[int]) -> Key:
        """The same key for positions whose stones (per hole: -1 empty, 0 or 1 the owner) map onto
        each other under a colour-keeping symmetry (the player to move is read off the stones)."""
        best = None
        for g in self.before_swap:
            image = [-1] * len(holes)
            for hole, owner in enumerate(holes):
                image[g[hole]] = owner
            key = tuple(image)
            if best is None or key < best:
                best = key
        return best

    def opening_key(self, moves: Sequence[int]) -> Key:
        """The same key for every opening (moves without a swap) that reaches the same position up to
        symmetry: the first player's and the second player's holes, sorted, under the best image."""
        if self.num_holes in moves:
            raise ValueError("an opening has no swap")
        turns = self.turns
        best = None
        for g in self.before_swap:
            first = tuple(sorted(g[m] for ply, m in enumerate(moves) if turns[ply] == 0))
            second = tuple(sorted(g[m] for ply, m in enumerate(moves) if turns[ply] == 1))
            if best is None or (first, second) < best:
                best = (first, second)
        return best

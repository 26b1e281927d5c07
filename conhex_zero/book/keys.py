"""One name per position up to the game's symmetries: the opening book's node keys.

A book keeps one node for all positions that are images of each other under a symmetry of the
board (ConHex's 8, Hex's 4; a symmetry that exchanges the players' sides exchanges the colours and
the player to move too, ``env.symmetry``) and for all move orders that reach the same position
(transpositions). The key of a position is the smallest, as a string, of its images' names::

    "x..o.....|o|-"      pieces on the holes (x: first player, o: second, .: empty), the player
                         to move, and "s" when the swap is legal there ("-" otherwise)

The player to move's value is the same for every image, so a node's values need no mapping; its
moves are kept in the *canonical frame* (the frame of the image that gives the key) and mapped to
a real position's moves by the symmetry that took that position to its key (``Canonical``).

The swap flag stands in for the ply: in the games a book supports (no random opening pieces, extra
stones or mirror limits) the pieces, the player to move and whether the swap is still legal are the
whole position, so the position after a swap and the same pieces reached without one are one node.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.games.game import Game

PIECES = ".xo"
"""Hole characters of a key: empty, the first player's piece, the second player's."""
PLAYERS = "xo"


class UnsupportedGame(ValueError):
    """The game's positions are not described by their pieces alone (random opening pieces, extra
    stones, mirror limits, a first move barred by depth): a book cannot name them."""


def check_book_game(game: Game) -> None:
    """``UnsupportedGame`` (one line) for a variant a book cannot key."""
    odd = [name for name, on in (("random opening pieces", game.random_pieces), ("an extra stone", game.extra_stone),
                                 ("a mirror limit", game.mirror is not None),
                                 ("a forbidden first move", game.forbid_depth is not None)) if on]
    if odd:
        raise UnsupportedGame(f"an opening book needs positions named by their pieces alone; {game.spec} has "
                              f"{' and '.join(odd)} (books support conhex and hex-N, with or without the swap rule)")


@dataclass(frozen=True)
class Keyed:
    """Canonical keys of a batch of positions."""

    keys: list[str]
    symmetry: list[int]
    """Per position: the symmetry that maps it onto the image its key names."""


class Canonical:
    """Keys and the move mapping between a real position and its node's canonical frame."""

    def __init__(self, env: VecEnv):
        check_book_game(env.game)
        self.env = env
        self.tables = env.symmetries
        H = env.game.board.num_holes
        self.num_holes = H
        self._swap_ply = env.game.swap_ply
        # [K, A] action images, and each symmetry's inverse (the symmetry group is closed).
        actions = torch.arange(H + 1, device=env.device)
        self.images = torch.stack([self.tables.map_action(actions, k) for k in range(len(self.tables))]).cpu()
        identity = actions.cpu()
        self.inverse = []
        for k in range(len(self.tables)):
            back = [j for j in range(len(self.tables)) if torch.equal(self.images[j][self.images[k]], identity)]
            self.inverse.append(back[0])

    def keys(self, state: State) -> Keyed:
        """The key of every position of ``state`` ``[B]`` and the symmetry that gives it."""
        B = state.batch_size
        swap = (state.ply == self._swap_ply) if self._swap_ply is not None else torch.zeros(B, dtype=torch.bool)
        swap_mark = ["s" if s else "-" for s in swap.cpu().tolist()]
        best: list[str | None] = [None] * B
        best_k = [0] * B
        for k in range(len(self.tables)):
            image = self.tables.apply(state, k)
            names = self._names(image.holes.cpu(), image.to_move.cpu(), swap_mark)
            for b, name in enumerate(names):
                if best[b] is None or name < best[b]:
                    best[b], best_k[b] = name, k
        return Keyed(keys=[str(k) for k in best], symmetry=best_k)

    @staticmethod
    def _names(holes: Tensor, to_move: Tensor, swap_mark: list[str]) -> list[str]:
        rows = (holes.to(torch.int16) + 1).to(torch.uint8).numpy()  # [B, H] in 0..2
        return [row.tobytes().translate(_TRANSLATE).decode("ascii") + "|" + PLAYERS[int(p)] + "|" + mark
                for row, p, mark in zip(rows, to_move.tolist(), swap_mark)]

    def to_canonical(self, actions: list[int], k: int) -> list[int]:
        """Real moves of a position taken to its node's frame by the position's symmetry ``k``."""
        image = self.images[k]
        return [int(image[a]) for a in actions]

    def to_real(self, actions: list[int], k: int) -> list[int]:
        """Canonical moves of a node taken back to a real position whose symmetry is ``k``."""
        return self.to_canonical(actions, self.inverse[k])

    def stabiliser(self, key: str) -> list[int]:
        """The symmetries that map the key's own position onto itself (its moves' equivalences)."""
        return [k for k in range(len(self.tables)) if self.image_key(key, k) == key]

    def image_key(self, key: str, k: int) -> str:
        """The name of the image under symmetry ``k`` of the position a key names (colours, the
        player to move and the swap flag as ``apply`` maps them)."""
        pieces, player, mark = key.split("|")
        holes = torch.tensor([PIECES.index(c) - 1 for c in pieces], dtype=torch.int8)[None]
        exchange = self.tables.exchanges[k]
        image = torch.empty_like(holes)
        image[0, self.images[k][:self.num_holes]] = holes[0]
        if exchange:
            image = torch.where(image >= 0, 1 - image, image)
        mover = PLAYERS.index(player)
        mover = 1 - mover if exchange else mover
        return self._names(image, torch.tensor([mover]), [mark])[0]


_TRANSLATE = bytes.maketrans(bytes([0, 1, 2]), PIECES.encode("ascii"))

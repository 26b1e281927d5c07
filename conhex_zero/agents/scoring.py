"""The scoring variant ("Variante Punteggio" of the Hex rules sheet), for Hex and ConHex alike.

Games are played in pairs with colours exchanged. The winner of a game scores the number of pieces
they placed: the pieces of their colour on the board when the game ends (random opening pieces of
that colour included; after a swap, the swapped piece belongs to the player who took it). Over a
pair the player with the lower total wins; a player who wins both games wins the pair whatever the
totals (the loser of both has no total). Equal totals (each player won one game, with the same
number of pieces) make the pair a draw, worth half a pair to each: the rules sheet gives no tie
break, and any tie break (the faster win as second player, say) would bring back the first-move
asymmetry that the pair format exists to cancel.

A forfeited or resigned game scores the pieces the winner had placed when it ended, like any other.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor

from conhex_zero.ladder.ratings import wilson


def pieces_placed(holes: Tensor, winner: Tensor) -> Tensor:
    """``[B]`` the winner's pieces on the final boards ``holes`` ``[B, H]`` (0 where no winner)."""
    return ((holes.long() == winner[:, None]) & (winner[:, None] >= 0)).sum(1)


@dataclass(frozen=True)
class PairResult:
    """One pair: two games from the same opening, each player first once."""

    opening: tuple[str, ...]  # the shared opening moves (random pieces and random plies)
    winners: tuple[int, int]  # per game: 0 = player 1 won, 1 = player 2 won
    pieces: tuple[int, int]  # per game: pieces the winner placed
    totals: tuple[int | None, int | None]  # per player: summed pieces of their wins (None: no win)
    result: str  # "player1", "player2" or "draw"

    @property
    def score(self) -> float:
        """Player 1's share of the pair: 1, 0 or 1/2."""
        return {"player1": 1.0, "player2": 0.0, "draw": 0.5}[self.result]

    def to_json(self) -> dict:
        return {"opening": list(self.opening), "winners": ["player1" if w == 0 else "player2" for w in self.winners],
                "pieces": list(self.pieces), "totals": {"player1": self.totals[0], "player2": self.totals[1]},
                "result": self.result}


def pair_result(winners: tuple[int, int], pieces: tuple[int, int], opening: tuple[str, ...] = ()) -> PairResult:
    """The pair's result from its two games' winners (0 = player 1) and pieces placed."""
    totals: list[int | None] = [None, None]
    for w, n in zip(winners, pieces):
        totals[w] = (totals[w] or 0) + n
    if totals[1] is None:
        result = "player1"
    elif totals[0] is None:
        result = "player2"
    elif totals[0] != totals[1]:
        result = "player1" if totals[0] < totals[1] else "player2"
    else:
        result = "draw"
    return PairResult(tuple(opening), tuple(winners), tuple(pieces), (totals[0], totals[1]), result)


@dataclass(frozen=True)
class ScoringSummary:
    pairs: list[PairResult]

    @property
    def pair_score(self) -> float:
        """Player 1's mean pair score (draws count half)."""
        return sum(p.score for p in self.pairs) / len(self.pairs) if self.pairs else 0.0

    @property
    def pair_score_ci95(self) -> tuple[float, float]:
        """95% Wilson interval of the pair score (a draw counts as half a win)."""
        return wilson(sum(p.score for p in self.pairs), len(self.pairs))

    def pieces_per_win(self) -> dict[str, float | None]:
        """Mean pieces each player placed in the games it won."""
        out = {}
        for k, name in enumerate(("player1", "player2")):
            won = [n for p in self.pairs for w, n in zip(p.winners, p.pieces) if w == k]
            out[name] = sum(won) / len(won) if won else None
        return out

    def counts(self) -> dict[str, int]:
        return {r: sum(p.result == r for p in self.pairs) for r in ("player1", "player2", "draw")}

    def to_json(self) -> dict:
        low, high = self.pair_score_ci95
        return {"pairs": [p.to_json() for p in self.pairs],
                "pair_score": {"player1": self.pair_score, "player2": 1.0 - self.pair_score,
                               "ci95": [round(low, 4), round(high, 4)], "pairs_won": self.counts()},
                "pieces_per_win": self.pieces_per_win()}


def score_pairs(winners: list[int], pieces: list[int], openings: list[tuple[str, ...]],
                first_is_player1: list[bool]) -> ScoringSummary:
    """Pairs from an arena's games: game 2i and 2i + 1 share an opening with colours exchanged.

    ``winners`` are colours (0: the first mover won); ``first_is_player1`` says who moved first."""
    pairs = []
    for i in range(0, len(winners) - 1, 2):
        by_player = []
        for g in (i, i + 1):
            winner_is_p1 = (winners[g] == 0) == first_is_player1[g]
            by_player.append(0 if winner_is_p1 else 1)
        pairs.append(pair_result((by_player[0], by_player[1]), (pieces[i], pieces[i + 1]), openings[i]))
    return ScoringSummary(pairs)

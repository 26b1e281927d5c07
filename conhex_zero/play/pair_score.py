"""A running pair score of the scoring variant for a person playing the AI (``play --scoring``,
``serve --scoring``).

Games go in pairs with colours exchanged: the person takes one side in the pair's first game and
the other side in its second. The winner of a game scores the pieces they placed (for a resigned
game, those on the board when it ended); over a pair the lower total wins, winning both games wins
the pair, and equal totals draw the pair (``agents/scoring.py`` decides, as in ``arena --scoring``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from conhex_zero.agents.scoring import PairResult, pair_result, pieces_placed

YOU, AI = 0, 1


def winner_pieces(holes: torch.Tensor, winner: int) -> int:
    """Pieces of colour ``winner`` on one board ``holes`` ``[1, H]``."""
    return int(pieces_placed(holes, torch.tensor([winner], device=holes.device))[0])


@dataclass
class RunningPairScore:
    """The games of a session: who won each (``YOU`` or ``AI``) with how many pieces."""

    first_side: int = 0
    """The person's side (0 = first player) in the first game of every pair."""
    games: list[tuple[int, int]] = field(default_factory=list)

    def human_side(self) -> int:
        """The person's side in the next game: the pair's second game exchanges colours."""
        return self.first_side if len(self.games) % 2 == 0 else 1 - self.first_side

    def record(self, winner: int, pieces: int) -> PairResult | None:
        """Add a finished game; the pair's result when this game completes a pair."""
        self.games.append((winner, pieces))
        return self.pairs[-1] if len(self.games) % 2 == 0 else None

    def take_back(self) -> None:
        """Remove the last game (undone: it goes on)."""
        self.games.pop()

    @property
    def pairs(self) -> list[PairResult]:
        done = len(self.games) - len(self.games) % 2
        return [pair_result((self.games[i][0], self.games[i + 1][0]), (self.games[i][1], self.games[i + 1][1]))
                for i in range(0, done, 2)]

    def pairs_won(self) -> dict[str, int]:
        results = [p.result for p in self.pairs]
        return {"you": results.count("player1"), "ai": results.count("player2"), "draw": results.count("draw")}

    def current_totals(self) -> dict[str, int | None]:
        """Pieces each side has scored so far in the unfinished pair (None: no win yet)."""
        totals: dict[str, int | None] = {"you": None, "ai": None}
        if len(self.games) % 2:
            winner, pieces = self.games[-1]
            totals["you" if winner == YOU else "ai"] = pieces
        return totals

    def summary(self) -> str:
        won = self.pairs_won()
        text = f"pairs won: you {won['you']}, the AI {won['ai']}"
        return text + (f", {won['draw']} drawn" if won["draw"] else "")

    def describe_pair(self, pair: PairResult) -> str:
        you, ai = pair.totals
        scored = f"your wins scored {you if you is not None else '-'}, the AI's {ai if ai is not None else '-'}"
        verdict = {"player1": "you win the pair", "player2": "the AI wins the pair", "draw": "the pair is drawn"}
        return f"pair {len(self.pairs)}: {scored} pieces (lower wins): {verdict[pair.result]}"

    def to_json(self) -> dict:
        return {
            "games": [{"winner": "you" if w == YOU else "ai", "pieces": n} for w, n in self.games],
            "pairs": [p.to_json() for p in self.pairs],
            "pairs_won": self.pairs_won(),
            "current_pair": {"games": len(self.games) % 2, "pieces": self.current_totals()},
            "next_side": "first" if self.human_side() == 0 else "second",
        }

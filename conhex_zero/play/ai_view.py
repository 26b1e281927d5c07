"""The AI's view of a position as the play front ends show it (terminal, GTP, browser): the root
moves it considered (``Candidate``: visits, value, prior, principal variation, proofs), the
position's value and where it came from (``Analysis``: a search, the raw network, the opening book),
and the move it chose (``AIMove``); plain JSON through ``to_json``. Values are for the side to move,
in [-1, 1]; ``win_percent`` is ``50 * (1 + value)``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def win_percent(value: float | None) -> float | None:
    return None if value is None else 50.0 * (1.0 + value)


def proof_word(proven: int) -> str | None:
    """``"win"`` / ``"loss"`` for a proven result of +1 / -1, None when nothing is proven."""
    return "win" if proven > 0 else "loss" if proven < 0 else None


@dataclass
class Candidate:
    """One root move as the AI sees it; ``value`` is for the side to move (None: not searched)."""

    move: str
    action: int
    visits: int
    value: float | None
    prior: float
    pv: list[str] = field(default_factory=list)
    """Principal variation starting with this move."""
    proven: str | None = None
    """``"win"`` or ``"loss"`` when the search proved what this move leads to, for the mover."""
    nodes: int | None = None
    """An opening book's move: the book positions below it (0: not in the book, a search's value)."""

    @property
    def win_percent(self) -> float | None:
        return win_percent(self.value)

    def to_json(self) -> dict[str, Any]:
        return {"move": self.move, "action": self.action, "visits": self.visits, "value": self.value,
                "win_percent": self.win_percent, "prior": self.prior, "pv": list(self.pv), "proven": self.proven,
                "nodes": self.nodes}


@dataclass
class Analysis:
    """The AI's view of a position, for the side to move there (``player``)."""

    player: int
    value: float | None
    candidates: list[Candidate]
    simulations: int = 0
    source: str = "none"
    """``search`` (visits and values from a search), ``network`` (a raw network), ``book`` (the
    opening book's minimax values: the position is in the book) or ``none``."""
    proven: str | None = None
    """``"win"`` or ``"loss"`` when the search proved the position's result for the side to move."""
    carried: int = 0
    """Of ``simulations``, the root visits carried over from the previous search of this game (the
    search continued in the subtree of the moves since; see ``agents.players.SearchPlayer``)."""

    @property
    def win_percent(self) -> float | None:
        return win_percent(self.value)

    @property
    def best(self) -> Candidate | None:
        return self.candidates[0] if self.candidates else None

    def to_json(self) -> dict[str, Any]:
        return {"player": self.player, "value": self.value, "win_percent": self.win_percent,
                "simulations": self.simulations, "carried": self.carried, "source": self.source,
                "proven": self.proven,
                "candidates": [c.to_json() for c in self.candidates]}


@dataclass
class AIMove:
    """A move the AI chose (played by ``ai_move``, only suggested by ``hint``)."""

    action: int
    move: str
    analysis: Analysis

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "move": self.move, "analysis": self.analysis.to_json()}

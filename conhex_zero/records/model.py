"""One recorded game, whatever file it came from, in the engine's own terms."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from conhex_zero.games.render import PLAYER_NAMES

ENDINGS = ("connection", "resign", "forfeit", "unknown")
"""How a recorded game ended: a player connected their sides; a player resigned; a player forfeited
(lost on time, crashed, made an illegal move); or the record does not say (an unfinished game, or a
result without the reason)."""

FORMATS = ("arena", "littlegolem-conhex", "littlegolem-hex", "sgf-hex")
"""Where a record came from: our arena's JSON lines; Little Golem's ConHex records (``FF[CONHEX]``,
rows counted from the bottom); Little Golem's Hex records (two-letter points, the first player
tagged ``W``); Hex SGF (``GM[11]``: HexGui, MoHex/benzene, PlayHex)."""


class RecordError(ValueError):
    """A record file or one of its games cannot be read or does not replay; says where and why, in
    one line (line breaks and other control characters from the file are shown escaped)."""

    def __init__(self, message: str):
        super().__init__(re.sub(r"[\x00-\x1f\x7f]", lambda m: repr(m.group())[1:-1], str(message)))


def clip(text: str, limit: int = 40) -> str:
    """Text from a file, for a message: control characters escaped, at most ``limit`` characters."""
    text = re.sub(r"[\x00-\x1f\x7f]", lambda m: repr(m.group())[1:-1], str(text))
    return text if len(text) <= limit else text[:limit - 3] + "..."


@dataclass
class GameRecordData:
    """A recorded game.

    ``moves`` are engine action names (hole names, ``swap``) in the engine's frame, so
    ``play_moves(VecEnv(game), moves)`` replays the game; ``notation`` has the same moves as the
    file wrote them (Little Golem's ConHex labels count rows from the bottom, for instance).
    ``players`` are the names of the player who moved first (X, top-bottom) and second (O).
    ``winner`` is 0, 1 or None (unknown); ``ending`` one of ``ENDINGS``. ``index`` is the game's
    number in its file (an arena record's own ``index``), ``source`` the file and game it was read
    from (for messages), ``properties`` the file's raw game information (SGF root properties, or the
    arena's JSON object).
    """

    game: str
    moves: list[str]
    players: tuple[str, str] = ("", "")
    winner: int | None = None
    ending: str = "unknown"
    format: str = "arena"
    notation: list[str] = field(default_factory=list)
    index: int = 0
    source: str = ""
    properties: dict[str, Any] = field(default_factory=dict)
    detail: str = ""  # more about the ending, e.g. an arena forfeit's reason

    def __post_init__(self) -> None:
        if not self.notation:
            self.notation = list(self.moves)
        if len(self.notation) != len(self.moves):
            raise ValueError("notation and moves must have the same length")
        if self.ending not in ENDINGS:
            raise ValueError(f"unknown ending {self.ending!r}; expected one of {', '.join(ENDINGS)}")

    def player_label(self, player: int) -> str:
        """``Alice (X)``, or just ``X`` when the record has no name."""
        name = self.players[player]
        return f"{name} ({PLAYER_NAMES[player]})" if name else PLAYER_NAMES[player]

    @property
    def winner_name(self) -> str | None:
        return None if self.winner is None else (self.players[self.winner] or PLAYER_NAMES[self.winner])

    def result_text(self) -> str:
        """The result in words, e.g. ``Bob (O) won: Alice (X) resigned``."""
        if self.winner is None:
            return "no result recorded (unfinished game)" if self.ending == "unknown" else self.ending
        won = f"{self.player_label(self.winner)} won"
        loser = self.player_label(1 - self.winner)
        if self.ending == "connection":
            return f"{won} by connection"
        if self.ending == "resign":
            return f"{won}: {loser} resigned"
        if self.ending == "forfeit":
            return f"{won}: {loser} forfeited" + (f" ({self.detail})" if self.detail else "")
        return f"{won} (the record does not say how)"

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "game": self.game, "format": self.format,
                "players": list(self.players), "winner": self.winner, "winner_name": self.winner_name,
                "ending": self.ending, "moves": list(self.moves), "notation": list(self.notation)}

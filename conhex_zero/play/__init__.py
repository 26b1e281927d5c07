"""Playing against the AI: a UI-independent game session (``session.py``), the terminal game
(``conhex-zero play``) and a Go Text Protocol engine (``gtp_engine.py``, ``conhex-zero gtp``)."""

from conhex_zero.play.session import AIMove, Analysis, Candidate, PlayError, PlaySession

__all__ = ["AIMove", "Analysis", "Candidate", "PlayError", "PlaySession"]

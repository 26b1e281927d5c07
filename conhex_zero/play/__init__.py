"""Playing against the AI: a UI-independent game session (``session.py``), the terminal game
(``conhex-zero play``), a Go Text Protocol engine (``gtp_engine.py``, ``conhex-zero gtp``) and the
browser page (``server.py`` and ``static/``, ``conhex-zero serve``)."""

from conhex_zero.play.session import AIMove, Analysis, Candidate, PlayError, PlaySession

__all__ = ["AIMove", "Analysis", "Candidate", "PlayError", "PlaySession"]

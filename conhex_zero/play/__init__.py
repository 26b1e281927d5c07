"""Playing against the AI: a UI-independent game session (``session.py``; the AI's view of a position
it answers with: ``ai_view.py``), the terminal game (``conhex-zero play``), a Go Text Protocol
engine (``gtp_engine.py``, ``conhex-zero gtp``) and the browser page (``server.py`` and ``static/``,
``conhex-zero serve``).

The session's names are imported on first use (``conhex_zero.play.PlaySession``), so that importing
this package, or ``DEFAULT_PORT``, costs nothing (the command line's ``--help`` stays fast)."""

from __future__ import annotations

from typing import Any

DEFAULT_PORT = 8765
"""The browser page's TCP port unless ``serve --port`` says otherwise."""

__all__ = ["AIMove", "Analysis", "Candidate", "PlayError", "PlaySession", "DEFAULT_PORT"]


def __getattr__(name: str) -> Any:
    if name in ("AIMove", "Analysis", "Candidate"):
        from conhex_zero.play import ai_view

        return getattr(ai_view, name)
    if name in ("PlayError", "PlaySession"):
        from conhex_zero.play import session

        return getattr(session, name)
    raise AttributeError(f"module 'conhex_zero.play' has no attribute {name!r}")

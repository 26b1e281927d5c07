"""A book folder: made by its first ``book grow``, opened by every later command.

The header names what the book is: the game, the start position (``--after``), the model it is
grown with (its file and the digest of its bytes, ``checkpoint_files.checkpoint_digest``), and the
settings of its searches and of the growth's costs. Growing a book with another model, another
game or from another start is refused (naming both) unless asked for (``allow_other_model``): the
book's values would mix two judgements without saying so. Each ``grow`` run appends a line that
says what it did (the command, the model's digest, minutes, nodes before and after), so the file
itself tells how the book was grown.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conhex_zero.book import store
from conhex_zero.book.graph import GAP_COST, SURE_COST, Book
from conhex_zero.book.store import BookError


@dataclass
class OpenBook:
    folder: Path
    header: dict[str, Any]
    book: Book
    runs: list[dict[str, Any]]
    """The ``grow`` lines, oldest first."""

    @property
    def game(self) -> str:
        return self.header["game"]

    @property
    def start_moves(self) -> list[str]:
        return list(self.header.get("start", []))

    @property
    def sims(self) -> int:
        return int(self.header["settings"]["sims"])

    @property
    def minutes(self) -> float:
        """Growth time so far: the runs' minutes, or every written round's seconds where more (the
        rounds of a run killed before it could record itself)."""
        rounds = sum(r.get("seconds", 0.0) for r in self.book.rounds) / 60
        return max(rounds, sum(r.get("minutes", 0.0) for r in self.runs))

    @property
    def model_digest(self) -> str:
        return self.runs[-1]["model"]["digest"] if self.runs else self.header["model"]["digest"]

    @property
    def model_file(self) -> str:
        return self.runs[-1]["model"]["file"] if self.runs else self.header["model"]["file"]

    def models(self) -> list[dict[str, Any]]:
        """Every model the book was grown with, first first: ``{"file", "digest", "positions"}``,
        the positions each model's runs added (issue 58: a book grown on with ``--other-model``
        named only the last model)."""
        out: dict[str, dict[str, Any]] = {}
        first = self.header["model"]
        out[first["digest"]] = {"file": first["file"], "digest": first["digest"], "positions": 0}
        for run in self.runs:
            model = run["model"]
            entry = out.setdefault(model["digest"], {"file": model["file"], "digest": model["digest"], "positions": 0})
            entry["positions"] += max(0, int(run.get("nodes_after", 0)) - int(run.get("nodes_before", 0)))
        counted = sum(m["positions"] for m in out.values())
        out[first["digest"]]["positions"] += max(0, len(self.book) - counted)  # rounds of a run that never ended
        return [m for m in out.values() if m["positions"] or m["digest"] == first["digest"]]

    def mixed_models(self) -> str | None:
        """One line saying that the book mixes models, or None when one model grew it all."""
        models = self.models()
        if len(models) < 2:
            return None
        return (f"grown with {len(models)} models, its values mix their judgements: " +
                "; ".join(f"{m['file']} (digest {m['digest']}) {m['positions']} positions" for m in models))


def open_book(folder: str | Path) -> OpenBook:
    places: list[str] = []
    header, events = store.read_entries(folder, places)
    runs = [e for e in events if e.get("type") == "grow"]
    kept = [(e, where) for e, where in zip(events, places) if e.get("type") != "grow"]
    book = store.replay(header, [e for e, _ in kept], places=[where for _, where in kept])
    return OpenBook(Path(folder), header, book, runs)


def new_book(folder: str | Path, game: str, start_moves: list[str], start_key: str, model_file: str,
             model_digest: str, sims: int, gap_cost: float = GAP_COST, sure_cost: float = SURE_COST) -> OpenBook:
    """Write the header of a new book (the folder must be empty or missing)."""
    folder = Path(folder)
    if folder.exists() and any(p.name != ".grow.lock" for p in folder.iterdir()):
        raise BookError(f"{folder} is not empty and holds no book: give book grow an empty or new folder")
    folder.mkdir(parents=True, exist_ok=True)
    header = {"type": "header", "format": store.FORMAT, "game": game, "start": start_moves, "start_key": start_key,
              "model": {"file": model_file, "digest": model_digest},
              "settings": {"sims": sims, "gap_cost": gap_cost, "sure_cost": sure_cost, "search": "analysis"},
              "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "sealed": True}
    store.append(folder, [header])
    return OpenBook(folder, header, Book(start_key, gap_cost, sure_cost), [])


def check_same(opened: OpenBook, game: str, start_moves: list[str], model_digest: str, model_file: str,
               allow_other_model: bool) -> None:
    """``BookError`` when a grow would mix games, starts or (unless allowed) models."""
    if opened.game != game:
        raise BookError(f"{opened.folder} is a book of {opened.game}, not of {game} (the checkpoint's game, or "
                        f"--game): grow it with --game {opened.game}, or grow a book of {game} in another folder")
    if opened.start_moves != start_moves:
        shown = " ".join(opened.start_moves) or "the empty board"
        raise BookError(f"{opened.folder} starts at {shown}; --after {' '.join(start_moves) or '(none)'} asks for "
                        f"another start (grow another book in another folder)")
    if opened.model_digest != model_digest and not allow_other_model:
        raise BookError(f"{opened.folder} was grown with {opened.model_file} (digest {opened.model_digest}); "
                        f"{model_file} is another model (digest {model_digest}): grow it with the same model, or "
                        f"give --other-model to grow it on with this one (its values then mix two models)")


def record_run(opened: OpenBook, command: str, model_file: str, model_digest: str, minutes: float, before: int,
               searches: int, sims: int, batch: int, connections: bool | None = None) -> dict[str, Any]:
    """Append a ``grow`` run's record (``connections``: whether its searches used H-search's
    virtual connections; records written before 2026-12-06 have no such key)."""
    run = {"type": "grow", "command": command, "model": {"file": model_file, "digest": model_digest},
           "minutes": round(minutes, 3), "nodes_before": before, "nodes_after": len(opened.book),
           "searches": searches, "sims": sims, "batch": batch,
           "ended": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if connections is not None:
        run["connections"] = connections
    store.append(opened.folder, [run])
    opened.runs.append(run)
    return run

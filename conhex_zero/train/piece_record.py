"""A piece's record (one line of ``LINE/pieces.jsonl``), made from the metric lines of its
iterations, and the summary line a piece prints at its end (``piece.py`` lists the fields)."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def scores_of(metrics: dict[str, Any]) -> dict[str, list[float]]:
    """``{reference: [score, low, high]}`` of an evaluated iteration's metric line."""
    return {k[len("eval/vs_"):-len("/win_rate")]: [round(metrics[k], 3), round(metrics[k + "_low"], 3),
                                                   round(metrics[k + "_high"], 3)]
            for k in metrics if k.startswith("eval/vs_") and k.endswith("/win_rate")}


def piece_record(base: dict[str, Any], metrics: list[dict], first_iteration: int,
                 carried: dict[str, float]) -> dict[str, Any]:
    """The record of a piece from the metric lines of its iterations (``first_iteration`` on);
    ``carried``: the line's ``games``, ``positions`` and ``steps`` before the piece."""
    own = [m for m in metrics if m.get("iteration", 0) >= first_iteration]
    record = dict(base)
    record.pop("_minutes_before", None)
    if not own:
        return record
    last = own[-1]
    record.update({
        "first_iteration": first_iteration,
        "last_iteration": int(last["iteration"]),
        "train_minutes": round(float(last.get("time/minutes", 0.0)) - float(base.get("_minutes_before", 0.0)), 2),
        "games": int(last.get("selfplay/total_games", carried["games"])) - int(carried["games"]),
        "positions": int(last.get("replay/total_added", carried["positions"])) - int(carried["positions"]),
        "selfplay_positions_per_s": _median([m["selfplay/positions_per_s"] for m in own if "selfplay/positions_per_s" in m]),
        "selfplay_recorded_per_s": _median([m["selfplay/recorded_per_s"] for m in own if "selfplay/recorded_per_s" in m]),
    })
    steps = [m["train/steps"] for m in own if "train/steps" in m]
    record["steps"] = int(steps[-1]) - int(carried["steps"]) if steps else 0
    rates = [m["train/lr"] for m in own if "train/lr" in m]
    record["lr"] = rates[-1] if rates else None
    saved = [m for m in own if "eval/elo" in m or "check/wins" in m or any(k.startswith("eval/vs_") for k in m)]
    if saved:
        e = saved[-1]
        record["checkpoint"] = f"checkpoints/iter_{int(e['iteration']):04d}.pt"
        if "eval/elo" in e:
            record["elo"], record["elo_stderr"] = round(e["eval/elo"], 1), round(e["eval/elo_stderr"], 1)
        record["scores"] = scores_of(e)
        if "check/wins" in e:
            record["check"] = {"wins": int(e["check/wins"]), "games": int(e["check/games"]),
                               "passed": bool(e["check/passed"])}
    return record


def summary(rec: dict, where: Path) -> str:
    """The piece's last line: what it trained, how fast, where its minutes went, how it did."""
    scores = ", ".join(f"{k} {v[0]:.2f} ({v[1]:.2f}-{v[2]:.2f})" for k, v in (rec.get("scores") or {}).items())
    if rec.get("elo") is not None:
        rated = f"Elo {rec['elo']:.0f} ± {rec['elo_stderr']:.0f}"
    elif rec.get("check"):
        c = rec["check"]
        rated = (f"checked: {c['wins']} of {c['games']} against random{'' if c['passed'] else ' (FAILED)'}; "
                 f"not rated yet (conhex-zero rate {where})")
    else:
        rated = "not evaluated"
    speed = rec.get("selfplay_positions_per_s")
    split = rec.get("seconds") or {}
    share = rec.get("training_share")
    spent = (f"; {share:.0%} of the time after start-up in self-play and learning (start-up {split.get('startup', 0):.0f} s, "
             f"compile {split.get('compile', 0):.0f} s, evaluation {split.get('evaluation', 0):.0f} s, writing "
             f"{split.get('writing', 0):.0f} s)" if share is not None else "")
    return (f"piece {rec['piece']} {rec['stopped']}: iterations {rec.get('first_iteration')}-{rec.get('last_iteration')}, "
            f"{rec.get('games', 0):,} games, {rec.get('positions', 0):,} recorded positions, "
            f"{speed if speed is not None else '-'} self-play positions/s, {rec['minutes']:.1f} min{spent}; {rated}"
            f"{'; ' + scores if scores else ''}; line written to {where}")

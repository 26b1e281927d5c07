"""The ladder as a picture: checkpoints' Elo (95% bars) against training time, references as lines."""

from __future__ import annotations

from pathlib import Path

from conhex_zero.ladder.ratings import Ratings
from conhex_zero.ladder.store import Ladder

X_LABELS = {"minutes": "training time (minutes)", "iteration": "iteration", "step": "optimiser step"}


def plot_ladder(ladder: Ladder, ratings: Ratings, path: str | Path, x: str = "minutes",
                title: str | None = None) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    points = sorted((info[x], name) for name, info in ladder.players.items()
                    if info.get("kind") == "checkpoint" and x in info and name in ratings.elo)
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=120)
    if points:
        xs = [p[0] for p in points]
        ys = [ratings.elo[n] for _, n in points]
        err = [1.96 * ratings.stderr[n] for _, n in points]
        ax.errorbar(xs, ys, yerr=err, fmt="o-", color="#1f77b4", ms=3, lw=1.5, capsize=2, label="checkpoints")
    colours = ["#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"]
    refs = [n for n, info in ladder.players.items() if info.get("kind") == "reference" and n in ratings.elo]
    for i, name in enumerate(sorted(refs, key=lambda n: ratings.elo[n])):
        ax.axhline(ratings.elo[name], ls="--", lw=1, color=colours[i % len(colours)],
                   label=f"{name} ({ratings.elo[name]:+.0f})")
    ax.set_xlabel(X_LABELS.get(x, x))
    ax.set_ylabel(f"Elo (anchor {ratings.anchor} = {ratings.elo[ratings.anchor]:.0f})")
    ax.set_title(title or f"Ladder of {ladder.path.parent.name} (bars: 95%): first-move advantage "
                 f"{ratings.first_move:+.0f} ± {1.96 * ratings.first_move_stderr:.0f} Elo")
    ax.grid(alpha=0.3)
    if points or refs:  # (matplotlib warns about a legend without entries)
        ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path

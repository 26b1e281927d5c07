"""Weight averaging of checkpoints (the mean of several snapshots of one run, as in SWA).

Snapshots taken late in a run scatter around a good solution; their mean lies nearer its centre
and its value estimates are steadier than any single snapshot's (Izmailov et al. 2018, "Averaging
Weights Leads to Wider Optima"; KataGo releases such averages). The network has only layer norms,
which hold no running statistics, so the averaged weights need no recalibration. All checkpoints
must describe the same network size and be trained on the same game.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from conhex_zero.nn.checkpoint import Checkpoint, CheckpointError, load_checkpoint

RUN_FIELDS = ("model_name", "iteration", "step", "games", "positions", "minutes", "config")
"""The training metadata of the newest source kept in the average's ``meta`` (how it was made)."""


def average_checkpoints(paths: Sequence[str | Path]) -> Checkpoint:
    """The checkpoint whose every weight is the mean of those of ``paths`` (computed in float64,
    stored in each weight's own type). ``CheckpointError`` for an unreadable file, fewer than one
    path, or checkpoints of different network sizes or games."""
    if not paths:
        raise CheckpointError("no checkpoints to average")
    sources = [load_checkpoint(p) for p in paths]
    first = sources[0]
    for other in sources[1:]:
        if other.model.config != first.model.config:
            raise CheckpointError(f"{other.path} is a {other.model.config.name} model and {first.path} a "
                                  f"{first.model.config.name}: only one network size can be averaged")
        if other.game != first.game:
            raise CheckpointError(f"{other.path} was trained on {other.game} and {first.path} on {first.game}: "
                                  f"only checkpoints of one game can be averaged")
    weights = [s.model.state_dict() for s in sources]
    mean = {name: (sum(w[name].double() for w in weights) / len(weights)).to(tensor.dtype)  # each as stored
            for name, tensor in weights[0].items()}
    newest = max(sources, key=lambda s: s.meta.get("iteration", -1))
    meta: dict[str, Any] = {k: newest.meta[k] for k in RUN_FIELDS if k in newest.meta}
    meta["averaged_from"] = [{"path": str(s.path), "iteration": s.meta.get("iteration")} for s in sources]
    model = newest.model
    model.load_state_dict(mean)
    return Checkpoint(model=model, game=newest.game, meta=meta, path=None)


def last_run_checkpoints(run_dir: str | Path, count: int) -> list[Path]:
    """The newest ``count`` evaluated-iteration checkpoints of a training run (``checkpoints/iter_*.pt``,
    oldest first); ``CheckpointError`` when the run holds fewer."""
    from conhex_zero.train.run_dir import RunDir  # the run directory's layout; train builds on nn, not back

    run = RunDir(run_dir)
    history = run.iteration_checkpoints()
    if len(history) < count:
        raise CheckpointError(f"{run_dir} holds {len(history)} iteration checkpoint{'s' * (len(history) != 1)} "
                              f"in {run.checkpoints}, fewer than the {count} asked for")
    return history[-count:]

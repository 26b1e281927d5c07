"""Self-describing model checkpoints: written atomically, read with ``torch.load(weights_only=True)``.

A checkpoint is a plain dict of tensors and primitives: a format tag, a schema version, the model
size and feature count, the game spec it was trained on, the weights, and free-form metadata
(``meta``; the training loop adds step, optimizer and RNG states there). Writing goes to
``PATH.tmp`` and is renamed over ``PATH``, so a crash never leaves a half-written checkpoint.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from conhex_zero.nn.encode import NUM_FEATURES
from conhex_zero.nn.model import GraphNet, ModelConfig

FORMAT = "conhex-zero-checkpoint"
SCHEMA_VERSION = 1


class CheckpointError(ValueError):
    """A file is missing, unreadable, or not a conhex-zero checkpoint of a known schema."""


@dataclass
class Checkpoint:
    model: GraphNet
    game: str
    meta: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None


def save_checkpoint(path: str | Path, model: GraphNet, game: str, meta: dict[str, Any] | None = None) -> Path:
    """Write ``model`` (and ``meta``) to ``path`` atomically; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "format": FORMAT,
        "schema": SCHEMA_VERSION,
        "model": {**model.config.to_dict(), "num_features": model.num_features},
        "game": game,
        "state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        "meta": meta or {},
    }
    tmp = path.with_name(path.name + ".tmp")
    torch.save(data, tmp)
    os.replace(tmp, path)
    return path


def load_checkpoint(path: str | Path, device: torch.device | str = "cpu") -> Checkpoint:
    """Read a checkpoint; clear errors for a missing file, another format or a newer schema."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no checkpoint file at {path}")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises several types for corrupt or foreign files
        raise CheckpointError(f"{path} is not a readable checkpoint ({type(err).__name__}: {err})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a conhex-zero checkpoint")
    if data.get("schema") != SCHEMA_VERSION:
        raise CheckpointError(f"{path} has checkpoint schema {data.get('schema')}, this version reads "
                              f"schema {SCHEMA_VERSION}")
    spec = data["model"]
    if spec.get("num_features") != NUM_FEATURES:
        raise CheckpointError(f"{path} was made for {spec.get('num_features')} input features; this "
                              f"version encodes {NUM_FEATURES}")
    model = GraphNet(ModelConfig(spec["layers"], spec["hidden"]), NUM_FEATURES)
    model.load_state_dict(data["state_dict"])
    model.to(device).eval()
    return Checkpoint(model=model, game=data["game"], meta=data.get("meta", {}), path=path)

"""Self-describing model checkpoints: written atomically, read with ``torch.load(weights_only=True)``.

A checkpoint is a plain dict of tensors and primitives: a format tag, a schema version, the model
size and feature count, the game spec it was trained on, the weights, and free-form metadata
(``meta``; the training loop adds step, optimizer and RNG states there). Writing goes to
``PATH.tmp`` and is renamed over ``PATH``, so a crash never leaves a half-written checkpoint; the
file is sealed with a checksum of its bytes (``file_seal``), verified whenever it is read, so a
damaged file is an error naming it. Files from before seals (the shipped checkpoints) still load.
Weights that are not finite (a diverged run) are refused.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from conhex_zero.files import file_seal
from conhex_zero.nn.checkpoint_files import CheckpointError, check_checkpoint_file
from conhex_zero.nn.model import GraphNet, ModelConfig

FORMAT = "conhex-zero-checkpoint"
SCHEMA_VERSION = 1


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
    return file_seal.save(data, path)


def _read(path: str | Path, mmap: bool = False) -> tuple[Path, dict[str, Any]]:
    """The checkpoint's dict, read with ``torch.load(weights_only=True)`` (a file that holds anything
    but tensors and plain data, such as a pickle that would run code, is refused), checked for our
    format tag and schema. With ``mmap`` the tensors are memory-mapped where the file allows it, so
    reading only the game costs little."""
    path = check_checkpoint_file(path)
    data = None
    for mapped in ((True, False) if mmap else (False,)):  # mmap needs torch's zip format
        try:
            data = file_seal.load(path, mmap=mapped)  # the seal is verified first; no torch warnings
            break
        except file_seal.SealError as err:
            raise CheckpointError(str(err)) from None
        except OSError as err:
            raise CheckpointError(f"{path} cannot be read ({err.strerror or err})") from None
        except Exception as err:  # torch raises many types for corrupt or foreign files
            if mapped and not isinstance(err, pickle.UnpicklingError):
                continue  # not a zip file (or an old torch): read it whole for the real reason
            raise CheckpointError(f"{path} is not a conhex-zero checkpoint (unreadable: {unreadable_reason(err)})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a conhex-zero checkpoint (no {FORMAT!r} format tag)")
    if data.get("schema") != SCHEMA_VERSION:
        raise CheckpointError(f"{path} has checkpoint schema {_show(data.get('schema'))}, this version reads "
                              f"schema {SCHEMA_VERSION}")
    return path, data


def unreadable_reason(err: Exception) -> str:
    """Why torch could not read a file, in a few words: never torch's advice to load it with
    ``weights_only=False`` (which would run whatever code the file holds)."""
    if isinstance(err, pickle.UnpicklingError):
        lines = [line.strip() for line in str(err).splitlines()]
        detail = next((line for line in lines if "GLOBAL" in line), None) or next(
            (line for line in lines if line and "weights_only" not in line and "Weights only" not in line
             and not line.startswith(("Please file", "Check the")) and "WeightsUnpickler error" not in line), "")
        if "GLOBAL" in detail:
            return f"it holds Python objects, refused since loading them could run code ({_short(detail, 80)})"
        return "not a file of tensors" + (f" ({_short(detail, 80)})" if detail else "")
    if isinstance(err, EOFError):
        return "the file is empty or cut short"
    first = str(err).strip().splitlines()[0] if str(err).strip() else ""
    if "weights_only" in first:
        first = ""
    first = first.split(". ")[0].rstrip(".")  # torch's first sentence says what; the rest is advice
    return f"{type(err).__name__}" + (f": {_short(first, 100, words=True)}" if first else "")


def _short(text: str, limit: int = 40, words: bool = False) -> str:
    """``text`` in at most ``limit`` characters, ``...`` where it was cut (``words``: between words)."""
    if len(text) <= limit:
        return text
    cut = text[:limit - 3]
    if words and " " in cut:
        cut = cut[:cut.rindex(" ")].rstrip(" ,;:")
    return cut + "..."


def _show(value: Any) -> str:
    """A value from a file, for a message: its repr, shortened."""
    return _short(repr(value))


def checkpoint_game(path: str | Path) -> str:
    """The game spec a checkpoint was trained on, without building its model."""
    path, data = _read(path, mmap=True)
    game = data.get("game")
    if not isinstance(game, str) or not game:
        raise CheckpointError(f"{path} is not a conhex-zero checkpoint (its 'game' is {_show(game)}, not a game spec)")
    return game


MAX_LAYERS = 1000
MAX_HIDDEN = 1 << 16
MAX_REPEAT = 100


def _whole(spec: dict[str, Any], key: str, high: int, path: Path) -> int:
    value = spec.get(key)
    if key not in spec:
        raise CheckpointError(f"{path} is not a usable checkpoint: its model description has no {key!r}")
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
        raise CheckpointError(f"{path} is not a usable checkpoint: model {key!r} is {_show(value)}, not a whole "
                              f"number from 1 to {high}")
    return value


def _check_weights(path: Path, data: dict[str, Any]) -> tuple[ModelConfig, dict[str, torch.Tensor]]:
    """The model size and weights of a checkpoint's dict, checked for shape and type: a checkpoint
    that is not what it says raises ``CheckpointError`` (one line), never a traceback."""
    spec = data.get("model")
    if not isinstance(spec, dict):
        raise CheckpointError(f"{path} is not a usable checkpoint: no model description ('model' is "
                              f"{_show(spec)})")
    layers, hidden = _whole(spec, "layers", MAX_LAYERS, path), _whole(spec, "hidden", MAX_HIDDEN, path)
    repeat = _whole(spec, "repeat", MAX_REPEAT, path) if "repeat" in spec else 1
    connection = spec.get("connection", False)
    if not isinstance(connection, bool):
        raise CheckpointError(f"{path} is not a usable checkpoint: model 'connection' is {_show(connection)}, "
                              f"not true or false")
    config = ModelConfig(layers, hidden, repeat, connection)
    if spec.get("num_features") != config.num_features:
        raise CheckpointError(f"{path} was made for {_show(spec.get('num_features'))} input features; this "
                              f"version encodes {config.num_features} for {config.name}")
    weights = data.get("state_dict")
    if "state_dict" not in data:
        raise CheckpointError(f"{path} is not a usable checkpoint: it has no weights ('state_dict')")
    if not isinstance(weights, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                                for k, v in weights.items()):
        raise CheckpointError(f"{path} is not a usable checkpoint: its weights ('state_dict') are not a table "
                              f"of named tensors")
    if not isinstance(data.get("game"), str) or not data["game"]:
        raise CheckpointError(f"{path} is not a usable checkpoint: its 'game' is {_show(data.get('game'))}, "
                              f"not a game spec")
    if not isinstance(data.get("meta", {}), dict):
        raise CheckpointError(f"{path} is not a usable checkpoint: its 'meta' is not a table")
    bad = next((k for k, t in weights.items() if t.is_floating_point() and not bool(torch.isfinite(t).all())), None)
    if bad is not None:
        raise CheckpointError(f"{path} holds weights that are NaN or infinite (e.g. {_short(bad, 60)}): the "
                              f"network diverged; use an earlier checkpoint")
    stored = sum(t.numel() for t in weights.values())
    if layers * hidden * hidden > stored + 1_000_000:  # each block holds ~3 hidden^2 weights
        raise CheckpointError(f"{path} is not a usable checkpoint: it says l{layers}h{hidden} but holds only "
                              f"{stored} weights")
    return config, weights


def load_checkpoint(path: str | Path, device: torch.device | str = "cpu") -> Checkpoint:
    """Read a checkpoint; ``CheckpointError`` (a one-line message) for a missing or unreadable file,
    another format, a newer schema, or weights that do not fit the model it describes."""
    path, data = _read(path)
    config, weights = _check_weights(path, data)
    try:
        model = GraphNet(config)
    except Exception as err:  # a size this version's network cannot take
        raise CheckpointError(f"{path} is not a usable checkpoint: no {config.name} model ({unreadable_reason(err)})") from None
    expected = model.state_dict()
    missing = [k for k in expected if k not in weights]
    unexpected = [k for k in weights if k not in expected]
    wrong = [k for k in expected if k in weights and tuple(weights[k].shape) != tuple(expected[k].shape)]
    if missing or unexpected or wrong:
        parts = [f"{len(missing)} missing (e.g. {missing[0]})" if missing else "",
                 f"{len(unexpected)} unknown (e.g. {_show(unexpected[0])})" if unexpected else "",
                 f"{len(wrong)} of another shape (e.g. {wrong[0]}: {list(weights[wrong[0]].shape)}, "
                 f"expected {list(expected[wrong[0]].shape)})" if wrong else ""]
        raise CheckpointError(f"{path}: its weights do not fit the {config.name} model it describes: "
                              + "; ".join(p for p in parts if p))
    try:
        model.load_state_dict(weights)
    except Exception as err:  # e.g. weights that cannot be converted to the parameters' type
        raise CheckpointError(f"{path}: its weights cannot be loaded ({unreadable_reason(err)})") from None
    model.to(device).eval()
    return Checkpoint(model=model, game=data["game"], meta=data.get("meta", {}), path=path)

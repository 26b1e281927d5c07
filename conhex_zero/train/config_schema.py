"""A training config's keys and value types, checked without torch.

``config.load_config`` builds the config and validates it; validation needs torch (the model's
size, the reference players, the memory estimate), and importing torch costs seconds of CPU. The
mistakes a person makes most, a key misspelt (``optim.learning_rate=1e-3``) or a value of the wrong
type (``optim.lr=fast``), are found by building alone, which reads nothing but the config's own
dataclasses (``config.TrainConfig`` and its sections, their fields and type hints): so ``train``
and ``bench selfplay`` check them here first and answer at once. There is no second copy of the
schema: a field added to a dataclass is known here the moment it exists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from conhex_zero.train import config as _config


def check_schema(path: str | Path | None, overrides: Sequence[str], base: dict[str, Any] | None = None) -> None:
    """``config.ConfigError`` (one line, naming the key) for an unknown key or an ill-typed value in
    the config file ``path`` (None: none) or the ``key=value`` ``overrides``, merged over ``base``
    as ``load_config`` merges them; ranges and everything that needs torch are ``load_config``'s."""
    data: dict[str, Any] = dict(base or {})
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise _config.ConfigError(f"config file {p} does not exist")
        data = _config._merge(data, _config.read_yaml_mapping(p))
    data = _config._merge(data, _config.parse_overrides(list(overrides)))
    _config._build(_config.TrainConfig, data)

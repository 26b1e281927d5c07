"""Reading a training config: defaults, then a base (a run's stored config), a YAML file, and ``key=value`` overrides.

``load_config`` builds a ``config.TrainConfig`` from them and checks it (``config_check.validate``).
Building reads nothing but the config's own dataclasses (their fields and type hints), so the
mistakes a person makes most, a key misspelt (``optim.learning_rate=1e-3``) or a value of the wrong
type (``optim.lr=fast``), are found without torch: ``train`` and ``bench selfplay`` call
``check_schema`` first and answer at once (importing torch costs seconds of CPU), and ``load_config``
checks the ranges, the model's size, the reference players and the memory estimate after. There is
no second copy of the schema: a field added to a dataclass is known here the moment it exists.
"""

from __future__ import annotations

import difflib
import math
import types
import typing
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any, Sequence

from conhex_zero.files.untrusted import UntrustedTextError, load_yaml
from conhex_zero.train.config import ConfigError, TrainConfig


def _field_types(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _float_as_int(text: str) -> int | None:
    """``'1e6'`` (which YAML reads as text) as 1000000; None unless it is a finite whole number."""
    try:
        number = float(text)
    except ValueError:
        return None
    return int(number) if math.isfinite(number) and number.is_integer() else None


def _coerce(value: Any, typ: Any, key: str) -> Any:
    """Check (and gently convert) a value against a field type."""
    origin = typing.get_origin(typ)
    if typ is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "yes", "no", "on", "off", "1", "0"):
            return value.lower() in ("true", "yes", "on", "1")
        raise ConfigError(f"{key}: expected true or false, got {value!r}")
    if typ is int:
        if isinstance(value, float) and value.is_integer() and math.isfinite(value):
            value = int(value)  # 1e6 in YAML is a float
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ConfigError(f"{key}: expected a whole number, got {value!r}")
        try:
            number = int(value)
        except ValueError:
            number = _float_as_int(value)
            if number is None:
                raise ConfigError(f"{key}: expected a whole number, got {value!r}") from None
        if abs(number) >= 2**63:
            raise ConfigError(f"{key}: {value!r} is too large (at most {2**63 - 1})")
        return number
    if typ is float:
        if isinstance(value, bool):
            raise ConfigError(f"{key}: expected a number, got {value!r}")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{key}: expected a number, got {value!r}") from None
        if not math.isfinite(number):
            raise ConfigError(f"{key}: expected a finite number, got {value!r}")
        return number
    if typ is str:
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise ConfigError(f"{key}: expected text, got {value!r}")
        return str(value)
    if origin is tuple:
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{key}: expected a list, got {value!r}")
        (inner, *_) = typing.get_args(typ)
        return tuple(_coerce(v, inner, key) for v in value)
    if origin in (typing.Union, types.UnionType):
        raise ConfigError(f"{key}: unsupported type")  # no optional fields today
    raise ConfigError(f"{key}: unsupported type {typ}")


def _build(cls: type, data: dict[str, Any], prefix: str = "") -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"{prefix.rstrip('.') or 'config'}: expected a mapping of keys, got {data!r}")
    hints = _field_types(cls)
    names = [f.name for f in fields(cls)]
    kwargs = {}
    for key, value in data.items():
        full = prefix + str(key)
        if key not in names:
            close = difflib.get_close_matches(str(key), names, n=1)
            hint = f"; did you mean {prefix}{close[0]}?" if close else f"; known keys: {', '.join(names)}"
            raise ConfigError(f"unknown config key {full!r}{hint}")
        typ = hints[key]
        if is_dataclass(typ):
            kwargs[key] = _build(typ, value or {}, full + ".")
        else:
            kwargs[key] = _coerce(value, typ, full)
    return cls(**kwargs)


def _set(data: dict[str, Any], dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    node = data
    for p in parts[:-1]:
        node = node.setdefault(p, {})
        if not isinstance(node, dict):
            raise ConfigError(f"{dotted}: {p} is not a section")
    node[parts[-1]] = value


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """``["optim.lr=3e-4", "game=hex-5"]`` as a nested dict (values parsed as YAML scalars)."""
    out: dict[str, Any] = {}
    for item in items:
        key, eq, raw = item.partition("=")
        if not eq or not key.strip():
            raise ConfigError(f"override {item!r}: expected key=value, e.g. optim.lr=3e-4")
        try:
            value = load_yaml(raw) if raw.strip() else ""
        except UntrustedTextError:
            value = raw
        _set(out, key.strip(), value)
    return out


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in extra.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def read_yaml_mapping(path: Path) -> dict[str, Any]:
    """A YAML file that must hold a mapping of keys (an empty file is an empty mapping)."""
    try:
        loaded = load_yaml(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not a text file (not UTF-8)") from None
    except UntrustedTextError as err:
        raise ConfigError(f"{path}: {err}") from None
    except OSError as err:
        raise ConfigError(f"{path} cannot be read: {err.strerror}") from None
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path}: expected a mapping of keys (key: value lines), got a {type(loaded).__name__}")
    return loaded


def _read(path: str | Path | None, overrides: Sequence[str], base: dict[str, Any] | None) -> dict[str, Any]:
    """``base``, then the YAML file ``path`` (None: none), then ``overrides``, merged as one mapping."""
    data: dict[str, Any] = dict(base or {})
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"config file {p} does not exist")
        data = _merge(data, read_yaml_mapping(p))
    return _merge(data, parse_overrides(list(overrides)))


def check_schema(path: str | Path | None, overrides: Sequence[str], base: dict[str, Any] | None = None,
                 ranges: bool = False) -> None:
    """``ConfigError`` (one line, naming the key) for an unknown key or an ill-typed value in the
    config file ``path`` (None: none) or the ``key=value`` ``overrides``, merged over ``base`` as
    ``load_config`` merges them; with ``ranges``, also a value out of the range the settings bound
    (``config_check.check_ranges``: give it only when the merge is the whole config, not the
    overrides of a resumed run without its stored config). The game's bounds and everything that
    needs torch are ``load_config``'s."""
    config = _build(TrainConfig, _read(path, overrides, base))
    if ranges:
        from conhex_zero.train.config_check import check_ranges

        check_ranges(config)


def load_config(path: str | Path | None = None, overrides: list[str] | None = None,
                base: dict[str, Any] | None = None) -> TrainConfig:
    """Defaults, then ``base`` (e.g. a run's saved config), then the YAML file, then overrides; checked."""
    from conhex_zero.train.config_check import validate  # imports the game rules: not needed by check_schema

    config = _build(TrainConfig, _read(path, overrides or [], base))
    validate(config)
    return config

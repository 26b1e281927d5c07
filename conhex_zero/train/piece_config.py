"""The settings a piece trains with, and the line.yaml it leaves behind.

A new line takes its ``--config`` file (or a line.yaml written by hand) with the command's
``key=value`` overrides. A begun line takes the config stored in its carry.pt (what the last piece
trained with), then its line.yaml on top (so an edit of line.yaml changes the recipe from the next
piece on, and a key the file leaves out keeps its stored value), then the overrides. Changes
against the stored config are noted, one line naming each key. A line.yaml that cannot be read or
names an unknown key or value is an error naming line.yaml: nothing is replaced silently.

The line.yaml the piece writes back keeps the file's own text (its comments) when it still says
what the piece trained with; when overrides changed a setting, the file is written anew from the
piece's config under the old file's leading comments and a line that says which piece changed what.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from conhex_zero.train.config import ConfigError, TrainConfig
from conhex_zero.train.config_load import _build, _merge, load_config
from conhex_zero.train.line import Line, LineError


def _flat(data: Any, prefix: str = "") -> dict[str, Any]:
    """``{"optim": {"lr": 1}}`` as ``{"optim.lr": 1}``."""
    if not isinstance(data, dict):
        return {prefix.rstrip("."): data} if prefix else {}
    out: dict[str, Any] = {}
    for key, value in data.items():
        out.update(_flat(value, f"{prefix}{key}.") if isinstance(value, dict) else {f"{prefix}{key}": value})
    return out


def changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """``key: old -> new`` for each setting that differs."""
    a, b = _flat(before), _flat(after)
    return [f"{k}: {a.get(k)!r} -> {b.get(k)!r}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def _load(path: Path | None, overrides: list[str] | None, base: dict[str, Any] | None, what: str) -> TrainConfig:
    try:
        return load_config(path, overrides, base=base)
    except ConfigError as err:
        raise LineError(f"{what}: {err}") from None


def _stored(line: Line, carry: dict) -> dict[str, Any]:
    try:
        return _build(TrainConfig, carry["config"]).to_dict()
    except (ConfigError, TypeError) as err:
        raise LineError(f"{line.carry_file} is damaged: its stored config is not valid ({err})") from None


def resolve_config(line: Line, carry: dict | None, config_file: str | None, overrides: list[str] | None,
                   number: int, note: Callable[[str], None]) -> tuple[TrainConfig, str]:
    """The piece's config and the text of the line.yaml to write (see the module docstring)."""
    if carry is None:
        source = Path(config_file) if config_file else line.config_file
        config = _load(source, overrides, None, str(source))
        return config, _line_yaml(source.read_text(encoding="utf-8"), config, number, overrides)
    stored = _stored(line, carry)
    if not line.config_file.is_file():
        note(f"note: {line.config_file} is missing: the line continues with the config stored in {line.carry_file} "
             f"(the file is written again)")
        config = _load(None, overrides, stored, "the stored config with the overrides")
        return config, _line_yaml(None, config, number, overrides)
    from_file = _load(line.config_file, None, stored, str(line.config_file))
    edited = changes(stored, from_file.to_dict())
    if edited:
        note(f"note: {line.config_file} changes {len(edited)} setting{'s' * (len(edited) > 1)} of the last piece: "
             + "; ".join(edited))
    config = _load(line.config_file, overrides, stored, f"{line.config_file} with the overrides")
    return config, _line_yaml(line.config_file.read_text(encoding="utf-8"), config, number, overrides)


def _line_yaml(text: str | None, config: TrainConfig, number: int, overrides: list[str] | None) -> str:
    """``text`` itself when it still resolves to ``config``; else ``config`` written out under the old
    text's leading comments."""
    if text is not None:
        from conhex_zero.files.untrusted import UntrustedTextError, load_yaml

        try:
            data = load_yaml(text) or {}
            same = isinstance(data, dict) and _build(TrainConfig, _merge(config.to_dict(), data)) == config
        except (ConfigError, UntrustedTextError):
            same = False
        if same:
            return text
    header = []
    for row in (text or "").splitlines():
        if not row.startswith("#"):
            break
        header.append(row)
    said = " ".join(overrides or []) or "the stored config"
    header.append(f"# written by piece {number} ({said})")
    return "\n".join(header) + "\n" + config.dump()

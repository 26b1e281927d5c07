"""The settings a resumed run continues with: the config stored in its training state.

``RUN/config.yaml`` is the run's config written out for people to read; the training state holds
the config the run was actually trained with, and on ``--resume`` that stored config is the base
(``key=value`` overrides then change it). ``config.yaml`` is compared with it, so that neither a
damaged nor an edited file is used silently:

* a key whose value differs (an edit, or damage) is refused, the keys named: settings change on
  resume through overrides, and deleting ``config.yaml`` continues with the stored config;
* keys missing from it (an empty or cut-short file) and a file that is no longer valid YAML are
  noted in one line, and the stored config is used (the loop then rewrites ``config.yaml`` from
  it: never from defaults).
"""

from __future__ import annotations

from typing import Any, Callable

from conhex_zero.train.config import ConfigError, TrainConfig
from conhex_zero.train.config_load import _build, _merge, read_yaml_mapping
from conhex_zero.train.run_dir import RunDir
from conhex_zero.train.state_check import check_config


def _flat(data: Any, prefix: str = "") -> dict[str, Any]:
    """``{"optim": {"lr": 1}}`` as ``{"optim.lr": 1}``."""
    if not isinstance(data, dict):
        return {prefix.rstrip("."): data} if prefix else {}
    out: dict[str, Any] = {}
    for key, value in data.items():
        out.update(_flat(value, f"{prefix}{key}.") if isinstance(value, dict) else {f"{prefix}{key}": value})
    return out


def stored_config(run: RunDir) -> dict[str, Any]:
    """The config a run's training state was saved with (``TrainStateError`` if it has none, or
    one that is not valid)."""
    saved = run.load_state(mmap=True)
    check_config(saved, run.state_file)
    return _build(TrainConfig, saved["config"]).to_dict()


def resume_base(run: RunDir, note: Callable[[str], None]) -> dict[str, Any]:
    """The stored config of ``run``, checked against its ``config.yaml`` (see the module docstring)."""
    stored = stored_config(run)
    path = run.config_file
    if not path.is_file():
        note(f"note: {path} is missing; using the config stored in {run.state_file}")
        return stored
    try:
        written = read_yaml_mapping(path)
    except ConfigError as err:
        note(f"note: {path} cannot be read ({err}); using the config stored in {run.state_file}")
        return stored
    # An empty section (a file cut right after "replay:") holds none of its keys: they are missing.
    written = {k: v for k, v in written.items() if not (v is None and isinstance(stored.get(k), dict))}
    try:
        merged = _build(TrainConfig, _merge(stored, written)).to_dict()
    except ConfigError as err:
        raise ConfigError(f"{path} does not match the config stored in {run.state_file} ({err}): change "
                          f"settings with key=value overrides, or delete {path} to resume with the stored "
                          f"config") from None
    before, after = _flat(stored), _flat(merged)
    changed = [k for k in before if before[k] != after.get(k)]
    if changed:
        shown = ", ".join(f"{k} ({before[k]!r} stored, {after[k]!r} in the file)" for k in changed[:4])
        more = f" and {len(changed) - 4} more" if len(changed) > 4 else ""
        raise ConfigError(f"{path} differs from the config stored in {run.state_file} at {shown}{more}: an "
                          f"edited or damaged file? Change settings with key=value overrides (e.g. "
                          f"{changed[0]}=...), or delete {path} to resume with the stored config")
    missing = [k for k in before if k not in _flat(written)]
    if missing:
        note(f"note: {path} lacks {len(missing)} of the run's {len(before)} settings (cut short or emptied?); "
             f"using the config stored in {run.state_file}")
    return stored

"""A training state checked against what this run expects, before anything of it is restored.

A state file can be a valid archive and still be wrong: written by a bug or another version, edited,
or damaged in a way its checksum cannot see (a state saved that way). Restoring such a state used
to end in a traceback minutes later, or in an 8 GB allocation (a replay ``size`` of 10^9). Here every
part is compared with a *template*, the same part of the freshly built run (its ``state_dict``):

* tables must have the template's keys; tensors its dtype and shape (replay rows: as many as the
  saved ``size`` says, at most its capacity); generator states their exact size; numbers must be
  whole or finite numbers in range;
* the optimiser's moments must have the shapes of the parameters they belong to;
* weights and optimiser moments must be finite.

Each failure is one ``TrainStateError`` naming the file and the part, e.g.
``RUN/state/train_state.pt is damaged: replay.store.holes has shape [5, 9], expected [192, 9]``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from conhex_zero.train.run_dir import TrainStateError

MAX_COUNT = 2**62
"""Counters (iterations, games, steps) beyond this are damage."""


class _Damage(Exception):
    """A part of the state that does not fit its template (``where``: its dotted name)."""


def _fail(where: str, what: str) -> None:
    raise _Damage(f"{where} {what}")


def _shape(t: Tensor) -> list[int]:
    return list(t.shape)


def check_tensor(value: Any, template: Tensor, where: str, rows: int | None = None, finite: bool = False) -> None:
    """``value`` is a tensor of the template's dtype and shape (with ``rows`` rows, when given)."""
    if not isinstance(value, Tensor):
        _fail(where, f"is a {type(value).__name__}, not a tensor")
    if value.dtype != template.dtype:
        _fail(where, f"has dtype {value.dtype}, expected {template.dtype}")
    expected = _shape(template) if rows is None else [rows] + _shape(template)[1:]
    if _shape(value) != expected:
        _fail(where, f"has shape {_shape(value)}, expected {expected}")
    if finite and value.is_floating_point() and not bool(torch.isfinite(value).all()):
        _fail(where, "holds NaN or infinite values")


def check_count(value: Any, where: str, low: int = 0, high: int = MAX_COUNT) -> int:
    """``value`` is a whole number from ``low`` to ``high``."""
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(where, f"is {_show(value)}, not a whole number")
    if not low <= value <= high:
        _fail(where, f"is {value}, not from {low} to {high}")
    return value


def _show(value: Any) -> str:
    text = repr(value) if not isinstance(value, Tensor) else f"a tensor of shape {_shape(value)}"
    return text if len(text) <= 40 else text[:37] + "..."


def check_like(value: Any, template: Any, where: str, finite: bool = False) -> None:
    """``value`` has the structure of ``template`` (tables, tensors, numbers, text), recursively."""
    if isinstance(template, dict):
        if not isinstance(value, dict):
            _fail(where, f"is {_show(value)}, not a table")
        for key, sub in template.items():
            if key not in value:
                _fail(f"{where}.{key}" if where else str(key), "is missing")
            check_like(value[key], sub, f"{where}.{key}" if where else str(key), finite)
    elif isinstance(template, Tensor):
        check_tensor(value, template, where, finite=finite)
    elif isinstance(template, bool):
        if not isinstance(value, bool):
            _fail(where, f"is {_show(value)}, not true or false")
    elif isinstance(template, int):
        check_count(value, where, -MAX_COUNT, MAX_COUNT)
    elif isinstance(template, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            _fail(where, f"is {_show(value)}, not a finite number")
    elif isinstance(template, str):
        if not isinstance(value, str):
            _fail(where, f"is {_show(value)}, not text")


def check_optimizer(value: Any, params: list[Tensor], template: dict, where: str) -> None:
    """An AdamW state: one group list like the template's; each parameter's moments its shape."""
    check_like(value, {"state": {}, "param_groups": []}, where)
    groups = value["param_groups"]
    if not isinstance(groups, list) or len(groups) != len(template["param_groups"]):
        _fail(f"{where}.param_groups", f"is {_show(groups)}, expected {len(template['param_groups'])} group(s)")
    for k, (group, fresh) in enumerate(zip(groups, template["param_groups"])):
        if not isinstance(group, dict) or group.get("params") != fresh["params"]:
            _fail(f"{where}.param_groups[{k}]", "does not list this network's parameters")
        for key in ("lr", "weight_decay", "eps"):
            check_like(group.get(key), 0.0, f"{where}.param_groups[{k}].{key}")
    for index, moments in value["state"].items():
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(params):
            _fail(f"{where}.state", f"names parameter {_show(index)}, which this network does not have")
        name = f"{where}.state[{index}]"
        if not isinstance(moments, dict):
            _fail(name, f"is {_show(moments)}, not a table")
        shape = torch.empty(params[index].shape, dtype=params[index].dtype)
        for key in ("exp_avg", "exp_avg_sq"):
            if key not in moments:
                _fail(f"{name}.{key}", "is missing")
            check_tensor(moments[key], shape, f"{name}.{key}", finite=True)
        if "step" not in moments or not isinstance(moments["step"], Tensor) or moments["step"].numel() != 1:
            _fail(f"{name}.step", "is not a one-number tensor")


def check_replay(value: Any, template: dict, capacity: int, where: str = "replay") -> None:
    """A replay buffer's state: the ``capacity`` of the run that saved it, rows as many as its
    ``size``, its pointers inside its ring."""
    if not isinstance(value, dict):
        _fail(where, f"is {_show(value)}, not a table")
    for key in ("size", "capacity", "next", "total_added", "store"):
        if key not in value:
            _fail(f"{where}.{key}", "is missing")
    if value["capacity"] != capacity:
        _fail(f"{where}.capacity", f"is {_show(value['capacity'])}, but the run was saved with replay.capacity={capacity}")
    size = check_count(value["size"], f"{where}.size", 0, capacity)
    check_count(value["next"], f"{where}.next", 0, capacity - 1)
    check_count(value["total_added"], f"{where}.total_added", size)
    if size < capacity and value["next"] != size:
        _fail(f"{where}.next", f"is {value['next']}, but a ring not yet full ({size} of {capacity}) continues at {size}")
    for key, fresh in template.items():
        if isinstance(fresh, Tensor):
            if key not in value:
                _fail(f"{where}.{key}", "is missing")
            check_tensor(value[key], fresh, f"{where}.{key}", rows=size, finite=True)
    if not isinstance(value["store"], dict):
        _fail(f"{where}.store", f"is {_show(value['store'])}, not a table")
    for key, fresh in template["store"].items():
        if key not in value["store"]:
            _fail(f"{where}.store.{key}", "is missing")
        check_tensor(value["store"][key], fresh, f"{where}.store.{key}", rows=size)
    holes, cells = template["store"]["holes"].shape[1], template["store"]["cells"].shape[1]
    check_positions(value["store"], f"{where}.store", holes, cells)


_ENGINE_RANGES = {"holes": (-1, 1), "cells": (-1, 1), "to_move": (0, 1), "winner": (-1, 1), "reach": (0, 3)}


def check_positions(state: dict, where: str, holes: int, cells: int) -> None:
    """Engine positions (replay rows, games in progress) hold values the engine can index with."""
    ranges = {**_ENGINE_RANGES, "last": (-1, holes - 1), "label": (0, cells - 1), "ply": (0, holes + 1),
              "counts": (0, holes)}
    for key, (low, high) in ranges.items():
        t = state.get(key)
        if isinstance(t, Tensor) and t.numel() and not (int(t.min()) >= low and int(t.max()) <= high):
            _fail(f"{where}.{key}", f"holds values from {int(t.min())} to {int(t.max())}, not from {low} to {high}")


def check_config(saved: dict, path: Path) -> None:
    """The stored config is a valid config (of any game and size: ``check_resumable`` compares)."""
    from conhex_zero.train.config import ConfigError, TrainConfig
    from conhex_zero.train.config_load import _build

    if not isinstance(saved.get("config"), dict):
        raise TrainStateError(f"{path} is damaged: its 'config' is {_show(saved.get('config'))}, not a table")
    try:
        _build(TrainConfig, saved["config"])
    except ConfigError as err:
        raise TrainStateError(f"{path} is damaged: its stored config is not valid ({err})") from None


def check_shared(saved: dict, path: Path, model_state: dict, learner: dict, params: list[Tensor]) -> None:
    """The part every rank restores from ``train_state.pt``: weights, optimiser, counters."""
    try:
        check_like(saved["model"], model_state, "model", finite=True)
        check_like(saved["learner"], {k: v for k, v in learner.items() if k != "optimizer"}, "learner")
        check_count(saved["learner"]["step"], "learner.step")
        check_count(saved["learner"]["planned_steps"], "learner.planned_steps")
        check_optimizer(saved["learner"]["optimizer"], params, learner["optimizer"], "learner.optimizer")
        check_count(saved["iteration"], "iteration")
        check_count(saved.get("games", 0), "games")
        check_like(saved.get("elapsed", 0.0), 0.0, "elapsed")
        check_count(saved.get("world_size", 1), "world_size", 1, 1 << 20)
        check_count(saved.get("positions", 0), "positions")
        check_like(saved.get("carried", False), False, "carried")
        if saved.get("previous") is not None:
            check_like(saved["previous"], model_state, "previous", finite=True)
            check_like(saved.get("previous_name"), "", "previous_name")
    except _Damage as err:
        raise TrainStateError(f"{path} is damaged: {err}") from None


def check_local(local: dict, path: Path, capacity: int, replay: dict, selfplay: dict, rng: dict,
                generator: Tensor) -> None:
    """A rank's own part (``train_state.pt`` in one process, its shard under torchrun): replay (of
    the stored config's ``capacity``), games in progress, generators."""
    try:
        for key in ("replay", "selfplay", "rng"):
            if key not in local:
                _fail(key, "is missing")
        check_replay(local["replay"], replay, capacity)
        check_like(local["selfplay"], selfplay, "selfplay")
        holes, cells = selfplay["state"]["holes"].shape[1], selfplay["state"]["cells"].shape[1]
        check_positions(local["selfplay"]["state"], "selfplay.state", holes, cells)
        rows = local["selfplay"]["pending_row"]
        if rows.numel() and not -1 <= int(rows.min()) <= int(rows.max()) < local["replay"]["capacity"]:
            _fail("selfplay.pending_row", "names rows outside the replay buffer")
        check_count(local["selfplay"]["seed"], "selfplay.seed", 0, 2**63 - 1)
        check_count(local["selfplay"]["step_count"], "selfplay.step_count")
        check_like(local["rng"], {"torch": rng["torch"]}, "rng")
        if "learner_generator" in local:
            check_tensor(local["learner_generator"], generator, "learner_generator")
    except _Damage as err:
        raise TrainStateError(f"{path} is damaged: {err}") from None

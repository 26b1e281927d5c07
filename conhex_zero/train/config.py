"""Training configuration: frozen dataclasses, read from YAML, overridden by ``key=value``.

Every field has a default and a docstring. A YAML file mirrors the nesting (``selfplay:``,
``optim:`` ...); command-line overrides use dotted paths (``optim.lr=3e-4``). Unknown keys, values
of the wrong type and out-of-range values are errors that say which key and why. The resolved
configuration is printed at start, saved as ``config.yaml`` in the run directory and stored in
every checkpoint.
"""

from __future__ import annotations

import difflib
import math
import types
import typing
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

import yaml


class ConfigError(ValueError):
    """A configuration file or override is invalid; the message names the key."""


@dataclass(frozen=True)
class SelfPlayConfig:
    games: int = 64
    """Games played at once (the search batch)."""
    full_sims: int = 32
    """Simulations of a full search, whose result is recorded as a training target."""
    cheap_sims: int = 8
    """Simulations of a cheap search (not recorded): playout-cap randomisation."""
    full_fraction: float = 0.25
    """Share of moves searched fully (1.0: every move is full and recorded)."""
    scheme: str = "gumbel"
    """Search scheme: gumbel or puct."""
    max_considered: int = 16
    """Gumbel: root candidates."""
    dirichlet_fraction: float = 0.25
    """PUCT only: weight of the root Dirichlet noise."""
    dirichlet_alpha: float = 0.3
    temperature_moves: int = 4
    """For this many first plies, moves are sampled from the search policy (temperature 1)."""
    random_first_moves: int = 0
    """The first this many plies of every game are uniformly random legal moves (never the swap)
    instead of the search's, so that self-play visits every opening equally: the positions the
    opening analysis judges. Their positions are still searched and recorded (0: off)."""
    resign_threshold: float = 0.95
    """Resign when the searched value for the player to move is below -threshold (1 disables)."""
    resign_playout: float = 0.2
    """Share of games that never resign (to measure false resignations)."""
    positions_per_iteration: int = 512
    """Recorded positions (full searches) gathered per iteration."""
    compile: bool = False
    """torch.compile the network for self-play's evaluations (fixed shapes: one batch of games)."""
    cuda_graphs: bool = False
    """On CUDA, replay each search simulation as a CUDA graph (see search.mcts.Searcher)."""
    precision: str = "autocast"
    """The self-play network's arithmetic: autocast (bf16 matrix products under autocast on CUDA,
    float32 on a CPU), bf16 (every tensor in bf16, norms included: fewer bytes moved on a GPU; slow
    on a CPU without bf16 instructions) or fp32 (``agents.evaluators.PRECISIONS``)."""
    solver: bool = False
    """Proven values in self-play's searches (MCTS-solver, see search.mcts): off by default, the
    recipe the shipped models were trained with."""


@dataclass(frozen=True)
class ReplayConfig:
    capacity: int = 50_000
    """Positions kept (oldest dropped first)."""
    min_size: int = 256
    """No training before the buffer holds this many positions."""
    symmetries: bool = False
    """Sample each position under a random board symmetry. Off by default: the network is exactly
    equivariant under the board's symmetries (tested), so its loss on every image of a position is
    the same and augmentation only costs time; it is kept for networks that are not."""


@dataclass(frozen=True)
class OptimConfig:
    batch_size: int = 128
    lr: float = 2e-3
    """Peak learning rate (AdamW)."""
    weight_decay: float = 1e-4
    warmup_steps: int = 50
    schedule: str = "cosine"
    """constant or cosine (decays to 10% over the planned steps)."""
    sample_reuse: float = 4.0
    """Training samples drawn per new recorded position."""
    value_weight: float = 1.0
    ownership_weight: float = 0.5
    grad_clip: float = 1.0
    autocast: bool = True
    """bf16 autocast on CUDA (ignored on CPU)."""
    compile: bool = False
    """torch.compile the network for training (any device; compiling takes a minute or more)."""


@dataclass(frozen=True)
class EvalConfig:
    every: int = 1
    """Evaluate every this many iterations (each evaluated iteration writes a checkpoint)."""
    games: int = 40
    """Games against each reference (even: each side first in half)."""
    previous_games: int = 40
    """Games against the previous evaluated checkpoint (and against each neighbour)."""
    neighbours: int = 2
    """Earlier checkpoints rated nearest to the new one that it also plays (the ladder schedule)."""
    references: tuple[str, ...] = ("random", "mcts-rollout:64")
    """Fixed reference players (random is the ladder's anchor at 0 Elo when present)."""
    sims: int = 16
    """Simulations of the network player in evaluation games."""
    opening_plies: int = 1
    """At least this many random moves open each pair of games (colours exchanged within a pair);
    longer when the board has fewer distinct openings of this length than a match has pairs."""
    mode: str = "full"
    """full: each evaluated checkpoint plays its ladder opponents inside the run (the games above);
    check: the run only checks it in seconds (``check_games`` against random) and writes the
    checkpoint unrated, for ``conhex-zero rate`` to rate later on another machine (a line whose
    pieces run on lent GPUs, where a match of a few games costs minutes)."""
    check_games: int = 8
    """check mode: games against random (colour-exchanged pairs); the check passes when the network
    wins more than half of them."""
    check_sims: int = 0
    """check mode: simulations of the network player (0: its raw policy, one evaluation a move)."""


@dataclass(frozen=True)
class DistConfig:
    timeout_s: float = 300.0
    """torchrun jobs: seconds to join the job and for a collective inside a training step (the
    gradient all-reduce) before the job fails; a rank that dies fails the others at once."""
    wait_timeout_s: float = 3600.0
    """torchrun jobs: seconds a rank waits for the others at a phase boundary (the slowest rank's
    self-play, rank 0's evaluation and checkpoint) before the job fails."""


@dataclass(frozen=True)
class TrainConfig:
    game: str = "hex-4"
    """Game spec (conhex, hex-5, hex-11:swap ...)."""
    model: str = "l4h64"
    """Network size: l<layers>h<hidden>."""
    init: str = ""
    """Warm start: a checkpoint (of the same network size, any game of the family: the graph
    network's weights do not depend on the board) whose weights the run starts from; optimiser,
    replay and iteration count start fresh. Empty: random initial weights."""
    seed: int = 0
    device: str = "cpu"
    """cpu or cuda (the --device option overrides it)."""
    iterations: int = 20
    """Self-play / training iterations."""
    max_minutes: float = 0.0
    """Stop (with a checkpoint) after this much wall time; 0: no limit."""
    state_minutes: float = 10.0
    """Also save the training state (no checkpoint, no evaluation) at the end of the first iteration
    that ends this many minutes after the last save, so that a run stopped between evaluations
    (``eval.every``) loses at most about this much work; 0: only at evaluations."""
    keep_checkpoints: int = 10
    """Rolling history of iteration checkpoints kept besides latest and best."""
    threads: int = 1
    """torch CPU threads (0: one per core, torch's default). One is the default: the loop's tensors
    are small, and with more threads than free cores torch's thread pool slows down 6-14 times when
    another process holds a core. Set more on a machine you have to yourself."""
    selfplay: SelfPlayConfig = field(default_factory=SelfPlayConfig)
    replay: ReplayConfig = field(default_factory=ReplayConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    dist: DistConfig = field(default_factory=DistConfig)
    """Multi-process training (torchrun); ignored by a single process."""

    def to_dict(self) -> dict[str, Any]:
        return _to_plain(self)

    def dump(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False)


def _to_plain(obj: Any) -> Any:
    if is_dataclass(obj):
        return {f.name: _to_plain(getattr(obj, f.name)) for f in fields(obj)}
    if isinstance(obj, tuple):
        return [_to_plain(x) for x in obj]
    return obj


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
    from conhex_zero.files.untrusted import UntrustedTextError, load_yaml

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
    from conhex_zero.files.untrusted import UntrustedTextError, load_yaml

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


def load_config(path: str | Path | None = None, overrides: list[str] | None = None,
                base: dict[str, Any] | None = None) -> TrainConfig:
    """Defaults, then ``base`` (e.g. a run's saved config), then the YAML file, then overrides."""
    data: dict[str, Any] = dict(base or {})
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"config file {p} does not exist")
        data = _merge(data, read_yaml_mapping(p))
    data = _merge(data, parse_overrides(overrides or []))
    config = _build(TrainConfig, data)
    validate(config)
    return config


def validate(c: TrainConfig) -> None:
    """Range checks with clear messages (types were checked while building)."""
    from conhex_zero.games.game import GameSpecError, parse_game
    from conhex_zero.nn.model import ModelConfig

    try:
        game = parse_game(c.game)
    except GameSpecError as err:
        raise ConfigError(f"game: {err}") from None
    from conhex_zero.agents.match_openings import OpeningError, check_opening_length

    try:
        check_opening_length(game, game.opening_plies + max(0, c.eval.opening_plies))
    except OpeningError as err:
        raise ConfigError(f"eval.opening_plies: {err}") from None
    try:
        ModelConfig.from_name(c.model)
    except ValueError as err:
        raise ConfigError(f"model: {err}") from None
    checks = [
        (c.device in ("cpu", "cuda") or c.device.startswith("cuda:"), "device: cpu or cuda"),
        (c.iterations >= 1, "iterations: at least 1"),
        (c.max_minutes >= 0, "max_minutes: 0 (no limit) or more"),
        (c.state_minutes >= 0, "state_minutes: 0 (only at evaluations) or more"),
        (c.keep_checkpoints >= 1, "keep_checkpoints: at least 1"),
        (c.threads >= 0, "threads: 0 (one per core) or more"),
        (c.selfplay.games >= 1, "selfplay.games: at least 1"),
        (c.selfplay.full_sims >= 1 and c.selfplay.cheap_sims >= 1, "selfplay.*_sims: at least 1"),
        (0 < c.selfplay.full_fraction <= 1, "selfplay.full_fraction: in (0, 1]"),
        (c.selfplay.scheme in ("gumbel", "puct"), "selfplay.scheme: gumbel or puct"),
        (c.selfplay.precision in ("autocast", "bf16", "fp32"), "selfplay.precision: autocast, bf16 or fp32"),
        (c.selfplay.max_considered >= 1, "selfplay.max_considered: at least 1"),
        (0 <= c.selfplay.dirichlet_fraction <= 1, "selfplay.dirichlet_fraction: in [0, 1]"),
        (c.selfplay.dirichlet_alpha > 0, "selfplay.dirichlet_alpha: positive"),
        (c.selfplay.temperature_moves >= 0, "selfplay.temperature_moves: 0 or more"),
        (0 < c.selfplay.resign_threshold <= 1, "selfplay.resign_threshold: in (0, 1]"),
        (0 <= c.selfplay.resign_playout <= 1, "selfplay.resign_playout: in [0, 1]"),
        (c.selfplay.positions_per_iteration >= 1, "selfplay.positions_per_iteration: at least 1"),
        (c.replay.capacity >= c.replay.min_size >= 1, "replay: capacity >= min_size >= 1"),
        (c.replay.capacity >= c.selfplay.games, "replay.capacity: at least selfplay.games (one move of every game)"),
        (c.selfplay.positions_per_iteration <= c.replay.capacity,
         "selfplay.positions_per_iteration: at most replay.capacity (an iteration would overwrite its own positions)"),
        (c.seed >= 0, "seed: 0 or more"),
        (c.optim.batch_size >= 1, "optim.batch_size: at least 1"),
        (c.optim.lr > 0, "optim.lr: positive"),
        (c.optim.weight_decay >= 0, "optim.weight_decay: 0 or more"),
        (c.optim.warmup_steps >= 0, "optim.warmup_steps: 0 or more"),
        (c.optim.schedule in ("constant", "cosine"), "optim.schedule: constant or cosine"),
        (0 < c.optim.sample_reuse <= 1000, "optim.sample_reuse: positive, at most 1000"),
        (c.optim.value_weight >= 0 and c.optim.ownership_weight >= 0, "optim.*_weight: 0 or more"),
        (c.optim.grad_clip > 0, "optim.grad_clip: positive"),
        (c.eval.every >= 1, "eval.every: at least 1"),
        (c.eval.games >= 0 and c.eval.previous_games >= 0, "eval.games: 0 or more"),
        (c.eval.games % 2 == 0 and c.eval.previous_games % 2 == 0,
         "eval.games and eval.previous_games: even (games come in colour-exchanged pairs)"),
        (c.eval.sims <= 100_000 and c.selfplay.full_sims <= 100_000 and c.selfplay.cheap_sims <= 100_000,
         "selfplay.*_sims and eval.sims: at most 100000 simulations per search"),
        (c.eval.neighbours >= 0, "eval.neighbours: 0 or more"),
        (c.eval.sims >= 1, "eval.sims: at least 1"),
        (c.eval.opening_plies >= 0, "eval.opening_plies: 0 or more"),
        (c.eval.mode in ("full", "check"), "eval.mode: full or check"),
        (2 <= c.eval.check_games <= 1000 and c.eval.check_games % 2 == 0, "eval.check_games: even, from 2 to 1000"),
        (0 <= c.eval.check_sims <= 100_000, "eval.check_sims: from 0 (the raw policy) to 100000"),
        (c.dist.timeout_s > 0 and c.dist.wait_timeout_s > 0, "dist.*timeout_s: positive"),
    ]
    for ok, message in checks:
        if not ok:
            raise ConfigError(f"invalid value for {message}")
    from conhex_zero.train.config_bounds import check_bounds
    from conhex_zero.train.memory import check_memory

    check_bounds(c, game)
    check_memory(c)
    from conhex_zero.agents.players import PlayerSpecError, make_player
    from conhex_zero.env.vec_env import VecEnv

    env = VecEnv("hex-2")
    for ref in c.eval.references:
        if ref == "random" or ref.startswith("mcts-rollout"):
            try:
                make_player(ref, env)
            except PlayerSpecError as err:
                raise ConfigError(f"eval.references: {err}") from None
        elif not ref.endswith(".pt"):
            raise ConfigError(f"eval.references: {ref[:80]!r} is not a fixed reference (random, mcts-rollout:K, or "
                              f"a checkpoint file CKPT.pt)")
        else:
            _check_reference_checkpoint(ref, game.spec)
    stems = [Path(ref).stem for ref in c.eval.references if ref.endswith(".pt")]
    if len(set(stems)) != len(stems):
        raise ConfigError("eval.references: two checkpoint references share a file name (their metrics would clash)")


def _check_reference_checkpoint(ref: str, game: str) -> None:
    """A checkpoint named as a fixed reference exists, loads, and was trained on the run's game (of
    any network size)."""
    from conhex_zero.nn.checkpoint import CheckpointError, load_checkpoint

    if not Path(ref).is_file():
        raise ConfigError(f"eval.references: no checkpoint file at {ref[:200]}")
    try:
        trained_on = load_checkpoint(ref).game
    except CheckpointError as err:
        raise ConfigError(f"eval.references: {err}") from None
    if trained_on != game:
        raise ConfigError(f"eval.references: {ref} was trained on {trained_on}; this run trains {game}")

"""Training configuration: frozen dataclasses, one per section, every field with a default and a docstring.

A YAML file mirrors the nesting (``selfplay:``, ``optim:`` ...); command-line overrides use dotted
paths (``optim.lr=3e-4``). Reading a config is ``config_load.py``'s (unknown keys and values of the
wrong type are errors that name the key), checking its ranges ``config_check.py``'s; both read the
classes here, which import neither. The resolved configuration is printed at start, saved as
``config.yaml`` in the run directory and stored in every checkpoint.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass
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
    start_lines: str = ""
    """A file of lines of moves (``train.start_lines``; ``conhex-zero book starts`` writes one from a
    book's undecided positions): a ``start_fraction`` share of the games plays one of them, drawn
    uniformly, before the search chooses; empty: off."""
    start_fraction: float = 0.5
    """Share of the games that start from a line of ``start_lines``."""
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
    backend: str = "eager"
    """How self-play's network and search steps run on a CPU (``nn.native``): eager (PyTorch's own
    kernels, the reference), aoti (AOTInductor's native kernels: one package per network size and
    board, built once, about 40 s with the search's step, cached; the trained weights are loaded into
    it after every training phase; 1.35-1.6 times the self-play positions a second), or auto (the
    process's default: aoti on a CPU unless ``$CONHEX_ZERO_BACKEND`` says eager, as the test suite
    does). Only float32 self-play without ``compile`` runs natively; CUDA always runs eager."""
    solver: bool = False
    """Proven values in self-play's searches (MCTS-solver, see search.mcts): off by default, the
    recipe the shipped models were trained with."""
    proven_targets: int = 0
    """Exact value targets (``train.proven_targets``, plain Hex only): a recorded position with at
    most this many empty cells learns the exact solver's result for its player to move instead of
    its game's outcome, once its game has ended (0: off)."""
    proven_nodes: int = 5000
    """The solver's budget per position for ``proven_targets`` (positions searched); a position it
    does not settle within it keeps its game's outcome."""
    proven_solver: str = "python"
    """The solver of ``proven_targets``: python (bridges and edge templates; settles Hex 7x7 positions
    with up to about 26 empty cells) or native (the C solver with fill-in and H-search at every node,
    Hex up to 8x8: middle-game positions too; ``proven_nodes`` then counts its expansions)."""

    @property
    def evaluator_backend(self) -> str | None:
        """``backend`` as ``NetworkEvaluator`` takes it: None (the process's default) for auto."""
        return None if self.backend == "auto" else self.backend

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
class MixConfig:
    games: tuple[str, ...] = ()
    """Side boards (``train.mix``): other games of the family (``[hex-5]``, ``[hex-5, hex-6]``) the one
    network plays and learns on beside ``game``, each with its own self-play and replay; evaluation
    and checkpoints stay ``game``'s. Empty: the run trains on ``game`` alone."""
    share: float = 0.25
    """Share of each iteration's recorded positions, and of its optimiser steps, that are the side
    boards' (split evenly between them)."""


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
    clock: str = "wall"
    """What ``max_minutes`` and the run's minutes count: ``wall`` time, or this process's ``cpu`` time
    (all its threads), over all its sessions: recipes compared at equal CPU minutes on a machine
    shared with other work get the same work (issue 56)."""
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
    mix: MixConfig = field(default_factory=MixConfig)
    """Side boards trained on in the same run (issue 56's curriculum across board sizes)."""
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

"""A search's step to a new leaf, all but the network: the rules' step, the result, the legal mask,
the one-move tactics and the encoding. Eager, or on a CPU in one native package built once per game.

``leaf_step`` is the one definition (``GameSearch.recurrent`` uses it for a network player with
tactics). Eager it is about 180 small tensor ops (5-15 microseconds each on a CPU, whatever the
batch): 1.1 ms a call at 1 position, 2 ms at 64, as much as the network's own native package at a
few positions. ``native_leaf`` exports the same function (``torch.export``) and compiles it with
AOTInductor into a package, cached beside the network's (``nn.native``: one per game, code, torch
version and CPU; 15-25 s to build, said on stderr with its time; loaded in milliseconds): 51 us at 1
position, 92 at 4, 232 at 16, 836 at 64 (docs/speed.md). Its outputs are the eager function's bit
for bit (integers, masks and float features alike; ``tests/test_leaf_step.py``).

Two things make it compile well. The engine's bool-as-uint8 helpers (``env.ops``) and the encoder's
slice writes take plain forms under a compiler (the same values). And the package's loops are scalar
(``cpp.simdlen=1``): Inductor's vector code for the engine's gathers of 8-wide rows is 2-4 times
slower than scalar code there.
"""

from __future__ import annotations

import hashlib
import inspect
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch
from torch import Tensor, nn

from conhex_zero.env.state import FIELDS, State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn import native
from conhex_zero.nn.encode import Encoded, Encoder

MAX_BATCH = 1 << 16
"""The most positions a package call takes (more: the eager function)."""


@dataclass(frozen=True)
class Leaf:
    """The new leaves of a batch of edges ``(state, action)``, before the network."""

    state: State  # the positions after the actions
    reward: Tensor  # [B] float: +1/-1 for the player who acted when the action ended the game, else 0
    discount: Tensor  # [B] float: +1 same player next, -1 the other, 0 game over
    legal: Tensor  # [B, A] bool: the legal actions (the network's logits are masked by these)
    focus: Tensor  # [B, A] bool: the actions the search considers (only the winning ones, if any)
    proven: Tensor  # [B] int8: 1 where the player to move wins at once (its value is exact), else 0
    encoded: Encoded  # the network's input


def outcome(state: State, nxt: State) -> tuple[Tensor, Tensor]:
    """``(reward [B], discount [B])`` of the step from ``state`` to ``nxt``: +1/-1 for the player who
    acted once the game is over (else 0); +1 when the same player moves next, -1 the other, 0 over."""
    ended = nxt.done
    won = nxt.winner == state.to_move
    reward = torch.where(ended, torch.where(won, 1.0, -1.0), 0.0)
    discount = torch.where(ended, 0.0, torch.where(nxt.to_move == state.to_move, 1.0, -1.0))
    return reward, discount


def winning_focus(wins: Tensor, legal: Tensor) -> tuple[Tensor, Tensor]:
    """``(focus [B, A], can_win [B])``: only the winning holes ``wins [B, H]`` where the mover has
    some (its value is then exact), else the legal actions ``legal [B, A]``."""
    can_win = wins.any(1)  # [B]
    wins_a = torch.cat([wins, torch.zeros_like(wins[:, :1])], dim=1)  # [B, A]
    return torch.where(can_win[:, None], wins_a, legal), can_win


def leaf_step(env: VecEnv, encoder: Encoder, state: State, action: Tensor) -> Leaf:
    """``action [B]`` played in ``state``: the new positions and all the search needs of them but the
    network's output (``encoder.tactics``: exact one-move tactics)."""
    nxt = env.step(state, action)
    reward, discount = outcome(state, nxt)
    legal = env.legal_mask(nxt)  # [B, A]
    both = encoder.tactics.winning_moves_both(nxt)  # [B, 2, H]
    encoded = encoder(nxt, legal, both)
    focus, can_win = winning_focus(both[:, 0], legal)  # the mover's winning holes
    return Leaf(nxt, reward, discount, legal, focus, can_win.to(torch.int8), encoded)


class _Exported(nn.Module):
    """``leaf_step`` on flat tensors (the state's fields, then the actions), as the export takes it."""

    def __init__(self, env: VecEnv, encoder: Encoder):
        super().__init__()
        self.env, self.encoder = env, encoder

    def forward(self, holes: Tensor, cells: Tensor, counts: Tensor, label: Tensor, reach: Tensor, to_move: Tensor,
                ply: Tensor, winner: Tensor, last: Tensor, streak: Tensor, action: Tensor) -> tuple[Tensor, ...]:
        state = State(holes, cells, counts, label, reach, to_move, ply, winner, last, streak)
        leaf = leaf_step(self.env, self.encoder, state, action)
        return (*(getattr(leaf.state, name) for name in FIELDS), leaf.reward, leaf.discount, leaf.legal, leaf.focus,
                leaf.proven, leaf.encoded.x, leaf.encoded.contact)


class NativeLeaf:
    """A loaded leaf package: ``(state, action) -> Leaf``, as ``leaf_step`` (the eager function above
    ``MAX_BATCH`` positions)."""

    def __init__(self, path: Path, key: str, build_seconds: float | None, env: VecEnv, encoder: Encoder):
        self.path, self.key, self.build_seconds = path, key, build_seconds
        self.env, self.encoder = env, encoder
        self._loader = torch._C._aoti.AOTIModelPackageLoader(str(path), "model", False, 1, -1)

    def __call__(self, state: State, action: Tensor) -> Leaf:
        if state.batch_size > MAX_BATCH:
            return leaf_step(self.env, self.encoder, state, action)
        out = self._loader.run([getattr(state, name).contiguous() for name in FIELDS] + [action.long().contiguous()])
        n = len(FIELDS)
        reward, discount, legal, focus, proven, x, contact = out[n:]
        return Leaf(State(*out[:n]), reward, discount, legal, focus, proven, Encoded(x=x, contact=contact))


def cache_key(env: VecEnv, encoder: Encoder) -> str:
    """A digest of what a leaf package depends on: the game, the code that is compiled, its tables
    (the board's), torch's version and the CPU."""
    h = hashlib.sha256(native.cpu_and_runtime())
    h.update(env.game.spec.encode())
    modules = {type(env).__module__, type(encoder).__module__, type(encoder.tactics).__module__, State.__module__,
               __name__, "conhex_zero.env.ops", "conhex_zero.env.symmetry", "conhex_zero.device.host_reads",
               "conhex_zero.env.connection"}
    for name in sorted(modules):
        h.update(inspect.getsource(sys.modules[name]).encode())
    connection = encoder.connection
    h.update(f"connection {None if connection is None else (connection.rounds, connection.scale)}".encode())
    for owner in (env, env.symmetries, encoder, encoder.tactics, *([connection] if connection is not None else [])):
        for name, value in sorted(vars(owner).items()):
            if isinstance(value, Tensor):
                h.update(f"{name} {tuple(value.shape)} {value.dtype}".encode())
                h.update(value.detach().cpu().contiguous().numpy().tobytes())
    return "leaf-" + h.hexdigest()[:24]


def _build(env: VecEnv, encoder: Encoder, target: Path) -> None:
    """Export ``leaf_step`` for ``env`` with a dynamic batch and compile it into ``target``."""
    sample = env.initial_state(4)
    args = (*(getattr(sample, name) for name in FIELDS), torch.zeros(4, dtype=torch.long))
    batch = torch.export.Dim("batch", min=1, max=MAX_BATCH)
    with warnings.catch_warnings(), torch.inference_mode(False), native.one_thread():
        warnings.simplefilter("ignore")
        # strict: the engine's tables (plain tensor attributes) become the program's constants
        program = torch.export.export(_Exported(env, encoder).eval(), args,
                                      dynamic_shapes=tuple({0: batch} for _ in args), strict=True)
        native.compile_package(program, target, {"cpp.simdlen": 1})


def native_leaf(env: VecEnv, encoder: Encoder, say: Callable[[str], None] | None = None, wait: bool = True):
    """The leaf package of ``env``'s game on the CPU, from the cache or built into it (saying so); None
    (with one line saying so) where it cannot be had: the caller runs ``leaf_step`` eagerly. Unless
    ``wait``, where background builds are on (``nn.native_background``), a missing package is built
    by a child process and its ``Pending`` handle is returned at once."""
    if env.device.type != "cpu":
        return None
    say = say or native._say
    try:
        key = cache_key(env, encoder)
    except Exception as err:  # a table or a module this cannot read: eager
        say(f"the native leaf step unavailable for {env.game.spec} ({native._reason(err)}); using the eager path")
        return None
    return native.cached_package(
        key, "the native leaf step", env.game.spec, "once per game and machine, about 25 s",
        lambda target: _build(env, encoder, target),
        lambda path, key, built: NativeLeaf(path, key, built, env, encoder), say,
        job=None if wait else {"kind": "leaf", "game": env.game.spec, "connection": encoder.connection is not None})


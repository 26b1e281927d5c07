"""Position evaluators: a batch of states in, prior logits ``[B, A]`` and values ``[B]`` out.

Values are for the player to move, in [-1, 1]. Three kinds: the network; uniform prior with
random rollouts (all leaves played out together through the batched engine: the classic
reference); uniform prior with value 0.
"""

from __future__ import annotations

import contextlib
import time
from typing import Callable, Protocol

import torch
from torch import Tensor

from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.nn import native, native_background
from conhex_zero.nn.encode import Encoded, Encoder
from conhex_zero.nn.model import GraphNet
from conhex_zero.search import rng
from conhex_zero.search.tree import NEG


class Evaluator(Protocol):
    def __call__(self, state: State) -> tuple[Tensor, Tensor]: ...


def position_keys(state: State, salt: int = 0) -> Tensor:
    """``[B]`` random keys that depend only on the position (and ``salt``), not on the batch."""
    H = state.holes.shape[1]
    weights = rng.hash32(torch.arange(H, device=state.device) * 0x3C6EF372 + 17) & 0xFFFFF  # < 2**20
    code = ((state.holes.long() + 2) * weights).sum(1) + state.ply * 0x1F3D5B79 + state.to_move
    return rng.fold(rng.hash32(code), salt)


class UniformEvaluator:
    """Uniform prior over legal actions, value 0."""

    def __init__(self, env: VecEnv):
        self.env = env

    def __call__(self, state: State) -> tuple[Tensor, Tensor]:
        B = state.batch_size
        return (torch.zeros(B, self.env.num_actions, device=state.device),
                torch.zeros(B, device=state.device))


class RolloutEvaluator:
    """Uniform prior; value = mean result of ``rollouts`` uniformly random playouts.

    Playouts follow a random priority per action, drawn from the position's own key, so the same
    position gets the same playout in any batch.
    """

    def __init__(self, env: VecEnv, rollouts: int = 1, seed: int = 0):
        self.env, self.rollouts, self.seed = env, rollouts, seed

    def __call__(self, state: State) -> tuple[Tensor, Tensor]:
        env = self.env
        B, A = state.batch_size, env.num_actions
        keys = position_keys(state, self.seed)
        total = torch.zeros(B, device=state.device)
        for r in range(self.rollouts):
            priority = rng.uniform(keys, r, A)  # [B, A]
            s = state
            for ply in range(env.game.max_plies):
                if ply % 4 == 0 and bool(s.done.all()):
                    break
                s = env.step(s, env.random_actions(s, uniforms=priority))
            total += torch.where(s.winner == state.to_move, 1.0, -1.0)
        return torch.zeros(B, A, device=state.device), total / self.rollouts


PRECISIONS = ("autocast", "bf16", "fp32")
"""How ``NetworkEvaluator`` computes: ``autocast`` (bf16 autocast on CUDA: matrix products in bf16,
norms and elementwise work in float32; float32 on a CPU), ``bf16`` (every tensor in bf16, norms
included: a bf16 copy of the weights, refreshed when training changes them, and the network's lean
inference path), ``fp32``."""


NATIVE_SLICE = 16
"""The native package evaluates at most this many positions a call (more are evaluated in slices):
its positions a second peak at 8-16 on a CPU and fall beyond, as the activations outgrow the core's
cache (``l4h64``: 5,548 a second at 16, 4,113 at 64; docs/speed.md). The one-position search's leaf
batches of up to 64 make 1.11 times the simulations a second evaluated in slices of 16."""


class NetworkEvaluator:
    """The graph network (bf16 autocast on CUDA); illegal actions get logit ``NEG``.

    ``compile=True`` runs the model through ``torch.compile`` (the shapes are fixed by the batch);
    the first call's time, compilation included, is kept in ``compile_seconds``. ``precision`` is
    one of ``PRECISIONS``. ``timer``, a context manager factory, wraps the model call alone
    (benchmarks time the network apart from the encoding). ``backend`` (``nn.native.BACKENDS``;
    ``None``: the process's default) ``auto`` or ``aoti`` runs a float32 CPU network through its
    AOTInductor package (``nn.native``: built once per model, then cached), or the eager model where
    that cannot be had; ``eager`` always runs the model itself. Training's self-play passes its
    config's ``selfplay.backend`` with ``live_weights``: the package is then one per network size and
    board (built once, whatever the weights), and ``refresh`` loads the model's weights into it
    whenever a training step changed them. ``native`` is the package in use (None: eager)."""

    def __init__(self, model: GraphNet, env: VecEnv, autocast: bool = True, compile: bool = False,
                 timer: Callable[[], contextlib.AbstractContextManager] | None = None, precision: str = "autocast",
                 max_batch: int | None = None, backend: str | None = "eager", label: str = "the network",
                 live_weights: bool = False):
        if precision not in PRECISIONS:
            raise ValueError(f"precision {precision!r}: one of {', '.join(PRECISIONS)}")
        self.model = model.to(env.device).eval()
        self.env = env
        self.encoder = Encoder(env, connection=model.config.connection)
        self.precision = precision
        self.autocast = autocast and env.device.type == "cuda" and precision == "autocast"
        self.native: native.NativeNetwork | None = None
        self.pending = None
        """The native package's background build (``nn.native_background.Pending``) while the
        evaluator runs eager; ``upgrade`` switches to the package once it is built."""
        self.wants_native = native.wants_native(backend, env.device) and precision != "bf16" and not compile
        self.wait_for_build = (backend if backend is not None else native.default_backend()) == "aoti"
        """``--backend aoti`` asked for the package: it is built before the first call, as asked."""
        if self.wants_native:
            sample = self.encoder(env.initial_state(2))
            game = None if self.wait_for_build or live_weights else env.game.spec
            package = native.native_network(self.model, self.encoder.graph, sample, label, loadable=live_weights,
                                            game=game)
            if isinstance(package, native_background.Pending):
                self.pending = package
            else:
                self.native = package
        self.live_weights = live_weights and self.native is not None
        run = self._bf16 if precision == "bf16" else (self.native or self.model)
        self.forward = torch.compile(run) if compile else run
        self.compile_seconds: float | None = None if compile else 0.0
        """The first call's seconds when compiled (None until it has run), else 0."""
        self.timer = timer
        self.max_batch = max_batch
        """Evaluate at most this many positions a network call (None: all at once). On a CPU the
        network's products run fastest on a few dozen positions: the book's batched searches of 100+
        positions evaluate them in slices of 32 (``book.grow``; benchmarks/bench_book.py). The native
        package takes at most ``NATIVE_SLICE`` a call whatever this says."""
        self.evaluated = 0  # positions evaluated so far (benchmarks read it)
        self._weights: dict[str, Tensor] | None = None  # bf16: the weights' copy (``refresh``)
        self._versions: tuple[int, ...] = ()
        self._live = [*self.model.parameters(), *self.model.buffers()] if self.live_weights else []
        if self.live_weights:
            self._versions = self._weight_versions()

    def upgrade(self) -> bool:
        """At a caller's safe point (a player's move): switch to the native package if its background
        build is done. True when it switched."""
        if self.pending is None:
            return False
        package = self.pending.poll()
        if package is None:
            return False
        self.pending = None
        if package is native_background.FAILED:  # eager for good
            return False
        self.native = package
        self.forward = package
        return True

    def _weight_versions(self) -> tuple[int, ...]:
        """Changes in place (an optimiser step, ``load_state_dict``) move a tensor's version."""
        return tuple(t._version for t in self._live)

    def refresh(self) -> None:
        """With ``precision="bf16"``: make the bf16 copy of the weights follow the model's float32
        weights (copied in place when a training step changed them, so a compiled function or a
        captured CUDA graph keeps reading the same tensors). Every call does it; self-play calls it
        before a phase whose searches may replay CUDA graphs (no Python runs in a replay). With
        ``live_weights``: load the model's weights into the native package when they changed."""
        if self.live_weights:
            versions = self._weight_versions()
            if versions != self._versions:
                self.native.load_weights(self.model)
                self._versions = versions
            return
        if self.precision != "bf16":
            return
        params = dict(self.model.named_parameters())
        versions = tuple(p._version for p in params.values())
        if self._weights is None:
            self._weights = {n: p.detach().to(torch.bfloat16) for n, p in params.items()}
        elif versions != self._versions:
            with torch.no_grad():
                for n, p in params.items():
                    self._weights[n].copy_(p)
        self._versions = versions

    def _bf16(self, encoded, graph) -> tuple[Tensor, Tensor, Tensor]:
        """The model with its bf16 copy of the weights (the trained weights stay float32)."""
        return torch.func.functional_call(self.model, self._weights, (encoded, graph))

    def __call__(self, state: State, legal: Tensor | None = None, wins: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """``legal`` ``[B, A]`` and ``wins`` ``[B, 2, H]`` (``Tactics.winning_moves_both``): the
        search passes what it computed already, so the rules run once per position."""
        step = self.max_batch
        if step is not None and state.batch_size > step:
            parts = [self(state[i:i + step], None if legal is None else legal[i:i + step],
                          None if wins is None else wins[i:i + step]) for i in range(0, state.batch_size, step)]
            return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])
        legal = self.env.legal_mask(state) if legal is None else legal
        return self.network(self.encoder(state, legal, wins), legal)

    def network(self, encoded: Encoded, legal: Tensor) -> tuple[Tensor, Tensor]:
        """The network on encoded positions (``Encoder``'s output) with their legal masks ``[B, A]``:
        logits ``[B, A]`` (``NEG`` at illegal actions) and values ``[B]``."""
        B = legal.shape[0]
        step = self.max_batch
        if self.native is not None:
            step = min(step or NATIVE_SLICE, NATIVE_SLICE)
        if step is not None and B > step:
            parts = [self.network(Encoded(x=encoded.x[i:i + step], contact=encoded.contact[i:i + step]),
                                  legal[i:i + step]) for i in range(0, B, step)]
            return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])
        # No autocast cache: a cast weight cached across calls would outlive a CUDA graph's capture.
        ctx = (torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False) if self.autocast
               else contextlib.nullcontext())
        self.evaluated += B
        if not torch.compiler.is_compiling():
            self.refresh()
        first = self.compile_seconds is None and not torch.compiler.is_compiling()
        start = time.perf_counter() if first else 0.0
        with torch.no_grad(), ctx, (self.timer() if self.timer else contextlib.nullcontext()):
            logits, value, _ = self.forward(encoded, self.encoder.graph)
        if first:
            self.compile_seconds = time.perf_counter() - start
        return torch.where(legal, logits.float(), NEG), value.float()

"""The network's inference in native kernels for the CPU's searches: AOTInductor, cached by model.

A search at the board evaluates 1-64 positions a call, where eager PyTorch runs the network as
dozens of small kernels (a layer norm or a GELU costs several times a plain copy). AOTInductor
(``torch.export`` + ``torch._inductor.aoti_compile_and_package``, in torch itself) compiles the
network's inference once into a shared library with fused loops: 1.4-4.5 times eager's positions a
second at 1-64 positions on a CPU (docs/speed.md; ``benchmarks/bench_native.py``). ONNX Runtime was
measured too and loses from 16 positions up.

* **What is compiled**: the model's own inference path (``Block.infer_``) on the graph's neighbour
  lists (``Graph.lists``), which become constants of the library, for any batch size; inputs ``x [B, N, F]`` and
  ``contact [B, C, 4]`` (what ``Encoder`` makes), outputs the policy logits ``[B, A]`` and the value
  ``[B]`` (ownership is not computed: no search reads it). Compiled with one thread (a search
  evaluates a few dozen positions, too few to share) and for this machine's CPU (``-march=native``).
* **The cache**: one package per model, board graph, torch version and CPU (``cache_key``), in
  ``$CONHEX_ZERO_CACHE`` or ``~/.cache/conhex-zero/native``. The first use builds it (15-25 s for
  ``l4h64``, said on stderr with the time taken); every later use, in any process, loads it in a few
  milliseconds through torch's C++ loader (``torch._inductor.aoti_load_package`` would first spend
  2-3 s checking the CPU's vector instructions). Written to a temporary name and renamed, under a
  lock, so a killed build or two processes at once never leave a broken package.
* **Training's self-play** (``loadable``): a package that keeps the weights as named constants, one
  per network size, board, torch and CPU, into which ``NativeNetwork.load_weights`` copies the
  weights of each iteration (``NetworkEvaluator(live_weights=True)``; ``selfplay.backend``).
* **Backends** (``BACKENDS``): ``eager`` (the reference and the fallback), ``aoti``, and ``auto``, the
  default: ``aoti`` on a CPU, eager elsewhere (the GPU has its own path: CUDA graphs, bf16). Where
  the package cannot be built or loaded (no C++ compiler, an export that fails, another platform),
  the caller gets ``None`` and one line on stderr says that the eager path is used.
  ``CONHEX_ZERO_BACKEND`` sets the process's default (the test suite sets ``eager``).
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
import platform
import sys
import time
import warnings
from pathlib import Path
from typing import Callable, Iterator

import torch
from torch import Tensor, nn

from conhex_zero.nn.encode import Encoded, Graph
from conhex_zero.nn.model_names import BACKENDS
from conhex_zero.nn.native_cache import (BUILD_ENV, CACHE_ENV, _locked, _reason, build_in_progress,  # noqa: F401
                                         build_into_cache, cache_dir, compiler_identity, drop_unsealed, failure,
                                         record_failures, typical_build)

BACKEND_ENV = "CONHEX_ZERO_BACKEND"
FORMAT = 1
"""Bumped when what is compiled changes in a way the sources hashed by ``cache_key`` do not show."""
MAX_BATCH = 4096
"""The largest batch a package takes (a search calls it with at most a few hundred positions)."""

_default: str | None = None
_build_allowed = True  # False inside ``cached_only()``
_loaded: dict[str, "NativeNetwork"] = {}  # this process's packages, by key
_failed: dict[str, str] = {}  # keys whose build or load failed here, with the reason


def default_backend() -> str:
    """The process's backend: ``set_default_backend``'s, else ``$CONHEX_ZERO_BACKEND``, else ``auto``."""
    if _default is not None:
        return _default
    value = os.environ.get(BACKEND_ENV, "auto").strip().lower() or "auto"
    return value if value in BACKENDS else "auto"


def set_default_backend(backend: str | None) -> None:
    """Set the process's default backend (``--backend``); ``None`` goes back to the environment's."""
    global _default
    if backend is not None and backend not in BACKENDS:
        raise ValueError(f"backend {backend!r}: one of {', '.join(BACKENDS)}")
    _default = backend


def wants_native(backend: str | None, device: torch.device) -> bool:
    """Whether ``backend`` (``None``: the default) asks for the native path on ``device``."""
    backend = default_backend() if backend is None else backend
    return backend != "eager" and device.type == "cpu"


@contextlib.contextmanager
def cached_only() -> Iterator[None]:
    """Inside the block a package is loaded from the cache but never built: a model not built yet runs
    eager (one line says so). For a GTP ``boardsize`` that switches games: a controller gives each
    command seconds, not a build's 20."""
    global _build_allowed
    before, _build_allowed = _build_allowed, False
    try:
        yield
    finally:
        _build_allowed = before


def _cpu_identity() -> str:
    """What the compiled code depends on: the machine, its CPU's model and instruction sets."""
    parts = [platform.system(), platform.machine(), platform.processor()]
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("model name", "flags", "Features")):
                parts.append(line)
            if line.strip() == "":
                break  # the first processor's lines are enough
    return "\n".join(parts)


def cache_key(model: nn.Module, graph: Graph, loadable: bool = False) -> str:
    """A digest of everything a package depends on: weights, sizes, the board's graph, the code that
    is compiled, torch's version and the CPU. Any change gives another package. ``loadable``: the
    package of a model whose weights are loaded at run time (``native_network``): its key holds the
    weights' names and shapes, not their values."""
    h = hashlib.sha256()
    h.update(cpu_and_runtime())
    for module in (sys.modules[type(model).__module__], sys.modules[Graph.__module__], sys.modules[__name__]):
        h.update(inspect.getsource(module).encode())
    h.update(b"loadable weights" if loadable else b"frozen weights")
    h.update(repr(getattr(model, "config", None)).encode())  # the options (repeat) that no weight shows
    for name, tensor in model.state_dict().items():
        h.update(f"{name} {tuple(tensor.shape)} {tensor.dtype}".encode())
        if not loadable:
            h.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    for block in (graph.from_cells, graph.cells_from_holes, graph.cells_from_sides):
        h.update(str(tuple(block.shape)).encode())
        h.update(block.detach().cpu().contiguous().numpy().tobytes())
    h.update(f"{graph.num_types} {graph.num_holes} {graph.num_cells}".encode())
    return h.hexdigest()[:24]


class _Inference(nn.Module):
    """``(x [B, N, F], contact [B, C, 4]) -> (logits [B, A], value [B])``: the model's inference
    (``Block.infer_``, under ``no_grad``) with the graph's blocks and neighbour lists as buffers."""

    def __init__(self, model: nn.Module, graph: Graph):
        super().__init__()
        self.model = model
        self.register_buffer("from_cells", graph.from_cells.detach().cpu().clone())
        self.register_buffer("cells_from_holes", graph.cells_from_holes.detach().cpu().clone())
        self.register_buffer("cells_from_sides", graph.cells_from_sides.detach().cpu().clone())
        self.sizes = (graph.num_types, graph.num_holes, graph.num_cells)
        lists = Graph(self.from_cells, self.cells_from_holes, self.cells_from_sides, *self.sizes).with_lists().lists
        for k, (index, weight) in enumerate(lists):
            self.register_buffer(f"index{k}", index)
            self.register_buffer(f"weight{k}", weight)

    def forward(self, x: Tensor, contact: Tensor) -> tuple[Tensor, Tensor]:
        lists = ((self.index0, self.weight0), (self.index1, self.weight1), (self.index2, self.weight2))
        graph = Graph(self.from_cells, self.cells_from_holes, self.cells_from_sides, *self.sizes, None, lists)
        with torch.no_grad():
            logits, value, _ = self.model(Encoded(x=x, contact=contact), graph)
        return logits, value


class NativeNetwork:
    """A loaded package: ``(encoded, graph) -> (logits [B, A], value [B], None)``, as the model's
    own call returns (no ownership)."""

    def __init__(self, path: Path, key: str, build_seconds: float | None):
        self.path, self.key = path, key
        self.build_seconds = build_seconds
        """Seconds this process spent building the package (None: it was in the cache)."""
        # torch's C++ loader: no Python-side check of the CPU (the package was built for this one).
        self._loader = torch._C._aoti.AOTIModelPackageLoader(str(path), "model", False, 1, -1)
        self._names: set[str] | None = None  # the package's constants (``load_weights``)

    def load_weights(self, model: nn.Module) -> None:
        """Copy ``model``'s present weights into a loadable package (``native_network(loadable=True)``);
        the package keeps its own copy, so later changes to the model need another call."""
        weights = {f"model.{name}": tensor.detach().float().contiguous() for name, tensor in model.state_dict().items()}
        if self._names is None:
            self._names = set(self._loader.get_constant_fqns())
        missing = sorted(set(weights) - self._names)
        if missing:
            raise ValueError(f"the package has no constant for {', '.join(missing[:3])}")
        # Flags: into the active buffer; no check that every constant is given (the graph's own, its
        # neighbour lists, stay as built); copied, not user-managed.
        self._loader.load_constants(weights, False, False, False)

    def __call__(self, encoded: Encoded, graph: Graph) -> tuple[Tensor, Tensor, None]:
        logits, value = self._loader.run([encoded.x.contiguous(), encoded.contact.contiguous()])
        return logits, value, None


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _build(model: nn.Module, graph: Graph, sample: Encoded, target: Path, loadable: bool = False) -> None:
    """Export and compile the inference of ``model`` into the package ``target`` (atomically)."""
    wrapper = _Inference(model, graph).eval()
    batch = torch.export.Dim("batch", min=1, max=MAX_BATCH)
    with warnings.catch_warnings(), torch.inference_mode(False), one_thread():
        warnings.simplefilter("ignore")
        program = torch.export.export(wrapper, (sample.x, sample.contact),
                                      dynamic_shapes={"x": {0: batch}, "contact": {0: batch}}, strict=False)
        # freezing: the weights are folded into the library as constants (it is one model's). A
        # loadable package keeps every weight a named constant instead, one-element biases included
        # (Inductor would otherwise inline those), so that ``load_weights`` can replace them all; it
        # runs as fast (measured: 1 and 16 positions within 2-10%, either way).
        configs = {"freezing": False, "always_keep_tensor_constants": True} if loadable else {"freezing": True}
        compile_package(program, target, configs)


def _say(message: str) -> None:
    print(f"conhex-zero: {message}", file=sys.stderr, flush=True)


def native_network(model: nn.Module, graph: Graph, sample: Encoded, label: str = "the network",
                   say: Callable[[str], None] = _say, loadable: bool = False, game: str | None = None):
    """The package of ``model``'s inference on ``graph``, from the cache or built into it (saying so,
    with the time taken); ``None``, with one line saying that the eager path is used, where it
    cannot be built or loaded. ``sample``: a few encoded positions of the game (for the export).

    ``loadable``: for a model whose weights change (training's self-play): one package per network
    size and board, whatever the weights, which this call loads into a package of its own (never
    shared with another caller in the process) and ``NativeNetwork.load_weights`` updates.

    ``game`` (the spec of ``graph``'s game): where background builds are on, a missing package of a
    fixed model is built by a child process and a ``native_background.Pending`` is returned at once."""
    try:
        key = cache_key(model, graph, loadable)
    except Exception as err:  # a model this module cannot hash (not a GraphNet): eager
        say(f"native inference unavailable for {label} ({_reason(err)}); using the eager path")
        return None
    once = "once per network size, board and machine" if loadable else "once per model and machine"
    job = None
    if game is not None and not loadable:
        config = getattr(model, "config", None)
        job = {"kind": "network", "game": game, "model": dict(vars(config)) if config is not None else {},
               "weights": {k: v.detach().cpu() for k, v in model.state_dict().items()}}
    package = cached_package(key, "native inference", label, f"{once}, about 20 s",
                             lambda target: _build(model, graph, sample, target, loadable), NativeNetwork, say,
                             shared=not loadable, job=job)
    if isinstance(package, NativeNetwork) and loadable:
        try:
            package.load_weights(model)
        except Exception as err:  # a package whose constants are not the model's: eager
            _failed[key] = _reason(err)
            say(f"native inference unavailable for {label} ({_failed[key]}); using the eager path")
            return None
    return package


def cached_package(key: str, what: str, subject: str, once: str, build: Callable[[Path], None],
                   load: Callable[[Path, str, float | None], object], say: Callable[[str], None] = _say,
                   shared: bool = True, job: dict | None = None):
    """The package ``key`` loaded by ``load(path, key, build_seconds)``: from the cache, or built
    there first by ``build(path)`` (saying so, with the time taken: ``what`` for ``subject`` is
    built ``once``). A damaged package in the cache is built again once. ``None``, with one line
    saying that the eager path is used, where it cannot be built or loaded (no C++ compiler, an
    export that fails; a build that failed before with the same compiler, ``failure``), or inside
    ``cached_only()`` when it is not built yet. One load per process and key where ``shared``;
    otherwise a load of its own for every call (a package whose weights its caller replaces).

    ``job`` (what a child process needs to build it, ``native_background``): where background
    builds are on (the CLI's commands) and the package is not in the cache, a ``Pending`` handle is
    returned at once and a low-priority child builds it; the caller runs eager meanwhile."""
    if shared and key in _loaded:
        return _loaded[key]
    if key in _failed:
        return None
    folder = cache_dir()
    target = folder / f"{key}.pt2"
    drop_unsealed(key, target, say, what, subject)  # a package is run only as it was built
    before = failure(key)
    if before is not None and not target.exists():
        _failed[key] = before.get("reason", "the build failed")
        say(f"{what} unavailable for {subject} (its build failed on this machine with this compiler: {_failed[key]}; "
            f"a new compiler, or deleting {folder / (key + '.failed.json')}, tries again); using the eager path")
        return None
    if job is not None and not target.exists() and _build_allowed:
        from conhex_zero.nn import native_background

        if native_background.enabled():
            return native_background.start(key, job, load, what, subject, say,
                                           on_loaded=_loaded.__setitem__ if shared else None,
                                           on_failed=_failed.__setitem__)
    for attempt in range(2):
        built: float | None = None
        try:
            folder.mkdir(parents=True, exist_ok=True)
            if not _build_allowed and not target.exists():
                say(f"{what} for {subject} is not built yet on this board; using the eager path "
                    f"(a command's start with this game builds it)")
                return None
            with _locked(folder / f"{key}.lock"):
                if not target.exists():
                    say(f"building {what} for {subject} ({once}; cached in {folder})")
                    started = time.perf_counter()
                    record_failures(key, build, target)
                    built = time.perf_counter() - started
                    say(f"built {what} for {subject} in {built:.1f} s")
            package = load(target, key, built)
            break
        except Exception as err:  # no compiler, an export or a load that fails: the eager path
            if attempt == 0 and built is None and target.exists():
                with contextlib.suppress(OSError):  # a damaged package in the cache: built again once
                    target.unlink()
                continue
            _failed[key] = _reason(err)
            say(f"{what} unavailable for {subject} ({_failed[key]}); using the eager path")
            return None
    if shared:
        _loaded[key] = package
    return package


def cpu_and_runtime() -> bytes:
    """What every package depends on besides its own inputs: the format, torch's and Python's
    versions and the CPU (``cache_key`` and the leaf package's key start with it)."""
    return f"{FORMAT} {torch.__version__} {sys.version_info[:2]}\n{_cpu_identity()}".encode()


def compile_package(program: torch.export.ExportedProgram, target: Path, configs: dict) -> None:
    """Compile ``program`` into the package ``target``, atomically (a temporary name, then renamed)."""
    partial = target.with_name(f"{target.stem}.{os.getpid()}.partial.pt2")
    try:
        torch._inductor.aoti_compile_and_package(program, package_path=str(partial), inductor_configs=configs)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)

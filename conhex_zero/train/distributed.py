"""Data-parallel training over several processes and hosts, launched by ``torchrun``.

``torchrun --nproc-per-node K train.py --config ...`` starts K copies of the same training loop
(``loop.py``; there is no second loop). Each process (rank) plays its own self-play games on its
own device with its own seed derived from the run's seed, keeps its own replay shard, and trains
the same network wrapped in ``DistributedDataParallel``: gradients are averaged over the ranks at
every step, so every rank holds the same weights. Rank 0 alone writes logs, checkpoints and the
ladder, and evaluates while the others wait.

The process group is set up from torchrun's environment (``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``): backend ``nccl`` when training on CUDA (rank r
uses ``cuda:LOCAL_RANK``), ``gloo`` on CPU. Without torchrun (or with one process) there is no
process group at all and every helper here is a no-op, so single-process training is unchanged,
bit for bit.

Two timeouts keep a broken job from hanging forever (config section ``dist``):
``timeout_s`` bounds joining the job and every collective inside a training step (DDP's gradient
all-reduce); ``wait_timeout_s`` bounds the waits at phase boundaries (for the slowest rank's
self-play, for rank 0's evaluation and checkpoint), which run over a separate CPU (gloo) group.
A rank that dies closes its connections, so the others fail at once; torchrun then stops the job
with a non-zero exit status.
"""

from __future__ import annotations

import datetime
import hashlib
import os
from dataclasses import dataclass, fields, replace
from typing import Any

import torch
import torch.distributed as dist
from torch import nn


def env_world_size() -> int:
    """The world size torchrun announced (1 when not launched by torchrun)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def env_rank() -> int:
    return int(os.environ.get("RANK", "0"))


def launched() -> bool:
    """Whether this process is one of several started by torchrun."""
    return env_world_size() > 1


@dataclass
class Context:
    """This process's place in the job; with ``world_size == 1`` every collective is a no-op."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    device: torch.device = torch.device("cpu")
    backend: str | None = None
    wait_timeout_s: float = 3600.0
    wait_group: Any = None

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    # -------------------------------------------------------- collectives
    # All of them run over the CPU (gloo) group with the long timeout: they are the phase
    # boundaries where a rank may legitimately wait for a slower one.
    def _wait(self, what: str, fn, *args, **kwargs):
        try:
            return fn(*args, group=self.wait_group, **kwargs)
        except RuntimeError as err:  # torch's DistBackendError and gloo's timeouts are RuntimeErrors
            raise RuntimeError(f"rank {self.rank} of {self.world_size}: {what} failed: another rank died, or did not "
                               f"arrive within dist.wait_timeout_s={self.wait_timeout_s:g} s ({err})") from err

    def barrier(self, what: str = "barrier") -> None:
        """Wait for every rank; after ``wait_timeout_s`` fail naming the ranks that never came."""
        if self.enabled:
            self._wait(what, dist.monitored_barrier, timeout=datetime.timedelta(seconds=self.wait_timeout_s),
                       wait_all_ranks=True)

    def all_gather_object(self, obj: Any, what: str = "all_gather") -> list[Any]:
        """Every rank's ``obj`` (picklable), in rank order."""
        if not self.enabled:
            return [obj]
        out: list[Any] = [None] * self.world_size
        self._wait(what, dist.all_gather_object, out, obj)
        return out

    def broadcast_object(self, obj: Any, src: int = 0, what: str = "broadcast") -> Any:
        """Rank ``src``'s ``obj`` on every rank."""
        if not self.enabled:
            return obj
        box = [obj]
        self._wait(what, dist.broadcast_object_list, box, src=src)
        return box[0]


_context: Context | None = None


def initialized() -> bool:
    return _context is not None and _context.enabled and dist.is_initialized()


def device_for(device: str, local_rank: int, world_size: int) -> torch.device:
    """The device of a rank: ``cuda`` (or ``cuda:N``) becomes ``cuda:LOCAL_RANK`` when several
    processes share a host; ``cpu`` stays ``cpu``."""
    d = torch.device(device)
    if d.type == "cuda" and world_size > 1:
        return torch.device("cuda", local_rank)
    return d


def setup(device: str, timeout_s: float = 300.0, wait_timeout_s: float = 3600.0) -> Context:
    """Join the job torchrun started (idempotent); without torchrun, a one-process context."""
    global _context
    if initialized():
        return _context
    if not launched():
        return Context(device=torch.device(device), wait_timeout_s=wait_timeout_s)
    rank, world, local = env_rank(), env_world_size(), int(os.environ.get("LOCAL_RANK", "0"))
    dev = device_for(device, local, world)
    backend = "nccl" if dev.type == "cuda" else "gloo"
    if dev.type == "cuda":
        torch.cuda.set_device(dev)
    dist.init_process_group(backend, timeout=datetime.timedelta(seconds=timeout_s))
    # Phase-boundary waits and small metadata go over gloo on the CPU with their own timeout.
    wait_group = dist.new_group(backend="gloo", timeout=datetime.timedelta(seconds=wait_timeout_s))
    _context = Context(rank, world, local, dev, backend, wait_timeout_s, wait_group)
    return _context


def teardown() -> None:
    """Leave the process group (after the last collective)."""
    global _context
    if _context is not None and dist.is_initialized():
        dist.destroy_process_group()
    _context = None


def wrap(model: nn.Module, ctx: Context) -> nn.Module:
    """``model`` for training: as is in one process, under ``DistributedDataParallel`` otherwise.

    The model already lives on the rank's device (``device_ids=None`` is DDP's single-device form,
    for CPU and CUDA alike); every parameter takes part in every loss.
    """
    if not ctx.enabled:
        return model
    from torch.nn.parallel import DistributedDataParallel

    return DistributedDataParallel(model, device_ids=None)


def rank_seed(seed: int, rank: int, *salt: int) -> int:
    """A seed for ``rank`` derived from the run's root seed: rank 0 (without salt) keeps the
    root seed itself, so one process trains exactly as before; other ranks and salted seeds
    (e.g. fresh games after a resume on more ranks) get well-mixed, distinct 31-bit values."""
    if rank == 0 and not salt:
        return seed
    text = ":".join(str(x) for x in (seed, rank, *salt))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little") & 0x7FFFFFFF


def weights_digest(model: nn.Module) -> str:
    """A SHA-256 of the model's weights (names, shapes, dtypes and bytes): equal on every rank."""
    h = hashlib.sha256()
    for name, t in model.state_dict().items():
        t = t.detach().to("cpu").contiguous()
        h.update(f"{name}:{tuple(t.shape)}:{t.dtype};".encode())
        h.update(t.view(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def merge_stats(parts: list, maximum: tuple[str, ...] = ("seconds",)):
    """Merge per-rank counters (a dataclass of numbers and lists of numbers): sums, element-wise
    for lists; the fields named in ``maximum`` (wall time of a phase) take the largest value."""
    first = parts[0]
    merged = {}
    for f in fields(first):
        values = [getattr(p, f.name) for p in parts]
        if f.name in maximum:
            merged[f.name] = max(values)
        elif isinstance(values[0], list):
            merged[f.name] = [sum(col) for col in zip(*values)]
        else:
            merged[f.name] = sum(values)
    return replace(first, **merged)

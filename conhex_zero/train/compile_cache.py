"""The compiled kernels of a line's self-play network, kept between pieces (``LINE/compile-cache.bin``).

A lent machine starts bare, so each piece would compile its network again (``selfplay.compile``):
the first self-play step traces the model and builds its kernels, tens of seconds of a ten-minute
command. torch's portable cache (``torch.compiler.save_cache_artifacts`` and
``load_cache_artifacts``) packs what the compiler built into bytes; a piece loads them before it
compiles and saves them after, so the next piece on the same kind of machine skips most of the
work (tracing still runs). The file is one JSON header line, then the bytes::

    {"format": "conhex-zero compile cache", "torch": "2.11.0+cu130", "device": "NVIDIA H200",
     "bytes": 1234567, "sha256": "..."}

It is used only by the same torch version on the same device name, and only when its digest
matches; anything else is ignored with a note (the piece then compiles as usual).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable

from conhex_zero.files.disk import write_bytes_atomic

FILENAME = "compile-cache.bin"
FORMAT = "conhex-zero compile cache"
MAX_BYTES = 12 << 20
"""A cache larger than this is not kept (a lent machine sends back files of at most 16 MiB)."""


def _header(data: bytes) -> tuple[dict, bytes] | None:
    newline = data.find(b"\n")
    if newline < 0 or newline > 4096:
        return None
    try:
        header = json.loads(data[:newline].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return (header, data[newline + 1:]) if isinstance(header, dict) else None


def load(path: Path, device: str, note: Callable[[str], None]) -> bool:
    """Load the cache at ``path`` into torch's compiler when it was made by this torch on this
    ``device`` (its name); True when loaded."""
    import torch

    if not path.is_file():
        return False
    parsed = _header(path.read_bytes())
    if parsed is None or parsed[0].get("format") != FORMAT:
        note(f"note: {path} is not a compile cache; the network compiles anew")
        return False
    header, blob = parsed
    if header.get("torch") != torch.__version__ or header.get("device") != device:
        note(f"note: {path} was made by torch {header.get('torch')} on {header.get('device')}; this piece runs "
             f"torch {torch.__version__} on {device} and compiles anew")
        return False
    if len(blob) != header.get("bytes") or hashlib.sha256(blob).hexdigest() != header.get("sha256"):
        note(f"note: {path} is damaged (its digest differs); the network compiles anew")
        return False
    try:
        torch.compiler.load_cache_artifacts(blob)
    except Exception as err:  # noqa: BLE001 - a cache torch cannot read is only a lost saving
        note(f"note: torch could not load {path} ({type(err).__name__}); the network compiles anew")
        return False
    return True


def save(path: Path, device: str) -> int:
    """Write what the compiler built in this process to ``path``; the bytes written (0: nothing to
    keep, or more than ``MAX_BYTES``)."""
    import torch

    artifacts = torch.compiler.save_cache_artifacts()
    if not artifacts or not artifacts[0] or len(artifacts[0]) > MAX_BYTES:
        return 0
    blob = artifacts[0]
    header = {"format": FORMAT, "torch": torch.__version__, "device": device, "bytes": len(blob),
              "sha256": hashlib.sha256(blob).hexdigest()}
    write_bytes_atomic(path, json.dumps(header).encode("utf-8") + b"\n" + blob)
    return len(blob)

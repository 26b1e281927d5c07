"""A checksum sealed into every file we write with ``torch.save``: checkpoints and training states.

``torch.save`` writes a zip archive, and torch does not check the archive's CRCs when it reads one:
bytes flipped in the stored tensors load silently as other numbers. So a sealed file carries the
SHA-256 of all its bytes but the checksum itself, as the archive's comment (the comment field of the
zip's end record, which every zip reader, ``torch.load`` included, accepts and skips)::

    ...torch's archive...  end record (comment length 83)  conhex-zero-sha256:<64 hex digits>

``seal(path)`` appends the comment to a file ``torch.save`` wrote; ``verify(path)`` checks it and
says whether the file was sealed. Any change of any byte is detected: in the archive or the end
record the digest differs; in the comment, the digest no longer matches or the comment no longer
reads as a seal while the end record before it is still there; a file cut short, or with bytes
appended, no longer ends in the seal its end record announces. Files that end as ``torch.save``
leaves them (an end record without comment) are unsealed: written before seals existed (the
shipped checkpoints), or by hand; they are read unverified.
"""

from __future__ import annotations

import builtins
import collections
import hashlib
import io
import os
import pickle
import struct
import zipfile
from pathlib import Path
from typing import Any

MAGIC = b"conhex-zero-sha256:"
SEAL_LENGTH = len(MAGIC) + 64
_END_RECORD = b"PK\x05\x06"
_END_RECORD_LENGTH = 22
_CHUNK = 1 << 20
_SLACK = 4096  # bytes appended after a seal that are still looked through for the end record


class SealError(ValueError):
    """A sealed file's bytes differ from those it was written with; the message names the file."""


def _digest(f, length: int) -> str:
    """SHA-256 of the first ``length`` bytes of the open file ``f``."""
    h = hashlib.sha256()
    f.seek(0)
    left = length
    while left > 0:
        chunk = f.read(min(_CHUNK, left))
        if not chunk:
            break
        h.update(chunk)
        left -= len(chunk)
    return h.hexdigest()


def seal(path: str | Path) -> None:
    """Append the seal to the zip archive ``torch.save`` wrote at ``path`` (and flush it to disk)."""
    with open(path, "r+b") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(size - _END_RECORD_LENGTH)
        end = f.read(_END_RECORD_LENGTH)
        if size < _END_RECORD_LENGTH or end[:4] != _END_RECORD or end[-2:] != b"\x00\x00":
            raise ValueError(f"{path}: not a zip archive without a comment, as torch.save writes them")
        f.seek(size - 2)
        f.write(struct.pack("<H", SEAL_LENGTH))
        f.flush()
        digest = _digest(f, size)
        f.seek(size)
        f.write(MAGIC + digest.encode("ascii"))
        f.flush()
        os.fsync(f.fileno())


def verify(path: str | Path) -> bool:
    """True when ``path`` is sealed and intact; False when it has no seal (it ends as ``torch.save``
    leaves a file, or is no zip archive at all: reading it will tell); ``SealError`` when its seal
    does not match its bytes, or is itself damaged or cut."""
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - SEAL_LENGTH - _END_RECORD_LENGTH - _SLACK))
        end = f.read()
        k = end.rfind(_END_RECORD)
        if k < 0:
            return False
        record, after = end[k:k + _END_RECORD_LENGTH], end[k + _END_RECORD_LENGTH:]
        if len(record) < _END_RECORD_LENGTH:
            raise SealError(f"{path} is damaged: the file was cut short")
        comment = struct.unpack("<H", record[-2:])[0]
        if comment == 0 and not after:
            return False
        if comment != SEAL_LENGTH or len(after) != SEAL_LENGTH or not after.startswith(MAGIC):
            raise SealError(f"{path} is damaged: its checksum is unreadable or cut short")
        if _digest(f, size - SEAL_LENGTH).encode("ascii") != after[len(MAGIC):]:
            raise SealError(f"{path} is damaged: its checksum does not match its content (bytes changed "
                            f"since it was written: a disk or copy error?)")
    return True


def save(data: dict[str, Any], path: str | Path) -> Path:
    """Write ``data`` with ``torch.save`` to ``PATH.tmp``, seal it, rename it over ``path``:
    a crash or a full disk (``disk.DiskFullError``) leaves ``path`` as it was and no ``.tmp`` behind."""
    import torch

    from conhex_zero.files.disk import writing

    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with writing(path):  # judges a full disk before the partial file is deleted
            torch.save(data, tmp)
            seal(tmp)
            os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def load(path: str | Path, mmap: bool = False) -> Any:
    """``torch.load(weights_only=True)`` of a file, its seal verified first (``SealError``); torch's
    warnings about foreign files are not shown, its exceptions pass through for the caller to word."""
    import warnings

    import torch

    verify(path)
    with warnings.catch_warnings():  # e.g. a refused pickle's advice, or foreign pickle protocols
        warnings.simplefilter("ignore")
        return torch.load(path, map_location="cpu", weights_only=True, **({"mmap": True} if mmap else {}))


class _Ignored:
    """Stands for anything torch would build (a tensor, a storage, a dtype): ``peek`` keeps none."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return None

    def __setstate__(self, state):
        pass


class _PlainUnpickler(pickle.Unpickler):
    """Reads a torch file's pickle without torch: plain data as it is, every tensor as None, and
    nothing that could run code (only torch's own names and plain containers are resolved)."""

    def find_class(self, module: str, name: str):
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        if module == "builtins" and name in ("set", "frozenset", "tuple", "list", "dict", "slice"):
            return getattr(builtins, name)
        if module.split(".")[0] == "torch":
            return _Ignored
        raise pickle.UnpicklingError(f"{module}.{name} is not plain data")

    def persistent_load(self, pid):
        return None


def peek(path: str | Path, keys: tuple[str, ...]) -> dict[str, Any]:
    """The plain fields ``keys`` of a sealed torch file (a state or ``carry.pt``), read without torch
    (its tensors read as None), after its seal is verified: a refusal that needs only such fields
    (a line's id) answers before torch is imported (issue 58)."""
    verify(path)
    with zipfile.ZipFile(path) as archive:
        name = next((n for n in archive.namelist() if n.endswith("/data.pkl") or n == "data.pkl"), None)
        if name is None:
            raise SealError(f"{path} holds no data.pkl: not a torch file")
        data = _PlainUnpickler(io.BytesIO(archive.read(name))).load()
    if not isinstance(data, dict):
        return {}
    return {k: data[k] for k in keys if k in data}

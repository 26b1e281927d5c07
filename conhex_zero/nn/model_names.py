"""Network sizes and options by name, read without torch: ``l<layers>h<hidden>[r<repeat>][c]`` (``l4h64``,
``l8h128``, ``l4h64r2c``); and the
names of the ways a network runs (``BACKENDS``, ``nn.native``)."""

from __future__ import annotations

import re

BACKENDS = ("auto", "aoti", "eager")
"""How a network runs on a CPU (``nn.native``): ``auto``, the fastest that works here (``aoti`` on a
CPU); ``aoti``, AOTInductor's package; ``eager``, PyTorch's own kernels, the reference."""


def parse_model_name(name: str) -> tuple[int, int]:
    """(layers, hidden) of a size name; ``ValueError`` with the expected form otherwise."""
    spec = parse_model_spec(name)
    return spec["layers"], spec["hidden"]


def parse_model_spec(name: str) -> dict:
    """Every option a model name says: ``l<layers>h<hidden>`` then, optionally, ``r<repeat>`` (the
    blocks run that many times over, weights shared: ``l4h64r3`` passes messages 12 hops with
    ``l4h64``'s weights) and ``c`` (the connection features, ``env.connection``): ``l4h64r2c``.
    Returns ``{"layers", "hidden", "repeat", "connection"}``; ``ValueError`` with the expected form
    otherwise."""
    m = re.fullmatch(r"l(\d{1,6})h(\d{1,7})(?:r(\d{1,3}))?(c?)", name.strip().lower())
    if not m or int(m.group(1)) < 1 or int(m.group(2)) < 4 or (m.group(3) is not None and int(m.group(3)) < 1):
        shown = name if len(name) <= 40 else name[:37] + "..."
        raise ValueError(f"model name {shown!r}: expected l<layers>h<hidden>[r<repeat>][c], e.g. l8h128 or l4h64r2c")
    return {"layers": int(m.group(1)), "hidden": int(m.group(2)), "repeat": int(m.group(3) or 1),
            "connection": m.group(4) == "c"}


def model_name(layers: int, hidden: int, repeat: int = 1, connection: bool = False) -> str:
    """The name of a model's options (``parse_model_spec``'s inverse): ``l4h64``, ``l4h64r2c``."""
    return f"l{layers}h{hidden}" + (f"r{repeat}" if repeat != 1 else "") + ("c" if connection else "")

"""Network sizes by name, read without torch: ``l<layers>h<hidden>`` (``l4h64``, ``l8h128``); and the
names of the ways a network runs (``BACKENDS``, ``nn.native``)."""

from __future__ import annotations

import re

BACKENDS = ("auto", "aoti", "eager")
"""How a network runs on a CPU (``nn.native``): ``auto``, the fastest that works here (``aoti`` on a
CPU); ``aoti``, AOTInductor's package; ``eager``, PyTorch's own kernels, the reference."""


def parse_model_name(name: str) -> tuple[int, int]:
    """(layers, hidden) of a size name; ``ValueError`` with the expected form otherwise."""
    m = re.fullmatch(r"l(\d{1,6})h(\d{1,7})", name.strip().lower())
    if not m or int(m.group(1)) < 1 or int(m.group(2)) < 4:
        shown = name if len(name) <= 40 else name[:37] + "..."
        raise ValueError(f"model name {shown!r}: expected l<layers>h<hidden>, e.g. l8h128")
    return int(m.group(1)), int(m.group(2))

"""JSON-lines files (one object per line): read with line-numbered errors, append, rewrite atomically."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable


class JsonlError(ValueError):
    """A line of a JSON-lines file is not a JSON object; says which file and line."""


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """The objects of a JSON-lines file (blank lines skipped); a bad line raises ValueError naming it."""
    path = Path(path)
    out = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            raise JsonlError(f"{path}:{number} is not a JSON object") from None
    return out


def append_jsonl(path: str | Path, entries: Iterable[dict[str, Any]]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        for e in entries:
            f.write(json.dumps(e) + "\n")


def rewrite_jsonl(path: str | Path, entries: Iterable[dict[str, Any]]) -> None:
    """Replace the file's contents atomically (write to .tmp, rename)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(json.dumps(e) + "\n" for e in entries))
    os.replace(tmp, path)

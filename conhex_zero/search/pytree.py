"""Map functions over nested containers of tensors (dataclasses, tuples, lists, dicts).

The search stores whatever the caller uses as a node's "embedding" (for us a rules ``State``)
without knowing its type: it only needs to allocate, index and write batched leaves.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from torch import Tensor


def tree_map(fn: Callable[..., Tensor], tree: Any, *rest: Any) -> Any:
    """Apply ``fn`` leaf-wise to ``tree`` (and to the matching leaves of ``rest``)."""
    if isinstance(tree, Tensor):
        return fn(tree, *rest)
    if dataclasses.is_dataclass(tree) and not isinstance(tree, type):
        names = [f.name for f in dataclasses.fields(tree)]
        return type(tree)(**{n: tree_map(fn, getattr(tree, n), *(getattr(r, n) for r in rest)) for n in names})
    if isinstance(tree, (tuple, list)):
        return type(tree)(tree_map(fn, t, *(r[i] for r in rest)) for i, t in enumerate(tree))
    if isinstance(tree, dict):
        return {k: tree_map(fn, v, *(r[k] for r in rest)) for k, v in tree.items()}
    raise TypeError(f"cannot map over a {type(tree).__name__}")


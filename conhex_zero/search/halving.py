"""Sequential halving at the root of a Gumbel search (Danihelka et al., 2022, section 3).

The budget of n simulations is split into phases; in each phase every remaining candidate gets
the same number of visits, then the better half stays. The table says, for simulation i, how many
visits the candidate to visit next must already have: the root picks, among actions with exactly
that many visits, the one with the best score. (Same schedule as in the paper; our own code.)
"""

from __future__ import annotations

import math
from functools import lru_cache

import torch


@lru_cache(maxsize=256)  # bounded: timed searches ask for a new length at every move
def considered_visits(num_considered: int, num_simulations: int) -> tuple[int, ...]:
    """For each simulation, the visit count of the candidate to visit (m candidates, n sims)."""
    if num_considered <= 1:
        return tuple(range(num_simulations))
    phases = math.ceil(math.log2(num_considered))
    visits = [0] * num_considered
    seq: list[int] = []
    remaining = num_considered
    while len(seq) < num_simulations:
        extra = max(1, num_simulations // (phases * remaining))
        for _ in range(extra):
            seq.extend(visits[:remaining])
            for i in range(remaining):
                visits[i] += 1
        remaining = max(2, remaining // 2)
    return tuple(seq[:num_simulations])


_TABLES: dict[tuple[int, int, str], torch.Tensor] = {}


def considered_table(max_considered: int, num_simulations: int, device: torch.device) -> torch.Tensor:
    """``[max_considered + 1, n]``: row m is the schedule for m candidates (read-only: shared).

    The table is made once per device and kept, copied from pinned memory: a copy from pageable
    memory at every search was a host synchronisation on CUDA, one per self-play step."""
    if torch.compiler.is_compiling():
        # Dynamo traces the plain function (it warns about the cache's wrapper otherwise); the
        # schedule is a pure function, so both give the same rows.
        rows = [considered_visits.__wrapped__(m, num_simulations) for m in range(max_considered + 1)]
        return torch.tensor(rows, dtype=torch.float32, device=device)
    key = (max_considered, num_simulations, str(torch.device(device)))
    table = _TABLES.get(key)
    if table is None:
        rows = [considered_visits(m, num_simulations) for m in range(max_considered + 1)]
        host = torch.tensor(rows, dtype=torch.float32)  # [max_considered + 1, n]
        if torch.device(device).type == "cuda":  # from pinned memory the copy is asynchronous
            table = host.pin_memory().to(device, non_blocking=True)
        else:
            table = host.to(device)
        _TABLES[key] = table
    return table

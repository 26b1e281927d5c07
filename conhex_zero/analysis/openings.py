"""How strong is each move? Every legal move of a position, searched deeply, all at once.

For a position (the empty board for the openings), each legal move ``a`` leads to a child
position. The analysis gives, per move:

* the network's prior for ``a`` at the position, and its raw value of the child;
* a deep search of the child from the opponent's side (``value``, in [-1, 1], for the player to
  move there; the swap action is barred at the child's root, so for an opening it is the value
  when the second player does *not* swap), searched ``repeats`` times with independent Gumbel
  noise. ``win_rate`` is the mover's chance of winning, ``(1 - value) / 2`` (1 or 0 when the move
  ends the game);
* symmetric moves (images of ``a`` under the symmetries that keep the position) form a group;
  the group's win rate pools all its searches and ``win_rate_spread`` is the range (max - min)
  over them, the search's own uncertainty;
* ``swap``: under the pie rule the second player should swap exactly when the first player's
  win rate after the opening is above one half;
* ``proven``: the search proved the child's result (MCTS-solver, ``search.mcts``): the value is then
  exact (win rate 1 or 0), whatever the simulations;
* stability: every move is searched again with ``compare_sims`` simulations (default half of
  ``sims``), ``repeats`` times too; a move is ``stable`` when all its group's searches at both
  effort levels (or a proof) put it on the same side of one half. An unstable move is undecided at
  this effort: its side of one half (and so its swap verdict) may change with more thinking.

The estimate is the value of the child's best reply (the move its search would play there), from
the opponent's side, in a search with proven values: as simulations grow the refuted lines are
proven and dropped and the estimate tends to the exact result (``benchmarks/bench_convergence.py``
measures how fast, against the exact solver on Hex 4x4 and 5x5); before that it is the mean return
of that reply's subtree, and the spread over repeats, symmetric moves and the two effort levels is
its honest uncertainty.

All children and repeats are one batch through the search, so a ConHex opening analysis is one
search of 69 x repeats positions. With a small Hex board, ``exact`` adds the solver's verdict.
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence

import torch

from conhex_zero.agents.evaluators import NetworkEvaluator
from conhex_zero.agents.game_search import GameSearch
from conhex_zero.agents.search_configs import analysis_config, variant_config
from conhex_zero.analysis.solver import HexSolver
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.games.game import Game
from conhex_zero.nn.checkpoint import Checkpoint
from conhex_zero.search import rng


@dataclass
class MoveAnalysis:
    """One legal move of the analysed position (values for the player who makes the move)."""

    move: str
    action: int
    prior: float
    """The network's probability of the move at the position."""
    net_win_rate: float
    """The mover's win chance by the network's raw value of the child."""
    value: float
    """Deep-search value of the child for the player to move there (the opponent), in [-1, 1]."""
    win_rate: float
    """The mover's win chance after the move, pooled over the move's symmetry group."""
    win_rate_spread: float
    """Range (max - min) of the win chance over the group's searches (repeats, symmetric moves)."""
    own_win_rate: float
    """The mover's win chance from this move's own searches only."""
    visits: int
    """Visits of the best reply in this move's searches (summed over repeats)."""
    group: int
    """Index of the move's symmetry group (moves equal up to a symmetry of the position)."""
    swap: bool | None
    """Opening analysis only: should the second player swap after this opening (pie rule)?"""
    exact_win: bool | None = None
    """Exact solver's verdict, when one is available: does the mover win after this move?"""
    samples: list[float] = field(default_factory=list)
    """This move's win chance in each repeat."""
    proven: str | None = None
    """``"win"`` / ``"loss"`` for the mover when a search proved the child's result (or the move
    ends the game), else None."""
    compare_win_rate: float | None = None
    """The group's pooled win chance at ``compare_sims`` simulations (None: no comparison run)."""
    stable: bool = True
    """Every search of the group, at every effort level, on the same side of one half (or proven)."""
    efforts: dict[int, float] = field(default_factory=dict)
    """The group's pooled win chance at every effort level searched: simulations -> win chance."""


@dataclass
class PositionAnalysis:
    """Every legal move of one position, strongest first."""

    game: str
    checkpoint: str
    sims: int
    repeats: int
    mover: int
    """The player who makes the analysed moves (0 = first player)."""
    moves: list[MoveAnalysis]
    """Sorted by group win rate (strongest first), then by prior."""
    is_opening: bool
    truth_source: str | None = None
    """Where ``exact_win`` comes from: 'solver' (this package's exact solver), 'published' (the
    literature's solution of the openings, ``hex_openings.PUBLISHED_OPENINGS``) or None."""
    compare_sims: int = 0
    """The second effort level the stability check searched at (0: none)."""
    efforts: list[int] = field(default_factory=list)
    """Every effort level searched (simulations, ascending): ``sims`` and the comparison levels."""

    @property
    def stable_count(self) -> int:
        """Moves whose verdict (side of one half) is the same in every search at both efforts."""
        return sum(m.stable for m in self.moves)

    def undecided(self) -> list[list["MoveAnalysis"]]:
        """The groups that are not stable: undecided at this effort."""
        return [g for g in self.groups() if not g[0].stable]
    def groups(self) -> list[list[MoveAnalysis]]:
        """Moves grouped by symmetry, in the order of ``moves``."""
        order: dict[int, list[MoveAnalysis]] = {}
        for m in self.moves:
            order.setdefault(m.group, []).append(m)
        return list(order.values())

    def fairest(self, count: int = 5) -> list[list[MoveAnalysis]]:
        """The groups whose win rate is closest to one half."""
        return sorted(self.groups(), key=lambda g: (abs(g[0].win_rate - 0.5), g[0].group))[:count]

    def exact_errors(self) -> list[MoveAnalysis]:
        """Moves whose search verdict (win rate above or below one half) contradicts the solver."""
        return [m for m in self.moves if m.exact_win is not None and (m.win_rate > 0.5) != m.exact_win]

    def to_json(self) -> dict:
        keys = ("move", "prior", "value", "win_rate", "win_rate_spread", "swap", "own_win_rate",
                "net_win_rate", "visits", "group", "exact_win", "samples", "proven", "compare_win_rate", "stable")
        return {
            "game": self.game, "checkpoint": self.checkpoint, "sims": self.sims, "repeats": self.repeats,
            "mover": self.mover, "truth_source": self.truth_source, "compare_sims": self.compare_sims,
            "efforts": self.efforts, "stable": self.stable_count,
            "openings" if self.is_opening else "moves": [
                {**{k: _rounded(asdict(m)[k]) for k in keys},
                 "efforts": {str(k): _rounded(v) for k, v in m.efforts.items()}} for m in self.moves],
        }


def _rounded(v):
    if isinstance(v, float):
        return round(v, 4)
    if isinstance(v, list):
        return [_rounded(x) for x in v]
    return v


def symmetry_groups(env: VecEnv, state: State, actions: list[int]) -> list[int]:
    """Group id per action: actions mapped onto each other by a symmetry that fixes ``state``."""
    tables = env.symmetries
    keep = [k for k in range(len(tables)) if not tables.exchanges[k] and tables.apply(state, k).equal(state)]
    index = {a: i for i, a in enumerate(actions)}
    group = list(range(len(actions)))

    def find(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    acts = torch.tensor(actions, device=state.device)
    for k in keep:
        images = tables.map_action(acts, k).tolist()
        for a, b in zip(actions, images):
            if b in index:
                ra, rb = find(index[a]), find(index[b])
                group[max(ra, rb)] = min(ra, rb)
    roots = [find(i) for i in range(len(actions))]
    renumber = {r: n for n, r in enumerate(dict.fromkeys(roots))}
    return [renumber[r] for r in roots]


def _search_children(env: VecEnv, evaluator: NetworkEvaluator, batch: State, running: torch.Tensor, M: int,
                     sims: int, repeats: int, seed: int, on_simulation: Callable[[int], None] | None,
                     search: str = "analysis") -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Search the running children ``batch`` (``repeats`` copies of each) from the opponent's side,
    swap barred: the best reply's value ``[repeats, M]`` (0 for children that end the game), its
    visits ``[M]`` summed over repeats, and the proven results ``[repeats, M]`` (opponent's view)."""
    values = torch.zeros(repeats, M)
    visits = torch.zeros(M)
    proven = torch.zeros(repeats, M, dtype=torch.int8)
    if batch is None:
        return values, visits, proven
    R = len(running)
    config = (analysis_config(sims, noise=repeats > 1) if search == "analysis" else
              dataclasses.replace(variant_config(search, sims), gumbel_scale=1.0 if repeats > 1 else 0.0))
    game_search = GameSearch(env, evaluator, config, tactics=not search.endswith("-no-tactics"))
    exclude = torch.zeros(batch.batch_size, env.num_actions, dtype=torch.bool, device=env.device)
    exclude[:, env.game.swap_action] = True  # the second player's value *without* swapping
    keys = rng.fold(torch.arange(batch.batch_size, device=env.device) + seed * 1_000_003, 0xA7)
    out = game_search.run(batch, keys, exclude=exclude, on_simulation=on_simulation)
    best_q = out.action_value.cpu()  # [R * repeats]: the best reply's value (exact where proven)
    best_n = out.visit_counts.gather(1, out.action[:, None])[:, 0].cpu()
    values[:, running.cpu()] = best_q.view(repeats, R)
    visits.index_add_(0, running.cpu(), best_n.view(repeats, R).sum(0))
    proven[:, running.cpu()] = out.root_proven.cpu().view(repeats, R)
    return values, visits, proven


def analyse_moves(env: VecEnv, state: State, checkpoint: Checkpoint, checkpoint_name: str = "",
                  sims: int = 200, repeats: int = 2, seed: int = 0, exact: HexSolver | None = None,
                  on_simulation: Callable[[int], None] | None = None,
                  on_solved: Callable[[int], None] | None = None, compare_sims: int | Sequence[int] | None = None,
                  search: str = "analysis") -> PositionAnalysis:
    """Analyse every legal move of ``state`` (a batch of one running game).

    ``search`` names the search settings (``search_configs.VARIANTS``; the analysis settings by
    default, others for comparison).
    ``compare_sims`` (default ``sims // 2``; 0: none; or several levels, e.g. ``(200, 800)`` beside
    ``sims=3200``) are the other effort levels of the stability check. ``on_simulation(k)`` is
    called after each search simulation (every effort, in order), ``on_solved(k)`` after the exact
    solver has settled the k-th move (only with ``exact``)."""
    if state.batch_size != 1 or bool(state.done[0]):
        raise ValueError("analyse_moves needs one running game")
    if repeats < 1 or sims < 1:
        raise ValueError("sims and repeats must be at least 1")
    if compare_sims is None:
        levels = [max(1, sims // 2)]
    elif isinstance(compare_sims, int):
        levels = [compare_sims] if compare_sims else []
    else:
        levels = [c for c in compare_sims if c]
    if any(c < 1 for c in levels):
        raise ValueError("compare_sims must be 0 (none) or positive")
    compare_sims = levels[0] if levels else 0
    game = env.game
    mover = int(state.to_move[0])
    is_opening = int(state.ply[0]) == game.first_move_ply
    evaluator = NetworkEvaluator(checkpoint.model, env, backend=None, label=checkpoint_name or "the network")
    legal = env.legal_mask(state)[0]
    actions = torch.nonzero(legal).flatten().tolist()
    M = len(actions)
    acts = torch.tensor(actions, device=env.device)

    logits, _ = evaluator(state)
    prior = torch.softmax(logits[0], 0)[acts].tolist()  # [M]
    children = env.step(State.cat([state] * M), acts)  # M children
    _, child_value = evaluator(children)  # [M] for the player to move there
    same = (children.to_move == mover).float()  # the mover moves again (extra-stone openings)
    net_win = ((1 + (2 * same - 1) * child_value) / 2).tolist()

    # Deep search of every running child, `repeats` times, in one batch (then again at the second
    # effort level for the stability check).
    running = torch.nonzero(~children.done).flatten()
    batch = State.cat([children[running]] * repeats) if len(running) else None
    values, visits, proven = _search_children(env, evaluator, batch, running, M, sims, repeats, seed, on_simulation,
                                              search)
    others = [_search_children(env, evaluator, batch, running, M, level, repeats, seed + 7919 * (k + 1),
                               on_simulation, search) for k, level in enumerate(levels)]
    mover_sign = 2 * same.cpu() - 1  # +1 when the mover is also to move in the child

    def win_chance(v: torch.Tensor) -> torch.Tensor:  # [repeats, M] the mover's, exact for ended games
        return torch.where(children.done.cpu(), (children.winner.cpu() == mover).float(), (1 + mover_sign * v) / 2)

    ended = children.done.cpu()
    won = (children.winner.cpu() == mover).float()
    win = win_chance(values)  # [repeats, M]
    value = torch.where(ended, 1 - 2 * won, values)  # [repeats, M] for the player to move there
    # A proof in any search is exact; for the mover it is the child's result signed by who moves there.
    proof = (mover_sign[None] * torch.cat([proven] + [o[2] for o in others]).float())  # [k, M]
    mover_proof = torch.where(ended, 2 * won - 1, torch.where((proof > 0).any(0), 1.0, torch.where(
        (proof < 0).any(0), -1.0, 0.0)))  # [M]

    groups = symmetry_groups(env, state, actions)
    pooled: dict[int, list[float]] = {}
    pooled_at: list[dict[int, list[float]]] = [{} for _ in levels]  # per other level: group -> samples
    other_wins = [win_chance(o[0]) for o in others]
    for i, g in enumerate(groups):
        pooled.setdefault(g, []).extend(win[:, i].tolist())
        for at, other_win in zip(pooled_at, other_wins):
            at.setdefault(g, []).extend(other_win[:, i].tolist())
    group_proof: dict[int, float] = {}
    for i, g in enumerate(groups):
        if mover_proof[i] != 0:
            group_proof[g] = float(mover_proof[i])
    truth: list[bool | None] = [None] * M
    truth_source = None
    published = published_openings(game) if is_opening and exact is None else None
    if exact is not None:
        truth, truth_source = _exact(exact, children, mover, on_solved), "solver"
    elif published is not None:
        truth, truth_source = [game.action_name(a) in published for a in actions], "published"
    moves = []
    for i, a in enumerate(actions):
        g = groups[i]
        samples = pooled[g]
        wr = sum(samples) / len(samples)
        if g in group_proof:  # a proof settles the whole group (its moves are symmetric)
            wr = (1 + group_proof[g]) / 2
        checks = samples + [x for at in pooled_at for x in at[g]]
        stable = g in group_proof or all(x > 0.5 for x in checks) or all(x < 0.5 for x in checks)
        efforts = {sims: wr, **{level: sum(at[g]) / len(at[g]) for level, at in zip(levels, pooled_at)}}
        if g in group_proof:
            efforts = {level: wr for level in efforts}
        moves.append(MoveAnalysis(
            move=game.action_name(a), action=a, prior=prior[i], net_win_rate=net_win[i],
            value=float(value[:, i].mean()), win_rate=wr, win_rate_spread=max(samples) - min(samples),
            own_win_rate=float(win[:, i].mean()), visits=int(visits[i]), group=g,
            swap=(wr > 0.5) if is_opening and not bool(same[i]) else None,
            exact_win=truth[i], samples=win[:, i].tolist(),
            proven=None if g not in group_proof else ("win" if group_proof[g] > 0 else "loss"),
            compare_win_rate=efforts[compare_sims] if compare_sims else None,
            stable=stable, efforts=dict(sorted(efforts.items()))))
    moves.sort(key=lambda m: (-m.win_rate, m.group, -m.prior))
    renumber = {g: n for n, g in enumerate(dict.fromkeys(m.group for m in moves))}
    for m in moves:
        m.group = renumber[m.group]
    return PositionAnalysis(game=game.spec, checkpoint=checkpoint_name, sims=sims, repeats=repeats,
                            mover=mover, moves=moves, is_opening=is_opening, truth_source=truth_source,
                            compare_sims=compare_sims, efforts=sorted({sims, *levels}))


def published_openings(game: Game) -> frozenset[str] | None:
    """The first moves that win for the first player by the literature (Hex 7x7), else None."""
    from conhex_zero.analysis.hex_openings import PUBLISHED_OPENINGS

    name = game.board.name
    if (not name.startswith("hex-") or game.random_pieces or game.forbid_depth is not None or game.extra_stone
            or game.mirror is not None):
        return None
    return PUBLISHED_OPENINGS.get(int(name.split("-")[1]))


def _exact(solver: HexSolver, children: State, mover: int,
           progress: Callable[[int], None] | None = None) -> list[bool]:
    return [w == mover for w in solver.state_winners(children, progress).tolist()]

"""Review a game with an AI: every position searched in one batch, each move's value and the mistakes.

``review_game(game, moves, player)`` replays the moves, stacks all positions of the game (before
the first move ... after the last) into one batch (``State.cat``; split into ``max_batch`` chunks
with a progress bar on long games) and asks the player's search for each position's value and
preferred move. For move k:

* ``value_before``: the first player's (X's) win chance, in percent, in the position before the
  move, with the AI's best play (a Gumbel search's value of its chosen move; a PUCT search's root
  value; the network's value for ``policy:``);
* ``value_after``: the same in the position after the move (100 or 0 once the game is won);
* ``best_move``: the move the AI would have played instead;
* ``best_value_after``: X's win chance after the AI's preferred move (searched as well; the same as
  ``value_after`` when that move was played);
* ``loss``: how much of the mover's own win chance the move gave away: the mover's win percent
  before minus after, or 0 when the move did not lose anything (a move the search finds better
  afterwards than it expected before gives nothing away: a loss is never negative), and 0 for the
  AI's preferred move (it cannot be a mistake by the AI's own reckoning);
* ``mistake``: whether the loss is larger than the review's ``threshold`` (below).

The noise of a loss. A search's value is not exact: the value of a position and the value of the
position after the search's own preferred move differ by a few points, sometimes 10-18 (a deeper
look, a different sample), although that move loses nothing by the search's own reckoning. That
difference, the *swing* of the preferred move, is measured at every position of the game: for each
move the position after the AI's preferred move is searched too, and its swing is the mover's win
percent before minus after it. A move's loss carries the same noise, so the review's ``noise`` is the
root mean square of the game's swings (bias and spread alike), and a move is a ``mistake`` only when
its loss exceeds ``threshold = NOISE_MULTIPLE * noise`` (twice the noise: for swings spread like a
normal distribution, about one move in 40 that loses nothing would pass it). With an exact player
(every swing 0) any loss counts. ``mistakes`` are those moves, biggest loss first.

Players: any search player (``CKPT[:sims=N]`` network + Gumbel search, ``mcts-rollout:K``), or
``policy:CKPT`` (the network's value and most likely move, no search). ``conhex-zero replay --record
FILE --analyse PLAYER`` prints a review; ``format_review`` is that table.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

import torch

from conhex_zero.agents.players import Player, PolicyPlayer, SearchPlayer, make_player
from conhex_zero.env.notation import IllegalMoveError
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import IllegalActionError, VecEnv
from conhex_zero.games.game import Game, MoveError, parse_game
from conhex_zero.games.render import PLAYER_NAMES
from conhex_zero.console.progress import progress_bar
from conhex_zero.console.words import plural


NOISE_MULTIPLE = 2.0
"""A move is a mistake when its loss exceeds this many times the review's noise (see above)."""


@dataclass
class MoveReview:
    ply: int  # 1-based number of the move in the game
    move: str  # engine name (hole or swap)
    notation: str  # as the record wrote it
    player: int  # who made it: 0 (X, first) or 1 (O)
    value_before: float | None  # X's win %, position before the move
    value_after: float | None  # X's win %, position after it
    best_move: str | None  # the AI's choice in the position before the move
    loss: float | None  # mover's win % before minus after, at least 0; 0 for the AI's preferred move
    best_value_after: float | None = None  # X's win %, position after the AI's preferred move
    mistake: bool = False  # the loss exceeds the review's threshold

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("value_before", "value_after", "loss", "best_value_after"):
            out[key] = None if out[key] is None else round(out[key], 2)
        return out


@dataclass
class GameReview:
    game: str
    player: str
    simulations: int | None
    seed: int
    moves: list[MoveReview] = field(default_factory=list)
    mistakes: list[MoveReview] = field(default_factory=list)
    start_value: float | None = None  # X's win % before the first move
    winner: int | None = None  # the engine's winner after the last move (None: not over)
    noise: float | None = None  # root mean square of the preferred moves' swings, in points
    threshold: float | None = None  # a loss above this many points is a mistake

    def to_json(self) -> dict[str, Any]:
        def rounded(x: float | None) -> float | None:
            return None if x is None else round(x, 2)

        return {"game": self.game, "player": self.player, "simulations": self.simulations, "seed": self.seed,
                "start_value": rounded(self.start_value), "winner": self.winner,
                "noise": rounded(self.noise), "threshold": rounded(self.threshold),
                "noise_multiple": NOISE_MULTIPLE, "moves": [m.to_json() for m in self.moves],
                "mistakes": [m.to_json() for m in self.mistakes]}


def _first_percent(mover: int, value: float) -> float:
    """X's win % from a value in [-1, 1] for the player to move."""
    percent = 50.0 * (1.0 + max(-1.0, min(1.0, value)))
    return percent if mover == 0 else 100.0 - percent


def _evaluate(player: Player, env: VecEnv, states: State) -> tuple[list[float], list[int]]:
    """Values (for the player to move) and preferred actions of a batch of running positions."""
    if isinstance(player, SearchPlayer):
        player.act(states)
        out = player.last
        assert out is not None
        chosen = out.action.long()
        visits = out.visit_counts.gather(1, chosen[:, None])[:, 0]
        q = out.q_values.gather(1, chosen[:, None])[:, 0].float()
        value = out.root_value.float()
        if player.search.config.scheme == "gumbel":
            # the chosen move's value: the root mean also averages the many weak moves a Gumbel
            # search tries; a PUCT search's mean follows its visits, which favour the best moves
            value = torch.where(visits > 0, q, value)
        return value.cpu().tolist(), chosen.cpu().tolist()
    if isinstance(player, PolicyPlayer):
        logits, value = player.evaluator(states)
        legal = env.legal_mask(states)
        best = torch.where(legal, logits.float(), -float("inf")).argmax(1)
        return value.float().cpu().tolist(), best.cpu().tolist()
    raise ValueError(f"{player.name} cannot review a game: use a checkpoint (network search), "
                     f"policy:CKPT or mcts-rollout:K")


def review_game(game: str | Game, moves: Sequence[str] | Sequence[int], player_spec: str | Player = "mcts-rollout:64",
                simulations: int | None = None, seed: int = 0, progress: bool = False, *,
                device: str | torch.device = "cpu", notation: Sequence[str] | None = None,
                mistakes: int = 3, max_batch: int = 128, env: VecEnv | None = None) -> GameReview:
    """Review ``moves`` (names or action ids, from the empty board) of ``game`` with a player.

    ``player_spec`` is a player name (``CKPT``, ``CKPT:sims=N``, ``mcts-rollout:K``, ``policy:CKPT``)
    built with ``simulations`` and ``seed``, or a ready ``SearchPlayer``/``PolicyPlayer`` (reuse one
    across games). All positions are searched together, in chunks of at most ``max_batch``;
    results do not depend on the chunking (each position's random keys come from the position).
    ``notation`` gives the moves as a record wrote them (default: the engine names). An illegal
    move raises ``IllegalMoveError`` with its number. See the module docstring for the fields.
    """
    env = env or VecEnv(parse_game(game), device)
    spec = env.game
    names: list[str] = []
    actions: list[int] = []
    for number, m in enumerate(moves, start=1):
        try:
            a = int(m) if isinstance(m, int) else spec.parse_move(str(m))
            names.append(spec.action_name(a))
        except MoveError as err:
            raise IllegalMoveError(number, str(m), str(err)) from None
        actions.append(a)
    notation = list(notation) if notation is not None else list(names)
    if len(notation) != len(names):
        raise ValueError("notation must have one entry per move")

    # every position of the game, before the first move .. after the last
    states = [env.initial_state(1)]
    for number, (name, a) in enumerate(zip(names, actions), start=1):
        try:
            states.append(env.step(states[-1], torch.tensor([a], device=env.device), check=True))
        except IllegalActionError as err:
            raise IllegalMoveError(number, name, err.reasons[0]) from None
    batch = State.cat(states)
    movers = batch.to_move.cpu().tolist()
    winners = batch.winner.cpu().tolist()

    if isinstance(player_spec, str):
        player = make_player(player_spec, env, seed=seed, simulations=simulations)
    else:
        player = player_spec
    sims = None
    if isinstance(player, SearchPlayer):
        sims = player.search.config.num_simulations

    # pass 1: every running position of the game
    percent: list[float | None] = [None] * len(states)
    best: list[int | None] = [None] * len(states)
    for i, w in enumerate(winners):
        if w >= 0:
            percent[i] = 100.0 if w == 0 else 0.0
    running = [i for i, w in enumerate(winners) if w < 0]
    # pass 2: the positions after the AI's preferred moves that were not played (a played one is
    # the next position of the game, searched already), for the swings that measure the noise
    with torch.no_grad():
        with progress_bar(total=len(running), desc=f"review by {player.name}", unit="position", leave=False,
                          disable=not progress) as bar:
            _search(player, env, batch, running, max_batch, percent, best, bar)
            others = [k for k in range(len(actions)) if best[k] is not None and best[k] != actions[k]]
            after_best: list[float | None] = [None] * len(actions)
            for k in range(len(actions)):
                if best[k] == actions[k]:
                    after_best[k] = percent[k + 1]
            if others:
                idx = torch.tensor(others, device=batch.device)
                chosen = torch.tensor([best[k] for k in others], device=batch.device)
                alternatives = env.step(batch[idx], chosen)
                values: list[float | None] = [None] * len(others)
                alt_winners = alternatives.winner.cpu().tolist()
                for j, w in enumerate(alt_winners):
                    if w >= 0:
                        values[j] = 100.0 if w == 0 else 0.0
                bar.total += sum(1 for w in alt_winners if w < 0)
                _search(player, env, alternatives, [j for j, w in enumerate(alt_winners) if w < 0], max_batch,
                        values, [None] * len(others), bar)
                for k, v in zip(others, values):
                    after_best[k] = v

    review = GameReview(spec.spec, player.name, sims, seed, start_value=percent[0],
                        winner=None if winners[-1] < 0 else int(winners[-1]))
    swings: list[float] = []
    for k, (name, note) in enumerate(zip(names, notation)):
        mover = movers[k]
        before, after = percent[k], percent[k + 1]
        loss = None
        if before is not None and after is not None:
            loss = 0.0 if best[k] == actions[k] else max(0.0, _mover_drop(mover, before, after)) + 0.0  # no -0.0
        if before is not None and after_best[k] is not None:
            swings.append(_mover_drop(mover, before, after_best[k]))
        review.moves.append(MoveReview(k + 1, name, str(note), mover, before, after,
                                       None if best[k] is None else spec.action_name(best[k]), loss, after_best[k]))
    if swings:
        review.noise = math.sqrt(sum(x * x for x in swings) / len(swings))
        review.threshold = NOISE_MULTIPLE * review.noise
        for m in review.moves:
            m.mistake = m.loss is not None and m.loss > review.threshold + EPSILON
    ranked = sorted((m for m in review.moves if m.mistake), key=lambda m: (-m.loss, m.ply))
    review.mistakes = ranked[:max(0, mistakes)]
    return review


EPSILON = 1e-9
"""Losses within float rounding of the threshold are not mistakes (an exact player's threshold is 0)."""


def _mover_drop(mover: int, before: float, after: float) -> float:
    """How many points of the mover's win chance went from ``before`` to ``after`` (X's win %)."""
    return (before - after) if mover == 0 else (after - before)


def _search(player: Player, env: VecEnv, batch: State, rows: list[int], max_batch: int,
            percent: list[float | None], best: list[int | None], bar: Any) -> None:
    """Search ``batch[rows]`` in chunks of at most ``max_batch``; fills ``percent`` (X's win %) and
    ``best`` (the preferred action) at those rows and advances ``bar`` by the positions done."""
    movers = batch.to_move.cpu().tolist()
    for k in range(0, len(rows), max(1, max_batch)):
        chunk = rows[k:k + max(1, max_batch)]
        idx = torch.tensor(chunk, device=batch.device)
        values, choices = _evaluate(player, env, batch[idx])
        for i, v, a in zip(chunk, values, choices):
            percent[i] = _first_percent(movers[i], float(v))
            best[i] = int(a)
        bar.update(len(chunk))


def _pct(x: float | None) -> str:
    return "   -" if x is None else f"{x:5.1f}"


def format_review(review: GameReview, title: str = "") -> str:
    """The review as a table (one row per move: X's win % before and after it, the AI's preferred
    move, the mover's loss, X's win % after the AI's move) followed by the biggest mistakes."""
    show_notation = any(m.notation != m.move for m in review.moves)
    head = title or f"review of a {review.game} game"
    by = f"by {review.player}" + (f" ({plural(review.simulations, 'simulation')})" if review.simulations else "")
    lines = [f"{head}, {by}; values are X's win chances (X moves first, top-bottom)"]
    cols = f"{'ply':>4}  {'':2}{'move':<6}" + (f"{'record':<8}" if show_notation else "") + \
        f"{'X% before':>10}{'after':>8}  {'AI move':<8}{'loss':>6}  {'after AI move':>13}"
    lines.append(cols)
    for m in review.moves:
        row = f"{m.ply:>4}  {PLAYER_NAMES[m.player]} {m.move:<6}" + (f"{m.notation:<8}" if show_notation else "")
        row += f"{_pct(m.value_before):>10}{_pct(m.value_after):>8}  {(m.best_move or '-'):<8}"
        row += f"{'' if m.loss is None else format(m.loss, '6.1f'):>6}"
        row += f"  {_pct(m.best_value_after):>13}" + ("  mistake" if m.mistake else "")
        lines.append(row)
    noise = ("" if review.threshold is None else
             f"a mistake loses over {review.threshold:.1f} points: {NOISE_MULTIPLE:g} x the search's noise of "
             f"{review.noise:.1f}, how far its values swing after its own preferred moves")
    if review.mistakes:
        lines.append(f"biggest mistakes (the mover's win chance lost; {noise}):")
        for m in review.mistakes:
            mover_before = m.value_before if m.player == 0 else 100 - (m.value_before or 0)
            mover_after = m.value_after if m.player == 0 else 100 - (m.value_after or 0)
            played = m.move + (f" ({m.notation})" if m.notation != m.move else "")
            lines.append(f"  move {m.ply}: {PLAYER_NAMES[m.player]} {played}: {mover_before:.1f}% -> "
                         f"{mover_after:.1f}% (-{m.loss:.1f}); the AI preferred {m.best_move}")
    elif noise:
        lines.append(f"biggest mistakes: none ({noise})")
    else:
        lines.append("biggest mistakes: none (no move was searched)")
    return "\n".join(lines)

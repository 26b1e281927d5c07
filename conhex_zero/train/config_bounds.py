"""Upper bounds of a training config: what the game allows, and what the machinery can take.

``config.validate`` checks each key's lower bound and type; these are the keys whose large values
either cannot matter (a setting beyond the game's number of actions or plies) or cannot work (a
learning rate that overflows float32, a timeout beyond what a ``timedelta`` holds), and that used to
pass validation and then hang or crash. Each is a one-line ``ConfigError`` naming the key and the
bound, checked before anything starts.
"""

from __future__ import annotations

from conhex_zero.games.game import Game, max_random_pieces
from conhex_zero.train.config import ConfigError, SelfPlayConfig, TrainConfig

MAX_FLOAT = 1e30
"""Rates, weights and clips: above this, float32 arithmetic overflows (it ends at 3.4e38)."""
MAX_SECONDS = 1e8
"""Timeouts and time limits (about three years)."""
MAX_GAMES = 100_000
"""Evaluation games per opponent (as for an arena match)."""


def check_bounds(c: TrainConfig, game: Game) -> None:
    """``ConfigError`` for the first key above its bound (see the module docstring)."""
    actions, plies = game.num_actions, game.max_plies
    considered = max(actions, SelfPlayConfig.max_considered)  # the default holds on the smallest boards too
    random_plies = 2 * max_random_pieces(game.board) - game.opening_plies
    checks = [
        (c.selfplay.max_considered <= considered,
         f"selfplay.max_considered: at most {considered}, the number of actions of {game.spec} (more cannot matter)"
         if considered == actions else f"selfplay.max_considered: at most {considered} on {game.spec}, which has "
         f"{actions} actions (more cannot matter)"),
        (c.selfplay.temperature_moves <= plies,
         f"selfplay.temperature_moves: at most {plies}, the most plies a {game.spec} game has (more cannot matter)"),
        (c.selfplay.random_first_moves <= max(0, random_plies),
         f"selfplay.random_first_moves: at most {max(0, random_plies)} on {game.spec} (random moves that fill more "
         f"than two thirds of the board decide most games before they start)"),
        (c.iterations <= 10**9, "iterations: at most 1000000000"),
        (c.threads <= 4096, "threads: at most 4096"),
        (c.eval.games <= MAX_GAMES and c.eval.previous_games <= MAX_GAMES,
         f"eval.games and eval.previous_games: at most {MAX_GAMES}"),
        (c.eval.neighbours <= 1000, "eval.neighbours: at most 1000"),
        (c.optim.lr <= MAX_FLOAT, f"optim.lr: at most {MAX_FLOAT:g} (float32 arithmetic overflows beyond)"),
        (c.optim.weight_decay <= 10, "optim.weight_decay: at most 10 (AdamW scales the weights by 1 - lr * decay)"),
        (c.optim.grad_clip <= MAX_FLOAT, f"optim.grad_clip: at most {MAX_FLOAT:g}"),
        (c.optim.value_weight <= MAX_FLOAT and c.optim.ownership_weight <= MAX_FLOAT,
         f"optim.*_weight: at most {MAX_FLOAT:g}"),
        (c.selfplay.dirichlet_alpha <= 1e6, "selfplay.dirichlet_alpha: at most 1000000"),
        (c.max_minutes <= MAX_SECONDS / 60, f"max_minutes: at most {MAX_SECONDS / 60:g}"),
        (c.state_minutes <= MAX_SECONDS / 60, f"state_minutes: at most {MAX_SECONDS / 60:g}"),
        (c.dist.timeout_s <= MAX_SECONDS and c.dist.wait_timeout_s <= MAX_SECONDS,
         f"dist.*timeout_s: at most {MAX_SECONDS:g} seconds"),
    ]
    for ok, message in checks:
        if not ok:
            raise ConfigError(f"invalid value for {message}")

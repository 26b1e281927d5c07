"""Whether a built training config can run: each key's range, the game's and the machinery's upper
bounds, the network's size, the fixed references, and the memory it needs.

``config_load.load_config`` calls ``validate`` on every config it builds (types were checked while
building). Lower bounds come first (``_ranges``), then the upper bounds: keys whose large values
either cannot matter (a setting beyond the game's number of actions or plies) or cannot work (a
learning rate that overflows float32, a timeout beyond what a ``timedelta`` holds), and that used to
pass validation and then hang or crash. Each failure is a one-line ``ConfigError`` naming the key and
the bound, raised before anything starts.
"""

from __future__ import annotations

from pathlib import Path

from conhex_zero.games.game import Game, GameSpecError, max_random_pieces, parse_game
from conhex_zero.nn.model_names import BACKENDS
from conhex_zero.train.config import ConfigError, SelfPlayConfig, TrainConfig
from conhex_zero.train.memory import check_memory

MAX_FLOAT = 1e30
"""Rates, weights and clips: above this, float32 arithmetic overflows (it ends at 3.4e38)."""
MAX_SECONDS = 1e8
"""Timeouts and time limits (about three years)."""
MAX_GAMES = 100_000
"""Evaluation games per opponent (as for an arena match)."""


def validate(c: TrainConfig) -> None:
    """``ConfigError`` for the first key out of its range (see the module docstring)."""
    game = _game(c)
    _check_model(c)
    _first_failure(_ranges(c))
    _first_failure(_bounds(c, game))
    check_memory(c)
    _check_references(c, game)
    _check_start_lines(c, game)
    _check_proven_targets(c, game)
    _check_mix(c, game)


def check_ranges(c: TrainConfig) -> None:
    """``ConfigError`` for the first key out of the range the settings themselves bound (no game
    rules, no torch: a command checks these before it imports torch; ``validate`` checks them again)."""
    _first_failure(_ranges(c))


def _first_failure(checks: list[tuple[bool, str]]) -> None:
    for ok, message in checks:
        if not ok:
            raise ConfigError(f"invalid value for {message}")


def _game(c: TrainConfig) -> Game:
    """The run's game, and room on its board for the evaluation's random openings."""
    from conhex_zero.agents.match_openings import OpeningError, check_opening_length

    try:
        game = parse_game(c.game)
    except GameSpecError as err:
        raise ConfigError(f"game: {err}") from None
    try:
        check_opening_length(game, game.opening_plies + max(0, c.eval.opening_plies))
    except OpeningError as err:
        raise ConfigError(f"eval.opening_plies: {err}") from None
    return game


def _check_model(c: TrainConfig) -> None:
    from conhex_zero.nn.model import ModelConfig

    try:
        ModelConfig.from_name(c.model)
    except ValueError as err:
        raise ConfigError(f"model: {err}") from None


def _ranges(c: TrainConfig) -> list[tuple[bool, str]]:
    """Each key's range as the settings themselves bound it, section by section (``_bounds`` adds what
    the game and the machinery allow)."""
    return [
        (c.device in ("cpu", "cuda") or c.device.startswith("cuda:"), "device: cpu or cuda"),
        (c.iterations >= 1, "iterations: at least 1"),
        (c.max_minutes >= 0, "max_minutes: 0 (no limit) or more"),
        (c.clock in ("wall", "cpu"), "clock: wall or cpu"),
        (c.state_minutes >= 0, "state_minutes: 0 (only at evaluations) or more"),
        (c.keep_checkpoints >= 1, "keep_checkpoints: at least 1"),
        (c.threads >= 0, "threads: 0 (one per core) or more"),
        (c.selfplay.games >= 1, "selfplay.games: at least 1"),
        (c.selfplay.full_sims >= 1 and c.selfplay.cheap_sims >= 1, "selfplay.*_sims: at least 1"),
        (0 < c.selfplay.full_fraction <= 1, "selfplay.full_fraction: in (0, 1]"),
        (0 <= c.selfplay.start_fraction <= 1, "selfplay.start_fraction: in [0, 1]"),
        (c.selfplay.proven_targets >= 0, "selfplay.proven_targets: at least 0 (0: off)"),
        (c.selfplay.proven_nodes >= 1, "selfplay.proven_nodes: at least 1"),
        (c.selfplay.proven_solver in ("python", "native"), "selfplay.proven_solver: python or native"),
        (c.selfplay.scheme in ("gumbel", "puct"), "selfplay.scheme: gumbel or puct"),
        (c.selfplay.precision in ("autocast", "bf16", "fp32"), "selfplay.precision: autocast, bf16 or fp32"),
        (c.selfplay.backend in BACKENDS, f"selfplay.backend: {', '.join(BACKENDS)}"),
        (c.selfplay.max_considered >= 1, "selfplay.max_considered: at least 1"),
        (0 <= c.selfplay.dirichlet_fraction <= 1, "selfplay.dirichlet_fraction: in [0, 1]"),
        (c.selfplay.dirichlet_alpha > 0, "selfplay.dirichlet_alpha: positive"),
        (c.selfplay.temperature_moves >= 0, "selfplay.temperature_moves: 0 or more"),
        (0 < c.selfplay.resign_threshold <= 1, "selfplay.resign_threshold: in (0, 1]"),
        (0 <= c.selfplay.resign_playout <= 1, "selfplay.resign_playout: in [0, 1]"),
        (c.selfplay.positions_per_iteration >= 1, "selfplay.positions_per_iteration: at least 1"),
        (c.replay.capacity >= c.replay.min_size >= 1, "replay: capacity >= min_size >= 1"),
        (c.replay.capacity >= c.selfplay.games, "replay.capacity: at least selfplay.games (one move of every game)"),
        (c.selfplay.positions_per_iteration <= c.replay.capacity,
         "selfplay.positions_per_iteration: at most replay.capacity (an iteration would overwrite its own positions)"),
        (c.seed >= 0, "seed: 0 or more"),
        (c.optim.batch_size >= 1, "optim.batch_size: at least 1"),
        (c.optim.lr > 0, "optim.lr: positive"),
        (c.optim.weight_decay >= 0, "optim.weight_decay: 0 or more"),
        (c.optim.warmup_steps >= 0, "optim.warmup_steps: 0 or more"),
        (c.optim.schedule in ("constant", "cosine"), "optim.schedule: constant or cosine"),
        (0 < c.optim.sample_reuse <= 1000, "optim.sample_reuse: positive, at most 1000"),
        (c.optim.value_weight >= 0 and c.optim.ownership_weight >= 0, "optim.*_weight: 0 or more"),
        (c.optim.grad_clip > 0, "optim.grad_clip: positive"),
        (c.eval.every >= 1, "eval.every: at least 1"),
        (c.eval.games >= 0 and c.eval.previous_games >= 0, "eval.games: 0 or more"),
        (c.eval.games % 2 == 0 and c.eval.previous_games % 2 == 0,
         "eval.games and eval.previous_games: even (games come in colour-exchanged pairs)"),
        (c.eval.sims <= 100_000 and c.selfplay.full_sims <= 100_000 and c.selfplay.cheap_sims <= 100_000,
         "selfplay.*_sims and eval.sims: at most 100000 simulations per search"),
        (c.eval.neighbours >= 0, "eval.neighbours: 0 or more"),
        (c.eval.sims >= 1, "eval.sims: at least 1"),
        (c.eval.opening_plies >= 0, "eval.opening_plies: 0 or more"),
        (c.eval.mode in ("full", "check"), "eval.mode: full or check"),
        (2 <= c.eval.check_games <= 1000 and c.eval.check_games % 2 == 0, "eval.check_games: even, from 2 to 1000"),
        (0 <= c.eval.check_sims <= 100_000, "eval.check_sims: from 0 (the raw policy) to 100000"),
        (c.dist.timeout_s > 0 and c.dist.wait_timeout_s > 0, "dist.*timeout_s: positive"),
    ]


def _bounds(c: TrainConfig, game: Game) -> list[tuple[bool, str]]:
    """Upper bounds: what the game allows, and what the machinery can take."""
    actions, plies = game.num_actions, game.max_plies
    considered = max(actions, SelfPlayConfig.max_considered)  # the default holds on the smallest boards too
    random_plies = 2 * max_random_pieces(game.board) - game.opening_plies
    return [
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


def _check_start_lines(c: TrainConfig, game: Game) -> None:
    """The self-play start file reads and every line plays on the run's game."""
    if not c.selfplay.start_lines:
        return
    from conhex_zero.train.start_lines import StartLinesError, read_start_lines

    try:
        read_start_lines(c.selfplay.start_lines, game)
    except StartLinesError as err:
        raise ConfigError(f"selfplay.start_lines: {err}") from None


def _check_mix(c: TrainConfig, game: Game) -> None:
    """Side boards: each a game spec (every game of the family: a network for one plays the others),
    each once, none the run's own game, the share strictly between 0 and 1."""
    if not c.mix.games:
        return
    if not 0.0 < c.mix.share < 1.0:
        raise ConfigError(f"invalid value for mix.share: strictly between 0 and 1 (got {c.mix.share})")
    seen = set()
    for spec in c.mix.games:
        try:
            side = parse_game(spec)
        except GameSpecError as err:
            raise ConfigError(f"mix.games: {spec}: {err}") from None
        if side.spec == game.spec:
            raise ConfigError(f"mix.games: {spec} is the run's own game ({c.game}); list only other boards")
        if side.spec in seen:
            raise ConfigError(f"mix.games: {spec} is listed twice")
        seen.add(side.spec)


def _check_proven_targets(c: TrainConfig, game: Game) -> None:
    """Proven value targets only where the exact solver's results are the game's (plain Hex)."""
    if not c.selfplay.proven_targets:
        return
    from conhex_zero.train.proven_targets import ProvenTargetsError, check_game

    try:
        check_game(game, c.selfplay.proven_solver)
    except ProvenTargetsError as err:
        raise ConfigError(f"selfplay.proven_targets: {err}") from None


def _check_references(c: TrainConfig, game: Game) -> None:
    """Every fixed reference is one (random, mcts-rollout:K) or a checkpoint trained on the run's game."""
    from conhex_zero.agents.players import PlayerSpecError, make_player
    from conhex_zero.env.vec_env import VecEnv

    env = VecEnv("hex-2")
    for ref in c.eval.references:
        if ref == "random" or ref.startswith("mcts-rollout"):
            try:
                make_player(ref, env)
            except PlayerSpecError as err:
                raise ConfigError(f"eval.references: {err}") from None
        elif not ref.endswith(".pt"):
            raise ConfigError(f"eval.references: {ref[:80]!r} is not a fixed reference (random, mcts-rollout:K, or "
                              f"a checkpoint file CKPT.pt)")
        else:
            _check_reference_checkpoint(ref, game.spec)
    stems = [Path(ref).stem for ref in c.eval.references if ref.endswith(".pt")]
    if len(set(stems)) != len(stems):
        raise ConfigError("eval.references: two checkpoint references share a file name (their metrics would clash)")


def _check_reference_checkpoint(ref: str, game: str) -> None:
    """A checkpoint named as a fixed reference exists, loads, and was trained on the run's game (of
    any network size)."""
    from conhex_zero.nn.checkpoint import CheckpointError, load_checkpoint

    if not Path(ref).is_file():
        raise ConfigError(f"eval.references: no checkpoint file at {ref[:200]}")
    try:
        trained_on = load_checkpoint(ref).game
    except CheckpointError as err:
        raise ConfigError(f"eval.references: {err}") from None
    if trained_on != game:
        raise ConfigError(f"eval.references: {ref} was trained on {trained_on}; this run trains {game}")

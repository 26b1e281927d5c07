"""``conhex-zero arena P1 P2 [--games N] [--game GAME] [--sims N] [--json]``: a match between two players."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from conhex_zero.cli.common import (add_backend_argument, CliError, check_appendable, check_seconds, handle_sigterm, HelpFormatter,
                                    add_threads_argument,
                                    check_arena_arguments, game_for_players, plural, preflight_game,
                                    preflight_players, print_json, resolve_device, warn)
from conhex_zero.cli.numbers import MAX_GAMES, SECONDS, SEED, SIMS, Whole
PLAYERS_HELP = ("a player: random, mcts-rollout:K (random-rollout MCTS, K simulations), policy:CKPT "
                "(a checkpoint's raw policy), CKPT, CKPT:sims=N or CKPT:seconds=S (checkpoint + search: N "
                "simulations, or S seconds a move, each position searched alone), gtp:\"COMMAND\" (an external "
                "engine speaking GTP, named gtp:PROGRAM in records and ladders) or gtp@NAME:\"COMMAND\" (the same, "
                "named gtp@NAME)")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "arena", help="play a match between two players",
        description="Play many games at once between two players, in pairs that share a random opening "
        "with colours exchanged, so each player moves first in half of them. Every pair has its own "
        "opening, drawn without replacement from the openings that differ up to the board's symmetries; "
        "when the board has fewer distinct openings of --opening-plies moves than the match has pairs, "
        "all pairs get longer openings (Hex 5x5: 13 distinct first moves, 300 two-move openings), so no "
        "two games are the same even between deterministic players.\n"
        "Prints wins by colour, the score and the Elo difference with 95% intervals, the distinct games "
        "and openings, and writes every game record (JSON lines; replay one with: conhex-zero replay "
        "--record FILE --index I). Intervals, Elo and the ladder count the evidence once: a game "
        "repeated (the same moves up to symmetry, the same players in the same colours) counts as one "
        "game, so the Wilson interval is taken over the distinct games; the plain score counts all. "
        "With distinct openings that happens only on boards too small for the match "
        "(a warning says so) or with --fixed-openings.\n"
        "The progress bar counts plies "
        "(moves, all games together) against an estimate of the match's plies, refined as games end, "
        "with the games finished and the time left.\n"
        "The game is --game, else the one the first checkpoint among the players was trained on, else "
        "conhex; two checkpoints trained on different games need --game, and a model playing a game it "
        "was not trained on is warned about.",
        epilog="examples:\n  conhex-zero arena random mcts-rollout:64 --game hex-5 --games 100 --records runs/match.jsonl\n"
               "  conhex-zero arena runs/hex5/best.pt mcts-rollout:200 --game hex-5 --until-decided --games 400\n"
               "  conhex-zero arena checkpoints/hex5-l4h64.pt:seconds=1 mcts-rollout:1000 --games 40\n\n"
               "An external engine that speaks GTP, here MoHex (when installed):\n"
               "  conhex-zero arena runs/hex11/best.pt gtp:\"mohex --use-book false\" --game hex-11 --games 20",
        formatter_class=HelpFormatter)
    p.add_argument("player1", metavar="P1", nargs="?", help=PLAYERS_HELP)
    p.add_argument("player2", metavar="P2", nargs="?", help="the other player, same forms")
    p.add_argument("--game", default=None, help="game spec (default: the game the first checkpoint among "
                   "the players was trained on, else conhex; two checkpoints trained on different games "
                   "need --game); add random=K for K random opening pieces per player")
    p.add_argument("--games", type=Whole(1, MAX_GAMES), default=100,
                   help="games in the match, or the most games with --until-decided (default: 100)")
    p.add_argument("--sims", type=SIMS, default=None,
                   help="simulations for checkpoint players without :sims=N (default: 64)")
    p.add_argument("--opening-plies", type=Whole(0, 400), default=1, metavar="K",
                   help="at least K random moves open each pair of games, colours exchanged within a pair; "
                   "more when the board has fewer than --games/2 distinct K-move openings (default: 1). "
                   "With the swap rule, an opening of two or more moves passes the swap's turn, so those "
                   "games have no swap (ConHex has 22 distinct first moves: 44 games keep the swap)")
    p.add_argument("--fixed-openings", action="store_true",
                   help="openings of exactly --opening-plies moves (0: every game from the empty board), "
                   "reused as evenly as possible when the board has too few: between deterministic "
                   "players the repeats are copies, which the intervals count once")
    p.add_argument("--scoring", action="store_true",
                   help="also score the match in the scoring variant: pairs of games from the same opening "
                   "with colours exchanged, the winner of a game scores the pieces it placed, the lower "
                   "total over the pair wins the pair (a player winning both games wins it; equal totals "
                   "are a draw, half a pair each); reports the pair score with a 95%% interval, pieces "
                   "per win and each pair's result by opening (JSON keys pairs, pair_score, pieces_per_win)")
    p.add_argument("--until-decided", action="store_true",
                   help="play rounds until the 99%% interval of the score excludes 1/2 (or --games)")
    p.add_argument("--round", type=Whole(1, MAX_GAMES), default=20, metavar="R", help="games per round with --until-decided")
    p.add_argument("--unsealed-records", action="store_true",
                   help="read a --records file whose records carry no digest (written before records were sealed): "
                   "without this such a file is refused, since a changed game in it would not be noticed")
    p.add_argument("--records", metavar="FILE", help="where each game's record is appended as the game ends "
                   "(default: runs/arena/<P1>-vs-<P2>-<game>-s<seed>-<N>g-<digest>.jsonl, the same for the same "
                   "match; a checkpoint is known by its file's content, so a changed file is another match); when "
                   "FILE holds some of this match's games, only the missing ones are played, each game read back "
                   "replayed before it counts")
    p.add_argument("--resume", metavar="FILE", help="continue the match whose games FILE holds (players and "
                   "settings from it; P1 and P2 may be left out), playing only the missing games")
    p.add_argument("--ladder", metavar="DIR", help="also add the result to DIR/ladder.jsonl (see conhex-zero ladder)")
    p.add_argument("--gtp-timeout", type=SECONDS, default=10.0, help="seconds an engine may take per reply")
    p.add_argument("--gtp-startup", type=SECONDS, default=120.0, metavar="S",
                   help="seconds an engine may take to answer its first command after it starts (default: 120)")
    p.add_argument("--gtp-parallel", type=Whole(1, 256), default=4, help="engine processes per GTP player")
    p.add_argument("--seed", type=SEED, default=0, help="match seed (default: 0)")
    p.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    add_threads_argument(p)
    add_backend_argument(p)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=run)


def _elo(x: float) -> str:
    return "inf" if x == float("inf") else "-inf" if x == float("-inf") else f"{x:+.0f}"


def _resumed_settings(args: argparse.Namespace) -> None:
    """``--resume FILE``: the match's players and settings from FILE's records (P1 and P2, when
    given, must be the same), and FILE as the records file."""
    import json

    from conhex_zero.nn.checkpoint_files import path_exists, shown

    if args.records and args.records != args.resume:
        raise CliError("--resume FILE continues the match in FILE: give no other --records")
    if not path_exists(args.resume) or not Path(args.resume).is_file():
        raise CliError(f"--resume: no records file at {shown(args.resume)}")
    settings = None
    with open(args.resume, "rb") as f:
        for raw in f:
            try:
                entry = json.loads(raw)
            except ValueError:
                continue  # a torn line: the records reader says so
            if isinstance(entry, dict) and isinstance(entry.get("match"), dict):
                settings = entry["match"]
                break
    if settings is None or not isinstance(settings.get("players"), list) or len(settings["players"]) != 2:
        raise CliError(f"--resume: {shown(args.resume)} holds no game of a match this version can continue")
    if args.player1 is None:
        args.player1, args.player2 = settings["players"]
    for key, option in (("game", "game"), ("seed", "seed"), ("games", "games"), ("sims", "sims"),
                        ("opening_plies", "opening_plies"), ("fixed_openings", "fixed_openings"),
                        ("until_decided", "until_decided"), ("round", "round")):
        if key in settings and settings[key] is not None and (key != "game" or args.game is None):
            setattr(args, option, settings[key])
    args.records = args.resume


def run(args: argparse.Namespace) -> int:
    if args.resume:
        _resumed_settings(args)
    if args.player1 is None or args.player2 is None:
        raise CliError("name two players (P1 P2), or continue a match with --resume FILE")
    check_arena_arguments(args)  # before torch: a typo is answered at once
    check_seconds("--gtp-startup", args.gtp_startup)
    preflight_game(args.game)
    preflight_players([args.player1, args.player2], args.sims)
    files = checkpoint_files([args.player1, args.player2])
    digests = digests_of(files)  # what each checkpoint file holds now: read before the models are
    if args.records:  # an edited record, or another match's file, is refused before torch
        from conhex_zero.agents.match_records import MatchRecordsError, preflight_records

        known = {"seed": args.seed, "games": args.games, "sims": args.sims, "opening_plies": args.opening_plies,
                 "fixed_openings": args.fixed_openings, "until_decided": args.until_decided,
                 "round": args.round if args.until_decided else None}
        try:
            preflight_records(args.records, [args.player1, args.player2], digests, known,
                              allow_unsealed=args.unsealed_records)
        except MatchRecordsError as err:
            raise CliError(str(err)) from None
    from conhex_zero.agents.arena import play_match, play_until_decided
    from conhex_zero.agents.match_openings import OpeningError, check_opening_length
    from conhex_zero.agents.match_records import (MatchRecordsError, append_record, default_records_path,
                                                  match_settings, read_match_records)
    from conhex_zero.agents.match_result import MatchResult
    from conhex_zero.agents.players import PlayerSpecError, make_player
    from conhex_zero.agents.record_check import check_records
    from conhex_zero.env.vec_env import VecEnv
    from conhex_zero.nn.checkpoint import CheckpointError

    handle_sigterm()  # kill -TERM stops a match as Ctrl-C does: finished games kept, the result so far shown
    if args.scoring and (args.games % 2 or (args.until_decided and args.round % 2)):
        raise CliError("--scoring plays pairs: --games (and --round) must be even")
    if args.opening_plies < 0:  # the others are checked by check_arena_arguments
        raise CliError("--opening-plies must be at least 0")
    env = VecEnv(game_for_players("arena", args.game, [args.player1, args.player2]), resolve_device(args.device))
    try:
        check_opening_length(env.game, env.game.opening_plies + args.opening_plies)
    except OpeningError as err:
        raise CliError(f"--opening-plies {args.opening_plies}: {err}") from None
    settings = match_settings([args.player1, args.player2], env.game.spec, args.seed, args.games, args.sims,
                              args.opening_plies, args.fixed_openings, args.until_decided, args.round, digests)
    players = []
    try:
        for k, spec in enumerate((args.player1, args.player2)):
            players.append(make_player(spec, env, seed=args.seed + k, simulations=args.sims,
                                       gtp_timeout=args.gtp_timeout, gtp_parallel=args.gtp_parallel,
                                       gtp_startup=args.gtp_startup))
    except (PlayerSpecError, CheckpointError) as err:
        for p in players:
            if hasattr(p, "close"):
                p.close()
        raise CliError(str(err)) from None
    if players[0].name == players[1].name:  # keep the two apart in records and ladders
        players[1].name += " (2)"
    names = (players[0].name, players[1].name)
    records = Path(args.records) if args.records else default_records_path(settings, names)

    def read_back() -> list:  # every game of the file, replayed before it counts
        return read_match_records(records, settings, warn=lambda text: warn("arena", text),
                                  check=lambda read: check_records(env, read, names, settings),
                                  allow_unsealed=args.unsealed_records)

    try:
        if digests_of(files) != digests:
            raise CliError(f"{changed_files(files, digests)[0]} changed while the arena read it: run the command again")
        check_appendable("--records", records)
        done = read_back()
    except (MatchRecordsError, CliError) as err:
        for p in players:
            if hasattr(p, "close"):
                p.close()
        raise CliError(str(err)) from None
    info = sys.stderr if args.json else sys.stdout
    if done and args.until_decided:
        note = f" (resuming: {len(done)} games are there; rounds go on until the score is decided)"
    elif len(done) >= args.games:
        note = f" (the match is complete: its {args.games} games are there)"
    elif done:
        note = f" (resuming: {len(done)} of {args.games} games are there; the other {args.games - len(done)} are played)"
    else:
        note = ""
    if not args.json or not args.records or done:  # the default path, or a resume: said at the start
        print(f"records: {records}{note}", file=info, flush=True)
    progress = not (args.quiet or args.json)
    common = dict(seed=args.seed, progress=progress, opening_plies=args.opening_plies,
                  fixed_openings=args.fixed_openings, done=done, match=settings,
                  on_game_end=lambda record: append_record(records, record))
    try:
        if args.until_decided:
            result = play_until_decided(env, players[0], players[1], args.games, args.round, **common)
        else:
            result = play_match(env, players[0], players[1], args.games, **common)
    except KeyboardInterrupt:
        warn_changed(files, digests)
        finished = read_back()
        # The openings' length the match used (its plan may be longer than --opening-plies asks, where the
        # board has too few distinct openings of that length): the records say it.
        used_plies = max((r.opening for r in finished), default=env.game.opening_plies + args.opening_plies)
        partial = MatchResult.from_records(env.game.spec, names, finished, opening_plies=used_plies)
        again = "conhex-zero " + shlex.join(sys.argv[1:]) if sys.argv[1:2] == ["arena"] else \
            f"conhex-zero arena --resume {shlex.quote(str(records))}"
        if "--records" not in sys.argv and "--resume" not in sys.argv and sys.argv[1:2] == ["arena"]:
            again += f" --records {shlex.quote(str(records))}"
        kept = (f"every finished game is in {records}" if finished else
                f"no game had finished, so nothing was written to {records}" if not records.exists() else
                f"no game had finished ({records} holds none of this match)")
        print(f"\nconhex-zero arena: stopped after {len(finished)} of {args.games} games; {kept}; the same command "
              f"continues the match: {again}", file=sys.stderr, flush=True)
        if finished:
            report(partial, records, args, stopped=True)
        return 130
    finally:
        for p in players:
            if hasattr(p, "close"):
                p.close()
    if result.openings_repeat:
        warn("arena", f"{result.game} has only {result.openings_available} distinct openings of "
             f"{plural(result.opening_plies, 'ply', 'plies')} for {plural((result.games + 1) // 2, 'pair')}: some "
             f"openings repeat, and the intervals count each distinct game once")
    changed = warn_changed(files, digests)
    if args.ladder and changed:
        warn("arena", f"the match is not added to {args.ladder}: a checkpoint changed during it (its ladder name "
             f"would now stand for another model)")
    elif args.ladder:
        add_to_ladder(args, players, result, env.game.spec, settings)
    report(result, records, args)
    return 0


def checkpoint_files(specs: list[str]) -> list[str | None]:
    """Per player, the checkpoint file it reads (None for random, rollout and GTP players)."""
    from conhex_zero.agents.player_specs import parse_player

    return [parse_player(spec).path for spec in specs]


def digests_of(files: list[str | None]) -> list[str | None]:
    """Per player, the digest of its checkpoint file's bytes now (None without one)."""
    from conhex_zero.nn.checkpoint_files import CheckpointError, checkpoint_digest

    try:
        return [None if f is None else checkpoint_digest(f) for f in files]
    except CheckpointError as err:
        raise CliError(str(err)) from None


def changed_files(files: list[str | None], digests: list[str | None]) -> list[str]:
    """The checkpoint files whose bytes differ from ``digests`` (or that can no longer be read)."""
    from conhex_zero.nn.checkpoint_files import CheckpointError, checkpoint_digest

    changed = []
    for path, digest in zip(files, digests):
        if path is None:
            continue
        try:
            now = checkpoint_digest(path)
        except CheckpointError:
            now = None
        if now != digest:
            changed.append(path)
    return changed


def warn_changed(files: list[str | None], digests: list[str | None]) -> bool:
    """A warning for each checkpoint replaced or changed during the match (the games were all played
    by the model it held when the match began, whose digest the records name); whether any was."""
    changed = changed_files(files, digests)
    for path in changed:
        digest = digests[files.index(path)]
        warn("arena", f"{path} changed during the match: all its games were played by the model it held when the "
             f"match began (sha256 {digest}, as the records say); the same command now starts a new match")
    return bool(changed)


def add_to_ladder(args: argparse.Namespace, players: list, result, game: str, settings: dict) -> None:
    """The match's distinct games into ``--ladder DIR``, once: a match already there (a finished
    match run again, a resumed one) is not counted twice. A checkpoint player is entered with the
    digest of its file (``sha256``); a name the ladder holds for another digest (the file retrained
    or replaced since) is another model under the same name, and the match is not added."""
    import hashlib
    import json

    from conhex_zero.files.jsonl import read_jsonl
    from conhex_zero.ladder.store import FILENAME, Ladder

    match_id = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]
    path = Path(args.ladder) / FILENAME
    if path.is_file() and any(e.get("match") == match_id for e in read_jsonl(path)):
        warn("arena", f"{path} holds this match's games already: not added again")
        return
    ladder = Ladder.open(args.ladder)
    digests = settings.get("checkpoints") or [None, None]
    for player, digest in zip(players, digests):
        known = ladder.players.get(player.name, {}).get("sha256")
        if digest is not None and known is not None and known != digest:
            warn("arena", f"the match is not added to {path}: its player {player.name} is another model than the one "
                 f"rated there under that name (sha256 {known} there, {digest} now); give the file another name")
            return
    for spec, player, digest in zip((args.player1, args.player2), players, digests):
        kind = "reference" if spec == "random" or spec.startswith("mcts-rollout") else "player"
        if player.name not in ladder.players:
            ladder.add_player(player.name, kind, **({"sha256": digest} if digest else {}))
    ladder.add_match(players[0].name, players[1].name, result.distinct_wins_by_colour(), game, match=match_id)


def _effort_text(effort: dict) -> str:
    parts = []
    if effort["seconds_per_move"] is not None:
        parts.append(f"{effort['seconds_per_move']:.3g} s")
    sims = effort["sims_per_move"]
    if sims is not None:
        parts.append(f"{sims['mean']:,.0f} simulations (least {sims['min']:,})")
    if effort["moves_cut"] is not None:
        parts.append(f"{effort['moves_cut']} of {effort['moves']} moves cut by the clock")
    return ", ".join(parts) or "-"


def report(result, records: Path, args: argparse.Namespace, stopped: bool = False) -> None:
    """The match's result: JSON with --json, else the summary lines."""
    scoring = result.scoring() if args.scoring and result.games % 2 == 0 else None
    if args.json:
        print_json({**result.to_json(records), **(scoring.to_json() if scoring else {}),
                    **({"stopped": True, "games_planned": args.games} if stopped else {})})
        return
    low, high = result.score_ci95
    elo_low, elo_high = result.elo_ci95
    print(f"{result.game}: {result.games} games{f' of {args.games} (stopped)' if stopped else ''} in "
          f"colour-exchanged pairs over random openings ({plural(result.opening_plies, 'ply', 'plies')})"
          + (f"; {'decided' if result.decided else 'not decided'} after {plural(result.rounds, 'round')}"
             if args.until_decided and not stopped else ""))
    print(f"  {result.distinct_games} distinct games, {plural(result.distinct_openings, 'distinct opening')}"
          + (f" (the board has {result.openings_available} of {plural(result.opening_plies, 'ply', 'plies')}: "
             "some openings repeat)" if result.openings_repeat else ""))
    width = max(len(n) for n in result.players)
    for k, key in enumerate(("player1", "player2")):
        first, second = result.wins_by_colour[key]
        print(f"  {result.players[k]:<{width}}  {plural(result.wins[k], 'win'):>10}   "
              f"(moving first {first}, second {second})")
    if result.distinct_games < result.games:
        print(f"score of {result.players[0]}: {result.score:.3f} over all games; over the "
              f"{result.distinct_games} distinct games {result.distinct_score:.3f} [{low:.3f}, {high:.3f}]   "
              f"Elo difference {_elo(result.elo)} [{_elo(elo_low)}, {_elo(elo_high)}] (95%)")
    else:
        print(f"score of {result.players[0]}: {result.score:.3f} [{low:.3f}, {high:.3f}]   "
              f"Elo difference {_elo(result.elo)} [{_elo(elo_low)}, {_elo(elo_high)}] (95%)")
    print(f"mean game length {result.mean_length:.1f} plies; forfeits {result.forfeits}; records: {records}")
    print("per move: " + "; ".join(f"{name} {_effort_text(e)}" for name, e in zip(result.players, result.effort())))
    if scoring:
        print_scoring(scoring, result.players)


def print_scoring(scoring, names: tuple[str, str]) -> None:
    """The scoring variant's pairs: score with interval, pieces per win, each pair by opening."""
    low, high = scoring.pair_score_ci95
    counts, pieces = scoring.counts(), scoring.pieces_per_win()
    print(f"scoring variant, {len(scoring.pairs)} pairs: {names[0]} wins {counts['player1']}, {names[1]} wins "
          f"{counts['player2']}, {counts['draw']} drawn; pair score of {names[0]}: {scoring.pair_score:.3f} "
          f"[{low:.3f}, {high:.3f}] (95%)")
    for k, name in enumerate(names):
        per_win = pieces[f"player{k + 1}"]
        print(f"  {name}: {'no win' if per_win is None else f'{per_win:.1f} pieces per win'}")
    print("  opening        game 1 (P1 first)      game 2 (P2 first)      totals P1/P2   pair")
    for pair in scoring.pairs:
        games = []
        for w, n in zip(pair.winners, pair.pieces):
            games.append(f"{'P1' if w == 0 else 'P2'} wins, {n} pieces")
        totals = "/".join("-" if t is None else str(t) for t in pair.totals)
        result = {"player1": "P1", "player2": "P2", "draw": "draw"}[pair.result]
        print(f"  {' '.join(pair.opening) or '(empty)':<14} {games[0]:<22} {games[1]:<22} {totals:<14} {result}")

"""Every game an arena reads back from its records file, replayed before it counts.

A records file is plain text: a line can be damaged, or edited by hand (``"winner": 1`` where the
moves end with the first player's connection, ``"winner": 7``, a move changed). A resumed match
counts the games it reads, so each is checked as ``replay --record`` checks one, all at once (one
batch of the rules engine, in chunks): the moves are legal from the empty board; a game recorded as
won by ``connection`` ends with that connection and its recorded winner, a forfeited one is still
running and was lost by the player to move; the winner's name, the players' colours (player 1 moves
first in the even games of each pair), the opening's length, the final ply and the winner's pieces
are what the moves say, and the opening is the one the match's seed gives the game's pair (the
same stones in another order are another game). The first record that differs raises ``MatchRecordsError`` naming its file
and line, what differs, and what to do (delete the line and its game is played again, or move the
file away): never counted as it says.
"""

from __future__ import annotations

from typing import Any, Sequence

import torch

from conhex_zero.agents.match_records import MatchRecordsError
from conhex_zero.agents.match_result import GameRecord
from conhex_zero.agents.scoring import pieces_placed
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.games.game import MoveError

CHUNK = 4096
"""Games replayed at once (bounds the memory of a check of a very long match)."""


def _refuse(where: str, what: str) -> MatchRecordsError:
    return MatchRecordsError(f"{where}: {what}: the record was damaged or edited (a game counts only as its moves "
                             f"end); delete that line to play the game again, or move the file away")


def check_records(env: VecEnv, records: Sequence[tuple[str, GameRecord]], names: tuple[str, str],
                  settings: dict[str, Any]) -> None:
    """``MatchRecordsError`` for the first of ``records`` (``(where, record)``: file and line, and the
    record) that its moves contradict (see the module docstring); ``names`` are the players' names
    (player 1, player 2), ``settings`` the match's (``match_records.match_settings``)."""
    for start in range(0, len(records), CHUNK):
        _check_chunk(env, records[start:start + CHUNK], names, settings)
    if records and all(settings.get(k) is not None for k in ("games", "seed")):
        _check_openings(env, records, settings)


def _match_openings(env: VecEnv, settings: dict[str, Any]):
    """The opening plan the match's seed gives it, and game index -> its pair's row in the plan, as
    ``play_match`` and ``play_until_decided`` draw them."""
    from conhex_zero.agents.match_openings import plan_openings

    games, rounds = int(settings["games"]), settings.get("round") if settings.get("until_decided") else None
    if rounds:
        pairs = [(min(rounds, games - start) + 1) // 2 for start in range(0, games, rounds)]
        first_pair = [sum(pairs[:k]) for k in range(len(pairs))]

        def pair_of(index: int) -> int:
            return first_pair[index // rounds] + (index % rounds) // 2
    else:
        pairs = [(games + 1) // 2]

        def pair_of(index: int) -> int:
            return index // 2
    plan = plan_openings(env.game, sum(pairs), env.game.opening_plies + int(settings.get("opening_plies") or 0),
                         int(settings["seed"]) * 1_000_003 + 7_777_777, fixed=bool(settings.get("fixed_openings")))
    return plan, pair_of


def _check_openings(env: VecEnv, records: Sequence[tuple[str, GameRecord]], settings: dict[str, Any]) -> None:
    """Each game opens with the moves the match's seed gives its pair (not, say, the same stones in
    another order: a record whose opening was edited is another game than the one the match plays)."""
    plan, pair_of = _match_openings(env, settings)
    for where, r in records:
        pair = pair_of(r.index)
        if not 0 <= pair < plan.pairs:
            raise _refuse(where, f"game {r.index} is not a game of this {settings['games']}-game match")
        expected = [env.game.action_name(int(a)) for a in plan.moves[pair]]
        if r.opening != plan.plies or [env.game.action_name(env.game.parse_move(m)) for m in r.moves[:plan.plies]] \
                != expected:
            raise _refuse(where, f"game {r.index} opens with {' '.join(r.moves[:r.opening])[:80]}; this match's seed "
                                 f"opens it with {' '.join(expected)[:80]}")


def _expected_colours(record: GameRecord, names: tuple[str, str], settings: dict[str, Any]) -> tuple[str, str]:
    """(first, second) of a game: player 1 moves first in the even games of each pair; pairs count
    from each round's first game with --until-decided (whose rounds may hold an odd number)."""
    local = record.index % settings["round"] if settings.get("until_decided") and settings.get("round") else \
        record.index
    return (names[0], names[1]) if local % 2 == 0 else (names[1], names[0])


def _check_chunk(env: VecEnv, chunk: Sequence[tuple[str, GameRecord]], names: tuple[str, str],
                 settings: dict[str, Any]) -> None:
    game = env.game
    least_opening = game.opening_plies + int(settings.get("opening_plies") or 0)
    actions: list[list[int]] = []
    for where, r in chunk:
        if r.game != game.spec:
            raise _refuse(where, f"the record's game is {r.game[:40]!r}, this match's {game.spec}")
        first, second = _expected_colours(r, names, settings)
        if (r.first, r.second) != (first, second):
            raise _refuse(where, f"game {r.index} names {r.first[:60]!r} first and {r.second[:60]!r} second; in this "
                                 f"match {first[:60]!r} moves first in it")
        if r.winner not in (0, 1):
            raise _refuse(where, f"game {r.index}'s winner is {r.winner!r}, not 0 (the first player) or 1 (the second)")
        if r.winner_name != (first, second)[r.winner]:
            raise _refuse(where, f"game {r.index}'s winner is {r.winner} but its winner_name is "
                                 f"{r.winner_name[:60]!r}")
        if r.result != "connection" and not r.result.startswith("forfeit: "):
            raise _refuse(where, f"game {r.index}'s result is {r.result[:40]!r}, not connection or forfeit")
        if len(r.moves) > game.max_plies:
            raise _refuse(where, f"game {r.index} has {len(r.moves)} moves, more than a {game.spec} game can have")
        fixed = bool(settings.get("fixed_openings"))
        if r.opening > len(r.moves) or (r.opening != least_opening if fixed else r.opening < least_opening):
            raise _refuse(where, f"game {r.index}'s opening of {r.opening} moves does not fit this match "
                                 f"({'exactly' if fixed else 'at least'} {least_opening}, at most its "
                                 f"{len(r.moves)} moves)")
        try:
            actions.append([game.parse_move(m) for m in r.moves])
        except MoveError as err:
            raise _refuse(where, f"game {r.index}: {str(err)[:200]}") from None
    G = len(chunk)
    if G == 0:
        return
    lengths = torch.tensor([len(a) for a in actions], dtype=torch.long)  # [G]
    L = int(lengths.max())
    moves = torch.zeros(G, max(L, 1), dtype=torch.long)  # [G, L], 0-padded past each game's end
    for g, a in enumerate(actions):
        moves[g, :len(a)] = torch.tensor(a, dtype=torch.long)
    moves, lengths = moves.to(env.device), lengths.to(env.device)
    state = env.initial_state(G)
    for ply in range(L):
        playing = lengths > ply  # [G]
        action = moves[:, ply]  # [G]
        legal = env.legal_mask(state).gather(1, action[:, None])[:, 0]  # [G]
        wrong = playing & ~legal
        if bool(wrong.any()):
            g = int(wrong.nonzero()[0, 0])
            where, r = chunk[g]
            over = " after the game was over" if bool(state.done[g]) else ""
            raise _refuse(where, f"game {r.index}'s move {ply + 1} ({r.moves[ply][:20]}) is not legal there{over}")
        state = state.where(playing, env.step(state, action))
    recorded = torch.tensor([r.winner for _, r in chunk], dtype=torch.long, device=state.holes.device)  # [G]
    pieces = pieces_placed(state.holes, recorded)  # [G] the recorded winner's pieces (a forfeit's too)
    for g, (where, r) in enumerate(chunk):
        ended = int(state.winner[g])
        if r.result == "connection":
            if ended != r.winner:
                said = "no connection" if ended < 0 else f"the connection of player {ended}"
                raise _refuse(where, f"game {r.index} is recorded as won by {r.winner_name[:60]!r} (winner {r.winner}) "
                                     f"by connection, but its moves end with {said}")
        else:
            if ended >= 0:
                raise _refuse(where, f"game {r.index} is recorded as a forfeit, but its moves end with the "
                                     f"connection of player {ended}")
            if r.winner != 1 - int(state.to_move[g]):
                raise _refuse(where, f"game {r.index} is recorded as a forfeit won by player {r.winner}, the player "
                                     f"who was to move")
        if r.plies is not None and r.plies != int(state.ply[g]):
            raise _refuse(where, f"game {r.index}'s plies are {r.plies}, but its moves make {int(state.ply[g])}")
        if r.pieces is not None and r.pieces != int(pieces[g]):
            raise _refuse(where, f"game {r.index}'s winner placed {int(pieces[g])} pieces, not the {r.pieces} recorded")

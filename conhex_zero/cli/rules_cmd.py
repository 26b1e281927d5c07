"""``conhex-zero rules GAME [--json]``: the board picture, its counts and the rule options."""

from __future__ import annotations

import argparse
from collections import Counter
from typing import TYPE_CHECKING

from conhex_zero.cli.common import HelpFormatter, print_json, use_color

if TYPE_CHECKING:  # the game modules are imported where used: --help stays fast
    from conhex_zero.games.game import Game

SPEC_HELP = """\
GAME is a spec string: NAME[:OPTION,...] with NAME conhex, hex (= hex-11) or hex-N (N = 2..19).
Options: swap / noswap (pie rule; default on for conhex, off for hex), forbid=K (the first move may
not be on a hole at depth >= K from the frame), random=K (K random opening pieces per player),
extra-stone (the second player's first turn places two pieces), mirror=K (the mirror-move limit).

The mirror-move limit (mirror=K; the Italian Hex sheet's "Variante Mosse Speculari" is K = 2): a
move mirrors when it is the image of the opponent's immediately preceding move under one fixed
non-identity symmetry of the board (Hex: the 180-degree turn and the two diagonal reflections;
ConHex: its seven turns and reflections, listed by --json as mirror_symmetries). A player may make
at most K consecutive mirror moves under the same symmetry: the (K+1)-th is illegal (it is missing
from the legal moves, and replay, play, serve and GTP refuse it with the reason). Streaks count per
player and per symmetry: a move resets the player's streak of every symmetry under which it
is not a mirror. The
swap, and a move that follows one's own move (the extra stone), mirror nothing and end the player's
streaks; the swap ends both players' streaks.

The scoring variant ("Variante Punteggio") is a match format, not a rule option: see
'conhex-zero arena --help' (--scoring). Games are played in pairs with colours exchanged; the winner
of a game scores the pieces they placed, and over a pair the lower total wins (a player who wins
both games wins the pair; equal totals make a drawn pair, worth half to each, because any tie break
would bring back the first-move advantage that the pair cancels).
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rules", help="show a board, its counts and rule options",
                       description="Show the board picture (cell ids, empty holes; on Hex the cells) and "
                       "its counts.\n\n"
                       + SPEC_HELP, formatter_class=HelpFormatter)
    p.add_argument("game", nargs="?", default="conhex", help="game spec (default: conhex)")
    p.add_argument("--json", action="store_true",
                   help="print the board tables as JSON (holes, cells, adjacency, players)")
    p.set_defaults(run=run)


def board_json(game: Game) -> dict:
    from conhex_zero.games.board import PLAYER_SIDES, SIDE_NAMES
    from conhex_zero.games.render import PLAYER_NAMES

    b = game.board
    names = b.hole_names
    return {
        "game": game.spec,
        "holes": [{"name": n, "x": x, "y": y} for n, (x, y) in zip(names, b.hole_xy)],
        "cells": [{"holes": [names[h] for h in holes], "need": need,
                   "sides": [SIDE_NAMES[s] for s in sides], "kind": kind}
                  for holes, need, sides, kind in zip(b.cell_holes, b.cell_need, b.cell_sides, b.cell_kind)],
        "adjacency": [list(pair) for pair in b.adjacency],
        "players": [{"name": PLAYER_NAMES[p], "sides": [SIDE_NAMES[s] for s in PLAYER_SIDES[p]]}
                    for p in range(2)],
        "symmetries": [{"name": s.name, "exchanges_sides": s.exchanges_sides} for s in b.symmetries],
        "rules": {"swap": game.swap, "forbid": game.forbid_depth, "random": game.random_pieces,
                  "extra_stone": game.extra_stone, "mirror": game.mirror,
                  "mirror_symmetries": list(game.mirror_symmetries)},
    }


def describe(game: Game) -> str:
    from conhex_zero.games.board import PLAYER_SIDES, SIDE_NAMES
    from conhex_zero.games.render import PLAYER_NAMES

    b = game.board
    if b.hole_word == "cell":  # Hex: a piece goes on a cell, and a cell is won by its one piece
        lines = [f"{game.spec}: {b.num_cells} cells, {len(b.adjacency)} adjacent cell pairs"]
    else:
        lines = [f"{game.spec}: {b.num_holes} holes, {b.num_cells} cells, "
                 f"{len(b.adjacency)} adjacent cell pairs"]
        kinds = Counter((k, len(h), n) for k, h, n in zip(b.cell_kind, b.cell_holes, b.cell_need))
        lines.append("cells: " + ", ".join(f"{count} {kind} ({holes} hole{'s' * (holes > 1)}, need {need})"
                                          for (kind, holes, need), count in kinds.items()))
        per_hole = Counter(len(cs) for cs in b.hole_cells)
        lines.append("holes by cells they lie on: " + ", ".join(
            f"{count} on {k}" for k, count in sorted(per_hole.items(), reverse=True)))
    degree = {}
    for c, kind in enumerate(b.cell_kind):
        degree.setdefault(kind, set()).add(len(b.neighbours[c]))
    lines.append("neighbours per cell: " + ", ".join(
        (f"{kind} " if len(degree) > 1 else "") + "/".join(map(str, sorted(d))) for kind, d in degree.items()))
    for p in range(2):
        a, z = PLAYER_SIDES[p]
        sizes = [int(b.side_masks[s].sum()) for s in (a, z)]
        lines.append(f"player {PLAYER_NAMES[p]} ({'first' if p == 0 else 'second'}) connects "
                     f"{SIDE_NAMES[a]} ({sizes[0]} cells) and {SIDE_NAMES[z]} ({sizes[1]} cells)")
    exch = sum(s.exchanges_sides for s in b.symmetries)
    lines.append(f"symmetries: {len(b.symmetries)} ({exch} exchange the players' sides)")
    lines.append("rules: " + game.rules_summary)
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from conhex_zero.games.game import parse_game
    from conhex_zero.games.render import render_board

    game = parse_game(args.game)
    if args.json:
        print_json(board_json(game))
        return 0
    b = game.board
    print(render_board(b, [-1] * b.num_holes, [-1] * b.num_cells, cell_ids=True, color=use_color()))
    print()
    print(describe(game))
    return 0

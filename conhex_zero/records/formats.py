"""Game records in and out: our arena's JSON lines, and SGF as Little Golem, HexGui and PlayHex write it.

Conventions, checked by replaying real games (see ``tests/fixtures/records/README.txt``):

* **Little Golem ConHex** (``(;FF[CONHEX]VA[CONHEX]EV[..]PB[..]PW[..]SO[..];B[J3];R[H5];...;R[resign])``):
  ``B`` moves first and connects top and bottom (our X, player 0), ``R`` second (our O); ``PB`` and
  ``PW`` name them. Points are hole labels with rows counted from the *bottom*: label ``J3`` is our
  ``J9`` (row = 12 - label row); the centre is F6 either way. ``R[swap]`` takes the first piece:
  Little Golem mirrors it in its own diagonal (label ``J3`` becomes ``C10``, the A11-K1 diagonal of
  our picture) while our engine mirrors in A1-K11, so the piece before a swap is stored turned by
  180 degrees (a symmetry that keeps every side) and the engine's position after the swap is then
  exactly Little Golem's. ``resign`` ends a game; a result ``RE`` is read when present.
* **Little Golem Hex** (``(;FF[4]EV[hex..]PB[..]PW[..]SZ[13]RE[B]..;W[mf];B[swap];W[kj];...)``): the
  first player is tagged ``W`` and named by ``PB``; ``RE[B]`` means PB (the first player) won,
  ``RE[W]`` PW. Points are two letters, column then row from the top-left (``mf`` = ``m6``), and
  ``swap`` is our swap (the piece mirrored in the long diagonal, the first player moves again).
  Little Golem does not escape ``]`` or ``\\`` in names.
* **Hex SGF** (``GM[11]``, HexGui, MoHex/benzene, PlayHex): ``B`` moves first, connects top and
  bottom, ``a1`` is the top-left cell. ``swap-pieces`` followed by a move of the *other* colour is
  our swap; ``swap-sides`` — and ``swap-pieces`` followed by the swapper's own colour, as HexGui up
  to 1.0 wrote it (HexGui's reader makes the same correction) — leaves the piece where it is and
  exchanges the players' colours: we store it as our swap with every later move mirrored, so the
  first player stays X. ``RE[B+..]`` means PB won, ``+R``/``+Resign`` by resignation, ``+F``/``+T`` by
  forfeit or time.

Our writer emits Little Golem style for ConHex and Hex SGF (``GM[11]``, ``swap-pieces``, colours
alternating as in PlayHex and HexGui >= 1.1) for Hex, plus ``RU[<game spec>]`` so that variants
(``hex-5`` without swap, ``conhex:random=1``) read back exactly.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from conhex_zero import __version__
from conhex_zero.env.notation import IllegalMoveError, play_moves
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.files.untrusted import loads_json
from conhex_zero.games.game import SWAP_NAME, Game, GameSpecError, parse_game
from conhex_zero.records.model import GameRecordData, RecordError, clip
from conhex_zero.records.sgf import SgfGame, SgfNode, SgfSyntaxError, format_props, parse_sgf

SWAP_TOKENS = ("swap", "swap-pieces", "swap-sides")
_CARRIED = ("EV", "GN", "DT", "PC", "SO", "GC")  # game information copied into written SGF


@lru_cache(maxsize=16)
def _env(spec: str) -> VecEnv:
    return VecEnv(spec)


# ============================================================ arena JSON lines
def _shown(value: Any, limit: int = 40) -> str:
    """A value from a file, for a message: its JSON text, shortened."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def record_from_arena(obj: Any, source: str = "") -> GameRecordData:
    """A record from one line of an arena record file (``GameRecord`` as JSON). Every field is
    checked: a wrong one raises ``RecordError`` naming the field (and ``source``: file and line)."""
    if not isinstance(obj, dict):
        raise RecordError(f"{source}: not an arena record (expected a JSON object, not {_shown(obj)})")
    missing = [k for k in ("game", "moves", "first", "second", "winner", "result") if k not in obj]
    if missing:
        raise RecordError(f"{source}: not an arena record (missing {', '.join(missing)})")

    def bad(key: str, expected: str) -> RecordError:
        return RecordError(f"{source}: field {key!r} is {_shown(obj[key])}, expected {expected}")

    for key in ("game", "first", "second", "result"):
        if not isinstance(obj[key], str):
            raise bad(key, "a string")
    try:
        game = parse_game(obj["game"])
    except GameSpecError as err:
        why = str(err)
        for raw in {obj["game"], obj["game"].strip().lower()}:
            why = why.replace(raw, clip(raw)) if len(raw) > 40 else why
        raise RecordError(f"{source}: field 'game' is {_shown(obj['game'])}, not a game spec ({clip(why, 300)})") from None
    moves = obj["moves"]
    if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
        raise bad("moves", "a list of move names")
    if len(moves) > game.max_plies:
        raise RecordError(f"{source}: field 'moves' has {len(moves)} moves, more than a {game.spec} game can have")
    winner = obj["winner"]
    if winner is not None and not (_is_int(winner) and winner in (0, 1)):
        raise bad("winner", "0 (the first player), 1 (the second) or null")
    index = obj.get("index", 0)
    if not _is_int(index) or index < 0:
        raise bad("index", "a whole number, 0 or more")
    for key in ("winner_name",):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise bad(key, "a string")
    for key in ("opening", "seed"):
        if obj.get(key) is not None and not _is_int(obj[key]):
            raise bad(key, "a whole number")
    result = obj["result"]
    ending, detail = "unknown", ""
    if result == "connection":
        ending = "connection"
    elif result.startswith("forfeit"):
        ending, detail = "forfeit", result.partition(":")[2].strip()
    return GameRecordData(game=obj["game"], moves=list(moves), players=(obj["first"], obj["second"]),
                          winner=winner, ending=ending, format="arena", index=index, source=source,
                          properties=dict(obj), detail=detail)


def parse_arena_lines(text: str, source: str = "<text>") -> list[GameRecordData]:
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = loads_json(line)
        except json.JSONDecodeError as err:
            raise RecordError(f"{source}: line {number}, column {err.colno}: not a JSON object "
                              f"({err.msg})") from None
        out.append(record_from_arena(obj, f"{source}: line {number}"))
    return out


# ===================================================================== SGF in
def _result(value: str, where: str) -> tuple[int | None, str | None]:
    """(winner, ending) of an ``RE`` value: ``B``, ``W+R``, ``B+Resign``, ``W+F``, ``?``..."""
    text = value.strip()
    if not text or text in ("?", "0") or text.lower() in ("void", "draw", "unknown"):
        return None, None
    first = text[0].upper()
    if first not in "BWR":
        raise RecordError(f"{where}: RE[{clip(value)}] is not a result (expected B, W, B+, W+R, B+Resign ...)")
    winner = 0 if first == "B" else 1
    reason = text[1:].lstrip("+").strip().lower()
    if reason in ("r", "resign"):
        return winner, "resign"
    if reason in ("f", "forfeit", "t", "time"):
        return winner, "forfeit"
    return winner, None


def _kind(game: SgfGame, where: str) -> str:
    root = game.root
    ff, va = (root.get("FF") or "").strip().upper(), (root.get("VA") or "").strip().upper()
    ev, so = (root.get("EV") or "").strip().lower(), (root.get("SO") or "").lower()
    gm = root.get("GM")
    if ff == "CONHEX" or va == "CONHEX" or ev.startswith("conhex"):
        return "littlegolem-conhex"
    if gm is not None:
        if gm.strip() != "11":
            raise RecordError(f"{where}: GM[{clip(gm)}] is not Hex: expected GM[11] (Hex) or FF[CONHEX] "
                              f"(Little Golem ConHex)")
        return "sgf-hex"
    if ev.startswith("hex") or "littlegolem" in so:
        return "littlegolem-hex"
    for node in game.nodes:
        for tag in ("B", "W"):
            value = (node.get(tag) or "").strip()
            if re.fullmatch(r"[a-s]{2}", value):
                return "littlegolem-hex"
            if re.fullmatch(r"[a-sA-S]\d{1,2}", value):
                return "sgf-hex"
    raise RecordError(f"{where}: cannot tell the game: expected FF[CONHEX] (Little Golem ConHex), "
                      f"GM[11] (Hex SGF) or a Little Golem Hex record (EV[hex...])")


def _board_size(root: SgfNode, where: str) -> int:
    text = (root.get("SZ") or "11").strip()
    m = re.fullmatch(r"(\d+)(?:\s*:\s*(\d+))?", text)
    if not m or (m.group(2) and m.group(2) != m.group(1)):
        raise RecordError(f"{where}: SZ[{clip(text)}] is not a square board size")
    if len(m.group(1).lstrip("0")) > 4:  # no board is that large: never convert thousands of digits
        raise RecordError(f"{where}: SZ[{clip(text)}] is not a board size this program plays")
    return int(m.group(1).lstrip("0") or "0")


def _spec(kind: str, root: SgfNode, where: str) -> Game:
    if kind == "littlegolem-conhex":
        board, default = "conhex", "conhex"
    else:
        n = _board_size(root, where)
        board, default = f"hex-{n}", f"hex-{n}:swap"  # Little Golem and the olympiads play with swap
    rules = root.get("RU")
    if rules:
        try:
            game = parse_game(rules)
        except GameSpecError:
            game = None  # free-form rules text (not ours)
        if game is not None:
            if game.board.name != board:
                raise RecordError(f"{where}: RU[{clip(rules)}] is a {game.board.name} game, but the record is {board}")
            return game
    try:
        return parse_game(default)
    except GameSpecError as err:
        raise RecordError(f"{where}: {err}") from None


def _hole(kind: str, game: Game, value: str) -> int | None:
    """The hole id of a point as the format writes it, or None when it is not a point."""
    board = game.board
    if kind == "littlegolem-conhex":
        m = re.fullmatch(r"([A-Ka-k])(\d{1,2})", value)
        if not m or not 1 <= int(m.group(2)) <= 11:
            return None
        return board.hole_index.get(f"{m.group(1).lower()}{12 - int(m.group(2))}")
    m = re.fullmatch(r"([a-sA-S])(\d{1,2})", value)
    if m:
        return board.hole_index.get(f"{m.group(1).lower()}{int(m.group(2))}")
    m = re.fullmatch(r"([a-s])([a-s])", value)
    if m:
        return board.hole_index.get(f"{m.group(1)}{ord(m.group(2)) - ord('a') + 1}")
    return None


def _point_help(kind: str, game: Game) -> str:
    if kind == "littlegolem-conhex":
        return ("Little Golem ConHex points are hole labels with rows counted from the bottom "
                "(A11 is the top-left corner, K1 the bottom-right)")
    n = int(game.board.name.split("-")[1])
    last = "abcdefghijklmnopqrs"[n - 1]
    return f"Hex points are a1 .. {last}{n} (or two letters, aa .. {last}{last})"


def _move_nodes(game: SgfGame) -> list[tuple[SgfNode, str, str]]:
    """(node, colour tag, value) of every move of the main line."""
    out = []
    for node in game.nodes:
        tags = [t for t in ("B", "W", "R") if t in node.props]
        if not tags:
            setup = [t for t in ("AB", "AW", "AE") if t in node.props]
            if setup:
                raise RecordError(f"line {node.line}: setup stones ({', '.join(setup)}) are not supported: "
                                  f"only games played from the empty board")
            continue
        if len(tags) > 1:
            raise RecordError(f"line {node.line}: a node has two moves ({' and '.join(tags)})")
        values = node.props[tags[0]]
        if len(values) != 1:
            raise RecordError(f"line {node.line}: {tags[0]} has {len(values)} values; a move has one")
        out.append((node, tags[0], values[0].strip()))
    return out


def record_from_sgf(game: SgfGame, index: int = 0, source: str = "") -> GameRecordData:
    """A record from one parsed SGF game (not yet replayed: see ``check_record``)."""
    where = source or f"game {index}"
    kind = _kind(game, where)
    root = game.root
    spec = _spec(kind, root, where)
    board = spec.board
    rot180 = board.symmetry("rot180").hole_perm
    transpose = board.symmetry("transpose").hole_perm
    turns = spec.turn_table
    try:
        nodes = _move_nodes(game)
    except RecordError as err:
        raise RecordError(f"{where}: {err}") from None
    first_tag = nodes[0][1] if nodes else "B"
    moves: list[str] = []
    notation: list[str] = []
    mirrored = False  # after a swap-sides: the file's frame is the engine's mirrored, colours exchanged
    stop: tuple[str, int] | None = None  # ("resign"/"forfeit", player)
    for k, (node, tag, value) in enumerate(nodes):
        number = len(moves) + 1
        here = f"{where}: line {node.line}: move {number} ({tag}[{clip(value)}])"
        if stop is not None:
            raise RecordError(f"{here}: the game already ended with a {stop[0]}")
        player = 0 if tag == first_tag else 1
        if mirrored:
            player = 1 - player
        low = value.lower()
        if low in ("resign", "forfeit"):
            stop = (low, player)
            continue
        expected = int(turns[len(moves)]) if len(moves) < len(turns) else None
        if expected is not None and player != expected:
            raise RecordError(f"{here}: {tag} moves out of turn (it is the "
                              f"{'first' if expected == 0 else 'second'} player's turn)")
        if low in SWAP_TOKENS:
            nxt = nodes[k + 1][1] if k + 1 < len(nodes) and nodes[k + 1][2].lower() not in ("resign", "forfeit") \
                else None
            if low == "swap-sides" or (low == "swap-pieces" and nxt == tag):
                mirrored = True
            elif kind == "littlegolem-conhex" and moves and moves[-1] != SWAP_NAME:
                # Little Golem mirrors in the other diagonal: turn the swapped piece by 180 degrees
                moves[-1] = spec.action_name(rot180[spec.parse_move(moves[-1])])
            moves.append(SWAP_NAME)
            notation.append(value)
            continue
        if low == "pass" or low == "":
            raise RecordError(f"{here}: a pass is not a move in {board.name}")
        hole = _hole(kind, spec, value)
        if hole is None:
            raise RecordError(f"{here}: {clip(repr(value))} is not a point of the {board.name} board; "
                              f"{_point_help(kind, spec)}")
        if mirrored:
            hole = transpose[hole]
        moves.append(spec.action_name(hole))
        notation.append(value)

    winner, ending = None, "unknown"
    re_value = root.get("RE")
    re_winner, re_reason = _result(re_value, where) if re_value is not None else (None, None)
    if stop is not None:
        ending, winner = stop[0], 1 - stop[1]
        if re_winner is not None and re_winner != winner:
            raise RecordError(f"{where}: RE[{clip(re_value)}] says the {'first' if re_winner == 0 else 'second'} "
                              f"player won, but that player {'resigned' if ending == 'resign' else 'forfeited'}")
    elif re_winner is not None:
        winner, ending = re_winner, re_reason or "unknown"
    players = ((root.get("PB") or "").strip(), (root.get("PW") or "").strip())
    props = {ident: (values[0] if len(values) == 1 else list(values)) for ident, values in root.props.items()}
    return GameRecordData(game=spec.spec, moves=moves, players=players, winner=winner, ending=ending,
                          format=kind, notation=notation, index=index, source=where, properties=props)


def parse_sgf_records(text: str, source: str = "<text>") -> list[GameRecordData]:
    """The records of SGF text (several games may follow each other). Not yet replayed."""
    low = text.lower()
    lenient = "littlegolem" in low and "ap[conhex-zero:" not in low  # Little Golem does not escape
    try:
        games = parse_sgf(text, lenient=lenient)
    except SgfSyntaxError as err:
        raise RecordError(f"{source}: {err}") from None
    return [record_from_sgf(g, i, f"{source}: game {i}" if len(games) > 1 else source)
            for i, g in enumerate(games)]


# ===================================================================== checking
def check_record(record: GameRecordData, env: VecEnv | None = None) -> State:
    """Replay a record; return the final position (batch 1).

    Raises ``RecordError`` for an illegal move, and when a game that ends by connection is not won
    by the recorded winner. A game whose moves end in a connection becomes ``ending="connection"``
    with the engine's winner (a resignation recorded after the winning move is only a formality).
    """
    env = env or _env(record.game)
    prefix = f"{record.source}: " if record.source else ""
    try:
        state = play_moves(env, record.moves)
    except IllegalMoveError as err:
        i = err.move_number - 1
        shown = clip(record.moves[i]) if record.notation[i] == record.moves[i] else \
            f"{clip(record.notation[i])}, our {clip(record.moves[i])}"
        raise RecordError(f"{prefix}move {err.move_number} ({shown}): {clip(err.reason, 200)}") from None
    winner = int(state.winner[0])
    if winner >= 0:
        if record.winner is not None and record.winner != winner:
            raise RecordError(f"{prefix}the record says {clip(str(record.winner_name))} won, but the moves end with "
                              f"winner {winner}")
        record.winner, record.ending = winner, "connection"
    elif record.ending == "connection":
        raise RecordError(f"{prefix}the record says {clip(str(record.winner_name))} won, but the moves end with "
                          f"winner None")
    return state


# ================================================================= reading files
def parse_records(text: str, source: str = "<text>", check: bool = True) -> list[GameRecordData]:
    """Records from text: arena JSON lines (starting with ``{``) or SGF (starting with ``(``)."""
    body = text.lstrip("\ufeff \t\r\n")
    if body.startswith("{"):
        records = parse_arena_lines(text, source)
    elif body.startswith("("):
        records = parse_sgf_records(text, source)
    elif not body:
        raise RecordError(f"{source}: the file is empty")
    else:
        raise RecordError(f"{source}: not a game record file: expected arena records (JSON lines) or "
                          f"SGF text starting with '('")
    if check:
        for record in records:
            check_record(record)
    return records


def read_records(path: str | Path, check: bool = True) -> list[GameRecordData]:
    """The games of a record file: arena JSON lines or SGF (``.sgf``, ``.hsgf``, ``.txt``; Little
    Golem ConHex and Hex, HexGui, PlayHex), several games per file allowed. With ``check`` every
    game is replayed (``check_record``). Raises ``RecordError`` with the file, game and line."""
    path = Path(path)
    if not path.is_file():
        raise RecordError(f"no record file at {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        try:
            text = path.read_text(encoding="latin-1")
        except OSError as err:
            raise RecordError(f"{path}: cannot be read ({err})") from None
    except OSError as err:
        raise RecordError(f"{path}: cannot be read ({err})") from None
    return parse_records(text, str(path), check)


def select_record(records: list[GameRecordData], index: int, source: str = "the file") -> GameRecordData:
    """The record with ``index`` (an arena record's own index, else its position in the file)."""
    for record in records:
        if record.index == index:
            return record
    raise RecordError(f"{source} has no game with index {index}")


# ==================================================================== SGF out
def _result_value(record: GameRecordData) -> str | None:
    if record.winner is None:
        return None
    letter = "B" if record.winner == 0 else "W"
    return letter + {"resign": "+R", "forfeit": "+F"}.get(record.ending, "+")


def write_sgf(record: GameRecordData) -> str:
    """The record as SGF text: Little Golem style (``FF[CONHEX]``) for ConHex, ``GM[11]`` for Hex.

    Reading the text back (``parse_records``) gives the same game, moves, players and result.
    """
    game = parse_game(record.game)
    board = game.board
    conhex = board.name == "conhex"
    rot180 = board.symmetry("rot180").hole_perm
    turns = game.turn_table
    if len(record.moves) > len(turns):
        raise RecordError(f"{record.source}: too many moves for {board.name}")
    head: list[tuple[str, str]]
    if conhex:
        head = [("FF", "CONHEX"), ("VA", "CONHEX")]
    else:
        head = [("FF", "4"), ("GM", "11"), ("SZ", board.name.split("-")[1])]
    head += [("AP", f"conhex-zero:{__version__}"), ("RU", game.spec),
             ("PB", record.players[0]), ("PW", record.players[1])]
    head += [(k, str(record.properties[k])) for k in _CARRIED
             if isinstance(record.properties.get(k), (str, int)) and str(record.properties[k])]
    result = _result_value(record)
    if result:
        head.append(("RE", result))
    tags = ("B", "R") if conhex else ("B", "W")
    nodes = []
    for i, name in enumerate(record.moves):
        action = game.parse_move(name)
        if action == game.swap_action:
            value = "swap" if conhex else "swap-pieces"
        else:
            if conhex:
                if i + 1 < len(record.moves) and game.parse_move(record.moves[i + 1]) == game.swap_action:
                    action = rot180[action]  # Little Golem's swap mirrors in the other diagonal
                hole = board.hole_names[action]
                value = f"{hole[0].upper()}{12 - int(hole[1:])}"
            else:
                value = board.hole_names[action]
        nodes.append(f";{tags[int(turns[i])]}[{value}]")
    if record.ending in ("resign", "forfeit") and record.winner is not None:
        nodes.append(f";{tags[1 - record.winner]}[{record.ending}]")
    lines = ["(;" + format_props(head)]
    for start in range(0, len(nodes), 12):
        lines.append("".join(nodes[start:start + 12]))
    return "\n".join(lines) + ")\n"


def record_from_moves(game: str | Game, moves: list[str], players: tuple[str, str] = ("", ""),
                      source: str = "") -> GameRecordData:
    """A record of a move list (as ``conhex-zero replay GAME MOVES`` takes), result from the replay."""
    spec = parse_game(game)
    names = [spec.action_name(spec.parse_move(m)) for m in moves]
    record = GameRecordData(game=spec.spec, moves=names, players=players, source=source)
    check_record(record)
    return record

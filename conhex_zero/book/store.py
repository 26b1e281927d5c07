"""The book's files: ``DIR/book.jsonl.gz`` (the book as of its last compaction) and ``DIR/book.jsonl``
(what growth appended since), one JSON object a line, each line checksummed.

The first line is the header: the game, the model the book is grown with (file name and content
digest), the start position (``--after``), the search's settings. Then one line per event, in the
order they happened; reading replays them:

* ``node``: a position entered the book (its key, the real moves that reach it from the start, its
  legal moves, its first search: value, best move, proof, visits, the moves it visited);
* ``edge``: book moves of a node (canonical frame) that lead to a node (symmetric moves together);
* ``rest``: the node searched again, its book moves excluded;
* ``exact``: the exact solver's result for a node's player to move;
* ``round``: a round of growth ended (its new positions, searches and seconds), written with it;
* ``grow``: one run of ``book grow`` ended (command, model digest, minutes, nodes before and after).

Every line carries ``crc``, the CRC-32 of its other fields (as ``json.dumps`` with sorted keys
writes them): a changed byte anywhere is found on reading and named by its line. Lines are appended
a round of growth at a time and flushed to the disk (``fsync``) before the next round starts, so a
process killed at any moment loses at most the round in flight: its torn last line (no newline) is
dropped on reading, as ``files.jsonl`` does for every log. ``compact`` writes the book's present
state, one line per node, edge group and rest, compressed, into ``book.jsonl.gz`` (atomically: a new
file renamed over the old one) and then empties ``book.jsonl``; a process killed between the two
leaves lines in both, which replay to the same book (every line sets a state, so a line read twice
changes nothing). A shipped book is its ``book.jsonl.gz`` (about a fifth of the plain lines).

**Seals over the set of lines** (issue 58: a deleted ``edge`` line dropped an opening group, and
nothing noticed). A book whose header says ``"sealed": true`` (every book written since) follows
each batch of lines (a round of growth; the whole base at a compaction) with a ``seal`` line:
``lines``, how many lines the file holds before it (seals aside), and ``digest``, the SHA-256 chained
over their checksums in order. Reading recomputes both and refuses a file whose seal does not match
(a line deleted, duplicated, reordered or added), naming the file and the seal's line. Lines after
the last seal of ``book.jsonl`` are a round in flight when its process was killed: dropped, as the
torn last line is. A base must end with its seal. Books from before the seals (no ``sealed`` in the
header) are read as before. A seal is a checksum, not a signature: it finds damage and mistakes, not
an edit made on purpose and sealed again.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from pathlib import Path
from typing import Any, Iterable

from conhex_zero.book.graph import Book, MoveStats, Node, Search
from conhex_zero.files.disk import write_bytes_atomic, write_text_atomic
from conhex_zero.files.jsonl import JsonlError, append_jsonl, iter_jsonl
from conhex_zero.files.untrusted import loads_json

FORMAT = 1
BOOK_FILE = "book.jsonl"
"""The lines appended since the last compaction (all of a book that was never compacted)."""
BASE_FILE = "book.jsonl.gz"
"""The book as of its last compaction."""


class BookError(ValueError):
    """A book directory or file that cannot be used; says which and why, in one line."""


def crc(entry: dict[str, Any]) -> str:
    body = {k: v for k, v in entry.items() if k != "crc"}
    return f"{zlib.crc32(json.dumps(body, sort_keys=True).encode('utf-8')) & 0xFFFFFFFF:08x}"


def sealed(entry: dict[str, Any]) -> dict[str, Any]:
    return {**entry, "crc": crc(entry)}


class _Sealer:
    """The running count and chained digest of a file's lines (seal lines aside)."""

    def __init__(self):
        self.lines, self.digest = 0, hashlib.sha256().hexdigest()

    def add(self, entry: dict[str, Any]) -> None:
        self.lines += 1
        self.digest = hashlib.sha256(f"{self.digest} {entry.get('crc')}".encode()).hexdigest()

    def seal(self) -> dict[str, Any]:
        return sealed({"type": "seal", "lines": self.lines, "digest": self.digest})


def _with_seals(entries: list[dict[str, Any]], sealer: _Sealer) -> list[dict[str, Any]]:
    """``entries`` (checksummed each) followed by the seal of the file they end."""
    out = []
    for e in entries:
        e = sealed(e)
        sealer.add(e)
        out.append(e)
    return out + [sealer.seal()]


def _verified(path: Path, numbered: list[tuple[int, dict[str, Any]]], strict: bool) -> list[tuple[int, dict[str, Any]]]:
    """The lines of a sealed file up to its last seal, every seal checked (``BookError`` naming the
    file and the seal's line otherwise); ``strict``: no line may follow the last seal (a base)."""
    sealer, kept, sealed_up_to = _Sealer(), [], 0
    for number, entry in numbered:
        if entry.get("type") == "seal":
            if entry.get("lines") != sealer.lines or entry.get("digest") != sealer.digest:
                raise BookError(f"{path}:{number}: the seal does not match the {sealer.lines} lines before it (it "
                                f"seals {entry.get('lines')}): a line was deleted, added, duplicated or moved; a book "
                                f"is written only by conhex-zero book grow")
            sealed_up_to = len(kept)
            continue
        sealer.add(entry)
        kept.append((number, entry))
    if strict and sealed_up_to != len(kept):
        raise BookError(f"{path}: {len(kept) - sealed_up_to} lines after its last seal: the file was cut or edited")
    return kept[:sealed_up_to]


def book_path(folder: str | Path) -> Path:
    return Path(folder) / BOOK_FILE


def is_book(folder: str | Path) -> bool:
    """Whether the folder holds a book's files."""
    return (Path(folder) / BOOK_FILE).is_file() or (Path(folder) / BASE_FILE).is_file()


def _checked(path: Path, number: int, entry: dict[str, Any]) -> dict[str, Any]:
    if entry.get("crc") != crc(entry):
        raise BookError(f"{path}:{number}: the line's checksum does not match its contents (the file was "
                        f"changed or damaged; a book is written only by conhex-zero book grow)")
    return entry


def _base_entries(path: Path) -> list[tuple[int, dict[str, Any]]]:
    try:
        text = gzip.decompress(path.read_bytes()).decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError, gzip.BadGzipFile) as err:
        raise BookError(f"{path} cannot be read ({getattr(err, 'strerror', None) or err})") from None
    entries = []
    for number, line in enumerate(text.splitlines(), 1):
        try:
            entry = loads_json(line)
        except ValueError as err:
            raise BookError(f"{path}:{number}: not a JSON object ({err})") from None
        if not isinstance(entry, dict):
            raise BookError(f"{path}:{number}: not a JSON object")
        entries.append((number, _checked(path, number, entry)))
    return entries


def header_game(folder: str | Path) -> str | None:
    """The game a book was grown for, from its header line alone (the first line of the compacted
    base, else of the log): a quick check before the whole book is read. None where it cannot tell."""
    path, base = book_path(folder), Path(folder) / BASE_FILE
    try:
        if base.is_file():
            with gzip.open(base, "rt", encoding="utf-8") as handle:
                first = handle.readline()
        elif path.is_file():
            with open(path, encoding="utf-8") as handle:
                first = handle.readline()
        else:
            return None
        header = loads_json(first)
    except (OSError, EOFError, UnicodeDecodeError, ValueError, gzip.BadGzipFile):
        return None
    game = header.get("game") if isinstance(header, dict) and header.get("type") == "header" else None
    return game if isinstance(game, str) else None


def read_entries(folder: str | Path, places: list[str] | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and the events of a book (its compacted base, then the lines appended since),
    every line's checksum verified and, in a sealed book, every seal (see the module docstring).
    ``places``, when given, receives each event's file and line (``book.jsonl.gz:301``)."""
    path, base = book_path(folder), Path(folder) / BASE_FILE
    if not is_book(folder):
        raise BookError(f"{folder} is not a book: it has no {BOOK_FILE} (grow one with conhex-zero book grow CKPT "
                        f"--out {folder})")
    from_base = _base_entries(base) if base.is_file() else []
    from_log: list[tuple[int, dict[str, Any]]] = []
    try:
        if path.is_file():
            from_log = [(number, _checked(path, number, entry)) for number, entry in iter_jsonl(path)]
    except JsonlError as err:
        raise BookError(str(err)) from None
    except OSError as err:
        raise BookError(f"{path} cannot be read ({err.strerror or err})") from None
    first = (from_base or from_log or [(0, {})])[0][1]
    if first.get("type") != "header":
        raise BookError(f"{base if base.is_file() else path} does not start with a book's header line")
    if first.get("sealed"):
        from_base = _verified(base, from_base, strict=True) if from_base else []
        from_log = _verified(path, from_log, strict=False)
    else:  # a book from before the seals: read as before
        from_base = [(n, e) for n, e in from_base if e.get("type") != "seal"]
        from_log = [(n, e) for n, e in from_log if e.get("type") != "seal"]
    numbered = [(base.name, n, e) for n, e in from_base]
    for number, entry in from_log:
        if numbered and entry.get("type") == "header":
            continue  # the header again: a compaction was stopped before it emptied the log
        numbered.append((path.name, number, entry))
    if not numbered:
        raise BookError(f"{path}: a sealed book whose first round was never finished (grow it again into a new folder)")
    header = numbered[0][2]
    if header.get("format") != FORMAT:
        raise BookError(f"{path}: book format {header.get('format')!r}, this conhex-zero reads format {FORMAT}")
    if places is not None:
        places.extend(f"{name}:{number}" for name, number, _ in numbered[1:])
    return header, [e for _, _, e in numbered[1:]]


def append(folder: str | Path, entries: Iterable[dict[str, Any]], seal: bool = True) -> None:
    """Append entries (checksummed here) and, in a sealed book (``seal``), the log's seal after them,
    and flush them to the disk; a torn last line, left by a process killed while writing, is dropped
    first (``files.jsonl``)."""
    path = book_path(folder)
    entries = list(entries)
    if seal:
        sealer = _Sealer()
        if path.is_file():
            for _, entry in iter_jsonl(path, warn=lambda _: None):
                if entry.get("type") != "seal":
                    sealer.add(entry)
        entries = _with_seals(entries, sealer)
    else:
        entries = [sealed(e) for e in entries]
    append_jsonl(path, entries, sync=True)


def _search_entry(s: Search) -> dict[str, Any]:
    return {"value": round(s.value, 4), "best": s.best, "proven": s.proven, "excluded": sorted(s.excluded),
            "visits": s.visits, "pv": s.pv}


def _search(d: dict[str, Any]) -> Search:
    return Search(value=float(d["value"]), best=d["best"], proven=int(d["proven"]),
                  excluded=frozenset(d.get("excluded", ())), visits=int(d.get("visits", 0)), pv=list(d.get("pv", [])))


MOVES_KEPT = 6
"""A node's first search: the moves kept in the file (the most visited), to keep books small."""


def node_entry(node: Node) -> dict[str, Any]:
    kept = sorted(node.moves.items(), key=lambda item: (-item[1].visits, item[0]))[:MOVES_KEPT]
    return {"type": "node", "key": node.key, "line": node.line, "legal": node.legal,
            "search": _search_entry(node.first),
            "moves": [[a, round(m.prior, 4), m.visits, round(m.q, 4), m.proven] for a, m in sorted(kept)]}


def edge_entry(key: str, actions: list[int], child: str) -> dict[str, Any]:
    return {"type": "edge", "key": key, "moves": sorted(actions), "to": child}


def rest_entry(key: str, rest: Search | None) -> dict[str, Any]:
    return {"type": "rest", "key": key, "search": None if rest is None else _search_entry(rest)}


def exact_entry(key: str, result: int) -> dict[str, Any]:
    return {"type": "exact", "key": key, "result": result}


def replay(header: dict[str, Any], events: list[dict[str, Any]], gap_cost: float | None = None,
           sure_cost: float | None = None, places: list[str] | None = None) -> Book:
    """The book the events describe (values backed up); ``places``: each event's file and line, for
    the error naming a line that does not fit."""
    settings = header.get("settings", {})
    book = Book(header["start_key"], gap_cost=settings.get("gap_cost", 10.0) if gap_cost is None else gap_cost,
                sure_cost=settings.get("sure_cost", 2.0) if sure_cost is None else sure_cost)
    for number, e in enumerate(events, 2):
        kind = e.get("type")
        try:
            if kind == "node":
                first = _search(e["search"])
                node = Node(key=e["key"], line=list(e["line"]), legal=int(e["legal"]), first=first, rest=first,
                            moves={int(a): MoveStats(prior=p, visits=int(n), q=q, proven=int(pr))
                                   for a, p, n, q, pr in e["moves"]})
                if first.best is None:
                    node.rest = None
                book.nodes[node.key] = node
            elif kind == "edge":
                node = book.nodes[e["key"]]
                if e["to"] not in book.nodes:
                    raise KeyError(e["to"])
                for a in e["moves"]:
                    node.children[int(a)] = e["to"]
            elif kind == "rest":
                book.nodes[e["key"]].rest = None if e["search"] is None else _search(e["search"])
            elif kind == "exact":
                book.nodes[e["key"]].exact = int(e["result"])
            elif kind == "round":
                book.rounds.append(e)
        except (KeyError, TypeError, ValueError) as err:
            where = places[number - 2] if places is not None and number - 2 < len(places) else f"{BOOK_FILE}:{number}"
            raise BookError(f"{where}: a {kind} line that does not fit the book ({err!r})") from None
    book.update()
    return book


def compact(folder: str | Path, header: dict[str, Any], book: Book, runs: list[dict[str, Any]]) -> None:
    """Write the book's present state (one line per node, edge group, rest and exact result, then
    the rounds and runs) into the compressed base, atomically, then empty the log."""
    entries: list[dict[str, Any]] = [{**header, "sealed": True}]
    order = book.order()
    for node in order:
        entries.append(node_entry(node))
        if node.exact:
            entries.append(exact_entry(node.key, node.exact))
    for node in order:
        by_child: dict[str, list[int]] = {}
        for a, child in node.children.items():
            by_child.setdefault(child, []).append(a)
        for child, actions in sorted(by_child.items()):
            entries.append(edge_entry(node.key, actions, child))
        if node.rest is not node.first:
            entries.append(rest_entry(node.key, node.rest))
    entries.extend(book.rounds)
    entries.extend(runs)
    text = "".join(json.dumps(e) + "\n" for e in _with_seals(entries, _Sealer()))
    write_bytes_atomic(Path(folder) / BASE_FILE, gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))
    write_text_atomic(book_path(folder), "")

"""The book's file: ``DIR/book.jsonl``, one JSON object a line, each line checksummed.

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
dropped on reading, as ``files.jsonl`` does for every log. ``compact`` rewrites the file with one
line per node and edge (atomically: a new file renamed over the old one).
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any, Iterable

from conhex_zero.book.graph import Book, MoveStats, Node, Search
from conhex_zero.files.disk import write_text_atomic
from conhex_zero.files.jsonl import JsonlError, append_jsonl, iter_jsonl

FORMAT = 1
BOOK_FILE = "book.jsonl"


class BookError(ValueError):
    """A book directory or file that cannot be used; says which and why, in one line."""


def crc(entry: dict[str, Any]) -> str:
    body = {k: v for k, v in entry.items() if k != "crc"}
    return f"{zlib.crc32(json.dumps(body, sort_keys=True).encode('utf-8')) & 0xFFFFFFFF:08x}"


def sealed(entry: dict[str, Any]) -> dict[str, Any]:
    return {**entry, "crc": crc(entry)}


def book_path(folder: str | Path) -> Path:
    return Path(folder) / BOOK_FILE


def read_entries(folder: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and the events of a book, every line's checksum verified."""
    path = book_path(folder)
    if not path.is_file():
        raise BookError(f"{folder} is not a book: it has no {BOOK_FILE} (grow one with conhex-zero book grow CKPT "
                        f"--out {folder})")
    entries = []
    try:
        for number, entry in iter_jsonl(path):
            if entry.get("crc") != crc(entry):
                raise BookError(f"{path}:{number}: the line's checksum does not match its contents (the file was "
                                f"changed or damaged; a book is written only by conhex-zero book grow)")
            entries.append(entry)
    except JsonlError as err:
        raise BookError(str(err)) from None
    except OSError as err:
        raise BookError(f"{path} cannot be read ({err.strerror or err})") from None
    if not entries or entries[0].get("type") != "header":
        raise BookError(f"{path} does not start with a book's header line")
    header = entries[0]
    if header.get("format") != FORMAT:
        raise BookError(f"{path}: book format {header.get('format')!r}, this conhex-zero reads format {FORMAT}")
    return header, entries[1:]


def append(folder: str | Path, entries: Iterable[dict[str, Any]]) -> None:
    """Append entries (sealed here) and flush them to the disk; a torn last line, left by a process
    killed while writing, is dropped first (``files.jsonl``)."""
    append_jsonl(book_path(folder), [sealed(e) for e in entries], sync=True)


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
           sure_cost: float | None = None) -> Book:
    """The book the events describe (values backed up)."""
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
            raise BookError(f"{BOOK_FILE}:{number}: a {kind} line that does not fit the book ({err!r})") from None
    book.update()
    return book


def compact(folder: str | Path, header: dict[str, Any], book: Book, runs: list[dict[str, Any]]) -> None:
    """Rewrite the file with the book's present state (one line per node, edge group, rest and
    exact result, then the runs), atomically."""
    entries: list[dict[str, Any]] = [header]
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
    write_text_atomic(book_path(folder), "".join(json.dumps(sealed(e)) + "\n" for e in entries))

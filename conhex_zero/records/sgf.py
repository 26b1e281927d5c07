"""A small SGF reader and writer: game trees of nodes of properties, nothing game-specific.

Grammar (FF[4]): a collection is one or more game trees ``( node+ tree* )``; a node is ``;``
followed by properties ``IDENT[value][value]...``. In values, ``\\`` escapes the next character
(so ``\\]`` is a ``]``) and an escaped line break is removed. Only the main line of each game is
kept (the first variation at every branch), which is where game records keep the game.

``lenient=True`` reads the Little Golem server's records, which do not escape: a backslash is an
ordinary character, and a ``]`` that closes a value but is followed by another ``]`` (as in
``PW[Shumacher;]]SZ[11]``) belongs to the value.

Errors are ``SgfSyntaxError`` with the 1-based line and column of the offending character.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field


MAX_DEPTH = 400
"""Variations nested deeper than this are refused (the parser recurses once per level)."""

MAX_CHARS = 4_000_000
"""Longer SGF text is refused before parsing (a collection of thousands of games is well below it;
parsing takes time in proportion to the text's length)."""


class SgfSyntaxError(ValueError):
    """Malformed SGF text; ``line`` and ``column`` (1-based) say where."""

    def __init__(self, message: str, line: int, column: int):
        super().__init__(f"line {line}, column {column}: {message}")
        self.reason, self.line, self.column = message, line, column


@dataclass
class SgfNode:
    """One node: properties in file order (identifier -> values), and where the node starts."""

    props: dict[str, list[str]] = field(default_factory=dict)
    line: int = 1
    column: int = 1

    def get(self, ident: str, default: str | None = None) -> str | None:
        values = self.props.get(ident)
        return values[0] if values else default


@dataclass
class SgfGame:
    """The main line of one game tree: ``nodes[0]`` is the root (game information)."""

    nodes: list[SgfNode]
    line: int
    column: int
    variations: int = 0  # how many side variations were skipped

    @property
    def root(self) -> SgfNode:
        return self.nodes[0]


class _Reader:
    def __init__(self, text: str, lenient: bool):
        self.text, self.lenient = text, lenient
        self.pos = 0
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]  # where each line begins

    # ------------------------------------------------------------- positions
    def error(self, message: str, pos: int | None = None) -> SgfSyntaxError:
        return SgfSyntaxError(message, *self.where(self.pos if pos is None else pos))

    def where(self, pos: int) -> tuple[int, int]:
        """1-based line and column of ``pos`` (a binary search: parsing stays linear in the text)."""
        line = bisect.bisect_right(self.line_starts, pos)
        return line, pos - self.line_starts[line - 1] + 1

    def skip_space(self) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n and text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    @staticmethod
    def show(ch: str) -> str:
        return "the end of the text" if ch == "" else repr(ch)

    # ---------------------------------------------------------------- parsing
    def collection(self) -> list[SgfGame]:
        games = []
        self.skip_space()
        if self.text.startswith("\ufeff"):
            self.pos += 1
            self.skip_space()
        if self.peek() == "":
            raise self.error("no game record in the text (expected '(' to start one)")
        while self.peek() != "":
            if self.peek() != "(":
                raise self.error(f"expected '(' to start a game, found {self.show(self.peek())}")
            games.append(self.game_tree())
            self.skip_space()
        return games

    def game_tree(self) -> SgfGame:
        start = self.pos
        line, column = self.where(start)
        nodes, skipped = self.tree()
        if not nodes:
            raise self.error("a game has no node (expected ';' after '(')", start + 1)
        return SgfGame(nodes, line, column, skipped)

    def tree(self, depth: int = 0) -> tuple[list[SgfNode], int]:
        """``( node+ tree* )`` from the '(' on: the main line and the number of skipped variations."""
        open_pos = self.pos
        if depth > MAX_DEPTH:
            raise self.error(f"variations are nested more than {MAX_DEPTH} deep")
        self.pos += 1  # '('
        nodes: list[SgfNode] = []
        skipped = 0
        self.skip_space()
        while self.peek() == ";":
            nodes.append(self.node())
            self.skip_space()
        if not nodes:
            raise self.error(f"expected ';' to start a node, found {self.show(self.peek())}")
        first_child = True
        while self.peek() == "(":
            child, child_skipped = self.tree(depth + 1)
            if first_child:
                nodes.extend(child)
                skipped += child_skipped
                first_child = False
            else:
                skipped += 1 + child_skipped
            self.skip_space()
        if self.peek() != ")":
            if self.peek() == "":
                raise self.error("the game is not closed: a ')' is missing for the '(' here", open_pos)
            raise self.error(f"expected ';', '(' or ')', found {self.show(self.peek())}")
        self.pos += 1
        return nodes, skipped

    def node(self) -> SgfNode:
        line, column = self.where(self.pos)
        self.pos += 1  # ';'
        node = SgfNode({}, line, column)
        while True:
            self.skip_space()
            ch = self.peek()
            if not (ch.isalpha() and ch.isascii()):
                return node
            ident_pos = self.pos
            while self.peek().isalpha() and self.peek().isascii():
                self.pos += 1
            ident = self.text[ident_pos:self.pos].upper()
            self.skip_space()
            if self.peek() != "[":
                raise self.error(f"expected '[' after the property {ident}, found {self.show(self.peek())}")
            values = node.props.setdefault(ident, [])
            while self.peek() == "[":
                values.append(self.value())
                self.skip_space()

    def value(self) -> str:
        open_pos = self.pos
        self.pos += 1  # '['
        text, n = self.text, len(self.text)
        out = []
        while True:
            if self.pos >= n:
                raise self.error("a property value is not closed: a ']' is missing for the '[' here", open_pos)
            ch = text[self.pos]
            if ch == "\\" and not self.lenient:
                if self.pos + 1 >= n:
                    raise self.error("a property value is not closed: a ']' is missing for the '[' here",
                                     open_pos)
                nxt = text[self.pos + 1]
                if nxt == "\n":  # soft line break
                    self.pos += 2
                elif nxt == "\r":
                    self.pos += 3 if text[self.pos + 2:self.pos + 3] == "\n" else 2
                else:
                    out.append(nxt)
                    self.pos += 2
                continue
            if ch == "]":
                self.pos += 1
                if self.lenient and self.peek() == "]":
                    out.append("]")  # Little Golem writes a ']' in a name as it is
                    continue
                return "".join(out)
            out.append(ch)
            self.pos += 1


def parse_sgf(text: str, lenient: bool = False) -> list[SgfGame]:
    """The games of an SGF collection (main lines only). Raises ``SgfSyntaxError``; text longer than
    ``MAX_CHARS`` is refused at once."""
    if len(text) > MAX_CHARS:
        raise SgfSyntaxError(f"the text has {len(text):,} characters, more than the {MAX_CHARS:,} an SGF "
                             f"file may have here", 1, 1)
    return _Reader(text, lenient).collection()


def escape(value: str) -> str:
    """A property value with ``\\`` and ``]`` escaped."""
    return value.replace("\\", "\\\\").replace("]", "\\]")


def format_props(props: list[tuple[str, str]]) -> str:
    """``IDENT[value]...`` for (identifier, value) pairs, values escaped."""
    return "".join(f"{ident}[{escape(value)}]" for ident, value in props)

"""Static pages to browse a book: one HTML file per book position, plain HTML and inline SVG (no
script, no server, nothing fetched), linked move by move.

A page draws its position on the real board (the serve page's geometry, ``play.geometry.board_geometry``)
as the position is reached by the node's line, the moves from the book's start that first reached
it: the pieces and conquered cells, and every book move marked by its value for the player to move
(the mover's win chance by the book's minimax, a colour from red, losing, to green, winning) as a
link to the move's own page; the best move not yet in the book (the search's estimate) is marked with
a dashed ring. Below: the line, each of its positions linked (back along the line), the node's
values (minimax, single search, decided, proven) and the table of moves (value, nodes below,
proven, best line). ``index.html`` is the start position's page with the first-move table and the
swap decisions.

Each node has one page, drawn in its own line's frame; a position reached by another move order or
a symmetric move links to the same page, which says by which line it shows the position.

Which pages are written (``select_pages``): the positions at most ``max_depth`` moves from the start,
shallowest first (among equals, the most book positions below first), at most ``max_pages`` of
them; a move, a step of the line or a row of a table links to a page only where that page is
written, so no link is broken whatever the limits (issue 57: depth-limited pages linked to 8,792
pages never written). Every number follows the book's one convention (``book.table.CONVENTION``),
said under the board with a colour legend.
"""

from __future__ import annotations

import hashlib
import html
from pathlib import Path

import torch

from conhex_zero.book.folder import OpenBook
from conhex_zero.book.keys import Canonical
from conhex_zero.book.table import CONVENTION, BookMove, LineReader
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.files.disk import write_text_atomic

STYLE = """body{font-family:system-ui,sans-serif;margin:1.2em;color:#222;max-width:1100px}
a{color:#1a5fb4}table{border-collapse:collapse;margin-top:.6em}td,th{padding:2px 8px;text-align:right}
td:first-child,th:first-child,td.line,th.line{text-align:left}tr:nth-child(even){background:#f4f4f4}
.board{width:min(640px,95vw);height:auto;display:block;margin:.6em 0}.nav a{margin-right:.3em}
.note{color:#555;font-size:90%}.legend{display:inline-block;width:14em;height:.8em;vertical-align:middle;
border:1px solid #888;background:linear-gradient(90deg,#d73027,#ffffbf,#1a9850)}"""


def page_name(key: str) -> str:
    return "p-" + hashlib.sha1(key.encode()).hexdigest()[:16] + ".html"


def _colour(win: float) -> str:
    """Red (0) through pale yellow (0.5) to green (1)."""
    win = min(max(win, 0.0), 1.0)
    lo, mid, hi = (215, 48, 39), (255, 255, 191), (26, 152, 80)
    a, b, t = (lo, mid, win * 2) if win < 0.5 else (mid, hi, win * 2 - 1)
    return "#%02x%02x%02x" % tuple(round(x + (y - x) * t) for x, y in zip(a, b))


def select_pages(opened: OpenBook, max_depth: int | None = None, max_pages: int | None = None) -> list[str]:
    """The book positions that get a page (see the module docstring), the start first."""
    book = opened.book
    nodes = [n for n in book.nodes.values() if n.key != book.start and (max_depth is None or len(n.line) <= max_depth)]
    nodes.sort(key=lambda n: (len(n.line), -n.size, n.key))
    keys = [book.start] + [n.key for n in nodes]
    return keys if max_pages is None else keys[:max(1, max_pages)]


class PageWriter:
    def __init__(self, opened: OpenBook, env: VecEnv, start: State, written: set[str] | None = None):
        from conhex_zero.play.geometry import board_geometry

        self.opened, self.book, self.env, self.start = opened, opened.book, env, start
        self.canon = Canonical(env)
        self.reader = LineReader(env, self.book, self.canon)
        self.geometry = board_geometry(env.game)
        self.names = [env.game.action_name(a) for a in range(env.num_actions)]
        self.written = written  # the positions that have a page (None: every one)

    def link(self, key: str | None) -> str | None:
        """The page of ``key`` where it is written, else None (no link)."""
        if key is None or (self.written is not None and key not in self.written):
            return None
        return "index.html" if key == self.book.start else page_name(key)

    def state_of(self, line: list[int]) -> State:
        state = self.start
        for a in line:
            state = self.env.step(state, torch.tensor([a], device=self.env.device))
        return state

    def board_svg(self, state: State, marks: list[tuple[int, float, str | None, bool]]) -> str:
        """The position, with ``marks`` (hole, mover's win chance, link or None, dashed)."""
        g = self.geometry
        x, y, w, h = g["view_box"]
        out = [f'<svg class="board" xmlns="http://www.w3.org/2000/svg" viewBox="{x} {y} {w} {h}">']
        cells = state.cells[0].tolist()
        for c, cell in enumerate(g["cells"]):
            owner = cells[c]
            fill = g["players"][owner]["light"] if owner >= 0 else "#f3efe6"
            points = " ".join(f"{px},{py}" for px, py in cell["points"])
            out.append(f'<polygon points="{points}" fill="{fill}" stroke="#8a8478" stroke-width="0.02"/>')
        for seg in g["frame"]:
            (x0, y0), (x1, y1) = seg["points"]
            colour = g["players"][seg["player"]]["colour"] if seg["player"] is not None else "#888"
            out.append(f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y1}" stroke="{colour}" '
                       f'stroke-width="{g["frame_width"]}" stroke-linecap="round"/>')
        r = g["hole_radius"]
        font = round(0.55 * r, 3)
        holes = state.holes[0].tolist()
        marked = {hole: (win, link, dashed) for hole, win, link, dashed in marks}
        for hole, (hx, hy) in enumerate(g["hole_xy"]):
            name = self.names[hole]
            piece = holes[hole]
            fill = g["players"][piece]["colour"] if piece >= 0 else "#ffffff"
            attrs = f'class="hole" data-move="{name}"' + (f' data-piece="{"xo"[piece]}"' if piece >= 0 else "")
            body = [f'<circle cx="{hx}" cy="{hy}" r="{r}" fill="{fill}" stroke="#555" stroke-width="0.03"/>']
            label = name
            if hole in marked and piece < 0:
                win, link, dashed = marked[hole]
                dash = ' stroke-dasharray="0.08 0.06"' if dashed else ""
                body = [f'<circle cx="{hx}" cy="{hy}" r="{r}" fill="{_colour(win)}" stroke="#222" '
                        f'stroke-width="0.05"{dash}/>']
                label = f"{round(100 * win)}"
            text_colour = "#fff" if piece >= 0 else "#222"
            body.append(f'<text x="{hx}" y="{hy}" font-size="{font}" text-anchor="middle" dominant-baseline="central" '
                        f'fill="{text_colour}">{html.escape(label)}</text><title>{html.escape(name)}</title>')
            group = f'<g {attrs}>{"".join(body)}</g>'
            if hole in marked and marked[hole][1] is not None and piece < 0:
                group = f'<a href="{marked[hole][1]}" class="move" data-move="{name}">{group}</a>'
            out.append(group)
        out.append("</svg>")
        return "\n".join(out)

    def page(self, key: str, rows: list[BookMove] | None = None) -> str:
        book, node = self.book, self.book.nodes[key]
        state = self.state_of(node.line)
        k = self.canon.keys(state).symmetry[0]
        line_names = [self.names[a] for a in node.line]
        mover = int(state.to_move[0])
        # Back along the line: each prefix's page where it is a book node.
        crumbs = ['<a href="index.html">start</a>']
        prefix = self.start
        for i, a in enumerate(node.line):
            prefix = self.env.step(prefix, torch.tensor([a], device=self.env.device))
            pkey = self.canon.keys(prefix).keys[0]
            label = html.escape(" ".join(line_names[:i + 1][-1:]))
            href = self.link(pkey) if pkey in book.nodes else None
            crumbs.append(f'<a href="{href}">{label}</a>' if href else label)
        moves = []  # (real move, canonical, child key or None, mover's win chance, nodes, proven)
        for a, child in sorted(node.children.items()):
            c = book.nodes[child]
            real = self.canon.to_real([a], k)[0]
            win = 1.0 if -c.proven > 0 else 0.0 if c.proven > 0 else (1 - c.value) / 2
            moves.append((real, a, child, win, c.size, -c.proven))
        rest = node.rest
        if rest is not None and rest.best is not None and rest.best not in node.children:
            real = self.canon.to_real([rest.best], k)[0]
            moves.append((real, rest.best, None, 1.0 if rest.proven > 0 else 0.0 if rest.proven < 0 else
                          (1 + rest.value) / 2, 0, rest.proven))
        moves.sort(key=lambda m: (-m[3], m[0]))
        marks = [(m[0], m[3], self.link(m[2]), m[2] is None) for m in moves
                 if m[0] < self.env.game.board.num_holes]
        who = f'{"first" if mover == 0 else "second"} player'
        win = (1 + node.value) / 2
        parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(self.opened.game)} book: "
                 f"{html.escape(' '.join(line_names) or 'start')}</title><style>{STYLE}</style></head><body>",
                 f'<p class="nav">{" › ".join(crumbs)}</p>',
                 f"<h1>{html.escape(' '.join(line_names) or 'the start position')}</h1>",
                 f"<p>{who} to move: {100 * win:.1f}% by the book's minimax"
                 f"{' (proven ' + ('win' if node.proven > 0 else 'loss') + ')' if node.proven else ''}; one search "
                 f"of this position: {100 * (1 + node.first.value) / 2:.1f}%; "
                 f"{'decided' if book.decided(key) else 'not decided'}; {node.size} book positions from here.</p>",
                 self.board_svg(state, marks),
                 f'<p class="note">Numbers on the board and in the tables: {html.escape(CONVENTION)} ({who} to move '
                 f'here). Colours: <span class="legend"></span> 0% to 100%. A number links to its move\'s page where '
                 'that page was written; a dashed ring: the best move not yet in the book (one search).</p>']
        mixed = self.opened.mixed_models()
        if rows is not None and mixed:
            parts.append(f'<p class="note"><b>This book was {html.escape(mixed)}.</b></p>')
        if rows is not None:
            parts.append(self.first_move_table(rows))
        parts.append("<h2>Moves</h2><table><tr><th>move</th><th>win %</th><th>nodes</th><th>proven</th>"
                     "<th class='line'>best line</th></tr>")
        for real, a, child, w, size, proven in moves:
            name = self.names[real]
            href = self.link(child)
            cell = (f'<a href="{href}" data-move="{name}">{name}</a>' if href else name) if child else f"{name} (not in the book)"
            after = self.env.step(state, torch.tensor([real], device=self.env.device))
            best = " ".join(self.reader.best_line(after, child)) if child else ""
            proof = "win" if proven > 0 else "loss" if proven < 0 else ""
            parts.append(f"<tr><td>{cell}</td><td>{100 * w:.1f}</td><td>{size}</td><td>{proof}</td>"
                         f"<td class='line'>{html.escape(best)}</td></tr>")
        parts.append("</table>")
        if len(node.parents) > 1:
            parts.append(f'<p class="note">{len(node.parents)} book moves lead to this position (other move orders '
                         f'or symmetric moves); this page shows it as reached by the line above.</p>')
        parts.append("</body></html>")
        return "\n".join(parts)

    def first_move_table(self, rows: list[BookMove]) -> str:
        swap = any(m.swap is not None for m in rows)
        no_swap = any(m.answered_value is not None for m in rows)
        out = [f"<h2>First moves</h2><p>{len(rows)} moves; win %: {html.escape(CONVENTION)}"
               + ("; no swap: the mover's chance if the second player does not swap (the opening analysis's number)"
                  if no_swap else "") + "; search: one search of the position" + (" (no swap)" if no_swap else "")
               + "; decided: the book is sure who wins.</p><table id='first-moves'><tr><th>move</th>"
               "<th>win %</th>" + ("<th>no swap %</th>" if no_swap else "") + "<th>search %</th><th>nodes</th>"
               "<th>decided</th>" + ("<th>swap</th>" if swap else "") + "<th class='line'>best line</th></tr>"]
        for m in rows:
            decided = f"proven {m.proven}" if m.proven else ("yes" if m.decided else "no")
            href = self.link(m.key)
            cell = f'<a href="{href}" data-move="{m.move}">{m.move}</a>' if href else m.move
            out.append(f'<tr><td>{cell}</td><td>{100 * m.win:.1f}</td>'
                       + (f"<td>{100 * m.win_rate:.1f}</td>" if no_swap else "") +
                       f"<td>{100 * m.search_win_rate:.1f}</td><td>{m.nodes}</td>"
                       f"<td>{decided}</td>" + (f"<td>{'yes' if m.swap else 'no'}</td>" if swap else "") +
                       f"<td class='line'>{html.escape(' '.join(m.best_line))}</td></tr>")
        out.append("</table>")
        return "\n".join(out)


def write_pages(opened: OpenBook, env: VecEnv, start: State, rows: list[BookMove], out: Path,
                max_depth: int | None = None, max_pages: int | None = None, progress=None) -> int:
    """Write index.html and the pages ``select_pages`` picks; ``progress(n)`` after each page."""
    out.mkdir(parents=True, exist_ok=True)
    keys = select_pages(opened, max_depth, max_pages)
    writer = PageWriter(opened, env, start, written=set(keys))
    book = opened.book
    write_text_atomic(out / "index.html", writer.page(book.start, rows))
    if progress is not None:
        progress(1)
    for key in keys[1:]:
        write_text_atomic(out / page_name(key), writer.page(key))
        if progress is not None:
            progress(1)
    return len(keys)

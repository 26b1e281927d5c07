// conhex-zero's opening book in the browser (serve --book DIR, the page /book): one position at a
// time from GET /api/book?line=..., the book's moves marked on the board with their values; a click
// on a move goes to its position, the browser's back and forward walk the line, and the URL names
// the position (/book?line=F6,C7), so it can be shared and reopened. Plain JavaScript, no libraries.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);
let data = null;  // the position on show

function svg(tag, attrs = {}, parent = null) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (parent) parent.appendChild(el);
  return el;
}

// Red (0%) through pale yellow (50%) to green (100%): the static pages' colours.
function colour(percent) {
  const w = Math.min(Math.max(percent / 100, 0), 1);
  const lo = [215, 48, 39], mid = [255, 255, 191], hi = [26, 152, 80];
  const [a, b, t] = w < 0.5 ? [lo, mid, w * 2] : [mid, hi, w * 2 - 1];
  return `rgb(${a.map((x, i) => Math.round(x + (b[i] - x) * t)).join(",")})`;
}

function lineParam() {
  return new URLSearchParams(location.search).get("line") || "";
}

async function load(line, push) {
  let res, body = null;
  try {
    res = await fetch(`/api/book?line=${encodeURIComponent(line)}`);
    body = await res.json();
  } catch (err) {
    return showError("the server cannot be reached (is conhex-zero serve still running?)");
  }
  if (!res.ok) {
    const message = body && body.error ? body.error : `${res.status} ${res.statusText}`;
    if (!data && line) {  // a bad shared link: the start position, with the reason
      await load("", false);
    }
    return showError(message);
  }
  showError(null);
  data = body;
  const url = data.line.length ? `/book?line=${data.line.join(",")}` : "/book";
  if (push) history.pushState({ line: data.line.join(",") }, "", url);
  else history.replaceState({ line: data.line.join(",") }, "", url);
  render();
}

const go = (moves) => load(moves.join(","), true);

function showError(message) {
  $("error").hidden = !message;
  $("error-text").textContent = message || "";
}

function drawBoard() {
  const g = data.geometry;
  const board = $("board");
  board.replaceChildren();
  board.setAttribute("viewBox", g.view_box.join(" "));
  board.style.maxWidth = `${Math.round(g.view_box[2] * 85)}px`;
  const r = g.hole_radius;
  const longest = Math.max(2, ...data.hole_names.map((n) => n.length));
  const fontSize = Math.min(0.3 * g.spacing, (1.6 * r) / (0.66 * longest));
  const cells = svg("g", { class: "cells" }, board);
  g.cells.forEach((c, i) => {
    const owner = data.cells[i];
    svg("polygon", {
      points: c.points.map((p) => p.join(",")).join(" "), "stroke-width": 0.025 * g.spacing, stroke: "#8a8478",
      fill: owner >= 0 ? g.players[owner].light : "#f3efe6",
    }, cells);
  });
  for (const f of g.frame) {
    const [[x1, y1], [x2, y2]] = f.points;
    svg("line", { x1, y1, x2, y2, "stroke-width": g.frame_width, "stroke-linecap": "round",
      stroke: f.player === null ? "#555" : g.players[f.player].colour }, board);
  }
  const marked = new Map(data.moves.map((m) => [m.move, m]));
  data.hole_names.forEach((name, h) => {
    const [x, y] = g.hole_xy[h];
    const owner = data.holes[h];
    const m = owner < 0 ? marked.get(name) : undefined;
    const el = svg("g", { class: "hole", "data-move": name, transform: `translate(${x} ${y})` }, board);
    svg("title", {}, el).textContent = m ? `${name}: ${m.proven ? "proven " + m.proven : m.win_percent + "%"}` : name;
    svg("circle", {
      r, "stroke-width": (m ? 0.05 : 0.03) * g.spacing, stroke: m ? "#222" : "#555",
      fill: owner >= 0 ? g.players[owner].colour : m ? colour(m.win_percent) : "#fff",
      ...(m && !m.in_book ? { "stroke-dasharray": `${0.08 * g.spacing} ${0.06 * g.spacing}` } : {}),
    }, el);
    const label = m ? (m.proven ? m.proven[0].toUpperCase() : String(Math.round(m.win_percent))) : name;
    svg("text", { "font-size": fontSize, "text-anchor": "middle", "dominant-baseline": "central",
      fill: owner >= 0 ? "#fff" : "#222" }, el).textContent = label;
    if (m) {
      el.classList.add("book-move");
      el.setAttribute("role", "link");
      el.setAttribute("tabindex", "0");
      el.setAttribute("aria-label", `${name}: ${label}`);
      el.style.cursor = "pointer";
      el.addEventListener("click", () => go([...data.line, name]));
      el.addEventListener("keydown", (e) => { if (e.key === "Enter") go([...data.line, name]); });
    }
  });
}

function render() {
  $("book-info").textContent = `${data.game} · the book ${data.book} (${data.book_positions} positions)` +
    (data.start_moves.length ? ` from ${data.start_moves.join(" ")}` : "");
  $("convention").textContent = `Numbers: ${data.convention}. A dashed ring: the best move not yet in the ` +
    "book (one search). W / L: proven win / loss.";
  document.title = `conhex-zero · book · ${data.line.join(" ") || "start"}`;
  drawBoard();
  const steps = $("steps");
  steps.replaceChildren();
  const startLink = document.createElement("a");
  startLink.href = "/book";
  startLink.textContent = "start";
  startLink.addEventListener("click", (e) => { e.preventDefault(); go([]); });
  steps.append(startLink);
  data.steps.forEach((s) => {
    steps.append(" › ");
    const a = document.createElement("a");
    a.href = `/book?line=${s.line.join(",")}`;
    a.textContent = s.move;
    a.className = s.in_book ? "" : "muted";
    a.dataset.move = s.move;
    a.addEventListener("click", (e) => { e.preventDefault(); go(s.line); });
    steps.append(a);
  });
  $("back").disabled = data.line.length === 0;
  $("start").disabled = data.line.length === 0;
  const node = data.node;
  const mover = data.geometry.players[data.to_move];
  $("forward").disabled = !node || !node.best_line.length || data.is_over;
  if (data.is_over) {
    $("node-text").textContent = `Game over: ${data.geometry.players[data.winner].name} has won.`;
  } else if (!node) {
    $("node-text").textContent = `${mover.name} to move. This position is not in the book: search it below.`;
  } else {
    const value = node.proven ? `proven ${node.proven}` : `${node.win_percent.toFixed(1)}%`;
    $("node-text").textContent = `${mover.name} to move: ${value} for ${mover.name} by the book's minimax ` +
      `over ${node.nodes} position${node.nodes === 1 ? "" : "s"} (one search of this position: ${node.search_win_percent.toFixed(1)}%); ` +
      (node.decided ? "decided: the book is sure who wins." : "not decided.");
  }
  $("best-line").textContent = node && node.best_line.length ? `Best line: ${node.best_line.join(" ")}` : "";
  const body = $("book-moves").querySelector("tbody");
  body.replaceChildren();
  for (const m of data.moves) {
    const tr = document.createElement("tr");
    tr.dataset.move = m.move;
    const cell = document.createElement("td");
    const a = document.createElement("a");
    a.href = `/book?line=${[...data.line, m.move].join(",")}`;
    a.textContent = m.move;
    a.addEventListener("click", (e) => { e.preventDefault(); go([...data.line, m.move]); });
    cell.append(a);
    const marks = [m.best ? "best" : "", m.proven ? `proven ${m.proven}` : "", m.decided ? "decided" : "",
      m.in_book ? "" : "not in the book (one search)"].filter(Boolean).join(", ");
    tr.append(cell);
    for (const [cls, text] of [["num", m.proven ? `proven ${m.proven}` : m.win_percent.toFixed(1)],
      ["num", m.nodes ? String(m.nodes) : "–"], ["", marks]]) {
      const td = document.createElement("td");
      td.className = cls;
      td.textContent = text;
      tr.append(td);
    }
    body.append(tr);
  }
  $("search").disabled = !data.searchable || data.is_over;
  $("search-out").textContent = "";
}

async function search() {
  const out = $("search-out");
  out.textContent = "Searching…";
  $("search").disabled = true;
  try {
    const res = await fetch(`/api/book/search?line=${encodeURIComponent(data.line.join(","))}`);
    const body = await res.json();
    if (!res.ok) throw new Error(body.error || res.statusText);
    const a = body.analysis;
    const who = data.geometry.players[data.to_move].name;
    out.textContent = `${a.simulations} simulations: ${who}'s chance ${a.proven ? "proven " + a.proven : a.win_percent.toFixed(1) + "%"}; ` +
      a.candidates.map((c) => `${c.move} ${c.proven ? c.proven : (c.win_percent === null ? "–" : c.win_percent.toFixed(1) + "%")} (${c.visits})`).join(", ");
  } catch (err) {
    out.textContent = `The search failed: ${err.message}`;
  } finally {
    $("search").disabled = !data.searchable || data.is_over;
  }
}

$("back").addEventListener("click", () => go(data.line.slice(0, -1)));
$("start").addEventListener("click", () => go([]));
$("forward").addEventListener("click", () => { if (data.node && data.node.best_line.length) go([...data.line, data.node.best_line[0]]); });
$("search").addEventListener("click", search);
$("error-close").addEventListener("click", () => showError(null));
window.addEventListener("popstate", (e) => load(e.state && e.state.line !== undefined ? e.state.line : lineParam(), false));
load(lineParam(), false);

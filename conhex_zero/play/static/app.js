// conhex-zero in the browser: draws the board from the server's geometry and plays through its
// JSON API (see conhex_zero/play/server.py). Plain JavaScript, no build step, no libraries.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);

let state = null;      // the last state the server sent
let busy = false;      // a request (or the AI's thinking) is under way: the board ignores clicks
let thinking = false;  // the AI is choosing a move
let hint = null;       // {ply, move, analysis}: the AI's suggestion for the person
let spot = null;       // a candidate move pointed at in the table
let drawn = null;      // {spec, holes: [<g>], cells: [<polygon>]}: the board now in the SVG

// ------------------------------------------------------------------------------------- server
// Every POST sends JSON with its content type (the server refuses other POSTs: see server.py).
async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (method === "POST" && body === undefined) body = {};
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, opts);
  } catch (err) {
    throw new Error("the server cannot be reached (is conhex-zero serve still running?)");
  }
  let data = null;
  try { data = await res.json(); } catch (err) { /* not JSON: reported below */ }
  if (!res.ok) throw new Error((data && data.error) || `${res.status} ${res.statusText}`);
  if (data === null) throw new Error(`the server answered ${path} with something that is not JSON`);
  return data;
}

function setState(next) {
  if (hint && (!state || next.ply !== hint.ply || next.moves.join() !== state.moves.join())) hint = null;
  state = next;
}

// One person's action at a time; the AI then moves as long as it is its turn.
async function act(task) {
  if (busy) return;
  busy = true;
  showError(null);
  render();
  try {
    if (task) await task();
    await aiTurns();
  } catch (err) {
    showError(err.message);
  } finally {
    busy = false;
    thinking = false;
    render();
  }
}

async function aiTurns() {
  while (state && !state.is_over && state.to_move === state.ai) {
    thinking = true;
    render();
    const r = await api("POST", "/api/ai", {});
    thinking = false;
    setState(r.state);
    render();
  }
}

const play = (move) => act(async () => setState((await api("POST", "/api/play", { move })).state));

// ------------------------------------------------------------------------------------- drawing
function svg(tag, attrs = {}, parent = null) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (parent) parent.appendChild(el);
  return el;
}

function drawBoard() {
  const g = state.geometry;
  const board = $("board");
  board.replaceChildren();
  board.setAttribute("viewBox", g.view_box.join(" "));
  board.style.maxWidth = `${Math.round(g.view_box[2] * 85)}px`;  // small boards: not giant
  const root = document.documentElement.style;
  g.players.forEach((p, i) => {
    root.setProperty(`--p${i}`, p.colour);
    root.setProperty(`--p${i}-light`, p.light);
  });
  const r = g.hole_radius;
  const longest = Math.max(2, ...state.hole_names.map((n) => n.length));
  const fontSize = Math.min(0.3 * g.spacing, (1.6 * r) / (0.66 * longest));

  const cellLayer = svg("g", { class: "cells" }, board);
  const cells = g.cells.map((c, i) => svg("polygon", {
    class: "cell", "data-cell": i, "stroke-width": 0.025 * g.spacing,
    points: c.points.map((p) => p.join(",")).join(" "),
  }, cellLayer));
  const frameLayer = svg("g", { class: "frame-layer" }, board);
  for (const f of g.frame) {
    const [[x1, y1], [x2, y2]] = f.points;
    svg("line", {
      class: "frame", x1, y1, x2, y2, "stroke-width": g.frame_width,
      stroke: f.player === null ? "#555" : g.players[f.player].colour,
    }, frameLayer);
  }
  const holeLayer = svg("g", { class: "holes" }, board);
  const holes = state.hole_names.map((name, h) => {
    const [x, y] = g.hole_xy[h];
    const el = svg("g", { class: "hole", "data-move": name, transform: `translate(${x} ${y})` }, holeLayer);
    svg("title", {}, el).textContent = name;
    svg("circle", { class: "ring", r: 1.22 * r, "stroke-width": 0.07 * g.spacing }, el);
    svg("circle", { class: "base", r, "stroke-width": 0.03 * g.spacing }, el);
    svg("circle", { class: "last", r: 0.72 * r, "stroke-width": 0.06 * g.spacing }, el);
    svg("text", { "font-size": fontSize }, el).textContent = name;
    svg("text", { class: "book-value", y: 0.62 * r, "font-size": 0.75 * fontSize }, el);
    return el;
  });
  drawn = { spec: state.spec, holes, cells };
}

function renderBoard() {
  if (!drawn || drawn.spec !== state.spec) drawBoard();
  const myTurn = !busy && !state.is_over && state.to_move === state.human;
  const legal = new Set(myTurn ? state.legal_moves : []);
  const wins = new Set(state.winning_cells);
  // The opening book's moves at this position: the mover's win % by the book, on the board.
  const bookMoves = new Map(state.book ? state.book.moves.map((m) => [m.move, m]) : []);
  drawn.cells.forEach((el, c) => {
    const owner = state.cell_owners[c];
    el.setAttribute("class", `cell${owner === null ? "" : " owner-" + owner}${wins.has(c) ? " win" : ""}`);
  });
  drawn.holes.forEach((el, h) => {
    const name = state.hole_names[h];
    const owner = state.hole_owners[h];
    const cls = ["hole", owner === null ? "empty" : `stone-${owner}`];
    if (legal.has(name)) cls.push("legal");
    if (name === state.last_move) cls.push("last-move");
    if (hint && hint.move === name) cls.push("hint");
    if (spot === name) cls.push("spot");
    const booked = owner === null ? bookMoves.get(name) : undefined;
    if (booked) cls.push("book-move");
    el.querySelector(".book-value").textContent = booked ? (booked.proven ? booked.proven : pct(booked.win_percent)) : "";
    el.setAttribute("class", cls.join(" "));
    if (legal.has(name)) {
      el.setAttribute("tabindex", "0");
      el.setAttribute("role", "button");
      el.setAttribute("aria-label", `play ${name}`);
    } else {
      el.removeAttribute("tabindex");
      el.removeAttribute("role");
      el.setAttribute("aria-label", owner === null ? name : `${name}: ${state.geometry.players[owner].name}`);
    }
  });
  const human = state.geometry.players[state.human];
  const root = document.documentElement.style;
  root.setProperty("--human", human.colour);
  root.setProperty("--human-light", human.light);
  $("board").classList.toggle("busy", busy);
}

// --------------------------------------------------------------------------------------- panel
const dash = (goal) => goal.replace("-", "–");
const pct = (v) => `${Math.round(v)}%`;
const fmtPct = (v) => (v === null ? "–" : v.toFixed(1));

function sideText(p) {
  const pl = state.geometry.players[p];
  return `${pl.name}, ${dash(pl.goal)}`;
}

function renderStatus() {
  const stone = $("status-stone");
  const box = $("status");
  let text;
  let cls = "";
  box.classList.toggle("over", state.is_over);
  if (state.is_over) {
    const w = state.winner;
    text = `Game over: ${w === state.human ? "you win" : "the AI wins"} — connected ${state.geometry.players[w].goal.replace("-", " to ")}`;
    cls = `p${w}`;
  } else if (thinking) {
    text = "AI is thinking…";
    cls = "thinking";
  } else if (state.to_move === state.human) {
    text = `Your move (${sideText(state.human)})${state.swap_legal ? ": play a hole, or swap" : ""}`;
    cls = `p${state.human}`;
  } else {
    text = `AI to move (${sideText(state.ai)})`;
    cls = `p${state.ai}`;
  }
  $("status-text").textContent = text;
  stone.className = cls;
}

function renderInfo() {
  const you = state.geometry.players[state.human];
  const ai = state.geometry.players[state.ai];
  $("game-info").textContent = `${state.spec} (${state.rules}) · you: ${you.name} · AI: ${state.player} (${ai.name})`;
  document.title = `conhex-zero · ${state.spec}`;
}

function renderButtons() {
  const myTurn = !state.is_over && state.to_move === state.human;
  $("undo").disabled = busy || !state.can_undo;
  $("swap").disabled = busy || !myTurn || !state.swap_legal;
  $("hint").disabled = busy || !myTurn;
  $("new-button").disabled = busy;
}

function renderAnalysis() {
  // The hint (the AI's view for you) while it is current, else the AI's own last thinking.
  const shown = hint ? { who: state.human, analysis: hint.analysis, move: hint.move, isHint: true }
    : state.analysis ? { who: state.ai, analysis: state.analysis, move: state.last_ai_move, isHint: false } : null;
  const text = $("eval-text");
  const bar = $("eval-bar");
  const legend = $("eval-legend");
  const table = $("candidates");
  const body = table.querySelector("tbody");
  body.replaceChildren();
  bar.hidden = legend.hidden = table.hidden = true;
  $("eval-title").textContent = shown && shown.isHint ? "Hint" : "AI's evaluation";
  if (!shown) {
    text.className = "muted";
    text.textContent = "No evaluation yet: it appears after the AI's move.";
    return;
  }
  const a = shown.analysis;
  text.className = "";
  if (a.value === null) {
    text.textContent = shown.isHint ? `The AI (${state.player}) suggests ${shown.move}; it does not evaluate positions.`
      : `The AI (${state.player}) does not evaluate positions.`;
    return;
  }
  const forWho = a.win_percent;          // for the side that was to move (a.player)
  const winP = [0, 0];
  winP[a.player] = forWho;
  winP[1 - a.player] = 100 - forWho;
  const aiWin = winP[state.ai];
  const carried = a.carried ? ` (${a.carried} carried over from its previous search)` : "";
  const how = a.source === "search" ? `after ${a.simulations} simulations${carried}`
    : a.source === "book" ? "from the opening book (its minimax value), no search" : "network, no search";
  text.innerHTML = "";
  const lead = document.createElement("div");
  lead.innerHTML = shown.isHint
    ? `Hint: <b>${escapeHtml(shown.move)}</b> — your chance to win <b>${pct(winP[state.human])}</b>`
    : `AI's chance to win: <b>${pct(aiWin)}</b> · yours: <b>${pct(100 - aiWin)}</b>`;
  const sub = document.createElement("div");
  sub.className = "muted";
  sub.style.fontSize = "0.82rem";
  // A proven result is exact: the search found a forced win (or saw that every move loses).
  const provenFor = a.proven === null || a.proven === undefined ? null
    : (a.player === state.ai) === (a.proven === "win") ? "AI" : "you";
  sub.textContent = provenFor ? `${how} · proven win for ${provenFor === "AI" ? "the AI" : "you"}` : how;
  text.append(lead, sub);
  bar.hidden = legend.hidden = false;
  $("bar-0").style.width = `${winP[0]}%`;
  $("bar-1").style.width = `${winP[1]}%`;
  const label = (p) => `${state.geometry.players[p].name} (${p === state.human ? "you" : "AI"}) ${pct(winP[p])}`;
  $("legend-0").textContent = label(0);
  $("legend-1").textContent = label(1);
  if (!a.candidates.length) return;
  table.hidden = false;
  table.querySelector("th:nth-child(3)").textContent = shown.isHint ? "your win %" : "AI win %";
  table.querySelector("th:nth-child(2)").textContent = a.source === "book" ? "book positions" : "visits";
  for (const c of a.candidates) {
    const tr = document.createElement("tr");
    tr.dataset.move = c.move;
    const count = a.source === "book" ? (c.nodes ? String(c.nodes) : "–") : String(c.visits);
    for (const [cls, value] of [["move", c.move], ["num", count],
      ["num", c.proven ? `proven ${c.proven}` : fmtPct(c.win_percent)],
      ["pv", c.pv.slice(1).join(" ")]]) {
      const td = document.createElement("td");
      td.className = cls;
      td.textContent = value;
      tr.appendChild(td);
    }
    tr.addEventListener("mouseenter", () => { spot = c.move; renderBoard(); });
    tr.addEventListener("mouseleave", () => { spot = null; renderBoard(); });
    body.appendChild(tr);
  }
}

function renderBook() {
  // The opening book's view of the position (serve --book DIR): shown while the position is in it.
  const card = $("book-card");
  const b = state.book;
  card.hidden = !b;
  if (!b) return;
  const mover = state.to_move === state.human ? "you" : "the AI";
  const result = b.proven ? `proven ${b.proven} for ${mover}` : `${pct(b.win_percent)} for ${mover} to win`;
  $("book-text").textContent = `In the book: ${result} (minimax over ${b.nodes} book positions); ` +
    "the numbers on the board: the win % of the player who makes each book move, after the opponent's best " +
    "answer (the swap included where the pie rule allows it).";
  const body = $("book-moves").querySelector("tbody");
  body.replaceChildren();
  for (const m of b.moves.slice(0, 8)) {
    const tr = document.createElement("tr");
    tr.dataset.move = m.move;
    for (const [cls, value] of [["move", m.move], ["num", m.proven ? `proven ${m.proven}` : m.win_percent.toFixed(1)],
      ["num", m.nodes ? String(m.nodes) : "– (one search)"]]) {
      const td = document.createElement("td");
      td.className = cls;
      td.textContent = value;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
}

function renderMoves() {
  const list = $("moves");
  list.replaceChildren();
  state.moves.forEach((m, i) => {
    const li = document.createElement("li");
    const p = state.movers[i];
    if (i < state.opening_moves) { li.classList.add("random"); li.title = "random opening piece"; }
    if (i === state.moves.length - 1) li.classList.add("last");
    const n = document.createElement("span");
    n.className = "n";
    n.textContent = `${i + 1}.`;
    const dot = document.createElement("span");
    dot.className = `dot p${p}`;
    const name = document.createElement("span");
    name.textContent = m;
    li.append(n, dot, name);
    li.title = li.title || `${state.geometry.players[p].name} (${p === state.human ? "you" : "AI"})`;
    list.appendChild(li);
  });
  list.scrollTop = list.scrollHeight;
  $("move-count").textContent = state.moves.length ? `(${state.moves.length})` : "";
}

function renderScoring() {
  // The scoring variant's running pair score (serve --scoring), or nothing.
  const score = state.scoring;
  $("scoring-card").hidden = !score;
  if (!score) return;
  const won = score.pairs_won;
  const cur = score.current_pair.pieces;
  const pieces = (n) => (n === null ? "-" : String(n));
  const lines = [
    `Pairs won: you ${won.you}, the AI ${won.ai}` + (won.draw ? `, ${won.draw} drawn` : "") + ".",
    score.current_pair.games
      ? `This pair so far: your wins scored ${pieces(cur.you)} pieces, the AI's ${pieces(cur.ai)} (lower wins).`
      : "A new pair starts with the next game.",
    `Next game you play ${score.next_side}.`,
  ];
  $("scoring-text").replaceChildren(...lines.map((t) => { const d = document.createElement("div"); d.textContent = t; return d; }));
}

let formFor = null;
function renderForm() {
  // Fill the new-game form with the current game, unless the person is editing it.
  const key = `${state.spec}/${state.human}`;
  if (formFor === key) return;
  formFor = key;
  $("new-spec").value = state.spec;
  document.querySelector(`input[name="side"][value="${state.human === 0 ? "first" : "second"}"]`).checked = true;
  const list = $("game-list");
  list.replaceChildren();
  for (const g of state.suggested_games) {
    const o = document.createElement("option");
    o.value = g;
    list.appendChild(o);
  }
}

function render() {
  if (!state) return;
  // the AI's last move, for the evaluation title
  state.last_ai_move = null;
  for (let i = state.moves.length - 1; i >= state.opening_moves; i--) {
    if (state.movers[i] === state.ai) { state.last_ai_move = state.moves[i]; break; }
  }
  renderBoard();
  renderStatus();
  renderInfo();
  renderButtons();
  renderAnalysis();
  renderBook();
  renderMoves();
  renderScoring();
  renderForm();
}

function showError(message) {
  $("error").hidden = !message;
  $("error-text").textContent = message || "";
}

function escapeHtml(s) {
  return s.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[ch]));
}

// -------------------------------------------------------------------------------------- events
function holeOf(event) {
  const g = event.target.closest && event.target.closest(".hole");
  return g && g.classList.contains("legal") ? g.dataset.move : null;
}

$("board").addEventListener("click", (event) => {
  const move = holeOf(event);
  if (move) play(move);
});
$("board").addEventListener("keydown", (event) => {
  if (event.key !== "Enter" && event.key !== " ") return;
  const move = holeOf(event);
  if (move) { event.preventDefault(); play(move); }
});
$("swap").addEventListener("click", () => play("swap"));
$("undo").addEventListener("click", () => act(async () => setState((await api("POST", "/api/undo", {})).state)));
$("hint").addEventListener("click", () => act(async () => {
  thinking = false;
  $("status-text").textContent = "The AI is looking for a hint…";
  $("status-stone").className = "thinking";
  const r = await api("GET", "/api/analyse");
  setState(r.state);
  hint = { ply: r.state.ply, move: r.hint, analysis: r.analysis };
}));
$("new-game").addEventListener("submit", (event) => {
  event.preventDefault();
  const game = $("new-spec").value.trim();
  const side = document.querySelector('input[name="side"]:checked');
  act(async () => {
    const r = await api("POST", "/api/new", { game, as: side ? side.value : "first" });
    hint = null;
    formFor = null;
    setState(r.state);
  });
});
$("error-close").addEventListener("click", () => showError(null));

act(async () => setState(await api("GET", "/api/state")));

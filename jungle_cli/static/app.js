// jungle serve: the page. Plain JavaScript, no build step, nothing fetched from elsewhere.
// The server holds the game and checks every request with the rules core; this page only
// draws what the server says and sends what the player does.
"use strict";

const $ = (id) => document.getElementById(id);

const S = {
  game: null,        // the server's view of the game
  viewPly: null,     // null: the live position; else a ply being replayed
  pending: null,     // the ply asked for while its position is on its way
  shown: null,       // the position drawn
  flipped: false,
  selected: null,    // square of the selected piece
  hint: null,        // {from, to} of the last hint
  hinting: null,     // positionKey of the position a hint is being asked for
  probeSq: null,     // the face-down square under the pointer, described in #probe
  poll: null,        // AbortController of the long poll
  cache: new Map(),  // "version:ply" -> position
  agents: [],
  hintDefault: "",   // the server's hint agent spec
  loadText: null,    // last uploaded file, to pick another game of it
  clockAt: 0,
};

// ------------------------------------------------------------------ server

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (method === "POST") {  // the server takes only JSON posts (no cross-site form posts)
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body === undefined ? {} : body);
  }
  const response = await fetch(path, init);
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  if (!response.ok) {
    throw new Error((data && data.error) || `${response.status} ${response.statusText}`);
  }
  return data;
}

// Give a game's slot back to the server: the page's previous game when it starts or loads
// another, the current one when the page goes away (keepalive: the request outlives it).
function release(id) {
  fetch(`/api/games/${id}`, { method: "DELETE", keepalive: true }).catch(() => {});
}

function showError(message) {
  $("error-text").textContent = message;
  $("error").hidden = false;
}

function clearError() { $("error").hidden = true; $("error-text").textContent = ""; }

// Run a request; its error is shown unless another game has come since it began (an
// answer about the old game means nothing in the new one).
async function act(fn) {
  const id = S.game && S.game.id;
  try { await fn(); } catch (e) {
    if ((S.game && S.game.id) === id) showError(e.message);
  }
}

function positionKey(view) { return `${view.id}:${view.moves.length}:${view.position.fen}`; }

// What belongs to the game on screen and no other: the hover text, the hint, the error.
function clearGameText() {
  S.hint = null;
  S.hinting = null;
  S.probeSq = null;
  $("probe").textContent = "";
  $("hint-text").textContent = "";
  clearError();
}

function setGame(view) {
  const newId = !S.game || S.game.id !== view.id;
  if (!newId && view.version < S.game.version) return;
  if (newId) {
    if (S.game) release(S.game.id);
    S.viewPly = null; S.pending = null; S.selected = null; S.cache.clear();
    clearGameText();
  }
  if (!newId && view.version !== S.game.version) {
    S.cache.clear();
    if (positionKey(view) !== positionKey(S.game)) {  // a hint is about one position
      S.hint = null;
      if (S.hinting === null) $("hint-text").textContent = "";
    }
  }
  S.game = view;
  S.clockAt = performance.now();
  if (S.viewPly !== null && S.viewPly >= view.moves.length) S.viewPly = null;
  if (newId) startPoll(view.id);
  render();
}

function startPoll(id) {
  if (S.poll) S.poll.abort();
  const controller = new AbortController();
  S.poll = controller;
  (async () => {
    while (!controller.signal.aborted && S.game && S.game.id === id) {
      try {
        const r = await fetch(`/api/games/${id}?after=${S.game.version}`,
                              { signal: controller.signal });
        const data = await r.json();
        if (controller.signal.aborted) return;  // another game came meanwhile
        if (!r.ok) { showError(data.error || "the game is gone"); return; }
        setGame(data);
      } catch (e) {
        if (controller.signal.aborted) return;
        await new Promise((ok) => setTimeout(ok, 1000));
      }
    }
  })();
}

// ------------------------------------------------------------ interaction

function humanToMove() {
  return S.game && S.viewPly === null && S.game.legal.length > 0;
}

function legalFrom(sq) {
  const n = S.game.board.rows * S.game.board.cols;
  return S.game.legal.filter((m) => m.from === sq && m.action >= n);
}

function play(body) {
  S.selected = null;
  return act(async () => {
    clearError();
    setGame(await api("POST", `/api/games/${S.game.id}/move`, { ...body, ply: S.game.moves.length }));
  });
}

function clickSquare(sq) {
  if (!humanToMove() || sq === null) return;
  if (S.selected !== null) {
    const m = legalFrom(S.selected).find((x) => x.to === sq);
    if (m) { play({ action: m.action }); return; }
    if (sq === S.selected) { S.selected = null; drawBoard(); return; }
  }
  if (legalFrom(sq).length) { S.selected = sq; drawBoard(); return; }
  const reveal = S.game.legal.find((m) => m.action === sq);
  if (reveal) { play({ action: reveal.action }); return; }
  S.selected = null;
  drawBoard();
}

function dropOn(from, to) {
  const m = legalFrom(from).find((x) => x.to === to);
  if (m) { play({ action: m.action }); return; }
  // not among the legal moves: let the server say why (it checks with the core)
  play({ move: `${squareName(from)}-${squareName(to)}` });
}

function bindBoard() {
  const svg = $("board");
  let drag = null;
  svg.addEventListener("pointerdown", (evt) => {
    if (!humanToMove()) return;
    const sq = squareAt(evt);
    if (sq === null) return;
    const node = evt.target.closest(".piece");
    drag = { sq, x: evt.clientX, y: evt.clientY, node, moved: false };
    if (node && legalFrom(sq).length) svg.setPointerCapture(evt.pointerId);
  });
  svg.addEventListener("pointermove", (evt) => {
    if (!drag || !drag.node || !legalFrom(drag.sq).length) return;
    const dx = evt.clientX - drag.x, dy = evt.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 6) return;
    if (!drag.moved) {
      drag.moved = true;
      S.selected = drag.sq;
      drawBoard();
      drag.node = svg.querySelector(`.piece[data-square="${squareName(drag.sq)}"]`);
      drag.base = drag.node.getAttribute("transform");
      drag.node.classList.add("dragging");
      drag.node.parentNode.appendChild(drag.node);
    }
    const scale = svg.getScreenCTM().a;
    drag.node.setAttribute("transform", `${drag.base} translate(${dx / scale},${dy / scale})`);
  });
  svg.addEventListener("pointerup", (evt) => {
    if (!drag) return;
    const start = drag, sq = squareAt(evt);
    drag = null;
    if (start.moved) {
      if (sq === null || sq === start.sq) { S.selected = null; drawBoard(); return; }
      dropOn(start.sq, sq);
    } else {
      clickSquare(sq);
    }
  });
  svg.addEventListener("pointercancel", () => { drag = null; drawBoard(); });
}

// ------------------------------------------------------------------ replay

async function setViewPly(ply) {
  if (!S.game) return;
  const total = S.game.moves.length;
  ply = Math.max(0, Math.min(total, ply));
  S.selected = null;
  S.pending = ply;  // keys pressed before the position arrives count from here
  if (ply === total) { S.pending = null; S.viewPly = null; render(); return; }
  const key = `${S.game.version}:${ply}`;
  if (!S.cache.has(key)) {
    try {
      S.cache.set(key, await api("GET", `/api/games/${S.game.id}/ply/${ply}`));
    } catch (e) { S.pending = null; showError(e.message); return; }
  }
  if (S.pending !== ply) return;  // a later key press asked for another ply
  S.pending = null;
  S.viewPly = ply;
  render();
}

function currentPly() {
  if (S.pending !== null) return S.pending;
  return S.viewPly === null ? S.game.moves.length : S.viewPly;
}

// ------------------------------------------------------------------ render

function fmtClock(seconds) {
  const s = Math.max(0, Math.ceil(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function drawClocks() {
  const g = S.game;
  const top = $("clock-top"), bottom = $("clock-bottom");
  if (!g || !g.clock) { top.hidden = bottom.hidden = true; return; }
  top.hidden = bottom.hidden = false;
  const elapsed = (performance.now() - S.clockAt) / 1000;
  const show = (node, p) => {
    let t = g.clock.remaining[p];
    if (g.clock.running === p) t -= elapsed;
    node.textContent = `player ${p}  ${fmtClock(t)}`;
    node.classList.toggle("running", g.clock.running === p);
  };
  show(bottom, S.flipped ? 1 : 0);
  show(top, S.flipped ? 0 : 1);
}

// The move list: one row per move pair (its number, the first player's move, the
// second's), the current move kept in view by scrolling the list's own box only.
function drawMoves(ply) {
  const g = S.game;
  const body = $("moves-body");
  body.replaceChildren();
  for (const p of [0, 1]) {
    $(`moves-p${p}`).textContent = g.names[p];
    $(`moves-p${p}`).title = `player ${p}: ${g.names[p]}`;
  }
  let row = null;
  for (const m of g.moves) {
    const column = (m.ply - 1) % 2;
    if (column === 0 || row === null) {
      row = document.createElement("tr");
      const number = document.createElement("td");
      number.className = "n";
      number.textContent = `${Math.floor((m.ply - 1) / 2) + 1}.`;
      row.append(number, document.createElement("td"), document.createElement("td"));
      body.appendChild(row);
    }
    const b = document.createElement("button");
    b.textContent = m.text;
    b.title = `ply ${m.ply}: ${m.text}`;
    b.className = `move p${m.player}` + (m.ply === ply ? " current" : "");
    b.dataset.ply = m.ply;
    b.addEventListener("click", () => setViewPly(m.ply));
    row.children[1 + column].appendChild(b);
  }
  const box = $("moves");
  const current = body.querySelector(".current");
  if (!current) { if (ply === 0) box.scrollTop = 0; return; }
  const head = box.querySelector("thead").getBoundingClientRect().height;
  const top = box.getBoundingClientRect().top + box.clientTop;  // inside the border
  const inner = current.closest("tr").getBoundingClientRect();
  if (inner.top < top + head) box.scrollTop -= top + head - inner.top;
  else if (inner.bottom > top + box.clientHeight) {
    box.scrollTop += inner.bottom - (top + box.clientHeight);
  }
}

function render() {
  const g = S.game;
  if (!g) return;
  const live = S.viewPly === null;
  S.shown = live ? g.position : S.cache.get(`${g.version}:${S.viewPly}`);
  if (!S.shown) { S.viewPly = null; S.shown = g.position; }
  $("title").textContent = g.title || `${g.names[0]} vs ${g.names[1]} · ${g.board.name}`;
  const mover = g.position.to_move;
  const seat = g.seat_names[mover];
  let status;
  if (g.result) status = "game over";
  else if (g.thinking) status = `${seat} (player ${mover}) is thinking…`;
  else if (g.paused) status = "paused";
  else status = `player ${mover} (${seat}) to move`;
  if (!live) status += ` · viewing ply ${S.viewPly} of ${g.moves.length}`;
  $("status").textContent = status;
  $("banner").hidden = !g.result;
  $("banner").textContent = g.result ? g.result.text : "";
  if (g.message && !g.result) showError(g.message);
  const ply = currentPly();
  drawMoves(ply);
  const slider = $("slider");
  slider.max = g.moves.length;
  slider.value = ply;
  $("ply-label").textContent = `ply ${ply} / ${g.moves.length}`;
  const humans = g.seats.filter((s) => s === "human").length;
  $("undo").disabled = !humans || g.moves.length === 0;
  $("resign").disabled = !humans || !!g.result;
  $("hint").disabled = !humanToMove() || S.hinting !== null;
  $("watch").hidden = !(humans === 0 || g.paused);
  $("pause").textContent = g.paused ? "Go on" : "Pause";
  drawBoard();
  drawClocks();
}

// -------------------------------------------------------------- new games

function spec(kindId, paramsId) {
  const kind = $(kindId).value, params = $(paramsId).value.trim();
  return params ? `${kind}:${params}` : kind;
}

function gameOptions() {
  return {
    rules: $("rules").value,
    mode: $("mode").value,
    side: Number($("side-select").value),
    agent: spec("agent-kind", "agent-params"),
    agent1: spec("agent1-kind", "agent1-params"),
    hint: spec("hint-kind", "hint-params"),
    clock: $("clock").value.trim() || null,
    delay: Number($("delay").value),
  };
}

function updateForm() {
  const mode = $("mode").value;
  $("side-label").hidden = mode !== "human-agent";
  $("agent-box").hidden = mode === "human-human";
  $("agent1-box").hidden = mode !== "agent-agent";
  $("hint-box").hidden = mode === "agent-agent";  // hints are for a human to move
  $("agent-legend").textContent = mode === "agent-agent" ? "Agent (player 0)" : "Agent";
  for (const [kindId, helpId] of [["agent-kind", "agent-help"], ["agent1-kind", "agent1-help"],
                                  ["hint-kind", "hint-help"]]) {
    const kind = S.agents.find((k) => k.name === $(kindId).value);
    $(helpId).textContent = kind ? [kind.help, ...kind.params].join("\n") : "";
  }
}

async function startGame() {
  await act(async () => {
    clearError();
    setGame(await api("POST", "/api/games", gameOptions()));
  });
}

function splitSpec(text) {
  const at = text.indexOf(":");
  return at < 0 ? [text, ""] : [text.slice(0, at), text.slice(at + 1)];
}

// A new kind starts with no parameters (another kind's would be refused), but the hint's
// default kind with the server's default parameters.
function kindChanged(kindId, paramsId) {
  const [kind, params] = splitSpec(S.hintDefault);
  $(paramsId).value = kindId === "hint-kind" && $(kindId).value === kind ? params : "";
  updateForm();
}

async function askHint() {
  const g = S.game;
  const asked = positionKey(g);
  S.hinting = asked;
  $("hint").disabled = true;
  $("hint-text").textContent = "thinking…";
  try {
    const h = await api("POST", `/api/games/${g.id}/hint`);
    if (S.hinting !== asked) return;  // a new game came meanwhile and cleared the hint
    if (positionKey(S.game) !== asked) { $("hint-text").textContent = ""; return; }  // stale
    const m = S.game.legal.find((x) => x.action === h.action);
    S.hint = m ? { from: m.from, to: m.to } : null;
    $("hint-text").textContent = `hint (${h.agent}): ${h.text}`;
  } catch (e) {
    if (S.hinting !== asked || S.game.id !== g.id) return;  // about a game no longer shown
    $("hint-text").textContent = "";
    showError(e.message);
  } finally {
    if (S.hinting === asked) S.hinting = null;
    render();
  }
}

async function loadGame() {
  if (S.loadText === null) return;
  await act(async () => {
    clearError();
    const body = { ...gameOptions(), text: S.loadText, index: Number($("load-index").value) || 0 };
    const view = await api("POST", "/api/games/load", body);
    $("load-index-label").hidden = !(view.games_in_file > 1);
    $("load-index").max = view.games_in_file - 1;
    setGame(view);
    setViewPly(0);
  });
}

function save() {
  act(async () => {
    const record = await api("GET", `/api/games/${S.game.id}/record`);
    const blob = new Blob([JSON.stringify(record, null, 1) + "\n"], { type: "application/json" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = `jungle-${S.game.board.name.toLowerCase()}-${record.actions.length}plies.json`;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  });
}

async function init() {
  const info = await api("GET", "/api/agents");
  S.agents = info.agents;
  S.hintDefault = info.hint;
  for (const name of info.rules) $("rules").add(new Option(name.toUpperCase(), name));
  for (const id of ["agent-kind", "agent1-kind", "hint-kind"]) {
    for (const k of info.agents) $(id).add(new Option(k.name, k.name));
    $(id).value = info.agents.some((k) => k.name === "random") ? "random" : info.agents[0].name;
  }
  const [hintKind, hintParams] = splitSpec(info.hint);
  $("hint-kind").value = hintKind;
  $("hint-params").value = hintParams;
  updateForm();
  $("mode").addEventListener("change", updateForm);
  for (const [kindId, paramsId] of [["agent-kind", "agent-params"],
                                    ["agent1-kind", "agent1-params"],
                                    ["hint-kind", "hint-params"]]) {
    $(kindId).addEventListener("change", () => kindChanged(kindId, paramsId));
  }
  $("start").addEventListener("click", startGame);
  $("flip").addEventListener("click", () => { S.flipped = !S.flipped; render(); });
  $("undo").addEventListener("click", () => act(async () => {
    clearError();
    setGame(await api("POST", `/api/games/${S.game.id}/undo`));
  }));
  $("resign").addEventListener("click", () => act(async () => {
    setGame(await api("POST", `/api/games/${S.game.id}/resign`));
  }));
  $("hint").addEventListener("click", askHint);
  $("save").addEventListener("click", save);
  $("load").addEventListener("change", async (evt) => {
    const file = evt.target.files[0];
    if (!file) return;
    S.loadText = await file.text();
    $("load-index").value = 0;
    evt.target.value = "";
    await loadGame();
  });
  $("load-index").addEventListener("change", loadGame);
  $("pause").addEventListener("click", () => act(async () => {
    setGame(await api("POST", `/api/games/${S.game.id}/watch`, { paused: !S.game.paused }));
  }));
  $("delay").addEventListener("input", () => {
    $("delay-label").textContent = `${Number($("delay").value).toFixed(1)} s`;
  });
  $("delay").addEventListener("change", () => act(async () => {
    setGame(await api("POST", `/api/games/${S.game.id}/watch`, { delay: Number($("delay").value) }));
  }));
  $("error-close").addEventListener("click", clearError);
  $("slider").addEventListener("input", (evt) => setViewPly(Number(evt.target.value)));
  $("first").addEventListener("click", () => setViewPly(0));
  $("prev").addEventListener("click", () => setViewPly(currentPly() - 1));
  $("next").addEventListener("click", () => setViewPly(currentPly() + 1));
  $("last").addEventListener("click", () => setViewPly(S.game.moves.length));
  $("typed").addEventListener("submit", (evt) => {
    evt.preventDefault();
    const move = $("move-text").value.trim();
    if (!move) return;
    $("move-text").value = "";
    play({ move });
  });
  document.addEventListener("keydown", (evt) => {
    if (!S.game || evt.target.closest("input, select, textarea")) return;
    const keys = { ArrowLeft: currentPly() - 1, ArrowRight: currentPly() + 1,
                   Home: 0, End: S.game.moves.length };
    if (evt.key in keys) { evt.preventDefault(); setViewPly(keys[evt.key]); }
  });
  bindBoard();
  setInterval(drawClocks, 250);
  await startGame();
}

window.addEventListener("DOMContentLoaded", () => act(init));
window.addEventListener("pagehide", () => { if (S.game) release(S.game.id); });
window.addEventListener("pageshow", (evt) => { if (evt.persisted) startGame(); });

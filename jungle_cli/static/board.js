// jungle serve: the board, drawn as SVG from the server's view of the game. Loaded before
// app.js, whose state (S) and helpers ($) these functions read when they are called.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const Q = 64;      // square size
const M = 22;      // margin for coordinates

function geometry() { return S.game.board; }

function squareName(sq) {
  const b = geometry();
  return b.files[sq % b.cols] + (Math.floor(sq / b.cols) + 1);
}

function squareXY(sq) {
  const b = geometry();
  const r = Math.floor(sq / b.cols), c = sq % b.cols;
  const x = S.flipped ? b.cols - 1 - c : c;
  const y = S.flipped ? r : b.rows - 1 - r;
  return [M + x * Q, M + y * Q];
}

function squareAt(evt) {
  const svg = $("board");
  const pt = svg.createSVGPoint();
  pt.x = evt.clientX; pt.y = evt.clientY;
  const p = pt.matrixTransform(svg.getScreenCTM().inverse());
  const b = geometry();
  const x = Math.floor((p.x - M) / Q), y = Math.floor((p.y - M) / Q);
  if (x < 0 || y < 0 || x >= b.cols || y >= b.rows) return null;
  const c = S.flipped ? b.cols - 1 - x : x;
  const r = S.flipped ? y : b.rows - 1 - y;
  return r * b.cols + c;
}

function el(name, attrs, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

function text(parent, x, y, content, cls) {
  const t = el("text", { x, y, class: cls }, parent);
  t.textContent = content;
  return t;
}

function probText(sq, piece) {
  const parts = piece.probs.map((p) => `${p.letter} ${p.name} ${(100 * p.p).toFixed(1)}%`);
  const owner = piece.owner === null ? "owner unknown" : `player ${piece.owner}'s`;
  return `${squareName(sq)}: face down (${owner}); it may be ${parts.join(", ")}`;
}

function drawBoard() {
  const b = geometry();
  const pos = S.shown;
  const svg = $("board");
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${2 * M + b.cols * Q} ${2 * M + b.rows * Q}`);
  svg.dataset.variant = b.variant;
  svg.dataset.flipped = S.flipped ? "1" : "0";
  const water = new Set(b.water), traps = new Set(b.traps), dens = new Set(b.dens);
  const squares = el("g", { class: "squares" }, svg);
  const last = pos.last;
  const live = S.viewPly === null;
  const legal = live ? S.game.legal : [];
  const n = b.rows * b.cols;
  for (let sq = 0; sq < n; sq++) {
    const [x, y] = squareXY(sq);
    const r = Math.floor(sq / b.cols), c = sq % b.cols;
    let cls = (r + c) % 2 ? "sq light" : "sq dark";
    if (water.has(sq)) cls = "sq water";
    if (traps.has(sq)) cls += " trap";
    if (dens.has(sq)) cls += " den";
    if (last && (last.from === sq || last.to === sq)) cls += " last";
    if (S.selected === sq && live) cls += " selected";
    if (S.hint && live && (S.hint.from === sq || S.hint.to === sq)) cls += " hinted";
    el("rect", { x, y, width: Q, height: Q, class: cls, "data-square": squareName(sq) }, squares);
    if (traps.has(sq)) text(squares, x + Q / 2, y + Q / 2 + 5, "trap", "terrain");
    if (dens.has(sq)) text(squares, x + Q / 2, y + Q / 2 + 5, "den", "terrain");
  }
  for (let c = 0; c < b.cols; c++) {
    const [x] = squareXY(c);
    text(svg, x + Q / 2, M + b.rows * Q + 16, b.files[c], "coord");
  }
  for (let r = 0; r < b.rows; r++) {
    const [, y] = squareXY(r * b.cols);
    text(svg, 8, y + Q / 2 + 5, String(r + 1), "coord");
  }
  const pieces = el("g", { class: "pieces" }, svg);
  pos.squares.forEach((piece, sq) => {
    if (!piece) return;
    const [x, y] = squareXY(sq);
    const g = el("g", { class: "piece", "data-square": squareName(sq),
                        transform: `translate(${x + Q / 2},${y + Q / 2})` }, pieces);
    if (piece.down) {
      g.classList.add("down");
      if (piece.owner !== null) g.classList.add(`p${piece.owner}`);
      el("circle", { r: Q * 0.4 }, g);
      text(g, 0, 8, "?", "letter");
      const title = el("title", {}, g);
      title.textContent = probText(sq, piece);
      g.addEventListener("mouseenter", () => {
        S.probeSq = sq;
        $("probe").textContent = probText(sq, piece);
      });
      g.addEventListener("mouseleave", () => { S.probeSq = null; $("probe").textContent = ""; });
    } else {
      g.classList.add(`p${piece.owner}`);
      el("circle", { r: Q * 0.4 }, g);
      text(g, 0, 4, piece.letter, "letter");
      text(g, 0, 20, piece.name, "name");
      const title = el("title", {}, g);
      title.textContent = `${squareName(sq)}: player ${piece.owner}'s ${piece.name} (rank ${piece.rank})`;
    }
  });
  // the square under the pointer may have changed under it (a reveal, a move, a replay)
  const probed = S.probeSq === null ? null : pos.squares[S.probeSq];
  if (probed && probed.down) $("probe").textContent = probText(S.probeSq, probed);
  else { S.probeSq = null; $("probe").textContent = ""; }
  if (S.selected !== null && live) {
    for (const m of legal) {
      if (m.from !== S.selected || m.action < n) continue;
      const [x, y] = squareXY(m.to);
      const onPiece = pos.squares[m.to] !== null;  // a ring around a piece, as lichess does
      el("circle", { cx: x + Q / 2, cy: y + Q / 2, r: onPiece ? Q * 0.46 : 9,
                     class: onPiece ? "dot ring" : "dot", "data-target": squareName(m.to) }, svg);
    }
  }
}

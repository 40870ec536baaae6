"""The replay viewer: one self-contained HTML file that plays a recorded match back.

`replay_html` takes a recording (plain data, sim.engine.replay.record_match) and
returns one HTML page with everything inline: the recording as compact JSON in a
`<script type="application/json">` block, the viewer's CSS and JavaScript, and a
Content-Security-Policy that forbids every request (`default-src 'none'`), so the
page opens offline and cannot reach the network.

The viewer draws the board of each turn as SVG (terrain, region owners in seat
colours, bought tiles, cities with population and HP, units by type, bandit camps
and neutral villages), with a turn slider, play/pause, keyboard steps (left/right
arrows, Home/End, space), score bars and V18 dominance counters per seat, a score
chart, and the event timeline: each entry jumps to its turn when clicked. Colours
and unit glyphs are those of `sim map` (sim.report.map).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

from sim.report.map import (
    BANDIT_COLOUR,
    BANDIT_GLYPH,
    CAMP_COLOUR,
    NEUTRAL_COLOUR,
    NODE_COLOURS,
    NODE_LETTERS,
    SEAT_COLOURS,
    TERRAIN_COLOURS,
    unit_glyphs,
)
from sim.rules.codes import EVENT_NAMES

# the event kinds the timeline shows at first (the others are one click away): what
# changes the course of a match, as RULES.md names it
MAJOR_EVENTS = ("capture", "capital_fall", "transfer", "eliminated", "revolt_start", "unrest",
                "observatory_queued", "observatory_lost", "observatory_completed", "truce",
                "pact", "pact_end", "found", "camp_cleared", "victory")
# the kinds that also get a tick on the strip under the slider
TICK_EVENTS = ("capital_fall", "eliminated", "observatory_queued", "observatory_lost",
               "observatory_completed", "pact", "victory")
assert set(MAJOR_EVENTS) <= set(EVENT_NAMES) and set(TICK_EVENTS) <= set(MAJOR_EVENTS)


def replay_title(meta: dict[str, Any]) -> str:
    """One line: seed, match, variant, seats, winner and victory type."""
    variant = f" · variant {meta['variant']}" if meta.get("variant") else ""
    if meta["winner"] is None:
        result = f"no winner (turn {meta['end_turn']})"
    else:
        who = meta["personalities"][meta["winner"]]
        result = (f"seat {meta['winner']} ({who}) wins by {meta['victory']} on turn "
                  f"{meta['end_turn']}")
    return (f"Replay: seed {meta['seed']} · match {meta['match_index']}{variant} · "
            f"{meta['seats']} seats · {result}")


def replay_html(recording: dict[str, Any]) -> str:
    """The viewer page of one recording (sim.engine.replay.record_match's keys)."""
    meta = recording["meta"]
    style = {
        "seat": list(SEAT_COLOURS), "neutral": NEUTRAL_COLOUR, "bandit": BANDIT_COLOUR,
        "camp": CAMP_COLOUR, "terrain": list(TERRAIN_COLOURS), "node": list(NODE_COLOURS),
        "nodeLetter": list(NODE_LETTERS), "glyph": unit_glyphs(recording["names"]["units"]),
        "banditGlyph": BANDIT_GLYPH, "major": list(MAJOR_EVENTS), "tick": list(TICK_EVENTS),
    }
    data = json.dumps({**recording, "style": style}, separators=(",", ":"))
    # JSON inside <script>: "</" would end the block and "<!--" change how it is read,
    # so < > & are written as JSON escapes (any name or path in it is data)
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    title = replay_title(meta)
    length = meta["length"] or "the tables' default"
    sub = (f"length {html.escape(str(length))} ({meta['last_turn']} turns) · tables "
           f"{html.escape(meta['tables_hash'])}")
    if meta.get("match_id"):
        sub += f" · match {html.escape(meta['match_id'])} of {html.escape(meta['run'])}"
    parts = {"TITLE": html.escape(title), "SUB": sub, "LEGEND": _legend(recording, style),
             "CSS": _CSS, "JS": _JS, "DATA": data}
    # one pass over the template: a part is never searched again, so a run folder
    # named %DATA% stays a name
    return re.sub(r"%(TITLE|SUB|LEGEND|CSS|JS|DATA)%", lambda m: parts[m.group(1)], _PAGE)


def write_replay(recording: dict[str, Any], out: Path) -> Path:
    """Write the viewer page of `recording` to `out` (folders made); returns `out`."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(replay_html(recording), encoding="utf-8")
    return out


def _swatch(colour: str, shape: str = "hex", text: str = "", text_colour: str = "#fff") -> str:
    body = {
        "hex": f"<polygon points='8,1 14.5,4.5 14.5,11.5 8,15 1.5,11.5 1.5,4.5' fill='{colour}'/>",
        "square": f"<rect x='2' y='2' width='12' height='12' fill='{colour}' stroke='#000'/>",
        "circle": f"<circle cx='8' cy='8' r='7' fill='{colour}' stroke='#fff'/>",
        "cross": f"<path d='M3 3L13 13M3 13L13 3' stroke='{colour}' stroke-width='2.5'/>",
    }[shape]
    label = (f"<text x='8' y='8.5' fill='{text_colour}' font-size='{8 if len(text) < 2 else 6.5}'"
             f" text-anchor='middle' dominant-baseline='central'>{html.escape(text)}</text>"
             if text else "")
    return f"<svg width='16' height='16' viewBox='0 0 16 16'>{body}{label}</svg>"


def _legend(recording: dict[str, Any], style: dict[str, Any]) -> str:
    meta, names = recording["meta"], recording["names"]
    seats = "".join(f"<li>{_swatch(SEAT_COLOURS[s % len(SEAT_COLOURS)])} seat {s} "
                    f"({html.escape(p)})</li>" for s, p in enumerate(meta["personalities"]))
    units = "".join(f"<li>{_swatch(SEAT_COLOURS[0], 'circle', g)} {html.escape(n)}</li>"
                    for g, n in zip(style["glyph"], names["units"], strict=True))
    units += f"<li>{_swatch(BANDIT_COLOUR, 'circle', BANDIT_GLYPH)} bandit</li>"
    terrain = "".join(f"<li>{_swatch(c)} {html.escape(n)}</li>"
                      for c, n in zip(TERRAIN_COLOURS, names["terrains"], strict=True))
    nodes = "".join(f"<li>{_swatch(c, 'circle', letter, '#000')} {html.escape(n)} node</li>"
                    for c, letter, n in zip(NODE_COLOURS, NODE_LETTERS, names["nodes"],
                                            strict=True))
    symbols = (f"<li>{_swatch(SEAT_COLOURS[0], 'square', '3')} city: population; ★ capital;"
               " bar: HP; dashed: revolt</li>"
               f"<li>{_swatch(NEUTRAL_COLOUR, 'square', '1')} neutral village</li>"
               f"<li>{_swatch(CAMP_COLOUR, 'cross')} bandit camp</li>"
               f"<li>{_swatch(SEAT_COLOURS[0] + '99')} region (pale) and bought tile (strong)"
               "</li>")
    return (f"<div><h3>Seats</h3><ul>{seats}</ul></div><div><h3>Units</h3><ul>{units}</ul>"
            f"</div><div><h3>Map</h3><ul>{symbols}{terrain}{nodes}</ul></div>")


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none';
 script-src 'unsafe-inline'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%TITLE%</title>
<style>%CSS%</style></head>
<body>
<header><h1 id="title">%TITLE%</h1><p class="sub">%SUB%</p></header>
<main>
<section id="left">
<div id="controls">
<button id="first" title="first turn (Home)">|◀</button>
<button id="prev" title="previous turn (←)">◀</button>
<button id="play" title="play / pause (space)">▶</button>
<button id="next" title="next turn (→)">▶</button>
<button id="last" title="last turn (End)">▶|</button>
<span id="turnlabel"></span>
<label>speed <select id="speed"><option value="1000">1 turn/s</option>
<option value="400" selected>2.5 turns/s</option><option value="150">7 turns/s</option>
<option value="50">20 turns/s</option></select></label>
</div>
<input type="range" id="turn" min="0" max="0" value="0" step="1" aria-label="turn">
<svg id="ticks" height="14" preserveAspectRatio="none" aria-label="key events by turn"></svg>
<svg id="board" role="img" aria-label="the board"></svg>
</section>
<aside id="right">
<h2>Seats</h2><div id="seats"></div>
<h2>Score by turn</h2><svg id="chart" viewBox="0 0 400 140" preserveAspectRatio="none"
 aria-label="score by turn"></svg><p class="sub" id="chart-axes"></p>
<h2>Events</h2><div id="kinds"></div><ol id="events"></ol>
</aside>
</main>
<section id="legend"><h2>Legend</h2><div class="cols">%LEGEND%</div>
<p class="sub">Turn N shows the board after every seat played turn N and turn N+1 opened
(its opening seat's income, production and revolt counters ran, T12); turn 0 is the
opening. Keys: ← → one turn, Home / End, space play / pause.</p></section>
<script type="application/json" id="replay-data">%DATA%</script>
<script>%JS%</script>
</body></html>
"""

_CSS = """
body{font-family:system-ui,sans-serif;margin:0;background:#f4f1ea;color:#222}
header{padding:8px 16px;background:#fff;border-bottom:1px solid #ccc}
h1{font-size:18px;margin:4px 0}h2{font-size:14px;margin:12px 0 4px}h3{font-size:13px;margin:4px 0}
.sub{color:#555;font-size:12px;margin:2px 0}
main{display:flex;flex-wrap:wrap;gap:12px;padding:8px 16px}
#left{flex:1 1 560px;min-width:420px}#right{flex:0 1 420px;min-width:320px}
#controls{display:flex;align-items:center;gap:6px;flex-wrap:wrap}
#controls button{font-size:14px;min-width:34px}#turn{width:100%;margin:6px 0 0;display:block}
#turnlabel{font-variant-numeric:tabular-nums;min-width:110px}
#ticks{width:100%;display:block;cursor:pointer;background:#e9e4d8}
#board{width:100%;height:auto;background:#f4f1ea;display:block}
.seat{display:grid;grid-template-columns:150px 1fr 46px;align-items:center;gap:4px;
 font-size:12px;margin:2px 0}
.seat.out{opacity:.45;text-decoration:line-through}
.bar{height:12px;background:#e3ded3;position:relative}.bar>div{height:100%}
.seat .num{text-align:right;font-variant-numeric:tabular-nums}
.dom{grid-column:1/4;font-size:11px;color:#444;padding-left:18px}
.pip{display:inline-block;width:7px;height:7px;border:1px solid #666;margin-right:1px}
.pip.on{background:#444}
.sw{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
#chart{width:100%;height:140px;background:#fff;cursor:pointer}
#kinds{font-size:11px;display:flex;flex-wrap:wrap;gap:2px 8px}
#events{font-size:12px;max-height:420px;overflow-y:auto;list-style:none;padding:0;margin:4px 0;
 background:#fff;border:1px solid #ddd}
#events li{padding:2px 6px;cursor:pointer;border-bottom:1px solid #f0f0f0}
#events li:hover{background:#eef}#events li.now{background:#ffe9a8}#events li.future{color:#999}
#events li .t{display:inline-block;min-width:34px;color:#555;font-variant-numeric:tabular-nums}
#legend{padding:0 16px 16px}.cols{display:flex;flex-wrap:wrap;gap:24px}
#legend ul{list-style:none;padding:0;margin:0;font-size:12px}
#legend li{display:flex;align-items:center;gap:6px;margin:2px 0}
"""

_JS = r"""
(function () {
"use strict";
const D = JSON.parse(document.getElementById("replay-data").textContent);
const S = D.style, B = D.board, F = D.frames, M = D.meta;
const NT = B.q.length, R = B.radius, NF = F.turn.length, NS = M.seats;
const SIZE = 18, SQ3 = Math.sqrt(3), PAD = SIZE * 1.5;
const W = SIZE * SQ3 * (2 * R + 1) + 2 * PAD, H = SIZE * 3 * R + 2 * SIZE + 2 * PAD;
const X = new Float64Array(NT), Y = new Float64Array(NT);
for (let t = 0; t < NT; t++) {
  X[t] = W / 2 + SIZE * SQ3 * (B.q[t] + B.r[t] / 2);
  Y[t] = H / 2 + SIZE * 1.5 * B.r[t];
}
const f1 = (v) => v.toFixed(1);
function hex(x, y, s) {
  const p = [];
  for (let k = 0; k < 6; k++) {
    const a = Math.PI / 180 * (60 * k - 30);
    p.push(f1(x + s * Math.cos(a)) + "," + f1(y + s * Math.sin(a)));
  }
  return p.join(" ");
}
const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const colour = (o) => o >= 0 ? S.seat[o % S.seat.length] : (o === -2 ? S.neutral : S.bandit);
const owners = (o) => o >= 0 ? "seat " + o : (o === -2 ? "neutral" : "bandit");

// ---- the board: terrain and nodes once, an owner overlay per tile, the rest per frame
const board = document.getElementById("board");
board.setAttribute("viewBox", "0 0 " + f1(W) + " " + f1(H));
let stat = "", over = "";
for (let t = 0; t < NT; t++) {
  stat += '<polygon points="' + hex(X[t], Y[t], SIZE) + '" fill="' + S.terrain[B.terrain[t]] +
    '" stroke="#fff" stroke-width="1"/>';
  over += '<polygon points="' + hex(X[t], Y[t], SIZE * 0.92) + '" fill="none" stroke-width="2"/>';
}
for (let t = 0; t < NT; t++) {
  const k = B.node[t];
  if (k < 0) continue;
  const x = X[t] - SIZE * 0.45, y = Y[t] - SIZE * 0.35;
  stat += '<circle cx="' + f1(x) + '" cy="' + f1(y) + '" r="' + f1(SIZE * 0.22) + '" fill="' +
    S.node[k] + '" stroke="#333"/><text x="' + f1(x) + '" y="' + f1(y) +
    '" font-size="5" text-anchor="middle" dominant-baseline="central">' + S.nodeLetter[k] +
    '</text>';
}
board.innerHTML = '<g id="terrain">' + stat + '</g><g id="owners">' + over +
  '</g><g id="pieces"></g>';
const overlay = board.querySelectorAll("#owners polygon");
const pieces = board.querySelector("#pieces");
const shown = new Array(NT).fill("");

function drawOwners(f) {
  const own = F.owner[f];
  for (let t = 0; t < NT; t++) {
    const ch = own[t];
    if (ch === shown[t]) continue;
    shown[t] = ch;
    const p = overlay[t];
    if (ch === ".") { p.setAttribute("fill", "none"); p.setAttribute("stroke", "none"); continue; }
    const code = ch.charCodeAt(0), bought = code < 97;
    const c = S.seat[(code - (bought ? 65 : 97)) % S.seat.length];
    p.setAttribute("fill", c);
    p.setAttribute("fill-opacity", bought ? "0.6" : "0.3");
    p.setAttribute("stroke", c);
    p.setAttribute("stroke-dasharray", bought ? "3 2" : "");
  }
}

function drawPieces(f) {
  let out = "";
  for (const t of F.camps[f]) {
    const d = SIZE * 0.4, x = X[t], y = Y[t];
    out += '<path class="camp" d="M' + f1(x - d) + " " + f1(y - d) + "L" + f1(x + d) + " " +
      f1(y + d) + "M" + f1(x - d) + " " + f1(y + d) + "L" + f1(x + d) + " " + f1(y - d) +
      '" stroke="' + S.camp + '" stroke-width="3"><title>bandit camp</title></path>';
  }
  const cities = F.cities[f], withCity = new Set();
  for (let i = 0; i < cities.length; i += 8) {
    const [id, t, o, pop, hp, hpMax, cap, revolt] = cities.slice(i, i + 8);
    withCity.add(t);
    const s = SIZE * 0.55, x = X[t], y = Y[t], c = colour(o);
    const tip = (o === -2 ? "neutral village " : "city ") + id + " · " + owners(o) + " · pop " +
      pop + " · HP " + hp + "/" + hpMax + (cap ? " · capital" : "") +
      (revolt ? " · revolt " + revolt + " turns" : "");
    const frac = hpMax > 0 ? Math.max(0, Math.min(1, hp / hpMax)) : 0;
    out += '<g class="city" data-city="' + id + '"><title>' + esc(tip) + '</title><rect x="' +
      f1(x - s) + '" y="' + f1(y - s) + '" width="' + f1(2 * s) + '" height="' + f1(2 * s) +
      '" fill="' + c + '" stroke="' + (revolt ? "#ff0" : "#000") + '" stroke-width="' +
      (revolt ? 2.5 : 1.5) + '"' + (revolt ? ' stroke-dasharray="3 2"' : "") + '/>' +
      '<text x="' + f1(x) + '" y="' + f1(y) + '" fill="#fff" font-size="10.8" ' +
      'font-weight="bold" text-anchor="middle" dominant-baseline="central">' + pop +
      (cap ? "★" : "") + '</text><rect x="' + f1(x - s) + '" y="' + f1(y + s + 1) +
      '" width="' + f1(2 * s) + '" height="2.5" fill="#400"/><rect x="' + f1(x - s) +
      '" y="' + f1(y + s + 1) + '" width="' + f1(2 * s * frac) +
      '" height="2.5" fill="#2ca02c"/></g>';
  }
  const units = F.units[f];
  for (let i = 0; i < units.length; i += 4) {
    const [t, o, type, hp] = units.slice(i, i + 4);
    const g = type < 0 ? S.banditGlyph : S.glyph[type];
    const name = type < 0 ? "bandit" : D.names.units[type];
    const x = X[t] + (withCity.has(t) ? SIZE * 0.45 : 0);
    const y = Y[t] + (withCity.has(t) ? SIZE * 0.4 : 0);
    out += '<g class="unit"><title>' + esc(name + " · " + owners(o) + " · HP " + hp) +
      '</title><circle cx="' + f1(x) + '" cy="' + f1(y) + '" r="' + f1(SIZE * 0.34) +
      '" fill="' + colour(o) + '" stroke="#fff"/><text x="' + f1(x) + '" y="' + f1(y) +
      '" fill="#fff" font-size="' + (g.length > 1 ? 6 : 7.5) +
      '" text-anchor="middle" dominant-baseline="central">' + esc(g) + '</text></g>';
  }
  pieces.innerHTML = out;
}

// ---- seats: score bars, dominance counters
const seatsBox = document.getElementById("seats");
let maxScore = 1;
for (const row of F.score) for (const v of row) maxScore = Math.max(maxScore, v);
const seatRows = [];
for (let s = 0; s < NS; s++) {
  const div = document.createElement("div");
  div.className = "seat";
  div.innerHTML = '<span><span class="sw" style="background:' + colour(s) + '"></span>seat ' +
    s + " " + esc(M.personalities[s]) + '</span><div class="bar"><div style="background:' +
    colour(s) + '"></div></div><span class="num"></span><div class="dom"></div>';
  seatsBox.appendChild(div);
  seatRows.push(div);
}
function drawSeats(f) {
  const terms = D.names.score_terms, nt = terms.length;
  for (let s = 0; s < NS; s++) {
    const row = seatRows[s], score = F.score[f][s], dom = F.dominance[f][s];
    row.classList.toggle("out", !F.alive[f][s]);
    row.querySelector(".bar>div").style.width = (100 * score / maxScore).toFixed(1) + "%";
    row.querySelector(".num").textContent = score;
    const parts = terms.map((k, i) => k + " " + F.terms[f][s * nt + i]).join(", ");
    row.title = "score " + score + " = " + parts;
    let pips = "";
    for (let k = 0; k < M.counter_to_win; k++)
      pips += '<span class="pip' + (k < dom ? " on" : "") + '"></span>';
    row.querySelector(".dom").innerHTML = "dominance " + dom + "/" + M.counter_to_win + " " +
      pips + " · gold " + F.gold[f][s] + " · science " + F.science[f][s] +
      (F.alive[f][s] ? "" : " · eliminated");
  }
}

// ---- the score chart and the tick strip under the slider
const chart = document.getElementById("chart");
const CW = 400, CH = 140, last = Math.max(NF - 1, 1);
const cxOf = (f) => 4 + (CW - 8) * f / last, cyOf = (v) => CH - 4 - (CH - 8) * v / maxScore;
let lines = "";
for (let s = 0; s < NS; s++) {
  const pts = F.score.map((row, f) => f1(cxOf(f)) + "," + f1(cyOf(row[s]))).join(" ");
  lines += '<polyline points="' + pts + '" fill="none" stroke="' + colour(s) +
    '" stroke-width="1.5" vector-effect="non-scaling-stroke"/>';
}
// gridlines at a quarter, half and three quarters of the top score, named below the
// chart (text inside this stretched SVG would stretch with it)
let grid = "";
for (const q of [0.25, 0.5, 0.75]) {
  grid += '<line x1="0" x2="' + CW + '" y1="' + f1(cyOf(q * maxScore)) + '" y2="' +
    f1(cyOf(q * maxScore)) + '" stroke="#ddd" vector-effect="non-scaling-stroke"/>';
}
chart.innerHTML = grid + lines + '<line id="cursor" y1="0" y2="' + CH +
  '" stroke="#000" stroke-dasharray="2 2" vector-effect="non-scaling-stroke"/>';
document.getElementById("chart-axes").textContent = "Up: score, 0 to " + maxScore +
  " (grey lines at " + [0.25, 0.5, 0.75].map((q) => Math.round(q * maxScore)).join(", ") +
  "); across: from the opening to turn " + F.turn[NF - 1] + ". Click to go to a turn.";
const cursor = chart.querySelector("#cursor");
chart.addEventListener("click", (e) => {
  const r = chart.getBoundingClientRect();
  setTurn(Math.round((e.clientX - r.left) / r.width * last));
});
const ticks = document.getElementById("ticks");
ticks.setAttribute("viewBox", "0 0 1000 14");
let tk = "";
D.events.forEach((e) => {
  const kind = D.names.events[e[1]];
  if (!S.tick.includes(kind)) return;
  const x = f1(996 * Math.min(e[0], last) / last);
  tk += '<rect x="' + x + '" y="0" width="4" height="14" fill="' + colour(e[2]) + '"><title>t' +
    e[0] + " " + esc(e[5]) + '</title></rect>';
});
ticks.innerHTML = tk;
ticks.addEventListener("click", (e) => {
  const r = ticks.getBoundingClientRect();
  setTurn(Math.round((e.clientX - r.left) / r.width * last));
});

// ---- the event timeline
const list = document.getElementById("events"), kindsBox = document.getElementById("kinds");
const counts = {};
let items = "";
D.events.forEach((e, i) => {
  const kind = D.names.events[e[1]];
  counts[kind] = (counts[kind] || 0) + 1;
  const who = e[2] >= 0 ? e[2] : e[3];
  items += '<li data-turn="' + e[0] + '" data-kind="' + kind + '" data-i="' + i +
    '"' + (S.major.includes(kind) ? "" : " hidden") + '><span class="t">t' + e[0] +
    '</span><span class="sw" style="background:' + colour(who) + '"></span>' + esc(e[5]) +
    '</li>';
});
list.innerHTML = items;
const lis = Array.from(list.children);
D.names.events.forEach((kind) => {
  if (!counts[kind]) return;
  const id = "kind-" + kind;
  const label = document.createElement("label");
  label.innerHTML = '<input type="checkbox" id="' + id + '" data-kind="' + kind + '"' +
    (S.major.includes(kind) ? " checked" : "") + "> " + kind.replace(/_/g, " ") + " (" +
    counts[kind] + ")";
  kindsBox.appendChild(label);
});
kindsBox.addEventListener("change", (e) => {
  const kind = e.target.dataset.kind, on = e.target.checked;
  for (const li of lis) if (li.dataset.kind === kind) li.hidden = !on;
});
list.addEventListener("click", (e) => {
  const li = e.target.closest("li");
  if (li) { stop(); setTurn(Number(li.dataset.turn)); }
});
function drawEvents(f, follow) {
  let first = null;
  for (const li of lis) {
    const t = Number(li.dataset.turn);
    li.classList.toggle("now", t === f);
    li.classList.toggle("future", t > f);
    if (first === null && t === f && !li.hidden) first = li;
  }
  if (follow && first) list.scrollTop = first.offsetTop - list.offsetTop - 40;
}

// ---- turn control
const slider = document.getElementById("turn"), label = document.getElementById("turnlabel");
const playBtn = document.getElementById("play"), speed = document.getElementById("speed");
slider.max = String(NF - 1);
let current = -1, timer = null;
function setTurn(f, follow) {
  f = Math.max(0, Math.min(NF - 1, Math.round(f)));
  if (f !== Number(slider.value)) slider.value = String(f);
  if (f === current) return;
  current = f;
  drawOwners(f); drawPieces(f); drawSeats(f); drawEvents(f, follow);
  cursor.setAttribute("x1", f1(cxOf(f))); cursor.setAttribute("x2", f1(cxOf(f)));
  label.textContent = (f === 0 ? "opening" : "turn " + F.turn[f]) + " / " + F.turn[NF - 1];
  board.dataset.turn = String(F.turn[f]);
}
function stop() { if (timer) { clearInterval(timer); timer = null; } playBtn.textContent = "▶"; }
function play() {
  if (current >= NF - 1) setTurn(0);
  playBtn.textContent = "||";  // a pause sign every font has (headless fonts lack ⏸)
  timer = setInterval(() => {
    if (current >= NF - 1) { stop(); return; }
    setTurn(current + 1, true);
  }, Number(speed.value));
}
slider.addEventListener("input", () => setTurn(Number(slider.value)));
playBtn.addEventListener("click", () => (timer ? stop() : play()));
speed.addEventListener("change", () => { if (timer) { stop(); play(); } });
document.getElementById("first").addEventListener("click", () => { stop(); setTurn(0); });
document.getElementById("last").addEventListener("click", () => { stop(); setTurn(NF - 1); });
document.getElementById("prev").addEventListener("click", () => { stop(); setTurn(current - 1); });
document.getElementById("next").addEventListener("click", () => { stop(); setTurn(current + 1); });
document.addEventListener("keydown", (e) => {
  if (e.altKey || e.ctrlKey || e.metaKey) return;
  const step = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
  if (step) { e.preventDefault(); stop(); setTurn(current + step, true); }
  else if (e.key === "Home") { e.preventDefault(); stop(); setTurn(0); }
  else if (e.key === "End") { e.preventDefault(); stop(); setTurn(NF - 1); }
  else if (e.key === " " && !/^(BUTTON|INPUT|SELECT)$/.test(e.target.tagName)) {
    e.preventDefault(); timer ? stop() : play();
  }
});
setTurn(0);
window.replay = { setTurn: setTurn, frames: NF };
})();
"""

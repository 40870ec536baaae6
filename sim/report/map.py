"""Draw a board position as SVG or PNG so a designer can look at a generated map.

Shapes are computed once (`_shapes`) and rendered by either backend: SVG by
hand (no dependency) or PNG with Pillow. Shown: a title, terrain, resource nodes,
regions tinted by owner, cities (population, capital star), each seat's label at
its capital, neutral villages, bandit camps and units; a legend below the board
names the seat colours, terrains, nodes, symbols and unit glyphs.
"""

from __future__ import annotations

import math
from pathlib import Path

from sim.kernels.rules.standings import regions
from sim.rules.codes import (
    BANDIT,
    NEUTRAL,
    NODE_KINDS,
    TERRAINS,
)
from sim.rules.tables import Tables
from sim.world.board import Board
from sim.world.state import (
    State,
)

TERRAIN_COLOURS = ("#cfe3a0", "#6f9e4f", "#c2a36b", "#8a8580", "#6fa8dc")
NODE_COLOURS = ("#f2c14e", "#a0522d", "#ffd700")
NODE_LETTERS = ("F", "P", "G")
SEAT_COLOURS = ("#d62728", "#1f77b4", "#9467bd", "#ff7f0e", "#17becf", "#e377c2")
NEUTRAL_COLOUR = "#555555"
BANDIT_COLOUR = "#000000"
CAMP_COLOUR = "#8b0000"
BANDIT_GLYPH = "b"
BACKGROUND = "#f4f1ea"


def unit_glyphs(names: list[str]) -> list[str]:
    """A short label per unit type, in `names` order: the shortest prefix no other name
    shares, first letter upper case (settler Se, spearman Sp, swordsman Sw, warrior
    W). A name that is a prefix of another keeps its whole self."""
    out = []
    for name in names:
        others = [n for n in names if n != name]
        k = next((k for k in range(1, len(name) + 1)
                  if not any(o.startswith(name[:k]) for o in others)), len(name))
        out.append(name[:k].capitalize())
    return out


def seat_colour(owner: int) -> str:
    """The colour of an owner: a seat's, grey for the neutral side, black for bandits."""
    if owner == NEUTRAL:
        return NEUTRAL_COLOUR
    if owner == BANDIT:
        return BANDIT_COLOUR
    return SEAT_COLOURS[owner % len(SEAT_COLOURS)]


def _hex_corners(cx: float, cy: float, size: float) -> list[tuple[float, float]]:
    return [(cx + size * math.cos(math.radians(60 * k - 30)),
             cy + size * math.sin(math.radians(60 * k - 30))) for k in range(6)]


def _text_width(text: str, px: float) -> float:
    """A sans-serif line's width, estimated (no font metrics in either backend)."""
    return 0.6 * px * len(text)


def _shapes(state: State, tables: Tables, board: Board, size: float, title: str | None = None):
    """Drawing primitives in painter's order: ("canvas", (w, h)) first, then
    ("poly", (points, fill, stroke, opacity, width)), ("circle", (x, y, r, fill,
    stroke)), ("line", (x1, y1, x2, y2, colour, width)), ("text", (x, y, text, colour,
    px, anchor)) with anchor "middle" or "start", and ("label", (x, y, text, colour,
    px)): bold text with a white halo."""
    tb = tables.arrays()
    tile_city = regions(state, tb, board)
    R = board.radius
    n_seats = int(state.n_seats[0])
    margin = size * 1.5
    title_h = size * 2.2
    width = size * math.sqrt(3) * (2 * R + 1) + 2 * margin
    board_h = size * 1.5 * (2 * R) + 2 * size + 2 * margin
    legend, legend_h = _legend(state, tables, width, size, title_h + board_h, n_seats)
    height = title_h + board_h + legend_h

    def centre(t: int) -> tuple[float, float]:
        q, r = board.axial(t)
        return (width / 2 + size * math.sqrt(3) * (q + r / 2),
                title_h + board_h / 2 + size * 1.5 * r)

    shapes: list[tuple[str, tuple]] = [("canvas", (width, height))]
    if title is None:
        title = f"{n_seats} seats, board radius {R}, tables {tables.hash}"
    shapes.append(("text", (margin, title_h * 0.55, title, "#222222", size * 0.9, "start")))
    for t in range(board.n_tiles):
        cx, cy = centre(t)
        shapes.append(("poly", (_hex_corners(cx, cy, size), TERRAIN_COLOURS[state.tile_terrain[t]],
                                "#ffffff", 1.0, 1.0)))
    for t in range(board.n_tiles):
        c = tile_city[t]
        if c >= 0:
            cx, cy = centre(t)
            colour = SEAT_COLOURS[state.city_owner[c] % len(SEAT_COLOURS)]
            shapes.append(("poly", (_hex_corners(cx, cy, size * 0.92), colour, colour, 0.30, 2.0)))
        if state.tile_bought_by[t] >= 0:
            cx, cy = centre(t)
            shapes.append(("text", (cx, cy + size * 0.55, "$", "#000000", size * 0.45,
                                    "middle")))
    for t in range(board.n_tiles):
        k = state.tile_node[t]
        if k >= 0:
            cx, cy = centre(t)
            shapes.append(("circle", (cx - size * 0.45, cy - size * 0.35, size * 0.22,
                                      NODE_COLOURS[k], "#333333")))
            shapes.append(("text", (cx - size * 0.45, cy - size * 0.35, NODE_LETTERS[k],
                                    "#000000", size * 0.28, "middle")))
    for m in range(state.camp_tile.shape[0]):
        t = state.camp_tile[m]
        if t >= 0:
            shapes += _camp(*centre(t), size)
    for c in range(int(state.n_cities[0])):
        t = state.city_tile[c]
        if t < 0:
            continue
        cx, cy = centre(t)
        label = f"{state.city_pop[c]}{'*' if state.city_capital[c] else ''}"
        shapes += _city(cx, cy, size, seat_colour(int(state.city_owner[c])), label)
    glyphs = unit_glyphs(tables.unit_names)
    for u in range(int(state.n_units[0])):
        t = state.unit_tile[u]
        if t < 0:
            continue
        cx, cy = centre(t)
        ut = state.unit_type[u]
        letter = BANDIT_GLYPH if ut < 0 else glyphs[ut]
        shapes += _unit(cx + size * 0.45, cy + size * 0.4, size,
                        seat_colour(int(state.unit_owner[u])), letter)
    for s in range(n_seats):
        cap = int(state.seat_capital[s])
        if cap >= 0 and state.city_tile[cap] >= 0:
            cx, cy = centre(int(state.city_tile[cap]))
            shapes.append(("label", (cx, cy - size * 1.05, f"seat {s}", seat_colour(s),
                                     size * 0.62)))
    return shapes + legend


def _camp(cx: float, cy: float, size: float) -> list[tuple[str, tuple]]:
    d = size * 0.4
    return [("line", (cx - d, cy - d, cx + d, cy + d, CAMP_COLOUR, 3.0)),
            ("line", (cx - d, cy + d, cx + d, cy - d, CAMP_COLOUR, 3.0))]


def _city(cx: float, cy: float, size: float, colour: str, label: str) -> list[tuple[str, tuple]]:
    s = size * 0.55
    return [("poly", ([(cx - s, cy - s), (cx + s, cy - s), (cx + s, cy + s), (cx - s, cy + s)],
                      colour, "#000000", 1.0, 1.5)),
            ("text", (cx, cy, label, "#ffffff", size * 0.6, "middle"))]


def _unit(x: float, y: float, size: float, colour: str, glyph: str) -> list[tuple[str, tuple]]:
    return [("circle", (x, y, size * 0.3, colour, "#ffffff")),
            ("text", (x, y, glyph, "#ffffff", size * 0.35 if len(glyph) < 2 else size * 0.3,
                      "middle"))]


def _legend(state: State, tables: Tables, width: float, size: float, top: float,
            n_seats: int) -> tuple[list[tuple[str, tuple]], float]:
    """The legend's primitives below the board, laid out in rows that wrap at `width`,
    and the height they take."""
    names = tables.personality_names
    px = size * 0.6
    gap = size * 0.8
    left = size * 1.5
    row_h = size * 1.5
    entries: list[tuple[str, object, str]] = []
    entries += [("seat", s, f"seat {s} ({names[int(state.seat_personality[s])]})")
                for s in range(n_seats)]
    entries += [("terrain", k, name) for k, name in enumerate(TERRAINS)]
    entries += [("node", k, f"{name} node") for k, name in enumerate(NODE_KINDS)]
    entries += [("city", "3*", "city: population, * capital"),
                ("village", "1", "neutral village"), ("camp", None, "bandit camp"),
                ("bought", None, "bought tile")]
    entries += [("unit", g, name) for g, name in zip(unit_glyphs(tables.unit_names),
                                                     tables.unit_names, strict=True)]
    entries.append(("bandit", BANDIT_GLYPH, "bandit"))
    out: list[tuple[str, tuple]] = []
    x, y = left, top + row_h * 0.6
    for kind, arg, text in entries:
        w = size * 1.3 + _text_width(text, px)
        if x + w > width - left and x > left:
            x, y = left, y + row_h
        sx = x + size * 0.5
        if kind == "seat":
            out.append(("poly", (_hex_corners(sx, y, size * 0.5), SEAT_COLOURS[arg],
                                 SEAT_COLOURS[arg], 0.6, 1.5)))
        elif kind == "terrain":
            out.append(("poly", (_hex_corners(sx, y, size * 0.5), TERRAIN_COLOURS[arg],
                                 "#ffffff", 1.0, 1.0)))
        elif kind == "node":
            out.append(("circle", (sx, y, size * 0.3, NODE_COLOURS[arg], "#333333")))
            out.append(("text", (sx, y, NODE_LETTERS[arg], "#000000", size * 0.35, "middle")))
        elif kind in ("city", "village"):
            colour = SEAT_COLOURS[0] if kind == "city" else NEUTRAL_COLOUR
            out += _city(sx, y, size * 0.8, colour, str(arg))
        elif kind == "camp":
            out += _camp(sx, y, size * 0.9)
        elif kind == "bought":
            out.append(("text", (sx, y, "$", "#000000", size * 0.6, "middle")))
        else:
            colour = SEAT_COLOURS[0] if kind == "unit" else BANDIT_COLOUR
            out += _unit(sx, y, size * 1.3, colour, str(arg))
        out.append(("text", (x + size * 1.2, y, text, "#222222", px, "start")))
        x += w + gap
    return out, y - top + row_h


def render_svg(state: State, tables: Tables, board: Board, size: float = 18.0,
               title: str | None = None) -> str:
    """The map as an SVG document (`title` above the board; default: seats, radius and
    tables hash)."""
    parts: list[str] = []
    for kind, a in _shapes(state, tables, board, size, title):
        if kind == "canvas":
            w, h = a
            parts.append(f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" '
                         f'height="{h:.0f}" viewBox="0 0 {w:.1f} {h:.1f}">'
                         f'<rect width="100%" height="100%" fill="{BACKGROUND}"/>')
        elif kind == "poly":
            pts, fill, stroke, opacity, width = a
            coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
            parts.append(f'<polygon points="{coords}" fill="{fill}" fill-opacity="{opacity}" '
                         f'stroke="{stroke}" stroke-width="{width}"/>')
        elif kind == "circle":
            x, y, r, fill, stroke = a
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="{fill}" '
                         f'stroke="{stroke}"/>')
        elif kind == "line":
            x1, y1, x2, y2, colour, width = a
            parts.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                         f'stroke="{colour}" stroke-width="{width}"/>')
        elif kind == "text":
            x, y, text, colour, px, anchor = a
            parts.append(f'<text x="{x:.1f}" y="{y:.1f}" fill="{colour}" font-size="{px:.1f}" '
                         f'font-family="sans-serif" text-anchor="{anchor}" '
                         f'dominant-baseline="central">{_escape(text)}</text>')
        elif kind == "label":
            x, y, text, colour, px = a
            parts.append(f'<text x="{x:.1f}" y="{y:.1f}" fill="{colour}" font-size="{px:.1f}" '
                         f'font-family="sans-serif" font-weight="bold" text-anchor="middle" '
                         f'dominant-baseline="central" stroke="#ffffff" stroke-width="3" '
                         f'paint-order="stroke">{_escape(text)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render_png(state: State, tables: Tables, board: Board, path: Path, size: float = 18.0,
               title: str | None = None) -> None:
    """The map as a PNG file (Pillow), the same shapes as `render_svg`."""
    from PIL import Image, ImageDraw, ImageFont

    image = draw = None
    font_cache: dict[int, object] = {}

    def font(px: float):
        key = max(int(px), 6)
        if key not in font_cache:
            # DejaVu Sans where the system has it (the SVG's sans-serif on most Linux
            # desktops): Pillow's own default face has a 2-px space at legend sizes, so
            # "bandit camp" read as one word
            try:
                font_cache[key] = ImageFont.truetype("DejaVuSans.ttf", key)
            except OSError:
                try:
                    font_cache[key] = ImageFont.load_default(size=key)
                except TypeError:  # Pillow < 10.1
                    font_cache[key] = ImageFont.load_default()
        return font_cache[key]

    def rgba(colour: str, opacity: float = 1.0) -> tuple[int, int, int, int]:
        c = colour.lstrip("#")
        return (int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16), int(255 * opacity))

    for kind, a in _shapes(state, tables, board, size, title):
        if kind == "canvas":
            image = Image.new("RGB", (int(a[0]), int(a[1])), rgba(BACKGROUND)[:3])
            draw = ImageDraw.Draw(image, "RGBA")
        elif kind == "poly":
            pts, fill, stroke, opacity, width = a
            draw.polygon(pts, fill=rgba(fill, opacity), outline=rgba(stroke), width=int(width))
        elif kind == "circle":
            x, y, r, fill, stroke = a
            draw.ellipse([x - r, y - r, x + r, y + r], fill=rgba(fill), outline=rgba(stroke))
        elif kind == "line":
            x1, y1, x2, y2, colour, width = a
            draw.line([x1, y1, x2, y2], fill=rgba(colour), width=int(width))
        elif kind == "text":
            x, y, text, colour, px, anchor = a
            draw.text((x, y), text, fill=rgba(colour), font=font(px),
                      anchor="lm" if anchor == "start" else "mm")
        elif kind == "label":
            x, y, text, colour, px = a
            draw.text((x, y), text, fill=rgba(colour), font=font(px), anchor="mm",
                      stroke_width=2, stroke_fill=rgba("#ffffff"))
    image.save(path)


def write_map(state: State, tables: Tables, board: Board, out: Path,
              title: str | None = None) -> None:
    """Write `out` as .svg or .png by its suffix."""
    out = Path(out)
    if out.suffix.lower() == ".png":
        render_png(state, tables, board, out, title=title)
    elif out.suffix.lower() == ".svg":
        out.write_text(render_svg(state, tables, board, title=title), encoding="utf-8")
    else:
        raise ValueError(f"{out}: the map is written as .svg or .png")

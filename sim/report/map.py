"""Draw a board position as SVG or PNG so a designer can look at a generated map.

Shapes are computed once (`_shapes`) and rendered by either backend: SVG by
hand (no dependency) or PNG with Pillow. Shown: terrain, resource nodes,
regions tinted by owner, cities (population, capital star), neutral
villages, bandit camps and units.
"""

from __future__ import annotations

import math
from pathlib import Path

from sim.kernels.rules.common import regions
from sim.rules.codes import (
    BANDIT,
    NEUTRAL,
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


def _hex_corners(cx: float, cy: float, size: float) -> list[tuple[float, float]]:
    return [(cx + size * math.cos(math.radians(60 * k - 30)),
             cy + size * math.sin(math.radians(60 * k - 30))) for k in range(6)]


def _shapes(state: State, tables: Tables, board: Board, size: float):
    """Yield (kind, args) drawing primitives in painter's order."""
    tb = tables.arrays()
    tile_city = regions(state, tb, board)
    R = board.radius
    margin = size * 1.5
    width = size * math.sqrt(3) * (2 * R + 1) + 2 * margin
    height = size * 1.5 * (2 * R) + 2 * size + 2 * margin

    def centre(t: int) -> tuple[float, float]:
        q, r = board.axial(t)
        return (width / 2 + size * math.sqrt(3) * (q + r / 2), height / 2 + size * 1.5 * r)

    shapes: list[tuple[str, tuple]] = [("canvas", (width, height))]
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
            shapes.append(("text", (cx, cy + size * 0.55, "$", "#000000", size * 0.45)))
    for t in range(board.n_tiles):
        k = state.tile_node[t]
        if k >= 0:
            cx, cy = centre(t)
            shapes.append(("circle", (cx - size * 0.45, cy - size * 0.35, size * 0.22,
                                      NODE_COLOURS[k], "#333333")))
            shapes.append(("text", (cx - size * 0.45, cy - size * 0.35, NODE_LETTERS[k],
                                    "#000000", size * 0.28)))
    for m in range(state.camp_tile.shape[0]):
        t = state.camp_tile[m]
        if t >= 0:
            cx, cy = centre(t)
            d = size * 0.4
            shapes.append(("line", (cx - d, cy - d, cx + d, cy + d, "#8b0000", 3.0)))
            shapes.append(("line", (cx - d, cy + d, cx + d, cy - d, "#8b0000", 3.0)))
    for c in range(int(state.n_cities[0])):
        t = state.city_tile[c]
        if t < 0:
            continue
        cx, cy = centre(t)
        owner = state.city_owner[c]
        colour = NEUTRAL_COLOUR if owner == NEUTRAL else SEAT_COLOURS[owner % len(SEAT_COLOURS)]
        s = size * 0.55
        shapes.append(("poly", ([(cx - s, cy - s), (cx + s, cy - s), (cx + s, cy + s),
                                 (cx - s, cy + s)], colour, "#000000", 1.0, 1.5)))
        label = f"{state.city_pop[c]}{'*' if state.city_capital[c] else ''}"
        shapes.append(("text", (cx, cy, label, "#ffffff", size * 0.6)))
    for u in range(int(state.n_units[0])):
        t = state.unit_tile[u]
        if t < 0:
            continue
        cx, cy = centre(t)
        owner = state.unit_owner[u]
        colour = "#000000" if owner == BANDIT else SEAT_COLOURS[owner % len(SEAT_COLOURS)]
        ut = state.unit_type[u]
        letter = "b" if ut < 0 else tables.unit_names[ut][0].upper()
        ox, oy = cx + size * 0.45, cy + size * 0.4
        shapes.append(("circle", (ox, oy, size * 0.3, colour, "#ffffff")))
        shapes.append(("text", (ox, oy, letter, "#ffffff", size * 0.35)))
    return shapes


def render_svg(state: State, tables: Tables, board: Board, size: float = 18.0) -> str:
    parts: list[str] = []
    for kind, a in _shapes(state, tables, board, size):
        if kind == "canvas":
            w, h = a
            parts.append(f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" '
                         f'height="{h:.0f}" viewBox="0 0 {w:.1f} {h:.1f}">'
                         f'<rect width="100%" height="100%" fill="#f4f1ea"/>')
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
            x, y, text, colour, px = a
            parts.append(f'<text x="{x:.1f}" y="{y:.1f}" fill="{colour}" font-size="{px:.1f}" '
                         f'font-family="sans-serif" text-anchor="middle" '
                         f'dominant-baseline="central">{text}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def render_png(state: State, tables: Tables, board: Board, path: Path, size: float = 18.0) -> None:
    from PIL import Image, ImageDraw, ImageFont

    image = draw = None
    font_cache: dict[int, object] = {}

    def font(px: float):
        key = max(int(px), 6)
        if key not in font_cache:
            try:
                font_cache[key] = ImageFont.load_default(size=key)
            except TypeError:  # Pillow < 10.1
                font_cache[key] = ImageFont.load_default()
        return font_cache[key]

    def rgba(colour: str, opacity: float = 1.0) -> tuple[int, int, int, int]:
        c = colour.lstrip("#")
        return (int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16), int(255 * opacity))

    for kind, a in _shapes(state, tables, board, size):
        if kind == "canvas":
            image = Image.new("RGB", (int(a[0]), int(a[1])), rgba("#f4f1ea")[:3])
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
            x, y, text, colour, px = a
            draw.text((x, y), text, fill=rgba(colour), font=font(px), anchor="mm")
    image.save(path)


def write_map(state: State, tables: Tables, board: Board, out: Path) -> None:
    """Write `out` as .svg or .png by its suffix."""
    out = Path(out)
    if out.suffix.lower() == ".png":
        render_png(state, tables, board, out)
    elif out.suffix.lower() == ".svg":
        out.write_text(render_svg(state, tables, board), encoding="utf-8")
    else:
        raise ValueError(f"{out}: the map is written as .svg or .png")

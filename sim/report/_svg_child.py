"""The SVG renderer's child process (sim.report.svg_renderer.SvgRenderer): Vega-Lite
specs in, SVG out.

Run as a script (`python -P .../_svg_child.py`), not as a module of `sim`: it imports
vl-convert and nothing else, so the child holds vl-convert's JavaScript engine
(some 85 MB) and no copy of polars, altair or the statistics libraries.

Protocol on stdin and stdout, one frame per chart, in order: the parent sends an
8-byte little-endian length and a spec as JSON text (UTF-8); the child answers one
status byte (0: SVG follows, 1: the error message follows), an 8-byte length and
the text. The parent closing stdin (or dying) ends the child.
"""

from __future__ import annotations

import sys

import vl_convert as vlc


def _read(stream, n: int) -> bytes:
    data = stream.read(n)
    if len(data) != n:
        raise EOFError
    return data


_WARM = ('{"mark": "point", "data": {"values": [{"x": 0}]}, '
         '"encoding": {"x": {"field": "x", "type": "quantitative"}}}')


def main() -> None:
    # the engine's start (0.7-0.9 s) while the parent is still busy with its tables
    vlc.vegalite_to_svg(_WARM)
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            spec = _read(inp, int.from_bytes(_read(inp, 8), "little")).decode("utf-8")
        except EOFError:
            return
        try:
            text, status = vlc.vegalite_to_svg(spec), 0
        except Exception as err:  # the parent raises it, naming the chart
            text, status = f"{type(err).__name__}: {err}", 1
        data = text.encode("utf-8")
        out.write(bytes([status]) + len(data).to_bytes(8, "little") + data)
        out.flush()


if __name__ == "__main__":
    main()

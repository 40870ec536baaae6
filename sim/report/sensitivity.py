"""The self-contained HTML page of a sensitivity run (issue 13): a tornado chart per
outcome, the strongest effects, the inert parameters and the design's skips."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import polars as pl

from sim.analysis import charts
from sim.analysis.sensitivity import inert_parameters
from sim.report.html import CSS, _svg, _table

METRICS_SHOWN = ("victory=conquest", "victory=science", "victory=dominance",
                 "victory=turn_limit", "end_turn", "capital_falls", "winner_gold_share")


def build_sensitivity_report(table: pl.DataFrame, design: dict[str, Any], top: int = 15) -> str:
    """HTML text of the page. table: sim.analysis.sensitivity.effects."""
    parts = []
    present = table.get_column("metric").unique().to_list()
    for metric in (m for m in METRICS_SHOWN if m in present):
        chart = charts.tornado(table, metric, top)
        strongest = (table.filter(pl.col("metric") == metric).sort("rank").head(top)
                     .select("parameter", "base", "low", "high", "low_value", "high_value",
                             "effect", "lo", "hi", "effect_per_10pct", "p_adjusted",
                             "changed"))
        parts.append(f"<h2>{html.escape(metric)}</h2><figure class='chart'>{_svg(chart)}"
                     f"</figure>{_table(strongest, {'p_adjusted': 'p'}, highlight='changed')}")
    inert = inert_parameters(table)
    skipped = design.get("skipped", [])
    n_params = len(design.get("parameters", []))
    title = f"Sensitivity — {design.get('name', '')}"
    intro = (f"<p class='muted'>{n_params} parameters, each moved ±{design.get('step', 0):.0%} "
             "(integers by at least 1); every effect is the high value's outcome minus the "
             "low value's on the same matches (common random numbers), with its 95 % paired "
             "interval; red: significant after one Holm correction over every parameter × "
             "outcome. Highlighted rows are significant.</p>")
    inert_html = ("<h2>Inert parameters</h2><p>Not one match changed its winner, victory type "
                  "or end turn between the low and the high value: a lever on these does "
                  "nothing.</p><p>" + (", ".join(f"<code>{html.escape(k)}</code>" for k in inert)
                                       or "none") + "</p>")
    skipped_html = "" if not skipped else (
        "<h2>Skipped</h2><p class='muted'>The tables refuse both moved values:</p><ul>" +
        "".join(f"<li><code>{html.escape(s['key'])}</code>: {html.escape(s['why'])}</li>"
                for s in skipped) + "</ul>")
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
            f"style-src 'unsafe-inline'; img-src data:\">"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"
            f"<h1>{html.escape(title)}</h1>{intro}{''.join(parts)}{inert_html}{skipped_html}"
            "</body></html>")


def write_sensitivity_report(table: pl.DataFrame, design: dict[str, Any], out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(build_sensitivity_report(table, design), encoding="utf-8")
    return out

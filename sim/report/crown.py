"""The report of a Crown run (issue 48): what a designer asks (../shared/RULES-crown.md,
last section) as the report's sections, in the hex report's page frame (its style,
failure line and provenance). The figures are sim.analysis.crown's; this module only
lays them out. sim.report.html hands a Crown run here through the game interface
(sim.outputs.games.CROWN.report_module).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import polars as pl

from sim.analysis import crown as figures
from sim.analysis.load import read_table
from sim.outputs.games import CROWN
from sim.outputs.storage import run_path
from sim.outputs.store import read_provenance, require_complete
from sim.report.html import PageParts


def _pct(share: float | None, lo: float | None = None, hi: float | None = None) -> str:
    """`share` as a percentage, with its interval when given; – for none."""
    if share is None:
        return "–"
    if lo is None or hi is None:
        return f"{100 * share:.1f} %"
    return f"{100 * share:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}]"


def _rows(head: list[str], rows: list[list[str]], text: int = 1) -> str:
    """A plain table: the first `text` columns words (left), the rest figures."""
    th = "".join(f"<th class='l'>{html.escape(h)}</th>" if i < text else
                 f"<th>{html.escape(h)}</th>" for i, h in enumerate(head))
    body = "".join("<tr>" + "".join(
        f"<td class='l'>{html.escape(c)}</td>" if i < text else f"<td>{html.escape(c)}</td>"
        for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f"<div class='wide'><table><tr>{th}</tr>{body}</table></div>"


def _iv(row: dict, name: str) -> str:
    return _pct(row[name], row[f"{name}_lo"], row[f"{name}_hi"])


def _side_wins(matches: pl.DataFrame) -> str:
    rows = [[r["variant"], f"{r['team_a']} v {r['team_b']}", str(r["matches"]),
             _iv(r, "side A"), _iv(r, "side B"), _iv(r, "draw")]
            for r in figures.side_wins(matches).iter_rows(named=True)]
    return ("<p class='muted'>K13, L4: the side with more points wins; brackets are 95 % "
            "Wilson intervals.</p>"
            + _rows(["variant", "teams A v B", "matches", "side A wins", "side B wins",
                     "draws"], rows))


def _conversions(matches: pl.DataFrame) -> tuple[str, str]:
    conv = list(figures.conversions(matches).iter_rows(named=True))
    first = _rows(["variant", "decided matches with a side first more often",
                   "that side wins"],
                  [[r["variant"], str(r["first_n"]), _iv(r, "first in order wins")]
                   for r in conv])
    fault = _rows(["variant", "matches with a leader after the fault round",
                   "the leader wins"],
                  [[r["variant"], str(r["fault_n"]), _iv(r, "fault-round leader wins")]
                   for r in conv])
    return (("<p class='muted'>K05: the player with the highest Crown acts first, so this "
             "edge includes the strength of the rolls themselves.</p>" + first),
            "<p class='muted'>L6: the side ahead after the fault round.</p>" + fault)


def _attacks(matches: pl.DataFrame) -> str:
    rows = [[r["variant"], str(r["attacks"]), str(r["winning attacks"]),
             _iv(r, "Surge decided"), _iv(r, "cycle decided")]
            for r in figures.decided_attacks(matches).iter_rows(named=True)]
    return ("<p class='muted'>K07: a winning attack that would have lost without that "
            "bonus.</p>" + _rows(["variant", "attacks", "winning attacks",
                                   "decided by Surge", "decided by the lead cycle"], rows))


def _leads(matches: pl.DataFrame) -> str:
    rows = [[r["variant"], r["lead"], _pct(r["share of rolls"]), str(r["attacks"]),
             _iv(r, "attacks won")]
            for r in figures.lead_types(matches).iter_rows(named=True)]
    return ("<p class='muted'>K03: the lead of each roll; K07: its attacks.</p>"
            + _rows(["variant", "lead", "share of rolls", "attacks", "attacks won"], rows, 2))


def _terms(matches: pl.DataFrame) -> str:
    rows = [[r["variant"], r["term"], str(r["points"]), _pct(r["share of points"])]
            for r in figures.score_terms(matches).iter_rows(named=True)]
    return ("<p class='muted'>K10, K11: both sides' points by term.</p>"
            + _rows(["variant", "score term", "points", "share of all points"], rows, 2))


def _paired(matches: pl.DataFrame, baseline: str) -> str:
    diffs = figures.paired_differences(matches, baseline)
    if not diffs.height:
        return "<p>One variant only: nothing to compare.</p>"

    def num(x: float | None, pct: bool) -> str:
        if x is None:
            return "–"
        return f"{100 * x:+.1f} pp" if pct else f"{x:+.3g}"
    rows = []
    for r in diffs.iter_rows(named=True):
        interval = "–" if r["lo"] is None else \
            f"[{100 * r['lo']:+.1f}, {100 * r['hi']:+.1f}]"
        rows.append([r["variant"], r["figure"], _pct(r["baseline mean"]),
                     _pct(r["variant mean"]), num(r["difference"], True), interval,
                     "–" if r["p"] is None else f"{r['p']:.3g}", str(r["pairs"])])
    return (f"<p class='muted'>Each variant against the baseline <b>{html.escape(baseline)}"
            "</b>, match by match: match i of every variant plays the same streams. "
            "Difference in percentage points, its 95 % paired t interval and p-value "
            "(not corrected for the number of figures).</p>"
            + _rows(["variant", "figure", "baseline", "variant", "difference", "interval",
                     "p", "pairs"], rows, 2))


def _gate(gate: pl.DataFrame, against: str | Path | None, notes: Sequence[str]) -> str:
    """The regression gate against an earlier run (sim.analysis.gate on the winner
    sides' shares: sim.analysis.outcomes), as the hex report words it."""
    from sim.analysis.gate import overall
    from sim.report.html import _table

    verdict = overall(gate)
    shown = gate.rename({"victory": "winner"}).select(
        "variant", "winner", "before", "now", "difference", "lo", "hi", "margin", "n_now",
        "n_before", "verdict")
    return (f"<p><b>{html.escape(verdict)}</b> against <code>{html.escape(str(against))}"
            "</code>: each winner side's share (and the draws') of every variant, within "
            "± its margin of the earlier run's (anytime-valid bounds).</p>"
            + "".join(f"<p class='muted'>{html.escape(n)}</p>" for n in notes)
            + _table(shown, {c: "pct" for c in ("before", "now", "difference", "lo", "hi",
                                                  "margin")}))


@dataclass
class _Page(PageParts):
    """The part of the hex report's page (sim.report.html._Page) its ladder and skill
    sections read: the run's matches, provenance and baseline, the sections so far and
    the charts to draw (by the renderer's child, started at the first chart: a Crown
    run with neither section draws none)."""

    run: Any                  # .matches: the run's matches table
    prov: dict[str, Any]
    baseline: str
    renderer: Any
    sections: list[str] = field(default_factory=list)
    planned: list[tuple[Callable[[], Any], str]] = field(default_factory=list)


def _skill_section(page: _Page) -> None:
    """Issue 48: each change's effect on the winner shares at both AI skills of an
    experiment's `skills`, side by side, with the interaction test and its verdict
    (sim.analysis.crown.skill_effects; the hex report's table and chart)."""
    from sim.report.html import _skill_interactions

    matches = page.run.matches
    effects = figures.skill_effects(matches, page.prov, page.baseline)
    if not effects.height or effects.get_column("skill").n_unique() < 2:
        return
    page.section("Does it hold at both levels of play? Effects by AI skill",
                 "<p class='muted'>K13, K14: both sides' players at skill a, then at "
                 "skill b; metric winner=A, winner=B, winner=draw: the share of matches "
                 "side A wins, side B wins, drawn; each effect a paired t test over the "
                 "matches (Holm within a skill).</p>"
                 + _skill_interactions(figures.skill_interactions(matches, effects),
                                       effects, 0, page.figure))


def build_report(run_dir: str | Path, baseline: str | None = None,
                 gate: pl.DataFrame | None = None, against: str | Path | None = None,
                 gate_notes: Sequence[str] = ()) -> str:
    """The Crown report of `run_dir` as one HTML string (ValueError for a baseline that
    is not a variant of the run; sim.outputs.store.RunError for a damaged run); with
    `gate`, the regression gate against the run `against` comes first."""
    from sim.report.html import (
        _draw_charts,
        _ladder_section,
        _provenance,
        failure_line,
        page_head,
    )
    from sim.report.svg_renderer import SvgRenderer

    root = run_path(run_dir)
    require_complete(root)
    prov = read_provenance(root)
    variants = [v["id"] for v in prov["variants"]]
    baseline = baseline or prov.get("baseline") or variants[0]
    if baseline not in variants:
        raise ValueError(f"baseline {baseline!r} is not a variant of {run_dir} "
                         f"({', '.join(variants)})")
    matches = read_table(root, "matches")
    order = {v: i for i, v in enumerate(variants)}
    matches = matches.sort(pl.col("variant").replace_strict(order, return_dtype=pl.Int64),
                           "match_index")
    errors = read_table(root, "errors")
    first, fault = _conversions(matches)
    bodies = (_side_wins(matches), first, fault, _attacks(matches), _leads(matches),
              _terms(matches))
    with SvgRenderer() as renderer:
        page = _Page(run=SimpleNamespace(matches=matches), prov=prov, baseline=baseline,
                     renderer=renderer)
        if gate is not None:
            page.section("Regression gate", _gate(gate, against, gate_notes))
        # a ladder run (sim ladder): its heat map and ratings first, the hex report's
        _ladder_section(page)
        for title, body in zip(CROWN.report_sections, bodies, strict=True):
            page.section(title, body)
        page.section("Against the baseline", _paired(matches, baseline))
        _skill_section(page)
        page.section("Provenance", _provenance(prov))
        body = _draw_charts(page)
    name = prov.get("experiment", {}).get("name", root.name)
    title = f"Crown balance report — {name}"
    return (page_head(title, prov)
            + failure_line(figures.failures(matches, errors), run_dir)
            + body + "</body></html>")

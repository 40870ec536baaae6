"""The self-contained HTML page of a sensitivity run (issue 13): a tornado chart per
outcome, the strongest effects, the inert parameters and the design's skips, and,
when the file asked for one, the Morris screen of interactions (a mu* against sigma
scatter per outcome and the table of indices)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import polars as pl

from sim.analysis import charts
from sim.analysis.sensitivity import inert_parameters, strongest
from sim.report.html import CSS, _svg, _table

METRICS_SHOWN = ("victory=conquest", "victory=science", "victory=dominance",
                 "victory=turn_limit", "end_turn", "capital_falls", "winner_gold_share")


MORRIS_COLUMNS = ("parameter", "metric", "low", "high", "mu_star", "mu_star_conf", "mu",
                  "sigma", "ee_se", "mu_star_per_10pct", "rank", "interacts")


def morris_section(morris: pl.DataFrame, design: dict[str, Any]) -> str:
    """The Morris part of the page. morris: sim.analysis.morris.morris_indices;
    design: its morris.json."""
    keys = ", ".join(f"<code>{html.escape(p['key'])}</code>" for p in design["parameters"])
    present = morris.get_column("metric").unique().to_list()
    charts_html = "".join(
        f"<figure class='chart'>{_svg(charts.morris_scatter(morris, m))}</figure>"
        for m in METRICS_SHOWN if m in present)
    n_points = len(design["rows"])
    n_variants = len(set(design["rows"]))
    matches = morris.get_column("n_matches").max() if morris.height else 0
    intro = (f"<p>The {len(design['parameters'])} strongest parameters ({keys}) on "
             f"{design['trajectories']} Morris trajectories of a {design['levels']}-level grid "
             f"over each one's [low, high]: {n_points} points ({n_variants} distinct variants) "
             f"× {matches} matches, the same matches as above. <b>How to read it:</b> mu* "
             "(x) is the mean size of a parameter's effect when it moves over its whole range "
             "while the others sit elsewhere on the grid, in the outcome's unit (a share, "
             "turns); sigma (y) is how much that effect varies from point to point. A "
             "parameter far right matters; one above the dashed diagonal (sigma > mu*) "
             "acts differently depending on the other values (an interaction) or its own (a "
             "non-linear response), so its tornado bar alone does not tell its story. Red "
             "(highlighted rows) is sigma > mu* with mu* above twice ee_se, the sampling "
             "noise of one elementary effect; faint points are within that noise, and "
             "noise alone puts a point near the diagonal: they prove nothing.</p>")
    table = _table(morris.select(*MORRIS_COLUMNS), highlight="interacts")
    return f"<h2>Interactions (Morris screen)</h2>{intro}{charts_html}{table}"


def build_sensitivity_report(table: pl.DataFrame, design: dict[str, Any], top: int = 15,
                             morris: pl.DataFrame | None = None,
                             morris_design: dict[str, Any] | None = None) -> str:
    """HTML text of the page. table: sim.analysis.sensitivity.effects; morris (with
    morris_design, its morris.json): sim.analysis.morris.morris_indices, or None
    for a run without a Morris screen."""
    groups = set(table.get_column("group").to_list()) if "group" in table.columns else set()
    # both kinds of key: the balance values first, then the match setup that moved
    # anything (sim.analysis.sensitivity.strongest)
    sections = [("balance", "balance values"), ("setup", "match setup")] \
        if groups == {"balance", "setup"} else [(None, "")]
    outcomes = _outcome_sections(table, sections, top)
    title = f"Sensitivity — {design.get('name', '')}"
    morris_html = "" if morris is None or morris_design is None else \
        morris_section(morris, morris_design)
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
            f"style-src 'unsafe-inline'; img-src data:\">"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"
            f"<h1>{html.escape(title)}</h1>{_intro(design, len(sections) == 2)}{outcomes}"
            f"{morris_html}{_inert_section(table)}{_shared_matches_section(design)}"
            f"{_skipped_section(design)}"
            "</body></html>")


def _outcome_sections(table: pl.DataFrame, sections: list[tuple[str | None, str]],
                      top: int) -> str:
    """Per outcome of METRICS_SHOWN the table has: for each group of keys (`sections`:
    (group, its words), or one (None, "") when the keys are not ranked apart) the
    tornado of the `top` strongest and their table."""
    parts = []
    present = table.get_column("metric").unique().to_list()
    for metric in (m for m in METRICS_SHOWN if m in present):
        parts.append(f"<h2>{html.escape(metric)}</h2>")
        for group, words in sections:
            shown = strongest(table, metric, group).head(top)
            if words:
                parts.append(f"<h3>{html.escape(words)}</h3>")
            if shown.height == 0:
                parts.append("<p class='muted'>None moved this outcome.</p>")
                continue
            parts.append(_strongest_keys(shown, metric, group, words))
    return "".join(parts)


def _strongest_keys(shown: pl.DataFrame, metric: str, group: str | None, words: str) -> str:
    """The tornado chart of `shown` (the strongest keys of `group` on `metric`) and its
    table; ranked within a group, the rank among all keys stays beside it."""
    title = f"What moves {metric}" + (f": {words}" if words else "")
    order = "rank" if group is None else "group_rank"
    table_rows = shown.select(
        order, *(["rank"] if group is not None else []), "parameter",
        *(["same_as"] if "same_as" in shown.columns else []),
        "base", "low", "high", "low_value", "high_value", "effect",
        "lo", "hi", "effect_per_10pct", "p_adjusted", "changed")
    if group is not None:
        table_rows = table_rows.rename({"rank": "rank of all keys"}) \
            .rename({"group_rank": "rank"})
    return (f"<figure class='chart'>{_svg(charts.tornado(shown, metric, title))}"
            f"</figure>{_table(table_rows, {'p_adjusted': 'p'}, highlight='changed')}")


def _intro(design: dict[str, Any], two_groups: bool) -> str:
    """How to read the effects; with `two_groups`, that balance values and the match's
    setup keys are ranked apart."""
    n_params = len(design.get("parameters", []))
    return (f"<p class='muted'>{n_params} parameters, each moved ±{design.get('step', 0):.0%} "
            "(integers by at least 1); every effect is the high value's outcome minus the "
            "low value's on the same matches (common random numbers), with its 95 % paired "
            "interval; red: significant after one Holm correction over every parameter × "
            "outcome. Highlighted rows are significant." +
            (" Balance values and the match's setup (" +
             ", ".join(f"<code>{html.escape(k)}</code>" for k in design.get("setup_keys", []))
             + ": its length, board size and game-speed and seat-count scales, which "
             "each move many values at once) are ranked apart; the tables give both "
             "ranks." if two_groups else "") + "</p>")


def _inert_section(table: pl.DataFrame) -> str:
    """The keys whose two values played alike (sim.analysis.sensitivity.inert_parameters)."""
    inert = inert_parameters(table)
    return ("<h2>Inert parameters</h2><p>Not one match changed its winner, victory type "
            "or end turn between the low and the high value: a lever on these does "
            "nothing.</p><p>" + (", ".join(f"<code>{html.escape(k)}</code>" for k in inert)
                                 or "none") + "</p>")


def _shared_matches_section(design: dict[str, Any]) -> str:
    """The moved values that play another variant's matches (design["plays"]: variant
    -> the variant whose matches it plays): how many variants played, the keys that
    are one lever with an earlier key (`same_as`), and the keys these matches never
    read (both sides play the baseline's). "" when every moved value played."""
    plays = design.get("plays", {})
    if not plays:
        return ""
    baseline = design.get("baseline", "baseline")
    parameters = design.get("parameters", [])
    unread = [p["key"] for p in parameters
              if all(plays.get(p[side], p[side]) == baseline
                     for side in ("low_variant", "high_variant"))]
    levers: dict[str, list[str]] = {}
    for p in parameters:
        if p.get("same_as"):
            levers.setdefault(p["same_as"], []).append(p["key"])
    played = 1 + len({v for p in parameters for v in (p["low_variant"], p["high_variant"])}
                     - set(plays) - {baseline})
    return (
        "<h2>Keys that play the same matches</h2><p class='muted'>A moved value plays only "
        "when its match differs from every earlier one's (the compiled tables at these "
        f"seats and length, the turns, the personalities): {played} variants played. "
        "Keys of one lever (both sides the same matches) share its rank:</p><ul>" +
        ("".join(f"<li><code>{html.escape(k)}</code> = " +
                 ", ".join(f"<code>{html.escape(x)}</code>" for x in xs) + "</li>"
                 for k, xs in levers.items()) or "<li>none</li>") +
        "</ul><p class='muted'>Never read by these matches (both sides play the "
        "baseline's, so inert by construction): " +
        (", ".join(f"<code>{html.escape(k)}</code>" for k in unread) or "none") + ".</p>")


def _skipped_section(design: dict[str, Any]) -> str:
    """The keys whose both moved values the tables refuse ("" when none)."""
    skipped = design.get("skipped", [])
    if not skipped:
        return ""
    return ("<h2>Skipped</h2><p class='muted'>The tables refuse both moved values:</p><ul>" +
            "".join(f"<li><code>{html.escape(s['key'])}</code>: {html.escape(s['why'])}</li>"
                    for s in skipped) + "</ul>")


def write_sensitivity_report(table: pl.DataFrame, design: dict[str, Any], out: Path,
                             morris: pl.DataFrame | None = None,
                             morris_design: dict[str, Any] | None = None) -> Path:
    """Write the page (build_sensitivity_report) to `out`; returns `out`."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(build_sensitivity_report(table, design, morris=morris,
                                            morris_design=morris_design), encoding="utf-8")
    return out

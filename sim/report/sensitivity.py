"""The self-contained HTML page of a sensitivity run (issue 13): a tornado chart per
outcome, the strongest effects, the inert parameters and the design's skips, and,
when the file asked for one, the Morris screen of interactions (a mu* against sigma
scatter per outcome and the table of indices); and `sim sensitivity`'s work that
writes it (run_sensitivity)."""

from __future__ import annotations

import html
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from sim.analysis import charts
from sim.analysis.sensitivity import (
    TORNADO_METRICS,
    inert_parameters,
    read_design,
    strongest,
    top_parameters,
    write_sensitivity_table,
)
from sim.outputs.folders import MORRIS_DIR, SWEEP_DIR
from sim.outputs.games import game_of
from sim.report.html import CSS, _svg, _table
from sim.runner.sensitivity import open_sensitivity

METRICS_SHOWN = TORNADO_METRICS   # the hex game's; a design's game names its own


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
    hooks = game_of(design.get("game")).hooks("analysis")
    outcomes = _outcome_sections(table, sections, top, hooks.TORNADO_METRICS)
    title = f"Sensitivity — {design.get('name', '')}"
    morris_html = "" if morris is None or morris_design is None else \
        morris_section(morris, morris_design)
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
            f"style-src 'unsafe-inline'; img-src data:\">"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"
            f"<h1>{html.escape(title)}</h1>"
            f"{_intro(design, len(sections) == 2, hooks.SETUP_MEANS)}{outcomes}"
            f"{morris_html}{_inert_section(table, hooks.INERT_MEANS)}"
            f"{_shared_matches_section(design)}"
            f"{_skipped_section(design)}"
            "</body></html>")


def _outcome_sections(table: pl.DataFrame, sections: list[tuple[str | None, str]],
                      top: int, shown: tuple[str, ...] = METRICS_SHOWN) -> str:
    """Per outcome of `shown` (the game's TORNADO_METRICS) the table has: for each
    group of keys (`sections`: (group, its words), or one (None, "") when the keys are
    not ranked apart) the tornado of the `top` strongest and their table."""
    parts = []
    present = table.get_column("metric").unique().to_list()
    for metric in (m for m in shown if m in present):
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


def _intro(design: dict[str, Any], two_groups: bool, setup_means: str) -> str:
    """How to read the effects; with `two_groups`, that balance values and the match's
    setup keys (`setup_means`: what they are, the game's SETUP_MEANS) are ranked
    apart."""
    n_params = len(design.get("parameters", []))
    return (f"<p class='muted'>{n_params} parameters, each moved ±{design.get('step', 0):.0%} "
            "(integers by at least 1); every effect is the high value's outcome minus the "
            "low value's on the same matches (common random numbers), with its 95 % paired "
            "interval; red: significant after one Holm correction over every parameter × "
            "outcome. Highlighted rows are significant." +
            (" Balance values and the match's setup (" +
             ", ".join(f"<code>{html.escape(k)}</code>" for k in design.get("setup_keys", []))
             + f": {html.escape(setup_means)}) are ranked apart; the tables give both "
             "ranks." if two_groups else "") + "</p>")


def _inert_section(table: pl.DataFrame, means: str) -> str:
    """The keys whose two values played alike (sim.analysis.sensitivity.inert_parameters);
    `means`: what of a match stayed the same (the game's INERT_MEANS)."""
    inert = inert_parameters(table)
    return (f"<h2>Inert parameters</h2><p>Not one match changed {html.escape(means)} "
            "between the low and the high value: a lever on these does "
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


# one sweep of `sim sensitivity` as its command runs it: (experiment, run folder, the
# command that resumes it) -> its failed matches (the command handles a sweep that cannot
# start, is interrupted or leaves matches missing)
Sweep = Callable[[Any, Path, str], int]


@dataclass(frozen=True)
class SensitivityRun:
    """What run_sensitivity wrote into its folder: the effects table, the Morris table
    (None without a screen), the page, and the failed matches of each sweep by its
    folder's name."""

    folder: Path
    table: pl.DataFrame
    morris: pl.DataFrame | None
    page: Path
    errors: dict[str, int]
    # the outcomes `sim sensitivity` prints, in order (the game's PRINTED_METRICS)
    printed: tuple[str, ...] = ()


def run_sensitivity(file: Path, out: Path | None, replace_stale: bool, jobs: int,
                    sweep: Sweep, tell: Callable[[str], None],
                    say: Callable[[str], None]) -> SensitivityRun:
    """`sim sensitivity FILE`: open its folder (`out`, a path or a URL; default
    runs/<name>), play the design's sweep (`sweep`), write sensitivity.parquet, then
    with `morris_top` the Morris screen of the strongest parameters (its own sweep,
    morris.parquet), then the page sensitivity.html. What it plays goes to `tell`
    (stdout), notes to `say` (stderr). Raises SensitivityError or ExperimentError
    when the file or the folder cannot be used."""
    design, folder, experiment = open_sensitivity(file, out, replace_stale, say)
    command = f"sim sensitivity {shlex.quote(str(file))} --out {shlex.quote(str(folder))}"
    for line, err in design_lines(design, experiment, folder, jobs):
        (say if err else tell)(line)
    errors = {SWEEP_DIR: sweep(experiment, folder / SWEEP_DIR, command)}
    table = write_sensitivity_table(folder, lambda note: say(f"note: {note}"))
    morris, morris_json = _morris_screen(design, table, folder, lambda e, f: sweep(e, f, command),
                                         errors, tell, say)
    page = write_sensitivity_report(table, read_design(folder), folder / "sensitivity.html",
                                    morris=morris, morris_design=morris_json)
    printed = game_of(design.spec.game).hooks("analysis").PRINTED_METRICS
    return SensitivityRun(folder=folder, table=table, morris=morris, page=page, errors=errors,
                          printed=printed)


def design_lines(design, experiment, folder: Path, jobs: int) -> list[tuple[str, bool]]:
    """What the sensitivity plays, as (line, to stderr): its parameters and variants,
    the skipped parameters, the moved values that play as another variant."""
    lines = [(f"sensitivity {design.spec.name}: {len(design.parameters)} parameters "
              f"({len(design.skipped)} skipped) x 2 values, {len(experiment.variants)} "
              f"variants x {design.spec.matches} matches -> {folder} ({jobs} workers)", False)]
    lines += [(f"  skipped {key}: {why}", True) for key, why in design.skipped]
    if design.plays:
        levers = sum(1 for p in design.parameters if p.same_as)
        lines.append((f"  {len(design.plays)} moved values play the same matches as another "
                      f"variant and are not played again; keys that are one lever with an "
                      f"earlier key: {levers} (the page lists them)", False))
    return lines


def _morris_screen(design, table: pl.DataFrame, folder: Path,
                   sweep: Callable[[Any, Path], int], errors: dict[str, int],
                   tell: Callable[[str], None], say: Callable[[str], None]):
    """With morris_top = K, the Morris screen of the K strongest parameters: its sweep
    (its failed matches go into `errors`) and its table, written; returns the table and
    the screen's design, (None, None) without a screen."""
    k = design.spec.morris_top
    keys = top_parameters(table, k)
    if k and len(keys) < 2:
        say(f"no Morris screen: {len(keys)} parameter(s) changed any match, it needs two")
    if not k or len(keys) < 2:
        return None, None
    from sim.analysis.morris import write_morris_table  # lazy: 1.08 s (SALib, scipy)
    from sim.runner.morris import open_morris  # lazy: 0.91 s (SALib)

    m, experiment = open_morris(design, keys, folder)
    tell(f"morris screen: {len(keys)} parameters x {m.trajectories} trajectories "
         f"({m.levels} levels) = {len(m.rows)} points, "
         f"{len(experiment.variants)} variants x {design.spec.matches} "
         f"matches -> {folder / MORRIS_DIR}")
    errors[MORRIS_DIR] = sweep(experiment, folder / MORRIS_DIR)
    return write_morris_table(folder)

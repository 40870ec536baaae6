"""The self-contained HTML report of a run folder: summary per variant, changed-vs-
baseline flags with corrected significance, charts, provenance. Works offline:
charts are rendered to inline SVG with vl-convert (on the other core:
sim.report.svg_renderer), nothing is fetched."""

from __future__ import annotations

import functools
import html
import json
import shlex
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from sim.analysis import cascades, metrics, stats
from sim.analysis.anomalies import anomalies, anomaly_counts
from sim.analysis.gate import summary as gate_summary
from sim.analysis.headline import headline
from sim.analysis.importance import MARGIN, baseline_use, strategy_importance
from sim.analysis.ladder import read_ladder
from sim.analysis.load import (
    EVENT_SLICE,
    Run,
    RunScan,
    event_rows,
    match_ranges,
    missing_table_notes,
    missing_tables,
    run_keys,
    scan_run,
    scan_table,
    sum_over_slices,
)
from sim.analysis.robustness import skill_effects, skill_interactions
from sim.analysis.truces import truce_counts, truce_summary
from sim.outputs.games import game_of_run
from sim.outputs.settings import report_settings
from sim.outputs.storage import run_path
from sim.outputs.store import read_provenance
from sim.report.svg_renderer import SvgRenderer
from sim.rules.glossary import RULE_TITLES, mentioned_rules

CSS = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#222;
     padding:0 1rem}
h1{margin-bottom:.2rem} h2{border-bottom:1px solid #ccc;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}
th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:right}
th{background:#f4f4f4} td.l,th.l{text-align:left}
.changed{background:#fde0e0;font-weight:600} .muted{color:#777;font-size:.85rem}
.headline li.moved{font-weight:600;color:#8a1020} .headline li{margin:.15rem 0}
.wide{overflow-x:auto;max-width:100%}
.failed{color:#b00020;font-weight:600;border-left:4px solid #b00020;padding-left:.5rem}
figure{margin:1rem 0} .chart svg{max-width:100%;height:auto}
code{background:#f4f4f4;padding:0 .2rem}
"""


def _svg(chart) -> str:
    import vl_convert as vlc

    # the charts are ours and tested: validating each spec against Vega-Lite's JSON
    # schema again cost a third of the rendering
    return vlc.vegalite_to_svg(chart.to_dict(validate=False))


def _chart(name: str, *args, **kwargs) -> Any:
    # altair is imported here, at the first chart, by then (the report's preload
    # thread imports it during the scans, after the statistics libraries)
    from sim.analysis import charts

    return getattr(charts, name)(*args, **kwargs)


class _Later:
    """sim.analysis.charts with each call put off: `later.victory_mix(freq)` is that
    call, its arguments (already aggregated frames) bound now, to be made later."""

    def __getattr__(self, name: str) -> Callable[..., Callable[[], Any]]:
        return lambda *args, **kwargs: functools.partial(_chart, name, *args, **kwargs)


later = _Later()


def _chart_slot(i: int) -> str:
    """Where chart i goes in the page until it is drawn (no text of ours contains it)."""
    return f"\x00chart {i}\x00"


def _fmt(value: Any, kind: str = "") -> str:
    if value is None:
        return "–"
    if kind == "pct":
        return f"{value:.1%}"
    if kind == "p":
        return f"{value:.3g}"
    if isinstance(value, float):
        return f"{value:.3g}"
    return html.escape(str(value))


def _table(frame: pl.DataFrame, formats: dict[str, str] | None = None,
           highlight: str | None = None) -> str:
    formats = formats or {}
    # the column kinds once: frame.schema is built anew on every call, and asking it for
    # every cell of the content table cost a tenth of a second
    text = {c: dtype == pl.Utf8 for c, dtype in frame.schema.items()}
    shown = [c for c in frame.columns if c != highlight]
    head = "".join(f"<th class='l'>{html.escape(c)}</th>" if text[c]
                   else f"<th>{html.escape(c)}</th>" for c in shown)
    rows = []
    for row in frame.iter_rows(named=True):
        cls = " class='changed'" if highlight and row.get(highlight) else ""
        cells = "".join(
            f"<td class='l'>{_fmt(row[c], formats.get(c, ''))}</td>" if text[c]
            else f"<td>{_fmt(row[c], formats.get(c, ''))}</td>"
            for c in shown)
        rows.append(f"<tr{cls}>{cells}</tr>")
    # a wide table scrolls inside its box instead of pushing the page sideways
    return f"<div class='wide'><table><tr>{head}</tr>{''.join(rows)}</table></div>"


def summary_table(run: Run | RunScan, freq: pl.DataFrame, gold: pl.DataFrame,
                  errors: pl.DataFrame) -> pl.DataFrame:
    """One row per variant (every variant, even one whose matches all failed):
    matches played, finished and failed with the error rate, mean end turn, each
    victory share with its Wilson interval (over finished matches; "–" with none),
    and the gold term's share for winners and for standing seats."""
    ends = run.matches.filter(pl.col("victory").is_not_null()).group_by("variant").agg(
        pl.col("end_turn").mean().round(1).alias("mean_end_turn"))

    def pct(col: str) -> pl.Expr:
        return (pl.col(col) * 100).round(1).cast(pl.Utf8)

    shares = freq.with_columns(
        pl.when(pl.col("share").is_not_null())
        .then(pl.format("{}% [{}, {}]", pct("share"), pct("lo"), pct("hi")))
        .otherwise(pl.lit("–")).alias("cell"))
    golds = gold.with_columns(pl.format("{}%", pct("mean")).alias("cell"),
                              pl.format("gold share ({})", pl.col("group")).alias("col"))
    out = errors.select("variant", "played", "finished", "failed",
                        pl.format("{}%", pct("error_rate")).alias("error_rate"))
    out = out.join(ends, on="variant", how="left")
    # a run without any finished match (or seat row) has nothing to pivot
    for frame, on in ((shares, "victory"), (golds, "col")):
        if frame.height:
            out = out.join(frame.pivot(on=on, index="variant", values="cell"), on="variant",
                           how="left")
    return out.sort("variant")


def page_head(title: str, prov: dict[str, Any]) -> str:
    """A self-contained page's opening, up to its title and the experiment's
    description: no script, nothing fetched (the content security policy says so)."""
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
            f"style-src 'unsafe-inline'; img-src data:\">"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"
            f"<h1>{html.escape(title)}</h1><p class='muted'>"
            f"{html.escape(prov.get('experiment', {}).get('description', ''))}</p>")


def failure_line(errors: pl.DataFrame, run_dir: str | Path) -> str:
    """The red line at the top of a report with failed matches ("" when none failed)."""
    failed = errors.filter(pl.col("failed") > 0)
    if failed.height == 0:
        return ""
    total, played = int(errors["failed"].sum()), int(errors["played"].sum())
    per = ", ".join(f"{r['variant']} {r['failed']} of {r['played']}"
                    for r in failed.iter_rows(named=True))
    first = failed.row(0, named=True)["first_error"] or ""
    return (f"<p class='failed'>{total} of {played} matches failed ({html.escape(per)}): "
            "every number below counts finished matches only, and a pair is compared only "
            "when both of its matches finished. See the errors table in "
            f"<code>{html.escape(str(run_dir))}</code> and <code>sim replay-command</code>. "
            f"First error: {html.escape(first)}</p>")


def dropped_line(matches: pl.DataFrame) -> str:
    """The red line of a report whose matches overflowed their event log ("" when none
    did): every count made from the events table is then a lower bound."""
    if "events_dropped" not in matches.columns:
        return ""
    hit = matches.filter(pl.col("events_dropped").fill_null(0) > 0)
    if hit.height == 0:
        return ""
    return (f"<p class='failed'>{hit.height} of {matches.height} matches logged more events "
            f"than their log holds ({int(hit['events_dropped'].sum())} rows not stored, "
            "<code>matches.events_dropped</code>): counts made from events (cascades, "
            "content usage) undercount them. Raise sim.world.state.Capacity.events.</p>")


def content_table(usage: pl.DataFrame) -> pl.DataFrame:
    """metrics.content_usage pivoted for reading: one row per category × item, one
    column per variant ("12.5% [4.1, 32.0]"), `dead in` naming the variants where it
    is dead content, and `dead` (the row highlight)."""
    if usage.height == 0:
        return pl.DataFrame(schema={"category": pl.Utf8, "item": pl.Utf8})
    cells = usage.with_columns(
        pl.when(pl.col("share").is_not_null())
        .then(pl.format("{}% [{}, {}]", *((pl.col(c) * 100).round(1).cast(pl.Utf8)
                                          for c in ("share", "lo", "hi"))))
        .otherwise(pl.lit("–")).alias("cell"),
        pl.int_range(pl.len()).over("variant").alias("order"))
    wide = cells.pivot(on="variant", index=["category", "item"], values="cell")
    dead = (cells.group_by("category", "item")
            .agg(pl.col("order").min(), pl.col("dead").any(),
                 pl.col("variant").filter(pl.col("dead")).sort().str.join(", ")
                 .alias("dead in")))
    return (wide.join(dead, on=["category", "item"]).sort("order").drop("order")
            .with_columns(pl.col("dead in").replace("", None)))


def build_report(run_dir: str | Path, baseline: str | None = None,
                 gate: pl.DataFrame | None = None, against: str | Path | None = None,
                 history: pl.DataFrame | None = None, gate_notes: Sequence[str] = ()) -> str:
    """The report of `run_dir` as one HTML string; with `gate` (sim.analysis.gate) the
    regression gate against the run `against` comes first, with its `gate_notes` (what
    its reader must not miss, in words); with `history` (sim.analysis.history) the
    baseline's victory mix night by night follows it. Another game's run gets that
    game's own report (sim.outputs.games: its report_module)."""
    game = game_of_run(read_provenance(run_path(run_dir)))
    if (own := game.report()) is not None:
        return own.build_report(run_dir, baseline, gate, against, gate_notes)
    with SvgRenderer() as renderer:
        return _build_report(run_dir, renderer, baseline, gate, against, history,
                             gate_notes)


def _build_report(run_dir: str | Path, renderer: SvgRenderer, baseline: str | None,
                  gate: pl.DataFrame | None, against: str | Path | None,
                  history: pl.DataFrame | None, gate_notes: Sequence[str] = ()) -> str:
    """The page of `run_dir`: its tables computed first (_analyse), then each section
    of _SECTIONS written in page order, then the charts drawn into their slots, the
    rules the page names, and the head with the failure lines."""
    # scipy and statsmodels load on the other core while the scans below read Parquet
    # (the first interval waits for them)
    # (without pyarrow: 35 MB that nothing in the report calls; stats._lib)
    # and altair (0.2 s), which only the charts at the end need, after them
    stats.preload(without_pyarrow=True, then=("sim.analysis.charts",))
    # the small tables whole, events and turns as scans: the metrics below read the
    # events of metrics.EVENT_KINDS (a few percent of the table), and the turns and
    # content aggregates stream through the scans (a 12,000-match run's events and
    # turns tables hold some 18 million rows)
    run = scan_run(run_dir)
    prov = run.provenance
    baseline = baseline or run.baseline
    variants = run.variants
    if baseline not in variants:
        raise ValueError(f"baseline {baseline!r} is not a variant of {run_dir} "
                         f"({', '.join(variants)})")
    page = _Page(run_dir=run_dir, run=run, prov=prov, baseline=baseline, variants=variants,
                 renderer=renderer, tables=_analyse(run, prov, baseline, variants),
                 gate=gate, against=against, history=history, gate_notes=gate_notes)
    for write_section in _SECTIONS:
        write_section(page)
    page.tables.release()  # every table is written: hand their memory back
    body = _draw_charts(page)
    named = mentioned_rules(body)
    if named:
        body += f"<h2>Rules named in this report</h2>{_glossary(named)}"
    return _page_html(page, body)


@dataclass
class _Tables:
    """The tables more than one section reads, or that must be computed before the
    charts' renderer starts (see _analyse); frames one row per variant × item unless
    said otherwise."""

    depth: pl.DataFrame              # deepest capital-fall cascade per seat × match
    cascade_tables: list[tuple[str, pl.DataFrame]]  # (heading, table) of the cascades
    usage: pl.DataFrame | None       # content usage with Wilson intervals and `dead`
    errors: pl.DataFrame             # played, finished, failed per variant
    freq: pl.DataFrame               # victory shares per variant × victory type
    tests: pl.DataFrame | None       # paired tests vs the baseline, Holm-corrected
    mix: pl.DataFrame | None         # the joint victory-mix test per variant
    notes: list[str]                 # where resolution limits the tests, in words
    gold: pl.DataFrame               # the gold term's share, winners and standing seats
    falls: pl.DataFrame              # capital falls per match, per variant
    near: pl.DataFrame               # near misses per variant (near_misses)
    flags: pl.DataFrame              # the anomaly flags, one row per flagged match × flag

    def release(self) -> None:
        """Hand the largest frames' memory back once every section is written, before
        this process builds the charts."""
        self.usage = None


def _analyse(run: RunScan, prov: dict[str, Any], baseline: str,
             variants: list[str]) -> _Tables:
    """The scans' passes, in the order that keeps the report's peak memory low."""
    # the widest pass first, while nothing else is held: its buffers then never stack on
    # the event rows below (the report's peak memory)
    counts = metrics.usage_counts(run.matches, run.events, prov, usage=run.usage)
    # the tables that need no statistics library come before the first that does: on
    # a 12,000-match run the imports (0.7 s) outlasted the passes above by 0.3-0.4 s,
    # which this process spent waiting for them
    # the capital falls (most of the kept rows: 377,000 at 100,000 matches) with only the
    # columns their two readers read, the other kept kinds with every held column
    capital_falls, events, depth, cascade_tables = _cascades(run)
    usage = metrics.usage_intervals(counts)
    del counts
    errors = metrics.error_rates(run.matches, run.errors)
    freq = metrics.victory_frequencies(run.matches, errors=run.errors)
    tests = mix = None
    notes: list[str] = []
    if len(variants) > 1:
        tests, mix, notes = _paired_tests(run, capital_falls, baseline)
    # every table read from the event rows is made here, so that they are let go before
    # the sections' own passes (the game quality's turn slices) stack on them
    falls = metrics.capital_falls_per_match(capital_falls, run.matches)
    del capital_falls
    counters = metrics.counters_to_win(prov)
    near = metrics.near_misses(run.turns, run.matches, events, counters,
                               runs=run.dominance_runs).with_columns(
        pl.col("variant").replace_strict(list(counters), list(counters.values()),
                                         default=metrics.COUNTER_TO_WIN,
                                         return_dtype=pl.Int64).alias("counter_to_win"))
    flags = anomalies(run.matches, run.seats, events, run.turns, run.errors,
                      report_settings(prov).anomalies, run.quiet,
                      replays=scan_table(run.root, "matches"))
    return _Tables(depth=depth, cascade_tables=cascade_tables, usage=usage,
                   errors=errors, freq=freq, tests=tests, mix=mix, notes=notes,
                   gold=metrics.gold_share(run.seats), falls=falls, near=near, flags=flags)


def _cascades(run: RunScan, size: int = EVENT_SLICE
              ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame,
                         list[tuple[str, pl.DataFrame]]]:
    """The events `size` matches at a time (load.match_ranges): the capital-fall
    cascades' tables (V08-V11) from their units (sim.analysis.cascades), and the rows of
    metrics.kept_event_kinds for the metrics read later: the capital falls (variant,
    match_index and kind: all that capital_falls_per_match and the paired tests read of
    them) apart from the other kinds' rows (every held column). Captures and revolts are
    counted from the scan (revolting_counts). Held whole, the event rows these read
    grew the report's memory with the run (issue 46)."""
    quiet = run.quiet is not None
    # the widest of these passes first, while none of the units below is held: their
    # 35 MB at 100,000 matches stacked on its buffers made the report's peak (issue 46)
    revolting = sum_over_slices(run.events, metrics.revolting_counts, run_keys(run), size)
    kept, falls, depths, transfers, causes, survivals = [], [], [], [], [], []
    spine: set[str] = set()
    for variant, lo, hi in match_ranges(run_keys(run), size):
        rows = event_rows(run.events.filter(pl.col("variant") == variant,
                                            pl.col("match_index").is_between(lo, hi)),
                          metrics.held_event_kinds(quiet), metrics.HELD_EVENT_COLUMNS)
        spine.update(rows.get_column("variant").to_list())
        kept.append(rows.filter(pl.col("kind").is_in(metrics.kept_event_kinds(quiet)),
                                pl.col("kind") != "capital_fall"))
        falls.append(rows.filter(pl.col("kind") == "capital_fall")
                     .select("variant", "match_index", "kind"))
        # the depth counts of the slice's seats (a seat lies within its match): the seat
        # keys of the whole run, held for one join, grew the report's peak (issue 46)
        seated = (run.seats.lazy().select("variant", "match_index", "seat")
                  .filter(pl.col("variant") == variant,
                          pl.col("match_index").is_between(lo, hi)).collect())
        depths.append(cascades.depth_counts(cascades.deepest_cascades(rows), seated))
        transfers.append(cascades.fall_transfers(rows))
        causes.append(cascades.elimination_causes(rows))
        survivals.append(cascades.fall_survivals(rows))
    variants = pl.DataFrame({"variant": sorted(spine)}, schema={"variant": pl.Utf8})
    tables = [("Cities transferred per fall (V08)",
               cascades.transfers_table(_rows(transfers), variants)),
              ("Eliminations caused by capital falls (V10)",
               cascades.eliminations_table(_rows(causes), variants)),
              ("Turns from a first capital fall to elimination",
               cascades.survival_table(_rows(survivals), variants)),
              ("Revolting cities taken by a third seat or retaken by their former "
               "owner (V11)", metrics.revolting_taken_by_third(variants, revolting))]
    depth = cascades.depth_grid(_rows(depths).group_by("variant", "depth")
                                .agg(pl.col("seats").sum()))
    return _rows(falls), _rows(kept), depth, tables


def _rows(parts: list[pl.DataFrame]) -> pl.DataFrame:
    return pl.concat(parts, how="vertical_relaxed")


def _paired_tests(run: RunScan, events: pl.DataFrame, baseline: str
                  ) -> tuple[pl.DataFrame, pl.DataFrame, list[str]]:
    """Each variant against the baseline on the same matches: the per-metric tests
    (victory types and continuous metrics, Holm over all of them), the joint
    victory-mix test (Holm over the variants), and the resolution notes."""
    notes: list[str] = []
    tests = pl.concat([metrics.paired_victory_tests(run.matches, baseline),
                       metrics.paired_metric_tests(run.matches, run.seats, events, baseline)],
                      how="diagonal_relaxed")
    if tests.height:
        # the report says where resolution limits, in its own words
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", metrics.ResolutionWarning)
            tests = metrics.significance(tests, method="holm")
        notes += [str(w.message) for w in caught
                  if issubclass(w.category, metrics.ResolutionWarning)]
    mix = metrics.victory_mix_tests(run.matches, baseline)
    if mix.height:
        mix = metrics.significance(mix, method="holm")
    return tests, mix, notes


class PageParts:
    """A report page's sections and charts as they are written, for a page dataclass
    with the fields `sections` (each section's HTML, in order) and `planned` (each
    chart's call, put off until every table is computed, and its caption): the hex
    report's _Page and Crown's (sim.report.crown) write their pages the same way."""

    sections: list[str]
    planned: list[tuple[Callable[[], Any], str]]

    def section(self, title: str, body: str) -> None:
        self.sections.append(f"<h2>{html.escape(title)}</h2>{body}")

    def figure(self, make_chart: Callable[[], Any], caption: str) -> str:
        """A chart's place in the page (drawn by _draw_charts), with its caption."""
        self.planned.append((make_chart, caption))
        return f"<figure class='chart'>{_chart_slot(len(self.planned) - 1)}" \
               f"<figcaption class='muted'>{html.escape(caption)}</figcaption></figure>"


@dataclass
class _Page(PageParts):
    """The report being written: the run, its tables, and the sections and charts so
    far. Each chart is a call put off (`later`) until every table is computed: then
    this process builds the charts while the renderer's child, started at the first
    one, draws them on the other core. The child's JavaScript engine (some 130 MB)
    thus never sits on top of a scan's buffers."""

    run_dir: str | Path
    run: RunScan
    prov: dict[str, Any]
    baseline: str
    variants: list[str]
    renderer: SvgRenderer
    tables: _Tables
    gate: pl.DataFrame | None
    against: str | Path | None
    history: pl.DataFrame | None
    gate_notes: Sequence[str]
    sections: list[str] = field(default_factory=list)
    planned: list[tuple[Callable[[], Any], str]] = field(default_factory=list)


def _gate_section(page: _Page) -> None:
    """The regression gate against an earlier run, when one was asked for."""
    gate = page.gate
    if gate is None:
        return
    pairing = "paired on the same matches" if gate.height and gate.item(0, "paired") \
        else "independent samples"
    page.section(f"Regression gate: {gate_summary(gate)}",
                 f"<p>Against <code>{html.escape(str(page.against))}</code>: each victory "
                 "share must stay within ±margin of that run's. A sequential test "
                 "(sim.analysis.gate): the intervals are anytime-valid 90% confidence "
                 "sequences, so the gate may add matches block by block and stop at the "
                 "first look that decides. PASS: inside ±margin; FAIL changed: beyond it; "
                 "INCONCLUSIVE: neither when the match budget ran out (<em>needed</em>: "
                 f"about how many matches per variant would decide it); {pairing}.</p>" +
                 "".join(f"<p class='note'><strong>Note:</strong> {html.escape(n)}</p>"
                         for n in page.gate_notes) +
                 _table(gate.select("variant", "victory", "before", "now", "difference",
                                    "lo", "hi", "margin", "n_now", "needed", "verdict")
                        .with_columns((pl.col("verdict").str.starts_with("FAIL")
                                       | (pl.col("verdict") == "INCONCLUSIVE"))
                                      .alias("failed")),
                        {"before": "pct", "now": "pct", "difference": "pct", "lo": "pct",
                         "hi": "pct", "margin": "pct"}, highlight="failed"))


def _sequential_section(page: _Page) -> None:
    """A precision-targeted sweep's stopping intervals (issue 44): the anytime-valid
    bounds of the look it stopped at, as its provenance recorded them."""
    seq = page.prov.get("sequential") or {}
    rows = (seq.get("looks") or [{}])[-1].get("rows") or []
    if not rows:
        return
    target = ", ".join(f"{k} {seq[k]:g}" for k in ("precision", "detect")
                       if seq.get(k) is not None)
    table = pl.DataFrame(rows, infer_schema_length=None)
    keep = [c for c in ("target", "variant", "victory", "n", "estimate", "lo", "hi",
                        "half_width", "decided") if c in table.columns]
    page.section(
        "Where the sequential sweep stopped: anytime-valid intervals",
        f"<p>This run grew look by look until its target ({html.escape(target)}) was met "
        f"or its budget spent: it stopped at {seq.get('stopped_at')} matches per variant "
        f"({html.escape(str(seq.get('reason')))}). These are the intervals it stopped "
        f"on: confidence sequences at {seq.get('confidence', 0.95):.0%}, valid at every "
        "look at once (<strong>anytime-valid</strong>), so stopping on them is honest; "
        "the paired differences of a detect target are Bonferroni-corrected together. "
        "The fixed-size intervals in the sections below are narrower and ignore the "
        "looks: where the two disagree, trust these.</p>" +
        _table(table.select(keep).with_columns(
            (pl.col("decided").fill_null("") == "").alias("open")),
            {"estimate": "pct", "lo": "pct", "hi": "pct", "half_width": "pct"},
            highlight="open"))


def _history_section(page: _Page) -> None:
    """The baseline's victory mix run by run, when a history index was given."""
    if page.history is None:
        return
    baseline, history = page.baseline, page.history
    # the runs of this experiment only: another experiment's mix is another game
    name = str(page.prov.get("experiment", {}).get("name", ""))
    ours = history.filter((pl.col("experiment") == name) & (pl.col("variant") == baseline))
    others = history.filter(pl.col("experiment") != name).get_column("run_id").n_unique()
    left_out = f" {others} runs of other experiments in the index are left out." \
        if others else ""
    if ours.height:
        nights = ours.get_column("run_id").n_unique()
        page.section("History", page.figure(
            later.history_trend(ours, baseline),
            f"The baseline ({baseline}) over the {nights} runs of experiment {name!r} in "
            f"the history index, 95% Wilson intervals.{left_out}"))


def _headline_section(page: _Page) -> None:
    """What each variant changed, in sentences (a run of one variant has none)."""
    if len(page.variants) > 1:
        page.section("Headline: what each variant changed", _headline(
            headline(page.tables.tests, page.tables.mix, page.prov, page.baseline),
            page.baseline))


def _strategy_worth_section(page: _Page) -> None:
    """Restricted play: what forbidding a seat an item costs it, when a variant does."""
    run = page.run
    worth = strategy_importance(run.matches, run.seats, page.baseline, provenance=page.prov)
    if worth.height:
        page.section("What each strategy is worth",
                     _strategy_worth(worth, baseline_use(run.matches, run.events, run.seats,
                                                         page.baseline, page.prov),
                                     page.baseline, page.figure))


def _skill_section(page: _Page) -> None:
    """Each change's effects at two AI skills and their interaction test, when the
    variants play more than one skill (an experiment's `skills`, issue 43)."""
    effects = skill_effects(page.run.matches, page.prov, page.baseline)
    if effects.height and effects.get_column("skill").n_unique() > 1:
        tests = page.tables.tests
        family = tests.get_column("p_value").to_list() if tests is not None and \
            tests.height else []
        page.section("Does it hold at both levels of play? Effects by AI skill",
                     _skill_interactions(skill_interactions(page.run.matches, effects,
                                                            family=family),
                                         effects, len(family), page.figure))


def _ladder_section(page: _Page) -> None:
    """A ladder run (sim ladder): the head-to-head heat map, the ratings and whether
    each rung beats the one below it."""
    read = read_ladder(page.run.matches, page.prov)
    if read is None:
        return
    pct = {c: "pct" for c in ("share", "lo", "hi")}
    page.section(f"Ladder: {read['verdict']}",
                 page.figure(later.ladder_heatmap(read["matrix"], read["agents"]),
                             "The row agent's share of its decided matches against the "
                             "column agent, both seat orders on the same seeds; the "
                             "tooltip gives the Wilson 95% interval.") +
                 f"<h3>Rating ({html.escape(read['rating_name'])})</h3>" +
                 _table(read["ratings"]) +
                 "<h3>Each rung against the one below it</h3>" +
                 _table(read["steps"], pct, highlight="beats") +
                 "<p class='muted'>Bradley-Terry (two seats; choix): agent i beats agent j "
                 "with chance 1 / (1 + exp(r_j − r_i)), intervals by a bootstrap over the "
                 "matches of each pairing; openskill (more seats): Plackett-Luce mu ± 1.96 "
                 "sigma. Rungs: the agents without a forbid, in the file's order. "
                 "Monotone: every rung's head-to-head interval above 50 % (the target: "
                 "55 % or more).</p>")


def _summary_section(page: _Page) -> None:
    t = page.tables
    summary = summary_table(page.run, t.freq, t.gold, t.errors)
    page.section("Summary per variant", _table(summary) +
                 "<p class='muted'>Victory shares over finished matches with 95% Wilson "
                 "intervals; gold share: the gold term's share of the final score of the "
                 "winners and of the seats standing at the end (eliminated seats, whose "
                 "whole score is gold, left out); baseline: "
                 f"<code>{html.escape(page.baseline)}</code>.</p>")


def _changed_section(page: _Page) -> None:
    """The paired per-metric tests vs the baseline and their chart."""
    tests = page.tables.tests
    if tests is None or not tests.height:
        return
    show = tests.select("variant", "metric", "baseline_value", "variant_value",
                        "difference", "lo", "hi", "p_value", "p_adjusted", "n_pairs",
                        "changed")
    limited = "".join(f"<p class='muted'>Resolution: {html.escape(n)}.</p>"
                      for n in page.tables.notes)
    page.section("Changed vs baseline",
                 _table(show, {"p_value": "p", "p_adjusted": "p"}, highlight="changed") +
                 "<p class='muted'>Paired on shared seeds (common random numbers), a pair "
                 "only when both matches finished: exact McNemar tests for victory types "
                 "(Newcombe's paired interval of the difference), "
                 "cluster-robust paired t-tests for continuous metrics (seats clustered by "
                 "match); p-values Holm-corrected across all metrics × variants; "
                 "highlighted rows changed at α = 0.05.</p>" + limited +
                 page.figure(later.paired_differences(tests), "Variant minus baseline with "
                             "95% paired intervals, one panel per unit (each its own axis): "
                             "victory and gold shares in percentage points, end turn in "
                             "turns, capital falls per match."))


def _victory_mix_section(page: _Page) -> None:
    """The joint test of each variant's whole victory mix (Stuart–Maxwell)."""
    mix = page.tables.mix
    if mix is not None and mix.height:
        page.section("Victory mix vs baseline",
                     _table(mix, {"p_value": "p", "p_adjusted": "p"}, highlight="changed") +
                     "<p class='muted'>One joint test of the whole victory mix per variant "
                     "(Stuart–Maxwell, Holm-corrected across variants); victory_changed and "
                     "winner_changed count the paired matches whose victory type or "
                     "winning seat differs from the baseline's.</p>")


def _victory_types_section(page: _Page) -> None:
    freq = page.tables.freq
    page.section("Victory types",
                 page.figure(later.victory_mix(freq), "Share of matches by victory type, "
                             "95% Wilson intervals (simultaneous Goodman intervals in the "
                             "table below).") +
                 _table(freq, {"share": "pct", "lo": "pct", "hi": "pct",
                               "lo_simultaneous": "pct", "hi_simultaneous": "pct"}))


def _game_quality_section(page: _Page) -> None:
    """How the game plays (sim.analysis.quality): each variant in sentences, the
    metrics with intervals and paired differences, their small multiples; then, for
    each variant whose victory mix moved, the mechanisms that moved with it
    (_what_moved: associations, and the page says so)."""
    from sim.analysis import quality

    if {"turns", "seats"} & set(missing_tables(page.prov)):
        return  # a run without them (tables_out): the page's head says what that costs
    run, baseline = page.run, page.baseline
    table = quality.quality_table(run.turns, run.matches, run.seats, page.variants)
    if table.height == 0:
        return
    summary = quality.quality_summary(table)
    tests = quality.quality_tests(table, baseline) if len(page.variants) > 1 else None
    said = "".join(
        f"<li><b>{html.escape(v)}</b>: {html.escape(quality.quality_sentences(summary, v))}"
        + (f" Against the baseline: {html.escape('; '.join(words))}." if tests is not None
           and (words := quality.change_words(tests, v)) else "") + "</li>"
        for v in page.variants if quality.quality_sentences(summary, v))
    fine = pl.col("metric").is_in(["stability", "decided_share", "comeback"])  # below 1
    cells = summary.with_columns(pl.format("{} [{}, {}]", *(
        pl.when(fine).then(pl.col(c).round(3)).otherwise(pl.col(c).round(1))
        for c in ("mean", "lo", "hi"))).alias("cell")).pivot(on="metric", index="variant",
                                                              values="cell")
    cells = cells.sort(pl.col("variant").replace_strict(
        page.variants, list(range(len(page.variants))), default=len(page.variants)))
    body = (f"<ul class='headline'>{said}</ul>" + _table(cells) +
            page.figure(later.quality_distribution(
                quality.distribution(table, "lead_changes", top=20), "Lead changes per "
                "match", "lead changes (20: 20 or more)"),
                "Share of each variant's matches by how often the score leader changed.") +
            page.figure(later.quality_distribution(
                quality.distribution(table, "decisive_turn", width=10), "Decisive turn",
                "decisive turn (bins of 10)"),
                "Share of matches by the turn from which the winner led for good.") +
            page.figure(later.comeback_rate(summary), "Comebacks per variant."))
    if tests is not None and tests.height:
        body += _table(tests.select("variant", "metric", "baseline_value", "variant_value",
                                    "difference", "lo", "hi", "p_adjusted", "n_pairs",
                                    "changed"), {"p_adjusted": "p"}, highlight="changed")
    page.section("How the game plays", body + "<p class='muted'>Per finished match, from "
                 "the per-turn scores (ranks by T11, standing seats first): decisive turn, "
                 "from which the winner led to the end (the end turn if it never did); "
                 "decided share, that turn over the end turn; lead changes; comeback, the "
                 "winner not leading at half time; stability, rank places a seat moves "
                 "per turn; eliminations (V02); largest lead over the runner-up. Means "
                 "with 95% intervals (Wilson for comebacks); paired differences on the "
                 "same matches (paired t, McNemar for comebacks), Holm over the table. "
                 "Definitions and their Ludii counterparts: docs/quality.md.</p>")
    _what_moved(page)


def _what_moved(page: _Page) -> None:
    """For each variant whose victory mix moved, the mechanisms that moved with it,
    ranked (sim.analysis.mechanisms), beside the effect in words."""
    from sim.analysis import mechanisms

    run, baseline = page.run, page.baseline
    moved = [v for v in mechanisms.moved_variants(page.tables.mix) if v != baseline]
    if moved and page.tables.tests is not None and "events" not in missing_tables(page.prov):
        # paired slice by slice: a table of every match × mechanism grew with the run
        changes = mechanisms.run_mechanism_changes(run.events, run.matches, moved, baseline,
                                                   run.root)
        parts = [f"<h3>{html.escape(v)}</h3><p>"
                 f"{html.escape(mechanisms.explanation(page.tables.tests, changes, v))}</p>"
                 + _table(changes.filter((pl.col("variant") == v) & (pl.col("rank") <= 8))
                          .drop("variant"), {"p_value": "p", "p_adjusted": "p"},
                          highlight="changed") for v in moved]
        page.section("What moved with each variant's victory mix", "".join(parts) +
                     f"<p><b>{html.escape(mechanisms.CAVEAT)}</b></p><p class='muted'>For "
                     "each variant whose victory mix moved (the joint test above): every "
                     "mechanism's count per match, paired with the baseline's on the same "
                     "match (paired t), ranked by the standardised change d_z (mean change "
                     "over its SD), Holm over every variant × mechanism; the top 8 shown.</p>")


def _dose_response_sections(page: _Page) -> None:
    """One section per table key the variants set to several values: its curves, the
    steepest step of each (its cliff) and the values that keep every victory type in
    its band (metrics.DEFAULT_BANDS)."""
    points, steps, band = metrics.dose_response(page.run.matches, page.prov)
    bands = ", ".join(f"{v} {lo:.0%}–{hi:.0%}" for v, (lo, hi) in
                      metrics.DEFAULT_BANDS.items())
    for key in points.get_column("key").unique(maintain_order=True).to_list():
        cliffs = (steps.filter((pl.col("key") == key) & pl.col("cliff"))
                  .select("victory", "from_value", "to_value", "difference", "lo", "hi",
                          "p_value", "slope"))
        inside = band.filter((pl.col("key") == key) & pl.col("in_band"))
        values = ", ".join(f"{v:g}" for v in inside.get_column("value").to_list()) or "none"
        page.section(f"Dose-response: {key}",
                     page.figure(later.dose_response(points, key), "Victory shares at each "
                                 "value of the key (the variants that override it alone, "
                                 "and the baseline), 95% Wilson intervals.") +
                     "<h3>Cliffs: the steepest step of each curve</h3>" +
                     _table(cliffs, {"p_value": "p"}) +
                     f"<p class='muted'>Each step is paired on the same matches (McNemar, "
                     f"Newcombe's interval); slope: change in share per unit of the key. "
                     f"Every victory type within its band ({html.escape(bands)}) at: "
                     f"<b>{html.escape(values)}</b>.</p>")


def _end_turns_section(page: _Page) -> None:
    page.section("End turns",
                 page.figure(later.end_turns(metrics.end_turn_distribution(page.run.matches)),
                             "p10–p90 whiskers, p25–p75 bars, median ticks."))


def _gold_section(page: _Page) -> None:
    """The gold term's share of the final score (T13): per variant, turn by turn, and
    the score's decomposition into its terms."""
    run, gold = page.run, page.tables.gold
    page.section("Gold term",
                 page.figure(later.gold_share(gold), "Share of the gold term in the final "
                             "score (T13): winners, and seats standing at the end; 95% "
                             "intervals clustered by match.") +
                 _table(gold, {"mean": "pct", "lo": "pct", "hi": "pct"}) +
                 page.figure(later.gold_share_over_turns(metrics.gold_share_over_turns(
                     run.turns, run.seats, sums=run.gold_turns)),
                     "Mean share per turn over the seats standing at that turn.") +
                 page.figure(later.score_decomposition(metrics.score_decomposition(run.seats)),
                             "Mean points per score term, winners and standing seats."))


def _cascades_section(page: _Page) -> None:
    """Capital falls (V08, V10, V11): per match, the deepest cascades, and the tables
    of what each fall transferred and caused. Starts the charts' renderer."""
    falls = page.tables.falls
    # the chart renderer's child starts its engine (0.7-0.9 s) on the other core while
    # this process computes the last tables and builds the charts; not before the
    # passes above (the widest, then the cascades' sorts), so its 80-140 MB never sit
    # on top of their buffers: started after event_rows, the two made a 12,000-match
    # run's peak 483-488 MB (517-526 before content usage streamed), against 416-418 MB
    # started here, for no measurable time
    page.renderer.start()
    page.section("Capital-fall cascades",
                 page.figure(later.capital_falls(falls),
                             "Capital falls per match, 95% intervals.") +
                 page.figure(later.cascade_depth(page.tables.depth),
                             "Deepest cascade of each seat in each match: falls of the "
                             "capital the previous fall named, at most "
                             f"{metrics.CASCADE_WITHIN} turns apart "
                             "(0: its capital never fell).") +
                 "".join(f"<h3>{html.escape(t)}</h3>{_table(f)}"
                         for t, f in page.tables.cascade_tables))


def _truces_section(page: _Page) -> None:
    """D9: truce offers per variant (the truces table): how many, accepted or
    declined, and what became of each side."""
    run = page.run
    # counted 5,000 matches at a time (the counts add up): read whole, the table's
    # offers joined to their winners took 35 MB above the report's level at 100,000
    # matches, more than any other section (issue 46)
    counts = sum_over_slices(run.truces, lambda rows: truce_counts(rows, run.matches),
                             run_keys(run), by=("variant", "answer"))
    summary = truce_summary(run.truces, run.matches, counts)
    if summary.height == 0:
        page.section("Truces", "<p class='muted'>No truce was offered in any match.</p>")
        return
    pct = {c: "pct" for c in ("acceptance", "acceptance low", "acceptance high",
                              "buyer won", "seller won", "other won")}
    page.section("Truces", _table(summary, pct) +
                 "<p class='muted'>Every truce offer (D9: the buyer names a price, the seat "
                 "asked accepts or declines), by answer and over all offers: offers per "
                 "finished match, the accepted share with its Wilson 95 % interval, the "
                 "mean price in gold, each side's change in cities held from the turn "
                 "before the offer to ten turns after it (or the match's end), and the "
                 "share of offers whose match the buyer, the seller or another seat went "
                 "on to win (the truces table, docs/outcomes.md).</p>")


def _seats_section(page: _Page) -> None:
    seats = page.run.seats
    page.section("Seats and personalities",
                 page.figure(later.win_rates(metrics.win_rate_by_seat(seats), "seat"),
                             "Win rate by seat position (seating rotates with the match "
                             "index).") +
                 page.figure(later.win_rates(metrics.win_rate_by_personality(seats),
                                             "personality"),
                             "Win rate by AI personality."))


def _content_section(page: _Page) -> None:
    """How often each unit, building, tech and mechanic was used; dead content
    highlighted."""
    usage = page.tables.usage
    n_dead = usage.filter(pl.col("dead")).select("category", "item").unique().height
    page.section("Content usage",
                 _table(content_table(usage), highlight="dead") +
                 f"<p class='muted'>Share of each variant's finished matches in which an "
                 "item was used at least once (units and buildings: built; techs: "
                 "researched; mechanics: their event), 95% Wilson intervals. Highlighted "
                 f"rows ({n_dead}) were used in under {metrics.DEAD_SHARE:.0%} of the "
                 "matches of some variant: dead content, a lever on it does nothing. Items "
                 "are the variants' tables as provenance.json recorded them.</p>")


def _near_misses_section(page: _Page) -> None:
    """Dominance counters that came close to winning (V18) and Observatories lost to a
    city's fall (V17)."""
    page.section("Near misses", _table(page.tables.near) +
                 "<p class='muted'>Dominance counters that reached counter_to_win − 2 or − 1 "
                 "(each variant's own V18 threshold, from its tables in provenance.json; 6–7 "
                 "with the default 8) and reset; Observatories lost to a city's fall "
                 "(V17).</p>")


def _anomalies_section(page: _Page) -> None:
    run, flags = page.run, page.tables.flags
    settings = report_settings(page.prov).anomalies
    page.section("Anomalies", _anomalies(flags, anomaly_counts(flags, run.matches, run.errors),
                                         settings, page.run_dir))


def _provenance_section(page: _Page) -> None:
    page.section("Provenance", _provenance(page.prov))


# the report's sections in page order; each writes none, one or (dose-response) several
_SECTIONS: tuple[Callable[[_Page], None], ...] = (
    _gate_section, _sequential_section,
    _history_section, _ladder_section, _headline_section, _strategy_worth_section,
    _skill_section, _summary_section, _changed_section, _victory_mix_section,
    _victory_types_section, _game_quality_section, _dose_response_sections,
    _end_turns_section, _gold_section,
    _cascades_section, _truces_section, _seats_section, _content_section,
    _near_misses_section,
    _anomalies_section, _provenance_section)


def _draw_charts(page: _Page) -> str:
    """The sections as one string, each planned chart built here and drawn by the
    renderer's child into its slot."""
    body = "".join(page.sections)
    # altair's debug mode validates every object against the Vega-Lite schema as it
    # is made, a quarter of the charts' cost here; a test validates every chart of a
    # report instead (tests/test_report.py)
    from sim.analysis._altair import alt

    with alt.utils.schemapi.debug_mode(False):
        for make_chart, caption in page.planned:
            page.renderer.submit(make_chart(), caption)
    for i, drawn in enumerate(page.renderer.results()):
        body = body.replace(_chart_slot(i), drawn, 1)
    return body


def _page_html(page: _Page, body: str) -> str:
    """The whole document: head, title, the failure lines, then `body`."""
    prov = page.prov
    title = (f"Balance report — "
             f"{prov.get('experiment', {}).get('name', Path(page.run_dir).name)}")
    return (page_head(title, prov)
            + failure_line(page.tables.errors, page.run_dir) + dropped_line(page.run.matches)
            + "".join(f"<p class='muted'>{html.escape(n)}</p>" for n in missing_table_notes(prov))
            + body + "</body></html>")


def _headline(entries: list[dict[str, Any]], baseline: str) -> str:
    """Per variant: its overrides in words, the winner flips, then each effect as a
    sentence; effects changed after Holm in bold."""
    parts = []
    for e in entries:
        flips = ""
        if e["pairs"]:
            flips = (f" The winner changed in {e['winner_flips']} of {e['pairs']} paired "
                     f"matches ({e['winner_flips'] / e['pairs']:.0%}); the victory type in "
                     f"{e['victory_flips']}.")
        items = "".join(f"<li class='{'moved' if moved else ''}'>{html.escape(text)}</li>"
                        for text, moved in e["effects"])
        what = html.escape(e["overrides"]) or "no overrides (the baseline's tables)"
        parts.append(f"<h3>{html.escape(e['variant'])}: {e['changed']} of "
                     f"{len(e['effects'])} effects changed</h3><p>Changes: <code>{what}</code>."
                     f"{flips}</p><ul class='headline'>{items}</ul>")
    return ("".join(parts) + "<p class='muted'>Each effect is the variant minus "
            f"<code>{html.escape(baseline)}</code> on the same matches (common random "
            "numbers), with its 95% paired interval; victory shares and gold shares in "
            "percentage points. \"Changed\": significant after one Holm correction over "
            "every effect of every variant (the tables below), whose adjusted p follows "
            "each verdict. The interval is the effect's own, uncorrected: one that "
            "excludes 0 may still not survive the correction.</p>")


def _strategy_worth(worth: pl.DataFrame, use: pl.DataFrame, baseline: str, figure) -> str:
    """The ranked chart of the restricted seats' win-rate changes, the table by victory
    type, and how often each forbidden item was used when free."""
    nothing = worth.filter((pl.col("outcome") == "win") & (pl.col("verdict") == "nothing"))
    flagged = "".join(
        f"<li><b>{html.escape(r['forbid'])}</b> ({html.escape(r['variant'])}, seat "
        f"{r['seat']}): win rate {r['difference'] * 100:+.1f} points "
        f"[{r['lo'] * 100:+.1f}, {r['hi'] * 100:+.1f}]; the game does not reward it.</li>"
        for r in nothing.iter_rows(named=True))
    flagged = (f"<p>Strategies whose removal costs nothing (within ±{MARGIN:.0%}):</p>"
               f"<ul class='headline'>{flagged}</ul>") if flagged else ""
    table = worth.select("variant", "seat", "forbid", "twin", "outcome", "baseline_value",
                         "variant_value", "difference", "lo", "hi", "p_value", "p_holm",
                         "n_pairs", "verdict").with_columns(
        (pl.col("verdict") == "costs").alias("costs"))
    pct = {c: "pct" for c in ("baseline_value", "variant_value", "difference", "lo", "hi")}
    return (figure(later.strategy_worth(worth), "The restricted seat's win rate minus the "
                   "same seat index's in the baseline, on the same matches; 95% paired "
                   "intervals.") + flagged +
            _table(table, {**pct, "p_value": "p", "p_holm": "p"}, highlight="costs") +
            "<h3>How often the restricted seat used it when free</h3>" +
            _table(use, {"share": "pct"}) +
            f"<p class='muted'>Restricted play (Jaffe et al., AIIDE 2012): a variant's "
            "<code>seat_ai</code> forbids one seat index a unit, building, mechanic or "
            "tech; the AI plans around it. Each row pairs that seat index's matches with "
            "its free twin's (<code>twin</code>: the variant on the same tables with no "
            f"seat settings, usually <code>{html.escape(baseline)}</code>) on the same "
            "seeds (personalities rotate alike): exact McNemar, Newcombe's paired "
            "interval, Holm across the table. costs: a significant loss; gains: a "
            "significant gain; nothing: the "
            f"whole interval within ±{MARGIN:.0%}; undecided: run more matches.</p>")


def _skill_interactions(wide: pl.DataFrame, effects: pl.DataFrame, family: int,
                        figure) -> str:
    """Each change's effects at two skills side by side, with the interaction test and
    its verdict (sim.analysis.robustness.skill_interactions)."""
    depends = wide.filter(pl.col("verdict") != "holds at both").height
    pct = {c: "pct" for c in ("difference_a", "lo_a", "hi_a", "difference_b", "lo_b",
                              "hi_b", "interaction", "int_lo", "int_hi")}
    return (f"<p>{depends} of {wide.height} effects depend on the level of play.</p>" +
            _table(wide.with_columns((pl.col("verdict") != "holds at both")
                                     .alias("depends")),
                   {**pct, "p_value": "p", "p_holm": "p"}, highlight="depends") +
            figure(later.skill_sides(effects), "Each change minus the baseline's tables "
                   "at the same skill, on the same matches; 95% paired intervals.") +
            "<p class='muted'>Every variant is played with every seat at skill a and at "
            "skill b on the same seeds. interaction: the effect at b minus the effect "
            "at a, per match (the four arms of match i share its seeds), with its t "
            "interval; p_holm: Holm over these tests together with the "
            f"{family} paired tests above (one family). holds at both: no significant "
            "interaction; flips sign: significant at both skills in opposite "
            "directions; only at skill N: significant at N alone; larger at skill N: "
            "one direction, more at N. An effect that depends on skill is a conclusion "
            "about how well the game is played: tune for the stronger level.</p>")


def _anomalies(flags: pl.DataFrame, counts: pl.DataFrame, settings,
               run_dir: str | Path) -> str:
    """Counts per variant × flag, then the flagged matches (the first 40) with their
    replay commands: `sim replay RUN MATCH_ID`, which plays the match from the run
    folder's frozen tables and checks it ends as its row says (the `sim match` command
    a row stores reads the tables file as it is now); for a match that raised, that
    command, which raises again."""
    wide = counts.with_columns(pl.format("{} ({}%)", "matches", (pl.col("share") * 100)
                                         .round(1)).alias("cell")) \
        .pivot(on="flag", index="variant", values="cell")
    run = shlex.quote(str(run_dir))
    shown = flags.head(40).with_columns(
        pl.when(pl.col("flag") == "error").then(pl.col("replay"))
        .otherwise(pl.format(f"sim replay {run} {{}}", "match_id")).alias("replay")) \
        .select("variant", "match_id", "flag", "turn", "detail", "replay")
    more = f" (the first 40 of {flags.height})" if flags.height > 40 else ""
    rule = (f"stall: {settings.stall_turns} turns with no capture and no score change; "
            f"truce cycling: {settings.truce_cycles}+ truces between the same two seats; "
            f"blowout: a turn-limit win at {settings.blowout_ratio:g}× the runner-up's "
            "score; end-turn outlier: outside Tukey's fences at "
            f"{settings.outlier_iqr:g}·IQR of its variant and victory type; early "
            "elimination: a seat out before " +
            (f"turn {settings.early_elimination_turn}" if settings.early_elimination_turn
             else f"{settings.early_elimination_pct}% of the match's turns") +
            "; error: the match raised. Thresholds: the experiment file's [anomalies].")
    listing = _table(shown) if shown.height else "<p>No match was flagged.</p>"
    return (_table(wide) + f"<p class='muted'>{html.escape(rule)}</p>"
            f"<h3>Flagged matches{more}</h3>" + listing +
            "<p class='muted'>Each row's command plays that match again from the run "
            "folder, with the tables as the run froze them, checks that it ends as its "
            "row says, and writes a page that shows it turn by turn on its map (a match "
            "that raised: the <code>sim match</code> command that raises again). "
            "<code>sim replay-command RUN MATCH_ID</code> prints the one-match "
            "<code>sim match</code> command, which reads the tables file as it is now "
            "and warns when that changed since the run.</p>")


def _glossary(rules: list[str]) -> str:
    """Each rule ID the page names with its one-line title (sim.rules.glossary)."""
    rows = "".join(f"<tr><th class='l'>{html.escape(r)}</th><td class='l'>"
                   f"{html.escape(RULE_TITLES[r])}</td></tr>" for r in rules)
    return (f"<table>{rows}</table><p class='muted'>The rule digest's IDs (RULES.md: V "
            "victory and elimination, T territory and score, B readings of the rule "
            "pages, D fairness readings); only those this page names.</p>")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _sequential_rows(prov: dict) -> list[tuple[str, str]]:
    """A precision-targeted sweep's target and where it stopped (issue 13)."""
    seq = prov.get("sequential")
    if not seq:
        return []
    target = ", ".join(f"{k} {seq[k]:g}" for k in ("precision", "detect")
                       if seq.get(k) is not None)
    return [("stopping rule", f"{target} at {seq.get('confidence', 0.95):.0%} "
             f"({seq.get('rule', '')}); looks every {seq.get('block')} matches from "
             f"{seq.get('first')}, at most {seq.get('max_matches')}"),
            ("stopped", f"at {seq.get('stopped_at')} matches per variant after "
             f"{_count(len(seq.get('looks', [])), 'look')}: {seq.get('reason')}"
             if seq.get("stopped_at") is not None else
             f"not yet: the sequence was interrupted after "
             f"{_count(len(seq.get('looks', [])), 'look')} ({seq.get('reason')}); the "
             "same sweep command resumes it")]


def _provenance(prov: dict[str, Any]) -> str:
    code = prov.get("code_version", {})
    rows = [("code", f"{code.get('commit', code.get('package', '?'))}"
                     f"{' (with local edits)' if code.get('dirty') else ''}"),
            ("experiment file", prov.get("experiment", {}).get("path", "?")),
            ("root seed", prov.get("root_seed")),
            ("matches per variant", prov.get("matches_per_variant")),
            *_sequential_rows(prov),
            ("seats / length", f"{prov.get('seats')} / {prov.get('length') or 'tables default'}"),
            ("personalities", ", ".join(prov.get("personalities") or []) or "tables default"),
            ("streams", prov.get("streams")),
            ("started / finished", f"{prov.get('started')} / {prov.get('finished')}"),
            ("packages", ", ".join(f"{k} {v}" for k, v in sorted(prov.get("packages",
                                                                            {}).items())))]
    body = "".join(f"<tr><th class='l'>{html.escape(k)}</th><td class='l'>"
                   f"{html.escape(str(v))}</td></tr>" for k, v in rows)
    variants = "".join(
        f"<tr><td class='l'>{html.escape(v['id'])}</td><td class='l'><code>"
        f"{html.escape(v['tables_hash'])}</code></td><td class='l'>"
        f"{html.escape(json.dumps(v['overrides']))}</td></tr>" for v in prov.get("variants", []))
    return (f"<table>{body}</table><h3>Variants</h3><table><tr><th class='l'>variant</th>"
            f"<th class='l'>tables hash</th><th class='l'>overrides</th></tr>{variants}</table>")


def write_report(run_dir: str | Path, out: str | Path, baseline: str | None = None,
                 gate: pl.DataFrame | None = None, against: str | Path | None = None,
                 history: pl.DataFrame | None = None, gate_notes: Sequence[str] = ()) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(build_report(run_dir, baseline, gate, against, history, gate_notes),
                   encoding="utf-8")
    return out

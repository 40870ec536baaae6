"""The self-contained HTML report of a run folder: summary per variant, changed-vs-
baseline flags with corrected significance, charts, provenance. Works offline:
charts are rendered to inline SVG with vl-convert, nothing is fetched."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import polars as pl

from sim.analysis import charts, metrics
from sim.analysis.load import Run, load_run

CSS = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#222}
h1{margin-bottom:.2rem} h2{border-bottom:1px solid #ccc;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}
th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:right}
th{background:#f4f4f4} td.l,th.l{text-align:left}
.changed{background:#fde0e0;font-weight:600} .muted{color:#777;font-size:.85rem}
figure{margin:1rem 0} .chart svg{max-width:100%;height:auto}
code{background:#f4f4f4;padding:0 .2rem}
"""


def _svg(chart) -> str:
    import vl_convert as vlc

    return vlc.vegalite_to_svg(chart.to_dict())


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
    head = "".join(f"<th class='l'>{html.escape(c)}</th>" if frame.schema[c] == pl.Utf8
                   else f"<th>{html.escape(c)}</th>" for c in frame.columns if c != highlight)
    rows = []
    for row in frame.iter_rows(named=True):
        cls = " class='changed'" if highlight and row.get(highlight) else ""
        cells = "".join(
            f"<td class='l'>{_fmt(row[c], formats.get(c, ''))}</td>" if frame.schema[c] == pl.Utf8
            else f"<td>{_fmt(row[c], formats.get(c, ''))}</td>"
            for c in frame.columns if c != highlight)
        rows.append(f"<tr{cls}>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def summary_table(run: Run, freq: pl.DataFrame) -> pl.DataFrame:
    """One row per variant: matches, each victory share with its interval, end turn."""
    m = run.matches
    base = m.group_by("variant").agg(pl.len().alias("matches"),
                                     pl.col("end_turn").mean().alias("mean_end_turn"))
    shares = freq.with_columns(
        (pl.col("share") * 100).round(1).cast(pl.Utf8).alias("s"),
        (pl.col("lo") * 100).round(1).cast(pl.Utf8).alias("a"),
        (pl.col("hi") * 100).round(1).cast(pl.Utf8).alias("b"),
    ).with_columns(pl.format("{}% [{}, {}]", "s", "a", "b").alias("cell"))
    wide = shares.pivot(on="victory", index="variant", values="cell")
    errors = run.errors.group_by("variant").agg(pl.len().alias("errors")) if run.errors.height \
        else pl.DataFrame({"variant": [], "errors": []}, schema={"variant": pl.Utf8,
                                                                 "errors": pl.UInt32})
    return (base.join(wide, on="variant").join(errors, on="variant", how="left")
            .with_columns(pl.col("errors").fill_null(0), pl.col("mean_end_turn").round(1))
            .sort("variant"))


def build_report(run_dir: str | Path, baseline: str | None = None) -> str:
    """The report of `run_dir` as one HTML string."""
    run = load_run(run_dir)
    baseline = baseline or run.baseline
    variants = sorted(run.matches["variant"].unique().to_list())
    if baseline not in variants:
        raise ValueError(f"baseline {baseline!r} is not a variant of {run_dir} "
                         f"({', '.join(variants)})")
    prov = run.provenance
    freq = metrics.victory_frequencies(run.matches)
    tests = pl.concat([
        metrics.paired_victory_tests(run.matches, baseline).with_columns(
            pl.lit(None, dtype=pl.Float64).alias("lo"), pl.lit(None, dtype=pl.Float64).alias("hi")),
        metrics.paired_metric_tests(run.matches, run.seats, run.events, baseline),
    ], how="diagonal_relaxed") if len(variants) > 1 else None
    if tests is not None and tests.height:
        tests = metrics.significance(tests, method="holm")
    gold = metrics.gold_share(run.seats)
    sections: list[str] = []

    def section(title: str, body: str) -> None:
        sections.append(f"<h2>{html.escape(title)}</h2>{body}")

    def figure(chart, caption: str) -> str:
        return f"<figure class='chart'>{_svg(chart)}<figcaption class='muted'>" \
               f"{html.escape(caption)}</figcaption></figure>"

    summary = summary_table(run, freq)
    section("Summary per variant", _table(summary) +
            "<p class='muted'>Victory shares with 95% Wilson intervals; baseline: "
            f"<code>{html.escape(baseline)}</code>.</p>")
    if tests is not None and tests.height:
        show = tests.select("variant", "metric", "baseline_value", "variant_value",
                            "difference", "lo", "hi", "p_value", "p_adjusted", "changed")
        section("Changed vs baseline",
                _table(show, {"p_value": "p", "p_adjusted": "p"}, highlight="changed") +
                "<p class='muted'>Paired on shared seeds (common random numbers): exact "
                "McNemar tests for victory types, paired bootstrap for continuous metrics; "
                "p-values Holm-corrected across all metrics × variants; highlighted rows "
                "changed at α = 0.05.</p>" + figure(charts.paired_differences(tests),
                                                     "Variant minus baseline"))
    section("Victory types", figure(charts.victory_mix(freq), "Share of matches by victory "
                                    "type, 95% Wilson intervals (simultaneous intervals in "
                                    "the table below).") +
            _table(freq, {"share": "pct", "lo": "pct", "hi": "pct", "lo_simultaneous": "pct",
                          "hi_simultaneous": "pct"}))
    section("End turns", figure(charts.end_turns(metrics.end_turn_distribution(run.matches)),
                                "p10–p90 whiskers, p25–p75 bars, median ticks."))
    section("Gold term", figure(charts.gold_share(gold), "Share of the gold term in the "
                                "final score (T13).") + _table(gold, {"mean": "pct",
                                                                      "lo": "pct",
                                                                      "hi": "pct"}) +
            figure(charts.gold_share_over_turns(metrics.gold_share_over_turns(run.turns)),
                   "Mean share per turn.") +
            figure(charts.score_decomposition(metrics.score_decomposition(run.seats)),
                   "Mean points per score term."))
    falls = metrics.capital_falls_per_match(run.events, run.matches)
    cascade_tables = [("Cities transferred per fall (V08)", metrics.transfers_per_fall(run.events)),
                      ("Eliminations caused by capital falls (V10)",
                       metrics.eliminations_by_fall(run.events)),
                      ("Turns from a first capital fall to elimination",
                       metrics.fall_to_elimination(run.events)),
                      ("Revolting cities taken by a third seat (V11)",
                       metrics.revolting_taken_by_third(run.events))]
    section("Capital-fall cascades",
            figure(charts.capital_falls(falls), "Capital falls per match, 95% intervals.") +
            figure(charts.cascade_depth(metrics.cascade_depth(run.events)),
                   "Capitals lost by one seat within one match.") +
            "".join(f"<h3>{html.escape(t)}</h3>{_table(f)}" for t, f in cascade_tables))
    section("Seats and personalities",
            figure(charts.win_rates(metrics.win_rate_by_seat(run.seats), "seat"),
                   "Win rate by seat position (seating rotates with the match index).") +
            figure(charts.win_rates(metrics.win_rate_by_personality(run.seats), "personality"),
                   "Win rate by AI personality."))
    section("Near misses", _table(metrics.near_misses(run.turns, run.matches, run.events)) +
            "<p class='muted'>Dominance counters that reached 6–7 and reset (V18); "
            "Observatories lost to a city's fall (V17).</p>")
    section("Provenance", _provenance(prov))
    title = f"Balance report — {prov.get('experiment', {}).get('name', Path(run_dir).name)}"
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
            f"style-src 'unsafe-inline'; img-src data:\">"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"
            f"<h1>{html.escape(title)}</h1><p class='muted'>"
            f"{html.escape(prov.get('experiment', {}).get('description', ''))}</p>"
            + "".join(sections) + "</body></html>")


def _provenance(prov: dict[str, Any]) -> str:
    code = prov.get("code_version", {})
    rows = [("code", f"{code.get('commit', code.get('package', '?'))}"
                     f"{' (with local edits)' if code.get('dirty') else ''}"),
            ("experiment file", prov.get("experiment", {}).get("path", "?")),
            ("root seed", prov.get("root_seed")),
            ("matches per variant", prov.get("matches_per_variant")),
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


def write_report(run_dir: str | Path, out: str | Path, baseline: str | None = None) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(build_report(run_dir, baseline), encoding="utf-8")
    return out

"""The nightly report and the notebooks: built from a small sweep, self-contained
(works offline), every chart drawn in a real headless browser, notebooks executed."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import sys
from html import escape as html_escape
from pathlib import Path

import pytest

from sim.rules.tables import REPO_ROOT
from tests.conftest import FIXTURE_TABLES

EXPERIMENT = f"""
name = "report-test"
description = "small run for the report tests"
tables = "{FIXTURE_TABLES}"
root_seed = 5
matches = 16
seats = 4
length = "short"
personalities = ["balanced", "conqueror", "scholar", "merchant"]
chunk_size = 8
baseline = "baseline"

[[variants]]
name = "baseline"

[[variants]]
name = "dominance-50"
set = {{ "dominance.share_pct" = 50 }}
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    from sim.runner.experiments import load_experiment
    from sim.runner.sweep import run_sweep

    tmp = tmp_path_factory.mktemp("report")
    path = tmp / "exp.toml"
    path.write_text(EXPERIMENT)
    out = tmp / "run"
    run_sweep(load_experiment(path), out, jobs=1, progress=False)
    return out


@pytest.fixture(scope="module")
def report_file(run_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("html") / "report.html"
    proc = subprocess.run([sys.executable, "-m", "sim.cli", "report", str(run_dir), "--out",
                           str(out)], capture_output=True, text=True, cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "swept before" not in proc.stderr  # a fresh run has the aggregate tables
    return out


def test_report_is_self_contained(report_file):
    text = report_file.read_text()
    assert "<script" not in text and "<link" not in text
    urls = set(re.findall(r"(?:src|href)\s*=\s*[\"'](\w+:)", text))
    assert urls <= {"data:"}, urls
    assert "default-src 'none'" in text


def test_report_has_every_section_and_the_provenance(report_file, run_dir):
    import json

    text = report_file.read_text()
    for title in ("Summary per variant", "Changed vs baseline", "Victory types",
                  "How the game plays", "End turns",
                  "Gold term", "Capital-fall cascades", "Truces", "Seats and personalities",
                  "Content usage", "Near misses", "Provenance"):
        assert f"<h2>{title}</h2>" in text, title
    prov = json.loads((run_dir / "provenance.json").read_text())
    for variant in prov["variants"]:
        assert variant["tables_hash"] in text
    assert str(prov["root_seed"]) in text
    assert text.count("<svg") >= 10


def test_glossary_names_exactly_the_rules_the_page_mentions(report_file):
    """The last section lists each rule ID the rest of the page names, with its title,
    and no other."""
    from sim.rules.glossary import RULE_TITLES, mentioned_rules

    text = report_file.read_text()
    page, glossary = text.split("<h2>Rules named in this report</h2>", 1)
    listed = re.findall(r"<tr><th class='l'>(\w+)</th><td class='l'>", glossary)
    assert listed == mentioned_rules(page)
    assert {"V08", "V18", "T13"} <= set(listed)
    assert all(html_escape(RULE_TITLES[r]) in glossary for r in listed)
    assert mentioned_rules("V18 and T13, not V180, aV01, B10 or a06d5418d1") == ["V18", "T13"]


def test_changed_vs_baseline_has_a_panel_per_unit():
    """Shares in percentage points, end turn in turns, capital falls per match: three
    panels, each with its own axis."""
    import polars as pl

    from sim.analysis import charts

    tests = pl.DataFrame({"variant": ["v"] * 4,
                          "metric": ["victory=science", "winner_gold_share", "end_turn",
                                     "capital_falls"],
                          "difference": [0.05, -0.01, -2.0, 0.1], "lo": [0.01, -0.02, -3.0, None],
                          "hi": [0.09, 0.0, -1.0, None], "changed": [True, False, True, False]})
    panels = charts.effect_panels(tests)
    assert panels.select("unit", "difference", "lo", "hi").rows() == [
        ("Victory and gold shares (percentage points)", 5.0, 1.0, 9.0),
        ("Victory and gold shares (percentage points)", -1.0, -2.0, 0.0),
        ("End turn (turns)", -2.0, -3.0, -1.0),
        ("Capital falls per match", 0.1, 0.1, 0.1)]
    spec = charts.paired_differences(tests).to_dict()
    assert [p["title"] for p in spec["vconcat"]] == [
        "Victory and gold shares (percentage points)", "End turn (turns)",
        "Capital falls per match"]


def test_content_usage_section_highlights_exactly_the_dead_content(report_file, run_dir):
    """Every unit, building and tech of the run's tables has a row; the highlighted
    rows are the items some variant used in under 5 % of its matches."""
    import json

    import polars as pl

    from sim.analysis import metrics
    from sim.analysis.load import load_run

    text = report_file.read_text()
    body = text.split("<h2>Content usage</h2>", 1)[1].split("<h2>", 1)[0]
    rows = re.findall(r"<tr( class='changed')?><td class='l'>(\w+)</td><td class='l'>"
                      r"([^<]+)</td>", body)
    shown = {item for _hl, _cat, item in rows}
    highlighted = {item for hl, _cat, item in rows if hl}
    prov = json.loads((run_dir / "provenance.json").read_text())
    for key in ("units", "buildings", "techs"):
        assert set(prov["variants"][0]["items"][key]) <= shown, key
    run = load_run(run_dir)
    usage = metrics.content_usage(run.matches, run.events, run.provenance)
    assert highlighted == set(usage.filter(pl.col("dead"))["item"])
    assert highlighted, "the small run leaves some content unused"


def test_the_lazy_report_inputs_give_the_same_tables_as_the_whole_tables(run_dir):
    """The report reads events as event_rows(scan, metrics.EVENT_KINDS) and turns as a
    scan: every metric it feeds them to gives the same frame as from load_run's
    whole tables (so EVENT_KINDS names every kind they read)."""
    from polars.testing import assert_frame_equal

    from sim.analysis import anomalies, importance, metrics
    from sim.analysis.load import event_rows, load_run, scan_run

    whole, lean = load_run(run_dir), scan_run(run_dir)
    events = event_rows(lean.events, metrics.EVENT_KINDS)
    assert events.height < whole.events.height / 4
    assert set(events["variant"]) == set(whole.events["variant"])
    for f in (metrics.transfers_per_fall, metrics.eliminations_by_fall,
              metrics.fall_to_elimination, metrics.revolting_taken_by_third):
        assert_frame_equal(f(events), f(whole.events), check_exact=False)
    assert_frame_equal(metrics.capital_falls_per_match(events, whole.matches),
                       metrics.capital_falls_per_match(whole.events, whole.matches))
    assert_frame_equal(metrics.cascade_depth(events, whole.seats),
                       metrics.cascade_depth(whole.events, whole.seats))
    assert_frame_equal(metrics.metric_observations(whole.matches, whole.seats, events),
                       metrics.metric_observations(whole.matches, whole.seats, whole.events))
    assert_frame_equal(metrics.near_misses(lean.turns, whole.matches, events),
                       metrics.near_misses(whole.turns, whole.matches, whole.events))
    assert_frame_equal(metrics.gold_share_over_turns(lean.turns, whole.seats),
                       metrics.gold_share_over_turns(whole.turns, whole.seats))
    assert_frame_equal(metrics.content_usage(whole.matches, lean.events, whole.provenance),
                       metrics.content_usage(whole.matches, whole.events, whole.provenance))
    assert_frame_equal(
        importance.baseline_use(whole.matches, lean.events, whole.seats, "baseline"),
        importance.baseline_use(whole.matches, whole.events, whole.seats, "baseline"))
    flags = anomalies.anomalies(whole.matches, whole.seats, events, lean.turns, whole.errors)
    assert_frame_equal(flags, anomalies.anomalies(whole.matches, whole.seats, whole.events,
                                                  whole.turns, whole.errors))
    # a quiet threshold low enough that the small run has stalls to compare
    stalled = anomalies.stalls(whole.turns, whole.events, 1)
    assert stalled.height
    assert_frame_equal(anomalies.stalls(lean.turns, events, 1),
                       stalled.sort("variant", "match_index"))

    # the per-match aggregates each chunk wrote give the same tables as the events and
    # turns they summarise
    assert lean.usage is not None and lean.quiet is not None
    assert_frame_equal(metrics.content_usage(whole.matches, lean.events, whole.provenance,
                                             usage=lean.usage),
                       metrics.content_usage(whole.matches, whole.events, whole.provenance))
    for quiet_turns in (1, 3):
        assert_frame_equal(anomalies.stalls(lean.turns, events, quiet_turns, lean.quiet),
                           anomalies.stalls(whole.turns, whole.events, quiet_turns)
                           .sort("variant", "match_index"))
    assert_frame_equal(anomalies.anomalies(whole.matches, whole.seats, events, lean.turns,
                                           whole.errors, quiet=lean.quiet), flags)
    assert lean.dominance_runs is not None and lean.gold_turns is not None
    # (this short run's counters never drop back: tests/test_summaries.py has runs)
    assert_frame_equal(metrics.near_misses(lean.turns, whole.matches, events,
                                           runs=lean.dominance_runs),
                       metrics.near_misses(whole.turns, whole.matches, whole.events))
    assert_frame_equal(metrics.gold_share_over_turns(lean.turns, whole.seats,
                                                     sums=lean.gold_turns),
                       metrics.gold_share_over_turns(whole.turns, whole.seats))


def test_the_report_s_held_events_and_sliced_counts_give_the_whole_tables(run_dir):
    """What the report holds of the events (metrics.held_event_kinds, narrowed to
    HELD_EVENT_COLUMNS) and what it counts slice by slice of the matches
    (load.sum_over_slices of revolting_counts, here 3 matches a slice so that every
    variant has several) give the same tables as the whole events table: the report's
    page does not depend on how much of the run it holds at once (issue 46)."""
    import polars as pl
    from polars.testing import assert_frame_equal

    from sim.analysis import anomalies, metrics
    from sim.analysis.load import (
        RunScan,
        event_rows,
        load_run,
        match_ranges,
        run_keys,
        scan_run,
        sum_over_slices,
    )

    whole, lean = load_run(run_dir), scan_run(run_dir)
    ranges = match_ranges(run_keys(lean), 3)
    assert len(ranges) > 2 * len(lean.variants)
    # the ranges of a variant follow each other and leave out no match of it
    for variant in lean.variants:
        mine = [(lo, hi) for v, lo, hi in ranges if v == variant]
        assert all(a[1] < b[0] for a, b in itertools.pairwise(mine))
        assert mine[0][0] < 0 and mine[-1][1] > whole.matches["match_index"].max()
    sliced = sum_over_slices(lean.events, metrics.revolting_counts, run_keys(lean), size=3)
    assert_frame_equal(sliced.sort("variant"),
                       metrics.revolting_counts(whole.events).sort("variant"))
    # the small run has no transfer: a hand-made one per match whose city a third seat
    # (even matches) or its former owner (odd) takes while it revolts, over 3-match slices
    rows = [(v, i, 5, e, kind, seat, by, detail) for v in ("a", "b") for i in range(10)
            for e, kind, seat, by, detail in (
                (1, "transfer", 0, 1, None), (2, "revolt_start", 1, None, "transfer"),
                (3, "capture", 1, 2 if i % 2 == 0 else 0, None))]
    made = pl.DataFrame(rows, orient="row", schema={
        "variant": pl.Utf8, "match_index": pl.Int64, "city": pl.Int64, "event": pl.Int64,
        "kind": pl.Utf8, "seat": pl.Int64, "by": pl.Int64, "detail": pl.Utf8})
    spine = RunScan(matches=made.select("variant", "match_index").unique(),
                    seats=whole.seats, events=made.lazy(), turns=lean.turns,
                    errors=whole.errors.head(0), truces=whole.truces.lazy(),
                    provenance={"variants": [{"id": "a"}, {"id": "b"}]})
    counted = sum_over_slices(made.lazy(), metrics.revolting_counts, run_keys(spine), size=3)
    assert counted.sort("variant").rows() == [("a", 10, 5, 5), ("b", 10, 5, 5)]
    assert_frame_equal(counted.sort("variant"),
                       metrics.revolting_counts(made).sort("variant"))
    held = event_rows(lean.events, metrics.held_event_kinds(lean.quiet is not None),
                      metrics.HELD_EVENT_COLUMNS)
    assert not set(held["kind"].drop_nulls()) & set(metrics.SLICED_EVENT_KINDS)
    assert_frame_equal(metrics.revolting_taken_by_third(held, sliced),
                       metrics.revolting_taken_by_third(whole.events))
    for f in (metrics.transfers_per_fall, metrics.eliminations_by_fall,
              metrics.fall_to_elimination):
        assert_frame_equal(f(held), f(whole.events), check_exact=False)
    assert_frame_equal(metrics.cascade_depth(held, whole.seats),
                       metrics.cascade_depth(whole.events, whole.seats))
    assert_frame_equal(metrics.capital_falls_per_match(held, whole.matches),
                       metrics.capital_falls_per_match(whole.events, whole.matches))
    assert_frame_equal(metrics.metric_observations(whole.matches, whole.seats, held),
                       metrics.metric_observations(whole.matches, whole.seats, whole.events))
    assert_frame_equal(anomalies.anomalies(whole.matches, whole.seats, held, lean.turns,
                                           whole.errors, quiet=lean.quiet),
                       anomalies.anomalies(whole.matches, whole.seats, whole.events,
                                           whole.turns, whole.errors))
    # without the quiet table the stalls read the captures, so the report holds them
    assert "capture" in metrics.held_event_kinds(False)
    # the report's cascades, read 3 matches at a time: the whole table's, and the rows
    # it keeps for the later metrics give them the same tables
    from sim.report.html import _cascades

    falls, kept, depth, tables = _cascades(lean, size=3)
    assert_frame_equal(depth, metrics.cascade_depth(whole.events, whole.seats))
    for (_title, table), f in zip(tables, (metrics.transfers_per_fall,
                                           metrics.eliminations_by_fall,
                                           metrics.fall_to_elimination,
                                           metrics.revolting_taken_by_third), strict=True):
        assert_frame_equal(table, f(whole.events), check_exact=False)
    assert set(kept["kind"]) <= set(metrics.KEPT_EVENT_KINDS) - {"capital_fall"}
    # the capital falls are kept apart, with only the columns their readers read
    assert set(falls["kind"]) <= {"capital_fall"}
    assert falls.columns == ["variant", "match_index", "kind"]
    assert_frame_equal(metrics.capital_falls_per_match(falls, whole.matches),
                       metrics.capital_falls_per_match(whole.events, whole.matches))
    assert_frame_equal(metrics.metric_observations(whole.matches, whole.seats, falls),
                       metrics.metric_observations(whole.matches, whole.seats, whole.events))
    assert_frame_equal(metrics.near_misses(lean.turns, whole.matches, kept),
                       metrics.near_misses(whole.turns, whole.matches, whole.events))
    assert_frame_equal(anomalies.anomalies(whole.matches, whole.seats, kept, lean.turns,
                                           whole.errors, quiet=lean.quiet),
                       anomalies.anomalies(whole.matches, whole.seats, whole.events,
                                           whole.turns, whole.errors))
    # content usage counted 3 matches at a time from the usage table: the whole table's
    assert_frame_equal(metrics.usage_counts(whole.matches, lean.events, whole.provenance,
                                            usage=lean.usage, size=3),
                       metrics.usage_counts(whole.matches, whole.events, whole.provenance))


def test_a_run_without_the_aggregate_tables_reports_the_same(run_dir, report_file, tmp_path):
    """A run folder written before the usage and quiet tables existed (its markers list
    only the outcome tables): still complete, and its report is the same page."""
    import json

    from sim.analysis.load import scan_run
    from sim.outputs.schemas import SUMMARIES
    from sim.outputs.store import require_complete

    old = tmp_path / "old"
    shutil.copytree(run_dir, old)
    for table in SUMMARIES:
        shutil.rmtree(old / table)
    for marker in (old / "_done").glob("*.json"):
        data = json.loads(marker.read_text())
        data["parts"] = {t: p for t, p in data["parts"].items() if t not in SUMMARIES}
        marker.write_text(json.dumps(data, sort_keys=True))
    require_complete(old)
    assert all(getattr(scan_run(old), t) is None for t in SUMMARIES)
    out = tmp_path / "old.html"
    proc = subprocess.run([sys.executable, "-m", "sim.cli", "report", str(old), "--out",
                           str(out)], capture_output=True, text=True, cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "has no usage, quiet, dominance_runs or gold_turns tables (swept before they " \
        "existed)" in proc.stderr

    def body(path: Path) -> str:  # the charts' last float digits may differ between runs
        return re.sub(r"<svg.*?</svg>", "", path.read_text(), flags=re.S).replace(
            str(old), str(run_dir))

    assert body(out) == body(report_file)


def test_report_says_in_red_when_an_event_log_overflowed(run_dir, tmp_path):
    """A match whose event log was full (matches.events_dropped > 0) is named in a red
    line: counts made from events undercount it."""
    import polars as pl

    from sim.report.html import build_report

    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    part = next(p for p in sorted((copy / "matches" / "variant=baseline").glob("*.parquet"))
                if 2 in pl.read_parquet(p)["match_index"].to_list())
    frame = pl.read_parquet(part)
    frame.with_columns(pl.when(pl.col("match_index") == 2).then(9).otherwise(0)
                       .cast(pl.Int64).alias("events_dropped")).write_parquet(part)
    text = build_report(copy)
    line = re.search(r"<p class='failed'>(.*?)</p>", text)
    assert line and "1 of 32 matches logged more events" in line.group(1)
    assert "9 rows not stored" in line.group(1)


def test_report_refuses_an_unknown_baseline_and_a_non_run_folder(run_dir, tmp_path):
    for args, needle in (([str(run_dir), "--baseline", "nope"], "nope"),
                         ([str(tmp_path)], "not a sweep run folder")):
        proc = subprocess.run([sys.executable, "-m", "sim.cli", "report", *args,
                               "--out", str(tmp_path / "x.html")],
                              capture_output=True, text=True, cwd=REPO_ROOT)
        assert proc.returncode == 2 and needle in proc.stderr
        assert "Traceback" not in proc.stderr


def test_report_says_in_red_when_matches_failed(run_dir, report_file, tmp_path):
    """A copy of the run gains error rows: one failed match of dominance-50 (index 16,
    beyond the 16 that finished) and a variant "ghost" whose two matches both failed.
    The report names them in a red line above everything, counts them in the summary
    (error rate, a row for ghost with no finished match) and still builds; the run
    without errors has no such line."""
    import polars as pl

    from sim.outputs.schemas import SCHEMAS
    from sim.report.html import build_report

    assert "class='failed'" not in report_file.read_text()
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    for variant, indices in (("dominance-50", [16]), ("ghost", [0, 1])):
        part = copy / "errors" / f"variant={variant}" / "part-99999.parquet"
        part.parent.mkdir(parents=True, exist_ok=True)
        pl.DataFrame({"match_id": [f"{variant}:{i}" for i in indices], "match_index": indices,
                      "seed": [5] * len(indices),
                      "message": [f"RuntimeError: boom {i}" for i in indices],
                      "replay": ["sim match ..."] * len(indices)},
                     schema=SCHEMAS["errors"]).write_parquet(part)
    text = build_report(copy)
    line = re.search(r"<p class='failed'>(.*?)</p>", text)
    assert line, "no red line"
    assert "3 of 35 matches failed" in line.group(1)
    assert "dominance-50 1 of 17" in line.group(1) and "ghost 2 of 2" in line.group(1)
    assert text.index("class='failed'") < text.index("<h2>Summary per variant</h2>")
    summary = text[text.index("<h2>Summary per variant</h2>"):text.index("<h2>Changed")]
    ghost = re.search(r"<tr><td class='l'>ghost</td>(.*?)</tr>", summary)
    assert ghost and "<td>2</td><td>0</td><td>2</td><td class='l'>100.0%</td>" in ghost.group(1)
    assert not re.search(r">\s*nan", summary, re.IGNORECASE)  # no NaN cell


@pytest.mark.parametrize("notebook", sorted((REPO_ROOT / "notebooks").glob("*.py")),
                         ids=lambda p: p.stem)
def test_notebooks_execute_on_a_small_run(notebook, run_dir, monkeypatch):
    jupytext = pytest.importorskip("jupytext")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("SIM_RUN_DIR", str(run_dir))
    nb = jupytext.read(notebook)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(REPO_ROOT)}}).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs",
                                                                                   [])]
    assert outputs and not any(o.get("output_type") == "error" for o in outputs)
    source = notebook.read_text()
    assert "def " not in source, "notebooks use sim.analysis, they define no metric"


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.mark.parametrize("width", [1400, 800])
def test_browser_draws_every_chart_offline(report_file, tmp_path, width):
    """Headless Chromium opens the report at a desktop and a narrow width: every chart
    has drawn marks, the page never scrolls sideways (a wide table scrolls inside its
    div.wide), no request leaves the machine, and a screenshot is saved under the
    test's folder."""
    playwright = pytest.importorskip("playwright.sync_api")
    chromium = _chromium()
    if chromium is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: .ci/run installs Debian's chromium package")
        pytest.skip("no chromium on this machine (apt-get install chromium)")
    requests: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        page = browser.new_page(viewport={"width": width, "height": 900})

        def route(r):
            requests.append(r.request.url)
            if r.request.url.startswith("file://"):
                r.continue_()
            else:
                r.abort()

        page.route("**/*", route)
        page.goto(report_file.as_uri())
        figures = page.locator("figure.chart")
        n = figures.count()
        assert n >= 10
        for i in range(n):
            marks = figures.nth(i).locator("svg g[class*='mark-'] > path, "
                                           "svg g[class*='mark-'] > line, "
                                           "svg g[class*='mark-'] path, "
                                           "svg g[class*='mark-'] line")
            assert marks.count() > 0, f"chart {i} drew no marks"
            box = figures.nth(i).locator("svg").first.bounding_box()
            assert box and box["width"] > 100 and box["height"] > 50
            assert box["x"] + box["width"] <= width + 1, f"chart {i} sticks out"
        overflow = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert overflow[0] <= overflow[1], f"the page scrolls sideways: {overflow}"
        # every table wider than the page sits in a div.wide that scrolls by itself
        loose = page.evaluate("""[...document.querySelectorAll('table')]
            .filter(t => t.getBoundingClientRect().right > window.innerWidth + 1
                         && !t.closest('div.wide')).length""")
        assert loose == 0, f"{loose} wide tables outside div.wide"
        shot = tmp_path / f"report-{width}.png"
        page.screenshot(path=str(shot), full_page=True)
        browser.close()
    assert shot.stat().st_size > 10_000
    assert all(url.startswith("file://") for url in requests), requests


def test_every_chart_of_a_report_is_valid_vega_lite(run_dir, monkeypatch):
    """The report builds its charts with altair's validation off (sim.report.html):
    each one, as submitted, passes the Vega-Lite schema, and a chart that does not
    is caught here."""
    import polars as pl

    from sim.analysis import charts
    from sim.analysis._altair import alt
    from sim.report import html
    from sim.report.svg_renderer import SvgRenderer

    checked: list[str] = []

    def validate(self, chart, name: str) -> int:
        chart.to_dict(validate=True)
        checked.append(name)
        return len(checked) - 1

    monkeypatch.setattr(SvgRenderer, "submit", validate)
    monkeypatch.setattr(SvgRenderer, "results", lambda self: ["<svg/>"] * len(checked))
    html.build_report(run_dir)
    # this run has no dose-response curve and no history; 3 charts of how the game plays
    assert len(checked) == 13
    freq = pl.DataFrame({"variant": ["a"], "victory": ["science"], "wins": [1],
                         "matches": [2], "share": [0.5], "lo": [0.1], "hi": [0.9]})
    broken = charts.victory_mix(freq)
    broken["width"] = "wide"  # not a number: Vega-Lite refuses it
    with pytest.raises(alt.utils.schemapi.SchemaValidationError):
        validate(None, broken, "broken")


def test_the_history_index_gains_a_night_only_when_the_report_is_written(run_dir, tmp_path):
    """A report that fails (here: a baseline the run does not have) adds nothing to the
    index; a good one adds the run once, and the page charts this experiment's nights
    and says how many runs of other experiments it left out."""
    import polars as pl

    from sim.analysis.history import read_history, write_history

    index = tmp_path / "history.parquet"

    def report(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "sim.cli", "report", str(run_dir),
                               "--out", str(tmp_path / "r.html"), "--history", str(index),
                               *args], capture_output=True, text=True, cwd=REPO_ROOT)

    failed = report("--baseline", "nosuch")
    assert failed.returncode == 2 and "Traceback" not in failed.stderr
    assert not index.exists()
    other = read_history(index).vstack(pl.DataFrame(
        {"run_id": "elsewhere", "finished": "2026-01-01T00:00:00+00:00", "commit": "",
         "experiment": "another", "variant": "baseline", "tables_hash": "",
         "victory": "science", "wins": 1, "matches": 2, "share": 0.5, "lo": 0.1, "hi": 0.9},
        schema=read_history(index).schema))
    write_history(index, other)
    done = report()
    assert done.returncode == 0, done.stderr
    assert read_history(index).get_column("run_id").n_unique() == 2
    page = (tmp_path / "r.html").read_text()
    assert "1 runs of other experiments in the index are left out" in page


def test_interval_whiskers_are_black_over_bars_coloured_by_variant():
    """A whisker that took its bar's colour was invisible inside the bar: only the
    part above the bar showed, as if every interval were one-sided (issue 14)."""
    import polars as pl

    from sim.analysis import charts
    freq = pl.DataFrame({"variant": ["a", "b"], "victory": ["science"] * 2, "wins": [1, 2],
                         "matches": [4, 4], "share": [0.25, 0.5], "lo": [0.05, 0.15],
                         "hi": [0.7, 0.85]})
    seats = pl.DataFrame({"variant": ["a", "b"], "seat": [0, 0], "rate": [0.5, 0.4],
                          "lo": [0.3, 0.2], "hi": [0.7, 0.6]})
    for chart in (charts.victory_mix(freq), charts.win_rates(seats, "seat")):
        layers = {layer["mark"]["type"]: layer for layer in chart.to_dict()["layer"]}
        assert layers["bar"]["encoding"]["color"]["field"] == "variant"
        whisker = layers["rule"]
        assert whisker["mark"]["color"] == "black"
        assert "color" not in whisker.get("encoding", {})


def test_charts_import_without_building_the_iri_grammar():
    """jsonschema's IRI checker (rfc3987_syntax, 35 Lark parsers, 1.6 s) loads on its
    first use, not when the report imports altair; and it still checks IRIs then."""
    pytest.importorskip("rfc3987_syntax")
    code = ("import sys, sim.analysis.charts\n"
            "print('rfc3987_syntax.syntax_helpers' in sys.modules)\n"
            "from jsonschema import Draft7Validator\n"
            "v = Draft7Validator({'format': 'iri'}, "
            "format_checker=Draft7Validator.FORMAT_CHECKER)\n"
            "print(v.is_valid('http://example.org/a'), v.is_valid('http://a b'))\n"
            "print('rfc3987_syntax.syntax_helpers' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=REPO_ROOT).stdout.split("\n")
    assert out[:3] == ["False", "True False", "True"]

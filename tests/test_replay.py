"""`sim replay`: a match recorded turn by turn (sim.engine.replay), a sweep's match found
in its run folder and checked against its row (sim.runner.replay), and the one-file
offline HTML viewer (sim.report.replay), opened in headless Chromium."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
from pathlib import Path

import polars as pl
import pytest

from sim.engine.match import outcome, play_match
from sim.engine.replay import CITY_FIELDS, UNIT_FIELDS, record_match
from sim.report.replay import replay_html, write_replay
from sim.rules.codes import EVENT_NAMES
from tests.test_runs_support import experiment_text, one_line_error, sim, write

SEED, MATCH, SEATS, LENGTH = 5, 0, 3, "short"


@pytest.fixture(scope="module")
def recording(tables) -> dict:
    return record_match(tables, SEED, MATCH, SEATS, LENGTH)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A sweep of two matches: match 0 of the baseline and of dominance-50."""
    from sim.runner.experiments import load_experiment
    from sim.runner.sweep import run_sweep

    tmp = tmp_path_factory.mktemp("replay-run")
    path = write(tmp / "exp.toml", experiment_text("replay-test", matches=1, chunk_size=1))
    out = tmp / "run"
    run_sweep(load_experiment(path), out, jobs=1, progress=False)
    return out


def embedded(text: str) -> dict:
    """The recording a viewer page carries."""
    block = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>',
                      text, re.S)
    assert block
    return json.loads(block.group(1))


def test_recording_is_deterministic(tables, recording):
    again = record_match(tables, SEED, MATCH, SEATS, LENGTH)
    assert json.dumps(again, sort_keys=True) == json.dumps(recording, sort_keys=True)


def test_last_frame_agrees_with_play_match(tables, recording):
    """The recording steps the match play_match plays: its last frame is play_match's
    final state (winner, victory, end turn, every seat's score, standing, cities and
    population), and its events are the outcome's."""
    state, board, log = play_match(tables, SEED, MATCH, SEATS, LENGTH)
    result = outcome(state, tables, board, log, SEED, MATCH)
    meta, frames = recording["meta"], recording["frames"]
    assert (meta["winner"], meta["victory"], meta["end_turn"]) == (
        result["winner"], result["victory"], result["end_turn"])
    assert frames["turn"] == list(range(result["end_turn"] + 1))
    assert frames["score"][-1] == [s["score"] for s in result["seats"]]
    assert frames["alive"][-1] == [int(s["alive"]) for s in result["seats"]]
    cities = frames["cities"][-1]
    rows = [cities[i:i + len(CITY_FIELDS)] for i in range(0, len(cities), len(CITY_FIELDS))]
    owner, pop = CITY_FIELDS.index("owner"), CITY_FIELDS.index("pop")
    for seat in result["seats"]:
        mine = [r for r in rows if r[owner] == seat["seat"]]
        assert (len(mine), sum(r[pop] for r in mine)) == (seat["cities"], seat["population"])
    assert [(e[0], EVENT_NAMES[e[1]]) for e in recording["events"]] == [
        (e["turn"], e["kind"]) for e in result["events"]]
    units = frames["units"][-1]
    assert len(units) % len(UNIT_FIELDS) == 0 and units
    assert len(set(frames["owner"])) > 1 and all(len(o) == board.n_tiles
                                                 for o in frames["owner"])


def test_html_is_one_offline_file_with_every_turn(recording):
    text = replay_html(recording)
    data = embedded(text)
    assert data["frames"]["turn"] == list(range(recording["meta"]["end_turn"] + 1))
    assert data["frames"] == recording["frames"] and data["events"] == recording["events"]
    assert "default-src 'none'" in text and "<link" not in text
    assert not re.search(r"(?:src|href)\s*=\s*[\"']?\w+:", text)
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in text
    meta = recording["meta"]
    title = re.search(r"<title>(.*?)</title>", text).group(1)
    for part in (f"seed {SEED}", f"{SEATS} seats", f"seat {meta['winner']}", meta["victory"],
                 f"turn {meta['end_turn']}"):
        assert part in title, part
    for name in recording["names"]["units"]:
        assert f"</svg> {name}</li>" in text, name  # the legend's unit glyphs


def test_replay_of_a_sweep_match_is_checked_against_its_row(run_dir, tmp_path):
    """A variant's match replays with the run's own tables (from provenance), seed,
    seats, length and personalities, and ends as its matches row says."""
    out = tmp_path / "m.html"
    proc = sim("replay", run_dir, "dominance-50:0", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "replay written to" in proc.stdout
    row = pl.read_parquet(run_dir / "matches" / "**" / "*.parquet").filter(
        pl.col("match_id") == "dominance-50:0").row(0, named=True)
    meta = embedded(out.read_text())["meta"]
    assert (meta["winner"], meta["victory"], meta["end_turn"]) == (
        row["winner"], row["victory"], row["end_turn"])
    assert (meta["match_id"], meta["tables_hash"]) == ("dominance-50:0", row["tables_hash"])
    assert ",".join(meta["personalities"]) == row["personalities"]


def test_a_replay_that_ends_otherwise_than_the_run_fails_clearly(run_dir):
    from sim.runner.replay import ReplayError, record_sweep_match, sweep_match

    found = sweep_match(run_dir, "baseline:0")
    moved = dataclasses.replace(found, expected={**found.expected,
                                                 "end_turn": found.expected["end_turn"] + 1})
    with pytest.raises(ReplayError, match="differs from the run") as info:
        record_sweep_match(moved)
    assert "\n" not in str(info.value)
    assert record_sweep_match(found)["meta"]["match_id"] == "baseline:0"


def test_bad_match_id_and_missing_run_are_one_line_errors(run_dir, tmp_path):
    one_line_error(sim("replay", run_dir, "baseline:7", "--out", tmp_path / "x.html"),
                   "no match 'baseline:7'")
    one_line_error(sim("replay", tmp_path / "nothing", "baseline:0"), "no such run folder")
    one_line_error(sim("replay", run_dir, "baseline:0", "--seed", "3"), "--seed")
    one_line_error(sim("replay"), "--seed N")
    assert not (tmp_path / "x.html").exists()


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def test_browser_plays_the_replay_offline(recording, tmp_path):
    """Headless Chromium opens the viewer with every non-file request aborted: the board
    differs between turn 1 and the last turn, the right-arrow key and the slider reach
    the last turn, clicking an event jumps to its turn, and no request left the page."""
    playwright = pytest.importorskip("playwright.sync_api")
    chromium = _chromium()
    if chromium is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: .ci/run installs Debian's chromium package")
        pytest.skip("no chromium on this machine (apt-get install chromium)")
    page_file = write_replay(recording, tmp_path / "replay.html")
    last = recording["meta"]["end_turn"]
    requests: list[str] = []
    errors: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        page = browser.new_page(viewport={"width": 1300, "height": 950})
        page.on("pageerror", lambda exc: errors.append(str(exc)))

        def route(r):
            requests.append(r.request.url)
            if r.request.url.startswith("file://"):
                r.continue_()
            else:
                r.abort()

        page.route("**/*", route)
        page.goto(page_file.as_uri())
        slider = page.locator("#turn")
        board = page.locator("#board")
        assert slider.get_attribute("max") == str(last)
        assert slider.input_value() == "0"
        # the score chart says what its axes are (text in the stretched SVG would stretch)
        axes = page.locator("#chart-axes").inner_text()
        assert axes.startswith("Up: score, 0 to ") and f"to turn {last}." in axes
        assert page.locator("#chart line[stroke='#ddd']").count() == 3
        page.keyboard.press("ArrowRight")
        assert slider.input_value() == "1"
        turn1 = board.inner_html()
        assert board.locator("g.city").count() >= SEATS
        page.screenshot(path=str(tmp_path / "turn1.png"), full_page=True)
        for _ in range(last - 1):
            page.keyboard.press("ArrowRight")
        assert slider.input_value() == str(last)
        assert page.locator("#turnlabel").inner_text().startswith(f"turn {last} ")
        assert board.inner_html() != turn1
        page.keyboard.press("ArrowRight")  # past the end stays there
        assert slider.input_value() == str(last)
        page.screenshot(path=str(tmp_path / "last.png"), full_page=True)

        page.keyboard.press("Home")
        assert slider.input_value() == "0"
        box = slider.bounding_box()
        page.mouse.click(box["x"] + box["width"] - 1, box["y"] + box["height"] / 2)
        assert slider.input_value() == str(last)
        assert board.get_attribute("data-turn") == str(last)

        entries = page.locator("#events li:not([hidden])")
        turns = [int(t) for t in entries.evaluate_all("els => els.map(e => e.dataset.turn)")]
        target = next(i for i, t in enumerate(turns) if 0 < t < last)
        entries.nth(target).scroll_into_view_if_needed()
        entries.nth(target).click()
        assert slider.input_value() == str(turns[target])
        assert board.get_attribute("data-turn") == str(turns[target])
        page.screenshot(path=str(tmp_path / "event.png"), full_page=True)

        page.select_option("#speed", "50")
        page.click("#play")
        # a function, not an expression string: the page's CSP forbids eval
        page.wait_for_function("last => document.getElementById('turn').value === last",
                               arg=str(last), timeout=10_000)
        browser.close()
    assert not errors, errors
    assert all(url.startswith("file://") for url in requests), requests
    for name in ("turn1", "last", "event"):
        assert (tmp_path / f"{name}.png").stat().st_size > 10_000

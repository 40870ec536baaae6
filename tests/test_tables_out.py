"""An experiment's `tables_out` (issue 46, item 5): the sweep writes only the chosen
tables, verifies and resumes on them, and the report says what each missing table
costs instead of failing."""

from __future__ import annotations

import polars as pl

from sim.analysis.load import read_table
from sim.outputs.store import verify_run
from sim.runner.experiments import load_experiment
from sim.runner.sweep import run_sweep
from tests.test_runs_support import experiment_text, one_line_error, sim, write


def test_a_sweep_writes_only_the_chosen_tables_and_the_report_says_what_is_lost(tmp_path):
    chosen = '["matches", "errors", "seats", "usage", "quiet"]'
    exp = write(tmp_path / "exp.toml",
                experiment_text(matches=4, chunk_size=2).replace(
                    'chunk_size = 2', f'chunk_size = 2\ntables_out = {chosen}'))
    run = tmp_path / "run"
    full = tmp_path / "full"
    run_sweep(load_experiment(exp), run, jobs=1, progress=False)
    run_sweep(load_experiment(write(tmp_path / "all.toml", experiment_text(
        matches=4, chunk_size=2))), full, jobs=1, progress=False)
    assert sorted(p.name for p in run.iterdir() if p.is_dir() and p.name != ".tmp") == [
        "_done", "errors", "matches", "quiet", "seats", "usage"]
    check = verify_run(run)
    assert check.complete and check.matches == 8
    for table in ("matches", "seats"):
        assert read_table(run, table).equals(read_table(full, table)), table
    assert read_table(run, "events").height == 0  # an empty typed frame, no failure
    usage = pl.read_parquet(run / "usage" / "**" / "*.parquet").sort(
        ["match_index", "kind", "side", "item"], nulls_last=True)
    assert usage.height and set(usage.columns) >= {"match_index", "kind"}
    assert sim("check-run", run).returncode == 0
    report = sim("report", run, "--out", tmp_path / "r.html")
    assert report.returncode == 0, report.stderr
    assert "did not write the events table (tables_out): it costs content usage" \
        in report.stderr
    assert "did not write the turns table" in report.stderr
    page = (tmp_path / "r.html").read_text()
    assert "did not write the turns table (tables_out)" in page
    # resumed: nothing to play, nothing missing
    again = run_sweep(load_experiment(exp), run, jobs=1, progress=False)
    assert again["played_now"] == 0 and not again["problems"]


def test_tables_out_must_keep_the_tables_that_count_the_run(tmp_path):
    for value, needle in (('["seats"]', "must list matches and errors"),
                          ('["matches", "errors", "moves"]', "tables_out.2")):
        exp = write(tmp_path / "exp.toml", experiment_text(matches=2).replace(
            "chunk_size = 2", f"chunk_size = 2\ntables_out = {value}"))
        one_line_error(sim("sweep", exp, "--out", tmp_path / "x"), needle)

"""`sim compact` (issue 46, item 4): a finished run's parts rewritten as a few large
files per table and variant, verified by check-run, read back as the same tables
and the same report; safe to kill (the states a kill can leave are each a valid
run), idempotent, and refused while a sweep holds the run's lock."""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import pytest

from sim.outputs.compact import compact_run
from sim.outputs.lock import RunLock
from sim.outputs.schemas import TABLES, WRITTEN
from sim.outputs.store import COMPACTED, find_match, require_complete, verify_run
from sim.runner.experiments import load_experiment
from sim.runner.sweep import run_sweep
from tests.test_runs_support import (
    experiment_text,
    one_line_error,
    read_all,
    sim,
    start,
    wait_for,
    write,
)


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A finished run (3 chunks a variant), its tables and its report's page."""
    tmp = tmp_path_factory.mktemp("compact")
    exp = write(tmp / "exp.toml", experiment_text(matches=6, chunk_size=2))
    run = tmp / "run"
    run_sweep(load_experiment(exp), run, jobs=1, progress=False)
    report = sim("report", run, "--out", tmp / "before.html")
    assert report.returncode == 0, report.stderr
    return exp, run, read_all(run), (tmp / "before.html").read_text()


def copy_run(run: Path, to: Path) -> Path:
    shutil.copytree(run, to, ignore=shutil.ignore_patterns(".lock"))
    return to


def files(run: Path, pattern: str) -> list[Path]:
    return sorted(p for t in WRITTEN for p in (run / t).rglob(pattern))


def same_tables(run: Path, frames) -> None:
    got = read_all(run)
    for table in TABLES:
        assert got[table].equals(frames[table]), table


def test_compact_rewrites_the_parts_into_few_files_read_as_before(swept, tmp_path):
    _exp, run, frames, page = swept
    run = copy_run(run, tmp_path / "run")
    # a target below one chunk's events part: events of a variant in several files
    proc = sim("compact", run, "--target-mb", "0.02")
    assert proc.returncode == 0, proc.stderr
    assert "compacted 6 chunks into" in proc.stdout
    assert not files(run, "part-*.parquet") and not list((run / "_done").glob("*__*.json"))
    record = json.loads((run / "_done" / COMPACTED).read_text())
    per_file = {rel: f for rel, f in record["files"].items()}
    assert sum(f["table"] == "matches" for f in per_file.values()) == 2  # one a variant
    assert sum(f["table"] == "events" for f in per_file.values()) > 2
    check = sim("check-run", run)
    assert check.returncode == 0 and "6 chunks intact, 12 matches" in check.stdout
    same_tables(run, frames)
    report = sim("report", run, "--out", tmp_path / "after.html")
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "after.html").read_text() == page.replace(str(swept[1]), str(run))
    assert find_match(run, "dominance-50:3").row["match_id"] == "dominance-50:3"
    # a resumed sweep finds nothing to play
    again = run_sweep(load_experiment(swept[0]), run, jobs=1, progress=False)
    assert again["played_now"] == 0 and not again["problems"]


def test_compacting_twice_changes_nothing(swept, tmp_path):
    run = copy_run(swept[1], tmp_path / "run")
    compact_run(run, target=1 << 20)
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file() and p.name != ".lock"}
    second = compact_run(run, target=1 << 20)
    assert second.files == 0 and second.removed == 0
    after = {p: p.read_bytes() for p in run.rglob("*") if p.is_file() and p.name != ".lock"}
    assert after == before


def test_a_compaction_killed_before_its_record_leaves_the_old_run(swept, tmp_path):
    """Killed after writing new files but before the record: they are leftovers."""
    _exp, run, frames, _page = swept
    done = copy_run(run, tmp_path / "done")
    compact_run(done, target=1 << 20)
    killed = copy_run(run, tmp_path / "killed")
    for path in files(done, "compact-*.parquet"):
        target = killed / path.relative_to(done)
        shutil.copy(path, target)
    check = verify_run(killed)
    assert check.complete and check.leftovers
    same_tables(killed, frames)
    assert sim("check-run", killed).returncode == 0
    finished = compact_run(killed, target=1 << 20)
    assert finished.files and not verify_run(killed).leftovers
    same_tables(killed, frames)


def test_a_compaction_killed_before_removing_the_old_parts_leaves_the_new_run(swept,
                                                                               tmp_path):
    _exp, run, frames, _page = swept
    killed = copy_run(run, tmp_path / "killed")
    compact_run(killed, target=1 << 20)
    for path in [*files(run, "part-*.parquet"), *(run / "_done").glob("*__*.json")]:
        shutil.copy(path, killed / path.relative_to(run))  # the old parts come back
    check = require_complete(killed)
    assert len(check.leftovers) == len(files(run, "part-*.parquet")) + 6
    same_tables(killed, frames)
    again = compact_run(killed, target=1 << 20)
    assert again.files == 0 and again.removed == len(check.leftovers)
    same_tables(killed, frames)


def test_a_killed_compaction_process_leaves_a_valid_run(swept, tmp_path):
    _exp, run, frames, _page = swept
    run = copy_run(run, tmp_path / "run")
    proc = start("compact", run, "--target-mb", "0.001")
    wait_for(lambda: files(run, "compact-*.parquet") or proc.poll() is not None, timeout=120,
             every=0.005)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert sim("check-run", run).returncode == 0
    same_tables(run, frames)


def test_compact_is_refused_while_a_sweep_holds_the_lock(swept, tmp_path):
    run = copy_run(swept[1], tmp_path / "run")
    with RunLock(run, "sim sweep"):
        one_line_error(sim("compact", run), "another sweep is writing this folder")
    assert not files(run, "compact-*.parquet")


def test_compact_refuses_a_damaged_run(swept, tmp_path):
    run = copy_run(swept[1], tmp_path / "run")
    part = run / "turns" / "variant=baseline" / "part-00001.parquet"
    part.write_bytes(part.read_bytes()[:-3])
    one_line_error(sim("compact", run), "chunk baseline/1")
    assert not files(run, "compact-*.parquet")

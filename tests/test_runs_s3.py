"""A run folder on object storage (issue 46): `sim sweep --out s3://…` on a local Dask
cluster of 2 workers with no shared disk, `sim check-run` and `sim report` on the
URL, a resume after a killed sweep, and the lock object. Against a real S3
protocol server: moto's server mode, started here on a free port on 127.0.0.1; the
sweeps find it through the standard AWS environment variables, as they would find
a studio's own store."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path

import polars as pl
import pytest

from sim.analysis.history import history_with_run, read_history, write_history
from sim.outputs.lock import ObjectLock, RunLocked, run_lock
from sim.outputs.schemas import SORT_KEYS, TABLES
from sim.outputs.storage import run_path
from sim.outputs.store import RunError, commit_chunk, scan
from sim.runner.experiments import load_experiment
from sim.runner.sweep import run_sweep
from tests.conftest import FIXTURE_TABLES
from tests.test_runs_support import (
    experiment_text,
    one_line_error,
    read_all,
    sim,
    start,
    wait_for,
    write,
)

pytest.importorskip("moto.server")
pytest.importorskip("s3fs")
pytest.importorskip("dask.distributed")

BUCKET = "hexsim-runs"


@pytest.fixture(scope="module")
def s3():
    """A moto S3 server on a free port of 127.0.0.1, a bucket in it, and this process's
    and its children's AWS variables pointing at it (restored afterwards)."""
    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    _host, port = server.get_host_and_port()
    settings = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "test",
                "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1",
                "AWS_ALLOW_HTTP": "true", "SIM_LOCK_LEASE_S": "3"}
    try:
        with pytest.MonkeyPatch.context() as env:
            for key, value in settings.items():
                env.setenv(key, value)
            import fsspec

            fsspec.filesystem("s3", skip_instance_cache=True).mkdir(BUCKET)
            yield f"s3://{BUCKET}"
    finally:
        server.stop()


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An experiment and its tables swept on this machine's disk, in one process."""
    tmp = tmp_path_factory.mktemp("s3")
    exp = write(tmp / "exp.toml", experiment_text(matches=6, chunk_size=2))
    run_sweep(load_experiment(exp), tmp / "reference", jobs=1, progress=False)
    return exp, read_all(tmp / "reference")


def read_url(url: str) -> dict[str, pl.DataFrame]:
    return {t: scan(run_path(url), t).collect().sort(["variant", *SORT_KEYS[t]])
            for t in TABLES}


def assert_same(url: str, frames: dict[str, pl.DataFrame]) -> None:
    got = read_url(url)
    for table in TABLES:
        assert got[table].equals(frames[table].select(got[table].columns)), table


def objects(url: str) -> list[str]:
    path = run_path(url)
    return sorted(path.fs.find(path.path)) if path.exists() else []


def test_a_dask_sweep_to_s3_checks_and_reports_from_the_url(s3, reference, tmp_path):
    exp, frames = reference
    url = f"{s3}/runs/dask"
    proc = sim("sweep", exp, "--backend", "dask", "--jobs", "2", "--out", url, "--quiet",
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert_same(url, frames)
    names = objects(url)
    assert not any("/.tmp/" in n for n in names) and not any(n.endswith("/.lock")
                                                                for n in names)
    assert len([n for n in names if "/_done/" in n]) == 6
    assert not list(tmp_path.iterdir())  # nothing on this disk
    check = sim("check-run", url)
    assert check.returncode == 0, check.stderr
    assert "6 chunks intact, 12 matches" in check.stdout
    report = sim("report", url, "--out", tmp_path / "r.html")
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "r.html").read_text()
    assert "<html" in page[:2000].lower()
    # compacted in the store: checked, and the same report
    compact = sim("compact", url)
    assert compact.returncode == 0 and "compacted 6 chunks" in compact.stdout, compact.stderr
    assert not [n for n in objects(url) if "/part-" in n or "__" in n]
    assert sim("check-run", url).returncode == 0
    assert sim("report", url, "--out", tmp_path / "c.html").returncode == 0
    assert (tmp_path / "c.html").read_text() == page
    assert_same(url, frames)
    # a match of it, from its compacted files in the store
    found = sim("replay-command", url, "dominance-50:4")
    assert found.returncode == 0 and found.stdout.startswith("sim match --seed 11 --match 4")
    # the nightly's history index in the store too
    history = f"{s3}/history/nightly.parquet"
    write_history(history, history_with_run(history, url))
    assert read_history(history).get_column("run_id").n_unique() == 1


def test_check_run_finds_a_part_that_differs_from_its_marker(s3, reference):
    exp, _frames = reference
    url = f"{s3}/runs/damaged"
    run_sweep(load_experiment(exp), url, jobs=1, progress=False)
    part = run_path(url) / "seats" / "variant=baseline" / "part-00001.parquet"
    part.write_bytes(part.read_bytes()[:-7])
    proc = sim("check-run", url)
    assert proc.returncode == 2
    assert "chunk baseline/1" in proc.stderr and "short" in proc.stderr
    # resume plays that chunk again and the run is whole
    again = run_sweep(load_experiment(exp), url, jobs=1, progress=False, say=lambda _: None)
    assert again["played_now"] == 2 and not again["problems"]


def test_a_killed_dask_sweep_resumes_to_the_same_tables(s3, tmp_path):
    """The sweep and its cluster are killed (SIGKILL, the whole process group) once a
    few chunks are committed; what they were writing has no marker. Once the dead
    sweep's lease has run out, the same command takes its lock over and finishes: the
    tables are those of an uninterrupted sweep."""
    exp = write(tmp_path / "exp.toml", experiment_text(matches=8, chunk_size=1,
                                                         root_seed=5))
    whole = f"{s3}/runs/whole"
    run_sweep(load_experiment(exp), whole, jobs=1, progress=False)
    url = f"{s3}/runs/killed"
    proc = start("sweep", exp, "--backend", "dask", "--jobs", "2", "--out", url, "--quiet")
    done = run_path(url) / "_done"
    try:
        assert wait_for(lambda: done.exists() and len(list(done.iterdir())) >= 3,
                        timeout=240, every=0.2), proc.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    assert (run_path(url) / ".lock").exists()
    check = sim("check-run", url)
    assert check.returncode == 2 and "incomplete" in check.stderr
    # the lease the dead sweep last renewed (SIM_LOCK_LEASE_S 3) must have run out: on a
    # quiet machine check-run can finish inside it, and the lock is then rightly held
    holder = json.loads((run_path(url) / ".lock").read_text())
    time.sleep(max(0.0, float(holder["expires"]) - time.time()) + 0.5)
    resumed = sim("sweep", exp, "--backend", "dask", "--jobs", "2", "--out", url, "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    assert "taking over the stale lock" in resumed.stderr
    assert "already written" in resumed.stdout
    assert_same(url, read_url(whole))
    assert sim("check-run", url).returncode == 0


def test_the_lock_object_admits_one_sweep(s3, reference):
    exp, _frames = reference
    url = f"{s3}/runs/locked"
    folder = run_path(url)
    lock = run_lock(folder, "a test holding the folder")
    assert isinstance(lock, ObjectLock)
    with lock:
        with pytest.raises(RunLocked, match="another sweep is writing"):
            ObjectLock(folder).acquire()
        one_line_error(sim("sweep", exp, "--out", url, "--quiet"), "another sweep is writing")
        time.sleep(4)  # longer than the lease: the holder renewed it meanwhile
        with pytest.raises(RunLocked):
            ObjectLock(folder).acquire()
    assert not (folder / ".lock").exists()
    # a holder that died: its lease ran out, the next one takes over
    (folder / ".lock").write_text(json.dumps({"pid": 1, "host": "elsewhere",
                                              "started": "then", "expires": 0}))
    with ObjectLock(folder) as taker:
        assert "taking over the stale lock of PID 1 on host elsewhere" in taker.took_over


def test_a_url_to_nowhere_is_one_line(s3, tmp_path):
    one_line_error(sim("check-run", f"{s3}/runs/none"), "no such run folder")
    one_line_error(sim("report", f"{s3}/runs/none", "--out", tmp_path / "x.html"),
                   "no such run folder")


def test_file_urls_are_plain_paths(reference, tmp_path):
    exp, frames = reference
    out = tmp_path / "viafile"
    proc = sim("sweep", exp, "--out", f"file://{out}", "--jobs", "1", "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert (out / ".lock").exists()  # the disk's flock file, as for any path
    assert sim("check-run", f"file://{out}").returncode == 0
    got = read_all(Path(out))
    assert all(got[t].equals(frames[t]) for t in TABLES)


def test_the_parent_writes_a_marker_only_for_parts_the_store_holds_intact(s3, reference):
    """A worker on an object store writes parts only; commit_chunk (the parent) reads
    them back and refuses a chunk whose part differs from what the worker reported."""
    exp, frames = reference
    url = f"{s3}/runs/commit"
    run_sweep(load_experiment(exp), url, jobs=1, progress=False)
    root = run_path(url)
    marker_file = root / "_done" / "baseline__00002.json"
    marker = json.loads(marker_file.read_text())
    marker_file.unlink()
    part = root / "events" / "variant=baseline" / "part-00002.parquet"
    good = part.read_bytes()
    part.write_bytes(good[:100] + bytes([good[100] ^ 1]) + good[101:])  # same size
    with pytest.raises(RunError, match="events part is corrupt"):
        commit_chunk(root, marker)
    assert not marker_file.exists()
    part.write_bytes(good)
    commit_chunk(root, marker)
    assert json.loads(marker_file.read_text()) == marker
    assert_same(url, frames)


def test_a_sensitivity_with_its_morris_screen_writes_its_folder_at_a_url(s3, tmp_path):
    """`sim sensitivity --out s3://…` (issue 46 item 1): its design, both sweeps, its
    tables and its page in the store, nothing of them on this disk, and the same
    effects and Morris indices as the same file run into a folder here; a second run
    resumes from the store and plays nothing again."""
    file = write(tmp_path / "s.toml", f'''name = "s3-sensitivity"
tables = "{FIXTURE_TABLES}"
root_seed = 5
matches = 8
seats = 4
length = "short"
personalities = ["balanced", "conqueror", "scholar", "merchant"]
chunk_size = 4
parameters = ["units.archer.attack", "units.warrior.attack"]
morris_top = 2
morris_trajectories = 2
''')
    url = f"{s3}/sensitivity/s"
    local = tmp_path / "here"
    work = tmp_path / "cwd"
    work.mkdir()
    proc = sim("sensitivity", file, "--out", url, "--jobs", "1", "--quiet", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert f"report: {url}/sensitivity.html" in proc.stdout
    assert not list(work.iterdir())  # nothing on this disk where it ran
    names = objects(url)
    for name in ("sensitivity.json", "sensitivity-experiment.toml", "sensitivity.parquet",
                 "sensitivity.html", "morris.json", "morris.parquet",
                 "sweep/provenance.json", "morris/provenance.json"):
        assert f"{run_path(url).path}/{name}" in names, name
    assert sim("check-run", f"{url}/sweep").returncode == 0
    here = sim("sensitivity", file, "--out", local, "--jobs", "1", "--quiet")
    assert here.returncode == 0, here.stderr
    for table in ("sensitivity", "morris"):
        there = pl.read_parquet((run_path(url) / f"{table}.parquet").read_bytes())
        assert there.equals(pl.read_parquet(local / f"{table}.parquet")), table
    # the printed lines but the folder's name are the same
    assert proc.stdout.replace(url, "OUT") == here.stdout.replace(str(local), "OUT")
    fs = run_path(url).fs
    before = {n: fs.info(n)["LastModified"] for n in names if "/part-" in n}
    again = sim("sensitivity", file, "--out", url, "--jobs", "1", "--quiet")
    assert again.returncode == 0, again.stderr
    fs.invalidate_cache()
    assert before and all(fs.info(n)["LastModified"] == t for n, t in before.items())


def test_a_tune_at_a_url_keeps_its_study_in_the_store_and_resumes_from_it(s3, tmp_path):
    """`sim tune --out s3://…` (issue 46 item 1): the trials' sweeps, the confirmation,
    the outputs and the study (SQLite, worked on in a local copy and put back after
    each trial) in the store; a tune grown from 2 to 4 trials on a machine without
    that copy resumes from the store's study and ends where the same tune run in one
    go on this disk ends."""
    from sim.outputs.storage import local_copy
    from tests.test_tune import tiny_copy

    url = f"{s3}/tunes/tiny"
    first = sim("tune", tiny_copy(tmp_path, trials=2), "--out", url, "--jobs", "1")
    assert first.returncode in (0, 4), first.stderr
    names = objects(url)
    for name in ("study.db", "tune.parquet", "tune.json", "tuned.toml", "tune.html",
                 "trials/0002/sweep/provenance.json", "confirm/sweep/provenance.json"):
        assert f"{run_path(url).path}/{name}" in names, name
    assert not any(n.endswith("/.lock") for n in names)
    local_copy(run_path(url) / "study.db").unlink()  # another machine: no copy here
    again = sim("tune", tiny_copy(tmp_path), "--out", url, "--jobs", "1")
    assert again.returncode in (0, 4), again.stderr
    assert "resuming: 2 of 4 trials told before" in again.stderr
    here = tmp_path / "here"
    whole = sim("tune", tiny_copy(tmp_path), "--out", here, "--jobs", "1")
    assert whole.returncode == again.returncode, whole.stderr
    there = pl.read_parquet((run_path(url) / "tune.parquet").read_bytes())
    assert there.drop("seconds").equals(pl.read_parquet(here / "tune.parquet").drop("seconds"))
    assert (run_path(url) / "tuned.toml").read_text().splitlines()[1:] == \
        (here / "tuned.toml").read_text().splitlines()[1:]

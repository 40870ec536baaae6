"""One sweep at a time per run folder (issue 12, item 2): a second sweep into a folder
another sweep is writing exits 2 in one line naming the holder; a lock left behind
by a process that is gone is taken over with a message."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import polars as pl

from sim.outputs.lock import RunLock, RunLocked
from tests.test_runs_support import (
    experiment_text,
    lock_held,
    one_line_error,
    read_all,
    sim,
    start,
    wait_for,
    write,
)


def test_a_second_sweep_into_the_same_folder_is_refused(tmp_path):
    exp = write(tmp_path / "exp.toml", experiment_text(matches=60, chunk_size=1))
    out = tmp_path / "run"
    first = start("sweep", exp, "--out", out, "--jobs", "1", "--quiet")
    assert wait_for(lambda: lock_held(out)), first.communicate()
    second = sim("sweep", exp, "--out", out, "--jobs", "1", "--chunk-size", "3", "--quiet")
    assert first.poll() is None, "the second sweep should start while the first runs"
    line = one_line_error(second, "another sweep is writing this folder")
    assert f"PID {first.pid} on host {socket.gethostname()}" in line
    _out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    m = read_all(out)["matches"]
    assert m.height == 120 and m["match_id"].n_unique() == 120
    assert read_all(out)["seats"].group_by("match_id").len()["len"].to_list() == [4] * 120
    assert not lock_held(out)


def test_a_stale_lock_of_a_dead_process_is_taken_over(tmp_path):
    exp = write(tmp_path / "exp.toml", experiment_text(matches=2, chunk_size=2))
    out = tmp_path / "run"
    out.mkdir()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    (out / ".lock").write_text(json.dumps({"pid": gone.pid, "host": socket.gethostname(),
                                           "started": "2026-01-01T00:00:00+00:00"}))
    proc = sim("sweep", exp, "--out", out, "--jobs", "1", "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert f"taking over the stale lock of PID {gone.pid}" in proc.stderr
    assert "no longer running" in proc.stderr
    assert read_all(out)["matches"].filter(pl.col("variant") == "baseline").height == 2


def test_the_lock_is_exclusive_between_processes(tmp_path):
    """The lock itself, held by this process: a child process cannot take it."""
    with RunLock(tmp_path, "test") as lock:
        assert lock.took_over is None
        code = ("import sys; from pathlib import Path; from sim.outputs.lock import RunLock,"
                " RunLocked\ntry:\n    RunLock(Path(sys.argv[1])).acquire()\n"
                "except RunLocked as e:\n    print(e)\n")
        child = subprocess.run([sys.executable, "-c", code, str(tmp_path)],
                               capture_output=True, text=True, timeout=60)
        assert "another sweep is writing this folder" in child.stdout, child.stderr
        try:
            RunLock(tmp_path).acquire()
        except RunLocked:
            raised = True
        else:
            raised = False
        assert raised, "a second lock in the same process is refused too (flock per open)"
    assert not (tmp_path / ".lock").read_text()
    with RunLock(tmp_path) as again:
        assert again.took_over is None

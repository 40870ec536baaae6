"""A sweep on a Dask cluster, as docs/scale-out.md tells it (issue 12, items 6, 8, 18):
a real `dask scheduler` and `dask worker` on 127.0.0.1 with free ports and no
dashboard, the worker in another working directory, `sim sweep --backend dask
--scheduler ADDR` with a relative --out. The run lands where the parent said, equal
to a local run; a worker that cannot see the output folder makes error rows and the
sweep does not exit 0."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sim.runner.experiments import load_experiment
from sim.runner.sweep import run_sweep
from tests.test_runs_support import (
    assert_same_tables,
    env,
    experiment_text,
    read_all,
    sim,
    wait_for,
    write,
)

pytest.importorskip("dask.distributed")


def _dask(*args: str, cwd: Path, prefix: tuple[str, ...] = ()) -> subprocess.Popen:
    return subprocess.Popen([*prefix, sys.executable, "-m", "dask", *args], cwd=cwd,
                            env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def _stop(*procs: subprocess.Popen) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        if proc.stderr:
            proc.stderr.close()


@contextlib.contextmanager
def cluster(base: Path, n_workers: int = 2, worker_prefix: tuple[str, ...] = ()):
    """The steps of docs/scale-out.md on one machine: a scheduler writing its address
    to a file, then workers pointed at that address; yields the address."""
    for name in ("scheduler", "worker-cwd", "worker-space"):
        (base / name).mkdir(parents=True, exist_ok=True)
    address_file = base / "scheduler" / "scheduler.json"
    scheduler = _dask("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                      "--dashboard-address", "127.0.0.1:0", "--scheduler-file",
                      str(address_file), cwd=base / "scheduler")
    procs = [scheduler]
    try:
        assert wait_for(lambda: address_file.exists() and address_file.stat().st_size,
                        timeout=60, every=0.1), "the scheduler did not start"
        time.sleep(0.2)  # the file is written whole, but give it a moment
        address = json.loads(address_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        worker = _dask("worker", address, "--host", "127.0.0.1", "--nworkers",
                       str(n_workers), "--nthreads", "1", "--no-dashboard",
                       "--local-directory", str(base / "worker-space"),
                       cwd=base / "worker-cwd", prefix=worker_prefix)
        procs.append(worker)
        yield address
    finally:
        _stop(*reversed(procs))


@pytest.fixture(scope="module")
def experiment(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dask")
    exp = write(tmp / "exp.toml", experiment_text(matches=6, chunk_size=2))
    out = tmp / "reference"
    run_sweep(load_experiment(exp), out, jobs=1, progress=False)
    return exp, read_all(out)


def test_a_sweep_on_a_dask_cluster_with_a_relative_out(experiment, tmp_path):
    exp, frames = experiment
    client_cwd = tmp_path / "client"
    client_cwd.mkdir()
    shutil.copy(exp, client_cwd / "exp.toml")
    with cluster(tmp_path) as address:
        proc = sim("sweep", "exp.toml", "--backend", "dask", "--scheduler", address,
                   "--out", "runs/rel", "--jobs", "2", "--quiet", cwd=client_cwd)
    assert proc.returncode == 0, proc.stderr
    out = client_cwd / "runs" / "rel"
    assert f"-> {out} " in proc.stdout
    assert_same_tables(out, frames)
    assert not (tmp_path / "worker-cwd" / "runs").exists(), "workers wrote under their cwd"
    assert sim("check-run", out).returncode == 0


def _can_hide_folders() -> bool:
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs tmpfs /mnt"],
                           capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(shutil.which("unshare") is None or not _can_hide_folders(),
                    reason="needs `unshare -m` (a mount namespace) to hide a folder")
def test_a_worker_that_cannot_reach_the_output_folder_makes_error_rows(experiment, tmp_path):
    """The worker runs in a mount namespace where the run folder's parent is an empty
    tmpfs: the storage is not shared. Its chunks fail, are retried, then recorded as
    error rows by the parent; the sweep exits 1 and the folder holds no look-alike."""
    exp, _frames = experiment
    shared = tmp_path / "not-shared"
    shared.mkdir()
    hide = ("unshare", "-m", "sh", "-c", f'mount -t tmpfs tmpfs "{shared}" && exec "$0" "$@"')
    with cluster(tmp_path, n_workers=1, worker_prefix=hide) as address:
        proc = sim("sweep", exp, "--backend", "dask", "--scheduler", address, "--out",
                   shared / "run", "--quiet")
    assert proc.returncode == 1, proc.stderr
    assert "not reachable from this worker" in proc.stderr
    tables = read_all(shared / "run")
    assert tables["matches"].height == 0
    assert tables["errors"].height == 12
    assert tables["errors"]["message"].str.contains("gave up after 3 attempts").all()
    assert sim("check-run", shared / "run").returncode == 0  # whole, with 12 failed

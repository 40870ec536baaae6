"""A full disk and a read-only run folder (issue 47, item 4): the sweep stops at once
with one line naming the folder and its free space, counts no half-written part as
done (no retry, no error rows standing in for the chunk), and the same command, once
there is space again, resumes to the very tables of a sweep that never stopped.

The disk fills in two ways: by injection (the writer's fsync'd write puts half its
bytes down and raises ENOSPC, EDQUOT, EROFS or EACCES: any user, the sweep played in
this process), and for real on a small tmpfs in a private mount namespace (`unshare
-Urm`, where the kernel allows it: a sweep with two workers, then the same folder
remounted read-only). chmod cannot make a folder read-only for root, so the read-only
case is injected or mounted, and chmod is tried only where it works (os.access)."""

from __future__ import annotations

import errno
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

import pytest

from sim.outputs import store
from sim.outputs.schemas import WRITTEN
from sim.outputs.store import verify_run
from sim.runner.experiments import load_experiment
from sim.runner.sweep import run_sweep
from tests.test_runs_support import (
    assert_same_tables,
    env,
    experiment_text,
    one_line_error,
    read_all,
    sim,
    write,
)
from tools.fuzz_inputs import _call, _main


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The experiment (2 variants x 8 short matches, chunks of 2) and the tables of its
    sweep, played without a stop."""
    tmp = tmp_path_factory.mktemp("disk")
    exp = write(tmp / "exp.toml", experiment_text())
    run_sweep(load_experiment(exp), tmp / "run", progress=False)
    return exp, tmp / "run", read_all(tmp / "run")


def _fill_after(monkeypatch, writes: int, err: int) -> None:
    """From the (writes + 1)-th file on, the writer puts half the bytes down and fails
    with `err`, as a disk that fills (or turns read-only) mid-file does."""
    real, done = store._fsync_write, [0]

    def write_half(path, data):
        done[0] += 1
        if done[0] <= writes:
            return real(path, data)
        with open(path, "wb") as f:
            f.write(data[: len(data) // 2])
        raise OSError(err, os.strerror(err), str(path))

    monkeypatch.setattr(store, "_fsync_write", write_half)


def _sweep(exp, out, *more) -> tuple[int | None, str]:
    status, _out, err, escaped = _call(_main(["sweep", str(exp), "--quiet", "--out", str(out),
                                              *map(str, more)]))
    assert not escaped and "Traceback" not in err, (escaped, err)
    return status, err


@pytest.mark.parametrize("err", [errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES])
def test_a_disk_that_fills_mid_chunk_stops_the_sweep_and_resume_is_identical(
        tmp_path, monkeypatch, reference, err):
    exp, _, tables = reference
    out = tmp_path / "run"
    # the provenance, two whole chunks, then half of the third chunk's parts
    _fill_after(monkeypatch, 1 + 2 * (len(WRITTEN) + 1) + len(WRITTEN) // 2, err)
    status, stderr = _sweep(exp, out, "--jobs", "1")
    lines = stderr.strip().splitlines()
    assert status == 2 and len(lines) == 1, stderr
    assert lines[0].startswith(f"{out}: cannot write ") and os.strerror(err) in lines[0]
    assert " MB free there)" in lines[0] and "run the same command again" in lines[0]
    check = verify_run(out)
    assert len(check.done) == 2 and not check.damaged and not check.foreign
    assert all(m["parts"]["errors"]["rows"] == 0 for m in check.done.values())
    assert not any((out / ".tmp").iterdir())  # the half-written file gave its space back
    monkeypatch.undo()  # space again
    status, stderr = _sweep(exp, out, "--jobs", "1")
    assert status == 0, stderr
    assert verify_run(out).complete
    assert_same_tables(out, tables)


def test_a_full_disk_at_the_provenance_is_one_line_before_any_match(tmp_path, monkeypatch,
                                                                      reference):
    exp, _, _ = reference
    out = tmp_path / "run"
    _fill_after(monkeypatch, 0, errno.ENOSPC)
    status, stderr = _sweep(exp, out, "--jobs", "1")
    assert status == 2 and stderr.strip().splitlines() == [stderr.strip()], stderr
    assert stderr.startswith(f"{out}: cannot write provenance.json: No space left on device")
    assert not (out / "_done").exists()


def test_chmod_read_only_folder_is_one_line(tmp_path, reference):
    exp, _, _ = reference
    out = tmp_path / "run"
    out.mkdir()
    out.chmod(0o555)
    try:
        if os.access(out, os.W_OK):
            pytest.skip("chmod does not stop this user (root) writing; the injected EROFS "
                        "and EACCES above and the read-only mount below stand in")
        one_line_error(sim("sweep", exp, "--jobs", "1", "--quiet", "--out", out),
                       f"{out}: cannot write .lock: Permission denied")
    finally:
        out.chmod(0o755)


def _can_mount() -> bool:
    """Whether this kernel lets us mount a tmpfs in a private mount namespace."""
    if shutil.which("unshare") is None:
        return False
    with tempfile.TemporaryDirectory() as where:
        probe = subprocess.run(["unshare", "-Urm", "mount", "-t", "tmpfs", "-o", "size=64k",
                                "tmpfs", where], capture_output=True)
    return probe.returncode == 0


def _disk_bytes(folder) -> int:
    """What the files of `folder` take on a tmpfs (whole 4 kB pages)."""
    return sum(-(-p.stat().st_size // 4096) * 4096 for p in folder.rglob("*") if p.is_file())


@pytest.mark.skipif(not _can_mount(), reason="no private mount namespace here (unshare)")
def test_a_real_full_tmpfs_stops_two_workers_and_a_read_only_mount_is_refused(
        tmp_path, reference):
    exp, ref_out, tables = reference
    disk, copy = tmp_path / "disk", tmp_path / "copy"
    disk.mkdir()
    size = (_disk_bytes(ref_out) // 2) // 4096 * 4096  # room for about half the run
    sweep = shlex.join([sys.executable, "-m", "sim.cli", "sweep", str(exp), "--quiet",
                        "--jobs", "2"])
    script = f"""
mount -t tmpfs -o size={size} tmpfs {disk} || exit 97
{sweep} --out {disk}/run 2> {tmp_path}/full.err; echo $? > {tmp_path}/full.status
cp -a {disk}/run {copy}
mount -o remount,ro {disk} || exit 98
{sweep} --out {disk}/run 2> {tmp_path}/ro.err; echo $? > {tmp_path}/ro.status
"""
    done = subprocess.run(["unshare", "-Urm", "sh", "-c", script], env=env(), timeout=600,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for case, needle in (("full", "No space left on device"), ("ro", "Read-only file system")):
        stderr = (tmp_path / f"{case}.err").read_text()
        lines = stderr.strip().splitlines()
        assert (tmp_path / f"{case}.status").read_text().strip() == "2", stderr
        assert len(lines) == 1 and "Traceback" not in stderr, stderr
        assert lines[0].startswith(f"{disk}/run: cannot write ") and needle in lines[0]
        assert " MB free there)" in lines[0]
    # what the full disk kept: whole chunks only, none of them error rows
    check = verify_run(copy)
    assert check.done and not check.complete and not check.damaged
    assert all(m["parts"]["errors"]["rows"] == 0 for m in check.done.values())
    resumed = sim("sweep", exp, "--quiet", "--jobs", "2", "--out", copy)
    assert resumed.returncode == 0, resumed.stderr
    assert_same_tables(copy, tables)

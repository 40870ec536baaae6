"""Stopping and killing (issue 12, items 4 and 5, and the interruption loop): SIGTERM
and SIGINT to a sweep stop its workers, keep every finished chunk, print how to
resume and exit 143/130, leaving no worker behind; a worker killed with SIGKILL
costs its chunk one attempt, and a chunk whose worker keeps dying becomes error
rows that --retry-errors plays again. Whatever interrupts a sweep, resuming it
gives the tables of an uninterrupted run, row for row and column for column."""

from __future__ import annotations

import os
import random
import shutil
import signal
import sys
import time

import pytest

from sim.outputs.store import verify_run
from sim.runner.experiments import load_experiment
from sim.runner.sweep import SweepInterrupted, run_sweep, stop_on_signals
from tests.test_runs_support import (
    all_gone,
    assert_same_tables,
    experiment_text,
    lock_held,
    markers,
    read_all,
    sim,
    start,
    wait_for,
    workers_of,
    write,
)

MATCHES, CHUNK = 24, 2  # 2 variants: 24 chunks of 2 short matches


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The experiment file and the tables of an uninterrupted run of it."""
    tmp = tmp_path_factory.mktemp("signals")
    exp = write(tmp / "exp.toml", experiment_text(matches=MATCHES, chunk_size=CHUNK))
    out = tmp / "reference"
    run_sweep(load_experiment(exp), out, jobs=1, progress=False)
    return exp, read_all(out)


def _sweep(exp, out, *extra):
    return start("sweep", exp, "--out", out, "--jobs", "2", "--quiet", *extra)


_last_scan = [0.0]


def _watch_workers(proc, seen: set[int]) -> bool:
    """Note the sweep's workers (a /proc scan at most every 0.1 s); True once it ended."""
    if time.monotonic() - _last_scan[0] > 0.1:
        seen.update(workers_of(proc.pid))
        _last_scan[0] = time.monotonic()
    return proc.poll() is not None


def _raise_signal_and_spin(signum: int, finished: list) -> None:
    os.kill(os.getpid(), signum)
    deadline = time.monotonic() + 0.2  # the handler runs in here, before the return
    while time.monotonic() < deadline:
        pass
    finished.append(True)


class _FreesSomething:
    def __init__(self, signum: int, finished: list):
        self.signum, self.finished = signum, finished

    def __del__(self):
        _raise_signal_and_spin(self.signum, self.finished)


def _in_a_finalizer(signum: int, finished: list) -> None:
    obj = _FreesSomething(signum, finished)
    del obj


def _in_a_ctypes_callback(signum: int, finished: list) -> None:
    import ctypes

    ctypes.CFUNCTYPE(None)(lambda: _raise_signal_and_spin(signum, finished))()


def _in_a_polars_callback(signum: int, finished: list) -> None:
    import polars as pl

    def spin(x: int) -> int:
        if x == 1:
            _raise_signal_and_spin(signum, finished)
        return x

    assert pl.Series([1, 2]).map_elements(spin, return_dtype=pl.Int64).to_list() == [1, 2]


@pytest.mark.parametrize("where", [_in_a_finalizer, _in_a_ctypes_callback,
                                   _in_a_polars_callback],
                         ids=["finalizer", "ctypes-callback", "polars-callback"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_landing_where_python_drops_exceptions_stops_the_sweep_after(
        signum, where, monkeypatch):
    """A signal whose handler runs inside a __del__ (llvmlite frees LLVM objects in
    one), a C library's callback or under polars is raised again once that returns. Raised there,
    Python drops the exception ("Exception ignored in"), the sweep played on deaf to
    signals, and a half-run llvmlite finalizer crashed the process later (a CI run's
    SIGSEGV)."""
    dropped = []
    monkeypatch.setattr(sys, "unraisablehook", dropped.append)
    finished = []
    with pytest.raises(SweepInterrupted) as caught, stop_on_signals():
        where(signum, finished)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            time.sleep(0.001)
    assert caught.value.signum == signum
    assert dropped == []
    if where is not _in_a_ctypes_callback:  # not cut short: the signal waited for it
        assert finished == [True]
    assert sys.unraisablehook == dropped.append  # the context put the hook back


def test_a_signal_put_off_reaches_the_handler_before_when_the_sweep_ends_first():
    """A signal put off (it landed in a finalizer) in a sweep that ends within the
    ~20 ms before it is delivered again goes at once to the handler there was before
    the sweep (an outer sweep's, or sim's own: exit 128 + signum). It was lost: a
    SIGTERM during a one-job sweep's last chunk ended the command with exit 0, since
    the interpreter exited before the second delivery."""
    before = []
    old = signal.signal(signal.SIGTERM, lambda signum, frame: before.append(signum))
    try:
        with stop_on_signals():
            _in_a_finalizer(signal.SIGTERM, [])
        got_at_once = list(before)
    finally:
        time.sleep(0.1)  # any later copy goes to `before` too, not to pytest
        signal.signal(signal.SIGTERM, old)
    assert got_at_once == [signal.SIGTERM]


@pytest.mark.parametrize("signum,code,to_group,jobs", [
    (signal.SIGTERM, 143, False, "2"),  # what cron, systemd and Kubernetes send
    (signal.SIGINT, 130, True, "2"),    # Ctrl-C: the whole process group gets it
    (signal.SIGTERM, 143, False, "1"),  # one job: chunks play in the sweep's own process
], ids=["SIGTERM", "Ctrl-C", "SIGTERM-one-job"])
def test_a_signal_stops_the_workers_and_keeps_finished_chunks(reference, tmp_path, signum,
                                                              code, to_group, jobs):
    exp, frames = reference
    out = tmp_path / "run"
    proc = start("sweep", exp, "--out", out, "--jobs", jobs, "--quiet")
    seen: set[int] = set()
    assert wait_for(lambda: _watch_workers(proc, seen) or (
        markers(out) >= 2 and len(seen) == (int(jobs) if jobs != "1" else 0)))
    assert proc.poll() is None and markers(out) < 2 * MATCHES // CHUNK
    (os.killpg if to_group else os.kill)(proc.pid, signum)
    _stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == code, stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith(f"interrupted by {signal.Signals(signum).name}: ")
    assert f"chunks are written in {out}; to resume, run the same command again: sim sweep" \
        in last and "Traceback" not in stderr
    assert all_gone(seen), "no worker may outlive the sweep"
    check = verify_run(out)
    assert len(check.done) >= 2 and not check.damaged and not check.foreign
    assert not lock_held(out)
    resumed = sim("sweep", exp, "--out", out, "--jobs", "2", "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    assert_same_tables(out, frames)


def test_a_killed_worker_costs_its_chunk_one_attempt(reference, tmp_path):
    exp, frames = reference
    out = tmp_path / "run"
    proc = _sweep(exp, out)
    seen: set[int] = set()
    assert wait_for(lambda: _watch_workers(proc, seen) or (markers(out) >= 1 and
                                                         len(workers_of(proc.pid)) == 2))
    victim = workers_of(proc.pid)[0]
    os.kill(victim, signal.SIGKILL)
    _stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert "its worker killed by SIGKILL; trying again (2 of 3)" in stderr
    assert_same_tables(out, frames)


def test_a_chunk_whose_worker_keeps_dying_becomes_error_rows(reference, tmp_path):
    """Every worker is killed as soon as it appears, eight times: a chunk they held
    three times is recorded as errors; the sweep finishes the rest (exit 1).
    --retry-errors then plays them again. The first two workers start before the
    sweep hands out its first chunk, and a worker that dies holding no chunk costs no
    chunk an attempt (it is started again): six to eight of the kills land on chunks."""
    exp, frames = reference
    out = tmp_path / "run"
    proc = _sweep(exp, out)
    killed: set[int] = set()

    def kill_new_workers() -> bool:
        for pid in workers_of(proc.pid):
            if pid not in killed and len(killed) < 8:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
        return len(killed) >= 8 or proc.poll() is not None

    assert wait_for(kill_new_workers, timeout=240, every=0.01)
    _stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 1, stderr
    # which chunks the kills land on depends on which respawned worker the watcher sees
    # first: mostly two chunks three times each, sometimes 3 + 2 + 1 (never three
    # chunks: that takes nine)
    gave_up = stderr.count("gave up after 3 attempts")
    assert gave_up in (1, 2), stderr
    tables = read_all(out)
    errors = tables["errors"]
    assert errors.height == gave_up * CHUNK
    assert all("killed by SIGKILL" in m and "gave up after 3 attempts" in m
               for m in errors["message"])
    failed = errors.select("variant", "match_index")
    for table in ("matches", "seats", "turns"):
        kept = frames[table].join(failed, on=["variant", "match_index"], how="anti")
        assert tables[table].equals(kept), table
    assert errors["replay"].str.starts_with("sim match --seed 11 --match ").all()

    retried = sim("sweep", exp, "--out", out, "--jobs", "2", "--quiet", "--retry-errors")
    assert retried.returncode == 0, retried.stderr
    # the chunks given up above, however many the kills made
    chunks = f"{gave_up} chunk{'s' if gave_up != 1 else ''}"
    assert f"retrying {gave_up * CHUNK} failed matches in {chunks}\n" in retried.stderr
    assert_same_tables(out, frames)


def test_interrupted_at_random_moments_resumes_to_the_uninterrupted_tables(reference,
                                                                          tmp_path):
    """Rounds of SIGKILL, SIGTERM and SIGINT at random moments until five of them cut
    a sweep short, then a resume. A round that lets the sweep finish (a fast machine
    can play the remaining chunks before the signal lands) starts a fresh folder, so
    every counted round interrupts real work whatever the machine's speed."""
    exp, frames = reference
    out = tmp_path / "run"
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    kinds = [signal.SIGKILL, signal.SIGTERM, signal.SIGINT]
    rounds = kinds + [rng.choice(kinds) for _ in range(2)]
    rng.shuffle(rounds)
    expected = {signal.SIGKILL: -9, signal.SIGTERM: 143, signal.SIGINT: 130}
    interrupted = []
    for i in range(4 * len(rounds)):
        if sum(code != 0 for _n, _m, code in interrupted) == len(rounds):
            break
        signum = rounds[i % len(rounds)]
        proc = _sweep(exp, out)
        seen: set[int] = set()
        assert wait_for(lambda proc=proc: lock_held(out, proc.pid) or proc.poll() is not None)
        # a random moment: after 0-3 more chunks are written (0: while the engine loads
        # or the workers start), plus up to 0.3 s, often in the middle of a chunk's write
        target, delay = markers(out) + rng.randrange(4), rng.uniform(0.0, 0.3)
        wait_for(lambda proc=proc, seen=seen, target=target: _watch_workers(proc, seen)
                 or markers(out) >= target, timeout=120)
        wait_for(lambda proc=proc, seen=seen: _watch_workers(proc, seen), timeout=delay)
        if proc.poll() is None:
            os.kill(proc.pid, signum)
        _stdout, stderr = proc.communicate(timeout=60)
        where = f"round {i} ({signum.name} at chunk {target} + {delay:.2f} s, seed {seed})"
        assert proc.returncode in (expected[signum], 0), (where, stderr)
        interrupted.append((signum.name, markers(out), proc.returncode))
        if proc.returncode == 0:
            assert verify_run(out).complete, where
            shutil.rmtree(out)  # finished before the signal: interrupt a fresh sweep next
        assert all_gone(seen), f"{where}: a worker outlived the sweep"
        if (out / "provenance.json").exists():
            check = verify_run(out)
            assert not check.damaged and not check.foreign, (where, check.problems())
        elif out.exists():
            # cut between taking the lock and writing provenance: nothing of the run is
            # there yet (the lock, at most a half-written provenance in .tmp), and the
            # next sweep starts it afresh
            left = {p.relative_to(out).parts[0] for p in out.rglob("*")}
            assert left <= {".lock", ".tmp"}, (where, sorted(left))
    cut = [name for name, _m, code in interrupted if code != 0]
    assert len(cut) == len(rounds), (seed, interrupted)
    final = sim("sweep", exp, "--out", out, "--jobs", "2", "--quiet")
    assert final.returncode == 0, final.stderr
    assert_same_tables(out, frames)
    m = read_all(out)["matches"]
    assert m.height == 2 * MATCHES and m["match_id"].n_unique() == 2 * MATCHES
    assert m.group_by("variant").len().sort("variant")["len"].to_list() == [MATCHES, MATCHES]

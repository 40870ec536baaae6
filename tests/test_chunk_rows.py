"""How a sweep worker builds and writes a chunk's rows, beyond their values (which
tests/test_columns.py compares with the plain reference): a chunk's frames skip the
sort only when already in key order, a detail names only items that exist, and a
pool worker runs polars on one thread (each worker is one core's worth) and ends
without the interpreter's teardown but with its output flushed."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from sim.engine.columns import event_columns
from sim.rules.codes import COL_A, COL_KIND, COL_TURN, EVENT_FIELDS, EVENT_NAMES
from sim.rules.tables import REPO_ROOT, load_tables
from sim.runner.chunk import key_sorted
from sim.runner.pool import LocalPool, worker_cpus


def test_key_sorted_keeps_a_frame_in_key_order_and_sorts_any_other():
    ordered = pl.DataFrame({"match_index": [3, 3, 3, 4, 4], "turn": [1, 1, 2, 1, 1],
                            "seat": [0, 1, 0, 0, 1], "x": [1, 2, 3, 4, 5]})
    assert key_sorted(ordered, "turns") is ordered  # nothing to do: the same frame
    # out of order on each key in turn: the first key, a tie broken by the second, the third
    for rows in ([3, 0, 1, 2, 4], [0, 2, 1, 3, 4], [1, 0, 2, 3, 4]):
        shuffled = ordered[rows]
        assert_frame_equal(key_sorted(shuffled, "turns"), ordered)
    with_null = pl.DataFrame({"match_index": [None, 1], "event": [0, 0]},
                             schema={"match_index": pl.Int64, "event": pl.Int64})
    assert key_sorted(with_null, "events").get_column("match_index").to_list() == [None, 1]


def test_a_detail_past_its_names_fails_as_the_name_lookup_did():
    tables = load_tables()
    log = np.zeros((2, EVENT_FIELDS), dtype=np.int64)
    log[:, COL_TURN] = 1
    log[:, COL_KIND] = EVENT_NAMES.index("research")
    log[0, COL_A] = len(tables.tech_names) - 1
    columns = event_columns(log[:1], tables)
    assert columns["detail"]["names"][columns["detail"]["codes"][0]] == tables.tech_names[-1]
    log[1, COL_A] = len(tables.tech_names)
    with pytest.raises(IndexError, match="research"):
        event_columns(log, tables)


def _polars_threads() -> int:
    return pl.thread_pool_size()


def _in_a_worker(fn):
    """fn() run by a sweep's pool worker: its Outcome."""
    pool = LocalPool(1)
    try:
        pool.submit(fn.__name__, fn)
        (outcome,) = pool.wait(timeout=120)
    finally:
        pool.close()
    return outcome


def test_a_pool_worker_runs_polars_on_one_thread():
    outcome = _in_a_worker(_polars_threads)
    assert (outcome.kind, outcome.value) == ("ok", 1)


def _memory_freed_then_held() -> tuple[int, int, str]:
    import psutil

    me = psutil.Process()
    block = np.ones(64 * 2**20 // 8)  # 64 MB, every page touched
    held = me.memory_info().rss
    del block
    return held, me.memory_info().rss, os.environ.get("_RJEM_MALLOC_CONF", "")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_pool_worker_keeps_the_memory_a_chunk_frees_for_the_next():
    """A 64 MB block freed in a worker stays in its heap (by default glibc maps it on
    its own and hands it back at once, and the next chunk faults it in again), and
    polars' allocator is told to keep its freed pages too."""
    outcome = _in_a_worker(_memory_freed_then_held)
    assert outcome.kind == "ok", outcome.value
    held, after, jemalloc = outcome.value
    assert held - after < 16 * 2**20, (held, after)
    assert "dirty_decay_ms:" in jemalloc


def _imported(name: str) -> bool:
    return name in sys.modules


def test_a_started_pool_runs_its_workers_at_once_and_they_import_what_it_preloads():
    """`start` runs every worker before any task, and a worker imports its `preload`
    modules on its own (a sweep's workers import the engine while the parent still
    prepares); a worker not told to has not imported them."""
    preloaded = LocalPool(2, preload=("colorsys",)).start()
    plain = LocalPool(1)
    try:
        assert len(preloaded.pids()) == 2 and plain.pids() == []
        assert all(s.process.is_alive() for s in preloaded.slots)
        for pool in (preloaded, plain):
            pool.submit("t", _imported, "colorsys")
        (seen,) = preloaded.wait(timeout=120)
        (not_seen,) = plain.wait(timeout=120)
    finally:
        preloaded.close()
        plain.close()
    assert (seen.kind, seen.value) == ("ok", True)
    assert (not_seen.kind, not_seen.value) == ("ok", False)


def test_a_worker_that_died_holding_no_task_is_started_again_and_costs_no_task():
    """A started pool's worker killed before its first task: the next task goes to a
    new worker and succeeds (a death is charged only to the task it held)."""
    pool = LocalPool(1, preload=("colorsys",)).start()
    try:
        first = pool.slots[0].process
        first.kill()
        first.join(30)
        pool.submit("t", _imported, "colorsys")
        (outcome,) = pool.wait(timeout=120)
        assert (outcome.kind, outcome.value) == ("ok", True)
        assert pool.slots[0].process is not first
    finally:
        pool.close()


def _print_unflushed(text: str) -> None:
    print(text, end="")  # to a pipe: block-buffered, so still in the worker's buffer


def test_a_closed_worker_ends_at_once_and_loses_none_of_its_output():
    """Workers skip the interpreter's teardown when the sweep ends (os._exit), after
    flushing what they printed."""
    script = ("from sim.runner.pool import LocalPool\n"
              "from tests.test_chunk_rows import _print_unflushed\n"
              "if __name__ == '__main__':\n"
              "    pool = LocalPool(1)\n"
              "    pool.submit('t', _print_unflushed, 'said by the worker')\n"
              "    (outcome,) = pool.wait(timeout=120)\n"
              "    process = pool.slots[0].process\n"
              "    pool.close()\n"
              "    print('|', outcome.kind, process.exitcode)\n")
    # buffered output, as a worker has it unless the user's environment says otherwise
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=180, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("said by the worker| ok 0\n"), done.stdout


_SCRIPT_LOADING_POLARS = """
import json, os
import polars as pl  # a user's script that loads polars before it sweeps
from sim.runner.pool import LocalPool

def polars_in_a_worker():
    return pl.thread_pool_size(), os.environ.get("_RJEM_MALLOC_CONF", "")

if __name__ == "__main__":
    pool = LocalPool(1)
    pool.submit("t", polars_in_a_worker)
    (outcome,) = pool.wait(timeout=120)
    pool.close()
    print(json.dumps({"kind": outcome.kind, "worker": outcome.value,
                      "parent_threads": pl.thread_pool_size(),
                      "parent_env": [os.environ.get("POLARS_MAX_THREADS"),
                                     os.environ.get("_RJEM_MALLOC_CONF")]}))
"""


def test_a_worker_runs_polars_on_one_thread_under_a_script_that_loaded_polars(tmp_path):
    """A spawned worker first re-runs its parent's main script, so a script that imports
    polars at its top loads polars in the worker before the worker's own code runs: the
    worker must inherit its settings from the start, and the parent keep its own."""
    import json

    script = tmp_path / "user_sweep.py"
    script.write_text(_SCRIPT_LOADING_POLARS)
    env = {k: v for k, v in os.environ.items()
           if k not in ("POLARS_MAX_THREADS", "_RJEM_MALLOC_CONF")}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=REPO_ROOT, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    if seen["parent_threads"] < 2:  # one CPU (or a quota of one) here
        pytest.skip("polars runs one thread here anyway: nothing to tell apart")
    assert seen["kind"] == "ok"
    threads, jemalloc = seen["worker"]
    assert threads == 1
    assert jemalloc.endswith("dirty_decay_ms:5000,muzzy_decay_ms:5000"), jemalloc
    # the parent keeps polars' own settings: its pool and environment are untouched
    assert seen["parent_env"] == [None, "dirty_decay_ms:500,muzzy_decay_ms:1000"]


def _cpus_of_a_thread() -> list[int]:
    """The CPUs a thread the worker starts may run on (threads inherit affinity)."""
    import threading

    seen: list[int] = []
    thread = threading.Thread(target=lambda: seen.extend(sorted(os.sched_getaffinity(0))))
    thread.start()
    thread.join()
    return seen


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="Linux's CPU affinity")
def test_as_many_workers_as_cpus_are_pinned_one_to_a_cpu(monkeypatch):
    """One worker per CPU this process may use: each keeps to its own CPU, and so do
    the threads it starts (polars' pool); fewer or more workers than CPUs, or
    SIM_PIN_WORKERS=0, leave them to the scheduler."""
    cpus = sorted(os.sched_getaffinity(0))
    monkeypatch.delenv("SIM_PIN_WORKERS", raising=False)
    assert worker_cpus(len(cpus) + 1) is None
    assert worker_cpus(len(cpus) - 1) is None
    if len(cpus) < 2:
        assert worker_cpus(1) is None
        pytest.skip("one CPU: nothing to pin apart")
    assert worker_cpus(len(cpus)) == cpus
    monkeypatch.setenv("SIM_PIN_WORKERS", "0")
    assert worker_cpus(len(cpus)) is None
    monkeypatch.delenv("SIM_PIN_WORKERS")
    pool = LocalPool(len(cpus)).start()
    try:
        for k in range(len(cpus)):  # an idle worker each
            pool.submit(k, _cpus_of_a_thread)
        outcomes = []
        while len(outcomes) < len(cpus):
            outcomes += pool.wait(timeout=120)
    finally:
        pool.close()
    assert all(o.kind == "ok" for o in outcomes), outcomes
    assert sorted(o.value for o in outcomes) == [[c] for c in cpus]

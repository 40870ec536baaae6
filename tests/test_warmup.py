"""A cold compile shared with a helper process (sim.engine.warmup)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from numba import types

from sim.engine import warmup
from sim.engine.match import play_match
from sim.jit import njit
from sim.rules.tables import load_tables

REPO_ROOT = Path(__file__).resolve().parents[1]
PREPARE = (11, 0, None, "short", None, None)  # play_match(tables, 11, length="short")

# a fresh process with an empty cache: which kernels the match loop's own compile
# compiles (rather than finds in memory or loads) once the levels are done, the
# signatures the cache then holds for each level, and the match it plays
_COLD_MATCH = """
import hashlib, json
from numba.core import dispatcher
import sim.engine.warmup as warmup

phase, fresh, report = ["levels"], {"levels": [], "loop": []}, {}
stock_compile, stock_warm = dispatcher.Dispatcher.compile, warmup.compile_with_helper

def compile(self, sig):
    n, hits = len(self.overloads), sum(self._cache_hits.values())
    try:
        return stock_compile(self, sig)
    finally:
        if len(self.overloads) > n and sum(self._cache_hits.values()) == hits:
            fresh[phase[0]].append(self.py_func.__qualname__)

def warm(*args):
    report.update(stock_warm(*args))
    phase[0] = "loop"
    return report

dispatcher.Dispatcher.compile = compile
warmup.compile_with_helper = warm
from sim.engine.match import play_match
from sim.rules.tables import load_tables
from sim.jit import is_cached
st, board, log = play_match(load_tables(), 11, length="short")
levels = warmup.parts(*warmup._match_inputs(load_tables(), (11, 0, None, "short", None, None)))
# the signatures numba's cache holds for each level, compiled by either process
signatures = {name: len(kernel._cache._cache_file._load_index())
              for name, kernel, _types, _after in levels}
own = {name: is_cached(kernel, argtypes) for name, kernel, argtypes, _after in levels}
print(json.dumps({"report": report, "fresh_in_loop": fresh["loop"],
                  "signatures": signatures, "own": own,
                  "log": hashlib.sha256(log.tobytes()).hexdigest(),
                  "state": hashlib.sha256(st.tobytes()).hexdigest()}))
"""


def _level_names() -> list[str]:
    tables = load_tables()
    return [name for name, *_ in warmup.parts(*warmup._match_inputs(tables, PREPARE))]


def _taken(done: list[dict]) -> list[str]:
    return [d["level"] for d in done]


def test_a_cold_compile_shares_the_levels_and_the_loop_compiles_none_again(tmp_path):
    env = {**os.environ, "SIM_CACHE_DIR": str(tmp_path / "cache"), "SIM_COMPILE_HELPER": "1",
           "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.run([sys.executable, "-c", _COLD_MATCH], env=env, capture_output=True,
                          text=True, cwd=REPO_ROOT, timeout=900)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    report = out["report"]
    assert "helper_error" not in report, report
    here, helped = _taken(report["here"]), _taken(report["helper"]["compiled"])
    # both processes compiled, and every level was compiled by exactly one of them
    assert here and helped
    assert sorted(here + helped) == sorted(_level_names())
    # each level was compiled for the types its callers pass, and for no other: a
    # level compiled for other types would be compiled again by its caller (a level
    # above it, or the loop), a second signature in the cache
    assert all(out["own"].values()), out["own"]
    assert set(out["signatures"].values()) == {1}, out["signatures"]
    # so the loop's compile found them all and compiled only itself and what no
    # level calls
    assert not set(out["fresh_in_loop"]) & set(_level_names()), out["fresh_in_loop"]
    assert "run_match_held" in out["fresh_in_loop"]
    assert len(out["fresh_in_loop"]) <= 4, out["fresh_in_loop"]
    # the same match as a compile in one process (or this session's cache)
    st, _board, log = play_match(load_tables(), 11, length="short")
    assert out["log"] == hashlib.sha256(log.tobytes()).hexdigest()
    assert out["state"] == hashlib.sha256(st.tobytes()).hexdigest()


def test_a_helper_that_fails_leaves_every_level_to_this_process(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(sys, "executable", "/bin/false")
    report = warmup.compile_with_helper(load_tables(), PREPARE)
    assert report["helper_error"].startswith("exit 1"), report
    assert _taken(report["here"]) == _level_names()
    # a helper that cannot start leaves it all to the loop's own compile
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python"))
    report = warmup.compile_with_helper(load_tables(), PREPARE)
    assert report["here"] == [] and report["helper_error"].startswith("not started: "), report
    assert list(tmp_path.iterdir()) == []  # no work folder left behind


@njit
def _first(x):
    return x + 1


@njit
def _second(x):
    return _first(x) * 2


@njit
def _third(x):
    return x - 1


def test_levels_are_taken_once_in_order_after_what_they_need(tmp_path):
    """The other process took `first` and is still compiling it: `second` (which
    calls it) waits for it to be done, `third` does not."""
    i64 = (types.int64,)
    levels = [("first", _first, i64, ()), ("second", _second, i64, ("first",)),
              ("third", _third, i64, ())]
    (tmp_path / "first").mkdir()

    def other_process():
        time.sleep(0.3)
        (tmp_path / "first.done").touch()

    thread = threading.Thread(target=other_process)
    thread.start()
    done = warmup.take_parts(levels, tmp_path)
    thread.join()
    assert _taken(done) == ["third", "second"]
    assert (tmp_path / "second.done").exists() and (tmp_path / "third.done").exists()
    assert _second(np.int64(3)) == 8
    # nothing left to take: a second process returns at once with nothing
    assert warmup.take_parts(levels, tmp_path) == []


def test_the_helper_is_on_with_a_second_core_and_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("SIM_COMPILE_HELPER", "0")
    assert not warmup.helper_wanted()
    monkeypatch.setenv("SIM_COMPILE_HELPER", "1")
    assert warmup.helper_wanted()
    monkeypatch.delenv("SIM_COMPILE_HELPER")
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0})
    assert not warmup.helper_wanted()
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1})
    assert warmup.helper_wanted()

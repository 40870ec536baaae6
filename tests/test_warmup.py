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

import sim.jit
phase, fresh, report = ["levels"], {"levels": [], "loop": [], "call": []}, {}
stock_compile, stock_warm = dispatcher.Dispatcher.compile, warmup.compile_with_helper
stock_machine_code = sim.jit.compile_machine_code

def compile(self, sig):
    n, hits = len(self.overloads), sum(self._cache_hits.values())
    try:
        return stock_compile(self, sig)
    finally:
        if len(self.overloads) > n and sum(self._cache_hits.values()) == hits:
            fresh[phase[0]].append(self.py_func.__qualname__)

def machine_code(*args):
    phase[0] = "loop"
    return stock_machine_code(*args)

def warm(*args, **kwargs):
    report.update(stock_warm(*args, **kwargs))
    phase[0] = "call"
    return report

dispatcher.Dispatcher.compile = compile
warmup.compile_with_helper = warm
sim.jit.compile_machine_code = machine_code
from sim.engine.match import play_match
from sim.rules.tables import load_tables
from sim.jit import is_cached
st, board, log = play_match(load_tables(), 11, length="short")
levels = warmup.parts(*warmup._match_inputs(load_tables(), (11, 0, None, "short", None, None)))
# the signatures numba's cache holds for each level, compiled by either process
signatures = {name: len(kernel._cache._cache_file._load_index())
              for name, kernel, _types, _after in levels}
own = {name: is_cached(kernel, argtypes) for name, kernel, argtypes, _after in levels}
from sim.kernels.loop import run_match_held
(loop,) = run_match_held.overloads.values()
print(json.dumps({"report": report, "fresh": fresh, "signatures": signatures, "own": own,
                  "shares": len(getattr(loop.library, "_share_objects", [])),
                  "log": hashlib.sha256(log.tobytes()).hexdigest(),
                  "state": hashlib.sha256(st.tobytes()).hexdigest()}))
"""


def _level_names() -> list[str]:
    tables = load_tables()
    return [name for name, *_ in warmup.parts(*warmup._match_inputs(tables, PREPARE))]


def _taken(done: list[dict]) -> list[str]:
    return [d["level"] for d in done]


_LOADED_MATCH = """
import hashlib, json
from sim.engine.match import play_match
from sim.kernels.loop import run_match_held
from sim.rules.tables import load_tables
st, board, log = play_match(load_tables(), 11, length="short")
(loop,) = run_match_held.overloads.values()
print(json.dumps({"shares": len(getattr(loop.library, "_share_objects", [])),
                  "log": hashlib.sha256(log.tobytes()).hexdigest(),
                  "state": hashlib.sha256(st.tobytes()).hexdigest()}))
"""


def test_a_cold_compile_shares_the_levels_and_the_loop_compiles_none_again(tmp_path):
    """Levels and the match loop's machine code shared with a helper (sim.engine.warmup,
    sim.jit._split_off): every level compiled once, the loop's code made in two shares
    that play the very match a compile in one process plays, then loaded from the
    cache as they were made."""
    env = {**os.environ, "SIM_CACHE_DIR": str(tmp_path / "cache"), "SIM_COMPILE_HELPER": "1",
           "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.run([sys.executable, "-c", _COLD_MATCH], env=env, capture_output=True,
                          text=True, cwd=REPO_ROOT, timeout=900)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    report = out["report"]
    assert "helper_error" not in report, report
    levels = set(_level_names())
    here = [name for name in _taken(report["here"]) if name in levels]
    helped = _taken(report["helper"]["compiled"])
    # both processes compiled, and every level was compiled by exactly one of them
    assert here and helped
    assert sorted(here + helped) == sorted(levels)
    # each level was compiled for the types its callers pass, and for no other: a
    # level compiled for other types would be compiled again by its caller (a level
    # above it, or the loop), a second signature in the cache
    assert all(out["own"].values()), out["own"]
    assert set(out["signatures"].values()) == {1}, out["signatures"]
    # this process compiled the levels it took, then the loop, whose typing took only
    # levels nobody had taken and compiled no kernel twice; its first call found its
    # machine code made
    fresh = out["fresh"]
    in_typing = {d["level"] for d in report["here"] if d.get("in_typing")}
    assert set(fresh["levels"]) & levels == set(here) - in_typing, fresh
    assert set(fresh["loop"]) & levels == in_typing, (fresh, in_typing)
    assert "run_match_held" in fresh["loop"]
    assert not set(fresh["levels"]) & set(fresh["loop"]), fresh
    if not in_typing:
        assert len(fresh["loop"]) <= 4, fresh  # itself and what no level calls
    assert fresh["call"] == [], fresh
    # the helper made one share of the loop's machine code, which came back
    assert report["helper"]["share_s"] > 0 and out["shares"] == 1, (report, out["shares"])
    # the same match as a compile in one process (or this session's cache)
    st, _board, log = play_match(load_tables(), 11, length="short")
    match = {"log": hashlib.sha256(log.tobytes()).hexdigest(),
             "state": hashlib.sha256(st.tobytes()).hexdigest()}
    assert {k: out[k] for k in match} == match
    # and the next process loads both shares from the cache and plays it again
    proc = subprocess.run([sys.executable, "-c", _LOADED_MATCH], env=env, capture_output=True,
                          text=True, cwd=REPO_ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert loaded == {"shares": 1, **match}


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


def test_a_callers_typing_waits_for_a_level_the_other_process_compiles(tmp_path):
    """SharedLevels, as sim.jit's guard: a level the other process took is waited for
    until it is done; one nobody took is taken, and done once its typing is."""
    levels = [("first", _first, (types.int64,), ()), ("third", _third, (types.int64,), ())]
    shared = warmup.SharedLevels(levels, tmp_path)
    (tmp_path / "first").mkdir()
    timer = threading.Timer(0.3, (tmp_path / "first.done").touch)
    timer.start()
    t0 = time.perf_counter()
    assert shared(_first) is None
    assert time.perf_counter() - t0 >= 0.25 and (tmp_path / "first.done").exists()
    finished = shared(_third)
    assert (tmp_path / "third").is_dir() and not (tmp_path / "third.done").exists()
    assert shared(_third) is None  # taken here: a nested call neither waits nor takes
    finished()
    assert (tmp_path / "third.done").exists()
    assert [d["level"] for d in shared.in_typing] == ["third"]
    assert shared(_second) is None  # not a level
    # a level the other process took and will never finish (it is gone): not waited for
    gone = warmup.SharedLevels([("second", _second, (types.int64,), ())], tmp_path,
                               other_alive=lambda: False)
    (tmp_path / "second").mkdir()
    assert gone(_second) is None


def test_this_process_leaves_the_last_level_and_what_waits_to_the_helper(tmp_path):
    """With the loop's own compile to do, this process stops taking levels once the
    rest wait for the other's, and leaves the last level (play_out) to it."""
    i64 = (types.int64,)
    levels = [("first", _first, i64, ()), ("second", _second, i64, ("first",)),
              ("third", _third, i64, ())]
    (tmp_path / "first").mkdir()  # the other process is compiling it
    done = warmup.take_parts(levels, tmp_path, until_blocked=True, leave=("third",))
    assert done == [] and not (tmp_path / "third").exists()


def test_a_share_the_helper_never_answers_is_compiled_here(tmp_path):
    from llvmlite import binding

    module = binding.parse_assembly(
        "define i64 @twice(i64 %x) {\n  %y = add i64 %x, %x\n  ret i64 %y\n}\n")
    share = warmup.MachineCodeShare([], tmp_path, helper_alive=lambda: False)
    share.send(module.as_bitcode())
    assert (tmp_path / "share.bc").read_bytes() == module.as_bitcode()
    assert b"twice" in share.receive()  # object code defining it


_WAITING_HELPER = ("import json, sys; from pathlib import Path; "
                   "from sim.engine.warmup import _serve_share; "
                   "print(json.dumps({'compiled': [], "
                   "'share_s': _serve_share(Path(sys.argv[1]), lambda: True)}))")


def test_a_helper_waiting_for_a_share_is_released_when_none_comes(tmp_path, monkeypatch):
    """Without the loop's compile to share (no `then`), the helper, done with its
    levels, is told at once that no share will come, and the report has it."""
    def start(_tables, _prepare_args):
        work = tmp_path / "work"
        work.mkdir()
        (work / "levels").mkdir()
        with open(work / "out", "wb") as out, open(work / "err", "wb") as err:
            helper = subprocess.Popen([sys.executable, "-c", _WAITING_HELPER, str(work)],
                                      stdout=out, stderr=err, cwd=REPO_ROOT,
                                      env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
        return work, helper

    monkeypatch.setattr(warmup, "_start_helper", start)
    monkeypatch.setattr(warmup, "_HELPER_TIMEOUT_S", 20.0)  # a helper left waiting is killed
    t0 = time.perf_counter()
    report = warmup.compile_with_helper(None, (), levels=[])
    assert time.perf_counter() - t0 < 60 and report["here"] == []
    assert report["helper"] == {"compiled": [], "share_s": None}, report

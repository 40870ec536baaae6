"""Numba's on-disk cache is keyed by a hash of every source file compiled code can
reach, so an edit there can never be served stale compiled code."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sim import jit, jitcache
from sim.rules.tables import REPO_ROOT
from tests.conftest import FIXTURE_TABLES


def test_cache_dir_changes_with_compiled_sources_only(tmp_path, monkeypatch):
    """Any edit to a layer compiled code is built from (jit, rules, world, kernels) gives
    a fresh cache; an edit above them (engine, runner, analysis, ...) keeps it."""
    pkg = tmp_path / "pkg"
    for rel, text in [("jit.py", "J = 0\n"), ("rules/codes.py", "A = 1\n"),
                      ("world/state.py", "B = 1\n"), ("kernels/rules/flow.py", "y = 2\n"),
                      ("analysis/metrics.py", "z = 3\n"), ("engine/match.py", "m = 4\n")]:
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
    monkeypatch.setattr(jitcache, "_PACKAGE", pkg)
    first = jit.source_hash()
    for rel in ("analysis/metrics.py", "engine/match.py"):
        (pkg / rel).write_text("changed = 1\n")
        assert jit.source_hash() == first, rel
    for rel in ("jit.py", "rules/codes.py", "world/state.py", "kernels/rules/flow.py"):
        before = jit.source_hash()
        (pkg / rel).write_text((pkg / rel).read_text() + "extra = 1\n")
        assert jit.source_hash() != before, rel


def test_the_cache_check_names_the_match_loop_and_needs_no_numba(tmp_path):
    """engine_cached looks for the match loop's index file by name (MATCH_LOOP_ENTRY),
    so a sweep's parent can ask without importing numba; the name is the function's."""
    from sim.kernels.loop import run_match_held

    stem = Path(run_match_held.py_func.__code__.co_filename).stem
    assert f"{stem}.{run_match_held.__name__}" == jitcache.MATCH_LOOP_ENTRY
    code = ("import sys, sim.runner.sweep as s; print(s.engine_cached(), "
            "'numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], env=_sim_env(tmp_path),
                         capture_output=True, text=True, check=True, cwd=REPO_ROOT)
    assert out.stdout.split() == ["False", "False"]


def test_numba_uses_the_keyed_cache_dir(tmp_path):
    env = {**os.environ, "SIM_CACHE_DIR": str(tmp_path)}
    code = ("import numba, sim.jit as j; print(numba.config.CACHE_DIR); "
            "print(j.cache_dir())")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[0] == out[1]
    assert out[0].startswith(str(tmp_path)) and f"numba-{jit.source_hash()}" in out[0]


def test_a_cache_folder_that_cannot_be_written_is_replaced_and_said_not_left_to_numba(tmp_path):
    """Numba itself would fall back to __pycache__ beside the sources, a cache an edit of
    a called function does not invalidate; sim.jit moves the keyed folder under the
    system's temporary folder instead (here TMPDIR), for its child processes too, and
    says so in one line."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {**os.environ, "SIM_CACHE_DIR": str(blocker / "cache"), "TMPDIR": str(tmp_path)}
    code = ("import os, numba, sim.jit as j; print(numba.config.CACHE_DIR); "
            "print(j.cache_dir()); print(os.environ['SIM_CACHE_DIR'])")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True, cwd=REPO_ROOT)
    numba_dir, ours, inherited = done.stdout.split()
    assert numba_dir == ours and ours.startswith(str(tmp_path / "hexsim-cache-"))
    assert ours.endswith(f"numba-{jit.source_hash()}") and ours.startswith(inherited)
    (note,) = done.stderr.strip().splitlines()
    assert note.startswith(f"note: the compiled-code cache {blocker / 'cache'} cannot be "
                           "written (") and "set SIM_CACHE_DIR" in note
    # a sweep's worker, started before its parent imported sim.jit, falls back to the
    # same folder and leaves the saying to its parent: one note, not one per process
    two = ("import importlib, multiprocessing as mp\n"
           "if __name__ == '__main__':\n"
           "    child = mp.get_context('spawn').Process(target=importlib.import_module,\n"
           "                                            args=('sim.jit',))\n"
           "    child.start(); child.join()\n"
           "    import sim.jit\n"
           "    print(child.exitcode)\n")
    script = tmp_path / "two.py"
    script.write_text(two)
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, check=True, cwd=REPO_ROOT)
    assert done.stdout.split() == ["0"]
    assert done.stderr.count("note: the compiled-code cache") == 1, done.stderr
    # a tune asks before every trial's sweep: still one note, even when the fallback
    # cannot be written either (a file where its folder would be)
    spoilt = tmp_path / "spoilt"
    spoilt.mkdir()
    (spoilt / f"hexsim-cache-{os.getuid()}").write_text("")
    for tmpdir in (tmp_path, spoilt):
        again = subprocess.run(
            [sys.executable, "-c", "import sim.jitcache as c; [c.engine_cached() for _ in "
             "range(3)]"], env={**env, "TMPDIR": str(tmpdir)}, capture_output=True,
            text=True, check=True, cwd=REPO_ROOT)
        assert again.stderr.count("note: the compiled-code cache") == 1, again.stderr


def test_jit_options_keep_outcomes_bit_stable():
    assert jit.JIT_OPTIONS["cache"] is True
    assert jit.JIT_OPTIONS["fastmath"] is False



# --- machine code only for what Python calls (sim.jit._defer_machine_code) -------------

_CHAIN = """
import numpy as np
from sim.jit import njit

@njit
def leaf(a, i):
    return a[i] * 3

@njit
def shout(a):
    print("linked", a[:3])  # boxes an array: needs the function's environment
    return a.size

@njit
def middle(a):
    total = leaf(a, 1)  # a constant: compiled for int64 all the same
    for i in range(a.size):
        total += leaf(a, i)
    return total + shout(a)

@njit
def top(a):
    return middle(a) + 1
"""

_CALLS = """
import sys
import numpy as np
import chain
from sim.jit import _Deferred

def states():
    out = []
    for f in (chain.top, chain.middle, chain.leaf):
        if not f.overloads:
            out.append(f"{f.__name__}: none")
            continue
        entry = next(iter(f.overloads.values())).entry_point
        out.append(f.__name__ + ": " + ("loaded machine code" if not isinstance(entry, _Deferred)
                   else "code only" if entry.cfunc is None else "machine code"))
    print(", ".join(out), "-", len(chain.leaf.overloads), "leaf signature(s)")

a = np.arange(7)
print("top", chain.top(a))
states()
print("middle", chain.middle(a))
states()
"""


def _run_chain(tmp_path: Path, cache: Path) -> list[str]:
    (tmp_path / "chain.py").write_text(_CHAIN)
    (tmp_path / "calls.py").write_text(_CALLS)
    env = _sim_env(cache)
    env["PYTHONPATH"] = f"{tmp_path}{os.pathsep}{env['PYTHONPATH']}"
    out = subprocess.run([sys.executable, str(tmp_path / "calls.py")], env=env,
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_the_deferred_machine_code_is_in_force():
    """Written against numba's internals: a numba whose internals changed leaves the
    patch out (a slower cold start, same results), and this says so."""
    assert jit.DEFERRED_MACHINE_CODE or jit.numba.config.DISABLE_JIT


@pytest.mark.skipif(not jit.DEFERRED_MACHINE_CODE, reason="compiled runs only")
def test_functions_only_compiled_code_calls_get_no_machine_code(tmp_path):
    """A cold run compiles machine code for the function Python calls only; its callees
    keep their code, linked into it, with their environments set (the print boxes an
    array), each compiled once whatever constants its callers pass. A function first
    compiled for a compiled caller and then called from Python is compiled again for
    Python and gives the same answer. The next process loads all of it from the cache."""
    cache = tmp_path / "cache"
    assert _run_chain(tmp_path, cache) == [
        "linked [0 1 2]", "top 74",
        "top: machine code, middle: code only, leaf: code only - 1 leaf signature(s)",
        "linked [0 1 2]", "middle 73",
        "top: machine code, middle: machine code, leaf: code only - 1 leaf signature(s)"]
    assert _run_chain(tmp_path, cache) == [
        "linked [0 1 2]", "top 74",
        "top: loaded machine code, middle: none, leaf: none - 0 leaf signature(s)",
        "linked [0 1 2]", "middle 73",
        "top: loaded machine code, middle: loaded machine code, leaf: none - 0 leaf "
        "signature(s)"]

_TREE = """
define linkonce_odr i64 @leaf(i64 %x) noinline {
  %y = mul i64 %x, 3
  ret i64 %y
}
define linkonce_odr i64 @both(i64 %x) noinline {
  %y = add i64 %x, 7
  ret i64 %y
}
define linkonce_odr i64 @root(i64 %x) noinline {
  %a = call i64 @leaf(i64 %x)
  %b = call i64 @both(i64 %a)
  ret i64 %b
}
define i64 @entry(i64 %x) {
  %a = call i64 @root(i64 %x)
  %b = call i64 @both(i64 %a)
  ret i64 %b
}
"""


@pytest.mark.skipif(not jit.DEFERRED_MACHINE_CODE, reason="compiled runs only")
def test_a_call_tree_split_in_two_shares_links_and_runs_as_one():
    """sim.jit._split_off: the root's tree goes to the helper's share (the root kept
    for the other share's calls to link to), the rest stays, a function both call is
    in both; each optimizes and compiles alone, and loaded together they run as the
    whole tree would."""
    import ctypes
    from types import SimpleNamespace

    from llvmlite import binding

    sent = []
    share = SimpleNamespace(roots=["root"], send=sent.append,
                            receive=lambda: jit.compile_share(sent[0]))
    library = SimpleNamespace(_final_module=binding.parse_assembly(_TREE))
    receive = jit._split_off(library, share)

    def kept(module) -> dict[str, str]:
        return {fn.name: fn.linkage.name for fn in module.functions}

    here, there = library._final_module, binding.parse_bitcode(sent[0])
    assert kept(here) == {"leaf": "available_externally", "both": "linkonce_odr",
                          "root": "available_externally", "entry": "external"}
    assert kept(there) == {"leaf": "linkonce_odr", "both": "linkonce_odr",
                           "root": "weak_odr", "entry": "available_externally"}
    attributes = b" ".join(here.get_function("root").attributes).decode().split()
    assert {"noinline", "optnone"} <= set(attributes)
    theirs, mine = receive(), jit.compile_share(here.as_bitcode())
    machine = binding.Target.from_default_triple().create_target_machine(jit=True)
    engine = binding.create_mcjit_compiler(binding.parse_assembly(""), machine)
    for code in (theirs, mine):
        engine.add_object_file(binding.ObjectFileRef.from_data(code))
    engine.finalize_object()
    entry = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(engine.get_function_address("entry"))
    assert entry(5) == (5 * 3 + 7) + 7


# --- the first run explains itself (issue 12, item 15) ---------------------------------

def _sim_env(cache: Path) -> dict[str, str]:
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "SIM_CACHE_DIR": str(cache),
            "PYTHONPATH": f"{REPO_ROOT}{os.pathsep}{path}" if path else str(REPO_ROOT)}


def test_a_cold_cache_is_seen_although_importing_the_engine_creates_its_folder(tmp_path):
    code = ("import sim.runner.sweep as s, sim.jit as j; "
            "print(j.cache_dir().exists(), s.engine_cached())")
    out = subprocess.run([sys.executable, "-c", code], env=_sim_env(tmp_path),
                         capture_output=True, text=True, check=True, cwd=REPO_ROOT)
    assert out.stdout.split() == ["True", "False"]


def _sweep(exp: Path, out: Path, cache: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim.cli", "sweep", str(exp), "--out",
                           str(out), "--jobs", "1"], env=_sim_env(cache), capture_output=True,
                          text=True, cwd=REPO_ROOT, timeout=900)


def _experiment(tmp_path: Path) -> Path:
    exp = tmp_path / "exp.toml"
    exp.write_text(f'name = "cold"\ntables = "{FIXTURE_TABLES}"\nroot_seed = 3\nmatches = 2\n'
                   'seats = 4\nlength = "short"\n')
    return exp


def _check_cold_run(proc: subprocess.CompletedProcess, out: Path) -> None:
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert re.match(r"compiling the engine once: about \d+ s \(a first guess; ", lines[0]), lines
    # a long compile logs its progress (every 15 s on a pipe), then its time
    ticks = [line for line in lines[1:] if line.startswith("compiling the engine: ")]
    assert all(re.match(r"compiling the engine: \d+ s of about \d+ s; ETA \d:\d\d:\d\d\+$", t)
               for t in ticks), ticks
    assert re.match(r"engine compiled in \d+ s$", lines[1 + len(ticks)]), lines
    assert re.search(r"^done: 2 matches in 1 chunks \(0 already written\), 0 failed, "
                     r"[\d.]+ s \(\d+ s of it compiling the engine\)", proc.stdout, re.M)
    assert "victory mix (share of matches):" in proc.stdout
    assert f"run folder: {out}\n" in proc.stdout
    assert f"its report: sim report {out} --out " in proc.stdout


def test_a_cold_cache_says_so_first_and_the_run_ends_with_a_summary(tmp_path):
    """A cache holding everything but the match loop's entry point (so only that
    compiles: seconds, not a minute) is cold for the sweep: the message and its
    estimate come before the compile, the compile's time is recorded for the next
    estimate, and a warm second run says nothing about compiling."""
    from sim.engine.match import play_match
    from sim.rules.tables import load_tables

    play_match(load_tables(FIXTURE_TABLES), 1, length="short")  # this cache is warm now
    cache = tmp_path / "cache"
    shutil.copytree(jit.cache_dir(), cache / jit.cache_dir().name, ignore=lambda _d, names: [
        n for n in names if n.startswith("loop.run_match")])
    exp = _experiment(tmp_path)
    cold = _sweep(exp, tmp_path / "run", cache)
    _check_cold_run(cold, tmp_path / "run")
    assert float((cache / "last-compile-seconds").read_text()) > 0
    warm = _sweep(exp, tmp_path / "run2", cache)
    assert warm.returncode == 0 and "compiling" not in warm.stderr, warm.stderr


@pytest.mark.slow
def test_an_empty_cache_compiles_once_with_the_message(tmp_path):
    exp = _experiment(tmp_path)
    _check_cold_run(_sweep(exp, tmp_path / "run", tmp_path / "cache"), tmp_path / "run")


def test_the_first_guess_of_a_compile_counts_the_helper(tmp_path, monkeypatch):
    """Before any compile on this machine, the estimate is the first guess for a
    compile with the helper process (a second core) or without it; then the last."""
    from sim.runner import progress

    monkeypatch.setattr(progress, "_compile_record", lambda: tmp_path / "last-compile-seconds")
    monkeypatch.setenv("SIM_COMPILE_HELPER", "1")
    with_helper, basis = progress.compile_estimate()
    monkeypatch.setenv("SIM_COMPILE_HELPER", "0")
    alone, _ = progress.compile_estimate()
    assert basis.startswith("a first guess") and with_helper < alone
    (tmp_path / "last-compile-seconds").write_text("0.0\n")  # no compile: not a guide
    assert progress.compile_estimate() == (alone, basis)
    (tmp_path / "last-compile-seconds").write_text("17.4\n")
    assert progress.compile_estimate() == (17.4, "the last compile on this machine")


def test_the_eta_counts_the_compile_still_to_come():
    from sim.runner.sweep import _Progress

    bar = _Progress(100, enabled=False)
    bar.compiling(60.0)
    assert bar.eta() in ("0:01:00+", "0:00:59+")  # the compile left, then the matches
    bar.compiled(58.0)
    bar.start()
    assert bar.eta() == "–"
    bar.advance(50)
    assert re.match(r"0:00:0\d$", bar.eta())


def test_compile_flags_hash_and_compare_as_numba_defines_it():
    """sim.jit's faster flags hash and equality give numba's answers: the hash is over
    the option names, equality over every option's value (unset: its default)."""
    from numba.core.compiler import Flags

    a, b = Flags(), Flags()
    assert a == b and hash(a) == hash(b) == hash(tuple(sorted(Flags.options)))
    name = "nrt"
    default = Flags.options[name].default
    setattr(a, name, not default)
    assert a != b and hash(a) == hash(b)
    setattr(b, name, not default)
    assert a == b
    c = Flags()
    setattr(c, name, default)  # set to its default: the same values as unset
    assert c == Flags() and c != a
    assert a.copy() == a and a.copy() is not a


def test_old_versions_caches_beyond_the_most_recent_are_removed(tmp_path, monkeypatch):
    """prune_caches keeps the current version's folder and the `keep` most recently
    written others, and touches nothing that is not a version's folder."""
    monkeypatch.setenv("SIM_CACHE_DIR", str(tmp_path))
    current = jit.cache_dir()
    current.mkdir()
    old = []
    for age in range(6):  # numba-old0 is the newest, numba-old5 the oldest
        folder = tmp_path / f"numba-old{age}"
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / "k.nbc").write_bytes(b"x" * 1000)
        os.utime(folder, (1e9 - age * 3600, 1e9 - age * 3600))
        old.append(folder)
    os.utime(current, (1, 1))  # the oldest of all, and kept: it is the one in use
    (tmp_path / "last-compile-seconds").write_text("30.0\n")
    assert jit.prune_caches(keep=2) == (4, 4000)
    assert current.is_dir() and (tmp_path / "last-compile-seconds").exists()
    assert [f.exists() for f in old] == [True, True, False, False, False, False]
    assert jit.prune_caches(keep=2) == (0, 0)


# --- reference counts inlined once pruned (sim.jit._inline_refcounts) -------------------

_OWNED = """
import numpy as np
from sim.jit import njit

@njit
def tail_of(n):
    a = np.arange(n)
    return a[2:]            # a view: the only reference left to its parent

@njit
def weigh(v, w):
    return (v * w[: v.size]).sum()

@njit
def churn(n, rounds):
    total = 0
    for i in range(rounds):
        v = tail_of(n + i % 3)
        w = np.ones(v.size + 1, dtype=np.int64)
        total += weigh(v, w)
    return total
"""

_OWNED_CALLS = """
import gc
from numba.core.runtime import rtsys
import owned

print("churn", owned.churn(10, 1000))
kept = owned.tail_of(6)     # boxed: Python now holds the view, and through it the parent
before = rtsys.get_allocation_stats()
print("kept", kept.tolist(), owned.churn(4, 500))
del kept
gc.collect()
after = rtsys.get_allocation_stats()
print("unfreed", (after.alloc - after.free) - (before.alloc - before.free))
lib = next(iter(owned.churn.overloads.values())).library
text = str(lib._final_module)
print("refcount calls", text.count("@NRT_incref(") + text.count("@NRT_decref("))
"""


@pytest.mark.skipif(not jit.DEFERRED_MACHINE_CODE, reason="compiled runs only")
def test_inlined_reference_counts_free_every_array_and_leave_no_call(tmp_path):
    """Once numba's refcount pruning has run, NRT_incref and NRT_decref are defined in
    the module and inlined: the machine code calls neither, arrays that are made,
    sliced, handed on and dropped are all freed (numba's own allocation statistics), and
    a view returned to Python keeps its parent alive until Python lets it go."""
    (tmp_path / "owned.py").write_text(_OWNED)
    (tmp_path / "calls.py").write_text(_OWNED_CALLS)
    env = _sim_env(tmp_path / "cache") | {"NUMBA_NRT_STATS": "1"}
    env["PYTHONPATH"] = f"{tmp_path}{os.pathsep}{env['PYTHONPATH']}"
    out = subprocess.run([sys.executable, str(tmp_path / "calls.py")], env=env,
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    # sum over i of sum(k for k in 2..n+i%3-1) for 1000 rounds, then the kept view
    expect = sum(sum(range(2, 10 + i % 3)) for i in range(1000))
    assert out.stdout.splitlines() == [
        f"churn {expect}", f"kept [2, 3, 4, 5] {sum(sum(range(2, 4 + i % 3)) for i in range(500))}",
        "unfreed -1",    # the kept view's parent, freed once Python let go; nothing else
        "refcount calls 0"]


@pytest.mark.skipif(not jit.DEFERRED_MACHINE_CODE, reason="compiled runs only")
def test_numbas_own_runtime_library_keeps_its_reference_counts(tmp_path):
    """With scipy.linalg imported before sim.jit (as the analysis layer does), numba's
    runtime starts after the deferral and its own NRT library is deferred too: the
    inlining leaves that library's exported definitions alone, so numba can still take
    a function from it (as its mutual-recursion path does)."""
    code = ("import scipy.linalg, sim.jit\n"
            "from numba.core.registry import cpu_target\n"
            "cpu_target.target_context.refresh()\n"
            "from numba.core.runtime import rtsys\n"
            "print(bool(rtsys.library.get_pointer_to_function('nrt_unresolved_abort')))\n")
    out = subprocess.run([sys.executable, "-c", code], env=_sim_env(tmp_path / "cache"),
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True"]

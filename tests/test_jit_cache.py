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


def test_the_first_guess_of_a_compile_gives_way_to_the_last_one_measured(tmp_path,
                                                                        monkeypatch):
    """Before any compile on this machine, the estimate is the first guess; then the
    last compile measured here."""
    from sim.runner import progress

    monkeypatch.setattr(progress, "_compile_record", lambda: tmp_path / "last-compile-seconds")
    first, basis = progress.compile_estimate()
    assert basis.startswith("a first guess") and first > 0
    (tmp_path / "last-compile-seconds").write_text("0.0\n")  # no compile: not a guide
    assert progress.compile_estimate() == (first, basis)
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


def test_the_cache_check_reads_this_checkouts_folder_only(tmp_path, monkeypatch):
    """numba keeps each source folder's compiled code under a name keyed by its absolute
    path: another checkout of the same code on this machine (a CI clone beside a
    developer's) fills its own folder, and this checkout's cache is still cold."""
    monkeypatch.setenv("SIM_CACHE_DIR", str(tmp_path))
    entry = f"{jitcache.MATCH_LOOP_ENTRY}-1.py311.nbi"
    other = jitcache.cache_dir() / "kernels_0123456789abcdef0123456789abcdef01234567"
    other.mkdir(parents=True)
    (other / entry).write_bytes(b"")
    assert not jitcache.engine_cached()
    jitcache.loop_cache_folder().mkdir(parents=True)
    (jitcache.loop_cache_folder() / entry).write_bytes(b"")
    assert jitcache.engine_cached()

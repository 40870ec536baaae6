"""Numba's on-disk cache is keyed by a hash of every source file compiled code can
reach, so an edit there can never be served stale compiled code."""

from __future__ import annotations

import os
import subprocess
import sys

from sim import jit


def test_cache_dir_changes_with_compiled_sources_only(tmp_path, monkeypatch):
    """Any edit to a layer compiled code is built from (jit, rules, world, kernels) gives
    a fresh cache; an edit above them (engine, runner, analysis, ...) keeps it."""
    pkg = tmp_path / "pkg"
    for rel, text in [("jit.py", "J = 0\n"), ("rules/codes.py", "A = 1\n"),
                      ("world/state.py", "B = 1\n"), ("kernels/rules/flow.py", "y = 2\n"),
                      ("analysis/metrics.py", "z = 3\n"), ("engine/match.py", "m = 4\n")]:
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
    monkeypatch.setattr(jit, "_PACKAGE", pkg)
    first = jit.source_hash()
    for rel in ("analysis/metrics.py", "engine/match.py"):
        (pkg / rel).write_text("changed = 1\n")
        assert jit.source_hash() == first, rel
    for rel in ("jit.py", "rules/codes.py", "world/state.py", "kernels/rules/flow.py"):
        before = jit.source_hash()
        (pkg / rel).write_text((pkg / rel).read_text() + "extra = 1\n")
        assert jit.source_hash() != before, rel


def test_numba_uses_the_keyed_cache_dir(tmp_path):
    env = {**os.environ, "SIM_CACHE_DIR": str(tmp_path)}
    code = ("import numba, sim.jit as j; print(numba.config.CACHE_DIR); "
            "print(j.cache_dir())")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[0] == out[1]
    assert out[0].startswith(str(tmp_path)) and f"numba-{jit.source_hash()}" in out[0]


def test_jit_options_keep_outcomes_bit_stable():
    assert jit.JIT_OPTIONS["cache"] is True
    assert jit.JIT_OPTIONS["fastmath"] is False

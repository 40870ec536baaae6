"""Numba's on-disk cache is keyed by a hash of every source file, so an edit
anywhere in the package can never be served stale compiled code."""

from __future__ import annotations

import os
import subprocess
import sys

from sim import jit


def test_cache_dir_changes_when_any_source_changes(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("x = 1\n")
    (pkg / "sub").mkdir()
    (pkg / "sub" / "b.py").write_text("y = 2\n")
    monkeypatch.setattr(jit, "_PACKAGE", pkg)
    first = jit.source_hash()
    (pkg / "sub" / "b.py").write_text("y = 3\n")
    assert jit.source_hash() != first


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

"""Provenance of a run folder: what produced it, so every chart leads back to its inputs."""

from __future__ import annotations

import importlib.metadata
import platform
import subprocess
from datetime import UTC, datetime
from typing import Any

from sim.jitcache import source_hash
from sim.rules.tables import REPO_ROOT

PACKAGES = ("numpy", "numba", "llvmlite", "polars", "pyarrow", "pydantic", "dask",
            "distributed")


def code_version() -> dict[str, Any]:
    """The git commit (and whether the tree had edits) or, outside git, the package
    version; and `source`, a hash of every module of the package as it is on disk. A
    resumed sweep must match all but `dirty`: the commit alone let an uncommitted edit
    of the engine or the chunk writer resume a run, mixing its matches with the old."""
    out: dict[str, Any] = {"package": importlib.metadata.version("hexsim"),
                           "source": source_hash(("",))}
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True,
                                text=True, timeout=10)
        if commit.returncode == 0:
            out["commit"] = commit.stdout.strip()
            dirty = subprocess.run(["git", "status", "--porcelain", "--", "sim", "tables"],
                                   cwd=REPO_ROOT, capture_output=True, text=True, timeout=10)
            out["dirty"] = bool(dirty.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    return out


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")

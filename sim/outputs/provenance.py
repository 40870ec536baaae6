"""Provenance of a run folder: what produced it, so every chart leads back to its inputs."""

from __future__ import annotations

import importlib.metadata
import platform
import subprocess
from datetime import UTC, datetime
from typing import Any

from sim.jitcache import source_hash
from sim.rules.tables import REPO_ROOT, TablesError, load_tables

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


def tables_changed(provenance: dict[str, Any], variant_id: str) -> str | None:
    """Why replaying a match of the run's variant now would play another match: the
    run's tables file, with the variant's overrides, no longer gives the tables hash
    the run recorded, or cannot be read (one line naming both hashes). None when it
    still gives it."""
    variant = next(v for v in provenance["variants"] if v["id"] == variant_id)
    try:
        now_hash, why = load_tables(provenance["tables_path"],
                                    variant["overrides"] or None).hash, ""
    except TablesError as exc:
        now_hash, why = None, exc.errors[0]
    except UnicodeDecodeError:
        now_hash, why = None, "not UTF-8 text"
    if now_hash == variant["tables_hash"]:
        return None
    detail = f"hash {now_hash}" if now_hash else f"unreadable: {why}"
    return (f"{provenance['tables_path']}: the tables changed since the run (variant "
            f"{variant['id']} had tables hash {variant['tables_hash']}, now {detail}); "
            "this command will not replay the same match")

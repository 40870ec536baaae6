"""`sim sweep`: an experiment's chunks through joblib (loky locally, Dask for a cluster),
with progress, resume, provenance and a summary.

Each worker plays a chunk (sim.runner.chunk) and writes its Parquet files itself
(sim.outputs.store), so only a small summary per chunk travels back and the main
process's memory stays flat however many matches run.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from sim.outputs.provenance import code_version, now, package_versions
from sim.outputs.store import is_done, read_markers, write_chunk
from sim.runner.chunk import RunSettings, play_chunk, settings_for
from sim.runner.experiments import ChunkSpec, Experiment


class RunFolderMismatch(Exception):
    """The output folder holds a run of another experiment, code or chunking."""


def run_chunk(settings: RunSettings, spec: ChunkSpec, play=None) -> dict[str, Any]:
    """Play one chunk and write its tables (in the worker); returns its small summary."""
    frames, summary = play_chunk(settings, spec, play)
    write_chunk(Path(settings.out), spec.variant, spec.chunk, frames, summary)
    return summary


def fingerprint(experiment: Experiment, chunk_size: int) -> dict[str, Any]:
    """What must match for a resumed run to continue an existing folder."""
    return {"experiment_hash": experiment.text_hash, "chunk_size": chunk_size,
            "code": {k: v for k, v in code_version().items() if k != "dirty"},
            "tables_hashes": {v.id: v.tables_hash for v in experiment.variants}}


def provenance(experiment: Experiment, chunk_size: int, jobs: int, backend: str,
               started: str) -> dict[str, Any]:
    spec = experiment.spec
    return {
        "fingerprint": fingerprint(experiment, chunk_size),
        "code_version": code_version(),
        "packages": package_versions(),
        "experiment": {"path": experiment.path, "name": spec.name,
                       "description": spec.description,
                       "text": Path(experiment.path).read_text(encoding="utf-8")},
        "tables_path": experiment.tables_path,
        "root_seed": spec.root_seed, "matches_per_variant": spec.matches,
        "seats": experiment.seats, "length": spec.length,
        "personalities": spec.personalities, "rotate_personalities": spec.rotate_personalities,
        "streams": "SeedSequence(root_seed, spawn_key=(match_index, purpose)); purposes "
                   "map=0, ai=1, events=2; never the variant",
        "baseline": experiment.baseline,
        "variants": [{"id": v.id, "overrides": v.overrides, "tables_hash": v.tables_hash,
                      "tables": v.resolved} for v in experiment.variants],
        "chunk_size": chunk_size, "jobs": jobs, "backend": backend,
        "started": started, "finished": None,
    }


def fingerprint_matches(experiment: Experiment, out: Path, chunk_size: int) -> bool:
    """True when `out` has no provenance yet or was made by this experiment, code and chunking."""
    path = out / "provenance.json"
    if not path.exists():
        return True
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return old.get("fingerprint") == fingerprint(experiment, chunk_size)


def prepare_folder(experiment: Experiment, out: Path, chunk_size: int, jobs: int,
                   backend: str) -> dict[str, Any]:
    """Create or reopen the run folder; refuses a folder made by something else."""
    path = out / "provenance.json"
    fp = fingerprint(experiment, chunk_size)
    if path.exists():
        old = json.loads(path.read_text())
        if old.get("fingerprint") != fp:
            differs = [k for k in fp if old.get("fingerprint", {}).get(k) != fp[k]]
            raise RunFolderMismatch(
                f"{out}: holds a run with a different {', '.join(differs)}; "
                "choose another --out (or delete the folder) to start afresh")
        old.update(jobs=jobs, backend=backend)
        return old
    out.mkdir(parents=True, exist_ok=True)
    prov = provenance(experiment, chunk_size, jobs, backend, now())
    path.write_text(json.dumps(prov, indent=1, sort_keys=True))
    return prov


def pending_chunks(experiment: Experiment, out: Path, chunk_size: int) -> list[ChunkSpec]:
    return [c for c in experiment.chunks(chunk_size) if not is_done(out, c.variant, c.chunk)]




def _dask_context(jobs: int, scheduler: str | None):
    """A joblib backend context on a Dask cluster: `scheduler` address, or a local one."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError("the dask backend needs `pip install 'dask[distributed]'`") from exc
    from joblib import parallel_config

    stack = contextlib.ExitStack()
    if scheduler:
        client = stack.enter_context(Client(scheduler))
    else:
        cluster = stack.enter_context(LocalCluster(n_workers=jobs, threads_per_worker=1,
                                                   processes=True, dashboard_address=None))
        client = stack.enter_context(Client(cluster))
    stack.enter_context(parallel_config(backend="dask", wait_for_workers_timeout=60))
    return stack, client


def run_sweep(experiment: Experiment, out: Path, jobs: int = 1, backend: str = "loky",
              scheduler: str | None = None, chunk_size: int | None = None,
              progress: bool = True, on_chunk=None) -> dict[str, Any]:
    """Run (or resume) every chunk not yet written; returns the run's summary."""
    from joblib import Parallel, delayed

    chunk_size = chunk_size or experiment.spec.chunk_size
    prov = prepare_folder(experiment, out, chunk_size, jobs, backend)
    todo = pending_chunks(experiment, out, chunk_size)
    settings = settings_for(experiment, out)
    total = sum(c.stop - c.start for c in todo)
    done_before = len(experiment.chunks(chunk_size)) - len(todo)
    t0 = time.perf_counter()
    played = 0
    context = contextlib.nullcontext()
    if backend == "dask":
        context, _client = _dask_context(jobs, scheduler)
    elif backend != "loky":
        raise ValueError(f"unknown backend {backend!r}: loky or dask")
    if todo and (backend == "loky" or not scheduler):
        warm_engine(settings)
    bar = _Progress(total, enabled=progress)
    with context, bar:
        if todo:
            parallel = Parallel(n_jobs=jobs, return_as="generator_unordered",
                                **({"backend": "loky"} if backend == "loky" else {}))
            for summary in parallel(delayed(run_chunk)(settings, c) for c in todo):
                played += summary["stop"] - summary["start"]
                bar.advance(summary["stop"] - summary["start"])
                if on_chunk is not None:
                    on_chunk(summary)
    seconds = time.perf_counter() - t0
    markers = read_markers(out)
    result = {
        "out": str(out), "chunks": len(markers), "chunks_resumed": done_before,
        "matches": sum(m["matches"] for m in markers),
        "errors": sum(m["errors"] for m in markers),
        "played_now": played, "seconds": round(seconds, 3),
        "matches_per_s": round(played / seconds, 1) if seconds > 0 and played else None,
    }
    prov["finished"] = now()
    prov["summary"] = result
    (out / "provenance.json").write_text(json.dumps(prov, indent=1, sort_keys=True))
    return result


def warm_engine(settings: RunSettings) -> None:
    """Compile the engine (or load it from numba's cache) once in this process before
    the workers start, so they load the cache instead of all compiling at once."""
    from sim.jit import cache_dir

    fresh = not cache_dir().exists()
    if fresh:
        print("compiling the engine once (about a minute; cached afterwards)…",
              file=sys.stderr, flush=True)
    spec = ChunkSpec(next(iter(settings.overrides_by_variant)), 0, 0, 1)
    play_chunk(settings, spec)


class _Progress:
    """Matches done, matches/s and ETA on the terminal (quiet when disabled)."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.enabled, self.done = total, enabled and total > 0, 0
        self._progress = None

    def __enter__(self):
        if self.enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(TextColumn("matches"), BarColumn(), MofNCompleteColumn(),
                                      TextColumn("{task.fields[rate]} matches/s"),
                                      TimeElapsedColumn(), TextColumn("ETA"),
                                      TimeRemainingColumn())
            self._progress.__enter__()
            self._task = self._progress.add_task("sweep", total=self.total, rate="–")
            self._t0 = time.perf_counter()
        return self

    def advance(self, n: int) -> None:
        self.done += n
        if self._progress is not None:
            rate = self.done / max(time.perf_counter() - self._t0, 1e-9)
            self._progress.update(self._task, advance=n, rate=f"{rate:.0f}")

    def __exit__(self, *exc):
        if self._progress is not None:
            self._progress.__exit__(*exc)
        return False

"""`sim sweep`: an experiment's chunks on worker processes (this machine) or a Dask
cluster, with a lock on the run folder, verified resume, bounded retries, clean
stops on SIGTERM/SIGINT, progress, provenance and a summary.

Each worker plays a chunk (sim.runner.chunk) with tables the parent resolved once
and writes its Parquet files itself (sim.outputs.store), so only a small summary
per chunk travels back and the parent's memory stays flat however many matches
run. With one job and no pool given the chunks are played in this process.

What can go wrong, and what happens:
- a chunk's files are missing, short or corrupt, or its marker is garbage: resume
  says so and plays the chunk again (sim.outputs.store.verify_run);
- a second sweep into the same folder: refused while the first holds the lock;
- the tables file changes: the running sweep never sees it (tables are fixed at
  the start); resuming on the changed file is refused;
- SIGTERM or SIGINT: workers are stopped, finished chunks kept, SweepInterrupted;
- a worker dies or cannot write: its chunk is tried again, up to MAX_ATTEMPTS,
  then its matches become error rows and the sweep goes on.

This module runs one sweep from start to summary (`run_sweep`); its parts live
beside it and their names are importable from here too:
- sim.runner.runfolder: fingerprint, provenance, the folder's refusals and the plan
  of the chunks left to play;
- sim.runner.dispatch: the chunk task, the dispatch loop with its retries, the Dask
  executor;
- sim.runner.signals: stop_on_signals and SweepInterrupted;
- sim.runner.progress: the progress bar and the engine's cold compile (estimate,
  warm_engine).
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from sim.jitcache import engine_cached
from sim.outputs.lock import LOCK_NAME, RunLocked, run_lock
from sim.outputs.provenance import now
from sim.outputs.storage import absolute, is_remote, run_path
from sim.outputs.store import (
    StorageError,
    atomic_write_text,
    clear_tmp,
    storage_problem,
    verify_run,
)
from sim.runner.chunk import settings_for
from sim.runner.dispatch import (
    MAX_ATTEMPTS,
    DaskExecutor,
    dask_client,
    dispatch_chunks,
    local_cluster_options,
    run_chunk,
)
from sim.runner.experiments import Experiment
from sim.runner.pool import SWEEP_MODULES, LocalPool
from sim.runner.progress import _Progress, after_cold_compile, compile_estimate, warm_engine
from sim.runner.runfolder import (
    RunFolderMismatch,
    SweepError,
    fingerprint,
    fingerprint_matches,
    item_order,
    open_run_folder,
    prepare_folder,
    provenance,
    refuse_foreign_folder,
)
from sim.runner.signals import SweepInterrupted, stop_on_signals

__all__ = [
    "BACKENDS", "MAX_ATTEMPTS", "RunFolderMismatch", "SweepError", "SweepInterrupted",
    "_Progress", "after_cold_compile", "compile_estimate", "engine_cached", "fingerprint",
    "fingerprint_matches", "item_order", "local_cluster_options", "prepare_folder",
    "provenance", "refuse_foreign_folder", "run_chunk", "run_sweep", "stop_on_signals",
    "warm_engine",
]

BACKENDS = ("local", "dask")


def run_sweep(experiment: Experiment, out: Path, jobs: int = 1, backend: str = "local",
              scheduler: str | None = None, chunk_size: int | None = None,
              progress: bool = True, on_chunk=None, replace_stale: bool = False,
              retry_errors: bool = False, say=None, command: str = "",
              pool: LocalPool | None = None) -> dict[str, Any]:
    """Run (or resume) every chunk not yet written intact; returns the run's summary.

    Raises SweepError (one line) when the sweep cannot start, SweepInterrupted on
    SIGTERM/SIGINT. `say` prints one line of news (default: stderr). `pool`: the
    workers to play on with the local backend (shared_pool), left running for the
    caller's next sweep, which then skips their start (imports and loading the engine,
    some 0.75 s); killed only when this sweep ends in an exception. A pool is played on
    whatever `jobs` says (a one-worker pool is how `sim bench sweep` times one worker);
    without one, one job plays in this process."""
    say = say or (lambda line: print(line, file=sys.stderr, flush=True))
    backend = "local" if backend == "loky" else backend  # the former name of the local pool
    if backend not in BACKENDS:
        raise SweepError(f"--backend {backend}: choose local or dask")
    chunk_size = chunk_size or experiment.spec.chunk_size
    out = absolute(run_path(out))  # workers may run anywhere: never a relative path
    with stop_on_signals(), contextlib.ExitStack() as remote:
        # a scheduler address is input: check it before any folder is made
        client = dask_client(remote, jobs, scheduler) if backend == "dask" and scheduler \
            else None
        try:
            if not is_remote(out):  # an object store has no folders to make
                out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SweepError(f"{out}: cannot create the run folder ({exc.strerror})") from None
        refuse_foreign_folder(out)  # before the lock file, which would be litter there
        lock = run_lock(out, command)
        try:
            lock.acquire()
        except RunLocked as exc:
            raise SweepError(str(exc)) from None
        except OSError as exc:  # a read-only folder (or a full disk) takes no lock file
            raise SweepError(storage_problem(out, exc, LOCK_NAME) or
                             f"{out}: cannot lock the run folder ({exc.strerror})") from None
        try:
            if lock.took_over:
                say(lock.took_over)
            return _run_locked(experiment, out, jobs, backend, client, chunk_size,
                               progress, on_chunk, replace_stale, retry_errors, say, pool)
        except StorageError as exc:  # the provenance, or a chunk played in this process
            raise SweepError(str(exc)) from None
        except SweepInterrupted as exc:
            exc.out = out
            exc.written = len(list((out / "_done").glob("*.json"))) \
                if (out / "_done").is_dir() else 0
            exc.planned = len(experiment.chunks(chunk_size))
            raise
        finally:
            lock.release()


def _run_locked(experiment, out, jobs, backend, client, chunk_size, progress, on_chunk,
                replace_stale, retry_errors, say, pool=None) -> dict[str, Any]:
    with contextlib.ExitStack() as stack:
        own = None
        if backend == "local" and jobs > 1 and pool is None:
            # started first: the workers' own start (an interpreter, the engine's
            # imports) runs while this process checks the folder and writes its
            # provenance, and they wait for their first chunk. Killed on the way out
            # of an exception before they play; with nothing to play (a finished run)
            # stopped at once, never having been handed a chunk.
            own = LocalPool(jobs, preload=SWEEP_MODULES).start()
            stack.push(lambda kind, *_: own.close(kill=kind is not None))
        return _run_prepared(experiment, out, jobs, backend, client, chunk_size, progress,
                             on_chunk, replace_stale, retry_errors, say, pool, own)


def _run_prepared(experiment, out, jobs, backend, client, chunk_size, progress, on_chunk,
                  replace_stale, retry_errors, say, pool, own) -> dict[str, Any]:
    prov, all_chunks, todo = open_run_folder(experiment, out, chunk_size, jobs, backend,
                                             replace_stale, retry_errors, say)
    settings = settings_for(experiment, out, prov.get("run_id"))
    tables = {v.id: v.tables for v in experiment.variants}
    total = sum(c.stop - c.start for c in todo)
    t0 = time.perf_counter()
    bar = _Progress(total, enabled=progress)
    stack = contextlib.ExitStack()
    with stack, bar:
        executor = None
        if todo and backend == "dask":
            executor = DaskExecutor(client or dask_client(stack, jobs, None))
        if todo and executor is None:
            executor = pool if pool is not None else own
        if executor is not None:
            # on the way out of an exception (a signal, a bug) kill the workers: what they
            # are writing is redone on resume; after the last chunk they stop politely,
            # unless they are the caller's, who plays its next sweep on them
            shared = executor is pool
            stack.push(lambda kind, *_: None if shared and kind is None
                       else executor.close(kill=kind is not None))
        compile_s = None
        if todo and client is None:  # workers on this machine: compile once, here first
            compile_s = warm_engine(settings, todo, tables, bar, say)
        bar.start()
        t_matches = time.perf_counter()
        written: dict[tuple[str, int], dict[str, Any]] = {}
        played = dispatch_chunks(todo, executor, settings, tables, out, bar, on_chunk, say,
                                 written)
    seconds = time.perf_counter() - t0
    match_s = time.perf_counter() - t_matches if todo else 0.0
    return _summary(out, prov, written, len(all_chunks) - len(todo), played, seconds, match_s,
                    compile_s)


def _summary(out: Path, prov: dict[str, Any], written: dict[tuple[str, int], dict[str, Any]],
             resumed: int, played: int, seconds: float, match_s: float,
             compile_s: float | None) -> dict[str, Any]:
    """Check the folder as the sweep left it and record the run's summary (and, when
    every planned chunk is written, when it finished) in its provenance."""
    clear_tmp(out)
    check = verify_run(out, prov, written)
    result = {
        "out": str(out), "chunks": len(check.done), "chunks_planned": len(check.planned),
        "chunks_resumed": resumed,
        "planned": check.planned_matches, "matches": check.matches, "errors": check.errors,
        "missing": check.planned_matches - check.matches - check.errors,
        "problems": check.problems(), "played_now": played, "seconds": round(seconds, 3),
        "compile_s": None if compile_s is None else round(compile_s, 1),
        # the rate of the matches themselves: a first run's compile is not play
        "matches_per_s": round(played / match_s, 1) if match_s > 0 and played else None,
    }
    prov["finished"] = now() if check.complete else None
    prov["summary"] = result
    atomic_write_text(out, out / "provenance.json", json.dumps(prov, indent=1, sort_keys=True))
    return result

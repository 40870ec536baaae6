"""Playing a sweep's chunks: the task a worker runs (`run_chunk`: play a chunk, write
its tables), the loop that hands the chunks to an executor and tries a failed one
again (`dispatch_chunks`), and the executor over a Dask cluster. The local executor
is sim.runner.pool.LocalPool; with one job and no pool the chunks are played in the
calling process.
"""

from __future__ import annotations

import collections
import contextlib
import os
import time
from pathlib import Path
from typing import Any

from sim.outputs.storage import is_remote, run_path
from sim.outputs.store import RunError, StorageError, check_reachable, commit_chunk, write_chunk
from sim.rules.tables import Tables
from sim.runner.chunk import RunSettings, error_frames, play_chunk
from sim.runner.experiments import ChunkSpec
from sim.runner.pool import Outcome
from sim.runner.progress import _Progress
from sim.runner.runfolder import SweepError

MAX_ATTEMPTS = 3


def run_chunk(settings: RunSettings, spec: ChunkSpec, tables: Tables, play=None,
              ) -> dict[str, Any]:
    """Play one chunk and write its tables (in the worker); returns its done marker
    (its small summary with each part's rows, bytes and checksum). Fails at once,
    before playing, where the run folder cannot be seen. On an object store the
    worker writes only the parts; the parent commits the marker (dispatch_chunks)."""
    out = run_path(settings.out)
    check_reachable(out, settings.run_id)
    frames, summary = play_chunk(settings, spec, tables, play)
    return write_chunk(out, spec.variant, spec.chunk, frames, summary,
                       settings.run_id, settings.tables_out)


def dispatch_chunks(todo: list[ChunkSpec], executor, settings: RunSettings,
              tables: dict[str, Tables], out: Path, bar: _Progress, on_chunk, say,
              written: dict[tuple[str, int], dict[str, Any]]) -> int:
    """Play every chunk of `todo`; returns the matches played. Each chunk's done
    marker, as its writer returned it, goes into `written` (on an object store,
    written here once its parts are checked: commit_chunk, several at once)."""
    played = 0

    def finished(marker: dict[str, Any], spec: ChunkSpec, commit: bool = True) -> None:
        nonlocal played
        if commit:
            commit_chunk(out, marker)
        written[(spec.variant, spec.chunk)] = marker
        played += spec.stop - spec.start
        bar.advance(spec.stop - spec.start)
        if on_chunk is not None:
            on_chunk(marker)

    if executor is None:  # one job: in this process
        for spec in todo:
            try:
                finished(run_chunk(settings, spec, tables[spec.variant]), spec)
            except StorageError as exc:  # its line names the folder and the free space
                raise SweepError(str(exc)) from None
            except (OSError, RunError) as exc:
                raise SweepError(f"{out}: cannot write chunk {spec.variant}/{spec.chunk}: "
                                 f"{exc}") from None
        return played
    queue = collections.deque(todo)
    attempts: collections.Counter = collections.Counter()
    commits = _Commits(out) if is_remote(out) else None
    try:
        while queue or executor.busy() or (commits and commits.pending):
            while queue and executor.idle():
                spec = queue.popleft()
                executor.submit(spec, run_chunk, settings, spec, tables[spec.variant])
            outcomes = executor.wait(timeout=0.05 if commits and commits.pending else 1.0)
            if commits is not None:
                outcomes += commits.done(timeout=0.0 if executor.busy() else 0.5)
            for outcome in outcomes:
                spec = outcome.task
                if outcome.kind == "ok" and commits is not None:
                    commits.submit(spec, outcome.value)  # checked, then "committed"
                elif outcome.kind in ("ok", "committed"):
                    finished(outcome.value, spec, commit=False)
                elif outcome.kind != "died" and _is_storage_error(outcome.value):
                    # a full or read-only disk: stop now; another attempt, or the error
                    # rows written after the last one, would be played for nothing or
                    # not fit
                    raise SweepError(outcome.value.split(": ", 1)[1])
                elif (message := _retry_or_give_up(outcome, queue, attempts, say)) is not None:
                    _error_rows(spec, message, settings, tables, out, finished)
            bar.tick()
    finally:
        if commits is not None:
            commits.close()
    return played


def _label(spec: ChunkSpec) -> str:
    return f"chunk {spec.variant}/{spec.chunk} (matches {spec.start}–{spec.stop - 1})"


def _retry_or_give_up(outcome: Outcome, queue: collections.deque,
                      attempts: collections.Counter, say) -> str | None:
    """A chunk that failed: queued again (None), or, after MAX_ATTEMPTS, the message
    its matches' error rows carry."""
    spec = outcome.task
    what = f"its worker {outcome.value}" if outcome.kind == "died" else outcome.value
    attempts[spec] += MAX_ATTEMPTS if outcome.kind == "final" else 1
    if attempts[spec] < MAX_ATTEMPTS:
        say(f"{_label(spec)}: {what}; trying again ({attempts[spec] + 1} of {MAX_ATTEMPTS})")
        queue.appendleft(spec)
        return None
    message = f"chunk not played: {what} (gave up after {MAX_ATTEMPTS} attempts)"
    say(f"{_label(spec)}: {message}; its {spec.stop - spec.start} matches are recorded as "
        "errors")
    return message


def _error_rows(spec: ChunkSpec, message: str, settings: RunSettings,
                tables: dict[str, Tables], out: Path, finished) -> None:
    """Write a chunk that could not be played as error rows (here, in the parent)."""
    summary = {"variant": spec.variant, "chunk": spec.chunk, "start": spec.start,
               "stop": spec.stop, "matches": 0, "errors": spec.stop - spec.start,
               "seconds": 0.0, "tables_hash": tables[spec.variant].hash}
    try:
        finished(write_chunk(out, spec.variant, spec.chunk,
                             error_frames(settings, spec, message), summary,
                             settings.run_id, settings.tables_out), spec)
    except StorageError as exc:
        raise SweepError(str(exc)) from None
    except (OSError, RunError) as exc:
        raise SweepError(f"{out}: cannot write the error rows of {_label(spec)}: "
                         f"{exc}") from None


class _Commits:
    """The parent's checks of the chunks its workers wrote to an object store
    (commit_chunk: read every part back, hash it, write the marker), THREADS at once.
    A check is mostly waiting for the store, so one after another they bounded the
    sweep at some chunk_size / 0.09 s matches a second (docs/scale-out.md). A check
    that fails is the chunk's failure: it is tried again."""

    THREADS = 16

    def __init__(self, out: Path):
        from concurrent.futures import ThreadPoolExecutor

        self.out = out
        self.pool = ThreadPoolExecutor(self.THREADS, thread_name_prefix="sim-commit")
        self.pending: dict[Any, tuple[ChunkSpec, dict[str, Any]]] = {}

    def submit(self, spec: ChunkSpec, marker: dict[str, Any]) -> None:
        self.pending[self.pool.submit(commit_chunk, self.out, marker)] = (spec, marker)

    def done(self, timeout: float) -> list[Outcome]:
        """The checks finished within `timeout`: "committed" (value: the marker) or
        "error" (value: why)."""
        from concurrent.futures import FIRST_COMPLETED, wait

        if not self.pending:
            return []
        out = []
        for future in wait(list(self.pending), timeout, FIRST_COMPLETED).done:
            spec, marker = self.pending.pop(future)
            exc = future.exception()
            if exc is None:
                out.append(Outcome(spec, "committed", marker))
            elif isinstance(exc, (OSError, RunError)):  # its parts are not as reported
                out.append(Outcome(spec, "error", f"{type(exc).__name__}: {exc}"))
            else:
                raise exc
        return out

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)



def _is_storage_error(text: str) -> bool:
    """Whether a worker's one-line error (`module.Class: message` from a local worker,
    `Class: message` from Dask) is a StorageError."""
    kind, sep, _ = text.partition(": ")
    return bool(sep) and kind.rpartition(".")[2] == StorageError.__name__


class DaskExecutor:
    """The LocalPool interface over a Dask client. Dask retries a task whose worker
    died (distributed.scheduler.allowed-failures) before it gives up with KilledWorker,
    so such a failure is final here."""

    def __init__(self, client):
        self.client = client
        self.futures: dict[Any, Any] = {}

    def idle(self) -> int:
        return 1 << 30  # the scheduler queues tasks itself

    def busy(self) -> int:
        return len(self.futures)

    def submit(self, task: ChunkSpec, fn, *args) -> None:
        future = self.client.submit(fn, *args, pure=False,
                                    key=f"sim-chunk-{task.variant}-{task.chunk}-{time.time_ns()}")
        self.futures[future] = task

    def wait(self, timeout: float | None = None) -> list[Outcome]:
        from distributed import wait
        from distributed.scheduler import KilledWorker

        if not self.futures:
            return []
        try:
            done = wait(list(self.futures), timeout=timeout, return_when="FIRST_COMPLETED").done
        except TimeoutError:
            return []
        out = []
        for future in done:
            task = self.futures.pop(future)
            if future.status == "finished":
                out.append(Outcome(task, "ok", future.result()))
                continue
            exc = future.exception() if future.status == "error" else None
            if isinstance(exc, KilledWorker):
                out.append(Outcome(task, "final", "its Dask workers kept dying (KilledWorker)"))
            elif exc is not None:
                out.append(Outcome(task, "error", f"{type(exc).__name__}: {exc}"))
            else:
                out.append(Outcome(task, "died", f"the Dask task was {future.status}"))
        return out

    def pids(self) -> list[int]:
        return []

    def close(self, kill: bool = False) -> None:
        if self.futures:
            self.client.cancel(list(self.futures))
        self.futures.clear()


def local_cluster_options(jobs: int) -> dict[str, Any]:
    """A LocalCluster on 127.0.0.1 with free ports and no dashboard. Dask's scheduler
    starts an HTTP server on 8787 even without a dashboard unless told otherwise, and
    warns when 8787 is taken; nothing here may depend on a fixed port."""
    return {"n_workers": jobs, "threads_per_worker": 1, "processes": True,
            "host": "127.0.0.1", "scheduler_port": 0, "dashboard_address": None,
            "worker_dashboard_address": None,
            "scheduler_kwargs": {"dashboard": False, "dashboard_address": "127.0.0.1:0"}}


def dask_client(stack: contextlib.ExitStack, jobs: int, scheduler: str | None):
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - depends on the install
        raise SweepError("--backend dask needs `pip install 'dask[distributed]'`") from None
    if scheduler:
        try:
            return stack.enter_context(Client(scheduler, timeout="20s"))
        except (OSError, TimeoutError, ValueError) as exc:
            raise SweepError(f"--scheduler {scheduler}: cannot connect ({exc})") from None
    # the cluster's nannies write their pre-spawn settings (MALLOC_TRIM_THRESHOLD_,
    # OMP_NUM_THREADS, PYTHONHASHSEED) into this process's environment and leave them: a
    # later local sweep from the same process (a notebook, a test session) would start
    # its workers with them and take them for the user's own (keep_freed_memory)
    stack.callback(_restore_environ, _dask_pre_spawn_keys())
    cluster = stack.enter_context(LocalCluster(**local_cluster_options(jobs)))
    return stack.enter_context(Client(cluster))


def _dask_pre_spawn_keys() -> dict[str, str | None]:
    """The environment variables Dask's nannies set in the process that starts them
    (their pre-spawn settings, and a PYTHONHASHSEED), with this process's values now."""
    import dask

    keys = [*(dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {}),
            "PYTHONHASHSEED"]
    return {key: os.environ.get(key) for key in keys}


def _restore_environ(saved: dict[str, str | None]) -> None:
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value

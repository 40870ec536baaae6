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
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import shutil
import signal
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from sim.jitcache import engine_cached
from sim.outputs.lock import LOCK_NAME, RunLock, RunLocked
from sim.outputs.provenance import code_version, now, package_versions
from sim.outputs.schemas import WRITTEN
from sim.outputs.store import (
    RunError,
    atomic_write_text,
    check_reachable,
    clear_tmp,
    marker_path,
    remove_chunk,
    verify_run,
    write_chunk,
)
from sim.rules.tables import Tables
from sim.runner.chunk import RunSettings, error_frames, play_chunk, settings_for
from sim.runner.experiments import ChunkSpec, Experiment, Variant
from sim.runner.pool import SWEEP_MODULES, LocalPool, Outcome

MAX_ATTEMPTS = 3
BACKENDS = ("local", "dask")


class SweepError(Exception):
    """The sweep cannot start or go on: one line naming the folder or option."""


class RunFolderMismatch(SweepError):
    """The output folder holds a run of another experiment, tables, code or chunking."""


class SweepInterrupted(BaseException):
    """SIGTERM or SIGINT stopped the sweep (a BaseException, so that no `except
    Exception` around a match can swallow it). Finished chunks are on disk."""

    def __init__(self, signum: int, out: Path | None = None, written: int = 0,
                 planned: int = 0):
        super().__init__(signal.Signals(signum).name)
        self.signum, self.out, self.written, self.planned = signum, out, written, planned

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def run_chunk(settings: RunSettings, spec: ChunkSpec, tables: Tables, play=None,
              ) -> dict[str, Any]:
    """Play one chunk and write its tables (in the worker); returns its done marker
    (its small summary with each part's rows, bytes and checksum). Fails at once,
    before playing, where the run folder cannot be seen."""
    check_reachable(Path(settings.out), settings.run_id)
    frames, summary = play_chunk(settings, spec, tables, play)
    return write_chunk(Path(settings.out), spec.variant, spec.chunk, frames, summary,
                       settings.run_id)


def fingerprint(experiment: Experiment, chunk_size: int) -> dict[str, Any]:
    """What must match for a resumed run to continue an existing folder."""
    return {"experiment_hash": experiment.text_hash, "chunk_size": chunk_size,
            "code": {k: v for k, v in code_version().items() if k != "dirty"},
            "tables_hashes": {v.id: v.tables_hash for v in experiment.variants}}


def item_order(variant: Variant) -> dict[str, list[str]]:
    """The variant's units, buildings and techs in code order: the order of the `units`
    list column of `turns` and of the item codes in events (docs/outcomes.md)."""
    t = variant.tables
    if t is not None:
        return {"units": t.unit_names, "buildings": t.building_names, "techs": t.tech_names}
    return {k: sorted(variant.resolved.get(k, {})) for k in ("units", "buildings", "techs")}


def provenance(experiment: Experiment, chunk_size: int, jobs: int, backend: str,
               started: str) -> dict[str, Any]:
    spec = experiment.spec
    return {
        # a new id per run folder: workers compare it to tell the run's folder from
        # another folder at the same path on a machine that does not share the storage
        "run_id": uuid.uuid4().hex,
        "fingerprint": fingerprint(experiment, chunk_size),
        "code_version": code_version(),
        "packages": package_versions(),
        "experiment": {"path": experiment.path, "name": spec.name,
                       "description": spec.description,
                       "text": Path(experiment.path).read_text(encoding="utf-8")},
        "tables_path": experiment.tables_path,
        "root_seed": spec.root_seed, "matches_per_variant": spec.matches,
        "seats": experiment.seats, "length": spec.length,
        "personalities": list(experiment.personalities),
        "rotate_personalities": spec.rotate_personalities,
        "streams": "SeedSequence(root_seed, spawn_key=(match_index, purpose)); purposes "
                   "map=0, ai=1, events=2; never the variant",
        "baseline": experiment.baseline,
        "variants": [{"id": v.id, "overrides": v.overrides, "tables_hash": v.tables_hash,
                      "items": item_order(v), "tables": v.resolved,
                      "seat_ai": list(v.seat_ai)}
                     for v in experiment.variants],
        "chunk_size": chunk_size, "jobs": jobs, "backend": backend,
        "started": started, "finished": None,
    }


def _old_fingerprint(out: Path) -> dict[str, Any] | None:
    """The fingerprint of the run in `out`, {} when unreadable, None when there is none."""
    path = out / "provenance.json"
    if not path.exists():
        return None
    try:
        fp = json.loads(path.read_text(encoding="utf-8")).get("fingerprint")
    except (OSError, ValueError, AttributeError):
        return {}
    return fp if isinstance(fp, dict) else {}


def fingerprint_matches(experiment: Experiment, out: Path, chunk_size: int) -> bool:
    """True when `out` has no provenance yet or was made by this experiment, tables, code
    and chunking."""
    old = _old_fingerprint(out)
    return old is None or old == fingerprint(experiment, chunk_size)


def _mismatch(experiment: Experiment, out: Path, old: dict[str, Any],
              fp: dict[str, Any]) -> str:
    fix = "--replace-stale starts afresh (or choose another --out)"
    differs = [k for k in fp if old.get(k) != fp[k]]
    if differs == ["tables_hashes"]:
        was, now_ = old.get("tables_hashes") or {}, fp["tables_hashes"]
        variant = next((v for v in now_ if was.get(v) != now_[v]), next(iter(now_)))
        return (f"{out}: the tables changed since this run started ({experiment.tables_path}: "
                f"variant {variant} had tables hash {was.get(variant, '?')}, now "
                f"{now_[variant]}); restore them to resume, or {fix}")
    if not old:
        return f"{out}: its provenance.json is unreadable or has no fingerprint; {fix}"
    names = {"experiment_hash": "experiment file", "chunk_size": "chunk size",
             "code": "code version", "tables_hashes": "tables"}
    return f"{out}: holds a run with a different {', '.join(names[k] for k in differs)}; {fix}"


def prepare_folder(experiment: Experiment, out: Path, chunk_size: int, jobs: int,
                   backend: str) -> dict[str, Any]:
    """Create or reopen the run folder's provenance; refuses a folder made by something
    else (call with the folder's lock held)."""
    fp = fingerprint(experiment, chunk_size)
    old = _old_fingerprint(out)
    if old is not None:
        if old != fp:
            raise RunFolderMismatch(_mismatch(experiment, out, old, fp))
        prov = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
        prov.update(jobs=jobs, backend=backend)
        if experiment.spec.sequential and prov["matches_per_variant"] != \
                experiment.spec.matches:
            # a sequential sweep's next look: the plan grows before any of its chunks
            # is written, so an interrupted look resumes on the grown plan
            prov["matches_per_variant"] = experiment.spec.matches
            atomic_write_text(out, out / "provenance.json",
                              json.dumps(prov, indent=1, sort_keys=True))
        return prov
    prov = provenance(experiment, chunk_size, jobs, backend, now())
    atomic_write_text(out, out / "provenance.json", json.dumps(prov, indent=1, sort_keys=True))
    return prov


# what a sweep writes in its run folder; anything else there is someone else's
_RUN_ENTRIES = frozenset({*WRITTEN, "_done", ".tmp", "provenance.json", LOCK_NAME})


def _not_ours(out: Path) -> list[str]:
    """The names in `out` a sweep never writes, sorted."""
    return sorted(p.name for p in out.iterdir() if p.name not in _RUN_ENTRIES)


def _clear_folder(out: Path, keep: str) -> None:
    """Remove the run in `out` (everything a sweep writes there but `keep`); what a
    sweep never writes stays (it would not be in `out` unless the run was started
    there by hand beside it: refuse_foreign_folder)."""
    for path in out.iterdir():
        if path.name == keep or path.name not in _RUN_ENTRIES:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def refuse_foreign_folder(out: Path) -> None:
    """SweepError when `out` holds no run but other files: a sweep writes its tables
    only into an empty folder or its own, never among a user's files (whose folder a
    later --replace-stale would then clear)."""
    if (out / "provenance.json").exists():
        return
    others = _not_ours(out)
    if others:
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3
                                          else "")
        raise SweepError(f"{out}: holds files that are not a sweep's ({shown}); give --out "
                         "an empty or new folder")


_REDELIVER_S = 0.02
# Packages whose compiled code calls back into Python and cannot pass an exception on:
# a ctypes callback drops it, llvmlite's finalizers run under LLVM, and polars (Rust)
# panics and exits 1 on an error it did not expect
_NO_RAISE_UNDER = frozenset({"ctypes", "llvmlite", "polars", "pyarrow"})
# ... and functions, by (module, name; None: any of the module's): numba's object-cache
# hooks run under LLVM, a weakref.finalize callback is a finalizer, and a worker started
# halfway reads half its pickled start-up data and prints a traceback
_NO_RAISE_IN = frozenset({("numba.core.codegen", None), ("weakref", "__call__"),
                          ("multiprocessing.process", "start")})


def _unsafe_to_raise(frame) -> bool:
    """True when an exception raised in `frame` could be dropped or crash the process:
    it runs inside an object's __del__, a function of _NO_RAISE_IN or under a package
    of _NO_RAISE_UNDER (anywhere up the stack)."""
    while frame is not None:
        code, module = frame.f_code, frame.f_globals.get("__name__", "")
        if code.co_name == "__del__" or module.partition(".")[0] in _NO_RAISE_UNDER or \
                (module, code.co_name) in _NO_RAISE_IN or (module, None) in _NO_RAISE_IN:
            return True
        frame = frame.f_back
    return False


def _deliver_again(signum: int) -> threading.Timer:
    timer = threading.Timer(_REDELIVER_S, os.kill, (os.getpid(), signum))
    timer.daemon = True  # never holds up the interpreter's exit
    timer.start()
    return timer


@contextlib.contextmanager
def stop_on_signals():
    """SIGTERM and SIGINT raise SweepInterrupted in the main thread while the sweep
    runs. Once one has, both stay ignored until the outermost of these contexts ends,
    so a second signal cannot cut the clean-up (stopping workers, the lock) short.
    A signal that lands where an exception cannot propagate (a finalizer, a callback
    from compiled code) is delivered again every ~20 ms until it lands elsewhere, or,
    when the context ends first, at once to the handler there was before it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signals = (signal.SIGTERM, signal.SIGINT)
    fired = []
    put_off: list[tuple[int, threading.Timer]] = []  # signals to be delivered again

    def handler(signum, frame):
        if _unsafe_to_raise(frame):
            # Python drops an exception raised in a finalizer ("Exception ignored in"),
            # one cut into llvmlite's ObjectRef.__del__ halfway crashed a sweep later
            # (SIGSEGV), and one raised in a callback from polars made it panic:
            # deliver it again until it lands in plain Python
            put_off.append((signum, _deliver_again(signum)))
            return
        for s in signals:
            signal.signal(s, signal.SIG_IGN)
        fired.append(signum)
        raise SweepInterrupted(signum)

    previous_hook = sys.unraisablehook

    def unraisable(info) -> None:
        # the same for a raise that Python dropped anyway (a ctypes callback, a
        # finalizer the frame walk missed): listen again and deliver it again
        if isinstance(info.exc_value, SweepInterrupted) and \
                info.exc_value.signum in fired:
            fired.remove(info.exc_value.signum)
            for s in signals:
                signal.signal(s, handler)
            put_off.append((info.exc_value.signum, _deliver_again(info.exc_value.signum)))
            return
        previous_hook(info)

    old = {s: signal.signal(s, handler) for s in signals}
    outermost = not any(h is not None and getattr(h, "__qualname__", "").startswith(
        "stop_on_signals.") for h in old.values())
    sys.unraisablehook = unraisable
    try:
        yield
    finally:
        for _signum, timer in put_off:
            timer.cancel()
        sys.unraisablehook = previous_hook
        if not fired or outermost:
            for s, h in old.items():
                signal.signal(s, h)
        if put_off and not fired:
            # put off, and the sweep over before it came again: whoever handled the
            # signal before the sweep gets it now (an outer sweep's handler, sim's own:
            # exit 128 + signum), never lost to an interpreter that exits first
            os.kill(os.getpid(), put_off[0][0])


class _DaskExecutor:
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


def _dask_client(stack: contextlib.ExitStack, jobs: int, scheduler: str | None):
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
    out = Path(out).absolute()  # workers may run anywhere: never a relative path
    with stop_on_signals(), contextlib.ExitStack() as remote:
        # a scheduler address is input: check it before any folder is made
        client = _dask_client(remote, jobs, scheduler) if backend == "dask" and scheduler \
            else None
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SweepError(f"{out}: cannot create the run folder ({exc.strerror})") from None
        refuse_foreign_folder(out)  # before the lock file, which would be litter there
        lock = RunLock(out, command)
        try:
            lock.acquire()
        except RunLocked as exc:
            raise SweepError(str(exc)) from None
        try:
            if lock.took_over:
                say(lock.took_over)
            return _run_locked(experiment, out, jobs, backend, client, chunk_size,
                               progress, on_chunk, replace_stale, retry_errors, say, pool)
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


def _orphans(out: Path) -> list[str]:
    """What a run wrote in `out` (chunks, markers) when its provenance.json is gone:
    nothing then says which experiment, tables and code made them."""
    if (out / "provenance.json").exists():
        return []
    return sorted(p.name for p in out.iterdir()
                  if p.name in _RUN_ENTRIES and p.name not in (LOCK_NAME, ".tmp"))


def _run_prepared(experiment, out, jobs, backend, client, chunk_size, progress, on_chunk,
                  replace_stale, retry_errors, say, pool, own) -> dict[str, Any]:
    if replace_stale and (_orphans(out) or
                          not fingerprint_matches(experiment, out, chunk_size)):
        say(f"{out}: holds another run; starting afresh")
        _clear_folder(out, keep=LOCK_NAME)
    if orphans := _orphans(out):
        # resumed, they would count as this experiment's, whatever wrote them
        raise RunFolderMismatch(
            f"{out}: holds a run's {', '.join(orphans)} but no provenance.json, so nothing "
            "says which experiment, tables and code wrote them; --replace-stale starts "
            "afresh (or choose another --out)")
    prov = prepare_folder(experiment, out, chunk_size, jobs, backend)
    clear_tmp(out)
    check = verify_run(out, prov)
    if check.foreign:
        raise SweepError(f"{out}: {check.foreign[0].relative_to(out)} belongs to no chunk of "
                         "this run; remove it (or use --replace-stale to start afresh)")
    for c, why in check.damaged:
        say(f"{out}: {c.label}: {why}; playing it again")
        remove_chunk(out, c.variant, c.chunk)
    redo = {(c.variant, c.chunk) for c in check.pending} | \
        {(c.variant, c.chunk) for c, _ in check.damaged}
    if retry_errors:
        failed = {k: m for k, m in check.done.items() if m["parts"]["errors"]["rows"]}
        if failed:
            say(f"{out}: retrying {sum(m['parts']['errors']['rows'] for m in failed.values())} "
                f"failed matches in {len(failed)} chunk{'s' if len(failed) != 1 else ''}")
        for variant, chunk in failed:  # pending now: an interrupted retry is redone again
            marker_path(out, variant, chunk).unlink()
        redo |= set(failed)
    all_chunks = experiment.chunks(chunk_size)
    todo = [c for c in all_chunks if (c.variant, c.chunk) in redo]
    settings = settings_for(experiment, out, prov.get("run_id"))
    tables = {v.id: v.tables for v in experiment.variants}
    total = sum(c.stop - c.start for c in todo)
    t0 = time.perf_counter()
    bar = _Progress(total, enabled=progress)
    stack = contextlib.ExitStack()
    with stack, bar:
        executor = None
        if todo and backend == "dask":
            executor = _DaskExecutor(client or _dask_client(stack, jobs, None))
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
            compile_s = warm_engine(settings, todo[0], tables[todo[0].variant], bar, say)
        bar.start()
        t_matches = time.perf_counter()
        written: dict[tuple[str, int], dict[str, Any]] = {}
        played = _dispatch(todo, executor, settings, tables, out, bar, on_chunk, say, written)
    seconds = time.perf_counter() - t0
    match_s = time.perf_counter() - t_matches if todo else 0.0
    clear_tmp(out)
    check = verify_run(out, prov, written)
    result = {
        "out": str(out), "chunks": len(check.done), "chunks_planned": len(check.planned),
        "chunks_resumed": len(all_chunks) - len(todo),
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


def _dispatch(todo: list[ChunkSpec], executor, settings: RunSettings,
              tables: dict[str, Tables], out: Path, bar: _Progress, on_chunk, say,
              written: dict[tuple[str, int], dict[str, Any]]) -> int:
    """Play every chunk of `todo`; returns the matches played. Each chunk's done
    marker, as its writer returned it, goes into `written`."""
    played = 0

    def finished(marker: dict[str, Any], spec: ChunkSpec) -> None:
        nonlocal played
        written[(spec.variant, spec.chunk)] = marker
        played += spec.stop - spec.start
        bar.advance(spec.stop - spec.start)
        if on_chunk is not None:
            on_chunk(marker)

    if executor is None:  # one job: in this process
        for spec in todo:
            try:
                summary = run_chunk(settings, spec, tables[spec.variant])
            except (OSError, RunError) as exc:
                raise SweepError(f"{out}: cannot write chunk {spec.variant}/{spec.chunk}: "
                                 f"{exc}") from None
            finished(summary, spec)
        return played
    queue = collections.deque(todo)
    attempts: collections.Counter = collections.Counter()
    while queue or executor.busy():
        while queue and executor.idle():
            spec = queue.popleft()
            executor.submit(spec, run_chunk, settings, spec, tables[spec.variant])
        for outcome in executor.wait(timeout=1.0):
            spec = outcome.task
            if outcome.kind == "ok":
                finished(outcome.value, spec)
                continue
            label = f"chunk {spec.variant}/{spec.chunk} (matches {spec.start}–{spec.stop - 1})"
            what = f"its worker {outcome.value}" if outcome.kind == "died" else outcome.value
            attempts[spec] += MAX_ATTEMPTS if outcome.kind == "final" else 1
            if attempts[spec] < MAX_ATTEMPTS:
                say(f"{label}: {what}; trying again ({attempts[spec] + 1} of {MAX_ATTEMPTS})")
                queue.appendleft(spec)
                continue
            message = f"chunk not played: {what} (gave up after {MAX_ATTEMPTS} attempts)"
            say(f"{label}: {message}; its {spec.stop - spec.start} matches are recorded as "
                "errors")
            summary = {"variant": spec.variant, "chunk": spec.chunk, "start": spec.start,
                       "stop": spec.stop, "matches": 0, "errors": spec.stop - spec.start,
                       "seconds": 0.0, "tables_hash": tables[spec.variant].hash}
            try:
                summary = write_chunk(out, spec.variant, spec.chunk,
                                      error_frames(settings, spec, message), summary,
                                      settings.run_id)
            except (OSError, RunError) as exc:
                raise SweepError(f"{out}: cannot write the error rows of {label}: "
                                 f"{exc}") from None
            finished(summary, spec)
        bar.tick()
    return played


# a cold first match on this 2-core VM (tools/start_times.py, 2026-12-07)
_DEFAULT_COMPILE_S = 60.0


def _compile_record() -> Path:
    from sim.jitcache import cache_dir

    return cache_dir().parent / "last-compile-seconds"


def compile_estimate() -> tuple[float, str]:
    """Seconds a cold compile takes here: the last one measured on this machine, or a
    first guess."""
    try:
        seconds = float(_compile_record().read_text())
    except (OSError, ValueError):
        seconds = 0.0
    if seconds >= 1:  # less was no compile (the code, edited mid-run, was in memory)
        return seconds, "the last compile on this machine"
    return (_DEFAULT_COMPILE_S,
            "a first guess; later runs load the cache in about a second")


def warm_engine(settings: RunSettings, spec: ChunkSpec, tables: Tables, bar: _Progress,
                say) -> float | None:
    """On a cold cache, compile the engine once in this process before any chunk is
    played, so the workers load the cache instead of all compiling at once; says so
    first with an estimate and returns the compile's seconds. On a warm cache, nothing
    (None): whoever plays the first chunk loads the engine, and a parent whose workers
    play has no use for it."""
    from sim.jitcache import cache_dir

    if engine_cached():
        return None
    estimate, basis = compile_estimate()
    say(f"compiling the engine once: about {estimate:.0f} s ({basis}); cached afterwards "
        f"in {cache_dir()}")
    bar.compiling(estimate)
    t0 = time.perf_counter()
    play_chunk(settings, ChunkSpec(spec.variant, 0, spec.start, spec.start + 1), tables)
    seconds = time.perf_counter() - t0
    bar.compiled(seconds)
    say(f"engine compiled in {seconds:.0f} s")
    after_cold_compile(seconds, say)
    return seconds


def after_cold_compile(seconds: float, say) -> None:
    """Record a cold compile's seconds for the next estimate, and remove the caches of
    other versions of the compiled code beyond the few most recent (sim.jitcache.prune_caches),
    saying so."""
    from sim.jitcache import cache_dir, prune_caches

    with contextlib.suppress(OSError):
        _compile_record().write_text(f"{seconds:.1f}\n")
    try:
        removed, freed = prune_caches()
    except OSError:
        return
    if removed:
        say(f"removed {removed} compiled cache(s) of other code versions ({freed / 1e6:.0f} MB) "
            f"from {cache_dir().parent}")


def _clock(seconds: float) -> str:
    seconds = max(0, round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class _Progress:
    """Matches done, matches/s and an ETA that counts a compile still to finish. A rich
    bar on a terminal; on a pipe (cron, CI logs) a plain line every `interval` s."""

    def __init__(self, total: int, enabled: bool, interval: float = 15.0):
        self.total, self.enabled, self.done = total, enabled and total > 0, 0
        self.interval = interval
        self._progress = None
        self._compile: tuple[float, float] | None = None  # (started, estimate)
        self._last = time.perf_counter()
        self._started_matches: float | None = None
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()

    def eta(self) -> str:
        """Time left: the compile's remainder (if compiling) plus the matches' at the
        rate so far (unknown before the first chunk)."""
        now_ = time.perf_counter()
        left = 0.0
        if self._compile is not None:
            started, estimate = self._compile
            left += max(estimate - (now_ - started), 5.0)
        if self.done and self._started_matches is not None:
            rate = self.done / max(now_ - self._started_matches, 1e-9)
            return _clock(left + (self.total - self.done) / rate)
        return f"{_clock(left)}+" if left else "–"  # + the matches, at a rate not known yet

    def rate(self) -> str:
        if not self.done or self._started_matches is None:
            return "–"
        return f"{self.done / max(time.perf_counter() - self._started_matches, 1e-9):.0f}"

    def __enter__(self):
        if not self.enabled:
            return self
        if sys.stderr.isatty():
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                ProgressColumn,
                TextColumn,
                TimeElapsedColumn,
            )
            from rich.text import Text

            outer = self

            class _Eta(ProgressColumn):
                def render(self, task) -> Text:
                    return Text(f"ETA {outer.eta()}")

            class _Rate(ProgressColumn):
                def render(self, task) -> Text:
                    return Text(f"{outer.rate()} matches/s")

            self._progress = Progress(TextColumn("matches"), BarColumn(), MofNCompleteColumn(),
                                      _Rate(), TimeElapsedColumn(), _Eta(),
                                      TextColumn("{task.fields[note]}"), transient=False)
            self._progress.__enter__()
            self._task = self._progress.add_task("sweep", total=self.total, note="")
        return self

    def compiling(self, estimate: float) -> None:
        self._compile = (time.perf_counter(), estimate)
        if self._progress is not None:
            self._progress.update(self._task, note="(compiling the engine; then the matches)")
        elif self.enabled:
            # the main thread is inside numba's compiler: a thread keeps the log alive
            def tick():
                while not self._stop.wait(self.interval):
                    started, est = self._compile or (0, 0)
                    print(f"compiling the engine: {time.perf_counter() - started:.0f} s of "
                          f"about {est:.0f} s; ETA {self.eta()}", file=sys.stderr, flush=True)

            self._ticker = threading.Thread(target=tick, daemon=True)
            self._ticker.start()

    def compiled(self, seconds: float) -> None:
        self._compile = None
        self._stop.set()
        if self._progress is not None:
            self._progress.update(self._task, note="")

    def start(self) -> None:
        """The matches start now (after any compile): the rate counts from here."""
        self._started_matches = self._last = time.perf_counter()

    def advance(self, n: int) -> None:
        self.done += n
        if self._progress is not None:
            self._progress.update(self._task, advance=n)

    def tick(self) -> None:
        if not self.enabled or self._progress is not None:
            return
        now_ = time.perf_counter()
        if now_ - self._last >= self.interval:
            self._last = now_
            print(f"matches {self.done}/{self.total} ({self.done / self.total:.0%}), "
                  f"{self.rate()} matches/s, ETA {self.eta()}", file=sys.stderr, flush=True)

    def __exit__(self, *exc):
        self._stop.set()
        if self._progress is not None:
            self._progress.__exit__(*exc)
        return False

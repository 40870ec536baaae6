"""The local backend: a few worker processes, one pipe each, one task at a time each.

Why not a generic executor (loky, concurrent.futures): when one of their workers
dies, every task in flight fails with the same "broken pool" error, so a sweep
cannot tell the chunk that killed its worker from its innocent neighbours. Here each
worker holds exactly one task, so a death is charged to that task alone and the
others go on. Workers are children of the sweep that die with it: they ask the
kernel for SIGKILL when their parent dies (Linux), see end-of-file on their pipe
otherwise, and ignore SIGINT (a Ctrl-C reaches the whole process group; the
parent decides what stops).
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing
import os
import signal
import sys
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

_CTX = multiprocessing.get_context("spawn")


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # pragma: no cover - exotic libc
            pass
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
# what a process that plays chunks keeps of the memory they free: about one chunk's
# working set
_KEEP_BYTES = 256 * 2**20
_KEEP_MS = 5000
_KEEP_JEMALLOC = f"dirty_decay_ms:{_KEEP_MS},muzzy_decay_ms:{_KEEP_MS}"


def keep_freed_memory() -> None:
    """Let this process reuse the memory one chunk frees for the next, instead of
    handing it back to the kernel and faulting it in again page by page: glibc (the
    match arrays, Python's rows) no longer maps each large block on its own and trims
    its heap only past _KEEP_BYTES; polars' jemalloc keeps freed pages for _KEEP_MS
    (when polars has not loaded yet: it reads the setting once). For the processes
    that play chunks: a sweep's workers, and the `sim` commands that play them in
    their own process (--jobs 1); not the report, whose scans must hand memory back.
    A chunk of 250 matches faulted some 90 pages a match; with this a third of that,
    and half the kernel time (0.6 against 1.2-1.5 s in 2,000 matches in one
    process). The user's own allocator settings win (MALLOC_*_ and
    _RJEM_MALLOC_CONF in the environment)."""
    if "polars" not in sys.modules:
        os.environ.setdefault("_RJEM_MALLOC_CONF", _KEEP_JEMALLOC)
    if not sys.platform.startswith("linux") or any(
            k in os.environ for k in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(_M_MMAP_THRESHOLD, _KEEP_BYTES)
        libc.mallopt(_M_TRIM_THRESHOLD, _KEEP_BYTES)
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        pass


# what polars writes into _RJEM_MALLOC_CONF when it loads and the user set nothing
_POLARS_OWN_JEMALLOC = "dirty_decay_ms:500,muzzy_decay_ms:1000"


@contextlib.contextmanager
def _worker_environment():
    """os.environ as a starting worker must inherit it. A worker is one core's worth
    of the sweep: polars' own pool would start a thread per core in every worker, and
    the workers' sorts and Parquet writes would then take turns with the other workers'
    matches (a chunk's path 5-7 % slower). Polars reads the setting once, when it loads,
    and a spawned worker may load it before its own code runs: multiprocessing first
    re-runs the parent's main script, and a script that imports polars at its top (as
    a user's may) would load it there. So the worker gets it from its first
    instruction, with polars' allocator keeping freed pages (keep_freed_memory). A
    setting of the user's wins; the parent's own environment is restored at once."""
    saved = {key: os.environ.get(key) for key in ("POLARS_MAX_THREADS", "_RJEM_MALLOC_CONF")}
    os.environ.setdefault("POLARS_MAX_THREADS", "1")
    if saved["_RJEM_MALLOC_CONF"] in (None, _POLARS_OWN_JEMALLOC):
        os.environ["_RJEM_MALLOC_CONF"] = _KEEP_JEMALLOC
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def worker_cpus(jobs: int) -> list[int] | None:
    """The CPU each of `jobs` workers keeps to, or None (the scheduler places them).

    Workers are pinned, one to a CPU, when there are exactly as many as this process
    may use (`sim sweep`'s default): the machine is then the sweep's. Unpinned, a
    worker's short waits (for polars' pool thread, its files, its next chunk) let the
    scheduler wake it on the other worker's CPU, where the two take turns while a CPU
    sits idle: in 14 alternated pairs of 10,000-match sweeps on 2 CPUs, 0.24-0.70 CPU
    seconds idle (median 0.47) against 0.03-0.55 (0.13) pinned, and pinned sweeps
    0.2 s (about 1 %) faster in the median (docs/performance.md). With
    fewer workers than CPUs the scheduler keeps its freedom to move them off a CPU
    that other work wants. SIM_PIN_WORKERS=0 turns pinning off. Linux only."""
    if not hasattr(os, "sched_getaffinity") or os.environ.get("SIM_PIN_WORKERS") == "0":
        return None
    cpus = sorted(os.sched_getaffinity(0))
    return cpus if jobs == len(cpus) and jobs > 1 else None


def _worker_main(conn: Connection, parent: int, preload: tuple[str, ...] = (),
                 cpu: int | None = None) -> None:
    if cpu is not None:  # first, so that every thread the worker starts stays there too
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {cpu})
    _die_with_parent(parent)
    keep_freed_memory()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # import what the tasks run before the first one arrives: a pool started early
    # (LocalPool.start) does this while its parent still prepares. A module that
    # fails to import fails again, and is reported, when a task needs it.
    for name in preload:
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            task = None
        if task is None:
            _exit_now()
        fn, args = task
        try:
            conn.send(("ok", fn(*args)))
        except Exception as exc:
            conn.send(("error", "".join(traceback.format_exception_only(type(exc), exc))
                       .strip()))


def _exit_now() -> None:
    """End the worker without the interpreter's teardown: every task's result is
    already on disk (written atomically) and sent, and tearing down the modules a
    worker loads (numba's LLVM, polars) took 0.25 s that the sweep's end waited for."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


@dataclass
class _Slot:
    process: Any = None
    conn: Connection | None = None
    task: Any = None
    ran: bool = False  # this worker was handed a task (it may have printed something)
    cpu: int | None = None  # the CPU its worker keeps to (worker_cpus); a new one too


@dataclass(frozen=True)
class Outcome:
    """What became of a task: `kind` is "ok" (value = the function's result), "error"
    (value = the exception's one-line text) or "died" (value = how the worker ended)."""

    task: Any
    kind: str
    value: Any


def _how_it_ended(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}"
    return f"exited with code {code}"


class LocalPool:
    """`jobs` worker processes; `submit(task, fn, *args)` runs fn(*args) in an idle one.
    Each worker starts at its first task, or all at once with `start`; it imports the
    modules named in `preload` as soon as it runs. As many workers as CPUs are pinned,
    one to a CPU (worker_cpus)."""

    def __init__(self, jobs: int, preload: tuple[str, ...] = ()):
        self.slots = [_Slot() for _ in range(max(1, jobs))]
        self.preload = tuple(preload)
        cpus = worker_cpus(len(self.slots))
        for k, slot in enumerate(self.slots):
            slot.cpu = None if cpus is None else cpus[k]

    def start(self) -> LocalPool:
        """Start every worker now, so that their start (the interpreter, `preload`'s
        imports: some 0.6 s each) runs while the caller still prepares."""
        for slot in self.slots:
            if slot.process is None or not slot.process.is_alive():
                self._start(slot)
        return self

    def idle(self) -> int:
        return sum(s.task is None for s in self.slots)

    def busy(self) -> int:
        return len(self.slots) - self.idle()

    def _start(self, slot: _Slot) -> None:
        parent_end, child_end = _CTX.Pipe()
        proc = _CTX.Process(target=_worker_main,
                            args=(child_end, os.getpid(), self.preload, slot.cpu),
                            daemon=True, name="sim-sweep-worker")
        with _worker_environment():
            proc.start()
        child_end.close()
        slot.process, slot.conn = proc, parent_end

    def submit(self, task: Any, fn, *args) -> None:
        slot = next(s for s in self.slots if s.task is None)
        if slot.process is None or not slot.process.is_alive():
            if slot.process is not None:  # died idle (killed from outside): start afresh
                self._forget(slot)
            self._start(slot)
        slot.task, slot.ran = task, True
        # if the worker just died, wait() reports it through its sentinel
        with contextlib.suppress(OSError):
            slot.conn.send((fn, args))

    def pids(self) -> list[int]:
        return [s.process.pid for s in self.slots if s.process is not None]

    def wait(self, timeout: float | None = None) -> list[Outcome]:
        """Block until some task finishes or its worker dies (or `timeout` passes)."""
        busy = [s for s in self.slots if s.task is not None]
        if not busy:
            return []
        handles = {}
        for s in busy:
            handles[s.conn] = s
            handles[s.process.sentinel] = s
        ready = wait(list(handles), timeout)
        out, seen = [], set()
        for handle in ready:
            slot = handles[handle]
            if id(slot) in seen:
                continue
            seen.add(id(slot))
            task, slot.task = slot.task, None
            try:
                # a finished worker's result may arrive together with its death
                kind, value = slot.conn.recv() if slot.conn.poll() else (None, None)
            except (EOFError, OSError):
                kind = None
            if kind is None:
                slot.process.join(5)
                value = _how_it_ended(slot.process.exitcode)
                self._forget(slot)
                out.append(Outcome(task, "died", value))
            else:
                out.append(Outcome(task, kind, value))
        return out

    def _forget(self, slot: _Slot) -> None:
        if slot.conn is not None:
            slot.conn.close()
        slot.process = slot.conn = None
        slot.ran = False

    def close(self, kill: bool = False) -> None:
        """Stop every worker: politely when idle, at once with `kill` (finished chunks
        are already whole on disk; a chunk being written is redone on resume). A worker
        never handed a task is stopped at once either way: it has nothing to flush, and
        may still be importing its `preload` (a sweep with nothing left to play)."""
        for s in self.slots:
            if s.process is None:
                continue
            if kill or not s.ran:
                s.process.kill()
            else:
                try:
                    s.conn.send(None)
                except OSError:
                    s.process.kill()
        for s in self.slots:
            if s.process is not None:
                s.process.join(10)
                if s.process.is_alive():
                    s.process.kill()
                    s.process.join(5)
                self._forget(s)
            s.task = None


# the module of a sweep's task (sim.runner.dispatch.run_chunk) and the engine it plays
# (imported by play_chunk, not by the module, so that the sweep's parent does without
# numba): what its workers import as soon as they run
SWEEP_MODULES = ("sim.runner.dispatch", "sim.engine.columns", "sim.engine.match")


@contextlib.contextmanager
def shared_pool(jobs: int, backend: str = "local", scheduler: str | None = None):
    """Workers for a caller that runs sweep after sweep (a tune's trials, a precision
    sweep's looks) or that has more to do before its sweep (`sim sweep` loading its
    experiment): a LocalPool, started at once, to pass to each run_sweep; closed when
    the block ends (killed if it ends in an exception). None where run_sweep uses no
    local pool (one job, or Dask)."""
    if backend not in ("local", "loky") or scheduler is not None or jobs <= 1:
        yield None
        return
    pool = LocalPool(jobs, preload=SWEEP_MODULES).start()
    try:
        yield pool
    except BaseException:
        pool.close(kill=True)
        raise
    pool.close()

"""Clean stops of a sweep on SIGTERM and SIGINT: `stop_on_signals` turns either into
SweepInterrupted in the main thread (finished chunks stay on disk; the same command
resumes), and puts off a signal that lands where an exception could be dropped or
crash the process (a finalizer, a callback from compiled code).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from pathlib import Path


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

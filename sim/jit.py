"""The one place that sets numba's options for every kernel.

`cache=True` keeps compiled kernels on disk, but numba only checks the mtime of
the file that defines a function, not of the files it calls into. To make a
stale cache impossible the cache directory is keyed by a hash of every source
file compiled code can reach: this module, the codes and tables (`sim/rules`),
the world (`sim/world`) and the kernels (`sim/kernels`). The architecture test
keeps those layers from importing anything above them, so an edit elsewhere
(engine, runner, analysis, report) cannot change compiled code and keeps the cache.

`fastmath` stays off and `error_model` is fixed so outcomes are bit-stable.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


# the layers compiled code is built from (see the module docstring)
_COMPILED_LAYERS = ("jit.py", "rules", "world", "kernels")


def source_hash() -> str:
    """sha256 (first 16 hex) over the path and bytes of every .py file of the layers
    compiled code is built from."""
    digest = hashlib.sha256()
    paths = [p for name in _COMPILED_LAYERS
             for p in ([_PACKAGE / name] if name.endswith(".py")
                       else (_PACKAGE / name).rglob("*.py"))]
    for path in sorted(paths):
        digest.update(str(path.relative_to(_PACKAGE)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cache_dir() -> Path:
    base = os.environ.get("SIM_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "hexsim"
    )
    return Path(base) / f"numba-{source_hash()}"


# Set before numba reads its config; numba re-reads NUMBA_* variables at every
# compile, so the environment variable is what keeps the choice in force.
os.environ["NUMBA_CACHE_DIR"] = str(cache_dir())

import numba  # noqa: E402

numba.config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]


class _NoScipyLinalg:
    """An import finder that refuses `scipy.linalg` (see _load_registries_without_blas)."""

    @staticmethod
    def find_spec(name: str, path=None, target=None):
        if name == "scipy.linalg":
            raise ImportError("sim.jit: no kernel uses BLAS")
        return None


def _load_registries_without_blas() -> None:
    """Load numba's CPU registries now, telling its BLAS probe there is none.

    Numba's first compile or cache load imports numba.np.arraymath, whose probe for
    np.dot's BLAS imports scipy.linalg: 0.3-0.4 s, a third of a warm start
    (`sim bench match`'s warm_start_s), for functions no kernel calls (no np.dot,
    np.linalg or @; tests/test_architecture.py keeps it so). A kernel that called
    one would fail to compile, naming it. The finder is gone once the registries are
    in, so scipy.linalg imports as usual afterwards; a process that already had it
    keeps its BLAS."""
    if "scipy.linalg" in sys.modules:
        return
    from numba.core.registry import cpu_target

    sys.meta_path.insert(0, _NoScipyLinalg)
    try:
        cpu_target.target_context.refresh()
    finally:
        sys.meta_path.remove(_NoScipyLinalg)

JIT_OPTIONS = {"cache": True, "fastmath": False, "error_model": "numpy", "nogil": True}


def njit(fn=None, **overrides):
    """`numba.njit` with the workbench's options; usable as `@njit` or `@njit(...)`.

    Cold start: numba finalizes each compiled function as a module of its own with
    every function it calls linked in, and optimizes and compiles that whole module
    again, so each level of the call tree pays for everything below it. The levels
    between the match loop and the AI's phases (run_match, play_one_turn, the
    lookahead's look_ahead, choose_plan and play_greedy_turn, ai_take_turn,
    setup_match) have small bodies and one or two callers: `inline='always'` folds
    them into their callers, so their call trees are not compiled once more each
    (a first match with an empty cache in 94 s against 115 s, two cold compiles run
    side by side; 96 s against 108 s one after the other). Inlining the large AI
    kernels below (ai_units, unit_orders) made it slower: numba's typing and LLVM's
    passes over one very long function cost more than the level they save."""
    options = {**JIT_OPTIONS, **overrides}
    if fn is None:
        return lambda f: numba.njit(**options)(f)
    return numba.njit(**options)(fn)


if not numba.config.DISABLE_JIT:
    _load_registries_without_blas()

if numba.config.DISABLE_JIT:  # the plain-Python run of the kernels: no LLVM to ask
    def cycles() -> int:
        """Nanoseconds of the performance counter (the compiled build reads cycles)."""
        import time

        return time.perf_counter_ns()
else:
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def _read_cycle_counter(typingctx):
        def codegen(context, builder, signature, args):
            fn = cgutils.get_or_insert_function(builder.module,
                                                ir.FunctionType(ir.IntType(64), []),
                                                "llvm.readcyclecounter")
            return builder.call(fn, [])

        return types.int64(), codegen

    @njit
    def cycles() -> int:
        """The CPU's cycle counter (LLVM's readcyclecounter: the time-stamp counter, a
        few cycles a read), for sim.kernels.phases' timing of a match's parts."""
        return _read_cycle_counter()


if numba.config.DISABLE_JIT:
    def unowned(array):
        """The array itself (the plain-Python run counts no references)."""
        return array
else:
    @intrinsic
    def _unowned_view(typingctx, array):
        if not isinstance(array, types.Array):
            return None

        def codegen(context, builder, signature, args):
            view = cgutils.create_struct_proxy(signature.return_type)(context, builder,
                                                                       value=args[0])
            view.meminfo = cgutils.get_null_value(view.meminfo.type)
            view.parent = cgutils.get_null_value(view.parent.type)
            return view._getvalue()

        return array(array), codegen

    @njit(inline="always")
    def unowned(array):
        """The same array (data, shape, strides) with no owner record. Numba counts the
        references of an array handed to a kernel that is not inlined, two atomic
        operations per array and call (NRT_incref and NRT_decref: 20-23 % of a match's
        perf samples, mostly on the board's arrays and the path table); for an array
        without an owner, as for the fields of the state record, each is a call that
        does nothing (a match about 5 % faster, README: benchmarks). Only for an array
        whose owner outlives every use of the view: the arrays a whole match is handed."""
        return _unowned_view(array)

"""The one place that sets numba's options for every kernel.

`cache=True` keeps compiled kernels on disk, but numba only checks the mtime of
the file that defines a function, not of the files it calls into. To make a
stale cache impossible the cache directory is keyed (sim.jitcache) by a hash of
every source file compiled code can reach: this module, the codes and tables (`sim/rules`),
the world (`sim/world`) and the kernels (`sim/kernels`). The architecture test
keeps those layers from importing anything above them, so an edit elsewhere
(engine, runner, analysis, report) cannot change compiled code and keeps the cache.

Every kernel is a plain `numba.njit` function with the options below, compiled by
numba as it ships (the supported versions are pinned in pyproject.toml). `fastmath`
stays off and `error_model` is fixed so outcomes are bit-stable.

A cold compile (tools/compile_profile.py lists where it goes, from numba's own
compile events) is kept short by numba's own tools:
- a match compiles only what it plays: with no skill-1 or skill-2 seat the match loop
  is handed None for the lookahead's scratch, and numba prunes the lookahead and the
  search from that specialisation (sim.kernels.search.decide_orders); the engine picks
  the loop's entry in Python (sim.kernels.loop: run_match_held or
  run_match_held_skilled), and `sim warm` compiles both.
- LLVM runs at optimisation level 1 (NUMBA_OPT below), since each level of the call
  tree is optimised again (next item).
- numba finalizes every function it compiles with the code of every function it
  calls linked in, so each level of a call tree optimizes and emits everything below
  it once more. The thin levels of the match loop (run_match, play_one_turn, the
  lookahead's and the search's choice, ai_take_turn) are `inline='always'`, and so are
  the thin levels and small kernels below it that have one caller (neutral_turn,
  check_conquest, settler_orders, try_enter, scores and the like): the tree has fewer
  levels and each heavy kernel is finalized fewer times. The one playout of a copy
  (sim.kernels.lookahead.play_out) is not: the lookahead and the search share its one
  compiled body.
- `inline='always'` is not free: numba translates the function's bytecode again at
  every call site (about 50 ms a site on this VM, 2026-12-07: a 15-line function
  inlined at 31 sites took 2.2 s against 0.6 s as calls). A small kernel called from
  many places (log_event, tick, is_military, forbidden_mechanic, finish, ...) is a
  plain call (LLVM may still inline it; the warm match rate held). Large kernels stay
  separate even with one caller: numba's typing and lowering of a function grow
  faster than its size
  (the AI's 14 single-caller kernels, ai_units, unit_orders, siege and the like,
  inlined into the match loop took a cold compile from 61 to 116 s of CPU; the map
  generator inlined into setup_match, or the flows into open_seat_turn, cost more
  than the two compiled apart, 2026-12-07).
- numba compiles a function once per distinct argument types, and a literal (`-1`,
  `False`, a code such as BANDIT) is a type of its own, as is a variable numba first
  sees holding one (`best = -1` before a loop). Kernels pass and initialise such
  values as `np.int64(...)` / `np.bool_(...)`, so each kernel is compiled once
  (tools/compile_profile.py lists any function compiled more than once).
"""

from __future__ import annotations

import os

# the cache folder's helpers live where a process that never plays can reach them
# without numba; sim.jit keeps them as its own API
from sim.jitcache import cache_dir, prune_caches, source_hash, writable_cache_dir  # noqa: F401

writable_cache_dir()
# numba re-reads NUMBA_* variables at every compile, so the environment variable is
# what keeps the choice in force; reload_config applies it now too, when numba was
# imported before this module
os.environ["NUMBA_CACHE_DIR"] = str(cache_dir())
# LLVM optimisation level 1 instead of numba's default 3 (NUMBA_OPT, numba's documented
# setting; one set by the user wins): numba optimises and emits every function's whole
# call tree again at each level (see above), and at level 1 a cold compile took 10-15 %
# less CPU while warm matches ran no slower (2026-12-07, alternated twice on this VM:
# 56-59 s against 62-70 s of CPU for the first match, 207 against 164-194 matches per
# CPU second). Results are the same bit for bit at any level: fastmath is off, so LLVM
# may not reorder floating-point arithmetic, and integer arithmetic is exact.
os.environ.setdefault("NUMBA_OPT", "1")

import numba  # noqa: E402
from numba import types  # noqa: E402
from numba.core import cgutils  # noqa: E402
from numba.extending import intrinsic  # noqa: E402

numba.core.config.reload_config()

# no_cfunc_wrapper: no kernel is handed to C as a function pointer, so none needs the
# C-callable wrapper numba otherwise compiles for every function
JIT_OPTIONS = {"cache": True, "fastmath": False, "error_model": "numpy", "nogil": True,
               "no_cfunc_wrapper": True}


def njit(fn=None, **overrides):
    """`numba.njit` with the workbench's options; usable as `@njit` or `@njit(...)`."""
    options = {**JIT_OPTIONS, **overrides}
    if fn is None:
        return lambda f: numba.njit(**options)(f)
    return numba.njit(**options)(fn)


@intrinsic
def _read_cycle_counter(typingctx):
    def codegen(context, builder, signature, args):
        from llvmlite import ir

        fn = cgutils.get_or_insert_function(builder.module,
                                            ir.FunctionType(ir.IntType(64), []),
                                            "llvm.readcyclecounter")
        return builder.call(fn, [])

    return types.int64(), codegen


if numba.config.DISABLE_JIT:  # the plain-Python run of the kernels: no LLVM to ask
    def cycles() -> int:
        """Nanoseconds of the performance counter (the compiled build reads cycles)."""
        import time

        return time.perf_counter_ns()
else:
    @njit
    def cycles() -> int:
        """The CPU's cycle counter (LLVM's readcyclecounter: the time-stamp counter, a
        few cycles a read), for timing a match's phases (`sim bench match --phases`)."""
        return _read_cycle_counter()

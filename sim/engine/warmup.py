"""A cold compile of the match loop on two cores.

With numba's cache empty, the first match compiles the whole call tree, one function
after another on one core. Each function is compiled once and cached as soon as it
is done (sim.jit._defer_machine_code), so two processes can share the work: this
one and a helper take the levels of the call tree below the match loop from one
list, each the next one nobody has taken, and save what they compile in numba's
cache. This process then compiles the match loop itself, which finds every level
compiled, in memory or in the cache.

Each level is compiled as a compiled caller compiles it, for the types the match
loop passes it, so the loop's compile finds it under the same signature
(tests/test_warmup.py checks that the loop compiles none of them again). A level
waits for the levels whose kernels it calls, so the two processes do not compile a
level twice (a small kernel that levels of both call may be).

The loop's own compile is shared too. It starts once this process finds no level
left to take (the last, play_out, is left to the helper), and its typing waits for
any level the helper is still compiling (SharedLevels). Its machine code, which is
about 40 % of a cold start when one process makes it, is made in two shares: the
helper optimizes and compiles the call trees of the match set-up and of the AI's
units, this process the rest (MachineCodeShare, sim.jit._split_off).
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# a helper that has not finished by then is stuck; this process kills it and
# compiles whatever it left
_HELPER_TIMEOUT_S = 600.0


def parts(st, tb, board, rng_map, path, turn_log, scratch, state_bytes, scratch_bytes,
          uncopied) -> list[tuple[str, object, tuple, tuple[str, ...]]]:
    """The levels of the match loop's call tree to compile before it, in the order to
    take them: (name, kernel, numba argument types, names of the levels to finish
    first). The types are those the loop's own compile passes each level, given the
    match loop's arguments (sim.kernels.loop.run_match_held, its records taken out of
    their holders): the records and arrays as the loop holds them, an AI record of a
    personality, a seat, tile or count as int64 (a flag as the loop computes it: bool,
    or uint8 where it is `and` over a uint8 table value), and as (k,) int64 arrays the
    live units, tile owners, scores and threats the AI's turn computes. Capture and combat
    come first (the AI's units and the neutrals' turn both call them), the AI's turn
    and the lookahead (which plays it on a copy) after the AI's phases."""
    from sim.jit import argument_types
    from sim.jit import numba_types as types
    from sim.kernels.ai.diplomacy import ai_diplomacy
    from sim.kernels.ai.gold import ai_gold
    from sim.kernels.ai.military import ai_units, siege, unit_orders
    from sim.kernels.ai.production import ai_production
    from sim.kernels.ai.research import ai_research
    from sim.kernels.ai.sites import settler_orders
    from sim.kernels.ai.threats import observatory_alarm, war_target
    from sim.kernels.ai.turn import ai_take_turn, city_threats
    from sim.kernels.lookahead import play_out
    from sim.kernels.loop import begin_match, record_turn
    from sim.kernels.rules.capture import capture_city
    from sim.kernels.rules.combat import resolve_attack
    from sim.kernels.rules.common import regions_and_scores
    from sim.kernels.rules.flow import end_turn
    from sim.kernels.world.setup import setup_match

    S, T, B, path_t, rng_t, log_t = argument_types((st, tb, board, path, rng_map, turn_log))
    lookahead = argument_types((scratch, state_bytes, scratch_bytes, uncopied))
    ai = T.typeof("ai").dtype
    i64, yes_no, vec = types.int64, types.boolean, types.Array(types.int64, 1, "C")
    (distance,) = argument_types((board.distance,))
    fights = ("capture_city", "resolve_attack")
    turn = ("ai_units", "ai_production", "ai_gold", "ai_diplomacy", "ai_research",
            "regions_and_scores", "war_target", "observatory_alarm", "city_threats")
    # the longest first, so neither process is left with a long one at the end
    return [
        ("capture_city", capture_city, (S, T, B, i64, i64, i64), ()),
        ("resolve_attack", resolve_attack, (S, T, B, i64, i64, i64), ()),
        ("setup_match", setup_match, (S, T, B, rng_t, i64), ()),
        ("unit_orders", unit_orders,
         (S, T, ai, B, path_t, vec, i64, i64, i64, i64, yes_no, vec, vec, vec, i64,
          types.uint8, yes_no, vec), fights),
        ("begin_match", begin_match, (S, T, B), fights),
        ("settler_orders", settler_orders, (S, T, ai, B, path_t, i64, i64, vec), ()),
        ("siege", siege, (S, T, ai, B, i64, i64, vec), fights),
        ("ai_units", ai_units, (S, T, ai, B, path_t, i64, i64, vec, i64, i64, vec, vec, i64),
         ("unit_orders", "settler_orders", "siege")),
        ("ai_production", ai_production,
         (S, T, ai, B, path_t, i64, i64, i64, yes_no, vec, vec, vec), ()),
        ("ai_gold", ai_gold, (S, T, ai, B, i64, yes_no, vec, vec), ()),
        ("ai_diplomacy", ai_diplomacy, (S, T, ai, B, i64), ()),
        ("regions_and_scores", regions_and_scores, (S, T, B), ()),
        ("war_target", war_target, (S, T, ai, distance, i64, vec, vec), ()),
        ("ai_research", ai_research, (S, T, ai, i64), ()),
        ("observatory_alarm", observatory_alarm, (S, T, ai, distance, i64, vec), ()),
        ("city_threats", city_threats, (S, T, ai, distance, i64, vec), ()),
        ("end_turn", end_turn, (S, T, B), ("begin_match",)),
        ("record_turn", record_turn, (S, T, B, log_t), ()),
        ("ai_take_turn", ai_take_turn, (S, T, B, path_t, i64), turn),
        ("play_out", play_out, (S, T, B, path_t, i64, i64, types.uint64, *lookahead),
         (*turn, "end_turn")),
    ]


class SharedLevels:
    """The levels of a cold compile that this process and another share, as seen from
    this one: which it took, and what a compiled caller's typing does on reaching one
    (installed as sim.jit.COMPILE_GUARD by `guarding`). A level the other process is
    compiling is waited for, then loaded from the cache; a level nobody took is taken
    and compiled there. So the match loop's own compile can start while the other
    process still compiles its last levels, and still no level is compiled twice.

    board_dir: a level taken is a directory made (atomically) under it, a level done a
    file beside it. other_alive: whether the other process still runs (a level it
    took and will never finish is not waited for)."""

    def __init__(self, levels: list, board_dir: Path, other_alive=lambda: True) -> None:
        self.board_dir, self.other_alive = board_dir, other_alive
        self.names = {kernel: name for name, kernel, _types, _after in levels}
        self.mine: set[str] = set()
        self.in_typing: list[dict] = []  # the levels a caller's typing took and compiled

    def take(self, name: str) -> bool:
        try:
            (self.board_dir / name).mkdir()
        except FileExistsError:
            return False  # the other process took it first
        self.mine.add(name)
        return True

    def taken(self, name: str) -> bool:
        return (self.board_dir / name).exists()

    def finish(self, name: str) -> None:
        (self.board_dir / f"{name}.done").touch()

    def is_done(self, name: str) -> bool:
        return (self.board_dir / f"{name}.done").exists()

    def __call__(self, dispatcher):
        name = self.names.get(dispatcher)
        if name is None or name in self.mine or self.is_done(name):
            return None
        if self.take(name):
            t0 = time.perf_counter()

            def finished() -> None:
                self.finish(name)
                self.in_typing.append({"level": name, "in_typing": True,
                                       "seconds": round(time.perf_counter() - t0, 2)})
            return finished
        while not self.is_done(name) and self.other_alive():
            time.sleep(0.01)
        return None

    @contextlib.contextmanager
    def guarding(self):
        from sim.jit import COMPILE_GUARD

        COMPILE_GUARD[0] = self
        try:
            yield self
        finally:
            COMPILE_GUARD[0] = None


# the last level, left to the helper while this process compiles the match loop's own
# code (the loop's typing reaches its call late)
_LEFT_TO_HELPER = ("play_out",)


# the levels whose call trees the helper turns into machine code while this process
# does the rest of the match loop's (MachineCodeShare): about half of it, and each
# called, not inlined, where the loop's tree calls it
_SHARE_ROOTS = ("setup_match", "ai_units")


class MachineCodeShare:
    """This process's side of the helper's share of the match loop's machine code
    (sim.jit.SPLIT_BACK_END): the functions whose trees the helper compiles, the
    share sent to it as bitcode and its object code received back. A helper gone
    before it answered leaves the share to this process."""

    def __init__(self, levels: list, work: Path, helper_alive) -> None:
        self.levels, self.work, self.helper_alive = levels, work, helper_alive
        self.bitcode = b""
        self.started = self.sent = time.perf_counter()
        self.seconds: dict[str, float] = {}

    @property
    def roots(self) -> list[str]:
        """The LLVM names of the roots, as the loop's compile found them."""
        names = []
        for name, kernel, argtypes, _after in self.levels:
            compiled = kernel.overloads.get(tuple(argtypes))
            if name in _SHARE_ROOTS and compiled is not None:
                names.append(compiled.fndesc.mangled_name)
        return names

    def send(self, bitcode: bytes) -> None:
        self.bitcode, self.sent = bitcode, time.perf_counter()
        self.seconds["front_s"] = round(self.sent - self.started, 2)
        part = self.work / "share.bc.part"
        part.write_bytes(bitcode)
        part.rename(self.work / "share.bc")

    def receive(self) -> bytes:
        answer = self.work / "share.o"
        waited = time.perf_counter()
        self.seconds["own_share_s"] = round(waited - self.sent, 2)
        while not answer.exists() and self.helper_alive():
            time.sleep(0.005)
        self.seconds["waited_for_share_s"] = round(time.perf_counter() - waited, 2)
        if answer.exists():
            return answer.read_bytes()
        from sim.jit import compile_share

        return compile_share(self.bitcode)  # the helper is gone: compile it here


def _serve_share(work: Path, parent_alive) -> float | None:
    """The helper's side: wait for this process's share of the match loop's machine
    code (or word that there is none), compile it, and return the seconds it took."""
    from sim.jit import compile_share

    bitcode = work / "share.bc"
    while not bitcode.exists():
        if (work / "share.none").exists() or not parent_alive():
            return None
        time.sleep(0.005)
    t0 = time.perf_counter()
    part = work / "share.o.part"
    part.write_bytes(compile_share(bitcode.read_bytes()))
    part.rename(work / "share.o")
    return round(time.perf_counter() - t0, 2)


def take_parts(levels: list, board_dir: Path, shared: SharedLevels | None = None,
               until_blocked: bool = False, leave: tuple[str, ...] = ()) -> list[dict]:
    """Compile levels until none is left to take (or, with `until_blocked`, until
    every level left waits for one the other process is compiling). Each process
    takes the first level no process has taken whose prerequisites are done. Returns
    what this process compiled and the seconds each took."""
    from sim.jit import compile_for_compiled_callers

    shared = shared or SharedLevels(levels, board_dir)
    done = []
    while True:
        blocked = False
        for name, kernel, argtypes, after in levels:
            if shared.taken(name) or name in leave:
                continue
            if not all(shared.is_done(a) for a in after):
                blocked = True
                continue
            if not shared.take(name):
                continue
            t0 = time.perf_counter()
            try:
                compile_for_compiled_callers(kernel, argtypes)
            finally:
                shared.finish(name)
            done.append({"level": name, "seconds": round(time.perf_counter() - t0, 2)})
            break
        else:
            if not blocked or until_blocked:
                return done
            time.sleep(0.02)  # the other process is compiling what the rest needs


def _match_inputs(tables, prepare_args: tuple) -> tuple:
    """The match loop's arguments for the match `prepare(tables, *prepare_args)` sets
    up, its records taken out of their holders (parts' arguments)."""
    from sim.engine.match import _tables_holder, lookahead_scratch, new_path_table, prepare

    st, board, turn_log, rng_map, n_seats = prepare(tables, *prepare_args)
    tb = _tables_holder(tables.arrays(prepare_args[3], n_seats))[0]
    return (st, tb, board, rng_map, new_path_table(board.n_tiles), turn_log,
            *lookahead_scratch(st))


def helper_chosen() -> bool:
    """SIM_COMPILE_HELPER=0 turns the helper off (to compare, or on a machine shared
    with other work) and 1 on; by default there is one when a second core is free
    for it. Needs no numba (a sweep's parent estimates a compile with it)."""
    choice = os.environ.get("SIM_COMPILE_HELPER", "")
    if choice in ("0", "1"):
        return choice == "1"
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return cores >= 2


def helper_wanted() -> bool:
    """helper_chosen, and never in the plain-Python run, which compiles nothing."""
    from sim.jit import DEFERRED_MACHINE_CODE

    return DEFERRED_MACHINE_CODE and helper_chosen()


def compile_with_helper(tables, prepare_args: tuple, levels: list | None = None,
                        then=None) -> dict:
    """Compile the match loop's levels (parts) in this process and a helper process,
    for the match `prepare(tables, *prepare_args)` sets up, into numba's cache; the
    loop's own compile then finds them done. `then` (no arguments), when given, is
    called once this process finds no level left it can take, while the helper may
    still compile its last ones: the loop's own compile, whose typing waits for any
    level the helper has not finished (SharedLevels). Returns what each process
    compiled and the seconds it took. A helper that fails or hangs costs only time:
    this process compiles what the helper left, as a lone compile would."""
    t0 = time.perf_counter()
    if levels is None:
        levels = parts(*_match_inputs(tables, prepare_args))
    try:
        work, helper = _start_helper(tables, prepare_args)
    except (OSError, pickle.PicklingError) as exc:
        # no helper (no temporary folder, the tables will not pickle, no interpreter to
        # start): the loop's compile does it all, as without one
        if then is not None:
            then()
        return {"here": [], "helper_error": f"not started: {exc}"}
    try:
        shared = SharedLevels(levels, work / "levels", lambda: helper.poll() is None)
        try:
            with shared.guarding():
                here = take_parts(levels, work / "levels", shared,
                                  until_blocked=then is not None,
                                  leave=_LEFT_TO_HELPER if then is not None else ())
                if then is not None:
                    here += _compile_the_loop(then, levels, work, helper, shared)
        finally:
            (work / "share.none").touch()  # the helper waits for a share until told
        waited = time.perf_counter()
        try:
            helper.wait(timeout=_HELPER_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            helper.kill()
            helper.wait()
        report: dict = {"here": here, "waited_s": round(time.perf_counter() - waited, 2)}
        lines = (work / "out").read_text(errors="replace").strip().splitlines()
        if helper.returncode == 0 and lines:
            report["helper"] = json.loads(lines[-1])
        else:
            report["helper_error"] = (f"exit {helper.returncode}: "
                                      + (work / "err").read_text(errors="replace")[-2000:])
        report["seconds"] = round(time.perf_counter() - t0, 2)
        return report
    finally:
        if helper.poll() is None:
            helper.kill()
            helper.wait()
        shutil.rmtree(work, ignore_errors=True)


def _compile_the_loop(then, levels: list, work: Path, helper: subprocess.Popen,
                      shared: SharedLevels) -> list[dict]:
    """Call `then` (the match loop's compile) with the helper's share of its machine
    code on offer (sim.jit.SPLIT_BACK_END); returns the levels its typing took and
    its own timings, for the report."""
    from sim.jit import SPLIT_BACK_END

    started = time.perf_counter()
    share = MachineCodeShare(levels, work, lambda: helper.poll() is None)
    SPLIT_BACK_END[0] = share
    try:
        then()
    finally:
        SPLIT_BACK_END[0] = None
    return [*shared.in_typing, {"level": "(the match loop)",
                                "seconds": round(time.perf_counter() - started, 2),
                                **share.seconds}]


def _start_helper(tables, prepare_args: tuple) -> tuple[Path, subprocess.Popen]:
    """A work folder holding the match to compile for, and the helper started on it."""
    work = Path(tempfile.mkdtemp(prefix="sim-warmup-"))
    try:
        (work / "levels").mkdir()
        with open(work / "match.pickle", "wb") as f:
            pickle.dump((tables, prepare_args), f)
        package_root = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
        # files, not pipes: a helper writing more than a pipe holds would wait for a
        # reader until this process is done with its own levels
        with open(work / "out", "wb") as out, open(work / "err", "wb") as err:
            helper = subprocess.Popen(
                [sys.executable, "-c",
                 "from sim.engine.warmup import helper_main; helper_main()", str(work)],
                stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return work, helper


def helper_main() -> None:
    """The helper process, given compile_with_helper's work folder: takes levels from
    its list until none is left and prints one JSON line of what it did."""
    t0 = time.perf_counter()
    work = Path(sys.argv[1])
    with open(work / "match.pickle", "rb") as f:
        tables, prepare_args = pickle.load(f)
    levels = parts(*_match_inputs(tables, prepare_args))
    started = time.perf_counter() - t0
    parent = os.getppid()
    shared = SharedLevels(levels, work / "levels", lambda: os.getppid() == parent)
    with shared.guarding():
        done = take_parts(levels, work / "levels", shared) + shared.in_typing
    share_s = _serve_share(work, lambda: os.getppid() == parent)
    print(json.dumps({"compiled": done, "start_s": round(started, 2), "share_s": share_s,
                      "seconds": round(time.perf_counter() - t0, 2)}), flush=True)
    # nothing is left to write: skip the interpreter's teardown of numba and LLVM
    # (half a second the other process would wait for)
    os._exit(0)


def warm_before_first_call(kernel, args: tuple, tables, prepare_args: tuple) -> dict | None:
    """Before the first call in this process of the match loop `kernel` with `args`:
    when numba's cache lacks it and its levels, and a second core is free, compile
    the levels with a helper (compile_with_helper), and the match loop's own code
    while the helper finishes, and return its report; else None. The loop's machine
    code is made at the call."""
    from sim.jit import is_cached

    if kernel.overloads or not helper_wanted():
        return None
    signature = tuple(kernel.typeof_pyval(a) for a in args)
    if is_cached(kernel, signature):
        return None
    levels = parts(*_match_inputs(tables, prepare_args))
    if all(is_cached(level, argtypes) for _name, level, argtypes, _after in levels):
        return None  # the loop's compile loads them: seconds, nothing to share
    from sim.jit import compile_machine_code

    return compile_with_helper(tables, prepare_args, levels,
                               then=lambda: compile_machine_code(kernel, signature))

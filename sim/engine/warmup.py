"""A cold compile of the match loop on two cores.

With numba's cache empty, the first match compiles the whole call tree, one function
after another on one core. Each function is compiled once and cached as soon as it
is done (sim.jit._defer_machine_code), so two processes can share the work: this
one and a helper take the levels of the call tree below the match loop from one
list, each the next one nobody has taken, and save what they compile in numba's
cache; this process then compiles the match loop itself, which finds every level
compiled, in memory or in the cache.

Each level is compiled as a compiled caller compiles it, for the types the match
loop passes it, so the loop's compile finds it under the same signature
(tests/test_warmup.py checks that the loop compiles none of them again). A level
waits for the levels whose kernels it calls, so the two processes do not compile a
level twice (a small kernel that levels of both call may be).
"""

from __future__ import annotations

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


def take_parts(levels: list, board_dir: Path) -> list[dict]:
    """Compile levels until none is left to take. Each process takes the first level
    no process has taken whose prerequisites are done; a level taken is a directory
    made (atomically) under `board_dir`, a level done a file beside it. Returns what
    this process compiled and the seconds each took."""
    from sim.jit import compile_for_compiled_callers

    done = []
    while True:
        blocked = False
        for name, kernel, argtypes, after in levels:
            if (board_dir / name).exists():
                continue
            if not all((board_dir / f"{a}.done").exists() for a in after):
                blocked = True
                continue
            try:
                (board_dir / name).mkdir()
            except FileExistsError:
                continue  # the other process took it first
            t0 = time.perf_counter()
            try:
                compile_for_compiled_callers(kernel, argtypes)
            finally:
                (board_dir / f"{name}.done").touch()
            done.append({"level": name, "seconds": round(time.perf_counter() - t0, 2)})
            break
        else:
            if not blocked:
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


def helper_wanted() -> bool:
    """SIM_COMPILE_HELPER=0 turns the helper off (to compare, or on a machine shared
    with other work) and 1 on; by default there is one when a second core is free
    for it. Never in the plain-Python run, which compiles nothing."""
    from sim.jit import DEFERRED_MACHINE_CODE

    choice = os.environ.get("SIM_COMPILE_HELPER", "")
    if choice == "0" or not DEFERRED_MACHINE_CODE:
        return False
    if choice == "1":
        return True
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return cores >= 2


def compile_with_helper(tables, prepare_args: tuple, levels: list | None = None) -> dict:
    """Compile the match loop's levels (parts) in this process and a helper process,
    for the match `prepare(tables, *prepare_args)` sets up, into numba's cache; the
    loop's own compile, at its first call, then finds them done. Returns what each
    process compiled and the seconds it took. A helper that fails or hangs costs
    only time: this process compiles what the helper left, as a lone compile would."""
    t0 = time.perf_counter()
    if levels is None:
        levels = parts(*_match_inputs(tables, prepare_args))
    try:
        work, helper = _start_helper(tables, prepare_args)
    except (OSError, pickle.PicklingError) as exc:
        # no helper (no temporary folder, the tables will not pickle, no interpreter to
        # start): the loop's compile does it all, as without one
        return {"here": [], "helper_error": f"not started: {exc}"}
    try:
        here = take_parts(levels, work / "levels")
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
    done = take_parts(levels, work / "levels")
    print(json.dumps({"compiled": done, "start_s": round(started, 2),
                      "seconds": round(time.perf_counter() - t0, 2)}))


def warm_before_first_call(kernel, args: tuple, tables, prepare_args: tuple) -> dict | None:
    """Before the first call in this process of the match loop `kernel` with `args`:
    when numba's cache lacks it and its levels, and a second core is free, compile
    the levels with a helper (compile_with_helper) and return its report; else None."""
    from sim.jit import is_cached

    if kernel.overloads or not helper_wanted():
        return None
    if is_cached(kernel, tuple(kernel.typeof_pyval(a) for a in args)):
        return None
    levels = parts(*_match_inputs(tables, prepare_args))
    if all(is_cached(level, argtypes) for _name, level, argtypes, _after in levels):
        return None  # the loop's compile loads them: seconds, nothing to share
    return compile_with_helper(tables, prepare_args, levels)

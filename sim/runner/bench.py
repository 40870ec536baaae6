"""Benchmarks: each prints what it measured in one run (timing targets live here,
never in tests)."""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import psutil

from sim.engine.match import play_match, play_match_phases
from sim.jit import cycles, njit
from sim.kernels.rules.territory import Rings, ScoreWeights, territory_and_score
from sim.outputs.storage import run_path
from sim.outputs.store import scan
from sim.rules.codes import N_PHASES, NEUTRAL, PHASES
from sim.rules.tables import load_tables
from sim.runner.experiments import load_experiment
from sim.runner.pool import SWEEP_MODULES, LocalPool
from sim.runner.sweep import run_sweep
from sim.world.board import make_board


@njit
def _territory_batch(distance, disc, sites, owner, pop, buildings, bought, gold, alive, rings,
                     weights):
    """Resolve every position of a batch (rows of the 2-D inputs) inside compiled code,
    as the match loop does, so the timing is the kernel's and not Python's call overhead."""
    checksum = 0
    for i in range(sites.shape[0]):
        _tc, _terms, _counts, score, rank = territory_and_score(
            distance, disc, sites[i], owner[i], pop[i], buildings[i], bought[i], gold[i], alive,
            rings, weights)
        checksum += score[0] + rank[0]
    return checksum


def territory_positions(n_positions: int, seed: int = 7, radius: int = 9, n_seats: int = 4,
                        n_cities: int = 24):
    """Random positions: cities at least 3 apart (24 do not fit 4 apart on radius 9),
    random populations 1–5, a few Monuments and bought tiles, random gold."""
    rng = np.random.default_rng(seed)
    board = make_board(radius)
    out = []
    for _ in range(n_positions):
        sites: list[int] = []
        for t in rng.permutation(board.n_tiles):
            if all(board.distance[t, s] >= 3 for s in sites):
                sites.append(int(t))
            if len(sites) == n_cities:
                break
        owner = rng.integers(0, n_seats, len(sites))
        owner[rng.random(len(sites)) < 0.1] = NEUTRAL  # some neutral villages
        pop = rng.integers(1, 6, len(sites))
        monument = rng.random(len(sites)) < 0.1
        bought = np.full(board.n_tiles, -1, dtype=np.int64)
        for t in rng.choice(board.n_tiles, 12, replace=False):
            c = int(rng.integers(0, len(sites)))
            if owner[c] >= 0 and t not in sites:
                bought[t] = c
        gold = rng.integers(0, 200, n_seats)
        out.append((np.array(sites, dtype=np.int64), owner.astype(np.int64),
                    pop.astype(np.int64), monument, bought, gold.astype(np.int64)))
    return board, out


def _territory_inputs(n_positions: int):
    """(board, tables record, per-position kernel inputs) of the benchmark positions."""
    tables = load_tables()
    tb = tables.arrays()
    board, positions = territory_positions(n_positions)
    monument = tables.building_names.index("monument")
    n_b = len(tables.building_names)
    inputs = []
    for sites, owner, pop, mon, bought, gold in positions:
        buildings = np.zeros((len(sites), n_b), dtype=np.uint8)
        buildings[mon, monument] = 1
        inputs.append((sites, owner, pop, buildings, bought, gold))
    return board, tb, inputs


def _territory_rules(tb) -> tuple[Rings, ScoreWeights]:
    """The tables' ring rule and score formula as the territory kernel takes them (what
    sim.kernels.rules.standings.ring_rule and score_weights build in compiled code)."""
    return (Rings(tb.ring_radius, tb.grown_ring_radius, tb.grown_ring_population),
            ScoreWeights(tb.w_region, tb.w_population, tb.w_city, tb.gold_per_point,
                         tb.building_score_points))


def _call_territory(board, tb, inp) -> None:
    sites, owner, pop, buildings, bought, gold = inp
    territory_and_score(board.distance, board.disc, sites, owner, pop, buildings, bought, gold,
                        np.ones(4, dtype=np.uint8), *_territory_rules(tb))


def interpreted_territory_seconds(n_positions: int) -> float:
    """Seconds for one call per position; run with NUMBA_DISABLE_JIT=1 this is the same
    kernel body executed by the Python interpreter, the plain baseline of the ratio."""
    board, tb, inputs = _territory_inputs(n_positions)
    t0 = time.perf_counter()
    for inp in inputs:
        _call_territory(board, tb, inp)
    return time.perf_counter() - t0


_INTERPRETED = ("from sim.runner.bench import interpreted_territory_seconds as f; "
                "print(f({n}))")


def bench_territory(n_positions: int = 200) -> dict:
    """The territory-and-score kernel (T01–T13) compiled, against the same function body
    run by the Python interpreter (a subprocess with NUMBA_DISABLE_JIT=1)."""
    board, tb, inputs = _territory_inputs(n_positions)
    batch = [np.stack([inp[k] for inp in inputs]) for k in range(6)]
    args = (board.distance, board.disc, *batch, np.ones(4, dtype=np.uint8),
            *_territory_rules(tb))
    _call_territory(board, tb, inputs[0])  # compile (or load from cache) outside the timing
    _territory_batch(*args)
    t0 = time.perf_counter()
    for inp in inputs:
        _call_territory(board, tb, inp)
    call_s = time.perf_counter() - t0
    kernel_s = float("inf")
    for _ in range(5):  # best of 5: the kernel's own cost, least disturbed by the machine
        t0 = time.perf_counter()
        _territory_batch(*args)
        kernel_s = min(kernel_s, time.perf_counter() - t0)
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    out = subprocess.run([sys.executable, "-c", _INTERPRETED.format(n=n_positions)], env=env,
                         capture_output=True, text=True, check=True)
    reference_s = float(out.stdout.strip().splitlines()[-1])
    kernel_us = kernel_s / n_positions * 1e6
    reference_us = reference_s / n_positions * 1e6
    return {"positions": n_positions, "kernel_us": round(kernel_us, 2),
            "reference_us": round(reference_us, 2), "ratio": round(reference_us / kernel_us, 1),
            "kernel_call_us": round(call_s / n_positions * 1e6, 2),
            "call_ratio": round(reference_us / (call_s / n_positions * 1e6), 1),
            "note": "kernel_us: inside compiled code as the match loop calls it; "
                    "kernel_call_us: one call from Python, dispatch included; "
                    "reference_us: the same function run by the interpreter "
                    "(NUMBA_DISABLE_JIT=1)"}


_FIRST_MATCH = ("import time; t0 = time.perf_counter(); "
                "from sim.rules.tables import load_tables; "
                "from sim.engine.match import play_match; "
                "play_match(load_tables(), 1); print(time.perf_counter() - t0)")


def _first_match_seconds(cache_dir: str) -> float:
    env = {**os.environ, "SIM_CACHE_DIR": cache_dir}
    out = subprocess.run([sys.executable, "-c", _FIRST_MATCH], env=env, capture_output=True,
                         text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def _time_matches(tables, seed: int, n_matches: int, seat_ai=None) -> tuple[float, int]:
    """(seconds, turns played) of matches 0..n_matches-1 of `seed`, one after another."""

    play_match(tables, seed, seat_ai=seat_ai)  # compile or load outside the timing
    turns = 0
    t0 = time.perf_counter()
    for i in range(n_matches):
        st, _board, _log = play_match(tables, seed, i, seat_ai=seat_ai)
        turns += int(st.turn[0])
    return time.perf_counter() - t0, turns


def bench_match(n_matches: int = 300, seed: int = 20260101, skill: int = 0,
                cold_start: bool = True) -> dict:
    """Standard matches (4 seats, 100 turns, default tables) played one after another on
    one core; plus the time to the first match result in a fresh process with an
    empty numba cache (cold) and with the cache filled (warm). With `skill` 1, the
    same matches again with seat 0 at skill 1 (the lookahead, sim.kernels.lookahead),
    and the cost of a skill-1 match as a multiple of a skill-0 one: the two are timed
    in alternating blocks of matches, so a machine busy with other work slows both
    alike."""

    if cold_start:
        with tempfile.TemporaryDirectory() as cache:
            cold = _first_match_seconds(cache)
            warm = _first_match_seconds(cache)
    tables = load_tables()
    settings = [None] + ([[{"skill": skill}]] if skill else [])
    for seat_ai in settings:
        play_match(tables, seed, seat_ai=seat_ai)  # compile or load outside the timing
    seconds = [0.0] * len(settings)
    turns = [0] * len(settings)
    block = 10
    for start in range(0, n_matches, block):
        for k, seat_ai in enumerate(settings):
            t0 = time.perf_counter()
            for i in range(start, min(start + block, n_matches)):
                st, _board, _log = play_match(tables, seed, i, seat_ai=seat_ai)
                turns[k] += int(st.turn[0])
            seconds[k] += time.perf_counter() - t0
    out: dict = {"matches": n_matches, "seconds": round(seconds[0], 3),
                 "matches_per_s": round(n_matches / seconds[0], 1),
                 "turns_per_s": round(turns[0] / seconds[0], 1),
                 "mean_turns": round(turns[0] / n_matches, 1)}
    if cold_start:
        out |= {"cold_start_s": round(cold, 2), "warm_start_s": round(warm, 2)}
    if skill:
        out |= {"skill": skill, "skill_seconds": round(seconds[1], 3),
                "skill_matches_per_s": round(n_matches / seconds[1], 2),
                "skill_mean_turns": round(turns[1] / n_matches, 1),
                "skill_cost_ratio": round(seconds[1] / seconds[0], 2),
                "note": f"skill_*: the same matches with seat 0 at skill {skill} "
                        "(seat_ai), the others at 0, timed in blocks of "
                        f"{block} alternating with the all-skill-0 ones; "
                        "skill_cost_ratio: seconds per match against theirs"}
    return out


def bench_crown_match(n_matches: int = 2000, seed: int = 20260101, skill: int = 0,
                      block: int = 100) -> dict:
    """Crown matches (issue 48; default tables: 10 rounds x 3 waves x 6 players, every
    player at AI `skill`) played one after another in this process, after one match
    outside the timing (the compile or the cache load). matches_per_s_core divides by
    the process's CPU time, which a machine shared with other work inflates less than
    the wall time (matches_per_s_wall) it shares with them; both are medians over
    blocks of `block` matches."""
    from sim.engine.crown import play_crown_match
    from sim.rules.crown import load_crown_tables

    tables = load_crown_tables()
    skills = (skill, skill)
    play_crown_match(tables, seed, 0, skills)
    cpu_rates, wall_rates = [], []
    for start in range(0, n_matches, block):
        n = min(block, n_matches - start)
        c0, w0 = time.process_time(), time.perf_counter()
        for i in range(start, start + n):
            play_crown_match(tables, seed, i, skills)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        cpu_rates.append(n / max(cpu, 1e-9))
        wall_rates.append(n / max(wall, 1e-9))
    m = tables.model.match
    return {"game": "crown", "matches": n_matches, "skill": skill,
            "rounds": m.rounds, "waves": m.waves, "players": sum(m.team_sizes),
            "matches_per_s_core": round(statistics.median(cpu_rates), 1),
            "matches_per_s_wall": round(statistics.median(wall_rates), 1),
            "load_average_1m": round(os.getloadavg()[0], 2)}


def hex_match_bench(matches: int | None, skill: int, cold_start: bool, phases: bool,
                    ) -> dict:
    """The hex game's Game.match_bench (`sim bench match`): bench_match's figures over
    `matches` (None: 300), or with `phases` bench_phases' split of the same matches."""
    if phases:
        return bench_phases(matches or 300, skill=skill)
    return bench_match(matches or 300, skill=skill, cold_start=cold_start)


def crown_match_bench(matches: int | None, skill: int, cold_start: bool, phases: bool,
                      ) -> dict:
    """Crown's Game.match_bench (`sim bench match --game crown`): bench_crown_match's
    figures over `matches` (None: 2000). The cold start and the phase clock are the hex
    engine's; Crown's bench times neither, and ignores them."""
    del cold_start, phases
    return bench_crown_match(matches or 2000, skill=skill)


def bench_phases(n_matches: int = 300, seed: int = 20260101, skill: int = 0) -> dict:
    """Where a standard match's time goes: the same matches as bench_match played
    with each phase of the match loop timed (sim.kernels.timing), each phase's share
    of the compiled time and its milliseconds per match, converted from CPU cycles by
    the run's own wall time; `python_ms` is the per-match setup outside the compiled
    loop (state, streams, board lookup), and `timing_overhead` the timed loop's wall
    time against the plain one on the same matches. With `skill` 1, seat 0 plays at
    skill 1."""

    tables = load_tables()
    seat_ai = [{"skill": skill}] if skill else None
    ticks = np.zeros(N_PHASES, dtype=np.int64)
    play_match(tables, seed, seat_ai=seat_ai)  # compile or load outside the timing
    play_match_phases(tables, seed, 0, ticks, seat_ai=seat_ai)
    plain = phased = 0.0
    ticks[:] = 0
    c_total = 0
    block = 10
    for start in range(0, n_matches, block):
        stop = min(start + block, n_matches)
        t0 = time.perf_counter()
        for i in range(start, stop):
            play_match(tables, seed, i, seat_ai=seat_ai)
        plain += time.perf_counter() - t0
        c0 = cycles()
        t0 = time.perf_counter()
        for i in range(start, stop):
            play_match_phases(tables, seed, i, ticks, seat_ai=seat_ai)
        phased += time.perf_counter() - t0
        c_total += cycles() - c0
    cycles_per_s = c_total / phased
    ms = ticks / cycles_per_s / n_matches * 1e3
    compiled_ms = float(ms.sum())
    phased_ms = phased / n_matches * 1e3
    order = np.argsort(-ms, kind="stable")
    return {"matches": n_matches, "skill": skill,
            "matches_per_s": round(n_matches / plain, 1),
            "ms_per_match": round(plain / n_matches * 1e3, 3),
            "timed_ms_per_match": round(phased_ms, 3),
            "timing_overhead": round(phased / plain, 3),
            "python_ms": round(phased_ms - compiled_ms, 3),
            "phases": {PHASES[k]: {"ms": round(float(ms[k]), 3),
                                   "share_pct": round(100 * float(ms[k]) / phased_ms, 1)}
                       for k in order},
            "note": "phases: milliseconds per match of the timed loop (CPU cycle counter, "
                    "converted by its own wall time), sorted; share_pct of the timed "
                    "match including python_ms"}


def ai_cases(n_seats: int = 4) -> list[tuple[str, list[dict] | None]]:
    """The settings `bench_ai` times: every seat at each skill level (D11), then one
    seat (seat 0) at each level above 0 against skill-0 seats."""
    from sim.rules.codes import SKILLS

    cases: list[tuple[str, list[dict] | None]] = [("every seat skill 0", None)]
    cases += [(f"every seat skill {k}", [{"skill": k}] * n_seats) for k in SKILLS[1:]]
    cases += [(f"seat 0 skill {k}", [{"skill": k}]) for k in SKILLS[1:]]
    return cases


def bench_ai(n_matches: int = 60, search_matches: int = 4, seed: int = 20260101) -> dict:
    """The cost of the AI's skill levels (D11), measured in one run: standard 4-seat
    matches on the default tables with every seat at skill 0, 1 and 2, and with seat 0
    alone at skill 1 and 2. Each setting plays matches 0, 1, ... of `seed`
    (`n_matches` of them, `search_matches` where some seat is at skill 2, the
    costliest), taken in turns match by match, so a machine busy with other work slows
    each setting alike. Times are this process's CPU seconds (one core), so other
    programs on the machine add little; cost_ratio is a setting's seconds per match
    over the every-seat-skill-0 one's."""
    from sim.rules.codes import SKILL_SEARCH

    tables = load_tables()
    cases = ai_cases()
    wanted = [search_matches if seat_ai and any(e.get("skill") == SKILL_SEARCH
                                                for e in seat_ai) else n_matches
              for _name, seat_ai in cases]
    seconds = [0.0] * len(cases)
    turns = [0] * len(cases)
    for _name, seat_ai in cases:
        play_match(tables, seed, seat_ai=seat_ai)  # compile or load outside the timing
    for i in range(max(wanted)):
        for k, (_name, seat_ai) in enumerate(cases):
            if i >= wanted[k]:
                continue
            t0 = time.process_time()
            st, _board, _log = play_match(tables, seed, i, seat_ai=seat_ai)
            seconds[k] += time.process_time() - t0
            turns[k] += int(st.turn[0])
    base = seconds[0] / wanted[0]
    rows = {}
    for k, (name, _seat_ai) in enumerate(cases):
        per = seconds[k] / wanted[k]
        rows[name] = {"matches": wanted[k], "s_per_match": round(per, 4),
                      "matches_per_s": round(1 / per, 2),
                      "mean_turns": round(turns[k] / wanted[k], 1),
                      "cost_ratio": round(per / base, 2)}
    return {"cases": rows,
            "note": "CPU seconds of this process per standard 4-seat match (one core); "
                    "cost_ratio: against every seat at skill 0; the settings take turns "
                    "match by match"}


def bench_scaling(n_matches: int = 100, seed: int = 20260101) -> dict:
    """How a match's cost grows with the board, the seats, the length and the AI
    skill: matches/s on one core and the cost of a turn per board tile for board
    radius 6, 9, 12 and 15 (4 seats, standard), seats 2, 4 and 6, lengths short,
    standard and long, and one skill-1 seat (each other setting the tables' own).
    `radius_cost_vs_tiles` is (seconds a match at radius 15 / at radius 9) divided by
    (tiles at 15 / tiles at 9): at most 1 when a match costs no more than its board
    grows (issue 15)."""

    base = load_tables()
    cases = [(f"radius {r}", {"map.radius": r}, {}) for r in (6, 9, 12, 15)]
    cases += [(f"seats {n}", {}, {"n_seats": n}) for n in (2, 4, 6)]
    cases += [(f"length {k}", {}, {"length": k}) for k in ("short", "standard", "long")]
    cases += [("skill 1 (seat 0)", {}, {"seat_ai": [{"skill": 1}]})]
    rows = {}
    for name, overrides, kwargs in cases:
        tables = base.with_overrides(overrides) if overrides else base
        play_match(tables, seed, **kwargs)  # compile or load outside the timing
        t0 = time.perf_counter()
        turns = 0
        for i in range(n_matches):
            st, board, _log = play_match(tables, seed, i, **kwargs)
            turns += int(st.turn[0])
        seconds = time.perf_counter() - t0
        rows[name] = {"tiles": board.n_tiles, "matches_per_s": round(n_matches / seconds, 1),
                      "mean_turns": round(turns / n_matches, 1),
                      "us_per_turn_per_tile": round(seconds / turns / board.n_tiles * 1e6, 3)}
    r9, r15 = rows["radius 9"], rows["radius 15"]
    ratio = (r9["matches_per_s"] / r15["matches_per_s"]) / (r15["tiles"] / r9["tiles"])
    return {"matches": n_matches, "cases": rows, "radius_cost_vs_tiles": round(ratio, 3)}


_SWEEP_EXPERIMENT = """
name = "bench-sweep"
root_seed = 4242
matches = {matches}
seats = 4
length = "standard"
personalities = ["balanced", "conqueror", "scholar", "merchant"]
chunk_size = {chunk}

[[variants]]
name = "baseline"

[[variants]]
name = "gold-3"
set = {{ "score.gold_per_point" = 3 }}
"""


def bench_sweep(matches_per_variant: int = 5000, jobs: int = 2, rounds: int = 3) -> dict:
    """A sweep of 2 variants × `matches_per_variant` standard matches with `jobs` workers,
    writing Parquet, against one worker: the parallel efficiency is T1 / (jobs × Tp),
    with Tp the sweep's wall time and T1 the wall time of the same sweep (the same
    matches, chunks and files) on one fresh worker, timed whole.

    One worker is a pool's worker, started and set up as every sweep worker is (polars
    on one thread): in the bench's own process polars would compress Parquet on a
    second thread on the idle core, and "one worker" would be more than one core. Its
    sweep starts that worker as `sim sweep --jobs 1` loads the engine in its own
    process. T1 is timed whole, not built from a shorter one-worker sweep: the first
    1,000 matches of a variant are not a sample of its 5,000 (here their matches last
    0.7 % more turns), and a rate taken from them leaned T1, and the ratio, by as much.

    This VM's speed drifts by a few per cent within a minute, so every sweep timed
    has a one-worker sweep just before and just after it, and its T1 is their mean; the
    fresh-worker sweep is timed `rounds` times and the medians are reported, each
    round's figures beside them.

    Fresh workers, as `sim sweep` starts them, give `wall_s` and `parallel_efficiency`.
    Workers already started (a shared_pool, as a tune's trials and a precision sweep's
    looks play) give `..._started_workers`, against T1 less the one worker's start (a
    fresh one-worker pool's one-chunk sweep less a started one's), from the one-worker
    sweeps just before and after it. `parallel_efficiency_one_worker_started` is the strictest
    reading: the fresh sweep against T1 less that start, so that only the parallel side
    pays one. The parent's memory as the sweeps start and its sampled peak during them
    show the runner holds no rows."""



    chunk = max(5, min(250, matches_per_variant // 20))
    rounds = max(1, rounds)

    def run(n: int, workers: int, root: Path, pool=None) -> dict:
        return _timed_sweep(n, workers, root, chunk, pool)

    small = chunk  # matches per variant of the small sweeps: one chunk each
    # started workers as a shared_pool gives them (which gives none for one job)
    with tempfile.TemporaryDirectory() as tmp, \
            contextlib.closing(LocalPool(jobs, preload=SWEEP_MODULES).start()) as started, \
            contextlib.closing(LocalPool(1, preload=SWEEP_MODULES).start()) as alone:
        root = Path(tmp)
        # compile or load the engine in the workers before any timing; the same small
        # sweep on fresh workers and then on started ones tells what starting them costs
        run(10, 1, root / "compile-one", alone)
        run(20, jobs, root / "compile")
        fresh_small = run(small, jobs, root / "fresh-small")
        run(small, jobs, root / "started-warm", started)
        started_small = run(small, jobs, root / "started-small", started)
        fresh_small_one = run(small, 1, root / "fresh-small-one")
        small_one = statistics.median(
            run(small, 1, root / f"small-one-{k}", alone)["wall_s"] for k in range(3))
        # this process's memory as the sweeps start and at its peak during them
        # (sampled: the high-water mark would keep whatever peak came before)
        gc.collect()
        rss_before = psutil.Process().memory_info().rss
        peak = _SelfMemory(every=0.05)  # the parent is idle: sampling must not load a core
        one = [run(matches_per_variant, 1, root / "one-0")["wall_s"]]
        fresh = []
        for k in range(rounds):
            fresh.append(run(matches_per_variant, jobs, root / f"fresh-{k}"))
            one.append(run(matches_per_variant, 1, root / f"one-{k + 1}")["wall_s"])
        many_started = run(matches_per_variant, jobs, root / "started", started)
        one.append(run(matches_per_variant, 1, root / f"one-{rounds + 1}")["wall_s"])
        rss_after = peak.stop()
    one_start_s = fresh_small_one["wall_s"] - small_one
    return {"jobs": jobs, "rounds": rounds,
            **_efficiency_figures(one, fresh, many_started, jobs, one_start_s),
            "worker_start_s": round(fresh_small["wall_s"] - started_small["wall_s"], 2),
            "one_worker_start_s": round(one_start_s, 2),
            "parquet_mb": round(fresh[0]["parquet_mb"], 1),
            "parent_rss_mb_before": round(rss_before / 2**20, 1),
            "parent_peak_rss_mb_during": round(max(rss_after, rss_before) / 2**20, 1)}


def _timed_sweep(n: int, workers: int, root: Path, chunk: int, pool=None) -> dict:
    """bench_sweep's sweep of n matches a variant in chunks of `chunk`, on `pool`, or on
    `workers` fresh workers started, played on and stopped within the timing (`sim
    sweep` plays a one-worker sweep in its own process: here one worker is always a
    worker). The sweep's result with its `wall_s` and `parquet_mb`."""

    root.mkdir(exist_ok=True)
    path = root / f"bench-{n}-{workers}.toml"
    path.write_text(_SWEEP_EXPERIMENT.format(matches=n, chunk=chunk))
    experiment = load_experiment(path)
    out = root / f"run-{n}-{workers}"
    t0 = time.perf_counter()
    if pool is None and workers == 1:
        with contextlib.closing(LocalPool(1, preload=SWEEP_MODULES).start()) as own:
            result = run_sweep(experiment, out, jobs=1, progress=False, pool=own)
    else:
        result = run_sweep(experiment, out, jobs=workers, progress=False, pool=pool)
    result["wall_s"] = time.perf_counter() - t0
    result["parquet_mb"] = sum(p.stat().st_size for p in out.rglob("*.parquet")) / 1e6
    shutil.rmtree(out)  # 85 MB at the default size
    return result


def _efficiency_figures(one: list[float], fresh: list[dict], many_started: dict, jobs: int,
                        one_start_s: float) -> dict:
    """bench_sweep's efficiency figures: `one` the one-worker sweeps' wall seconds (one
    before each fresh sweep, one after the last and one after the started-worker sweep),
    `fresh` the fresh-worker sweeps of the rounds, `many_started` the started-worker
    sweep, `one_start_s` what starting one worker costs."""
    n = many_started["matches"]
    rounds = len(fresh)
    # each fresh sweep against the one-worker sweeps just before and after it
    t1 = [(one[k] + one[k + 1]) / 2 for k in range(rounds)]
    walls = [sweep["wall_s"] for sweep in fresh]
    textbook = [t / (jobs * w) for t, w in zip(t1, walls, strict=True)]
    strict = [(t - one_start_s) / (jobs * w) for t, w in zip(t1, walls, strict=True)]
    return {"matches": n,
            "wall_s": round(statistics.median(walls), 2),
            "matches_per_s": round(n / statistics.median(walls), 1),
            "parallel_efficiency": round(statistics.median(textbook), 3),
            "parallel_efficiency_one_worker_started": round(statistics.median(strict), 3),
            "wall_s_rounds": [round(w, 3) for w in walls],
            "parallel_efficiency_rounds": [round(e, 3) for e in textbook],
            "wall_s_started_workers": round(many_started["wall_s"], 2),
            "parallel_efficiency_started_workers":
                round(((one[-2] + one[-1]) / 2 - one_start_s)
                      / (jobs * many_started["wall_s"]), 3),
            "single_worker_wall_s": round(statistics.median(one), 2),
            "single_worker_wall_s_rounds": [round(w, 3) for w in one],
            "single_worker_matches_per_s": round(n / statistics.median(one), 1),
            "errors": sum(s["errors"] for s in fresh) + many_started["errors"]}


def bench_report(run_dir: Path | str, out: Path | str | None = None) -> dict:
    """`sim report RUN_DIR` as a designer runs it, in a fresh interpreter (imports,
    the run check, every table and chart): its wall seconds and its peak resident
    memory, both measured on that one child process (os.wait4's rusage, so nothing
    this process holds is counted), and the peak of its whole process tree (the
    report and the chart renderer it starts, sampled: `_TreeMemory`). Issue 14's
    target: under 5 s and 500 MB (the tree's) on a 12,000-match run. Also its CPU
    seconds (all threads), to tell a slow report from a busy machine."""
    run_dir = run_path(run_dir)  # a folder or a URL
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(out) if out is not None else Path(tmp) / "report.html"
        cmd = [sys.executable, "-m", "sim.cli", "report", str(run_dir), "--out", str(target)]
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        tree = _TreeMemory(proc.pid)
        _pid, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        tree_peak = tree.stop()
        stderr = proc.stderr.read().decode() if proc.stderr else ""
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise RuntimeError(f"sim report failed ({proc.returncode}): {stderr.strip()}")
        size = target.stat().st_size
    import polars as pl

    # the run's own reader: a compacted run's files are not every Parquet file there
    matches = scan(run_dir, "matches").select(pl.len()).collect().item()
    # ru_maxrss is in kilobytes on Linux
    return {"run": str(run_dir), "matches": matches, "wall_seconds": round(seconds, 2),
            # CPU seconds of the child (user + system, every thread): on a shared machine
            # wall time also counts the waits for a core, CPU time does not
            "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            # the report's process and its children together (the chart renderer), the
            # figure issue 14's 500 MB is about
            "peak_tree_rss_mb": round(max(tree_peak, usage.ru_maxrss * 1024) / 2**20, 1),
            "report_kb": round(size / 1024, 1)}


def bench_reports(run_dirs: Sequence[Path | str], out: Path | str | None = None) -> dict:
    """bench_report of each run folder in turn, each in its own fresh process (so one
    report's memory never counts in another's); with two or more, how the report's
    peak grows with the run: `peak_rss_ratio` and `peak_tree_rss_ratio`, the largest
    run's peak over the smallest's (by matches; issue 46's target: at most 1.3 from
    10,000 to 100,000 matches). One run gives bench_report's figures alone; `out`
    keeps the report of a single run only."""
    if len(run_dirs) == 1:
        return bench_report(run_dirs[0], out)
    runs = sorted((bench_report(r) for r in run_dirs), key=lambda r: r["matches"])
    small, large = runs[0], runs[-1]
    return {"runs": runs, "matches_ratio": round(large["matches"] / small["matches"], 2),
            "peak_rss_ratio": round(large["peak_rss_mb"] / small["peak_rss_mb"], 3),
            "peak_tree_rss_ratio": round(large["peak_tree_rss_mb"]
                                         / small["peak_tree_rss_mb"], 3)}


class _SelfMemory:
    """The peak resident memory of this process, sampled every `every` seconds by a
    thread until `stop` (bytes)."""

    def __init__(self, every: float = 0.01) -> None:


        self._me, self._every, self.peak = psutil.Process(), every, 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="self-memory", daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._done.is_set():
            self.peak = max(self.peak, self._me.memory_info().rss)
            self._done.wait(self._every)

    def stop(self) -> int:
        self._done.set()
        self._thread.join()
        return self.peak


class _TreeMemory:
    """The peak of the summed resident memory of process `pid` and all of its
    descendants, sampled every `every` seconds by a thread (psutil) until `stop`.
    Summed RSS counts a page two processes share twice, so it errs high, never low;
    wait4's ru_maxrss is exact but sees one process only."""

    def __init__(self, pid: int, every: float = 0.01) -> None:


        self._root = psutil.Process(pid)
        self._every, self.peak = every, 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="tree-memory", daemon=True)
        self._thread.start()

    def _sample(self) -> None:

        while not self._done.is_set():
            total = 0
            try:
                procs = [self._root, *self._root.children(recursive=True)]
            except psutil.Error:  # the root has exited
                return
            for p in procs:
                with contextlib.suppress(psutil.Error):  # a child that just exited
                    total += p.memory_info().rss
            self.peak = max(self.peak, total)
            self._done.wait(self._every)

    def stop(self) -> int:
        """Stop sampling; the peak in bytes."""
        self._done.set()
        self._thread.join()
        return self.peak

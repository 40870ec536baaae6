"""A sweep's progress and its engine compile: the bar (or, on a pipe, a line every
15 s) with matches/s and an ETA that counts a compile still to come, and the one
cold compile a sweep's parent runs before its workers play, with its estimate
(the last compile measured on this machine, else a first guess).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from pathlib import Path

from sim.engine.seat_ai import skill_code
from sim.jitcache import engine_cached
from sim.rules.codes import SKILL_LOOKAHEAD
from sim.rules.tables import REPO_ROOT, Tables, load_tables
from sim.runner.chunk import RunSettings, play_chunk
from sim.runner.experiments import ChunkSpec

# a cold first match on this 2-core VM, quiet (tools/compile_profile.py, 2026-12-07)
_DEFAULT_COMPILE_S = 80.0


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


# a warm 4-seat match on one core of this 2-core VM: 200-270 standard (100-turn)
# matches/s (README, tools/start_times.py, 2026-12-07), so about 20,000 match turns/s
_DEFAULT_TURNS_PER_S = 20_000.0


def sweep_estimate(matches: int, turns: int, jobs: int) -> tuple[float, str]:
    """(seconds, basis) a sweep of `matches` matches of `turns` turns takes on `jobs`
    workers here: the play at a warm match rate, plus the engine's compile
    (compile_estimate) when this code's engine is not cached yet. A first guess before
    the sweep starts; its progress bar gives the measured ETA."""
    seconds = matches * turns / (_DEFAULT_TURNS_PER_S * max(jobs, 1))
    basis = f"at about {_DEFAULT_TURNS_PER_S / turns:.0f} matches/s per worker"
    if not engine_cached():
        compile_s, _ = compile_estimate()
        seconds += compile_s
        basis += f", and {compile_s:.0f} s to compile the engine"
    return seconds, basis


def _skilled_chunk(settings: RunSettings, todo: list[ChunkSpec]) -> ChunkSpec | None:
    """The first chunk of `todo` whose variant has a seat above skill 0 (a lookahead,
    search or random-play seat: the loop's skilled entry, sim.engine.match.loop_scratch)."""
    return next((c for c in todo if any(
        skill_code(e.get("skill", 0)) >= SKILL_LOOKAHEAD
        for e in settings.seat_ai_by_variant.get(c.variant, []))), None)


def warm_engine(settings: RunSettings, todo: list[ChunkSpec], tables: dict[str, Tables],
                bar: _Progress, say) -> float | None:
    """On a cold cache, compile the engine once in this process before any chunk is
    played, so the workers load the cache instead of all compiling at once; says so
    first with an estimate and returns the compile's seconds. On a warm cache, nothing
    (None): whoever plays the first chunk loads the engine, and a parent whose workers
    play has no use for it."""
    from sim.jitcache import cache_dir
    from sim.outputs.games import game_of

    if not game_of(settings.game).compile_first:
        # the compile estimate, its record and engine_cached are the hex engine's: a
        # Crown chunk compiles its own kernels (seconds) when it first plays, and must
        # neither record that as the hex compile nor prune the hex caches
        return None
    skilled = _skilled_chunk(settings, todo)
    if engine_cached(skilled=skilled is not None):
        return None
    estimate, basis = compile_estimate()
    say(f"compiling the engine once: about {estimate:.0f} s ({basis}); cached afterwards "
        f"in {cache_dir()}")
    bar.compiling(estimate)
    t0 = time.perf_counter()
    # a sweep with skilled seats compiles that entry here too, not once in every worker
    for spec in (todo[0], skilled) if skilled is not None else (todo[0],):
        play_chunk(settings, ChunkSpec(spec.variant, 0, spec.start, spec.start + 1),
                   tables[spec.variant])
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


def warm_cache(say, every: float = 10.0) -> tuple[bool, float]:
    """Compile the engine (a match, a match with a skill-1 seat: the loop's entry with
    the lookahead and the search, and the scenario commands) into numba's cache, or
    load it when the cache holds it: `sim warm`. On a cold cache, says first how long
    it should take (compile_estimate), then every `every` seconds how long it has taken
    so far and which part compiles, from the clock (numba's compile is one call per
    part: nothing finer is known), and records the compile for the next estimate.
    Returns (cold, seconds)."""

    # the engine (numba) loads only when a warm-up is asked for: a sweep's parent,
    # which imports this module, never plays
    from sim.engine.match import play_match
    from sim.engine.scenario import load_scenario, run_scenario
    from sim.jitcache import cache_dir

    cold = not engine_cached(skilled=True)
    done = threading.Event()
    part = ["the match loop"]
    t0 = time.perf_counter()
    if cold:
        estimate, basis = compile_estimate()
        say(f"compiling the engine: about {estimate:.0f} s ({basis}); cached in "
            f"{cache_dir()}")

        def tell() -> None:
            while not done.wait(every):
                say(f"  compiling {part[0]}: {time.perf_counter() - t0:.0f} s so far "
                    f"(about {estimate:.0f} s expected)")

        threading.Thread(target=tell, daemon=True).start()
    try:
        tables = load_tables()
        play_match(tables, 1)
        # the loop's entry for skill-1 and skill-2 seats holds both the lookahead and
        # the search: one such match compiles it for a sweep of any skills
        part[0] = "the lookahead and the search (skill 1 and 2)"
        play_match(tables, 1, length="short", seat_ai=[{"skill": SKILL_LOOKAHEAD}])
        part[0] = "the scenario commands"
        example = REPO_ROOT / "experiments" / "scenarios" / "capital_fall.toml"
        run_scenario(load_scenario(example, tables.source), check=True)
    finally:
        done.set()
    seconds = time.perf_counter() - t0
    if cold:
        after_cold_compile(seconds, say)
    return cold, seconds

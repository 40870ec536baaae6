"""Precision-targeted sweeps (issue 13): grow a sweep block by block until its
results are precise enough, and stop on a prefix of the match sequence.

An experiment with `precision = 0.02` (every victory share within ±0.02) or
`detect = 0.02` (every paired difference from the baseline decided at that
size) plays its first `matches` matches per variant, looks, and, while the
target is not met, plays `block` more (the same match indices for every
variant: common random numbers) until the target is met or `max_matches`.
Each look is an ordinary `run_sweep` of the prefix [0, n) into the same
folder, so everything a sweep guarantees holds: resume, locking, provenance,
the same Parquet layout. A look depends only on the rows of its prefix, so the
stop is reproducible, and the folder's tables equal a fixed-size sweep of
`n` matches row for row (tests/test_sequential.py).

The stopping rule itself lives in the analysis layer (sim.analysis.sequential:
anytime-valid confidence sequences); the caller passes it as `look`, so this
layer never reads analysis code. The looks so far are kept in the provenance
under `sequential`; a resumed sweep starts at the prefix the folder holds,
because every earlier look had said "go on".

The regression gate (issue 44) grows two finished runs the same way: `extend_run`
plays matches [held, n) of a run folder's own experiment (rebuilt from the text in
its provenance) into it, with this code, and `grow_until_decided` asks the gate's
look (sim.analysis.gate, passed in by the caller) after every block, growing every
run it is given to the same size until the look decides or the budget is spent.
A run made by other code cannot grow here (its fingerprint would not match: the
sweep refuses before playing anything); `extend_with_command` grows it with the
`sim` of that code instead.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import subprocess
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sim.outputs.storage import absolute, run_path
from sim.outputs.store import atomic_write_text
from sim.runner.experiments import Experiment, ExperimentSpec, Variant
from sim.runner.pool import LocalPool, shared_pool
from sim.runner.replay import ReplayError, variant_tables
from sim.runner.sweep import RunFolderMismatch, SweepError, fingerprint_matches, run_sweep

# look(run folder, prefix) -> (met, one line of news, record for the provenance)
LookFn = Callable[[Path, int], tuple[bool, str, dict[str, Any]]]


def _held_prefix(experiment: Experiment, out: Path, chunk_size: int) -> int | None:
    """The prefix a folder of this very sweep already planned, else None."""
    path = out / "provenance.json"
    if not path.is_file() or not fingerprint_matches(experiment, out, chunk_size):
        return None
    try:
        return int(json.loads(path.read_text(encoding="utf-8"))["matches_per_variant"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _old_looks(out: Path) -> list[dict[str, Any]]:
    try:
        prov = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
        return list(prov.get("sequential", {}).get("looks", []))
    except (OSError, ValueError, AttributeError):
        return []


def _record(out: Path, entry: dict[str, Any]) -> None:
    path = out / "provenance.json"
    prov = json.loads(path.read_text(encoding="utf-8"))
    prov["sequential"] = entry
    atomic_write_text(out, path, json.dumps(prov, indent=1, sort_keys=True))


def run_sequential(experiment: Experiment, out: Path, look: LookFn, jobs: int = 1,
                   backend: str = "local", scheduler: str | None = None,
                   chunk_size: int | None = None, progress: bool = True,
                   replace_stale: bool = False, retry_errors: bool = False, say=None,
                   command: str = "", pool: LocalPool | None = None) -> dict[str, Any]:
    """Run (or resume) a sequential experiment; returns the last look's sweep summary
    with `sequential` (target, looks, stopped_at, reason) added.

    `pool`: the caller's workers (shared_pool), else the sequence starts its own.
    Raises what run_sweep raises. A look whose sweep left matches missing stops the
    sequence there (the summary says which): a target is never judged on holes."""
    spec = experiment.spec
    out = absolute(run_path(out))
    chunk_size = chunk_size or spec.chunk_size
    say = say or (lambda line: None)
    looks = experiment.looks()
    held = None if replace_stale else _held_prefix(experiment, out, chunk_size)
    if held is not None:
        looks = [n for n in looks if n >= held] or [looks[-1]]
    target = {"precision": spec.precision, "detect": spec.detect,
              "confidence": spec.confidence, "power": spec.power, "first": spec.matches,
              "block": spec.block or spec.matches, "max_matches": looks[-1] if
              spec.max_matches is None else spec.max_matches,
              "rule": "confidence sequences (predictable plug-in empirical Bernstein, "
                      "Waudby-Smith & Ramdas 2023), running intersection"}
    # the looks an interrupted run already took (each said "go on")
    history = [h for h in _old_looks(out) if h.get("matches", 0) < looks[0]] \
        if held is not None else []
    result: dict[str, Any] = {}
    played, chunks_played, seconds = 0, 0, 0.0
    # one set of workers for every look: a look of a block of matches is short, and
    # starting the workers took some 0.75 s each time
    with contextlib.nullcontext(pool) if pool is not None else \
            shared_pool(jobs, backend, scheduler) as pool:
        for i, n in enumerate(looks):
            result = run_sweep(experiment.prefix(n), out, jobs, backend, scheduler, chunk_size,
                               progress, None, replace_stale and i == 0, retry_errors, say,
                               command, pool)
            played += result["played_now"]
            chunks_played += result["chunks"] - result["chunks_resumed"]
            seconds += result["seconds"]
            if result["problems"]:
                reason = "matches missing: the sweep stopped before its target could be judged"
                history.append({"matches": n, "met": False, "summary": reason})
                break
            met, line, record = look(out, n)
            last = n == looks[-1]
            history.append({"matches": n, "met": met, "summary": line, **record})
            then = "target met, stopping" if met else \
                "max_matches reached, stopping" if last else f"going on to {looks[i + 1]}"
            say(f"look at {n} matches per variant: {line}; {then}")
            if met or last:
                reason = "target met" if met else "max_matches reached before the target"
                break
            # kept at once: a sweep stopped during the next look resumes with these
            _record(out, {**target, "looks": history, "stopped_at": None,
                          "reason": f"in progress: going on to {looks[i + 1]}", "met": False})
    entry = {**target, "looks": history, "stopped_at": history[-1]["matches"],
             "reason": reason, "met": bool(history[-1]["met"])}
    _record(out, entry)
    # the whole sequence's work, not only the last look's
    return {**result, "played_now": played, "seconds": round(seconds, 3),
            "chunks_resumed": result["chunks"] - chunks_played,
            "sequential": entry}


def run_experiment(experiment: Experiment, out: Path, look: LookFn | None, jobs: int = 1,
                   backend: str = "local", scheduler: str | None = None,
                   chunk_size: int | None = None, progress: bool = True,
                   replace_stale: bool = False, retry_errors: bool = False, say=None,
                   command: str = "", pool: LocalPool | None = None) -> dict[str, Any]:
    """Run (or resume) an experiment as `sim sweep` does: a sequential one look by look
    (run_sequential, with `look`, its stopping rule), any other as one sweep
    (run_sweep). Returns the sweep's summary; raises what run_sweep raises."""
    if experiment.spec.sequential:
        return run_sequential(experiment, out, look, jobs, backend, scheduler, chunk_size,
                              progress=progress, replace_stale=replace_stale,
                              retry_errors=retry_errors, command=command, say=say, pool=pool)
    return run_sweep(experiment, out, jobs, backend, scheduler, chunk_size, progress=progress,
                     replace_stale=replace_stale, retry_errors=retry_errors, command=command,
                     say=say, pool=pool)


def experiment_of_run(run_dir: Path | str) -> Experiment:
    """The experiment a run folder was swept from, rebuilt from its provenance alone:
    the file's text it keeps and every variant's tables as the sweep resolved them
    (hash-checked, sim.runner.replay.variant_tables), so neither an edited experiment
    file nor edited tables keep the run from growing. Raises SweepError."""
    out = Path(run_dir)
    path = out / "provenance.json"
    try:
        prov = json.loads(path.read_text(encoding="utf-8"))
        text = prov["experiment"]["text"]
        spec = ExperimentSpec.model_validate(tomllib.loads(text))
        variants = tuple(Variant(v["id"], dict(v.get("overrides") or {}), v["tables_hash"],
                                 tables.stored, tables, tuple(v.get("seat_ai") or ()),
                                 tuple(v.get("side_skill") or (0, 0)))
                         for v in prov["variants"]
                         for tables in [variant_tables(out, prov, v)])
        return Experiment(prov["experiment"]["path"], spec, prov["tables_path"], variants,
                          hashlib.sha256(text.encode()).hexdigest()[:16],
                          base_seats=int(prov["seats"]),
                          base_personalities=tuple(prov.get("personalities") or ()))
    except (OSError, ValueError, KeyError, TypeError, ReplayError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SweepError(f"{path}: cannot rebuild the run's experiment: {first}") from None


def extend_run(run_dir: Path | str, matches: int, jobs: int = 1, backend: str = "local",
               scheduler: str | None = None, progress: bool = False, say=None,
               pool: LocalPool | None = None) -> dict[str, Any] | None:
    """Grow a run folder to `matches` per variant: its own experiment (experiment_of_run)
    over matches [0, matches), the same seeds, so match i is the match a sweep of that
    size would have played (a growth that was interrupted is resumed by asking for the
    same size again). None when the folder plans more than that already. Refuses
    (RunFolderMismatch, nothing played) a folder made by other code, tables or chunking.
    Returns the sweep's summary; raises what run_sweep raises."""
    out = Path(run_dir).absolute()
    prov = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    if matches < int(prov["matches_per_variant"]):
        return None
    grown = experiment_of_run(out).prefix(matches)
    chunk_size = int(prov["chunk_size"])
    if not fingerprint_matches(grown, out, chunk_size):
        raise RunFolderMismatch(f"{out}: made by another code version, experiment or "
                                "tables than this one: only the `sim` that made it can "
                                "add matches to it")
    # the plan grows before any of its chunks is written, as a sequential look's does,
    # so an interrupted growth resumes on the grown plan
    _record_plan(out, prov, matches)
    return run_sweep(grown, out, jobs, backend, scheduler, chunk_size, progress, say=say,
                     command=f"extend to {matches}", pool=pool)


def _record_plan(out: Path, prov: dict[str, Any], matches: int) -> None:
    prov["matches_per_variant"] = matches
    atomic_write_text(out, out / "provenance.json", json.dumps(prov, indent=1, sort_keys=True))


def extend_with_command(command: Sequence[str], run_dir: Path | str, matches: int) -> None:
    """Grow a run folder with another `sim` (the code that made it): runs
    `COMMAND extend RUN_DIR --to MATCHES --quiet`. Raises SweepError with its last
    line of errors when it fails."""
    proc = subprocess.run([*command, "extend", str(Path(run_dir).absolute()), "--to",
                           str(matches), "--quiet"], capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        raise SweepError(f"{' '.join(command)} extend {run_dir}: {last}")


# look() -> (decided, matches per variant every run holds, one line of news)
GateLookFn = Callable[[], tuple[bool, int, str]]


def grow_until_decided(look: GateLookFn, grow: Sequence[Callable[[int], Any]], budget: int,
                       block: int | None = None, say=None) -> list[dict[str, Any]]:
    """Ask `look` and, while it is undecided and the runs hold fewer than `budget`
    matches per variant, grow every run (each of `grow`, called with the new size) by
    `block` (None: the size held at the first look) and look again. Returns the looks
    (matches, decided, summary). What a grow raises ends the sequence (the caller says
    why); the looks before it stand, since each holds at any size."""
    say = say or (lambda line: None)
    looks: list[dict[str, Any]] = []
    while True:
        decided, held, line = look()
        looks.append({"matches": held, "decided": decided, "summary": line})
        stuck = len(looks) > 1 and held <= looks[-2]["matches"]  # a grow that added none
        if decided or held >= budget or stuck:
            return looks
        step = block or max(held, 1)
        size = min(held + step, budget)
        say(f"gate at {held} matches per variant: {line}; growing both runs to {size}")
        for extend in grow:
            extend(size)


__all__ = ["GateLookFn", "LookFn", "experiment_of_run", "extend_run", "extend_with_command",
           "grow_until_decided", "run_experiment", "run_sequential"]

"""Running a sweep: chunks of seeded matches in parallel (joblib, Dask for clusters).

Each chunk (ChunkSpec) is played by a worker: a loop over its match indices,
each match a whole compiled game, the rows written to Parquet by the worker
itself (sim.store), so the main process holds only chunk summaries and memory
stays flat however many matches run. A match that raises becomes a row of the
`errors` table; the chunk goes on. Results depend only on (tables, root seed,
match index, seats, length, personalities), never on worker count, backend or
chunk size.
"""

from __future__ import annotations

import json
import shlex
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim.experiments import ChunkSpec, Experiment
from sim.match import outcome, play_match
from sim.outcomes import add_match, empty_columns, frames
from sim.provenance import code_version, now, package_versions
from sim.store import is_done, write_chunk
from sim.tables import load_tables


class RunFolderMismatch(Exception):
    """The output folder holds a run of another experiment, code or chunking."""


@dataclass(frozen=True)
class RunSettings:
    """What a worker needs to play a chunk; plain data so it pickles to any backend."""

    out: str
    tables_path: str
    overrides_by_variant: dict[str, dict[str, Any]]
    root_seed: int
    seats: int
    length: str | None
    personalities: tuple[str, ...]
    rotate: bool


def replay_command(settings: RunSettings, variant: str, match_index: int,
                   personalities: list[str]) -> str:
    """The one command that replays a match of the sweep."""
    parts = ["sim", "match", "--seed", str(settings.root_seed), "--match", str(match_index),
             "--tables", settings.tables_path, "--seats", str(settings.seats)]
    if settings.length:
        parts += ["--length", settings.length]
    if personalities:
        parts += ["--personalities", ",".join(personalities)]
    for key, value in sorted(settings.overrides_by_variant[variant].items()):
        parts += ["--set", f"{key}={json.dumps(value)}"]
    return shlex.join(parts)


def personalities_for(settings: RunSettings, match_index: int) -> list[str]:
    base = list(settings.personalities)
    if not base:
        return []
    shift = match_index if settings.rotate else 0
    return [base[(s + shift) % len(base)] for s in range(settings.seats)]


def run_chunk(settings: RunSettings, spec: ChunkSpec, play=None) -> dict[str, Any]:
    """Play the matches of one chunk and write its tables; returns its summary (small:
    rows never travel back to the parent). `play` replaces sim.match.play_match in tests."""
    play = play or play_match
    t0 = time.perf_counter()
    tables = load_tables(settings.tables_path,
                         settings.overrides_by_variant[spec.variant] or None)
    cols = {name: empty_columns(name) for name in ("matches", "seats", "events", "turns",
                                                   "errors")}
    failed = 0
    for i in range(spec.start, spec.stop):
        pers = personalities_for(settings, i)
        match_id = f"{spec.variant}:{i}"
        replay = replay_command(settings, spec.variant, i, pers)
        try:
            st, board, log = play(tables, settings.root_seed, i, settings.seats,
                                  settings.length, personalities=pers or None)
            result = outcome(st, tables, board, log, settings.root_seed, i)
            add_match(cols, result, match_id, replay, pers)
        except Exception as exc:  # a failing match is a row, not the end of the sweep
            failed += 1
            message = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            for key, value in (("match_id", match_id), ("match_index", i),
                               ("seed", settings.root_seed), ("message", message),
                               ("replay", replay)):
                cols["errors"][key].append(value)
    summary = {"variant": spec.variant, "chunk": spec.chunk, "start": spec.start,
               "stop": spec.stop, "matches": spec.stop - spec.start - failed, "errors": failed,
               "seconds": round(time.perf_counter() - t0, 3), "tables_hash": tables.hash}
    write_chunk(Path(settings.out), spec.variant, spec.chunk, frames(cols), summary)
    return summary


def settings_for(experiment: Experiment, out: Path) -> RunSettings:
    spec = experiment.spec
    return RunSettings(
        out=str(out), tables_path=experiment.tables_path,
        overrides_by_variant={v.id: v.overrides for v in experiment.variants},
        root_seed=spec.root_seed, seats=experiment.seats, length=spec.length,
        personalities=tuple(spec.personalities or ()), rotate=spec.rotate_personalities)


def fingerprint(experiment: Experiment, chunk_size: int) -> dict[str, Any]:
    """What must match for a resumed run to continue an existing folder."""
    return {"experiment_hash": experiment.text_hash, "chunk_size": chunk_size,
            "code": {k: v for k, v in code_version().items() if k != "dirty"},
            "tables_hashes": {v.id: v.tables_hash for v in experiment.variants}}


def provenance(experiment: Experiment, chunk_size: int, jobs: int, backend: str,
               started: str) -> dict[str, Any]:
    spec = experiment.spec
    return {
        "fingerprint": fingerprint(experiment, chunk_size),
        "code_version": code_version(),
        "packages": package_versions(),
        "experiment": {"path": experiment.path, "name": spec.name,
                       "description": spec.description,
                       "text": Path(experiment.path).read_text(encoding="utf-8")},
        "tables_path": experiment.tables_path,
        "root_seed": spec.root_seed, "matches_per_variant": spec.matches,
        "seats": experiment.seats, "length": spec.length,
        "personalities": spec.personalities, "rotate_personalities": spec.rotate_personalities,
        "streams": "SeedSequence(root_seed, spawn_key=(match_index, purpose)); purposes "
                   "map=0, ai=1, events=2; never the variant",
        "baseline": experiment.baseline,
        "variants": [{"id": v.id, "overrides": v.overrides, "tables_hash": v.tables_hash,
                      "tables": v.resolved} for v in experiment.variants],
        "chunk_size": chunk_size, "jobs": jobs, "backend": backend,
        "started": started, "finished": None,
    }


def prepare_folder(experiment: Experiment, out: Path, chunk_size: int, jobs: int,
                   backend: str) -> dict[str, Any]:
    """Create or reopen the run folder; refuses a folder made by something else."""
    path = out / "provenance.json"
    fp = fingerprint(experiment, chunk_size)
    if path.exists():
        old = json.loads(path.read_text())
        if old.get("fingerprint") != fp:
            differs = [k for k in fp if old.get("fingerprint", {}).get(k) != fp[k]]
            raise RunFolderMismatch(
                f"{out}: holds a run with a different {', '.join(differs)}; "
                "choose another --out (or delete the folder) to start afresh")
        old.update(jobs=jobs, backend=backend)
        return old
    out.mkdir(parents=True, exist_ok=True)
    prov = provenance(experiment, chunk_size, jobs, backend, now())
    path.write_text(json.dumps(prov, indent=1, sort_keys=True))
    return prov


def pending_chunks(experiment: Experiment, out: Path, chunk_size: int) -> list[ChunkSpec]:
    return [c for c in experiment.chunks(chunk_size) if not is_done(out, c.variant, c.chunk)]


__all__ = ["RunFolderMismatch", "RunSettings", "run_chunk"]

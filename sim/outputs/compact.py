"""`sim compact RUN`: a finished run's many small chunk parts rewritten as a few large
files per table and variant, so that a million-match study is hundreds of files, not
hundreds of thousands (docs/scale-out.md).

Each table's rows of a variant are read in chunk order, a run of whole chunks at a
time, and written as TABLE/variant=ID/compact-GENERATION-K.parquet of about the
target size (row groups as polars writes them). Then one record, _done/compacted.json,
is written atomically: the done marker of every chunk it covers, with each file's
rows, size and sha256 (sim.outputs.store reads and verifies it). Only then are the
chunks' old parts and markers, and the files of an earlier compaction, removed.

- Crash-safe: before the record is written the old parts are the run and the new
  files are leftovers no reader reads (they are not `part-*` files and no record
  names them); after it, the record's files are the run and the old parts are
  leftovers. Either way `sim check-run` passes and a report reads the same rows.
- Idempotent: a run whose record covers every chunk is left alone (its leftovers, if
  a compaction was killed while removing them, are removed).
- Refused while a sweep holds the run's lock, and on a run that is not complete and
  intact (`sim check-run` first).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from sim.outputs.games import game_of_run
from sim.outputs.lock import RunLocked, run_lock
from sim.outputs.storage import is_remote, run_path
from sim.outputs.store import (
    PlannedChunk,
    RunError,
    _atomic_write,
    chunk_files,
    chunk_key,
    compacted_path,
    covered_chunks,
    marker_path,
    parquet_bytes,
    part_path,
    read_compaction,
    read_provenance,
    require_complete,
)

TARGET_BYTES = 128 * 2**20  # a file's size to aim at (--target-mb)
FORMAT = 1


@dataclass
class Compaction:
    """What `compact_run` did: files written (0 when the run was compact already) and
    leftovers removed."""

    root: Path
    generation: int
    chunks: int
    files: int
    removed: int
    bytes_before: int
    bytes_after: int


def _estimate(table: str, marker: dict[str, Any], comp: dict[str, Any] | None,
              key: tuple[str, int]) -> float:
    """About how many bytes of `table` a chunk holds (from its marker, or its share
    of the compacted file that holds it)."""
    part = marker.get("parts", {}).get(table, {})
    if "bytes" in part:
        return float(part["bytes"])
    for f in (comp or {}).get("files", {}).values():
        if f["table"] == table and f["variant"] == key[0] and key[1] in f["chunks"]:
            return f["bytes"] * part.get("rows", 0) / max(f["rows"], 1)
    return 0.0


def _groups(chunks: list[PlannedChunk], sizes: list[float], target: int,
            ) -> list[list[PlannedChunk]]:
    """Runs of consecutive chunks of about `target` bytes each (at least one chunk)."""
    groups: list[list[PlannedChunk]] = [[]]
    total = 0.0
    for chunk, size in zip(chunks, sizes, strict=True):
        if groups[-1] and total + size > target:
            groups.append([])
            total = 0.0
        groups[-1].append(chunk)
        total += size
    return [g for g in groups if g]


def _rows(root: Path, table: str, group: list[PlannedChunk]) -> pl.DataFrame:
    """A group's rows of `table`, in chunk order (each source file's order kept)."""
    files: list[Path] = []
    for chunk in group:
        files += [p for p in chunk_files(root, table, chunk) if p not in files]
    lo, hi = group[0].start, group[-1].stop
    return (pl.scan_parquet([str(p) for p in files])
            .filter(pl.col("match_index").is_between(lo, hi - 1)).collect())


def _write_table(root: Path, table: str, variant: str, chunks: list[PlannedChunk],
                 done: dict[tuple[str, int], dict[str, Any]], comp: dict[str, Any] | None,
                 generation: int, target: int, files: dict[str, Any]) -> None:
    """Write one table of one variant as compacted files; their entries into `files`."""
    sizes = [_estimate(table, done[(c.variant, c.chunk)], comp, (c.variant, c.chunk))
             for c in chunks]
    for k, group in enumerate(_groups(chunks, sizes, target)):
        frame = _rows(root, table, group)
        want = sum(done[(c.variant, c.chunk)]["parts"][table]["rows"] for c in group)
        if frame.height != want:
            raise RunError(f"{root}: {table} of {variant}, chunks {group[0].chunk}–"
                           f"{group[-1].chunk}: read {frame.height} rows, the markers say "
                           f"{want}; nothing was changed")
        data = parquet_bytes(frame)
        rel = f"{table}/variant={variant}/compact-{generation:05d}-{k:05d}.parquet"
        _atomic_write(root, root / rel, data)
        files[rel] = {"table": table, "variant": variant, "chunks": [c.chunk for c in group],
                      "rows": frame.height, "bytes": len(data),
                      "sha256": hashlib.sha256(data).hexdigest()}


def _record(done: dict[tuple[str, int], dict[str, Any]], files: dict[str, Any],
            generation: int) -> dict[str, Any]:
    chunks = {}
    for (variant, chunk), marker in sorted(done.items()):
        entry = {k: v for k, v in marker.items() if k not in ("parts", "format")}
        entry["rows"] = {t: p["rows"] for t, p in marker["parts"].items()}
        chunks[chunk_key(variant, chunk)] = entry
    return {"format": FORMAT, "generation": generation, "chunks": chunks, "files": files}


def _remove(root: Path, paths: list[Path]) -> None:
    if not paths:
        return
    if is_remote(root):
        root.fs.rm([p.path for p in paths])  # type: ignore[attr-defined]
        return
    for path in paths:
        path.unlink(missing_ok=True)


def _leftovers(root: Path, comp: dict[str, Any]) -> list[Path]:
    """What the compaction in force replaced: the parts and markers of the chunks it
    covers, and compacted files it does not name."""
    covered = covered_chunks(comp)
    written = game_of_run(read_provenance(root)).written  # the run's game's tables
    out = [marker_path(root, v, c) for v, c in sorted(covered)]
    out += [part_path(root, t, v, c) for v, c in sorted(covered) for t in written]
    for table in written:
        folder = root / table
        if folder.is_dir():
            out += [p for p in folder.rglob("compact-*.parquet")
                    if str(p.relative_to(root)) not in comp["files"]]
    return [p for p in out if p.exists()]


def _sizes(comp: dict[str, Any] | None, done: dict[tuple[str, int], dict[str, Any]]) -> int:
    covered = covered_chunks(comp)
    parts = sum(p.get("bytes", 0) for k, m in done.items() if k not in covered
                for p in m["parts"].values())
    return parts + sum(f["bytes"] for f in (comp or {}).get("files", {}).values())


def compact_run(root: Path | str, target: int = TARGET_BYTES, say=None) -> Compaction:
    """Compact the run in `root` (see the module); RunError (one line) when a sweep
    holds its lock or it is not complete and intact."""
    say = say or (lambda line: None)
    root = run_path(root)
    lock = run_lock(root, "sim compact")
    try:
        lock.acquire()
    except RunLocked as exc:
        raise RunError(f"{exc}; compact the run once its sweep is done") from None
    try:
        check = require_complete(root)  # every byte hashed: never rewrite a damaged run
        comp = read_compaction(root)
        before = _sizes(comp, check.done)
        generation = comp["generation"] if comp else 0
        if comp is None or covered_chunks(comp) != set(check.done):
            generation += 1
            files: dict[str, Any] = {}
            # the run's game's tables (sim.outputs.games: the hex game's WRITTEN)
            for table in game_of_run(read_provenance(root)).written:
                for variant in dict.fromkeys(c.variant for c in check.planned):
                    chunks = [c for c in check.planned if c.variant == variant]
                    if all(table in check.done[(c.variant, c.chunk)]["parts"] for c in chunks):
                        _write_table(root, table, variant, chunks, check.done, comp,
                                     generation, target, files)
                say(f"{root}: {table}: {sum(f['table'] == table for f in files.values())} "
                    "files")
            comp = _record(check.done, files, generation)
            _atomic_write(root, compacted_path(root),
                          json.dumps(comp, indent=1, sort_keys=True).encode())
            written = len(files)
        else:
            written = 0
        leftovers = _leftovers(root, comp)
        _remove(root, leftovers)
        return Compaction(root, generation, len(check.done), written, len(leftovers),
                          before, sum(f["bytes"] for f in comp["files"].values()))
    finally:
        lock.release()

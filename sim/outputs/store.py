"""Writing a sweep's outcome tables so that nothing is ever half-written, lost or
counted twice, and verifying a run folder before anything reads it.

Layout under the run folder DIR:
    TABLE/variant=ID/part-CHUNK.parquet   (TABLE in sim.outputs.schemas.WRITTEN: the
                                          outcome tables and their per-match aggregates)
    _done/ID__CHUNK.json                  one marker per finished chunk
    provenance.json                       what produced the folder (and its plan)
    .lock                                 the sweep writing the folder (sim.outputs.lock)
    .tmp/                                 files being written (never read)

Each chunk's files are written into .tmp/ and renamed into place; its done marker
is renamed into place last and records, for every part, its row count, size and
sha256. A killed sweep therefore leaves only whole files, and `verify_run` tells a
finished chunk from one that is missing, short, corrupt or was never finished:
resume plays such a chunk again and every reader refuses the run until it has.

On an object store (DIR an fsspec URL: sim.outputs.storage) a PUT is whole or
absent, so parts go straight to their keys (no .tmp/), and a worker writes only its
parts: the sweep's parent writes the marker once it has checked every part's size
and checksum in the store (`commit_chunk`). A worker killed mid-chunk leaves parts
no marker counts, which resume overwrites.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from sim.outputs.folders import MORRIS_DIR, SWEEP_DIR, name_problem
from sim.outputs.games import ALL_WRITTEN, game_of_run
from sim.outputs.schemas import SUMMARIES, TABLES, WRITTEN
from sim.outputs.storage import is_remote, run_path, sizes_under
from sim.outputs.summaries import summaries

MARKER_FORMAT = 2
PARTS = "part-*.parquet"  # a chunk's parts (a compaction's files are compact-*.parquet)
_MARKER_KEYS = ("format", "variant", "chunk", "start", "stop", "matches", "errors", "parts")
_PART_KEYS = ("rows", "bytes", "sha256")


class RunError(Exception):
    """A run folder that cannot be read as it is: one line naming the folder (and the
    chunk) and what to do.

    In a notebook the message is the whole display (IPython's `_render_traceback_`
    hook), because the traceback of a missing folder explains nothing."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


class StorageError(RunError):
    """The run folder's disk is full, or the folder is read-only: one line naming the
    folder, what could not be written, the free space and what to do. A sweep stops on
    it at once (sim.runner.dispatch): trying again or recording error rows would only
    fill the disk further; what was written whole stays, and the same command resumes."""


# errors of the folder's storage itself (not of one file): no retry can help
_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_READ_ONLY = {errno.EROFS, errno.EACCES, errno.EPERM}


def storage_problem(root: Path, exc: OSError, what: str = "") -> str | None:
    """The one line of StorageError for `exc` raised writing into the run folder `root`
    (`what`: the file, relative), or None when `exc` is not about the storage."""
    if exc.errno not in _FULL | _READ_ONLY:
        return None
    try:
        free = f"{shutil.disk_usage(root).free / 1e6:,.1f} MB free"
    except (OSError, TypeError):  # TypeError: an object store has no disk to ask
        free = "free space unknown"
    writing = f"cannot write {what}" if what else "cannot write"
    fix = "free some space" if exc.errno in _FULL else "make the folder writable"
    return (f"{root}: {writing}: {exc.strerror or exc} ({free} there); what was written "
            f"whole is kept: {fix} and run the same command again to resume")


def part_path(root: Path, table: str, variant: str, chunk: int) -> Path:
    return root / table / f"variant={variant}" / f"part-{chunk:05d}.parquet"


def marker_path(root: Path, variant: str, chunk: int) -> Path:
    return root / "_done" / f"{variant}__{chunk:05d}.json"


def _fsync_write(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        # the rename below is only as durable as the bytes it points at
        os.fsync(f.fileno())


def _atomic_write(root: Path, final: Path, data: bytes) -> None:
    """Write `final` whole or not at all; StorageError when the disk is full or the
    folder read-only (the partial temporary file is removed: it holds the space)."""
    if is_remote(root):  # an object's PUT is atomic: it is whole or absent
        final.write_bytes(data)
        return
    tmp = root / ".tmp" / f"{final.parent.name}.{final.name}.{os.getpid()}"
    try:
        tmp.parent.mkdir(exist_ok=True)
        final.parent.mkdir(parents=True, exist_ok=True)
        _fsync_write(tmp, data)
        os.replace(tmp, final)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        why = storage_problem(root, exc, str(final.relative_to(root)))
        if why is None:
            raise
        raise StorageError(why) from None


def atomic_write_text(root: Path, final: Path, text: str) -> None:
    """Write a text file of the run folder `root` so that it is whole or absent."""
    _atomic_write(root, final, text.encode("utf-8"))


def parquet_bytes(frame: pl.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.write_parquet(buf, statistics=True)
    return buf.getvalue()


def check_reachable(root: Path, run_id: str | None = None) -> None:
    """RunError unless `root` is the run folder (with this `run_id`) as its creator sees
    it: a worker on storage that is not the run's must fail, not write a look-alike."""
    where = f"the run folder {root} is not reachable from this worker " \
            f"(host {os.uname().nodename})"
    try:
        prov = json.loads((root / "provenance.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise RunError(f"{where}; put --out on storage every worker reaches") from None
    if run_id is not None and prov.get("run_id") != run_id:
        raise RunError(f"{where}: the folder there holds another run; put --out on "
                       "storage every worker reaches")


def write_chunk(root: Path, variant: str, chunk: int, frames: dict[str, pl.DataFrame],
                summary: dict[str, Any], run_id: str | None = None,
                tables: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Write every table of one chunk, then its done marker (each atomically); returns
    the marker. `root` must already be the run folder (check_reachable). The
    aggregate tables (SUMMARIES) are computed from `frames` unless it holds them.
    On an object store only the parts are written: the sweep's parent writes the
    returned marker with `commit_chunk` once it has checked them. `tables`: those to
    write (the experiment's tables_out), default every one."""
    check_reachable(root, run_id)
    wanted = tables or WRITTEN
    if any(t in wanted and t not in frames for t in SUMMARIES):
        frames = {**summaries(frames), **frames}
    parts, blobs = {}, {}
    for table in wanted:
        data = parquet_bytes(frames[table])
        if is_remote(root):  # put together below, concurrently
            blobs[part_path(root, table, variant, chunk).path] = data
        else:
            _atomic_write(root, part_path(root, table, variant, chunk), data)
        parts[table] = {"rows": frames[table].height, "bytes": len(data),
                        "sha256": hashlib.sha256(data).hexdigest()}
    if blobs:
        root.fs.pipe(blobs)  # type: ignore[attr-defined]
    marker = {**summary, "format": MARKER_FORMAT, "variant": variant, "chunk": chunk,
              "parts": parts}
    if not is_remote(root):
        _atomic_write(root, marker_path(root, variant, chunk),
                      json.dumps(marker, sort_keys=True).encode())
    return marker


def commit_chunk(root: Path, marker: dict[str, Any]) -> None:
    """Write a chunk's done marker on an object store, after checking that every part
    it lists is in the store with the size and sha256 the worker reported (read
    back: the store's bytes, not the worker's word). RunError naming the part
    otherwise, and no marker: the chunk is then still to play. A folder on disk is
    left alone (its worker wrote the marker: write_chunk)."""
    if not is_remote(root):
        return
    variant, chunk = marker["variant"], marker["chunk"]
    paths = [part_path(root, t, variant, chunk).path for t in ALL_WRITTEN
             if t in marker["parts"]]
    # every part in one concurrent round of GETs, not a request after another
    fetched = root.fs.cat(paths, on_error="omit")  # type: ignore[attr-defined]
    why = chunk_problem(root, variant, chunk, marker["start"], marker["stop"], marker,
                        fetched=fetched)
    if why is not None:
        raise RunError(f"{root}: chunk {variant}/{chunk}: {why}")
    _atomic_write(root, marker_path(root, variant, chunk),
                  json.dumps(marker, sort_keys=True).encode())


def read_marker(path: Path, tables: tuple[str, ...] = TABLES,
                ) -> tuple[dict[str, Any] | None, str | None]:
    """(marker, None) or (None, why it cannot be trusted); never raises. `tables`: the
    outcome tables the run writes (its tables_out), each of which must have a part."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:
        return None, f"its done marker cannot be read ({exc})"
    if not text.strip():
        return None, "its done marker is empty"
    try:
        marker = json.loads(text)
    except (ValueError, RecursionError):
        return None, "its done marker is not valid JSON"
    if not isinstance(marker, dict):
        return None, "its done marker is not a JSON object"
    if marker.get("format") != MARKER_FORMAT and "parts" not in marker:
        return None, "its done marker has no checksums (an older format)"
    missing = [k for k in _MARKER_KEYS if k not in marker]
    if missing:
        return None, f"its done marker lacks {', '.join(missing)}"
    parts = marker["parts"]
    if not isinstance(parts, dict) or any(
            not isinstance(parts.get(t), dict) or any(k not in parts[t] for k in _PART_KEYS)
            for t in tables):
        return None, "its done marker does not describe every table's part"
    return marker, None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def chunk_problem(root: Path, variant: str, chunk: int, start: int, stop: int,
                  marker: dict[str, Any], read_back: bool = True,
                  sizes: dict[str, int] | None = None,
                  fetched: dict[str, bytes] | None = None) -> str | None:
    """Why the files of a chunk with this marker are not what it says, or None.
    Without `read_back`, each part's size is checked but its bytes are not hashed
    again (see verify_run's `written`). `sizes`: the folder's files and sizes from
    one listing (sizes_under), else each part is asked for its own; `fetched`: the
    parts' bytes by their store path, already read (commit_chunk)."""
    if (marker["variant"], marker["chunk"], marker["start"], marker["stop"]) != (
            variant, chunk, start, stop):
        return (f"its done marker is for {marker['variant']}/{marker['chunk']} matches "
                f"{marker['start']}–{marker['stop'] - 1}")
    parts = marker["parts"]
    if parts["matches"]["rows"] + parts["errors"]["rows"] != stop - start:
        return (f"it holds {parts['matches']['rows']} match and {parts['errors']['rows']} "
                f"error rows for {stop - start} matches")
    # a chunk written before the aggregate tables existed lists only the outcome tables
    for table in (t for t in ALL_WRITTEN if t in parts):
        path = part_path(root, table, variant, chunk)
        want = parts[table]
        data = None if fetched is None else fetched.get(path.path)  # type: ignore[attr-defined]
        size = _size(root, path, sizes) if fetched is None else \
            None if data is None else len(data)
        if size is None:
            return f"its {table} part is missing ({path.relative_to(root)})"
        if size < want["bytes"]:
            return f"its {table} part is short ({size} of {want['bytes']} bytes)"
        if size != want["bytes"] or (read_back and (
                _sha256(path) if data is None else hashlib.sha256(data).hexdigest())
                != want["sha256"]):
            return f"its {table} part is corrupt (its checksum differs from the marker's)"
    return None


def _size(root: Path, path: Path, sizes: dict[str, int] | None) -> int | None:
    """The size of a file of the run (from the listing `sizes` when there is one), or
    None when it is missing."""
    if sizes is not None:
        return sizes.get(str(path.relative_to(root)))
    try:
        return path.stat().st_size
    except OSError:
        return None


@dataclass(frozen=True)
class PlannedChunk:
    variant: str
    chunk: int
    start: int
    stop: int

    @property
    def label(self) -> str:
        return f"chunk {self.variant}/{self.chunk} (matches {self.start}–{self.stop - 1})"


@dataclass
class RunCheck:
    """What `verify_run` found: finished chunks (with markers), chunks not written yet,
    damaged chunks, and files no finished chunk accounts for (`strays`: those of a
    planned chunk are an interrupted write that resume overwrites; `foreign` ones
    belong to no chunk of the plan at all)."""

    root: Path
    planned: list[PlannedChunk]
    done: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    pending: list[PlannedChunk] = field(default_factory=list)
    damaged: list[tuple[PlannedChunk, str]] = field(default_factory=list)
    strays: list[Path] = field(default_factory=list)
    foreign: list[Path] = field(default_factory=list)
    # what a compaction left behind (parts and markers of the chunks it rewrote, files
    # of another generation): no reader reads them, `sim compact` removes them
    leftovers: list[Path] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not (self.pending or self.damaged or self.strays or self.foreign)

    @property
    def matches(self) -> int:
        return sum(m["parts"]["matches"]["rows"] for m in self.done.values())

    @property
    def errors(self) -> int:
        return sum(m["parts"]["errors"]["rows"] for m in self.done.values())

    @property
    def planned_matches(self) -> int:
        return sum(c.stop - c.start for c in self.planned)

    def problems(self) -> list[str]:
        """One line per problem, each naming the folder and the chunk or file."""
        out = [f"{self.root}: {c.label}: {why}" for c, why in self.damaged]
        out += [f"{self.root}: {p.relative_to(self.root)}: belongs to no chunk of this "
                "run's plan" for p in self.foreign]
        if self.pending:
            out.append(f"{self.root}: incomplete: {len(self.pending)} of {len(self.planned)} "
                       f"chunks not written yet, first {self.pending[0].label}")
        out += [f"{self.root}: {p.relative_to(self.root)}: has no done marker (an "
                "interrupted write)" for p in self.strays]
        return out


def plan_of(provenance: dict[str, Any]) -> list[PlannedChunk]:
    """The chunks a run folder's provenance promises: every variant's matches in
    chunks of chunk_size. ValueError for a variant id that cannot name a file (a
    hand-edited provenance): its paths would lead out of the run folder."""
    size = int(provenance["chunk_size"])
    matches = int(provenance["matches_per_variant"])
    for v in provenance["variants"]:
        if (why := name_problem(str(v["id"]), "variant")) is not None:
            raise ValueError(why)
    return [PlannedChunk(v["id"], k, start, min(start + size, matches))
            for v in provenance["variants"]
            for k, start in enumerate(range(0, matches, size))]


def outcome_tables(provenance: dict[str, Any]) -> tuple[str, ...]:
    """The outcome tables (its game's: sim.outputs.games) a run writes: its
    experiment's tables_out."""
    game = game_of_run(provenance)
    chosen = provenance.get("tables_out") or game.tables
    return tuple(t for t in game.tables if t in chosen)


def read_provenance(root: Path) -> dict[str, Any]:
    """The run folder's provenance; RunError (one line) when the folder is not a run."""
    root = run_path(root)
    path = root / "provenance.json"
    if not root.is_dir():
        raise RunError(f"{root}: no such run folder")
    if not path.is_file():
        inner = [root / d for d in (SWEEP_DIR, MORRIS_DIR) if (root / d / "provenance.json")
                 .is_file()]
        hint = f"; its sweeps: {', '.join(map(str, inner))}" if inner else ""
        raise RunError(f"{root}: not a sweep run folder (no provenance.json){hint}")
    try:
        prov = json.loads(path.read_text(encoding="utf-8"))
        plan_of(prov)
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise RunError(f"{path}: unreadable provenance ({type(exc).__name__}: {exc})") from None
    return prov


def verify_chunk(root: Path, chunk: PlannedChunk, written: dict[str, Any] | None = None,
                 sizes: dict[str, int] | None = None, tables: tuple[str, ...] = TABLES,
                 ) -> tuple[dict[str, Any] | None, str | None]:
    """(marker, None) for a finished, intact chunk, else (None, why not). `written`:
    the marker its writer returned, if this process just had it written (verify_run);
    `sizes`: the folder's listing (sizes_under), if it has one."""
    comp = read_compaction(root)
    if comp is not None and chunk_key(chunk.variant, chunk.chunk) in comp["chunks"]:
        mine = {rel: f for rel, f in comp["files"].items()
                if f["variant"] == chunk.variant and chunk.chunk in f["chunks"]}
        return compacted_chunk(root, comp, chunk,
                               compaction_damage(root, {"files": mine}, sizes))
    path = marker_path(root, chunk.variant, chunk.chunk)
    if not _exists(root, path, sizes):
        return None, "not written yet"
    marker, why = read_marker(path, tables)
    if marker is not None:
        why = chunk_problem(root, chunk.variant, chunk.chunk, chunk.start, chunk.stop, marker,
                            read_back=marker != written, sizes=sizes)
    return (marker, None) if why is None else (None, why)


@dataclass(frozen=True)
class MatchRow:
    """A match's row of a run folder: `table` is "matches" (it finished) or "errors"."""

    provenance: dict[str, Any]
    chunk: PlannedChunk
    table: str
    row: dict[str, Any]


def _exists(root: Path, path: Path, sizes: dict[str, int] | None) -> bool:
    return path.exists() if sizes is None else str(path.relative_to(root)) in sizes


def find_match(run_dir: Path, match_id: str) -> MatchRow:
    """The row of match `match_id` (VARIANT:INDEX) of a run folder, read from the one
    chunk that holds it (only that chunk must be intact). RunError (one line) when
    the folder is not a run, the id names no match of it, or its chunk is damaged."""
    run_dir = run_path(run_dir)
    prov = read_provenance(run_dir)
    name, _, index = match_id.rpartition(":")
    variants = [v["id"] for v in prov["variants"]]
    if name not in variants or not index.isdigit():
        shown = ", ".join(variants)
        raise RunError(f"{run_dir}: no match {match_id!r} in this run (ids are VARIANT:INDEX, "
                       f"such as {variants[0]}:12; its variants: {shown})")
    match_id = f"{name}:{int(index)}"  # 019 is match 19
    chunks = [c for c in plan_of(prov) if c.variant == name]
    chunk = next((c for c in chunks if c.start <= int(index) < c.stop), None)
    if chunk is None:
        raise RunError(f"{run_dir}: no match {match_id!r} in this run ({name} played "
                       f"matches {min(c.start for c in chunks)}–{max(c.stop for c in chunks) - 1})")
    _marker, why = verify_chunk(run_dir, chunk, tables=outcome_tables(prov))
    if why is not None:
        raise RunError(f"{run_dir}: {chunk.label}: {why}; running the same `sim sweep` again "
                       "redoes it")
    for table in ("matches", "errors"):
        rows = pl.concat([_read_parquet(p).filter(pl.col("match_id") == match_id)
                          for p in chunk_files(run_dir, table, chunk)])
        if rows.height:
            return MatchRow(prov, chunk, table, rows.row(0, named=True))
    raise RunError(f"{run_dir}: {chunk.label} has no row for {match_id!r}")


def _read_parquet(path: Path) -> pl.DataFrame:
    return pl.read_parquet(io.BytesIO(path.read_bytes()) if is_remote(path) else path)


def verify_run(root: Path | str, provenance: dict[str, Any] | None = None,
               written: dict[tuple[str, int], dict[str, Any]] | None = None) -> RunCheck:
    """Check every chunk the run's plan promises against its done marker (row counts,
    sizes, checksums) and look for part files no marker accounts for. Never raises
    for damage (that is in the result); RunError when `root` is not a run folder.

    `written`: the markers that this sweep's workers returned for the chunks they just
    wrote, by (variant, chunk). A chunk whose marker on disk is the one returned is
    checked by sizes without hashing its parts again: its checksums are of the very
    bytes written (write_chunk hashes them in memory and fsyncs them), and re-reading
    them all at a sweep's end is serial time with every worker idle (80 ms a 10,000
    match sweep; 1.6 s at 200,000). Whoever reads the run later hashes every byte
    (require_complete, `sim check-run`)."""
    root = run_path(root)
    prov = provenance if provenance is not None else read_provenance(root)
    check = RunCheck(root, plan_of(prov))
    sizes = sizes_under(root)  # an object store's files, in one listing
    comp = read_compaction(root)
    covered = covered_chunks(comp)
    bad = compaction_damage(root, comp, sizes, read_back=not written) if comp else {}
    expected = {root / rel for rel in comp["files"]} | {compacted_path(root)} if comp \
        else set()
    for c in check.planned:
        if (c.variant, c.chunk) in covered:
            marker, why = compacted_chunk(root, comp, c, bad)
            if why is None:
                check.done[(c.variant, c.chunk)] = marker
            else:
                check.damaged.append((c, why))
            continue
        if not _exists(root, marker_path(root, c.variant, c.chunk), sizes):
            check.pending.append(c)
            continue
        marker, why = verify_chunk(root, c, (written or {}).get((c.variant, c.chunk)), sizes,
                                   outcome_tables(prov))
        if why is None:
            check.done[(c.variant, c.chunk)] = marker
            expected |= {part_path(root, t, c.variant, c.chunk) for t in ALL_WRITTEN
                         if t in marker["parts"]}
        else:
            check.damaged.append((c, why))
    planned = {(c.variant, c.chunk) for c in check.planned}
    # the files of a damaged chunk are reported with it, not one by one
    accounted = set(check.done) | {(c.variant, c.chunk) for c, _ in check.damaged}
    for path in _run_files(root, sizes):
        if path in expected:
            continue
        owner = _owner_of(path)
        # a compaction's files: of the one in force (expected), of one killed before
        # its record was written, or what the one in force replaced
        if path.name.startswith("compact-") or path.name == COMPACTED or owner in covered:
            check.leftovers.append(path)
            continue
        if owner not in planned:
            check.foreign.append(path)
        elif owner not in accounted and path.parent.name != "_done":
            check.strays.append(path)
    return check


def _run_files(root: Path, sizes: dict[str, int] | None) -> list[Path]:
    """The files under the folders of the run's tables and markers, sorted by folder."""
    folders = [*ALL_WRITTEN, "_done"]
    if sizes is not None:
        return [root / name for name in sorted(sizes) if name.split("/")[0] in folders]
    return [path for folder in folders if (root / folder).is_dir()
            for path in sorted((root / folder).rglob("*")) if not path.is_dir()]


def _owner_of(path: Path) -> tuple[str, int] | None:
    """(variant, chunk) a part or marker file's name gives, or None for any other file."""
    if path.parent.name == "_done":
        variant, sep, chunk = path.name.removesuffix(".json").rpartition("__")
    else:
        sep = "=" if path.parent.name.startswith("variant=") else ""
        variant = path.parent.name.removeprefix("variant=")
        chunk = path.name.removeprefix("part-").removesuffix(".parquet")
        if not path.name.endswith(".parquet"):
            sep = ""
    return (variant, int(chunk)) if sep and chunk.isdigit() else None


def require_complete(root: Path | str) -> RunCheck:
    """verify_run for readers: RunError with one line naming the first problem (and how
    many more there are) unless every planned chunk is finished and intact."""
    check = verify_run(root)
    problems = check.problems()
    if problems:
        more = f" (and {len(problems) - 1} more: `sim check-run {check.root}`)" \
            if len(problems) > 1 else ""
        raise RunError(f"{problems[0]}{more}; running the same `sim sweep` again redoes "
                       "what is missing or damaged")
    return check


def locate_run(path: Path | str) -> Path:
    """The run folder `path` names, a relative path taken from the project root (where
    `make demo` writes runs/, wherever a notebook's kernel runs), checked complete and
    intact; RunError (one line) saying what to do otherwise."""
    from sim.rules.tables import REPO_ROOT

    given = run_path(path)
    root = given if is_remote(given) or given.is_absolute() else REPO_ROOT / given
    if not root.is_dir():
        hint = "`make demo` makes it" if given == Path("runs/demo") else \
            "run its sweep first"
        raise RunError(f"{given}: no such run folder ({root}); {hint}, or set SIM_RUN_DIR to "
                       "a run folder (a relative path is taken from the project root)")
    require_complete(root)
    return root


def remove_chunk(root: Path, variant: str, chunk: int) -> None:
    """Forget a chunk (its marker first, so no reader trusts half of it)."""
    marker_path(root, variant, chunk).unlink(missing_ok=True)
    for table in ALL_WRITTEN:
        part_path(root, table, variant, chunk).unlink(missing_ok=True)


def clear_tmp(root: Path) -> None:
    if not is_remote(root):  # an object store's writes need no temporary files
        shutil.rmtree(root / ".tmp", ignore_errors=True)


def read_markers(root: Path) -> list[dict[str, Any]]:
    """The markers of the chunks `verify_run` finds finished and intact."""
    return list(verify_run(root).done.values())


def scan(root: Path, table: str) -> pl.LazyFrame:
    """A lazy frame over one table of a run folder, `variant` from the hive path (a
    string, whatever the variant's name looks like)."""
    root = run_path(root)
    files = table_files(root, table)
    return pl.scan_parquet(str(root / table / "**" / PARTS) if files is None else
                           [str(p) for p in files], hive_partitioning=True,
                           hive_schema={"variant": pl.Utf8}, try_parse_hive_dates=False)


# ---- a compacted run (sim.outputs.compact) -------------------------------------------
# `sim compact` rewrites the parts of many chunks into a few large files per table and
# variant, TABLE/variant=ID/compact-GENERATION-K.parquet, and commits them with one
# record, _done/compacted.json, written atomically: the done marker of every chunk it
# covers. Until that record is written the old parts and markers are the run; from then
# on the record's files are, and what it replaced is a leftover no reader reads.

COMPACTED = "compacted.json"
_FILE_KEYS = ("table", "variant", "chunks", "rows", "bytes", "sha256")


def compacted_path(root: Path) -> Path:
    return root / "_done" / COMPACTED


def chunk_key(variant: str, chunk: int) -> str:
    return f"{variant}__{chunk:05d}"


def read_compaction(root: Path) -> dict[str, Any] | None:
    """The compaction in force (its record), or None for a run never compacted;
    RunError (one line) when the record cannot be read."""
    path = compacted_path(root)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RunError(f"{path}: cannot be read ({exc})") from None
    try:
        comp = json.loads(text)
        if not isinstance(comp["generation"], int) or any(
                any(k not in f for k in _FILE_KEYS) for f in comp["files"].values()) or any(
                any(k not in c for k in ("start", "stop", "rows")) for c in
                comp["chunks"].values()):
            raise ValueError
    except (ValueError, KeyError, TypeError, AttributeError):
        raise RunError(f"{path}: not a compaction record (damaged); `sim compact` cannot "
                       "repair it: restore it or sweep the run again") from None
    return comp


def covered_chunks(comp: dict[str, Any] | None) -> set[tuple[str, int]]:
    """The (variant, chunk) a compaction record covers."""
    if comp is None:
        return set()
    return {(c["variant"], c["chunk"]) for c in comp["chunks"].values()}


def compaction_damage(root: Path, comp: dict[str, Any] | None,
                      sizes: dict[str, int] | None, read_back: bool = True,
                      ) -> dict[tuple[str, int], str]:
    """Why each damaged file of a compaction is not what its record says, for every
    (variant, chunk) it holds."""
    bad: dict[tuple[str, int], str] = {}
    for rel, f in (comp or {}).get("files", {}).items():
        path = root / rel
        size = _size(root, path, sizes)
        if size is None:
            why = f"its compacted {f['table']} file is missing ({rel})"
        elif size != f["bytes"] or (read_back and _sha256(path) != f["sha256"]):
            why = f"its compacted {f['table']} file is corrupt ({rel}: its checksum differs " \
                  "from the record's)"
        else:
            continue
        for chunk in f["chunks"]:
            bad.setdefault((f["variant"], chunk), why)
    return bad


def compacted_chunk(root: Path, comp: dict[str, Any], chunk: PlannedChunk,
                    bad: dict[tuple[str, int], str]) -> tuple[dict[str, Any] | None, str | None]:
    """(marker, None) for a chunk the compaction covers whose files are intact, else
    (None, why): the marker is the record's, with each table's rows."""
    entry = comp["chunks"][chunk_key(chunk.variant, chunk.chunk)]
    if (entry["start"], entry["stop"]) != (chunk.start, chunk.stop):
        return None, (f"the compaction record has it as matches {entry['start']}–"
                      f"{entry['stop'] - 1}")
    if (chunk.variant, chunk.chunk) in bad:
        return None, bad[(chunk.variant, chunk.chunk)]
    rows = entry["rows"]
    marker = {**{k: v for k, v in entry.items() if k != "rows"},
              "parts": {t: {"rows": n} for t, n in rows.items()}}
    return marker, None


def chunk_files(root: Path, table: str, chunk: PlannedChunk) -> list[Path]:
    """The files that hold a chunk's rows of `table`: its part, or the compacted
    file(s) that took it in."""
    comp = read_compaction(root)
    if comp is None or chunk_key(chunk.variant, chunk.chunk) not in comp["chunks"]:
        return [part_path(root, table, chunk.variant, chunk.chunk)]
    return [root / rel for rel, f in sorted(comp["files"].items()) if f["table"] == table
            and f["variant"] == chunk.variant and chunk.chunk in f["chunks"]]


def table_files(root: Path, table: str) -> list[Path] | None:
    """The files of `table` in a compacted run: the compaction's, and the parts of the
    chunks written since; None for a run never compacted (every Parquet file under
    TABLE/ is the table's, as a glob finds them)."""
    comp = read_compaction(root)
    if comp is None:
        return None
    covered = covered_chunks(comp)
    files = [root / rel for rel, f in sorted(comp["files"].items()) if f["table"] == table]
    folder = root / table
    if folder.is_dir():
        files += [p for p in sorted(folder.rglob(PARTS))
                  if _owner_of(p) not in covered]
    return files

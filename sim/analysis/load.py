"""Reading a run folder (docs/outcomes.md): eagerly into polars DataFrames
(`load_run`, for notebooks and tests), or lazily (`scan_run`, for the report: the
events and turns tables of a 12,000-match run hold tens of millions of rows, so
they stay Parquet scans that each metric aggregates with only the columns and
rows it reads)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from sim.outputs.games import game_of_run
from sim.outputs.schemas import SCHEMAS, SORT_KEYS, SUMMARIES, TABLES
from sim.outputs.storage import is_remote, run_path
from sim.outputs.store import PARTS, scan, table_files


def empty_table(table: str) -> pl.DataFrame:
    """A typed frame with no rows: the table's columns plus `variant`."""
    return pl.DataFrame(schema={**SCHEMAS[table], "variant": pl.Utf8})


def scan_table(root: Path | str, table: str) -> pl.LazyFrame:
    """One table of a run folder as a lazy Parquet scan: the table's columns in
    schema order, `variant` (Utf8, from the hive path), then any others; rows in no
    particular order (read_table sorts). An empty typed frame's scan when the folder
    is missing. Filters on `variant` read only that variant's files."""
    folder = run_path(root) / table
    files = table_files(run_path(root), table)  # None: never compacted, every part
    if (not folder.is_dir() or not any(folder.rglob(PARTS))) if files is None \
            else not files:
        return empty_table(table).lazy()
    # the layout of sim.outputs.store.scan, with `variant` forced to a string: a variant named
    # "1" or "2024-01-01" must not be read back as a number or a date
    # low_memory: a scan decodes a row group at a time rather than several at once; the
    # report's filters over 14 million event rows peak 150 MB lower, and no slower
    frame = pl.scan_parquet(str(folder / "**" / PARTS) if files is None else
                            [str(p) for p in files], hive_partitioning=True,
                            hive_schema={"variant": pl.Utf8}, try_parse_hive_dates=False,
                            low_memory=True)
    names = frame.collect_schema().names()
    columns = [c for c in (*SCHEMAS[table], "variant") if c in names]
    extra = [c for c in names if c not in columns]
    return frame.select(*columns, *extra)


def read_table(root: Path | str, table: str) -> pl.DataFrame:
    """One table of a run folder, `variant` (Utf8) from the hive path, sorted by
    variant and the table's keys; an empty typed frame when the folder is missing."""
    return sorted_by(scan_table(root, table).collect(), ["variant", *SORT_KEYS[table]])


def sorted_by(frame: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """`frame.sort(keys)`, without the sort when its rows already are in that order
    (keys unique per row, as every table's are: then the order is the one sort gives).
    A run's parts are read in path order, which is nearly always the sorted one: sorting
    the 28 columns of a 100,000-match seats table anyway took 200 MB more than reading
    it (issue 46), checking the order takes its key columns' size."""
    order = frame.select(pl.arg_sort_by(keys)).to_series()
    if order.equals(pl.int_range(frame.height, eager=True, dtype=order.dtype)):
        return frame
    return frame.sort(keys)


def write_frame(frame: pl.DataFrame, path: Path) -> None:
    """Write `frame` as the Parquet file `path`: a file on this disk, or an object at a
    URL (sim.outputs.storage.run_path), written whole in one put."""
    if not is_remote(path):
        frame.write_parquet(path)
        return
    import io

    buf = io.BytesIO()
    frame.write_parquet(buf)
    path.write_bytes(buf.getvalue())


class RunFolderError(ValueError):
    """`load_run` was given a folder that holds no run: missing, not a folder, or
    without a single match or error row. The message is one line naming the folder
    (a ValueError, so `sim report` prints it as its one-line error)."""


@dataclass
class Run:
    """The outcome tables of a run folder, its provenance and baseline variant."""

    matches: pl.DataFrame
    seats: pl.DataFrame
    events: pl.DataFrame
    turns: pl.DataFrame
    errors: pl.DataFrame
    truces: pl.DataFrame
    provenance: dict[str, Any] = field(default_factory=dict)
    baseline: str | None = None
    root: Path | None = None

    @property
    def variants(self) -> list[str]:
        """Variant ids: provenance order first, then any other id found in the tables."""
        return _variant_ids(self.provenance, self.matches, self.errors)


@dataclass
class RunScan:
    """A run folder read for the report: the small tables (matches, errors) as
    DataFrames sorted like read_table's; seats, events, turns and truces as lazy scans
    (scan_table: rows in no particular order, each metric aggregating the columns and
    rows it reads); its provenance and baseline variant."""

    matches: pl.DataFrame
    seats: pl.LazyFrame
    events: pl.LazyFrame
    turns: pl.LazyFrame
    errors: pl.DataFrame
    truces: pl.LazyFrame
    provenance: dict[str, Any] = field(default_factory=dict)
    baseline: str | None = None
    root: Path | None = None
    # the per-match aggregates the sweep wrote (sim.outputs.summaries) as lazy scans;
    # None for a run written before them, whose readers use events and turns instead
    usage: pl.LazyFrame | None = None
    quiet: pl.LazyFrame | None = None
    dominance_runs: pl.LazyFrame | None = None
    gold_turns: pl.LazyFrame | None = None

    @property
    def variants(self) -> list[str]:
        """Variant ids: provenance order first, then any other id found in the tables."""
        return _variant_ids(self.provenance, self.matches, self.errors)


def _variant_ids(provenance: dict[str, Any], *frames: pl.DataFrame) -> list[str]:
    ids = [v["id"] for v in provenance.get("variants", []) if "id" in v]
    for frame in frames:
        for vid in frame.get_column("variant").unique(maintain_order=True).to_list():
            if vid not in ids:
                ids.append(vid)
    return ids


def _open(run_dir: Path | str, read) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """(root, tables by name via `read(root, table)`, provenance) of a run folder, or
    RunFolderError (see load_run)."""
    root = run_path(run_dir)
    if not root.is_dir():
        raise RunFolderError(f"{root}: no such run folder" if not root.exists()
                             else f"{root}: not a folder")
    tables = {table: read(root, table) for table in TABLES}
    if tables["matches"].height == 0 and tables["errors"].height == 0:
        raise RunFolderError(f"{root}: not a sweep run, or an empty one (no match and no "
                             "error rows under matches/ or errors/)")
    path = root / "provenance.json"
    provenance: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    return root, tables, provenance


def _baseline(provenance: dict[str, Any], ids: list[str]) -> str | None:
    baseline = provenance.get("baseline")
    if baseline is None:
        baseline = ids[0] if ids else None
    return baseline


def load_run(run_dir: Path | str) -> Run:
    """Read every table of `run_dir` eagerly.

    A missing table folder gives an empty typed frame; a missing provenance.json an
    empty dict. The baseline is provenance["baseline"], else the first variant of
    provenance["variants"], else the first variant found in matches (sorted).
    Raises RunFolderError when `run_dir` is missing, not a folder, or holds no
    match and no error row (an empty run would analyse to nothing, silently).
    """
    root, tables, provenance = _open(run_dir, read_table)
    run = Run(**tables, provenance=provenance, root=root)
    run.baseline = _baseline(provenance, run.variants)
    return run


# the columns of the held tables that no metric of the report reads, left in their files
# by scan_run: at 100,000 matches a quarter of seats' 80 MB and, with each match's
# replay command (read back for the flagged matches only: anomalies.anomalies), 22 of
# matches' 32 MB (issue 46)
REPORT_UNREAD = {
    "matches": ("personalities", "replay"),
    "seats": ("cities", "capitals_lost", "cities_captured", "observatory_queued_turn",
              "observatory_lost_turn", "observatory_completed_turn", "peak_dominance",
              "science_unspent"),
}


def _read_held(root: Path, table: str) -> pl.DataFrame:
    """read_table of `table` without its REPORT_UNREAD columns (never read from disk)."""
    return sorted_by(_scan_held(root, table).collect(), ["variant", *SORT_KEYS[table]])


def _scan_held(root: Path, table: str) -> pl.LazyFrame:
    """scan_table of `table` without its REPORT_UNREAD columns."""
    scan = scan_table(root, table)
    unread = [c for c in REPORT_UNREAD.get(table, ()) if c in scan.collect_schema().names()]
    return scan.drop(unread)


# the tables scan_run leaves as lazy scans: events and turns (tens of millions of rows),
# and seats: held whole, its 400,000 rows at 100,000 matches took 130 MB resident to
# read for 55 MB kept, and every seat metric reads a few of its columns (issue 46); and
# truces, which only the truce section reads (truces.truce_counts, slice by slice): held
# whole from the start, its 18.5 MB at 100,000 matches sat under every later pass's peak
LAZY_TABLES = ("seats", "events", "turns", "truces")


def scan_run(run_dir: Path | str) -> RunScan:
    """`run_dir` as load_run reads it (the same checks, baseline and sorted small
    tables, less the REPORT_UNREAD columns), except that the LAZY_TABLES stay lazy
    scans: nothing of theirs is read until a metric collects the columns and rows it
    needs; and with the run's aggregates (`usage`, `quiet`, `dominance_runs`,
    `gold_turns`) when it has them."""
    root, tables, provenance = _open(
        run_dir, lambda r, t: _scan_held(r, t) if t in LAZY_TABLES else _read_held(r, t))
    run = RunScan(**tables, provenance=provenance, root=root,
                  **{t: _summary(root, t) for t in SUMMARIES})
    run.baseline = _baseline(provenance, run.variants)
    return run


def _parts(root: Path, table: str) -> int:
    files = table_files(run_path(root), table)
    if files is not None:  # a compacted run: its record's files and newer parts
        return len(files)
    folder = run_path(root) / table
    return sum(1 for _ in folder.rglob(PARTS)) if folder.is_dir() else 0


def _summary_written(root: Path, table: str) -> bool:
    """Every chunk of the run wrote the aggregate table `table` (a part for each part
    of matches)."""
    written = _parts(root, table)
    if table_files(run_path(root), "matches") is not None:  # compacted: files differ in number
        return written > 0
    return written > 0 and written == _parts(root, "matches")


def missing_summaries(root: Path) -> list[str]:
    """The per-match aggregate tables (sim.outputs.schemas.SUMMARIES) a run folder
    lacks: all of them for a run swept before they existed, whose report reads its
    events and turns tables instead (the same page, more slowly)."""
    return [t for t in SUMMARIES if not _summary_written(root, t)]


def _summary(root: Path, table: str) -> pl.LazyFrame | None:
    """The aggregate table `table` as a lazy scan (variant from the hive path) when
    every chunk of the run wrote it, else None."""
    return scan(root, table) if _summary_written(root, table) else None


# matches a slice of sum_over_slices reads: some 170,000 rows of a variant's capture and
# revolt events at standard length, a few MB, while a scan per slice of quality.SLICE
# matches would pay its fixed cost 10 times as often
EVENT_SLICE = 5000


def match_ranges(keys: pl.DataFrame, size: int = EVENT_SLICE) -> list[tuple[str, int, int]]:
    """(variant, first, last match index) of each run of `size` consecutive matches of
    each variant of `keys` (rows of variant and match_index: a run's matches and
    errors, run_keys), inclusive, in order; the first range of a variant starts and
    its last ends without bound, so the ranges of a variant cover every row of any of
    its tables."""
    ranges = []
    for variant in keys.get_column("variant").unique(maintain_order=True).to_list():
        ids = (keys.filter(pl.col("variant") == variant).get_column("match_index")
               .unique().sort().to_list())
        bounds = [[ids[i], ids[min(i + size, len(ids)) - 1]] for i in range(0, len(ids), size)]
        if bounds:
            bounds[0][0], bounds[-1][1] = -(2**62), 2**62
        ranges += [(variant, lo, hi) for lo, hi in bounds]
    return ranges


def run_keys(run: RunScan) -> pl.DataFrame:
    """variant, match_index of every match of the run, finished (matches) or failed
    (errors)."""
    return pl.concat([run.matches.select("variant", "match_index"),
                      run.errors.select("variant", "match_index")])


def sum_over_slices(scan: pl.LazyFrame, count: Callable[[pl.LazyFrame], pl.DataFrame],
                    keys: pl.DataFrame, size: int = EVENT_SLICE,
                    by: Sequence[str] = ("variant",)) -> pl.DataFrame:
    """`count(rows)` of each slice of `scan` (match_ranges of `keys`: one variant's
    `size` matches; the scan reads only their files and row groups) summed per `by`:
    `count` returns a frame of the `by` columns and Int64 counts, each a sum over
    matches (so the slices' counts add up to the whole scan's). What the report reads
    this way holds one slice's rows at a time, however large the run."""
    parts = [count(scan.filter(pl.col("variant") == variant,
                               pl.col("match_index").is_between(lo, hi)))
             for variant, lo, hi in match_ranges(keys, size)]
    parts = [p for p in parts if p.height]
    if not parts:
        return count(scan.head(0))
    return (pl.concat(parts).group_by(*by, maintain_order=True)
            .agg(pl.exclude(*by).sum()))


# what the report loses when a run did not write a table (the experiment's tables_out):
# the readers see an empty table, and these lines say what that empties
TABLE_COSTS = {
    "seats": "seat fairness, the gold share and its paired test, the score "
             "decomposition, capital-fall cascades, what each strategy is worth, how "
             "the game plays and the anomalies read per seat (blowouts, early "
             "eliminations)",
    "events": "content usage (unless the usage table was written), capital-fall cascades, "
              "the paired tests of event counts, the mechanisms behind a moved victory "
              "mix and the anomalies read from events",
    "turns": "how the game plays (its quality metrics), and near misses, the gold "
             "trajectory and stalls unless the dominance_runs, gold_turns and quiet "
             "tables were written",
    "truces": "the truce section (offers, acceptance and who won after a truce, D9)",
    "usage": "nothing while events is written (content usage is then read from it, more "
             "slowly)",
    "quiet": "nothing while turns and events are written (stalls are then read from them)",
    "dominance_runs": "nothing while turns is written (near misses are then read from it)",
    "gold_turns": "nothing while turns is written (the gold trajectory is then read from "
                  "it)",
}


def missing_tables(provenance: dict[str, Any]) -> list[str]:
    """The tables a run chose not to write (its experiment's tables_out), of those its
    game writes (sim.outputs.games: Crown's run writes every table of its own, none of
    TABLE_COSTS')."""
    chosen = provenance.get("tables_out")
    written = game_of_run(provenance).written
    return [t for t in TABLE_COSTS if t in written and chosen is not None and t not in chosen]


def missing_table_notes(provenance: dict[str, Any]) -> list[str]:
    """One sentence per table the run did not write: what the report shows without it."""
    return [f"This run did not write the {t} table (tables_out): it costs {TABLE_COSTS[t]}; "
            f"those sections show nothing for it." if not TABLE_COSTS[t].startswith("nothing")
            else f"This run did not write the {t} table (tables_out): that costs "
                 f"{TABLE_COSTS[t]}." for t in missing_tables(provenance)]


def event_rows(events: pl.LazyFrame | pl.DataFrame, kinds: Iterable[str],
               columns: Iterable[str] | None = None) -> pl.DataFrame:
    """The rows of `events` whose kind is one of `kinds`, in no particular order
    (every metric sorts what it needs: sorting all 15 columns would double this
    frame's memory for nothing), plus a placeholder row (only `variant` set, every
    other column null) for each variant of the events table none of whose rows is of
    those kinds. A null kind
    passes no metric's filter, so the metrics that list a row per variant of their
    events (sim.analysis._frames.variant_spine) give the same rows from this frame
    as from the whole table, as long as `kinds` holds every kind they read
    (sim.analysis.metrics.EVENT_KINDS). `columns`: only these (and `variant`), when
    the caller's metrics read no other (the report: metrics.HELD_EVENT_COLUMNS)."""
    events = events.lazy()
    if columns is not None:
        events = events.select(*dict.fromkeys([*columns, "variant"]))
    # one chunk: the streaming engine hands back one per morsel, and every later filter
    # over a frame of a hundred chunks pays for each
    chosen = (events.filter(pl.col("kind").is_in(sorted(set(kinds))))
              .collect(engine="streaming").rechunk())
    # the other variants of the table, from their files only (a filter on the hive column
    # skips every file of a variant already seen): reading `variant` for all 14 million
    # rows to find the usual none cost half a second
    seen = chosen.get_column("variant").unique().implode()
    missing = (events.filter(~pl.col("variant").is_in(seen)).select("variant").unique()
               .collect(engine="streaming"))
    if missing.height == 0:
        return chosen
    placeholders = missing.sort("variant").select(
        *(pl.lit(None, dtype).alias(c) if c != "variant" else pl.col(c)
          for c, dtype in chosen.schema.items()))
    return pl.concat([chosen, placeholders])


__all__ = ["EVENT_SLICE", "LAZY_TABLES", "REPORT_UNREAD", "Run", "RunFolderError", "RunScan",
           "empty_table", "event_rows", "load_run", "match_ranges", "missing_table_notes",
           "missing_tables", "read_table", "run_keys", "scan_run", "scan_table", "sorted_by",
           "sum_over_slices", "write_frame"]

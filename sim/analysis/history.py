"""The nightly job's memory (issue 14): one row per run × variant × victory type.

`history_rows` turns a run into rows (run id, when it finished, code commit, the
variant's tables hash, the victory type's share with its Wilson interval);
`append_history` adds them to a Parquet index, replacing the rows of the same run
(a report written twice does not count a night twice); the report's trend chart
reads it back.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import polars as pl

from sim.analysis.load import read_table
from sim.analysis.victory import victory_frequencies
from sim.outputs.storage import is_remote, run_path
from sim.outputs.store import read_provenance

SCHEMA = {"run_id": pl.Utf8, "finished": pl.Utf8, "commit": pl.Utf8, "experiment": pl.Utf8,
          "variant": pl.Utf8, "tables_hash": pl.Utf8, "victory": pl.Utf8, "wins": pl.Int64,
          "matches": pl.Int64, "share": pl.Float64, "lo": pl.Float64, "hi": pl.Float64}


def history_rows(matches: pl.DataFrame, provenance: dict[str, Any]) -> pl.DataFrame:
    """The run's victory mix per variant, keyed by its provenance."""
    hashes = {v["id"]: v.get("tables_hash", "") for v in provenance.get("variants", [])}
    freq = victory_frequencies(matches)
    return freq.select(
        pl.lit(str(provenance.get("run_id", ""))).alias("run_id"),
        pl.lit(str(provenance.get("finished") or provenance.get("started") or "")
               ).alias("finished"),
        pl.lit(str(provenance.get("code_version", {}).get("commit", ""))).alias("commit"),
        pl.lit(str(provenance.get("experiment", {}).get("name", ""))).alias("experiment"),
        "variant",
        pl.col("variant").replace_strict(hashes, default="", return_dtype=pl.Utf8)
        .alias("tables_hash"),
        "victory", "wins", "matches", "share", "lo", "hi").cast(SCHEMA)


def read_history(path: Path | str) -> pl.DataFrame:
    """The index at `path` (a file, or any fsspec URL: sim.outputs.storage); empty
    when there is none yet."""
    path = run_path(path)
    if not path.is_file():
        return pl.DataFrame(schema=SCHEMA)
    return pl.read_parquet(io.BytesIO(path.read_bytes()) if is_remote(path) else path
                           ).cast(SCHEMA)


def with_run(history: pl.DataFrame, rows: pl.DataFrame) -> pl.DataFrame:
    """The index `history` with a run's rows added, replacing any rows of the same
    run_id, sorted by finish time (nothing written: `sim report` writes the index only
    once its report is written, so a report that fails adds no night)."""
    runs = rows.get_column("run_id").unique().to_list()
    old = history.filter(~pl.col("run_id").is_in(runs))
    return pl.concat([old, rows.cast(SCHEMA)]).sort("finished", "variant", "victory")


def history_with_run(path: Path | str, run_dir: Path | str) -> pl.DataFrame:
    """The index at `path` (empty when there is none yet) with the run in `run_dir`
    added (with_run: nothing written)."""
    return with_run(read_history(path), history_rows(read_table(run_dir, "matches"),
                                                     read_provenance(run_dir)))


def write_history(path: Path | str, history: pl.DataFrame) -> None:
    """Write the index to `path` atomically (on an object store, one PUT)."""
    path = run_path(path)
    if is_remote(path):
        buf = io.BytesIO()
        history.write_parquet(buf)
        path.write_bytes(buf.getvalue())
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    history.write_parquet(tmp)
    tmp.replace(path)


def append_history(path: Path | str, rows: pl.DataFrame) -> pl.DataFrame:
    """Add a run's rows to the index at `path` (written atomically), replacing any rows
    of the same run_id; returns the whole index sorted by finish time."""
    out = with_run(read_history(path), rows)
    write_history(path, out)
    return out

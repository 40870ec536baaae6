"""Reading a run folder (docs/outcomes.md) into eager polars DataFrames."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from sim.outputs.schemas import SCHEMAS, SORT_KEYS, TABLES


def empty_table(table: str) -> pl.DataFrame:
    """A typed frame with no rows: the table's columns plus `variant`."""
    return pl.DataFrame(schema={**SCHEMAS[table], "variant": pl.Utf8})


def read_table(root: Path | str, table: str) -> pl.DataFrame:
    """One table of a run folder, `variant` (Utf8) from the hive path, sorted by
    variant and the table's keys; an empty typed frame when the folder is missing."""
    folder = Path(root) / table
    if not folder.is_dir() or not any(folder.rglob("*.parquet")):
        return empty_table(table)
    # the layout of sim.outputs.store.scan, with `variant` forced to a string: a variant named
    # "1" or "2024-01-01" must not be read back as a number or a date
    frame = pl.scan_parquet(folder / "**" / "*.parquet", hive_partitioning=True,
                            hive_schema={"variant": pl.Utf8},
                            try_parse_hive_dates=False).collect()
    columns = [c for c in (*SCHEMAS[table], "variant") if c in frame.columns]
    extra = [c for c in frame.columns if c not in columns]
    return frame.select(*columns, *extra).sort(["variant", *SORT_KEYS[table]])


class RunFolderError(ValueError):
    """`load_run` was given a folder that holds no run: missing, not a folder, or
    without a single match or error row. The message is one line naming the folder
    (a ValueError, so `sim report` prints it as its one-line error)."""


@dataclass
class Run:
    """The five outcome tables of a run folder, its provenance and baseline variant."""

    matches: pl.DataFrame
    seats: pl.DataFrame
    events: pl.DataFrame
    turns: pl.DataFrame
    errors: pl.DataFrame
    provenance: dict[str, Any] = field(default_factory=dict)
    baseline: str | None = None
    root: Path | None = None

    @property
    def variants(self) -> list[str]:
        """Variant ids: provenance order first, then any other id found in the tables."""
        ids = [v["id"] for v in self.provenance.get("variants", []) if "id" in v]
        for frame in (self.matches, self.errors):
            for vid in frame.get_column("variant").unique(maintain_order=True).to_list():
                if vid not in ids:
                    ids.append(vid)
        return ids


def load_run(run_dir: Path | str) -> Run:
    """Read every table of `run_dir` eagerly.

    A missing table folder gives an empty typed frame; a missing provenance.json an
    empty dict. The baseline is provenance["baseline"], else the first variant of
    provenance["variants"], else the first variant found in matches (sorted).
    Raises RunFolderError when `run_dir` is missing, not a folder, or holds no
    match and no error row (an empty run would analyse to nothing, silently).
    """
    root = Path(run_dir)
    if not root.is_dir():
        raise RunFolderError(f"{root}: no such run folder" if not root.exists()
                             else f"{root}: not a folder")
    tables = {table: read_table(root, table) for table in TABLES}
    if tables["matches"].height == 0 and tables["errors"].height == 0:
        raise RunFolderError(f"{root}: not a sweep run, or an empty one (no match and no "
                             "error rows under matches/ or errors/)")
    path = root / "provenance.json"
    provenance: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    run = Run(**tables, provenance=provenance, root=root)
    baseline = provenance.get("baseline")
    if baseline is None:
        ids = run.variants
        baseline = ids[0] if ids else None
    run.baseline = baseline
    return run


__all__ = ["Run", "RunFolderError", "empty_table", "load_run", "read_table"]

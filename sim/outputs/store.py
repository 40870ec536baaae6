"""Writing a sweep's outcome tables so that nothing is ever half-written.

Layout under the run folder DIR:
    TABLE/variant=ID/part-CHUNK.parquet   (TABLE in sim.outputs.schemas.TABLES)
    _done/ID__CHUNK.json                  one marker per finished chunk
    provenance.json                       what produced the folder
    .tmp/                                 files being written (never read)

Each chunk's files are written into .tmp/ and renamed into place; its done
marker is renamed into place last. A killed sweep therefore leaves only whole
files, and a chunk without its marker is simply written again on resume.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import polars as pl

from sim.outputs.schemas import TABLES


def part_path(root: Path, table: str, variant: str, chunk: int) -> Path:
    return root / table / f"variant={variant}" / f"part-{chunk:05d}.parquet"


def marker_path(root: Path, variant: str, chunk: int) -> Path:
    return root / "_done" / f"{variant}__{chunk:05d}.json"


def is_done(root: Path, variant: str, chunk: int) -> bool:
    return marker_path(root, variant, chunk).exists()


def _atomic_write(root: Path, final: Path, write) -> None:
    tmp_dir = root / ".tmp"
    tmp_dir.mkdir(parents=True, exist_ok=True)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = tmp_dir / f"{final.parent.name}.{final.name}.{os.getpid()}"
    write(tmp)
    os.replace(tmp, final)


def write_chunk(root: Path, variant: str, chunk: int, frames: dict[str, pl.DataFrame],
                summary: dict[str, Any]) -> None:
    """Write every table of one chunk, then its done marker (each atomically)."""
    for table in TABLES:
        frame = frames[table]
        _atomic_write(root, part_path(root, table, variant, chunk),
                      lambda path, frame=frame: frame.write_parquet(path, statistics=True))
    _atomic_write(root, marker_path(root, variant, chunk),
                  lambda path: path.write_text(json.dumps(summary, sort_keys=True)))


def read_markers(root: Path) -> list[dict[str, Any]]:
    done = root / "_done"
    if not done.exists():
        return []
    return [json.loads(p.read_text()) for p in sorted(done.glob("*.json"))]


def scan(root: Path, table: str) -> pl.LazyFrame:
    """A lazy frame over one table of a run folder, `variant` from the hive path."""
    return pl.scan_parquet(root / table / "**" / "*.parquet", hive_partitioning=True)

"""`sim report`'s work on a run folder, in the order the command tells it: what the
run did not write (in words), the regression gate when one is asked for, the history
index with this run in it, then the page; the history is written after the page, so a
report that failed adds no night."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from sim.analysis.history import history_with_run, write_history
from sim.analysis.load import missing_summaries, missing_table_notes
from sim.outputs.games import game_of_run
from sim.outputs.schemas import SUMMARIES
from sim.outputs.storage import absolute
from sim.outputs.store import read_provenance
from sim.report.html import write_report
from sim.rules.tables import REPO_ROOT

# the regression gate as the command runs it: its table (one row per variant × victory
# type, sim.analysis.gate) and the notes its reader must not miss
Gate = Callable[[], tuple[pl.DataFrame, list[str]]]


@dataclass(frozen=True)
class Reported:
    """What report_run wrote: the page, the gate's table (None without a gate) and the
    runs the history index holds after this one (None without a history file)."""

    path: Path
    gate: pl.DataFrame | None
    history_runs: int | None


def run_notes(run_dir: Path) -> list[str]:
    """One line per table the run did not write (its tables_out) and, for a run swept
    before the per-match aggregates existed, that the report reads events and turns
    instead; each line names the run."""
    prov = read_provenance(run_dir)
    chosen = prov.get("tables_out")
    notes = [f"{run_dir}: {note}" for note in missing_table_notes(prov)]
    written = game_of_run(prov).written  # the per-match aggregates: the hex game's
    if not set(SUMMARIES) & set(written):
        return notes
    if missing := [t for t in missing_summaries(run_dir) if chosen is None or t in chosen]:
        named = missing[0] if len(missing) == 1 else \
            f"{', '.join(missing[:-1])} or {missing[-1]}"
        notes.append(f"{run_dir}: has no {named} tables (swept before they "
                     "existed): the report reads the events and turns instead, which takes "
                     "longer; sweeping it again into a new folder writes them")
    return notes


def report_run(run_dir: Path, out: Path | None, baseline: str | None,
               against: Path | None, gate: Gate | None, history: str | None,
               say: Callable[[str], None]) -> Reported:
    """Write the report of the verified run `run_dir` (sim.outputs.store.require_complete)
    to `out` (default: reports/<run name>.html): run_notes to `say` first, then `gate`
    (run against the earlier run `against`), then the page with the history of the
    Parquet index `history` (this run added to it, then written). Raises ValueError
    when the page cannot be made (a baseline that is not a variant of the run)."""
    for note in run_notes(run_dir):
        say(note)
    out = out or REPO_ROOT / "reports" / f"{absolute(run_dir).name}.html"
    table, notes = gate() if gate is not None else (None, [])
    trend = history_with_run(history, run_dir) if history is not None else None
    # the report names the run by its text (a path or a URL)
    path = write_report(str(run_dir), out, baseline, table, against, trend, notes)
    if history is not None:  # after the report: a report that failed adds no night
        write_history(history, trend)
    return Reported(path=Path(path), gate=table,
                    history_runs=None if trend is None
                    else trend.get_column("run_id").n_unique())


__all__ = ["Gate", "Reported", "report_run", "run_notes"]

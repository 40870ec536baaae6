"""Commands on finished run folders: `sim plan` (matches to run, from a pilot),
`sim check-run`, `sim report` (with the regression gate and the history index) and
`sim replay-command`."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from sim.cli.common import app, fail, print_frame, require_run
from sim.outputs.storage import absolute, run_path


@app.command("plan")
def plan_cmd(run_dir: Annotated[str, typer.Argument(help="Run folder (or URL) of a pilot "
                                                       "sweep.")],
             detect: Annotated[float, typer.Option(help="Difference in a victory share to "
                                                   "detect, e.g. 0.02 (2 points).")] = 0.02,
             power: Annotated[float, typer.Option(help="Power of each test.")] = 0.8,
             alpha: Annotated[float, typer.Option(help="Two-sided level of each test.")]
             = 0.05,
             baseline: Annotated[str | None, typer.Option(help="Variant to pair with "
                                                          "(default: the run's).")] = None,
             ) -> None:
    """How many matches per variant to run: from a pilot run's observed discordance
    with the baseline (common random numbers), the paired matches McNemar needs to
    detect DETECT in each victory share, with the unpaired count beside it."""
    from sim.analysis.load import RunFolderError  # lazy: 0.23 s (polars)
    from sim.analysis.plan import PlanError, plan_run  # lazy: 0.78 s (scipy)
    from sim.outputs.store import RunError  # lazy: 0.20 s (polars)

    if not 0 < detect < 1 or not 0 < power < 1 or not 0 < alpha < 1:
        fail("--detect, --power and --alpha must each be between 0 and 1")
    try:
        plan = plan_run(run_path(run_dir), baseline, detect, alpha, power)
    except (RunError, RunFolderError, PlanError) as exc:
        fail(str(exc))
    print_frame(plan.table, 80)
    if plan.matches is not None:
        typer.echo(f"to detect {detect:g} in every victory share (power {power:g}, alpha "
                   f"{alpha:g} per test): {plan.matches} matches per variant, paired on "
                   f"common random numbers (unpaired: {plan.unpaired})")
    if plan.without_count:
        typer.echo(f"{plan.without_count} rows without a count: there the pilot's pairs "
                   f"disagree in at most {detect:g} of its matches (the discordance), and a "
                   f"paired difference never exceeds it, so a difference of {detect:g} is "
                   "out of reach at that discordance (where no pair disagreed, a larger "
                   "pilot may find some)", err=True)


@app.command("check-run")
def check_run_cmd(run_dir: Annotated[str, typer.Argument(
                      help="Run folder of a sweep, or its URL (s3://bucket/prefix/run).")],
                  ) -> None:
    """Verify a run folder: every planned chunk written, every part the row count and
    checksum its done marker records. Exit 2 with one line per problem otherwise."""
    from sim.outputs.store import RunError, verify_run  # lazy: 0.20 s (polars)

    try:
        check = verify_run(run_dir)
    except RunError as exc:
        fail(str(exc))
    problems = check.problems()
    if problems:
        fail(problems)
    typer.echo(f"{run_dir}: ok: {len(check.done)} chunks intact, {check.matches} matches, "
               f"{check.errors} failed")


@app.command("compact")
def compact_cmd(run_dir: Annotated[str, typer.Argument(
                    help="Run folder of a finished sweep, or its URL.")],
                target_mb: Annotated[float, typer.Option(
                    help="Size to aim at for each compacted file, in MiB.")] = 128.0,
                ) -> None:
    """Rewrite a finished run's chunk parts as a few large files per table and variant,
    with new checksums in its done record; a killed compaction leaves the run valid
    (old or new), a second one does nothing. Refused while a sweep holds the run's
    lock or when the run is incomplete or damaged (exit 2)."""
    from sim.outputs.compact import compact_run  # lazy: 0.20 s (polars)
    from sim.outputs.store import RunError

    if not target_mb > 0:
        fail("--target-mb must be > 0")
    try:
        done = compact_run(run_path(run_dir), int(target_mb * 2**20))
    except RunError as exc:
        fail(str(exc))
    if done.files:
        typer.echo(f"{run_dir}: compacted {done.chunks} chunks into {done.files} files "
                   f"(generation {done.generation}; {done.bytes_before / 1e6:.1f} MB -> "
                   f"{done.bytes_after / 1e6:.1f} MB), {done.removed} old files removed")
    else:
        typer.echo(f"{run_dir}: already compact ({done.chunks} chunks, generation "
                   f"{done.generation}); {done.removed} leftover files removed")


@app.command("report")
def report_cmd(run_dir: Annotated[str, typer.Argument(
                   help="Run folder of a sweep, or its URL (s3://bucket/prefix/run).")],
               baseline: Annotated[str | None, typer.Option(help="Variant to compare "
                                                            "against (default: the "
                                                            "experiment's).")] = None,
               out: Annotated[Path | None, typer.Option(help="HTML file (default: "
                                                        "reports/<run name>.html).")] = None,
               against: Annotated[str | None, typer.Option(
                   help="An earlier run folder: the regression gate (each victory share "
                        "within ±margin of that run's); exit 3 when any share fails.")]
               = None,
               margin: Annotated[float | None, typer.Option(
                   help="The gate's margin on each victory share (default: the "
                        "experiment file's \\[gate], else 0.02).")] = None,
               history: Annotated[str | None, typer.Option(
                   help="A Parquet history index: add this run's victory mix to it and "
                        "chart the baseline's mix run by run.")] = None,
               ) -> None:
    """Write the self-contained HTML report of a sweep's run folder (refused when the
    run is incomplete or damaged: see `sim check-run`). With --against, the regression
    gate comes first; exit status 3 when it fails (after the report is written)."""
    # polars' allocator (jemalloc) keeps freed pages for seconds by default, so each
    # scan's buffers stack up on the last one's: hand them back at once (set before
    # polars loads; an explicit setting in the environment wins)
    if "polars" not in sys.modules:
        os.environ.setdefault("_RJEM_MALLOC_CONF", "dirty_decay_ms:0,muzzy_decay_ms:0")
    from sim.analysis.gate import passed  # lazy: 0.28 s (polars)
    from sim.analysis.history import history_with_run, write_history  # lazy: 0.18 s (polars)
    from sim.analysis.load import missing_summaries, missing_table_notes  # lazy: 0.23 s
    from sim.outputs.store import read_provenance
    from sim.report.html import write_report  # lazy: 0.38 s (polars, pyarrow)
    from sim.rules.tables import REPO_ROOT  # lazy: 0.20 s

    if margin is not None and against is None:
        fail("--margin is the regression gate's: it needs --against BASELINE_RUN")
    run_dir = run_path(run_dir)
    require_run(run_dir)
    chosen = read_provenance(run_dir).get("tables_out")
    for note in missing_table_notes({"tables_out": chosen}):
        typer.echo(f"{run_dir}: {note}", err=True)
    if missing := [t for t in missing_summaries(run_dir) if chosen is None or t in chosen]:
        named = missing[0] if len(missing) == 1 else \
            f"{', '.join(missing[:-1])} or {missing[-1]}"
        typer.echo(f"{run_dir}: has no {named} tables (swept before they "
                   "existed): the report reads the events and turns instead, which takes "
                   "longer; sweeping it again into a new folder writes them", err=True)
    out = out or REPO_ROOT / "reports" / f"{absolute(run_dir).name}.html"
    table, notes = _gate(run_dir, against, margin) if against is not None else (None, [])
    trend = history_with_run(history, run_dir) if history is not None else None
    try:
        # the report names the run by its text (a path or a URL)
        path = write_report(str(run_dir), out, baseline, table, against, trend, notes)
    except ValueError as exc:
        fail(str(exc))
    if history is not None:  # after the report: a report that failed adds no night
        write_history(history, trend)
        typer.echo(f"history: {trend.get_column('run_id').n_unique()} runs in {history}")
    typer.echo(f"report written to {Path(path).absolute()}")
    if table is not None and not passed(table):
        raise typer.Exit(3)


def _gate(run_dir: Path, against: Path, margin: float | None):
    """The regression gate of run_dir against an earlier run, printed; or exit 2.
    Margins: --margin on every share when given, else the experiment's [gate]."""
    # lazy: 0.28 s and 0.20 s (polars)
    from sim.analysis.gate import GateError, compared, failures, passed, regression_gate
    from sim.outputs.store import RunError

    if margin is not None and not 0 < margin < 1:
        fail("--margin must be between 0 and 1")
    try:
        gate = regression_gate(run_dir, against, margin)
    except (RunError, GateError) as exc:
        fail(str(exc))
    table = gate.table
    print_frame(table.select("variant", "victory", "before", "now", "difference", "lo",
                             "hi", "verdict"), 60)
    for note in gate.notes:
        typer.echo(f"note: {note}", err=True)
    others = "".join(f", {k} ±{v:g}" for k, v in gate.margins.items())
    typer.echo(f"regression gate against {against} "
               f"({'paired' if gate.paired else 'independent'}, margin ±{gate.margin:g}"
               f"{others}): " + ("PASS" if passed(table) else
                                 f"FAIL ({failures(table)} of {compared(table)} shares)"))
    return table, gate.notes


@app.command("replay-command")
def replay_command_cmd(run_dir: Annotated[str, typer.Argument(help="Run folder or URL.")],
                       match_id: Annotated[str, typer.Argument(help="variant:index")]) -> None:
    """Print the one command that replays a match of a sweep; warns (exit 1) when the
    tables changed since the run, since the command would then play another match."""
    from sim.outputs.provenance import tables_changed  # lazy: 0.23 s
    from sim.outputs.store import RunError, find_match  # lazy: 0.20 s (polars)

    try:
        found = find_match(run_path(run_dir), match_id)
    except RunError as exc:
        fail(str(exc))
    typer.echo(found.row["replay"])
    if (why := tables_changed(found.provenance, found.chunk.variant)) is not None:
        typer.echo(why, err=True)
        raise typer.Exit(1)

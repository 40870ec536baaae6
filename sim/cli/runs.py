"""Commands on finished run folders: `sim plan` (matches to run, from a pilot),
`sim check-run`, `sim report` (with the regression gate and the history index) and
`sim replay-command`."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from sim.cli.common import app, fail, print_frame, require_run, signal_name
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
             family: Annotated[int | None, typer.Option(
                 help="Tests the report corrects together with Holm (default: the "
                      "pilot's variants but the baseline × (victory types + paired "
                      "metrics)); each test is planned at alpha / family.")] = None,
             ) -> None:
    """How many matches per variant to run: from a pilot run's observed discordance
    with the baseline (common random numbers), the paired matches the exact McNemar
    test needs to detect DETECT in each victory share with the given power after the
    report's Holm correction, with the unpaired count beside it."""
    from sim.analysis.load import RunFolderError  # lazy: 0.23 s (polars)
    from sim.analysis.plan import PlanError, plan_run  # lazy: 0.78 s (scipy)
    from sim.outputs.store import RunError  # lazy: 0.20 s (polars)

    if not 0 < detect < 1 or not 0 < power < 1 or not 0 < alpha < 1:
        fail("--detect, --power and --alpha must each be between 0 and 1")
    if family is not None and family < 1:
        fail("--family must be at least 1")
    try:
        plan = plan_run(run_path(run_dir), baseline, detect, alpha, power, family)
    except (RunError, RunFolderError, PlanError) as exc:
        fail(str(exc))
    print_frame(plan.table, 80)
    if plan.matches is not None:
        typer.echo(f"to detect {detect:g} in every victory share (power {power:g} after "
                   f"Holm over {plan.family} tests at alpha {alpha:g}: each test at "
                   f"{plan.level:.2g}): {plan.matches} matches per variant, paired on "
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
               budget: Annotated[int | None, typer.Option(
                   help="The most matches per variant the gate may grow both runs to "
                        "while a share is undecided (default: the experiment file's "
                        "\\[gate] budget, 64000); the runs' own size: no growing.")]
               = None,
               against_sim: Annotated[str | None, typer.Option(
                   help="The `sim` command of the code that made the earlier run, to "
                        "grow it (e.g. \"env PYTHONSAFEPATH=1 PYTHONPATH=old-checkout python -m "
                        "sim.cli\"); "
                        "default: this one, which can grow runs made by this code only.")]
               = None,
               jobs: Annotated[int | None, typer.Option(
                   help="Workers for the matches the gate adds (default: every core).")]
               = None,
               history: Annotated[str | None, typer.Option(
                   help="A Parquet history index: add this run's victory mix to it and "
                        "chart the baseline's mix run by run.")] = None,
               ) -> None:
    """Write the self-contained HTML report of a sweep's run folder (refused when the
    run is incomplete or damaged: see `sim check-run`). With --against, the regression
    gate comes first: a sequential test that grows both runs block by block until every
    victory share is decided or the budget is spent. Exit status (after the report is
    written): 0 PASS, 3 FAIL (a share changed, or a variant is missing), 4
    INCONCLUSIVE (the budget ran out: the matches it would still need are printed)."""
    # polars' allocator (jemalloc) keeps freed pages for seconds by default, so each
    # scan's buffers stack up on the last one's: hand them back at once (set before
    # polars loads; an explicit setting in the environment wins)
    if "polars" not in sys.modules:
        os.environ.setdefault("_RJEM_MALLOC_CONF", "dirty_decay_ms:0,muzzy_decay_ms:0")
    from sim.analysis.gate import EXIT, overall  # lazy: 0.28 s (polars)
    from sim.analysis.history import history_with_run, write_history  # lazy: 0.18 s (polars)
    from sim.analysis.load import missing_summaries, missing_table_notes  # lazy: 0.23 s
    from sim.outputs.store import read_provenance
    from sim.report.html import write_report  # lazy: 0.38 s (polars, pyarrow)
    from sim.rules.tables import REPO_ROOT  # lazy: 0.20 s

    for given, name in ((margin, "--margin"), (budget, "--budget"),
                        (against_sim, "--against-sim")):
        if given is not None and against is None:
            fail(f"{name} is the regression gate's: it needs --against BASELINE_RUN")
    run_dir = run_path(run_dir)
    against = run_path(against) if against is not None else None
    require_run(run_dir)
    prov = read_provenance(run_dir)
    chosen = prov.get("tables_out")
    for note in missing_table_notes({"tables_out": chosen, "game": prov.get("game")}):
        typer.echo(f"{run_dir}: {note}", err=True)
    if missing := [t for t in missing_summaries(run_dir) if chosen is None or t in chosen]:
        named = missing[0] if len(missing) == 1 else \
            f"{', '.join(missing[:-1])} or {missing[-1]}"
        typer.echo(f"{run_dir}: has no {named} tables (swept before they "
                   "existed): the report reads the events and turns instead, which takes "
                   "longer; sweeping it again into a new folder writes them", err=True)
    out = out or REPO_ROOT / "reports" / f"{absolute(run_dir).name}.html"
    table, notes = _gate(run_dir, against, margin, budget, against_sim, jobs) \
        if against is not None else (None, [])
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
    if table is not None:
        raise typer.Exit(EXIT[overall(table)])


def _gate(run_dir: Path, against: Path, margin: float | None, budget: int | None,
          against_sim: str | None, jobs: int | None):
    """The regression gate of run_dir against an earlier run, grown until decided
    (_grow_gate) and printed; or exit 2. Margins: --margin on every share when given,
    else the experiment's [gate]."""
    # lazy: 0.28 s and 0.20 s (polars)
    from sim.analysis.gate import GateError, regression_gate, summary
    from sim.outputs.store import RunError

    if margin is not None and not 0 < margin < 1:
        fail("--margin must be between 0 and 1")
    if budget is not None and budget < 1:
        fail("--budget must be at least 1")
    try:
        gate = regression_gate(run_dir, against, margin)
        gate = _grow_gate(gate, run_dir, against, margin, budget, against_sim, jobs)
    except (RunError, GateError) as exc:
        fail(str(exc))
    table = gate.table
    print_frame(table.select("variant", "victory", "before", "now", "difference", "lo",
                             "hi", "needed", "verdict"), 60)
    for note in gate.notes:
        typer.echo(f"note: {note}", err=True)
    others = "".join(f", {k} ±{v:g}" for k, v in gate.margins.items())
    typer.echo(f"regression gate against {against} "
               f"({'paired' if gate.paired else 'independent'}, margin ±{gate.margin:g}"
               f"{others}, {gate.pairs_held():,} matches per variant, anytime-valid): "
               f"{summary(table)}")
    return table, gate.notes


def _held(*runs: Path) -> int:
    """The matches per variant every run plans (their provenance)."""
    from sim.outputs.store import read_provenance  # lazy: 0.20 s (polars)

    return min(int(read_provenance(r).get("matches_per_variant") or 0) for r in runs)


def _grow_gate(gate, run_dir: Path, against: Path, margin: float | None,
               budget: int | None, against_sim: str | None, jobs: int | None):
    """The gate's sequence: while a share is undecided and both runs hold fewer than
    the budget, grow both by a block (sim.runner.sequential) and look again. A run
    that cannot grow (made by other code, without --against-sim) ends the sequence
    with a note; the verdict is then the last look's."""
    import shlex

    from sim.analysis.gate import INCONCLUSIVE, regression_gate, summary
    from sim.runner.pool import shared_pool
    from sim.runner.sequential import extend_run, extend_with_command, grow_until_decided
    from sim.runner.sweep import SweepError, SweepInterrupted, stop_on_signals

    budget = gate.budget if budget is None else budget
    if gate.verdict != INCONCLUSIVE or _held(run_dir, against) >= budget:
        return gate
    state = {"gate": gate}

    def look() -> tuple[bool, int, str]:
        state["gate"] = regression_gate(run_dir, against, margin)
        return (state["gate"].verdict != INCONCLUSIVE, _held(run_dir, against),
                summary(state["gate"].table))

    say = lambda line: typer.echo(line, err=True)  # noqa: E731
    with stop_on_signals(), shared_pool(jobs or os.cpu_count() or 1) as pool:
        # the earlier run first: the one likelier to be refused (made by other code),
        # and a refusal then costs tonight's run no matches
        grow = [(lambda n: extend_with_command(shlex.split(against_sim), against, n))
                if against_sim else
                (lambda n: extend_run(against, n, jobs or os.cpu_count() or 1, pool=pool,
                                      say=say)),
                lambda n: extend_run(run_dir, n, jobs or os.cpu_count() or 1, pool=pool,
                                     say=say)]
        try:
            grow_until_decided(look, grow, budget, gate.block, say)
        except SweepError as exc:
            if _complete(run_dir, against):  # a look at what the runs hold now
                state["gate"] = regression_gate(run_dir, against, margin)
            state["gate"].notes.append(f"the gate could not add matches: {exc}")
        except SweepInterrupted as exc:
            fail(f"interrupted by {signal_name(exc.signum)} while the gate grew the runs; "
                 f"every finished chunk is kept: `sim extend RUN --to N` finishes a run "
                 f"({run_dir}, {against}: N is its provenance's matches_per_variant), "
                 "then the same report command goes on")
    return state["gate"]


def _complete(*runs: Path) -> bool:
    from sim.outputs.store import verify_run  # lazy: 0.20 s (polars)

    return all(not verify_run(r).problems() for r in runs)


@app.command("extend")
def extend_cmd(run_dir: Annotated[Path, typer.Argument(help="Run folder of a sweep.")],
               to: Annotated[int, typer.Option("--to", help="Matches per variant to grow "
                                               "the run to.")],
               jobs: Annotated[int | None, typer.Option(help="Parallel workers (default: "
                                                        "every core).")] = None,
               quiet: Annotated[bool, typer.Option("--quiet", help="No progress.")] = False,
               ) -> None:
    """Grow a finished run to --to matches per variant: its own experiment (from its
    provenance) over the first TO match indices, the same seeds, so the run equals a
    sweep of that size. Only the code that made the run can grow it (exit 2
    otherwise); what the regression gate calls to add matches (sim report --against)."""
    from sim.runner.sequential import extend_run
    from sim.runner.sweep import SweepError

    if to < 1:
        fail("--to must be at least 1")
    try:
        result = extend_run(run_dir, to, jobs or os.cpu_count() or 1, progress=not quiet)
    except SweepError as exc:
        fail(str(exc))
    typer.echo(f"{run_dir}: {'already holds' if result is None else 'grown to'} "
               f"{_held(run_dir)} matches per variant")


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

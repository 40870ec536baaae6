"""`sim sensitivity`: which table values matter (a paired sweep of every parameter moved
down and up, then on request a Morris screen of the strongest), and the lines it prints
of the result."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Annotated

import typer

from sim.cli.common import (
    app,
    check_run_options,
    disk_folder,
    exit_if_missing,
    fail,
    say,
    signal_name,
)
from sim.outputs.folders import MORRIS_DIR, SWEEP_DIR
from sim.rules.codes import VICTORY_NAMES
from sim.runner.pool import keep_freed_memory


@app.command("sensitivity")
def sensitivity_cmd(file: Annotated[Path, typer.Argument(help="Sensitivity TOML file.")],
                    jobs: Annotated[int | None, typer.Option(help="Parallel workers (default: "
                                                             "all cores).")] = None,
                    backend: Annotated[str, typer.Option(help="local or dask.")] = "local",
                    scheduler: Annotated[str | None, typer.Option(
                        help="Dask scheduler address (default: a local cluster).")] = None,
                    out: Annotated[str | None, typer.Option(
                        help="Sensitivity folder (default: runs/<name>).")] = None,
                    quiet: Annotated[bool, typer.Option("--quiet", help="No progress.")]
                    = False,
                    replace_stale: Annotated[bool, typer.Option(
                        "--replace-stale", help="If the folder's sweep was made by other "
                        "tables, code or design, start it afresh (default: refuse).")] = False,
                    ) -> None:
    """Which table values matter: every parameter of FILE moved down and up on the same
    matches; writes sensitivity.parquet and sensitivity.html (tornado charts, inert
    parameters) into the folder. With `morris_top = K` in FILE, the K strongest
    parameters (balance values before the match's setup keys) then get a Morris screen
    of interactions (a second sweep in morris/, morris.parquet, its section of the
    page). Resumes an interrupted run (same command).

    Exit status: 0 done; 1 some matches failed or are missing; 2 bad input;
    130/143 interrupted (finished chunks are kept)."""
    keep_freed_memory()  # before polars loads (it plays chunks in this process with --jobs 1)
    out = disk_folder(out, "sim sensitivity")
    from sim.analysis.sensitivity import read_design, write_sensitivity_table  # lazy: 0.16 s
    from sim.report.sensitivity import write_sensitivity_report  # lazy: 0.54 s (altair)
    from sim.runner.experiments import ExperimentError  # lazy: 0.24 s
    from sim.runner.sensitivity import SensitivityError, open_sensitivity  # lazy: 0.29 s

    check_run_options(backend, jobs, scheduler)
    try:
        design, folder, experiment = open_sensitivity(file, out, replace_stale, say)
    except (SensitivityError, ExperimentError) as exc:
        fail(str(exc))
    jobs = jobs or os.cpu_count() or 1
    command = f"sim sensitivity {shlex.quote(str(file))} --out {shlex.quote(str(folder))}"
    _print_design(design, experiment, folder, jobs)
    sweep = {"jobs": jobs, "backend": backend, "scheduler": scheduler, "quiet": quiet,
             "replace_stale": replace_stale, "command": command}
    errors = {SWEEP_DIR: _sensitivity_sweep(experiment, folder / SWEEP_DIR, **sweep)}
    table = write_sensitivity_table(folder, lambda note: say(f"note: {note}"))
    morris, morris_json = _morris_screen(design, table, folder, sweep, errors)
    page = write_sensitivity_report(table, read_design(folder), folder / "sensitivity.html",
                                    morris=morris, morris_design=morris_json)
    _print_sensitivity(table)
    if morris is not None:
        _print_morris(morris)
    typer.echo(f"table: {folder / 'sensitivity.parquet'}"
               + (f"\nmorris: {folder / 'morris.parquet'}" if morris is not None else "")
               + f"\nreport: {page}")
    failed = {name: n for name, n in errors.items() if n}
    if failed:
        for name, n in failed.items():
            typer.echo(f"{n} matches failed: see the errors table in {folder / name}",
                       err=True)
        raise typer.Exit(1)


def _print_design(design, experiment, folder: Path, jobs: int) -> None:
    """What the sensitivity plays: its parameters and variants, the skipped parameters,
    the moved values that play as another variant."""
    typer.echo(f"sensitivity {design.spec.name}: {len(design.parameters)} parameters "
               f"({len(design.skipped)} skipped) x 2 values, {len(experiment.variants)} "
               f"variants x {design.spec.matches} matches -> {folder} ({jobs} workers)")
    for key, why in design.skipped:
        typer.echo(f"  skipped {key}: {why}", err=True)
    if design.plays:
        levers = sum(1 for p in design.parameters if p.same_as)
        typer.echo(f"  {len(design.plays)} moved values play the same matches as another "
                   f"variant and are not played again; keys that are one lever with an "
                   f"earlier key: {levers} (the page lists them)")


def _morris_screen(design, table, folder: Path, sweep: dict, errors: dict[str, int]):
    """With morris_top = K, the Morris screen of the K strongest parameters: its sweep
    (its failed matches go into `errors`) and its table, written; returns the table and
    the screen's design, (None, None) without a screen."""
    from sim.analysis.sensitivity import top_parameters  # lazy: 0.16 s (polars)

    k = design.spec.morris_top
    keys = top_parameters(table, k)
    if k and len(keys) < 2:
        typer.echo(f"no Morris screen: {len(keys)} parameter(s) changed any match, it needs "
                   "two", err=True)
    if not k or len(keys) < 2:
        return None, None
    from sim.analysis.morris import write_morris_table  # lazy: 1.08 s (SALib, scipy)
    from sim.runner.experiments import ExperimentError  # lazy: 0.24 s
    from sim.runner.morris import open_morris  # lazy: 0.91 s (SALib)
    from sim.runner.sensitivity import SensitivityError  # lazy: 0.29 s

    try:
        m, experiment = open_morris(design, keys, folder)
    except (SensitivityError, ExperimentError) as exc:
        fail(str(exc))
    typer.echo(f"morris screen: {len(keys)} parameters x {m.trajectories} trajectories "
               f"({m.levels} levels) = {len(m.rows)} points, "
               f"{len(experiment.variants)} variants x {design.spec.matches} "
               f"matches -> {folder / MORRIS_DIR}")
    errors[MORRIS_DIR] = _sensitivity_sweep(experiment, folder / MORRIS_DIR, **sweep)
    return write_morris_table(folder)


def _sensitivity_sweep(experiment, out: Path, jobs: int, backend: str, scheduler: str | None,
                       quiet: bool, replace_stale: bool, command: str) -> int:
    """Run (or resume) one sweep of `sim sensitivity`; returns its failed matches.
    Exits 2 when it cannot start, 1 when matches are missing, 130/143 on a signal."""
    # lazy: 0.46 s
    from sim.runner.sweep import SweepError, SweepInterrupted, run_sweep, stop_on_signals

    with stop_on_signals():
        try:
            result = run_sweep(experiment, out, jobs, backend, scheduler, None,
                               progress=not quiet, replace_stale=replace_stale,
                               command=command, say=say)
        except SweepError as exc:
            fail(str(exc))
        except SweepInterrupted as exc:
            typer.echo(f"interrupted by {signal_name(exc.signum)}: finished chunks are kept "
                       f"in {out}; to resume, run the same command again: {command}",
                       err=True)
            raise typer.Exit(exc.exit_code) from None
    exit_if_missing(result, command)
    return result["errors"]


def _print_morris(morris) -> None:
    """Per victory type, the parameters by mu* with sigma; `!` marks `interacts`."""
    import polars as pl  # lazy: 0.11 s

    typer.echo("morris (mu* = mean |effect| over [low, high], sigma = its spread; "
               "! = sigma > mu* above the noise: interacts):")
    for metric in morris.get_column("metric").unique(maintain_order=True).to_list():
        if not metric.startswith("victory="):
            continue
        rows = morris.filter(pl.col("metric") == metric).sort("rank")
        cells = [f"{r['parameter']} {r['mu_star']:.3f}/{r['sigma']:.3f}"
                 f"{'!' if r['interacts'] else ''}" for r in rows.iter_rows(named=True)]
        typer.echo(f"  {metric} mu*/sigma: " + ", ".join(cells))


def _print_sensitivity(table) -> None:
    """The three strongest balance values per victory type, then the match setup's
    keys that moved it (ranked apart: sim.analysis.sensitivity.strongest), and the
    inert ones. A lever under several keys (`same_as`) is one entry, its other keys
    named after it."""
    from sim.analysis.sensitivity import inert_parameters, strongest  # lazy: 0.16 s (polars)

    metrics = set(table.get_column("metric").to_list())
    # in V01's order, as the Morris lines and the report list them
    for metric in (f"victory={name}" for name in VICTORY_NAMES):
        if metric not in metrics:
            continue
        balance = strongest(table, metric, "balance")
        setup = strongest(table, metric, "setup")
        typer.echo(f"{metric} per +10 %: "
                   + (_levers(balance) or "no balance value in this design"))
        if setup.height:
            typer.echo("  match setup: " + _levers(setup))
    inert = inert_parameters(table)
    typer.echo(f"inert ({len(inert)}): " + (", ".join(inert) if inert else "none"))


def _levers(rows, n: int = 3) -> str:
    """The first `n` levers of `rows` with their slope per +10 % (`*`: it changed some
    match), each lever's other keys in brackets after it."""
    entries: dict[str, str] = {}   # lever -> its strongest key with its slope
    others: dict[str, list[str]] = {}  # lever -> its other keys
    for r in rows.iter_rows(named=True):
        lever = r["same_as"] or r["parameter"]
        if lever in entries:
            others[lever].append(r["parameter"])
            continue
        if len(entries) == n:
            break
        slope = r["effect"] if r["effect_per_10pct"] is None else r["effect_per_10pct"]
        entries[lever] = f"{r['parameter']} {slope:+.3f}{'*' if r['changed'] else ''}"
        others[lever] = []
    return ", ".join(text + (f" (= {', '.join(others[k])})" if others[k] else "")
                     for k, text in entries.items())

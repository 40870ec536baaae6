"""`sim sensitivity`: which table values matter (a paired sweep of every parameter moved
down and up, then on request a Morris screen of the strongest), and the lines it prints
of the result."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Annotated

import typer

from sim.cli.common import (
    app,
    check_run_options,
    exit_if_missing,
    fail,
    say,
    signal_name,
)
from sim.outputs.storage import run_path
from sim.runner.pool import keep_freed_memory


@app.command("sensitivity")
def sensitivity_cmd(file: Annotated[Path, typer.Argument(help="Sensitivity TOML file.")],
                    jobs: Annotated[int | None, typer.Option(help="Parallel workers (default: "
                                                             "all cores).")] = None,
                    backend: Annotated[str, typer.Option(help="local or dask.")] = "local",
                    scheduler: Annotated[str | None, typer.Option(
                        help="Dask scheduler address (default: a local cluster).")] = None,
                    out: Annotated[str | None, typer.Option(
                        help="Sensitivity folder, or any fsspec URL "
                             "(s3://bucket/prefix/name; default: runs/<name>).")] = None,
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
    from sim.report.sensitivity import run_sensitivity  # lazy: 0.54 s (altair)
    from sim.runner.experiments import ExperimentError  # lazy: 0.24 s
    from sim.runner.sensitivity import SensitivityError  # lazy: 0.29 s

    check_run_options(backend, jobs, scheduler)
    jobs = jobs or os.cpu_count() or 1
    sweep = functools.partial(_sensitivity_sweep, jobs=jobs, backend=backend,
                              scheduler=scheduler, quiet=quiet, replace_stale=replace_stale)
    try:
        done = run_sensitivity(file, run_path(out) if out is not None else None,
                               replace_stale, jobs, sweep, typer.echo, say)
    except (SensitivityError, ExperimentError, OSError) as exc:  # OSError: a bad URL
        fail(str(exc))
    _print_sensitivity(done.table, done.printed)
    if done.morris is not None:
        _print_morris(done.morris)
    typer.echo(f"table: {done.folder / 'sensitivity.parquet'}"
               + (f"\nmorris: {done.folder / 'morris.parquet'}" if done.morris is not None
                  else "") + f"\nreport: {done.page}")
    if failed := {name: n for name, n in done.errors.items() if n}:
        for name, n in failed.items():
            typer.echo(f"{n} matches failed: see the errors table in {done.folder / name}",
                       err=True)
        raise typer.Exit(1)


def _sensitivity_sweep(experiment, out: Path, command: str, *, jobs: int, backend: str,
                       scheduler: str | None, quiet: bool, replace_stale: bool) -> int:
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


def _print_sensitivity(table, printed: tuple[str, ...] | None = None) -> None:
    """The three strongest balance values per outcome of `printed` (the game's: the hex
    game's victory types, in V01's order, as the Morris lines and the report list
    them), then the match setup's
    keys that moved it (ranked apart: sim.analysis.sensitivity.strongest), and the
    inert ones. A lever under several keys (`same_as`) is one entry, its other keys
    named after it."""
    # lazy: 0.16 s (polars)
    from sim.analysis.sensitivity import PRINTED_METRICS, inert_parameters, strongest

    printed = PRINTED_METRICS if printed is None else printed

    metrics = set(table.get_column("metric").to_list())
    for metric in printed:
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

"""`sim tune`: a search of a tune file's keys for values that put every banded outcome
inside its band, confirmed on fresh matches; and the before/after it prints."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from sim.cli.common import app, check_run_options, fail, say, signal_name
from sim.outputs.storage import absolute, run_path
from sim.runner.pool import keep_freed_memory

TUNE_OUTSIDE = 4   # `sim tune`: the budget ended with a banded outcome outside its band


@app.command("tune")
def tune_cmd(file: Annotated[Path, typer.Argument(help="Tune TOML file.")],
             out: Annotated[str | None, typer.Option(
                 help="Tune folder, or any fsspec URL (s3://bucket/prefix/name; "
                      "default: runs/<name>).")] = None,
             jobs: Annotated[int | None, typer.Option(help="Parallel workers per trial "
                                                      "(default: all cores).")] = None,
             backend: Annotated[str, typer.Option(help="local or dask.")] = "local",
             scheduler: Annotated[str | None, typer.Option(
                 help="Dask scheduler address (default: a local cluster).")] = None,
             ) -> None:
    """Search the keys of FILE for values that put every banded outcome (victory
    shares, median end turn) inside its band: Optuna proposes, each trial is a sweep
    on the same seeded matches, the best is confirmed against the baseline on fresh
    matches. Writes tuned.toml, tune.parquet, tune.json and tune.html into the
    folder; the study (study.db) resumes an interrupted tune (same command).

    Exit status: 0 the confirmed tuned values are inside every band; 4 the budget
    ended with some outcome outside its band; 1 matches missing; 2 bad input or a
    folder that holds another tune; 130/143 interrupted (what was told is kept)."""
    keep_freed_memory()  # before polars loads (it plays chunks in this process with --jobs 1)
    from sim.runner.sweep import SweepError, SweepInterrupted, stop_on_signals  # lazy: 0.46 s
    from sim.runner.tune import TuneError  # lazy: 0.35 s (optuna)

    check_run_options(backend, jobs, scheduler)
    tune, folder = _open(file, out)
    # after the file is read: a bad file is told at once, before altair and the engine load
    from sim.report.tune import tune_study  # lazy: 0.60 s (altair)

    jobs = jobs or os.cpu_count() or 1
    command = f"sim tune {shlex.quote(str(file))} --out {shlex.quote(str(folder))}"
    typer.echo(f"tune {tune.spec.name}: {len(tune.keys)} keys, {tune.spec.trials} trials "
               f"({tune.spec.sampler}) x {tune.spec.matches} matches, then "
               f"{tune.spec.confirm_matches} x 2 to confirm -> {folder} ({jobs} workers)")
    with stop_on_signals():
        try:
            summary, result = tune_study(tune, folder, jobs, backend, scheduler, say, command)
        except (TuneError, SweepError) as exc:
            fail(str(exc))
        except SweepInterrupted as exc:
            _interrupted(exc, folder, command)
    _print_tune(result, summary, folder)
    if not result["inside"]:
        raise typer.Exit(TUNE_OUTSIDE)


def _open(file: Path, out: str | None):
    """The tune of FILE and its folder (--out, a path or a URL; default runs/<name>),
    or exit 2 naming what is wrong."""
    from sim.rules.tables import REPO_ROOT  # lazy: 0.20 s
    from sim.runner.experiments import run_name_problem  # lazy: 0.24 s
    from sim.runner.tune import TuneError, load_tune  # lazy: 0.35 s (optuna)

    try:
        tune = load_tune(file)
        folder = absolute(run_path(out) if out is not None
                          else REPO_ROOT / "runs" / tune.spec.name)
    except (TuneError, OSError) as exc:  # OSError: a URL of no known store
        fail(str(exc))
    if (why := run_name_problem(tune.spec.name, "tune")) is not None:
        fail(f"{file}: name: {why}")
    return tune, folder


def _interrupted(exc, folder: Path, command: str) -> NoReturn:
    """Exit 130/143 after a signal: what was told is kept, the same command resumes."""
    typer.echo(f"interrupted by {signal_name(exc.signum)}: the trials told are kept "
               f"in {folder / 'study.db'}; to resume, run the same command again: "
               f"{command}", err=True)
    raise typer.Exit(exc.exit_code) from None


def _print_tune(result: dict, summary: dict, folder: Path) -> None:
    """The before/after of every banded outcome and the verdict, where the outputs
    are, and the confirmation's failed matches (run_tune's summary)."""
    from sim.report.tune import PAGE_FILE, TUNED_FILE  # loaded already (tune_study)

    typer.echo(f"best: trial {result['best']['trial']} of {result['trials']}, "
               + ", ".join(f"{k} = {v}" for k, v in result["best"]["params"].items()))
    confirm = result["confirm"]
    typer.echo(f"confirmed on {confirm['matches']} fresh matches (root seed "
               f"{confirm['root_seed']}), baseline -> tuned:")
    for r in confirm["table"]:
        turns = r["outcome"] == "median_end_turn"
        before, after = ("–" if v is None else f"{v:.1f}" if turns else f"{v:.1%}"
                         for v in (r["before"], r["after"]))
        band = f"[{r['band_lo']:g}, {r['band_hi']:g}]"
        mark = "in band" if r["after_in_band"] else "OUTSIDE"
        typer.echo(f"  {r['outcome']:<16} {band:<14} {before:>7} -> {after:>7}  {mark}")
    d0, d1 = confirm["distance_baseline"], confirm["distance_tuned"]
    typer.echo(f"distance to the bands: baseline {'–' if d0 is None else f'{d0:.4f}'}, tuned "
               f"{'–' if d1 is None else f'{d1:.4f}'}; "
               + ("inside every band" if result["inside"] else "outside some band (exit 4)"))
    typer.echo(f"tuned values: {folder / TUNED_FILE}\nreport: {folder / PAGE_FILE}")
    if summary["confirm"]["result"]["errors"]:
        typer.echo(f"{summary['confirm']['result']['errors']} confirmation matches failed: "
                   f"see the errors table in {summary['confirm']['folder']}", err=True)

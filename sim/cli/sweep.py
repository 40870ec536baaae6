"""`sim sweep`: an experiment's matches into a run folder, and what the command says
when it is done (counts, the victory mix, where the run and its report are)."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer

from sim.cli.common import app, check_run_options, exit_if_missing, fail, say, signal_name
from sim.outputs.storage import absolute, run_path
from sim.runner.pool import keep_freed_memory, shared_pool


@app.command("sweep")
def sweep_cmd(file: Annotated[Path, typer.Argument(help="Experiment TOML file.")],
              jobs: Annotated[int | None, typer.Option(help="Parallel workers (default: "
                                                       "all cores).")] = None,
              backend: Annotated[str, typer.Option(help="local (worker processes on this "
                                                   "machine) or dask.")] = "local",
              scheduler: Annotated[str | None, typer.Option(help="Dask scheduler address "
                                                            "(default: a local cluster); "
                                                            "see docs/scale-out.md.")]
              = None,
              out: Annotated[str | None, typer.Option(help="Run folder, or any fsspec URL "
                                                      "such as s3://bucket/prefix/run "
                                                      "(default: runs/<experiment name>)."
                                                      )] = None,
              chunk_size: Annotated[int | None, typer.Option(help="Matches per chunk "
                                                             "(default: the experiment's).")]
              = None,
              quiet: Annotated[bool, typer.Option("--quiet", help="No progress.")] = False,
              replace_stale: Annotated[bool, typer.Option(
                  "--replace-stale", help="If --out holds a run of another experiment, "
                  "tables, code or chunking, delete it and start afresh (default: refuse).")]
              = False,
              retry_errors: Annotated[bool, typer.Option(
                  "--retry-errors", help="Play again the chunks of matches that failed "
                  "before (error rows).")] = False,
              yes: Annotated[bool, typer.Option(
                  "--yes", help="Play a sweep over its limit of matches or variants.")]
              = False,
              limit_matches: Annotated[int | None, typer.Option(
                  help="Most matches (variants x matches) played without --yes (default: "
                  "the experiment's [limit] matches, 100,000).")] = None,
              limit_variants: Annotated[int | None, typer.Option(
                  help="Most variants played without --yes (default: the experiment's "
                  "[limit] variants, 500).")] = None,
              dry_run: Annotated[bool, typer.Option(
                  "--dry-run", help="Check the experiment and say what the sweep would "
                  "play and about how long; play nothing.")] = False,
              ) -> None:
    """Run an experiment's matches in parallel into Parquet tables; resumes a folder.

    Exit status: 0 every planned match written; 1 some matches failed or are
    missing; 2 bad input, a folder that cannot be used (full, read-only) or a sweep
    over its limit without --yes; 130/143 interrupted by SIGINT/SIGTERM (finished
    chunks are kept: run the same command to resume)."""
    keep_freed_memory()  # before polars loads (it plays chunks in this process with --jobs 1)
    check_run_options(backend, jobs, scheduler, ("local", "loky", "dask"))
    if chunk_size is not None and chunk_size < 1:
        fail("--chunk-size must be >= 1")
    if any(n is not None and n < 1 for n in (limit_matches, limit_variants)):
        fail("--limit-matches and --limit-variants must be >= 1")
    jobs = jobs or os.cpu_count() or 1
    # the workers start now: their start (an interpreter, the engine's imports) runs
    # while this process imports, loads the experiment and checks the run folder
    with shared_pool(1 if dry_run else jobs, backend, scheduler) as pool:
        limit = None if yes else (limit_matches, limit_variants)
        experiment, out, command = _open(file, out, chunk_size, limit, jobs)
        spec = experiment.spec
        size = f"{spec.matches} matches" if not spec.sequential else \
            f"{spec.matches} to {spec.max_matches} matches (until {_target_text(spec)})"
        typer.echo(f"sweep {spec.name}: {len(experiment.variants)} variants x {size} -> "
                   f"{out} ({jobs} workers, {backend})")
        if dry_run:
            _print_dry_run(file, experiment, chunk_size, jobs)
            return
        _sweep(experiment, out, command, jobs, backend, scheduler, chunk_size, quiet,
               replace_stale, retry_errors, pool)


def _open(file: Path, out: str | None, chunk_size: int | None,
          limit: tuple[int | None, int | None] | None, jobs: int):
    """The experiment of FILE, its run folder (absolute) and the command that resumes
    it; exit 2 when the file or --chunk-size cannot be played, or when the sweep is over
    `limit` ((matches, variants), each None for the file's [limit]; None: --yes)."""
    from sim.rules.tables import REPO_ROOT  # lazy: 0.20 s
    from sim.runner.experiments import ExperimentError, expand, parse_experiment  # 0.24 s

    try:
        spec, text, lines = parse_experiment(file)
        if limit is not None:  # before the grids expand: each variant's tables validate
            _refuse_over_limit(file, spec, lines, limit, jobs)
        experiment = expand(spec, file, text, lines)
    except ExperimentError as exc:
        fail(str(exc))
    # absolute here, in the parent: Dask workers have working directories of their own
    out = absolute(run_path(out or REPO_ROOT / "runs" / experiment.spec.name))
    command = shlex.join(["sim", *sys.argv[1:]]) if sys.argv[1:2] == ["sweep"] else \
        f"sim sweep {shlex.quote(str(file))} --out {shlex.quote(str(out))}"
    if experiment.spec.sequential and chunk_size is not None and any(
            n % chunk_size for n in experiment.looks()[:-1]):
        fail(f"--chunk-size {chunk_size}: every look of {file} (matches, then every block) "
             "must end on a whole chunk")
    return experiment, out, command


def _sweep(experiment, out: Path, command: str, jobs: int, backend: str,
           scheduler: str | None, chunk_size: int | None, quiet: bool, replace_stale: bool,
           retry_errors: bool, pool) -> None:
    from sim.runner.sequential import run_experiment  # lazy: 0.35 s
    from sim.runner.sweep import SweepError, SweepInterrupted, stop_on_signals

    # the handlers cover the summary too, so a signal always ends the same way
    with stop_on_signals():
        try:
            look = _look(experiment) if experiment.spec.sequential else None
            result = run_experiment(experiment, out, look, jobs, backend, scheduler,
                                    chunk_size, progress=not quiet,
                                    replace_stale=replace_stale, retry_errors=retry_errors,
                                    command=command, say=say, pool=pool)
            if experiment.spec.sequential:
                seq = result["sequential"]
                typer.echo(f"stopped at {seq['stopped_at']} matches per variant: "
                           f"{seq['reason']} ({len(seq['looks'])} look"
                           f"{'' if len(seq['looks']) == 1 else 's'})")
            _sweep_summary(result, out, command)
        except SweepError as exc:
            fail(str(exc))
        except SweepInterrupted as exc:
            written = exc.written if exc.out else len(list((out / "_done").glob("*.json")))
            planned = exc.planned or len(experiment.chunks(chunk_size))
            typer.echo(f"interrupted by {signal_name(exc.signum)}: {written} of {planned} "
                       f"chunks are written in {out}; to resume, run the same command "
                       f"again: {command}", err=True)
            raise typer.Exit(exc.exit_code) from None


def _refuse_over_limit(file: Path, spec, lines: dict, limit: tuple[int | None, int | None],
                       jobs: int) -> None:
    """Exit 2 with one line before anything plays when the sweep of `spec` is over its
    limit of matches or variants: how much it would play, about how long, and how to
    allow it."""
    from sim.rules.tomlpos import line_of
    from sim.runner.experiments import planned_size

    variants, matches = planned_size(spec)
    most_matches = limit[0] or spec.limit.matches
    most_variants = limit[1] or spec.limit.variants
    if matches <= most_matches and variants <= most_variants:
        return
    key, flag, most, what = ("variants", "--limit-variants", most_variants, "variants") \
        if variants > most_variants else ("matches", "--limit-matches", most_matches,
                                          "matches")
    line = line_of(lines, ("limit", key)) or line_of(lines, ("grids",)) or \
        line_of(lines, ("variants",))
    where = f"{file}:{line}" if line else str(file)
    per = matches // variants
    fail(f"{where}: limit.{key}: this sweep would play {variants:,} variants x {per:,} "
         f"matches = {matches:,} matches{_estimate_text(file, spec, matches, jobs)}, over "
         f"its limit of {most:,} {what} ([limit] {key} in the file, or {flag}); to play "
         f"it anyway add --yes: {_with_yes(file)}")


def _estimate_text(file: Path, spec, matches: int, jobs: int) -> str:
    """`, about 1:23:00 on 2 workers (at about 200 matches/s per worker)`, or "" when
    the experiment's tables do not load."""
    from sim.runner.experiments import match_turns
    from sim.runner.progress import _clock, sweep_estimate

    turns = match_turns(spec, file)
    if turns is None:
        return ""
    seconds, basis = sweep_estimate(matches, turns, jobs)
    return f", about {_clock(seconds)} on {jobs} worker{'s' if jobs != 1 else ''} ({basis})"


def _with_yes(file: Path) -> str:
    """This very command with --yes."""
    args = sys.argv[1:] if sys.argv[1:2] == ["sweep"] else ["sweep", str(file)]
    return shlex.join(["sim", *args, "--yes"])


def _print_dry_run(file: Path, experiment, chunk_size: int | None, jobs: int) -> None:
    """What a sweep of `experiment` would play and about how long; nothing is played."""
    from sim.runner.experiments import planned_size

    spec = experiment.spec
    variants, matches = planned_size(spec)
    size = chunk_size or spec.chunk_size
    chunks = variants * -(-(matches // variants) // size)
    most = "at most " if spec.sequential else ""  # it may stop at an earlier look
    typer.echo(f"dry run: would play {most}{matches:,} matches in {chunks:,} chunks"
               f"{_estimate_text(file, spec, matches, jobs)}; nothing played")


def _look(experiment):
    """The stopping rule of a sequential experiment: run_sequential's `look`."""
    from sim.analysis.sequential import stopping_rule  # lazy: 0.77 s (scipy)

    return stopping_rule(experiment.spec, experiment.baseline)


def _target_text(spec) -> str:
    parts = []
    if spec.precision is not None:
        parts.append(f"every victory share is within ±{spec.precision:g}")
    if spec.detect is not None:
        parts.append(f"every difference from the baseline of {spec.detect:g} is decided")
    return " and ".join(parts) + f" at {spec.confidence:.0%}, anytime-valid"


def _sweep_summary(result: dict, out: Path, command: str) -> None:
    """The closing lines of a sweep: counts, the victory mix, where the run and its
    report are; exit 1 when any planned match is missing or failed."""
    from sim.rules.tables import REPO_ROOT  # lazy: 0.20 s

    rate = f", {result['matches_per_s']} matches/s" if result["matches_per_s"] else ""
    compiled = f" ({result['compile_s']:.0f} s of it compiling the engine)" \
        if result.get("compile_s") else ""
    typer.echo(f"done: {result['matches']} matches in {result['chunks']} chunks "
               f"({result['chunks_resumed']} already written), {result['errors']} failed, "
               f"{result['seconds']:.1f} s{compiled}{rate}")
    exit_if_missing(result, command)
    _print_victory_mix(out)
    report = REPO_ROOT / "reports" / f"{out.name}.html"
    typer.echo(f"run folder: {out}\nits report: sim report {shlex.quote(str(out))} --out "
               f"{shlex.quote(str(report))}")
    if result["errors"]:
        typer.echo(f"{result['errors']} matches failed: see the errors table in {out} "
                   "(--retry-errors plays them again)", err=True)
        raise typer.Exit(1)


def _print_victory_mix(out: Path) -> None:
    """Victory shares per variant of a finished run, in the run's variant order."""
    from sim.analysis.victory import victory_mix  # lazy: 0.17 s (polars)

    mix = victory_mix(out)
    if mix is None:
        return
    from sim.outputs.games import game_of_run
    from sim.outputs.store import read_provenance

    order, victories, shares = mix
    width = max(len(v) for v in order)
    # the hex game's victory types, or another game's outcome (Crown: the winner side)
    column = game_of_run(read_provenance(out)).outcome_column
    typer.echo(f"{column} mix (share of matches):")
    typer.echo("  " + " " * width + "".join(f"{v:>12}" for v in victories))
    for variant in order:
        share = shares[variant]
        typer.echo(f"  {variant:<{width}}" + "".join(
            f"{share[v]:>12.1%}" if share is not None else f"{'–':>12}" for v in victories))

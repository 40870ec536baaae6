"""The `sim` command: tables check, map, scenario, bench, demo (and later match, sweep, report).

Bad input (a tables or scenario file with a problem) prints one clear message
per problem naming file, line and key, and exits with status 2; no traceback.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import warnings
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Balance-simulation workbench for the hex 4X game.")
tables_app = typer.Typer(no_args_is_help=True, help="Balance tables.")
bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks (each prints a ratio or rate).")
app.add_typer(tables_app, name="tables")
app.add_typer(bench_app, name="bench")

TablesOpt = Annotated[Path | None, typer.Option("--tables", help="Tables file "
                                                "(default tables/default.toml).")]
SetOpt = Annotated[list[str] | None, typer.Option("--set", help="Override key.path=value "
                                                  "(repeatable).")]


def _fail(messages: list[str] | str) -> None:
    for line in [messages] if isinstance(messages, str) else messages:
        typer.echo(line, err=True)
    raise typer.Exit(2)


def _check_run_options(backend: str, jobs: int | None, scheduler: str | None,
                       backends: tuple[str, ...] = ("local", "dask")) -> None:
    """The options every command that plays a sweep shares (sweep, sensitivity, tune):
    one line and exit 2 for a backend, worker count or scheduler that cannot run."""
    if backend not in backends:
        _fail(f"--backend {backend}: choose local or dask")
    if jobs is not None and jobs < 1:
        _fail("--jobs must be >= 1")
    if scheduler and backend != "dask":
        _fail("--scheduler needs --backend dask")


def _load_tables(path: Path | None, sets: list[str] | None):
    from sim.rules.tables import TablesError, load_tables, parse_overrides

    # the board is checked by each command at the seats and length it plays
    # (_check_board), not at the tables' default ones
    try:
        tables = load_tables(path)
    except TablesError as exc:
        _fail(exc.errors + (["--set: not checked until the tables themselves are valid"]
                            if sets else []))
    try:
        overrides = parse_overrides(sets or [])
        return tables.with_overrides(overrides, source="--set", check_board=False) \
            if overrides else tables
    except TablesError as exc:
        _fail(exc.errors)


@tables_app.command("check")
def tables_check(file: Annotated[Path | None, typer.Argument(help="Tables file.")] = None,
                 set_: SetOpt = None) -> None:
    """Validate a tables file; print every problem as file:line: key: reason."""
    tables = _load_tables(file, set_)
    _check_board(tables)
    typer.echo(f"{tables.source}: ok (hash {tables.hash}; {len(tables.unit_names)} units, "
               f"{len(tables.building_names)} buildings, {len(tables.tech_names)} techs)")


@app.command("map")
def map_cmd(seed: Annotated[int, typer.Option(help="Root seed of the match.", min=0,
                                              max=2**63 - 1)] = 1,
            match: Annotated[int, typer.Option(help="Match index under the seed.", min=0)]
            = 0,
            seats: Annotated[int | None, typer.Option(help="Seats (default: tables).")] = None,
            length: Annotated[str | None, typer.Option(
                help="short | standard | long: the board of that length (D6; default: "
                     "the tables').")] = None,
            out: Annotated[Path | None, typer.Option(help="Write the map as .svg or .png.")] = None,
            tables: TablesOpt = None, set_: SetOpt = None) -> None:
    """Draw a seeded map and print its opening territory and score."""
    from sim.engine.match import new_match

    t = _load_tables(tables, set_)
    _match_options(t, seed, match, seats, length, None)
    state, board = new_match(t, seed, match, seats, length)
    if out is not None:
        from sim.report.map import write_map

        if out.suffix.lower() not in (".svg", ".png"):
            _fail(f"{out}: the map is written as .svg or .png")
        out.parent.mkdir(parents=True, exist_ok=True)
        n_seats = int(state.n_seats[0])
        preset = length or t.model.match.length
        write_map(state, t, board, out, title=f"seed {seed}, match {match}: {n_seats} seats, "
                  f"{preset}, opening position (tables {t.hash})")
        typer.echo(f"map written to {out}")
    _print_position(state, t, board, title=f"seed {seed}, match {match}")
    _print_starts(state, t, board)


def _print_starts(state, tables, board) -> None:
    """D1: how even the starts are, by the figures map generation balanced them on."""
    from rich.console import Console
    from rich.table import Table

    from sim.engine.report import start_balance

    rows = start_balance(state, tables, board)
    radius = tables.model.map.start_balance_radius
    table = Table(title=f"Starts (D1): within {radius} steps of each capital")
    for col in ("seat", "at", "land", "nodes", "food", "worth", "nearest rival"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(str(r["seat"]), str(tuple(r["at"])), str(r["land"]), str(r["nodes"]),
                      str(r["food"]), str(r["worth"]), str(r["nearest_rival"]))
    worths = [r["worth"] for r in rows]
    mean = sum(worths) / len(worths)
    Console().print(table)
    spread = max(worths) - min(worths)
    Console().print(f"worth spread {spread} ({spread / mean:.0%} of the mean {mean:.1f}); "
                    f"tolerance: {tables.model.map.start_tolerance_pct}% below the mean")


def _print_position(state, tables, board, title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    from sim.engine.report import state_report

    report = state_report(state, tables, board)
    table = Table(title=f"Territory and score — {title} (tables {tables.hash})")
    for col in ("seat", "rank", "score", "region", "population", "cities", "gold",
                "monuments", "gold stock", "dominance"):
        table.add_column(col, justify="right")
    for s in report["seats"]:
        t = s["score_terms"]
        table.add_row(str(s["seat"]), str(s["rank"]), str(s["score"]), str(t["region"]),
                      str(t["population"]), str(t["cities"]), str(t["gold"]),
                      str(t["monuments"]), str(s["gold"]),
                      f"{s['dominance_counter']} ({s['dominance_share']:.0%})")
    Console(width=120).print(table)


@app.command("scenario")
def scenario_cmd(file: Annotated[Path, typer.Argument(help="Scenario TOML file.")],
                 as_json: Annotated[bool, typer.Option("--json", help="Print the JSON report.")]
                 = False,
                 tables: TablesOpt = None) -> None:
    """Apply a scenario's commands and print the resulting state (SCENARIOS.md)."""
    from sim.engine.scenario import ScenarioError, load_scenario, run_scenario

    try:
        scn = load_scenario(file, tables)
    except ScenarioError as exc:
        _fail(str(exc))
    report = run_scenario(scn, check=False)
    if as_json:
        typer.echo(json.dumps(report, indent=1))
        return
    _print_position(scn.state, scn.tables, scn.board, title=f"{file} after its commands")
    for cmd in report["commands"]:
        mark = "ok " if cmd["ok"] else "REFUSED"
        typer.echo(f"  [{cmd['index']}] {cmd['do']:<10} {mark} {cmd['error'] or ''}")
    for ev in report["events"]:
        if ev["kind"] in ("transfer", "kept", "built"):
            continue
        details = ", ".join(f"{k}={v}" for k, v in ev.items() if k not in ("kind", "row"))
        typer.echo(f"  event {ev['kind']}: {details}")
    if report["finished"]:
        typer.echo(f"match over: seat {report['winner']} wins by {report['victory']}")


def _check_board(tables, seats: int | None = None, length: str | None = None) -> None:
    """Exit 2 naming the keys when the board cannot hold a match at `seats` and `length`
    (default: the tables' own match; D1, D6). The tables themselves check only a file's
    own default match, and an override plays wherever its caller says."""
    from sim.rules.tables import board_problems

    problems = board_problems(tables.model, seats or tables.model.match.seats,
                              length or tables.model.match.length)
    if problems:
        _fail([f"{tables.source}: {'.'.join(path)}: {reason}" for path, reason in problems])


def _match_options(tables, seed: int, match: int, seats: int | None, length: str | None,
                   personalities: str | None) -> list[str] | None:
    """Check one match's options against the tables (exit 2 naming the bad one);
    returns the personalities as a list (None: the tables')."""
    if seats is not None and not 2 <= seats <= 6:
        _fail(f"--seats {seats}: a match has 2 to 6 seats")
    if length is not None and length not in tables.model.match.lengths:
        _fail(f"--length {length}: choose one of {', '.join(tables.model.match.lengths)}")
    _check_board(tables, seats, length)
    if not (0 <= seed < 2**63 and 0 <= match < 2**63):
        _fail("--seed and --match must be between 0 and 2**63 - 1")
    names = personalities.split(",") if personalities else None
    for name in names or []:
        if name not in tables.model.ai.personalities:
            _fail(f"--personalities: unknown personality {name!r}; known: "
                  f"{', '.join(tables.personality_names)}")
    return names


@app.command("match")
def match_cmd(seed: Annotated[int, typer.Option(help="Root seed.")] = 1,
              match: Annotated[int, typer.Option("--match", help="Match index under the seed.")]
              = 0,
              tables: TablesOpt = None, set_: SetOpt = None,
              seats: Annotated[int | None, typer.Option(help="Seats, 2–6 (default: tables).")]
              = None,
              length: Annotated[str | None, typer.Option(help="short | standard | long.")]
              = None,
              personalities: Annotated[str | None, typer.Option(
                  help="Comma-separated AI personality per seat (default: tables).")] = None,
              check: Annotated[bool, typer.Option("--check", help="Run the invariant checker "
                                                  "after every turn.")] = False,
              seat_ai: Annotated[str | None, typer.Option(
                  "--seat-ai", help='Per-seat AI settings as JSON, seat index first, e.g. '
                  '\'[{"forbid":["observatory"]},{}]\' (an experiment\'s seat_ai).')] = None,
              as_json: Annotated[bool, typer.Option("--json", help="Print the whole outcome "
                                                    "as JSON.")] = False) -> None:
    """Play one AI-vs-AI match and print its outcome."""
    from sim.engine.match import InvariantError, outcome, play_match
    from sim.engine.seat_ai import SeatAIError, check_seat_ai

    t = _load_tables(tables, set_)
    names = _match_options(t, seed, match, seats, length, personalities)
    settings = None
    if seat_ai is not None:
        try:
            settings = check_seat_ai(t, json.loads(seat_ai), seats or t.model.match.seats)
        except (ValueError, TypeError) as exc:  # SeatAIError, or JSON that is not a list
            reason = str(exc) if isinstance(exc, SeatAIError) else f"not a JSON list ({exc})"
            _fail(f"--seat-ai: {reason}")
    try:
        state, board, turn_log = play_match(t, seed, match, seats, length, check=check,
                                            personalities=names, seat_ai=settings)
    except InvariantError as exc:
        _fail(f"invariant violated: {exc}")
    result = outcome(state, t, board, turn_log, seed, match)
    if result["events_dropped"]:
        typer.echo(f"warning: the event log was full: {result['events_dropped']} events were "
                   "counted but not stored (sim.world.state.Capacity.events)", err=True)
    if as_json:
        typer.echo(json.dumps(result, sort_keys=True))
        return
    typer.echo(f"seed {seed} match {match} (tables {t.hash}): seat {result['winner']} wins by "
               f"{result['victory']} on turn {result['end_turn']}")
    _print_position(state, t, board, title=f"seed {seed}, end of match")


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
              out: Annotated[Path | None, typer.Option(help="Run folder (default: "
                                                       "runs/<experiment name>).")] = None,
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
              ) -> None:
    """Run an experiment's matches in parallel into Parquet tables; resumes a folder.

    Exit status: 0 every planned match written; 1 some matches failed or are
    missing; 2 bad input or a folder that cannot be used; 130/143 interrupted by
    SIGINT/SIGTERM (finished chunks are kept: run the same command to resume)."""
    import os

    from sim.runner.pool import keep_freed_memory, shared_pool

    keep_freed_memory()  # before polars loads (it plays chunks in this process with --jobs 1)
    _check_run_options(backend, jobs, scheduler, ("local", "loky", "dask"))
    if chunk_size is not None and chunk_size < 1:
        _fail("--chunk-size must be >= 1")
    jobs = jobs or os.cpu_count() or 1
    # the workers start now: their start (an interpreter, the engine's imports) runs
    # while this process imports, loads the experiment and checks the run folder
    with shared_pool(jobs, backend, scheduler) as pool:
        _sweep(file, jobs, backend, scheduler, out, chunk_size, quiet, replace_stale,
               retry_errors, pool)


def _sweep(file: Path, jobs: int, backend: str, scheduler: str | None, out: Path | None,
           chunk_size: int | None, quiet: bool, replace_stale: bool, retry_errors: bool,
           pool) -> None:
    import shlex

    from sim.rules.tables import REPO_ROOT
    from sim.runner.experiments import ExperimentError, load_experiment
    from sim.runner.sweep import SweepError, SweepInterrupted, run_sweep, stop_on_signals

    try:
        experiment = load_experiment(file)
    except ExperimentError as exc:
        _fail(str(exc))
    # absolute here, in the parent: Dask workers have working directories of their own
    out = (out or REPO_ROOT / "runs" / experiment.spec.name).absolute()
    command = shlex.join(["sim", *sys.argv[1:]]) if sys.argv[1:2] == ["sweep"] else \
        f"sim sweep {shlex.quote(str(file))} --out {shlex.quote(str(out))}"
    spec = experiment.spec
    if spec.sequential and chunk_size is not None and any(
            n % chunk_size for n in experiment.looks()[:-1]):
        _fail(f"--chunk-size {chunk_size}: every look of {file} (matches, then every block) "
              "must end on a whole chunk")
    size = f"{spec.matches} matches" if not spec.sequential else \
        f"{spec.matches} to {spec.max_matches} matches (until {_target_text(spec)})"
    typer.echo(f"sweep {spec.name}: {len(experiment.variants)} variants x {size} -> {out} "
               f"({jobs} workers, {backend})")
    # the handlers cover the summary too, so a signal always ends the same way
    with stop_on_signals():
        try:
            if spec.sequential:
                from sim.analysis.sequential import run_look
                from sim.runner.sequential import run_sequential

                def look(run_dir: Path, prefix: int):
                    return run_look(run_dir, prefix, experiment.baseline, spec.precision,
                                    spec.detect, spec.confidence, spec.power)

                result = run_sequential(experiment, out, look, jobs, backend, scheduler,
                                        chunk_size, progress=not quiet,
                                        replace_stale=replace_stale,
                                        retry_errors=retry_errors, command=command,
                                        say=lambda line: typer.echo(line, err=True),
                                        pool=pool)
                seq = result["sequential"]
                typer.echo(f"stopped at {seq['stopped_at']} matches per variant: "
                           f"{seq['reason']} ({len(seq['looks'])} look"
                           f"{'' if len(seq['looks']) == 1 else 's'})")
            else:
                result = run_sweep(experiment, out, jobs, backend, scheduler, chunk_size,
                                   progress=not quiet, replace_stale=replace_stale,
                                   retry_errors=retry_errors, command=command,
                                   say=lambda line: typer.echo(line, err=True), pool=pool)
            _sweep_summary(result, out, command)
        except SweepError as exc:
            _fail(str(exc))
        except SweepInterrupted as exc:
            written = exc.written if exc.out else len(list((out / "_done").glob("*.json")))
            planned = exc.planned or len(experiment.chunks(chunk_size))
            typer.echo(f"interrupted by {signal_name(exc.signum)}: {written} of {planned} "
                       f"chunks are written in {out}; to resume, run the same command "
                       f"again: {command}", err=True)
            raise typer.Exit(exc.exit_code) from None


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
    import shlex

    from sim.rules.tables import REPO_ROOT

    rate = f", {result['matches_per_s']} matches/s" if result["matches_per_s"] else ""
    compiled = f" ({result['compile_s']:.0f} s of it compiling the engine)" \
        if result.get("compile_s") else ""
    typer.echo(f"done: {result['matches']} matches in {result['chunks']} chunks "
               f"({result['chunks_resumed']} already written), {result['errors']} failed, "
               f"{result['seconds']:.1f} s{compiled}{rate}")
    _exit_if_missing(result, command)
    _print_victory_mix(out)
    report = REPO_ROOT / "reports" / f"{out.name}.html"
    typer.echo(f"run folder: {out}\nits report: sim report {shlex.quote(str(out))} --out "
               f"{shlex.quote(str(report))}")
    if result["errors"]:
        typer.echo(f"{result['errors']} matches failed: see the errors table in {out} "
                   "(--retry-errors plays them again)", err=True)
        raise typer.Exit(1)


def _exit_if_missing(result: dict, command: str) -> None:
    """Exit 1 naming what is missing when a sweep left planned matches unwritten."""
    if result["problems"]:
        for line in result["problems"]:
            typer.echo(line, err=True)
        typer.echo(f"{result['missing']} of {result['planned']} planned matches are not "
                   f"written; run the same command again: {command}", err=True)
        raise typer.Exit(1)


def signal_name(signum: int) -> str:
    import signal

    return signal.Signals(signum).name


def _print_victory_mix(out: Path) -> None:
    """Victory shares per variant of a finished run, in the run's variant order."""
    import polars as pl

    from sim.outputs.store import read_provenance, scan
    from sim.rules.codes import VICTORY_NAMES

    order = [v["id"] for v in read_provenance(out)["variants"]]
    counts = (scan(out, "matches").group_by("variant", "victory").agg(pl.len().alias("n"))
              .collect())
    if not counts.height:
        return
    victories = [v for v in VICTORY_NAMES if v in counts["victory"].to_list()]
    width = max(len(v) for v in order)
    typer.echo("victory mix (share of matches):")
    typer.echo("  " + " " * width + "".join(f"{v:>12}" for v in victories))
    for variant in order:
        rows = counts.filter(pl.col("variant") == variant)
        total = rows["n"].sum()
        share = dict(zip(rows["victory"].to_list(), rows["n"].to_list(), strict=True))
        typer.echo(f"  {variant:<{width}}" + "".join(
            f"{share.get(v, 0) / total:>12.1%}" if total else f"{'–':>12}" for v in victories))


def _require_run(run_dir: Path):
    """The run's verified check, or exit 2 with one line naming what is wrong."""
    from sim.outputs.store import RunError, require_complete

    try:
        return require_complete(run_dir)
    except RunError as exc:
        _fail(str(exc))


@app.command("sensitivity")
def sensitivity_cmd(file: Annotated[Path, typer.Argument(help="Sensitivity TOML file.")],
                    jobs: Annotated[int | None, typer.Option(help="Parallel workers (default: "
                                                             "all cores).")] = None,
                    backend: Annotated[str, typer.Option(help="local or dask.")] = "local",
                    scheduler: Annotated[str | None, typer.Option(
                        help="Dask scheduler address (default: a local cluster).")] = None,
                    out: Annotated[Path | None, typer.Option(
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
    from sim.runner.pool import keep_freed_memory

    keep_freed_memory()  # before polars loads (it plays chunks in this process with --jobs 1)
    import os
    import shlex

    from sim.analysis.sensitivity import read_design, sensitivity_table, top_parameters
    from sim.outputs.folders import MORRIS_DIR, SWEEP_DIR
    from sim.report.sensitivity import write_sensitivity_report
    from sim.rules.tables import REPO_ROOT
    from sim.runner.experiments import ExperimentError, load_experiment, run_name_problem
    from sim.runner.morris import morris_design, write_morris_experiment
    from sim.runner.sensitivity import (
        SensitivityError,
        folder_conflict,
        load_sensitivity,
        write_experiment,
    )

    _check_run_options(backend, jobs, scheduler)
    try:
        design = load_sensitivity(file)
    except SensitivityError as exc:
        _fail(str(exc))
    if not design.parameters:
        why = "; ".join(f"{k}: {why}" for k, why in design.skipped) or \
            "the exclude patterns leave none"
        _fail(f"{file}: no parameter can move: {why}")
    if (why := run_name_problem(design.spec.name, "sensitivity")) is not None:
        _fail(f"{file}: name: {why}")
    for key, why in design.one_sided:
        typer.echo(f"note: {key}: one side stays at the base value, the other was refused "
                   f"({why})", err=True)
    jobs = jobs or os.cpu_count() or 1
    folder = (out or REPO_ROOT / "runs" / design.spec.name).absolute()
    if not replace_stale and (why := folder_conflict(design, folder)) is not None:
        _fail(why)
    try:
        experiment = load_experiment(write_experiment(design, folder))
    except ExperimentError as exc:
        _fail(str(exc))
    command = f"sim sensitivity {shlex.quote(str(file))} --out {shlex.quote(str(folder))}"
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
    sweep = {"jobs": jobs, "backend": backend, "scheduler": scheduler, "quiet": quiet,
             "replace_stale": replace_stale, "command": command}
    errors = {SWEEP_DIR: _sensitivity_sweep(experiment, folder / SWEEP_DIR, **sweep)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = sensitivity_table(folder)
    for w in caught:  # the resolution note in words, not as a warning with its source line
        typer.echo(f"note: {w.message}", err=True)
    table.write_parquet(folder / "sensitivity.parquet")
    morris = morris_json = None
    k = design.spec.morris_top
    keys = top_parameters(table, k)
    if k and len(keys) < 2:
        typer.echo(f"no Morris screen: {len(keys)} parameter(s) changed any match, it needs "
                   "two", err=True)
    elif k:
        from sim.analysis.morris import morris_table, read_morris_design

        try:
            m = morris_design(design, keys)
            morris_experiment = load_experiment(write_morris_experiment(m, folder))
        except (SensitivityError, ExperimentError) as exc:
            _fail(str(exc))
        typer.echo(f"morris screen: {len(keys)} parameters x {m.trajectories} trajectories "
                   f"({m.levels} levels) = {len(m.rows)} points, "
                   f"{len(morris_experiment.variants)} variants x {design.spec.matches} "
                   f"matches -> {folder / MORRIS_DIR}")
        errors[MORRIS_DIR] = _sensitivity_sweep(morris_experiment, folder / MORRIS_DIR,
                                                **sweep)
        morris = morris_table(folder)
        morris_json = read_morris_design(folder)
        morris.write_parquet(folder / "morris.parquet")
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


def _sensitivity_sweep(experiment, out: Path, jobs: int, backend: str, scheduler: str | None,
                       quiet: bool, replace_stale: bool, command: str) -> int:
    """Run (or resume) one sweep of `sim sensitivity`; returns its failed matches.
    Exits 2 when it cannot start, 1 when matches are missing, 130/143 on a signal."""
    from sim.runner.sweep import SweepError, SweepInterrupted, run_sweep, stop_on_signals

    with stop_on_signals():
        try:
            result = run_sweep(experiment, out, jobs, backend, scheduler, None,
                               progress=not quiet, replace_stale=replace_stale,
                               command=command, say=lambda line: typer.echo(line, err=True))
        except SweepError as exc:
            _fail(str(exc))
        except SweepInterrupted as exc:
            typer.echo(f"interrupted by {signal_name(exc.signum)}: finished chunks are kept "
                       f"in {out}; to resume, run the same command again: {command}",
                       err=True)
            raise typer.Exit(exc.exit_code) from None
    _exit_if_missing(result, command)
    return result["errors"]


def _print_morris(morris) -> None:
    """Per victory type, the parameters by mu* with sigma; `!` marks `interacts`."""
    import polars as pl

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
    from sim.analysis.sensitivity import inert_parameters, strongest

    def cells(rows, n: int = 3) -> str:
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

    from sim.rules.codes import VICTORY_NAMES

    metrics = set(table.get_column("metric").to_list())
    # in V01's order, as the Morris lines and the report list them
    for metric in (f"victory={name}" for name in VICTORY_NAMES):
        if metric not in metrics:
            continue
        balance = strongest(table, metric, "balance")
        setup = strongest(table, metric, "setup")
        typer.echo(f"{metric} per +10 %: " + (cells(balance) or "no balance value in this design"))
        if setup.height:
            typer.echo("  match setup: " + cells(setup))
    inert = inert_parameters(table)
    typer.echo(f"inert ({len(inert)}): " + (", ".join(inert) if inert else "none"))


TUNE_OUTSIDE = 4   # `sim tune`: the budget ended with a banded outcome outside its band


@app.command("tune")
def tune_cmd(file: Annotated[Path, typer.Argument(help="Tune TOML file.")],
             out: Annotated[Path | None, typer.Option(
                 help="Tune folder (default: runs/<name>).")] = None,
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
    from sim.runner.pool import keep_freed_memory

    keep_freed_memory()  # before polars loads (it plays chunks in this process with --jobs 1)
    import os
    import shlex

    from sim.rules.tables import REPO_ROOT
    from sim.runner.tune import TuneError, load_tune

    _check_run_options(backend, jobs, scheduler)
    try:
        tune = load_tune(file)
    except TuneError as exc:
        _fail(str(exc))
    from sim.runner.experiments import run_name_problem

    if (why := run_name_problem(tune.spec.name, "tune")) is not None:
        _fail(f"{file}: name: {why}")
    # after the file is read: a bad file is told at once, before altair and the engine load
    from sim.analysis.tune import scorer
    from sim.report.tune import PAGE_FILE, TUNED_FILE, write_tune_outputs
    from sim.runner.sweep import SweepError, SweepInterrupted, stop_on_signals
    from sim.runner.tune import run_tune

    jobs = jobs or os.cpu_count() or 1
    folder = (out or REPO_ROOT / "runs" / tune.spec.name).absolute()
    command = f"sim tune {shlex.quote(str(file))} --out {shlex.quote(str(folder))}"
    typer.echo(f"tune {tune.spec.name}: {len(tune.keys)} keys, {tune.spec.trials} trials "
               f"({tune.spec.sampler}) x {tune.spec.matches} matches, then "
               f"{tune.spec.confirm_matches} x 2 to confirm -> {folder} ({jobs} workers)")
    with stop_on_signals():
        try:
            summary = run_tune(tune, folder, scorer(tune.bands), jobs, backend, scheduler,
                               say=lambda line: typer.echo(line, err=True), command=command)
            result = write_tune_outputs(tune, summary, folder)
        except (TuneError, SweepError) as exc:
            _fail(str(exc))
        except SweepInterrupted as exc:
            typer.echo(f"interrupted by {signal_name(exc.signum)}: the trials told are kept "
                       f"in {folder / 'study.db'}; to resume, run the same command again: "
                       f"{command}", err=True)
            raise typer.Exit(exc.exit_code) from None
    _print_tune(result)
    typer.echo(f"tuned values: {folder / TUNED_FILE}\nreport: {folder / PAGE_FILE}")
    if summary["confirm"]["result"]["errors"]:
        typer.echo(f"{summary['confirm']['result']['errors']} confirmation matches failed: "
                   f"see the errors table in {summary['confirm']['folder']}", err=True)
    if not result["inside"]:
        raise typer.Exit(TUNE_OUTSIDE)


def _print_tune(result: dict) -> None:
    """The before/after of every banded outcome and the verdict."""
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


@app.command("plan")
def plan_cmd(run_dir: Annotated[Path, typer.Argument(help="Run folder of a pilot sweep.")],
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
    import polars as pl

    from sim.analysis.load import RunFolderError, load_run
    from sim.analysis.plan import plan

    if not 0 < detect < 1 or not 0 < power < 1 or not 0 < alpha < 1:
        _fail("--detect, --power and --alpha must each be between 0 and 1")
    _require_run(run_dir)  # a plan from damaged or foreign parts would look as sure
    try:
        run = load_run(run_dir)
    except RunFolderError as exc:
        _fail(str(exc))
    base = baseline or run.baseline
    if base not in run.variants:
        _fail(f"--baseline {base}: not a variant of {run_dir} ({', '.join(run.variants)})")
    table = plan(run.matches, base, detect, alpha, power)
    if not table.height:
        _fail(f"{run_dir}: no variant besides the baseline {base!r} to plan for")
    with pl.Config(tbl_rows=-1, tbl_hide_dataframe_shape=True, float_precision=3,
                   tbl_width_chars=160, fmt_str_lengths=80):
        typer.echo(table)
    need = table.get_column("paired_matches").drop_nulls()
    unknown = table.filter(pl.col("paired_matches").is_null()).height
    if need.len():
        typer.echo(f"to detect {detect:g} in every victory share (power {power:g}, alpha "
                   f"{alpha:g} per test): {int(need.max())} matches per variant, paired on "
                   f"common random numbers (unpaired: "
                   f"{int(table.get_column('unpaired_matches').max())})")
    if unknown:
        typer.echo(f"{unknown} rows without a count: there the pilot's pairs disagree in "
                   f"at most {detect:g} of its matches (the discordance), and a paired "
                   f"difference never exceeds it, so a difference of {detect:g} is out of "
                   "reach at that discordance (where no pair disagreed, a larger pilot "
                   "may find some)", err=True)


@app.command("check-run")
def check_run_cmd(run_dir: Annotated[Path, typer.Argument(help="Run folder of a sweep.")],
                  ) -> None:
    """Verify a run folder: every planned chunk written, every part the row count and
    checksum its done marker records. Exit 2 with one line per problem otherwise."""
    from sim.outputs.store import RunError, verify_run

    try:
        check = verify_run(run_dir)
    except RunError as exc:
        _fail(str(exc))
    problems = check.problems()
    if problems:
        _fail(problems)
    typer.echo(f"{run_dir}: ok: {len(check.done)} chunks intact, {check.matches} matches, "
               f"{check.errors} failed")


@app.command("report")
def report_cmd(run_dir: Annotated[Path, typer.Argument(help="Run folder of a sweep.")],
               baseline: Annotated[str | None, typer.Option(help="Variant to compare "
                                                            "against (default: the "
                                                            "experiment's).")] = None,
               out: Annotated[Path | None, typer.Option(help="HTML file (default: "
                                                        "reports/<run name>.html).")] = None,
               against: Annotated[Path | None, typer.Option(
                   help="An earlier run folder: the regression gate (each victory share "
                        "within ±margin of that run's); exit 3 when any share fails.")]
               = None,
               margin: Annotated[float | None, typer.Option(
                   help="The gate's margin on each victory share (default: the "
                        "experiment file's \\[gate], else 0.02).")] = None,
               history: Annotated[Path | None, typer.Option(
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
    from sim.report.html import write_report
    from sim.rules.tables import REPO_ROOT

    if margin is not None and against is None:
        _fail("--margin is the regression gate's: it needs --against BASELINE_RUN")
    _require_run(run_dir)
    from sim.analysis.load import missing_summaries

    if missing := missing_summaries(run_dir):
        named = missing[0] if len(missing) == 1 else \
            f"{', '.join(missing[:-1])} or {missing[-1]}"
        typer.echo(f"{run_dir}: has no {named} tables (swept before they "
                   "existed): the report reads the events and turns instead, which takes "
                   "longer; sweeping it again into a new folder writes them", err=True)
    out = out or REPO_ROOT / "reports" / f"{run_dir.absolute().name}.html"
    table = trend = None
    notes: list[str] = []
    if against is not None:
        table, notes = _gate(run_dir, against, margin)
    if history is not None:
        from sim.analysis.history import history_rows, read_history, with_run
        from sim.analysis.load import read_table
        from sim.outputs.store import read_provenance

        trend = with_run(read_history(history), history_rows(read_table(run_dir, "matches"),
                                                             read_provenance(run_dir)))
    try:
        path = write_report(run_dir, out, baseline, table, against, trend, notes)
    except ValueError as exc:
        _fail(str(exc))
    if history is not None:  # after the report: a report that failed adds no night
        from sim.analysis.history import write_history

        write_history(history, trend)
        typer.echo(f"history: {trend.get_column('run_id').n_unique()} runs in {history}")
    typer.echo(f"report written to {Path(path).absolute()}")
    if table is not None:
        from sim.analysis.gate import passed

        if not passed(table):
            raise typer.Exit(3)


def _other_margins(margins: dict[str, float]) -> str:
    return "".join(f", {k} ±{v:g}" for k, v in margins.items())


def _gate(run_dir: Path, against: Path, margin: float | None):
    """The regression gate of run_dir against an earlier run, printed; or exit 2.
    Margins: --margin on every share when given, else the experiment's [gate]."""
    import polars as pl

    from sim.analysis.gate import compared, failures, gate, gate_notes, passed, same_matches
    from sim.analysis.load import read_table
    from sim.outputs.settings import report_settings
    from sim.outputs.store import read_provenance

    if margin is not None and not 0 < margin < 1:
        _fail("--margin must be between 0 and 1")
    _require_run(against)
    prov, before = read_provenance(run_dir), read_provenance(against)
    settings = report_settings(prov).gate
    margins = {} if margin is not None else settings.margins
    margin = settings.margin if margin is None else margin
    paired = same_matches(prov, before)
    table = gate(read_table(run_dir, "matches"), read_table(against, "matches"), paired,
                 margin, margins=margins)
    if table.get_column("difference").is_null().all():
        _fail(f"{against}: shares no variant with {run_dir}")
    notes = gate_notes(run_dir, prov, against, before, table)
    with pl.Config(tbl_rows=-1, tbl_hide_dataframe_shape=True, float_precision=3,
                   tbl_width_chars=160, fmt_str_lengths=60):
        typer.echo(table.select("variant", "victory", "before", "now", "difference", "lo",
                                "hi", "verdict"))
    for note in notes:
        typer.echo(f"note: {note}", err=True)
    typer.echo(f"regression gate against {against} ({'paired' if paired else 'independent'},"
               f" margin ±{margin:g}{_other_margins(margins)}): " +
               ("PASS" if passed(table) else
                f"FAIL ({failures(table)} of {compared(table)} shares)"))
    return table, notes



@app.command("replay-command")
def replay_command_cmd(run_dir: Annotated[Path, typer.Argument(help="Run folder.")],
                       match_id: Annotated[str, typer.Argument(help="variant:index")]) -> None:
    """Print the one command that replays a match of a sweep; warns (exit 1) when the
    tables changed since the run, since the command would then play another match."""
    from sim.outputs.store import RunError, find_match
    from sim.rules.tables import TablesError, load_tables

    try:
        found = find_match(run_dir, match_id)
    except RunError as exc:
        _fail(str(exc))
    prov, chunk, replay = found.provenance, found.chunk, found.row["replay"]
    typer.echo(replay)
    variant = next(v for v in prov["variants"] if v["id"] == chunk.variant)
    try:
        now_hash, why = load_tables(prov["tables_path"], variant["overrides"] or None).hash, ""
    except TablesError as exc:
        now_hash, why = None, exc.errors[0]
    except UnicodeDecodeError:
        now_hash, why = None, "not UTF-8 text"
    if now_hash != variant["tables_hash"]:
        detail = f"hash {now_hash}" if now_hash else f"unreadable: {why}"
        typer.echo(f"{prov['tables_path']}: the tables changed since the run (variant "
                   f"{variant['id']} had tables hash {variant['tables_hash']}, now {detail}); "
                   "this command will not replay the same match", err=True)
        raise typer.Exit(1)


@app.command("replay")
def replay_cmd(run_dir: Annotated[Path | None, typer.Argument(
                   help="Run folder of a sweep (with MATCH_ID); or give --seed instead.")]
               = None,
               match_id: Annotated[str | None, typer.Argument(help="variant:index")] = None,
               seed: Annotated[int | None, typer.Option(help="Root seed of a single match "
                                                        "(instead of RUN_DIR MATCH_ID).")]
               = None,
               match: Annotated[int, typer.Option("--match", help="Match index under the "
                                                  "seed.")] = 0,
               tables: TablesOpt = None, set_: SetOpt = None,
               seats: Annotated[int | None, typer.Option(help="Seats, 2–6 (default: tables).")]
               = None,
               length: Annotated[str | None, typer.Option(help="short | standard | long.")]
               = None,
               personalities: Annotated[str | None, typer.Option(
                   help="Comma-separated AI personality per seat (default: tables).")] = None,
               out: Annotated[Path | None, typer.Option(help="HTML file (default: "
                                                        "reports/replay-<match>.html).")]
               = None,
               ) -> None:
    """Replay one match turn by turn into a self-contained HTML viewer (board per turn,
    slider, score and dominance per seat, event timeline; opens offline).

    RUN_DIR MATCH_ID replays a match of a sweep with the run's own tables (from its
    provenance), seed, seats, length and personalities, and checks that it ends as the
    run's `matches` row says (exit 1 if not). --seed N [--match I ...] replays a single
    match as `sim match` plays it. Exit 2 on bad input."""
    from sim.engine.match import MapError
    from sim.report.replay import write_replay
    from sim.rules.tables import REPO_ROOT

    single = {"--seed": seed is not None, "--match": match != 0, "--tables": tables is not None,
              "--set": bool(set_), "--seats": seats is not None, "--length": length is not None,
              "--personalities": personalities is not None}
    if run_dir is not None:
        from sim.runner.replay import ReplayError, record_sweep_match, sweep_match

        if match_id is None:
            _fail(f"sim replay {run_dir}: give the MATCH_ID too (variant:index, as in the "
                  "run's matches table)")
        given = [name for name, on in single.items() if on]
        if given:
            _fail(f"{', '.join(given)}: a sweep's match replays with the run's own settings; "
                  "these options are for a single match (sim replay --seed N ...)")
        try:
            found = sweep_match(run_dir, match_id)
        except ReplayError as exc:
            _fail(str(exc))
        try:
            recording = record_sweep_match(found)
        except ReplayError as exc:
            typer.echo(str(exc), err=True)
            raise typer.Exit(1) from None
        name = f"{found.variant}-{found.match_index}"
    else:
        from sim.engine.replay import record_match

        if seed is None:
            _fail("sim replay: give RUN_DIR MATCH_ID (a match of a sweep) or --seed N "
                  "(a single match)")
        t = _load_tables(tables, set_)
        names = _match_options(t, seed, match, seats, length, personalities)
        try:
            recording = record_match(t, seed, match, seats, length, names)
        except MapError as exc:
            _fail(str(exc))
        name = f"seed{seed}-match{match}"
    out = out or REPO_ROOT / "reports" / f"replay-{name}.html"
    path = write_replay(recording, out)
    meta = recording["meta"]
    result = f"seat {meta['winner']} wins by {meta['victory']} on turn {meta['end_turn']}" \
        if meta["winner"] is not None else f"no winner on turn {meta['end_turn']}"
    typer.echo(f"replay written to {path.absolute()} ({len(recording['frames']['turn'])} "
               f"frames, {path.stat().st_size / 1e6:.2f} MB): {result}")


def _print_bench(result: dict, as_json: bool) -> None:
    """A benchmark's figures as one JSON object, or one `key: value` line each."""
    if as_json:
        typer.echo(json.dumps(result))
        return
    for k, v in result.items():
        typer.echo(f"{k}: {v}")


@bench_app.command("match")
def bench_match(as_json: Annotated[bool, typer.Option("--json")] = False,
                matches: Annotated[int, typer.Option(help="Standard matches to time.",
                                                     min=1)] = 300,
                skill: Annotated[int, typer.Option(
                    help="Also time the same matches with seat 0 at this AI skill "
                         "(1: lookahead) and print the cost ratio.")] = 0,
                cold_start: Annotated[bool, typer.Option(
                    help="Also time the first match in fresh processes (cold, warm "
                         "numba cache).")] = True,
                phases: Annotated[bool, typer.Option(
                    "--phases", help="Instead: split a match's time among its phases "
                                     "(setup, flow, AI parts, victory checks, turn "
                                     "record); with --skill, seat 0 at that skill.")] = False,
                ) -> None:
    """Matches per second on one core, and the engine's cold and warm start times; with
    --skill 1, a skill-1 match's cost against a skill-0 match's; with --phases, where
    the time goes."""
    from sim.rules.codes import SKILLS
    from sim.runner.bench import bench_match as run
    from sim.runner.bench import bench_phases

    if skill not in SKILLS:
        raise typer.BadParameter(f"one of {', '.join(map(str, SKILLS))}", param_hint="--skill")
    if phases:
        result = bench_phases(matches, skill=skill)
        if not as_json:
            table = result.pop("phases")
            _print_bench(result, False)
            for name, cell in table.items():
                typer.echo(f"  {name:<24} {cell['ms']:8.3f} ms  {cell['share_pct']:5.1f} %")
            return
    else:
        result = run(matches, skill=skill, cold_start=cold_start)
    _print_bench(result, as_json)


@bench_app.command("scaling")
def bench_scaling(as_json: Annotated[bool, typer.Option("--json")] = False,
                  matches: Annotated[int, typer.Option(
                      help="Matches per setting.")] = 100) -> None:
    """Matches/s on one core at board radius 6, 9, 12, 15, at 2, 4, 6 seats, at each
    length and with a skill-1 seat; and how radius 15's cost compares with its tiles."""
    from sim.runner.bench import bench_scaling as run

    result = run(matches)
    if as_json:
        _print_bench(result, True)
        return
    typer.echo(f"{'setting':<18} {'tiles':>5} {'matches/s':>10} {'turns':>6} "
               f"{'µs/turn/tile':>13}")
    for name, row in result["cases"].items():
        typer.echo(f"{name:<18} {row['tiles']:>5} {row['matches_per_s']:>10} "
                   f"{row['mean_turns']:>6} {row['us_per_turn_per_tile']:>13}")
    typer.echo(f"radius_cost_vs_tiles: {result['radius_cost_vs_tiles']}")


@bench_app.command("sweep")
def bench_sweep(as_json: Annotated[bool, typer.Option("--json")] = False,
                matches: Annotated[int, typer.Option(help="Matches per variant (2 variants).")]
                = 5000,
                jobs: Annotated[int, typer.Option(help="Workers.")] = 2,
                rounds: Annotated[int, typer.Option(
                    help="Times the sweep is timed on fresh workers (medians reported).",
                    min=1)] = 3) -> None:
    """Sweep throughput with Parquet writing, and parallel efficiency against 1 worker."""
    from sim.runner.bench import bench_sweep as run

    result = run(matches, jobs, rounds=rounds)
    _print_bench(result, as_json)


@bench_app.command("territory")
def bench_territory(as_json: Annotated[bool, typer.Option("--json")] = False,
                    positions: Annotated[int, typer.Option(help="Positions to time.",
                                                           min=1)] = 200)\
        -> None:
    """Time territory+score for the plain reference and the kernel on the same positions."""
    from sim.runner.bench import bench_territory as run

    result = run(positions)
    _print_bench(result, as_json)


@bench_app.command("report")
def bench_report(run_dir: Annotated[Path, typer.Argument(help="Run folder of a sweep.")],
                 as_json: Annotated[bool, typer.Option("--json")] = False,
                 out: Annotated[Path | None, typer.Option(
                     help="Keep the report here (default: a temporary file).")] = None) -> None:
    """Wall seconds and peak memory of one `sim report RUN_DIR` in a fresh process."""
    from sim.runner.bench import bench_report as run

    _print_bench(run(run_dir, out), as_json)


@app.command("demo")
def demo(out: Annotated[Path, typer.Option(help="Folder for the demo's files.")]
         = Path("reports/demo")) -> None:
    """A seeded map and an example scenario (a quick look without a sweep)."""
    from sim.rules.tables import REPO_ROOT

    out.mkdir(parents=True, exist_ok=True)
    map_cmd(seed=1, match=0, seats=None, out=out / "map-seed1.svg", tables=None, set_=None)
    example = REPO_ROOT / "experiments" / "scenarios" / "capital_fall.toml"
    typer.echo(f"\nscenario {example}:")
    scenario_cmd(example, as_json=False, tables=None)


@app.command("warm")
def warm_cmd() -> None:
    """Compile the engine once (a match and the scenario commands) into numba's cache,
    so the first real command starts in about a second. Says how long it will take
    first; does nothing costly when the cache is already filled."""
    import time

    from sim.engine.match import play_match
    from sim.engine.scenario import load_scenario, run_scenario
    from sim.jitcache import cache_dir, engine_cached
    from sim.rules.tables import REPO_ROOT, load_tables
    from sim.runner.sweep import after_cold_compile, compile_estimate

    cold = not engine_cached()
    if cold:
        estimate, basis = compile_estimate()
        typer.echo(f"compiling the engine: about {estimate:.0f} s ({basis}); cached in "
                   f"{cache_dir()}")
    t0 = time.perf_counter()
    tables = load_tables()
    play_match(tables, 1)
    example = REPO_ROOT / "experiments" / "scenarios" / "capital_fall.toml"
    run_scenario(load_scenario(example, tables.source), check=True)
    seconds = time.perf_counter() - t0
    typer.echo(f"engine {'compiled' if cold else 'loaded from the cache'} in {seconds:.1f} s "
               f"({cache_dir()})")
    if cold:
        after_cold_compile(seconds, typer.echo)


def _exit_on_signal(signum, _frame) -> None:
    """Ctrl-C or a TERM outside a sweep's own handling (sim.runner.sweep.stop_on_signals,
    which restores this one when the sweep ends): one line and the shell's exit status."""
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, signal.SIG_IGN)
    typer.echo(f"interrupted by {signal_name(signum)}", err=True)
    sys.exit(128 + signum)


def main() -> None:
    """The `sim` command. A signal that lands after the work is done, while the
    interpreter shuts down, is ignored: Python restores the default handlers then, and a
    finished sweep would otherwise die of the signal (exit -2) with its run complete."""
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, _exit_on_signal)
    try:
        app()
    except OSError as exc:
        if exc.filename is None:
            raise
        # a path of the user's that cannot be written or read (--out in /proc, a folder
        # where a file goes): one line, as for any other bad input
        typer.echo(f"{exc.filename}: cannot use this path ({exc.strerror or exc})", err=True)
        sys.exit(2)
    finally:
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, signal.SIG_IGN)


if __name__ == "__main__":
    main()

"""The `sim` command: tables check, map, scenario, bench, demo (and later match, sweep, report).

Bad input (a tables or scenario file with a problem) prints one clear message
per problem naming file, line and key, and exits with status 2; no traceback.
"""

from __future__ import annotations

import json
import sys
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


def _load_tables(path: Path | None, sets: list[str] | None):
    from sim.rules.tables import TablesError, load_tables, parse_overrides

    try:
        return load_tables(path, parse_overrides(sets or []))
    except TablesError as exc:
        _fail(exc.errors)


@tables_app.command("check")
def tables_check(file: Annotated[Path | None, typer.Argument(help="Tables file.")] = None,
                 set_: SetOpt = None) -> None:
    """Validate a tables file; print every problem as file:line: key: reason."""
    tables = _load_tables(file, set_)
    typer.echo(f"{tables.source}: ok (hash {tables.hash}; {len(tables.unit_names)} units, "
               f"{len(tables.building_names)} buildings, {len(tables.tech_names)} techs)")


@app.command("map")
def map_cmd(seed: Annotated[int, typer.Option(help="Root seed of the match.")] = 1,
            match: Annotated[int, typer.Option(help="Match index under the seed.")] = 0,
            seats: Annotated[int | None, typer.Option(help="Seats (default: tables).")] = None,
            out: Annotated[Path | None, typer.Option(help="Write the map as .svg or .png.")] = None,
            tables: TablesOpt = None, set_: SetOpt = None) -> None:
    """Draw a seeded map and print its opening territory and score."""
    from sim.engine.match import new_match

    t = _load_tables(tables, set_)
    if seats is not None and not 2 <= seats <= 6:
        _fail(f"--seats {seats}: a match has 2 to 6 seats")
    state, board = new_match(t, seed, match, seats)
    if out is not None:
        from sim.report.map import write_map

        if out.suffix.lower() not in (".svg", ".png"):
            _fail(f"{out}: the map is written as .svg or .png")
        out.parent.mkdir(parents=True, exist_ok=True)
        write_map(state, t, board, out)
        typer.echo(f"map written to {out}")
    _print_position(state, t, board, title=f"seed {seed}, match {match}")


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
              as_json: Annotated[bool, typer.Option("--json", help="Print the whole outcome "
                                                    "as JSON.")] = False) -> None:
    """Play one AI-vs-AI match and print its outcome."""
    from sim.engine.match import InvariantError, outcome, play_match

    t = _load_tables(tables, set_)
    if seats is not None and not 2 <= seats <= 6:
        _fail(f"--seats {seats}: a match has 2 to 6 seats")
    if length is not None and length not in t.model.match.lengths:
        _fail(f"--length {length}: choose one of {', '.join(t.model.match.lengths)}")
    if seed < 0 or match < 0:
        _fail("--seed and --match must be >= 0")
    names = personalities.split(",") if personalities else None
    for name in names or []:
        if name not in t.model.ai.personalities:
            _fail(f"--personalities: unknown personality {name!r}; known: "
                  f"{', '.join(t.personality_names)}")
    try:
        state, board, turn_log = play_match(t, seed, match, seats, length, check=check,
                                            personalities=names)
    except InvariantError as exc:
        _fail(f"invariant violated: {exc}")
    result = outcome(state, t, board, turn_log, seed, match)
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
              backend: Annotated[str, typer.Option(help="loky (this machine) or dask.")]
              = "loky",
              scheduler: Annotated[str | None, typer.Option(help="Dask scheduler address "
                                                            "(default: a local cluster).")]
              = None,
              out: Annotated[Path | None, typer.Option(help="Run folder (default: "
                                                       "runs/<experiment name>).")] = None,
              chunk_size: Annotated[int | None, typer.Option(help="Matches per chunk "
                                                             "(default: the experiment's).")]
              = None,
              quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
              replace_stale: Annotated[bool, typer.Option(
                  "--replace-stale", help="If --out holds a run of another experiment, code "
                  "or chunking, delete it and start afresh (default: refuse).")] = False,
              ) -> None:
    """Run an experiment's matches in parallel into Parquet tables; resumes a folder."""
    import os

    from sim.rules.tables import REPO_ROOT
    from sim.runner.experiments import ExperimentError, load_experiment
    from sim.runner.sweep import RunFolderMismatch, run_sweep

    try:
        experiment = load_experiment(file)
    except ExperimentError as exc:
        _fail(str(exc))
    if backend not in ("loky", "dask"):
        _fail(f"--backend {backend}: choose loky or dask")
    if chunk_size is not None and chunk_size < 1:
        _fail("--chunk-size must be >= 1")
    jobs = jobs or os.cpu_count() or 1
    out = out or REPO_ROOT / "runs" / experiment.spec.name
    if replace_stale and out.exists():
        from sim.runner.sweep import fingerprint_matches

        if not fingerprint_matches(experiment, out, chunk_size or experiment.spec.chunk_size):
            import shutil

            typer.echo(f"{out}: holds another run; starting afresh")
            shutil.rmtree(out)
    typer.echo(f"sweep {experiment.spec.name}: {len(experiment.variants)} variants x "
               f"{experiment.spec.matches} matches -> {out} ({jobs} workers, {backend})")
    try:
        result = run_sweep(experiment, out, jobs, backend, scheduler, chunk_size,
                           progress=not quiet)
    except RunFolderMismatch as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        typer.echo(f"interrupted; finished chunks are kept in {out}: run the same command "
                   "again to resume", err=True)
        raise typer.Exit(130) from None
    rate = f", {result['matches_per_s']} matches/s" if result["matches_per_s"] else ""
    typer.echo(f"done: {result['matches']} matches in {result['chunks']} chunks "
               f"({result['chunks_resumed']} already written), {result['errors']} failed, "
               f"{result['seconds']} s{rate}")
    if result["errors"]:
        typer.echo(f"{result['errors']} matches failed: see the errors table in {out}", err=True)
        raise typer.Exit(1)


@app.command("report")
def report_cmd(run_dir: Annotated[Path, typer.Argument(help="Run folder of a sweep.")],
               baseline: Annotated[str | None, typer.Option(help="Variant to compare "
                                                            "against (default: the "
                                                            "experiment's).")] = None,
               out: Annotated[Path | None, typer.Option(help="HTML file (default: "
                                                        "reports/<run name>.html).")] = None,
               ) -> None:
    """Write the self-contained HTML report of a sweep's run folder."""
    from sim.report.html import write_report
    from sim.rules.tables import REPO_ROOT

    if not (run_dir / "provenance.json").exists() or not (run_dir / "matches").exists():
        _fail(f"{run_dir}: not a sweep run folder (no provenance.json or matches table)")
    out = out or REPO_ROOT / "reports" / f"{run_dir.name}.html"
    try:
        path = write_report(run_dir, out, baseline)
    except ValueError as exc:
        _fail(str(exc))
    typer.echo(f"report written to {path}")


@app.command("replay-command")
def replay_command_cmd(run_dir: Annotated[Path, typer.Argument(help="Run folder.")],
                       match_id: Annotated[str, typer.Argument(help="variant:index")]) -> None:
    """Print the one command that replays a match of a sweep."""
    import polars as pl

    from sim.outputs.store import scan

    for table in ("matches", "errors"):
        if not (run_dir / table).exists():
            continue
        rows = scan(run_dir, table).filter(pl.col("match_id") == match_id).select(
            "replay").collect()
        if rows.height:
            typer.echo(rows["replay"][0])
            return
    _fail(f"{run_dir}: no match {match_id!r} (ids look like baseline:12)")


def _print_bench(result: dict, as_json: bool) -> None:
    """A benchmark's figures as one JSON object, or one `key: value` line each."""
    if as_json:
        typer.echo(json.dumps(result))
        return
    for k, v in result.items():
        typer.echo(f"{k}: {v}")


@bench_app.command("match")
def bench_match(as_json: Annotated[bool, typer.Option("--json")] = False,
                matches: Annotated[int, typer.Option(help="Standard matches to time.")] = 300)\
        -> None:
    """Matches per second on one core, and the engine's cold and warm start times."""
    from sim.runner.bench import bench_match as run

    result = run(matches)
    _print_bench(result, as_json)


@bench_app.command("sweep")
def bench_sweep(as_json: Annotated[bool, typer.Option("--json")] = False,
                matches: Annotated[int, typer.Option(help="Matches per variant (2 variants).")]
                = 5000,
                jobs: Annotated[int, typer.Option(help="Workers.")] = 2) -> None:
    """Sweep throughput with Parquet writing, and parallel efficiency against 1 worker."""
    from sim.runner.bench import bench_sweep as run

    result = run(matches, jobs, single_worker_matches=max(50, min(500, matches // 10)))
    _print_bench(result, as_json)


@bench_app.command("territory")
def bench_territory(as_json: Annotated[bool, typer.Option("--json")] = False,
                    positions: Annotated[int, typer.Option(help="Positions to time.")] = 200)\
        -> None:
    """Time territory+score for the plain reference and the kernel on the same positions."""
    from sim.runner.bench import bench_territory as run

    result = run(positions)
    _print_bench(result, as_json)


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


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()

"""`sim ladder`: every pair of a ladder file's agents played on common seeds, both seat
orders, through the sweep's runner; then the win-rate matrix, the ratings and whether
the ladder is monotone (sim.runner.ladder, sim.analysis.ladder)."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer

from sim.cli.common import app, check_run_options, fail
from sim.outputs.storage import absolute, run_path
from sim.runner.pool import keep_freed_memory, shared_pool


@app.command("ladder")
def ladder_cmd(file: Annotated[Path, typer.Argument(help="Ladder TOML file (a [ladder] "
                                                    "section: agents, seats, matches, "
                                                    "seed, length).")],
               jobs: Annotated[int | None, typer.Option(help="Parallel workers (default: "
                                                        "all cores).")] = None,
               out: Annotated[str | None, typer.Option(help="Run folder (default: "
                                                       "runs/<name>).")] = None,
               quiet: Annotated[bool, typer.Option("--quiet", help="No progress.")] = False,
               replace_stale: Annotated[bool, typer.Option(
                   "--replace-stale", help="If --out holds another run, delete it and "
                   "start afresh (default: refuse).")] = False,
               ) -> None:
    """Play a ladder: every pair of agents, both seat orders, on the same seeds; print
    the win-rate matrix with Wilson intervals, a rating per agent and the verdict.

    Exit status: 0 played and read; 1 some matches failed; 2 bad input; 130/143
    interrupted (run the same command to resume)."""
    keep_freed_memory()
    check_run_options("local", jobs, None, ("local",))
    jobs = jobs or os.cpu_count() or 1
    from sim.rules.tables import REPO_ROOT  # lazy: 0.20 s
    from sim.runner.experiments import ExperimentError
    from sim.runner.ladder import ladder_experiment

    try:
        ladder, experiment = ladder_experiment(file)
    except ExperimentError as exc:
        fail(str(exc))
    folder = absolute(run_path(out or REPO_ROOT / "runs" / experiment.spec.name))
    command = shlex.join(["sim", *sys.argv[1:]]) if sys.argv[1:2] == ["ladder"] else \
        f"sim ladder {shlex.quote(str(file))} --out {shlex.quote(str(folder))}"
    pairs = len(experiment.variants) // 2
    typer.echo(f"ladder {experiment.spec.name}: {len(ladder.agents)} agents, {pairs} pairs x "
               f"2 seat orders x {ladder.matches} matches, {ladder.seats} seats -> {folder} "
               f"({jobs} workers)")
    from sim.cli.sweep import _sweep

    with shared_pool(jobs, "local", None) as pool:
        _sweep(experiment, folder, command, jobs, "local", None, None, quiet, replace_stale,
               False, pool)
    print_ladder(folder)


def print_ladder(folder: Path) -> None:
    """The ladder's matrix, ratings and verdict of a finished ladder run."""
    import json

    from sim.analysis.ladder import read_ladder
    from sim.analysis.load import read_table

    # the matches table alone: the events and turns of a large ladder fill the memory
    provenance = json.loads((folder / "provenance.json").read_text(encoding="utf-8"))
    read = read_ladder(read_table(folder, "matches"), provenance)
    if read is None:
        fail(f"{folder}: not a ladder run")
    typer.echo("\nhead-to-head: row agent's share of the decided matches against the "
               "column agent [95 % Wilson]")
    agents, matrix = read["agents"], read["matrix"]
    width = max(len(a) for a in agents)
    cell = 22
    typer.echo(" " * (width + 2) + "".join(f"{a:>{cell}}" for a in agents))
    for a in agents:
        cells = []
        for b in agents:
            hit = matrix.filter((matrix["agent"] == a) & (matrix["opponent"] == b))
            if a == b or hit.height == 0 or hit["share"][0] is None:
                cells.append(f"{'–':>{cell}}")
                continue
            r = hit.row(0, named=True)
            cells.append(f"{100 * r['share']:.1f} [{100 * r['lo']:.1f}, {100 * r['hi']:.1f}]"
                         .rjust(cell))
        typer.echo(f"  {a:<{width}}" + "".join(cells))
    draws = int(matrix["draws"].sum()) // 2
    n = read["games"].height
    typer.echo(f"({n} matches, {draws} without a winner)")
    typer.echo(f"\nrating ({read['rating_name']}, 95 % interval):")
    for r in read["ratings"].iter_rows(named=True):
        typer.echo(f"  {r['agent']:<{width}}  {r['rating']:+.2f} [{r['lo']:+.2f}, "
                   f"{r['hi']:+.2f}]")
    typer.echo("\nsteps (upper rung over the one below):")
    for r in read["steps"].iter_rows(named=True):
        typer.echo(f"  {r['upper']} over {r['lower']}: {r['wins']} of {r['decided']} = "
                   f"{100 * r['share']:.1f} % [{100 * r['lo']:.1f}, {100 * r['hi']:.1f}]"
                   f"{'' if r['beats'] else '  (not significant)'}")
    typer.echo(f"verdict: {read['verdict']}")

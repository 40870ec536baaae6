"""`sim bench`: the benchmarks, each printing its figures (sim.runner.bench)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from sim.cli.common import bench_app, fail


def _print_bench(result: dict, as_json: bool) -> None:
    """A benchmark's figures as one JSON object, or one `key: value` line each."""
    if as_json:
        typer.echo(json.dumps(result))
        return
    for k, v in result.items():
        typer.echo(f"{k}: {v}")


@bench_app.command("match")
def bench_match(as_json: Annotated[bool, typer.Option("--json")] = False,
                matches: Annotated[int | None, typer.Option(
                    help="Matches to time (default: 300 hex, 2000 Crown).", min=1)] = None,
                game: Annotated[str, typer.Option(
                    help="The game: hex (the 4X game) or crown (issue 48: every player "
                         "at --skill, 10 rounds x 3 waves x 6 players).")] = "hex",
                skill: Annotated[int, typer.Option(
                    help="Also time the same matches with seat 0 at this AI skill "
                         "(1: lookahead, 2: search) and print the cost ratio.")] = 0,
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
    the time goes. With --game crown: Crown matches per second per core."""
    from sim.outputs.games import GAME_NAMES, game_of  # the game interface

    try:
        chosen = game_of(game)
    except KeyError:
        raise typer.BadParameter(" or ".join(GAME_NAMES), param_hint="--game") from None
    if skill not in chosen.ai_levels:
        raise typer.BadParameter(f"one of {', '.join(map(str, chosen.ai_levels))}",
                                 param_hint="--skill")
    result = chosen.bench_match(matches, skill, cold_start, phases)
    if "phases" in result and not as_json:
        table = result.pop("phases")
        _print_bench(result, False)
        for name, cell in table.items():
            typer.echo(f"  {name:<24} {cell['ms']:8.3f} ms  {cell['share_pct']:5.1f} %")
        return
    _print_bench(result, as_json)


@bench_app.command("ai")
def bench_ai(as_json: Annotated[bool, typer.Option("--json")] = False,
             matches: Annotated[int, typer.Option(
                 help="Matches per setting without a skill-2 seat.", min=1)] = 60,
             search_matches: Annotated[int, typer.Option(
                 help="Matches per setting with a skill-2 seat (the costliest).",
                 min=1)] = 4) -> None:
    """Matches/s on one core with every seat at each AI skill level (D11), and with seat
    0 alone at skill 1 and 2, each with its cost ratio to every seat at skill 0."""
    from sim.runner.bench import bench_ai as run

    result = run(matches, search_matches)
    if as_json:
        _print_bench(result, True)
        return
    typer.echo(f"{'setting':<20} {'matches':>7} {'s/match':>8} {'matches/s':>10} "
               f"{'turns':>6} {'cost ratio':>10}")
    for name, row in result["cases"].items():
        typer.echo(f"{name:<20} {row['matches']:>7} {row['s_per_match']:>8} "
                   f"{row['matches_per_s']:>10} {row['mean_turns']:>6} "
                   f"{row['cost_ratio']:>10}")
    typer.echo(f"note: {result['note']}")


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


@bench_app.command("scale")
def bench_scale(as_json: Annotated[bool, typer.Option("--json")] = False,
                matches: Annotated[int, typer.Option(help="Matches per variant (2 variants).",
                                                     min=1)] = 200,
                chunk_size: Annotated[int, typer.Option(help="Matches per chunk.", min=1)]
                = 25,
                s3: Annotated[str | None, typer.Option(
                    help="An S3 prefix to sweep into (default: a moto server started on "
                         "127.0.0.1; needs moto[server]).")] = None,
                machines: Annotated[int, typer.Option(help="Machines to project for.")]
                = 100,
                cores: Annotated[int, typer.Option(help="Cores per machine.")] = 32,
                ) -> None:
    """Matches/s and efficiency with 1 and 2 local workers and a local Dask cluster
    writing to S3, a chunk's costs besides its matches, and the projection they give
    for MACHINES x CORES (docs/scale-out.md)."""
    from sim.runner.bench_scale import bench_scale as run

    _print_bench(run(matches, chunk_size, s3, machines, cores), as_json)


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
def bench_report(run_dirs: Annotated[list[str], typer.Argument(
                     help="Run folder(s) of a sweep, or their URLs: with two, e.g. a "
                          "10,000- and a 100,000-match run, also how the peak grows.")],
                 as_json: Annotated[bool, typer.Option("--json")] = False,
                 out: Annotated[Path | None, typer.Option(
                     help="Keep the report here (one run only; default: a temporary "
                          "file).")] = None) -> None:
    """Wall seconds and peak memory of `sim report RUN_DIR` in a fresh process, for
    each run given; with several, the largest run's peak over the smallest's."""
    from sim.runner.bench import bench_reports as run

    if out is not None and len(run_dirs) > 1:
        fail("--out keeps the report of one run: give one RUN_DIR")
    _print_bench(run(run_dirs, out), as_json)

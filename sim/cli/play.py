"""One match and the tables: `sim tables check`, `sim map`, `sim scenario` and
`sim match`, with the tables they print (territory and score, the starts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from sim.cli.common import (
    LengthOpt,
    PersonalitiesOpt,
    SeatsOpt,
    SetOpt,
    TablesOpt,
    app,
    check_board,
    fail,
    load_tables,
    match_options,
    tables_app,
)


@tables_app.command("check")
def tables_check(file: Annotated[Path | None, typer.Argument(help="Tables file.")] = None,
                 set_: SetOpt = None) -> None:
    """Validate a tables file; print every problem as file:line: key: reason."""
    tables = load_tables(file, set_)
    check_board(tables)
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
    from sim.engine.match import new_match  # lazy: 0.70 s (numba, the engine)

    t = load_tables(tables, set_)
    match_options(t, seed, match, seats, length, None)
    state, board = new_match(t, seed, match, seats, length)
    if out is not None:
        from sim.report.map import write_map  # lazy: 0.46 s

        if out.suffix.lower() not in (".svg", ".png"):
            fail(f"{out}: the map is written as .svg or .png")
        out.parent.mkdir(parents=True, exist_ok=True)
        n_seats = int(state.n_seats[0])
        preset = length or t.model.match.length
        write_map(state, t, board, out, title=f"seed {seed}, match {match}: {n_seats} seats, "
                  f"{preset}, opening position (tables {t.hash})")
        typer.echo(f"map written to {out}")
    print_position(state, t, board, title=f"seed {seed}, match {match}")
    _print_starts(state, t, board)


def _print_starts(state, tables, board) -> None:
    """D1: how even the starts are, by the figures map generation balanced them on."""
    from sim.engine.report import start_balance  # lazy: 0.58 s (numba, the engine)

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


def print_position(state, tables, board, title: str) -> None:
    from sim.engine.report import state_report  # lazy: 0.58 s (numba, the engine)

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
                 tables: TablesOpt = None,
                 game: Annotated[str, typer.Option(
                     help="The game: hex, or crown (docs/crown-scenarios.md).")] = "hex",
                 ) -> None:
    """Apply a scenario's commands and print the resulting state (SCENARIOS.md; with
    --game crown, docs/crown-scenarios.md)."""
    from sim.outputs.games import GAME_NAMES, game_of  # the game interface

    try:
        chosen = game_of(game)
    except KeyError:
        fail(f"--game: {' or '.join(GAME_NAMES)}, got {game!r}")
    chosen.run_scenario(file, as_json, tables)


def hex_scenario(file: Path, as_json: bool, tables: Path | None) -> None:
    """The hex game's Game.scenario_runner (`sim scenario`): the position after the
    scenario's commands, each command's result and the events, or the JSON report."""
    # lazy: 0.59 s (numba, the engine)
    from sim.engine.scenario import ScenarioError, load_scenario, run_scenario

    try:
        scn = load_scenario(file, tables)
    except ScenarioError as exc:
        fail(str(exc))
    report = run_scenario(scn, check=False)
    if as_json:
        typer.echo(json.dumps(report, indent=1))
        return
    print_position(scn.state, scn.tables, scn.board, title=f"{file} after its commands")
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


def crown_scenario(file: Path, as_json: bool, tables: Path | None) -> None:
    """Crown's Game.scenario_runner (`sim scenario --game crown`): the Crown scenario's
    report as JSON, or a summary."""
    from sim.engine.crown_scenario import (
        CrownScenarioError,
        load_crown_scenario,
        run_crown_scenario,
    )

    try:
        scn = load_crown_scenario(file, tables)
    except CrownScenarioError as exc:
        fail(str(exc).splitlines())
    report = run_crown_scenario(scn)
    if as_json:
        typer.echo(json.dumps(report, indent=1))
        return
    typer.echo(f"{file} after its commands: round {report['round']}, wave {report['wave']}")
    for z in report["zones"]:
        if z["side"]:
            typer.echo(f"  {z['zone']:<4} {z['side']} x{z['tokens']}")
    for s in report["sides"]:
        typer.echo(f"  side {s['side']}: total {s['total']}, {s['zones']} zones, this "
                   f"round's score {s['round_score']}")
    for cmd in report["commands"]:
        mark = "ok " if cmd["ok"] else "REFUSED"
        typer.echo(f"  [{cmd['index']}] {cmd['do']:<11} {mark} {cmd['error'] or ''}")


@app.command("match")
def match_cmd(seed: Annotated[int, typer.Option(help="Root seed.")] = 1,
              match: Annotated[int, typer.Option("--match", help="Match index under the seed.")]
              = 0,
              tables: TablesOpt = None, set_: SetOpt = None,
              seats: SeatsOpt = None, length: LengthOpt = None,
              personalities: PersonalitiesOpt = None,
              check: Annotated[bool, typer.Option("--check", help="Run the invariant checker "
                                                  "after every turn.")] = False,
              seat_ai: Annotated[str | None, typer.Option(
                  "--seat-ai", help='Per-seat AI settings as JSON, seat index first, e.g. '
                  '\'[{"forbid":["observatory"]},{}]\' (an experiment\'s seat_ai).')] = None,
              as_json: Annotated[bool, typer.Option("--json", help="Print the whole outcome "
                                                    "as JSON.")] = False) -> None:
    """Play one AI-vs-AI match and print its outcome."""
    # lazy: 0.70 s (numba, the engine)
    from sim.engine.match import InvariantError, outcome, play_match

    t = load_tables(tables, set_)
    names = match_options(t, seed, match, seats, length, personalities)
    settings = _seat_ai(t, seat_ai, seats) if seat_ai is not None else None
    try:
        state, board, turn_log = play_match(t, seed, match, seats, length, check=check,
                                            personalities=names, seat_ai=settings)
    except InvariantError as exc:
        fail(f"invariant violated: {exc}")
    result = outcome(state, t, board, turn_log, seed, match)
    if result["events_dropped"]:
        typer.echo(f"warning: the event log was full: {result['events_dropped']} events were "
                   "counted but not stored (sim.world.state.Capacity.events)", err=True)
    if as_json:
        typer.echo(json.dumps(result, sort_keys=True))
        return
    typer.echo(f"seed {seed} match {match} (tables {t.hash}): seat {result['winner']} wins by "
               f"{result['victory']} on turn {result['end_turn']}")
    print_position(state, t, board, title=f"seed {seed}, end of match")


def _seat_ai(tables, text: str, seats: int | None):
    """--seat-ai checked against the tables, or exit 2 naming what is wrong."""
    from sim.engine.seat_ai import SeatAIError, check_seat_ai  # lazy: 0.20 s

    try:
        return check_seat_ai(tables, json.loads(text), seats or tables.model.match.seats)
    except (ValueError, TypeError) as exc:  # SeatAIError, or JSON that is not a list
        reason = str(exc) if isinstance(exc, SeatAIError) else f"not a JSON list ({exc})"
        fail(f"--seat-ai: {reason}")

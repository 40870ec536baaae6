"""`sim replay`: one match, of a sweep or on its own, into the HTML replay viewer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from sim.cli.common import (
    LengthOpt,
    PersonalitiesOpt,
    SeatsOpt,
    SetOpt,
    TablesOpt,
    app,
    fail,
    load_tables,
    match_options,
)


@app.command("replay")
def replay_cmd(run_dir: Annotated[str | None, typer.Argument(
                   help="Run folder of a sweep, or its URL (with MATCH_ID); or give --seed "
                        "instead.")]
               = None,
               match_id: Annotated[str | None, typer.Argument(help="variant:index")] = None,
               seed: Annotated[int | None, typer.Option(help="Root seed of a single match "
                                                        "(instead of RUN_DIR MATCH_ID).")]
               = None,
               match: Annotated[int, typer.Option("--match", help="Match index under the "
                                                  "seed.")] = 0,
               tables: TablesOpt = None, set_: SetOpt = None,
               seats: SeatsOpt = None, length: LengthOpt = None,
               personalities: PersonalitiesOpt = None,
               out: Annotated[Path | None, typer.Option(help="HTML file (default: "
                                                        "reports/replay-<match>.html).")]
               = None,
               as_json: Annotated[bool, typer.Option("--json", help="A Crown match: its "
                                                     "transcript as JSON (rounds and "
                                                     "events).")] = False,
               ) -> None:
    """Replay one match turn by turn into a self-contained HTML viewer (board per turn,
    slider, score and dominance per seat, event timeline; opens offline).

    RUN_DIR MATCH_ID replays a match of a sweep with the run's own tables (from its
    provenance), seed, seats, length and personalities, and checks that it ends as the
    run's `matches` row says (exit 1 if not). --seed N [--match I ...] replays a single
    match as `sim match` plays it. A match of a Crown run prints its round-by-round
    transcript instead (--json: rounds and every event), after the same check. Exit 2
    on bad input."""
    from sim.report.replay import write_replay  # lazy: 0.51 s
    from sim.rules.tables import REPO_ROOT  # lazy: 0.20 s

    single = {"--seed": seed is not None, "--match": match != 0, "--tables": tables is not None,
              "--set": bool(set_), "--seats": seats is not None, "--length": length is not None,
              "--personalities": personalities is not None}
    if run_dir is not None and _transcript(run_dir, match_id, single, as_json):
        return
    if as_json:
        fail("--json: a hex match replays into the HTML viewer; --json is for a match of "
             "a Crown run")
    if run_dir is not None:
        from sim.outputs.storage import run_path

        recording, name = _sweep_recording(run_path(run_dir), match_id, single)
    elif seed is None:
        fail("sim replay: give RUN_DIR MATCH_ID (a match of a sweep) or --seed N "
             "(a single match)")
    else:
        t = load_tables(tables, set_)
        names = match_options(t, seed, match, seats, length, personalities)
        recording = _single_recording(t, seed, match, seats, length, names)
        name = f"seed{seed}-match{match}"
    out = out or REPO_ROOT / "reports" / f"replay-{name}.html"
    path = write_replay(recording, out)
    meta = recording["meta"]
    result = f"seat {meta['winner']} wins by {meta['victory']} on turn {meta['end_turn']}" \
        if meta["winner"] is not None else f"no winner on turn {meta['end_turn']}"
    typer.echo(f"replay written to {path.absolute()} ({len(recording['frames']['turn'])} "
               f"frames, {path.stat().st_size / 1e6:.2f} MB): {result}")


def _sweep_recording(run_dir: Path, match_id: str | None, single: dict[str, bool]):
    """The recording of a sweep's match and its name; exit 2 on bad input, 1 when the
    replay ends otherwise than the run's row says."""
    # lazy: 0.68 s (numba, the engine)
    from sim.runner.replay import ReplayError, record_sweep_match, sweep_match

    if match_id is None:
        fail(f"sim replay {run_dir}: give the MATCH_ID too (variant:index, as in the "
             "run's matches table)")
    given = [name for name, on in single.items() if on]
    if given:
        fail(f"{', '.join(given)}: a sweep's match replays with the run's own settings; "
             "these options are for a single match (sim replay --seed N ...)")
    try:
        found = sweep_match(run_dir, match_id)
    except ReplayError as exc:
        fail(str(exc))
    try:
        recording = record_sweep_match(found)
    except ReplayError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(1) from None
    return recording, f"{found.variant}-{found.match_index}"


def _transcript(run_dir: str, match_id: str | None, single: dict[str, bool],
                as_json: bool) -> bool:
    """A match of a run whose game replays matches itself (Crown: Game.match_replay):
    printed (text or JSON) after the check against the run's row, and True; False for
    a run of the hex game (the HTML viewer). Exit 2 on bad input, 1 on a mismatch."""
    from sim.outputs.storage import run_path
    from sim.runner.replay import ReplayError, ReplayMismatch, replay_transcript, run_game

    folder = run_path(run_dir)
    try:
        if run_game(folder).match_replay is None:
            return False
    except ReplayError as exc:
        fail(str(exc))
    given = [name for name, on in single.items() if on]
    if match_id is None or given:
        fail(f"sim replay {run_dir}: give the MATCH_ID (variant:index) and none of "
             f"{', '.join(given) or 'the single-match options'}")
    try:
        found = replay_transcript(folder, match_id)
    except ReplayMismatch as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(1) from None
    except ReplayError as exc:
        fail(str(exc))
    typer.echo(json.dumps(found, indent=1) if as_json else transcript_text(found))
    return True


def transcript_text(found: dict) -> str:
    """A Crown match's transcript as lines: the outcome, then a line per round."""
    row = found["row"]
    head = (f"{found['match_id']} of {found['run']} (seed {row['seed']}, "
            f"{row['team_a']} v {row['team_b']}, skills {row['skill_a']}/{row['skill_b']}): "
            + (f"side {row['winner']} wins" if row["winner"] != "draw" else "a draw")
            + f" {row['total_a']}–{row['total_b']} by {row['decided_by']}; "
            "replayed bit for bit (the run's row)")
    lines = [head, "round  points A  points B  total A  total B  zones A  zones B"]
    lines += [f"{r['round']:>5}  {r['points_a']:>8}  {r['points_b']:>8}  {r['total_a']:>7}  "
              f"{r['total_b']:>7}  {r['zones_a']:>7}  {r['zones_b']:>7}"
              for r in found["rounds"]]
    return "\n".join(lines)


def _single_recording(tables, seed: int, match: int, seats: int | None, length: str | None,
                      names: list[str] | None):
    """The recording of a single match, as `sim match` plays it; exit 2 when its map
    cannot be made."""
    from sim.engine.match import MapError  # lazy: 0.70 s (numba, the engine)
    from sim.engine.replay import record_match

    try:
        return record_match(tables, seed, match, seats, length, names)
    except MapError as exc:
        fail(str(exc))

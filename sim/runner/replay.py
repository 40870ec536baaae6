"""A match of a sweep, found in its run folder and recorded again for the replay viewer.

`sweep_match` reads what `sim replay RUN_DIR MATCH_ID` needs from the run folder
alone: the variant's resolved tables as provenance.json froze them when the sweep
started (so an edit to the tables file since cannot change the match), the root seed,
seats and length preset of the run, and the match's own row (its personalities and
outcome). `record_sweep_match` plays it with recording on (sim.engine.replay) and
checks that the replay ends as the run's row says.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim.engine.replay import record_match
from sim.outputs.games import game_of_run
from sim.outputs.store import RunError, find_match
from sim.rules.tables import Tables, TablesError


class ReplayError(Exception):
    """The match cannot be replayed, or its replay differs from the run (one line)."""


class ReplayMismatch(ReplayError):
    """The replay of a match differs from the run's row (the engine changed since)."""


@dataclass(frozen=True)
class SweepMatch:
    """Everything that replays one match of a sweep, and what the run recorded of it.

    expected: the run's winner, victory and end_turn (its `matches` row)."""

    run_dir: Path
    match_id: str
    variant: str
    tables: Tables
    seed: int
    match_index: int
    seats: int
    length: str | None
    personalities: list[str] | None
    expected: dict[str, Any]
    seat_ai: list[dict[str, Any]] | None
    code_commit: str | None


def _played_match(run_dir: Path, match_id: str, show_failure: bool
                  ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], Tables]:
    """Match `match_id`'s `matches` row in the run, the run's provenance, the row's
    variant (its provenance entry) and that variant's rebuilt tables (variant_tables).
    ReplayError (one line) when it is not there or failed in the run; show_failure adds
    the `errors` row's command that makes it fail again (a hex run's rows carry one)."""
    try:
        found = find_match(run_dir, match_id)
    except RunError as exc:
        raise ReplayError(str(exc)) from None
    row, prov = found.row, found.provenance
    if found.table == "errors":
        again = f"; to see it fail: {row['replay']}" if show_failure else ""
        raise ReplayError(f"{run_dir}: match {match_id} failed in the run, so it has no "
                          f"outcome to replay ({row['message']}){again}")
    variant = next(v for v in prov["variants"] if v["id"] == found.chunk.variant)
    return row, prov, variant, variant_tables(run_dir, prov, variant)


def sweep_match(run_dir: Path, match_id: str) -> SweepMatch:
    """Match `match_id` of the run in `run_dir`, ready to replay; ReplayError (one line)
    when it is not there, failed in the run, or its tables cannot be rebuilt."""
    row, prov, variant, tables = _played_match(run_dir, match_id, show_failure=True)
    names = row["personalities"].split(",") if row["personalities"] else None
    return SweepMatch(run_dir=run_dir, match_id=match_id, variant=variant["id"], tables=tables,
                      seed=int(row["seed"]), match_index=int(row["match_index"]),
                      seats=int(row["seats"]), length=prov.get("length"),
                      personalities=names,
                      expected={k: row[k] for k in ("winner", "victory", "end_turn")},
                      seat_ai=variant.get("seat_ai") or None,
                      code_commit=prov.get("code_version", {}).get("commit"))


def variant_tables(run_dir: Path, prov: dict[str, Any], variant: dict[str, Any]) -> Tables:
    """The variant's tables as the sweep resolved them (provenance.json keeps them
    whole), checked against the variant's tables hash. A provenance without them (an
    older run) falls back to the tables file and the overrides, hash-checked too."""
    source = f"{run_dir / 'provenance.json'}: variant {variant['id']}"
    resolved = variant.get("tables")
    try:
        game = game_of_run(prov)  # whose tables (sim.outputs.games)
        if resolved:
            tables = game.rebuild(resolved, source, dict(variant.get("overrides") or {}))
        else:
            tables = game.load(Path(prov["tables_path"]), variant.get("overrides") or {})
    except TablesError as exc:
        raise ReplayError(f"{source}: its tables do not load: {exc.errors[0]}") from None
    except ValueError as exc:  # pydantic's ValidationError: a schema change since the run
        first = str(exc).splitlines()[0]
        raise ReplayError(f"{source}: its tables no longer validate ({first}); the code "
                          "changed since the run") from None
    if tables.hash != variant["tables_hash"]:
        raise ReplayError(f"{source}: the rebuilt tables hash {tables.hash}, the run's "
                          f"{variant['tables_hash']}; the replay would play another match")
    return tables


def record_sweep_match(match: SweepMatch) -> dict[str, Any]:
    """Record the match (sim.engine.replay.record_match) and check that it ends as the
    run recorded: ReplayError naming both outcomes when winner, victory or end turn
    differ. The recording's meta gains match_id, variant and run."""
    recording = record_match(match.tables, match.seed, match.match_index, match.seats,
                             match.length, match.personalities, match.seat_ai)
    meta = recording["meta"]
    got = {k: meta[k] for k in ("winner", "victory", "end_turn")}
    if got != match.expected:
        commit = f" (the run was made by commit {match.code_commit[:12]})" \
            if match.code_commit else ""
        raise ReplayError(f"{match.run_dir}: the replay of {match.match_id} differs from the "
                          f"run: {_says(got)} instead of {_says(match.expected)}; the engine "
                          f"changed since the run{commit}")
    meta.update(match_id=match.match_id, variant=match.variant, run=str(match.run_dir))
    return recording


def _says(outcome: dict[str, Any]) -> str:
    return f"seat {outcome['winner']} wins by {outcome['victory']} on turn {outcome['end_turn']}"


def run_game(run_dir: Path):
    """The game that wrote the run in `run_dir` (sim.outputs.games; from its provenance):
    whether `sim replay` draws the HTML viewer (match_replay None) or a transcript."""
    from sim.outputs.store import read_provenance

    try:
        return game_of_run(read_provenance(run_dir))
    except RunError as exc:
        raise ReplayError(str(exc)) from None


def replay_transcript(run_dir: Path, match_id: str) -> dict[str, Any]:
    """Match `match_id` of a run whose game replays matches itself (Game.match_replay),
    played again from the run's provenance (the variant's resolved tables, hash-checked,
    and its settings) and the row's seed: {match_id, variant, run, game, row, rounds,
    events}. ReplayError when the match is not there or failed in the run, and when the
    replayed `matches` row differs from the run's in any column (naming them)."""
    row, prov, variant, tables = _played_match(run_dir, match_id, show_failure=False)
    game = game_of_run(prov)
    got = game.replayer()(tables, int(row["seed"]), int(row["match_index"]), variant)
    differs = [k for k, v in got["row"].items() if row.get(k) != v]
    if differs:
        commit = (prov.get("code_version") or {}).get("commit")
        since = f" (the run was made by commit {commit[:12]})" if commit else ""
        shown = ", ".join(f"{k} {got['row'][k]!r} instead of {row.get(k)!r}"
                          for k in differs[:4])
        raise ReplayMismatch(f"{run_dir}: the replay of {row['match_id']} differs from the run: "
                          f"{shown}; the engine changed since the run{since}")
    return {"match_id": row["match_id"], "variant": variant["id"], "run": str(run_dir),
            "game": game.name, **got}

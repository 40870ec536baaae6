"""Playing a chunk of a sweep: its matches, one after another, into outcome rows.

A chunk (ChunkSpec) is a loop over match indices, each match a whole compiled
game; `play_chunk` returns the chunk's typed frames (sim.outputs.schemas schemas) and a
small summary. A match that raises becomes a row of the `errors` table; the chunk
goes on. Results depend only on (tables, root seed, match index, seats, length,
personalities), never on worker count, backend or chunk size. Writing, resume
and parallelism live in sim.runner.sweep (the outputs layer).
"""

from __future__ import annotations

import json
import shlex
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from sim.engine.match import outcome, play_match
from sim.outputs.schemas import MATCH_KEYS, SCHEMAS, SORT_KEYS, TABLES
from sim.rules.codes import OWNER_NAMES
from sim.rules.tables import Tables
from sim.runner.experiments import ChunkSpec, Experiment


@dataclass(frozen=True)
class RunSettings:
    """What a worker needs to play a chunk besides the variant's tables; plain data so
    it pickles to any backend. Paths are absolute: a Dask worker's working directory
    is not the parent's."""

    out: str
    tables_path: str
    overrides_by_variant: dict[str, dict[str, Any]]
    root_seed: int
    seats: int
    length: str | None
    personalities: tuple[str, ...]
    rotate: bool
    run_id: str | None = None  # provenance.json's: proves a worker sees the run's folder
    # variant -> its seat_ai (seat index -> {"skill", "forbid"}); absent: the defaults
    seat_ai_by_variant: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def replay_command(settings: RunSettings, variant: str, match_index: int,
                   personalities: list[str]) -> str:
    """The one command that replays a match of the sweep."""
    parts = ["sim", "match", "--seed", str(settings.root_seed), "--match", str(match_index),
             "--tables", settings.tables_path, "--seats", str(settings.seats)]
    if settings.length:
        parts += ["--length", settings.length]
    if personalities:
        parts += ["--personalities", ",".join(personalities)]
    for key, value in sorted(settings.overrides_by_variant[variant].items()):
        parts += ["--set", f"{key}={json.dumps(value)}"]
    seat_ai = settings.seat_ai_by_variant.get(variant)
    if seat_ai:
        parts += ["--seat-ai", json.dumps(seat_ai, separators=(",", ":"))]
    return shlex.join(parts)


def personalities_for(settings: RunSettings, match_index: int) -> list[str]:
    base = list(settings.personalities)
    if not base:
        return []
    shift = match_index if settings.rotate else 0
    return [base[(s + shift) % len(base)] for s in range(settings.seats)]


def play_chunk(settings: RunSettings, spec: ChunkSpec, tables: Tables, play=None,
               ) -> tuple[dict[str, pl.DataFrame], dict[str, Any]]:
    """Play the matches of one chunk with the variant's resolved `tables` (fixed by the
    parent when the sweep started): (frames per table, summary).
    `play` replaces sim.engine.match.play_match in tests."""
    play = play or play_match
    t0 = time.perf_counter()
    cols = {name: empty_columns(name) for name in TABLES}
    failed = 0
    for i in range(spec.start, spec.stop):
        pers = personalities_for(settings, i)
        match_id = f"{spec.variant}:{i}"
        replay = replay_command(settings, spec.variant, i, pers)
        try:
            seat_ai = settings.seat_ai_by_variant.get(spec.variant)
            st, board, log = play(tables, settings.root_seed, i, settings.seats,
                                  settings.length, personalities=pers or None,
                                  **({"seat_ai": seat_ai} if seat_ai else {}))
            result = outcome(st, tables, board, log, settings.root_seed, i)
            add_match(cols, result, match_id, replay, pers)
        except Exception as exc:  # a failing match is a row, not the end of the sweep
            failed += 1
            add_error(cols, match_id, i, settings.root_seed,
                      "".join(traceback.format_exception_only(type(exc), exc)).strip(), replay)
    summary = {"variant": spec.variant, "chunk": spec.chunk, "start": spec.start,
               "stop": spec.stop, "matches": spec.stop - spec.start - failed, "errors": failed,
               "seconds": round(time.perf_counter() - t0, 3), "tables_hash": tables.hash}
    return frames(cols), summary


def add_error(cols: dict[str, dict[str, list]], match_id: str, index: int, seed: int,
              message: str, replay: str) -> None:
    for key, value in (("match_id", match_id), ("match_index", index), ("seed", seed),
                       ("message", message), ("replay", replay)):
        cols["errors"][key].append(value)


def error_frames(settings: RunSettings, spec: ChunkSpec, message: str,
                 ) -> dict[str, pl.DataFrame]:
    """A chunk that could not be played at all (its worker kept dying, or could not
    write): every one of its matches as an error row with `message`."""
    cols = {name: empty_columns(name) for name in TABLES}
    for i in range(spec.start, spec.stop):
        add_error(cols, f"{spec.variant}:{i}", i, settings.root_seed, message,
                  replay_command(settings, spec.variant, i, personalities_for(settings, i)))
    return frames(cols)


def settings_for(experiment: Experiment, out: Path, run_id: str | None = None) -> RunSettings:
    spec = experiment.spec
    return RunSettings(run_id=run_id,
        out=str(Path(out).absolute()), tables_path=experiment.tables_path,
        overrides_by_variant={v.id: v.overrides for v in experiment.variants},
        root_seed=spec.root_seed, seats=experiment.seats, length=spec.length,
        personalities=experiment.personalities, rotate=spec.rotate_personalities,
        seat_ai_by_variant={v.id: list(v.seat_ai) for v in experiment.variants
                            if v.seat_ai})


_OWNER = {name: code for code, name in OWNER_NAMES.items()}
# which event field fills the generic `value` column, and which the `detail` column
_VALUE = {"capital_fall": "new_capital", "transfer": "cause", "kept": "cause",
          "eliminated": "cause", "revolt_start": "turns", "unrest": "turns", "truce": "turns",
          "tile_bought": "price", "camp_cleared": "gold", "capture": "unit",
          "unit_disbanded": "unit", "attack": "damage", "rush": "gold", "research": "cost",
          "repair": "hp", "repairs": "hp", "heals": "hp"}
_DETAIL = {"victory": "victory", "built": "item", "revolt_start": "cause",
           "revolt_end": "cause", "unit_disbanded": "type", "attack": "attacker",
           "rush": "item", "research": "tech"}


def _owner(value: Any) -> int | None:
    if value is None:
        return None
    return _OWNER.get(value, value) if isinstance(value, str) else int(value)


def empty_columns(table: str) -> dict[str, list]:
    return {name: [] for name in SCHEMAS[table]}


def add_match(cols: dict[str, dict[str, list]], result: dict[str, Any], match_id: str,
              replay: str, personalities: list[str]) -> None:
    """Append one match's outcome (sim.engine.match.outcome) to the column lists."""
    idx = result["match_index"]
    m = cols["matches"]
    for key, value in (("match_id", match_id), ("match_index", idx), ("seed", result["seed"]),
                       ("seats", result["seats_n"]), ("length", result["length"]),
                       ("personalities", ",".join(personalities)),
                       ("tables_hash", result["tables_hash"]), ("winner", result["winner"]),
                       ("victory", result["victory"]), ("end_turn", result["end_turn"]),
                       ("events_dropped", result["events_dropped"]), ("replay", replay)):
        m[key].append(value)
    s = cols["seats"]
    for row in result["seats"]:
        s["match_id"].append(match_id)
        s["match_index"].append(idx)
        s["winner"].append(row["seat"] == result["winner"])
        for key in SCHEMAS["seats"]:
            if key not in ("match_id", "match_index", "winner"):
                s[key].append(row[key])
    e = cols["events"]
    for ev in result["events"]:
        kind = ev["kind"]
        e["match_id"].append(match_id)
        e["match_index"].append(idx)
        e["event"].append(ev["row"])
        e["turn"].append(ev["turn"])
        e["kind"].append(kind)
        e["seat"].append(_owner(ev.get("seat")))
        e["by"].append(_owner(ev.get("by")))
        e["city"].append(ev.get("city"))
        e["cause"].append(ev.get("cause") if isinstance(ev.get("cause"), int) else None)
        value = ev.get(_VALUE.get(kind, ""), None)
        e["value"].append(value if isinstance(value, int) else None)
        detail = ev.get(_DETAIL.get(kind, ""), None)
        e["detail"].append(detail if isinstance(detail, str) else None)
        for raw in ("a", "b", "c"):
            e[raw].append(ev[raw])
    t = cols["turns"]
    rows = result["turns"]
    t["match_id"].extend([match_id] * len(rows))
    t["match_index"].extend([idx] * len(rows))
    for key in SCHEMAS["turns"]:
        if key not in MATCH_KEYS:
            t[key].extend([row[key] for row in rows])


def frames(cols: dict[str, dict[str, list]]) -> dict[str, pl.DataFrame]:
    """Typed, key-sorted frames from column lists."""
    return {table: pl.DataFrame(data, schema=SCHEMAS[table]).sort(SORT_KEYS[table])
            for table, data in cols.items()}

"""Playing a chunk of a sweep: its matches, one after another, into outcome rows.

A chunk (ChunkSpec) is a loop over match indices, each match a whole compiled
game; `play_chunk` returns the chunk's typed frames (sim.outputs.schemas schemas) and a
small summary. A match that raises becomes a row of the `errors` table; the chunk
goes on. Results depend only on (tables, root seed, match index, seats, length,
personalities), never on worker count, backend or chunk size. Writing, resume
and parallelism live in sim.runner.sweep and the modules beside it (runfolder,
dispatch).
"""

from __future__ import annotations

import json
import shlex
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from sim.outputs.games import game_of
from sim.outputs.schemas import SCHEMAS, SORT_KEYS, TABLES
from sim.outputs.storage import absolute, run_path
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
    tables_out: tuple[str, ...] | None = None  # the tables written (None: every one)
    game: str = "hex"  # sim.outputs.games: whose chunk player plays the chunk
    # a game with sides (Crown): variant -> (side A's AI skill, side B's)
    side_skill_by_variant: dict[str, tuple[int, int]] = field(default_factory=dict)


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


def match_command(settings: RunSettings, variant: str, match_index: int) -> str:
    """The hex game's Game.replay_command: the `sim match` command of a match of the
    sweep, seated as the sweep seats it (the errors rows of a chunk not played)."""
    return replay_command(settings, variant, match_index,
                          personalities_for(settings, match_index))


def personalities_for(settings: RunSettings, match_index: int) -> list[str]:
    base = list(settings.personalities)
    if not base:
        return []
    shift = match_index if settings.rotate else 0
    return [base[(s + shift) % len(base)] for s in range(settings.seats)]


def play_chunk(settings: RunSettings, spec: ChunkSpec, tables: Any, play=None,
               ) -> tuple[dict[str, pl.DataFrame], dict[str, Any]]:
    """Play the matches of one chunk with the variant's resolved `tables` (fixed by the
    parent when the sweep started) through its game's chunk player
    (sim.outputs.games): (typed, key-sorted frames per table, summary). `play`
    replaces the hex game's sim.engine.match.play_match in tests."""
    game = game_of(settings.game)
    player = game.player()
    columns, summary = player(settings, spec, tables, **({"play": play} if play else {}))
    return {table: data if isinstance(data, pl.DataFrame) else
            key_sorted(pl.DataFrame(data or None, schema=game.schemas[table]), table,
                       game.sort_keys)
            for table, data in columns.items()}, summary


def play_hex_chunk(settings: RunSettings, spec: ChunkSpec, tables: Tables, play=None,
                   ) -> tuple[dict[str, pl.DataFrame], dict[str, Any]]:
    """The hex game's chunk player: the matches of one chunk (frames per table,
    summary).
    `play` replaces sim.engine.match.play_match in tests. The engine is imported here,
    not with the module: a sweep's parent that only hands chunks out never loads numba
    (its workers preload the engine: sim.runner.pool.SWEEP_MODULES)."""
    from sim.engine.columns import match_columns
    from sim.engine.match import play_match

    play = play or play_match
    t0 = time.perf_counter()
    cols = {name: empty_columns(name) for name in TABLES}
    columns = ChunkColumns()
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
            columns.add(match_columns(st, tables, board, log, settings.root_seed, i),
                        match_id, replay, pers)
        except Exception as exc:  # a failing match is a row, not the end of the sweep
            failed += 1
            add_error(cols, match_id, i, settings.root_seed,
                      "".join(traceback.format_exception_only(type(exc), exc)).strip(), replay)
    summary = {"variant": spec.variant, "chunk": spec.chunk, "start": spec.start,
               "stop": spec.stop, "matches": spec.stop - spec.start - failed, "errors": failed,
               "seconds": round(time.perf_counter() - t0, 3), "tables_hash": tables.hash}
    return columns.frames(cols["errors"]), summary


def add_error(cols: dict[str, dict[str, list]], match_id: str, index: int, seed: int,
              message: str, replay: str) -> None:
    for key, value in (("match_id", match_id), ("match_index", index), ("seed", seed),
                       ("message", message), ("replay", replay)):
        cols["errors"][key].append(value)


def error_frames(settings: RunSettings, spec: ChunkSpec, message: str,
                 ) -> dict[str, pl.DataFrame]:
    """A chunk that could not be played at all (its worker kept dying, or could not
    write): every one of its matches as an error row with `message`."""
    game = game_of(settings.game)
    cols = {name: {column: [] for column in game.schemas[name]} for name in game.tables}
    for i in range(spec.start, spec.stop):
        add_error(cols, f"{spec.variant}:{i}", i, settings.root_seed, message,
                  game.replay_command_for(settings, spec.variant, i))
    return {table: key_sorted(pl.DataFrame(data, schema=game.schemas[table]), table,
                              game.sort_keys) for table, data in cols.items()}


def settings_for(experiment: Experiment, out: Path, run_id: str | None = None) -> RunSettings:
    spec = experiment.spec
    return RunSettings(run_id=run_id,
        out=str(absolute(run_path(out))), tables_path=experiment.tables_path,
        overrides_by_variant={v.id: v.overrides for v in experiment.variants},
        root_seed=spec.root_seed, seats=experiment.seats, length=spec.length,
        personalities=experiment.personalities, rotate=spec.rotate_personalities,
        seat_ai_by_variant={v.id: list(v.seat_ai) for v in experiment.variants
                            if v.seat_ai},
        tables_out=spec.written, game=spec.game,
        side_skill_by_variant={v.id: v.side_skill for v in experiment.variants})


def empty_columns(table: str) -> dict[str, list]:
    return {name: [] for name in SCHEMAS[table]}


class ChunkColumns:
    """The outcome tables of a chunk's matches, gathered match by match as columns
    (sim.engine.columns.match_columns) and made into typed frames once."""

    def __init__(self) -> None:
        self.matches: dict[str, list] = empty_columns("matches")
        self.seats: dict[str, list] = empty_columns("seats")
        self.events: list[dict[str, Any]] = []
        self.turns: list[dict[str, Any]] = []
        self.truces: list[dict[str, Any]] = []
        self.ids: list[tuple[str, int]] = []

    def add(self, columns: dict[str, Any], match_id: str, replay: str,
            personalities: list[str]) -> None:
        row = columns["match"]
        idx = row["match_index"]
        for key, value in (("match_id", match_id), ("personalities", ",".join(personalities)),
                           ("replay", replay), *row.items()):
            self.matches[key].append(value)
        for seat in columns["seats"]:
            self.seats["match_id"].append(match_id)
            self.seats["match_index"].append(idx)
            self.seats["winner"].append(seat["seat"] == row["winner"])
            for key, value in seat.items():
                self.seats[key].append(value)
        self.ids.append((match_id, idx))
        self.events.append(columns["events"])
        self.turns.append(columns["turns"])
        self.truces.append(columns["truces"])

    def _keyed(self, table: str, parts: list[dict[str, Any]], length: str,
               ) -> dict[str, Any]:
        counts = np.array([len(p[length]) for p in parts], dtype=np.int64)
        which = np.repeat(np.arange(len(parts), dtype=np.int64), counts)
        # the ids repeated by polars (a gather), not as a Python list of a string per row
        ids = pl.Series("match_id", [m for m, _ in self.ids], dtype=pl.Utf8)
        index = np.array([i for _, i in self.ids], dtype=np.int64)
        data: dict[str, Any] = {"match_id": ids.gather(which) if len(parts) else [],
                                "match_index": index[which] if len(parts) else []}
        for name, dtype in SCHEMAS[table].items():
            if name in data:
                continue
            values = [p[name] for p in parts]
            if values and isinstance(values[0], dict) and "codes" in values[0]:
                # a string column as codes into names (the same names in every match of a
                # chunk: one variant's tables): polars gathers the strings, -1 gives null
                codes = pl.Series(np.concatenate([v["codes"] for v in values]))
                data[name] = pl.Series(name, values[0]["names"], dtype=dtype).gather(
                    codes.set(codes < 0, None))
            elif values and isinstance(values[0], dict):  # a nullable integer column
                series = pl.Series(name, np.concatenate([v["values"] for v in values]),
                                   dtype=dtype)
                data[name] = series.set(pl.Series(np.concatenate([v["null"] for v in values])),
                                        None)
            elif values and isinstance(values[0], list):
                data[name] = pl.Series(name, [x for v in values for x in v], dtype=dtype)
            elif name == "units":
                data[name] = pl.Series(name, np.concatenate(values)).cast(dtype) if values \
                    else pl.Series(name, [], dtype=dtype)
            else:
                data[name] = np.concatenate(values) if values else []
        return data

    def frames(self, errors: dict[str, list]) -> dict[str, pl.DataFrame]:
        """Typed, key-sorted frames of every table (the chunk's error rows: `errors`)."""
        data = {"matches": self.matches, "seats": self.seats,
                "events": self._keyed("events", self.events, "event"),
                "turns": self._keyed("turns", self.turns, "turn"), "errors": errors,
                "truces": self._keyed("truces", self.truces, "offer")}
        return {table: key_sorted(pl.DataFrame(data[table], schema=SCHEMAS[table]), table)
                for table in TABLES}


def frames(cols: dict[str, dict[str, list]]) -> dict[str, pl.DataFrame]:
    """Typed, key-sorted frames from column lists."""
    return {table: key_sorted(pl.DataFrame(data, schema=SCHEMAS[table]), table)
            for table, data in cols.items()}


def key_sorted(frame: pl.DataFrame, table: str,
               sort_keys: dict[str, list[str]] | None = None) -> pl.DataFrame:
    """`frame` sorted by the table's keys (SORT_KEYS). A chunk gathers its rows in that
    order already (its matches in index order, each match's events and turns in log
    order), so this checks the order first and sorts only a frame that is not in it:
    sorting a chunk's 300,000 event rows cost a tenth of a millisecond a match."""
    keys_of = (sort_keys or SORT_KEYS)[table]
    columns = [frame.get_column(k) for k in keys_of]
    if frame.height < 2 or any(c.null_count() for c in columns):
        return frame.sort(keys_of)
    keys = [c.to_numpy() for c in columns]
    # row i+1 is not before row i: decided by the first key that differs
    after = np.zeros(frame.height - 1, dtype=bool)
    tied = np.ones(frame.height - 1, dtype=bool)
    for key in keys:
        after |= tied & (key[1:] > key[:-1])
        tied &= key[1:] == key[:-1]
    return frame if bool((after | tied).all()) else frame.sort(keys_of)

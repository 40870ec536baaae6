"""One match from Python: its opening state (seeded streams, map), the whole match
(fast path, or turn by turn: `iter_turns`, which the invariant checker and the golden
transcripts share), the AI continuing from any position (scenarios), and the outcome
rows of a finished match.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from sim.engine.report import state_report
from sim.engine.seat_ai import check_seat_ai, is_default, seat_masks
from sim.kernels.lookahead import Scratch
from sim.kernels.loop import (
    begin_match,
    play_one_turn,
    run_match_held,
    run_match_held_skilled,
)
from sim.kernels.loop import play_turns as _play_turns
from sim.kernels.timing import no_ticks
from sim.kernels.world.setup import setup_match
from sim.rules import codes as R
from sim.rules.codes import (
    COL_B,
    COL_KIND,
    COL_SEAT,
    COL_TURN,
    EV_RESEARCH,
    EVENT_COLUMNS,
    LOG_DOMINANCE,
    LOG_SCIENCE_STOCK,
    MAX_SEATS,
    SKILL_RANDOM,
    TURN_FIELDS,
    TURN_LOG_FIELDS,
    VICTORY_NAMES,
)
from sim.rules.tables import Tables
from sim.world.board import Board, make_board
from sim.world.rng import Purpose, new_state, stream_seed
from sim.world.state import (
    State,
    empty_state,
)


class InvariantError(AssertionError):
    """The invariant checker found a violation during `--check`."""


class MapError(ValueError):
    """The map of a match cannot hold its seats' starts (D1): the tables' terrain
    weights, radius or spacing leave too little passable land. A sweep records it
    as an error row; `sim tables check` refuses such tables before any match runs."""


def _unplayable(tables: Tables, seed: int, match_index: int, n_seats: int,
                length: str | None) -> MapError:
    """The error of a match whose board cannot hold its starts, naming the board the
    match played: its length preset's radius (D6), not map.radius alone."""
    m = tables.model
    preset = length or m.match.length
    return MapError(f"seed {seed} match {match_index}: the {preset} board (radius "
                    f"{tables.board_radius(preset)}) has no room for {n_seats} starts "
                    f"{m.territory.city_min_distance} steps apart on passable land: check "
                    f"map.terrain_weights, map.radius, match.radius_scale_pct.{preset} and "
                    "territory.city_min_distance")


def play_match(tables: Tables, seed: int, match_index: int = 0, n_seats: int | None = None,
               length: str | None = None, check: bool = False,
               personalities: list[str] | None = None,
               seat_ai: Sequence[Mapping[str, Any]] | None = None):
    """Play one match; returns (state, board, turn_log). With `check`, the match is
    stepped by `iter_turns` and the invariant checker runs at the opening and after
    every turn, raising InvariantError on a violation.
    `personalities` names each seat's AI (default: the tables' match.personalities);
    `seat_ai` gives seat index -> {"skill", "forbid"} (sim.engine.seat_ai)."""
    if check:
        from sim.engine.check import check_invariants

        for step in iter_turns(tables, seed, match_index, n_seats, length, personalities,
                               seat_ai):
            problems = check_invariants(step.state, tables, step.board,
                                        tables.arrays(length, int(step.state.n_seats[0])))
            if problems:
                raise InvariantError(f"seed {seed} match {match_index} turn "
                                     f"{step.state.turn[0]}: " + "; ".join(problems))
        return step.state, step.board, step.turn_log
    return _play_compiled(tables, seed, match_index, n_seats, length, personalities, seat_ai)


def play_match_phases(tables: Tables, seed: int, match_index: int, ticks: np.ndarray,
                      seat_ai: Sequence[Mapping[str, Any]] | None = None):
    """`play_match` with each phase of its loop timed: the same match and result; ticks
    (N_PHASES,) int64 gains each phase's CPU cycles (sim.kernels.timing)."""
    return _play_compiled(tables, seed, match_index, None, None, None, seat_ai, ticks)


def _play_compiled(tables: Tables, seed: int, match_index: int, n_seats: int | None,
                   length: str | None, personalities: list[str] | None,
                   seat_ai: Sequence[Mapping[str, Any]] | None, ticks: np.ndarray | None = None):
    """One match played whole by the compiled loop (sim.kernels.loop.run_match_held),
    timed when `ticks` is given."""
    st, board, turn_log, rng_map, n_seats = prepare(tables, seed, match_index, n_seats, length,
                                                    personalities, seat_ai)
    if ticks is None:
        ticks = no_ticks()
    held = (_holder(st), _tables_holder(tables.arrays(length, n_seats)), board, rng_map,
            np.int64(n_seats), _reused_path_table(board.n_tiles), turn_log)
    scratch = loop_scratch(st)
    # the entry without the lookahead and the search unless a seat decides by them: an
    # all-skill-0 sweep never compiles them (sim.kernels.loop)
    played = run_match_held(*held, ticks) if scratch is None else \
        run_match_held_skilled(*held, scratch, ticks)
    if not played:
        raise _unplayable(tables, seed, match_index, n_seats, length)
    return st, board, turn_log


class Step(NamedTuple):
    """One point of a match stepped by `iter_turns`.

    played: the turn just played (0 at the opening, before any seat acted).
    state: the match state; the same record every step, updated in place.
    board: the match's board.
    turn_log: (last_turn + 1, MAX_SEATS, TURN_FIELDS + unit types) int64, rows filled
    up to `played` (sim.kernels.loop.record_turn).
    """

    played: int
    state: State
    board: Board
    turn_log: np.ndarray


def iter_turns(tables: Tables, seed: int, match_index: int = 0, n_seats: int | None = None,
               length: str | None = None, personalities: list[str] | None = None,
               seat_ai: Sequence[Mapping[str, Any]] | None = None) -> Iterator[Step]:
    """The match `play_match` plays, a whole turn at a time (same kernels, streams and
    order as the fast path's compiled loop, so both end in the same state).

    Yields the opening (map drawn, turn 1 opened: its opening seat's flow has run,
    T12), then the state after every whole turn: every standing seat played, and
    unless the match ended, the next turn opened the same way. The last step is the
    finished match. The yielded state is updated in place by the next step: read or
    copy it (sim.world.state.copy_state) before asking for the next.
    """
    st, board, turn_log, rng_map, n_seats = prepare(tables, seed, match_index, n_seats, length,
                                                    personalities, seat_ai)
    tb = tables.arrays(length, n_seats)
    path = new_path_table(board.n_tiles)
    if not setup_match(st, tb, board, rng_map, np.int64(n_seats)):
        raise _unplayable(tables, seed, match_index, n_seats, length)
    untimed = no_ticks()
    begin_match(st, tb, board, untimed)
    scratch = loop_scratch(st)
    yield Step(0, st, board, turn_log)
    while not st.finished[0]:
        played = int(st.turn[0])
        play_one_turn(st, tb, board, path, turn_log, scratch, untimed)
        yield Step(played, st, board, turn_log)


def forbid_text(state: State, tables: Tables, seat: int) -> str:
    """The seat's forbids as the comma-separated names of its masks ("" for none), in
    code order: units, buildings, mechanics, research:<tech>."""
    # state["name"], numpy's item lookup: numpy.record's attribute lookup is slow
    groups = ((state["seat_forbid_units"], tables.unit_names, ""),
              (state["seat_forbid_buildings"], tables.building_names, ""),
              (state["seat_forbid_mechanics"], R.MECHANICS, ""),
              (state["seat_forbid_techs"], tables.tech_names, "research:"))
    masks = [int(mask[seat]) for mask, _names, _prefix in groups]
    if not any(masks):  # the usual seat: nothing forbidden
        return ""
    return ",".join(f"{prefix}{name}" for bits, (_mask, names, prefix) in zip(masks, groups,
                                                                              strict=True)
                    for i, name in enumerate(names) if (bits >> i) & 1)


def outcome(state: State, tables: Tables, board: Board, turn_log: np.ndarray,
            seed: int, match_index: int) -> dict[str, Any]:
    """The outcome rows of one match: winner, victory, per-seat results, events, turns."""
    report = state_report(state, tables, board)
    events = report["events"]
    n_seats = int(state.n_seats[0])
    names = tables.personality_names
    seats = []
    for s in report["seats"]:
        i = s["seat"]
        mine = [e for e in events if e.get("seat") == i]
        by_me = [e for e in events if e.get("by") == i]
        seats.append({
            "seat": i,
            "personality": names[int(state.seat_personality[i])],
            "skill": int(state.seat_skill[i]), "forbid": forbid_text(state, tables, i),
            "alive": s["alive"], "rank": s["rank"], "score": s["score"],
            **{f"{k}_points": v for k, v in s["score_terms"].items()},
            "gold_stock": s["gold"], "cities": len(s["cities"]),
            "population": sum(c["pop"] for c in report["cities"] if c["seat"] == i),
            "techs": len(s["techs"]),
            "eliminated_turn": s["eliminated_turn"],
            "capitals_lost": sum(1 for e in mine if e["kind"] == "capital_fall"),
            "cities_captured": sum(1 for e in by_me if e["kind"] == "capture")
            + sum(1 for e in by_me if e["kind"] == "transfer"),
            "observatory_queued_turn": next((e["turn"] for e in mine
                                             if e["kind"] == "observatory_queued"), None),
            "observatory_lost_turn": next((e["turn"] for e in mine
                                           if e["kind"] == "observatory_lost"), None),
            "observatory_completed_turn": next((e["turn"] for e in mine
                                                if e["kind"] == "observatory_completed"), None),
            "peak_dominance": int(turn_log[:, i, LOG_DOMINANCE].max()) if turn_log.size else 0,
            "science_unspent": s["science"],
        })
    end_turn = int(state.turn[0])
    turns = turn_rows(state, turn_log, end_turn)
    raw = state.event_log
    for ev in events:  # the kernel row's a, b, c (their meaning: EVENT_KINDS)
        ev["a"], ev["b"], ev["c"] = (int(x) for x in raw[ev["row"], EVENT_COLUMNS.index("a"):])
    victory = int(state.victory[0])
    return {
        "seed": seed, "match_index": match_index, "tables_hash": tables.hash,
        "seats_n": n_seats, "length": int(state.last_turn[0]),
        "winner": int(state.winner[0]) if state.winner[0] >= 0 else None,
        "victory": VICTORY_NAMES[victory] if victory >= 0 else None,
        "end_turn": end_turn,
        "events_dropped": max(int(state.n_events[0]) - state.event_log.shape[0], 0),
        "seats": seats, "events": events, "turns": turns,
    }


def turn_rows(state: State, turn_log: np.ndarray, end_turn: int) -> list[dict[str, Any]]:
    """One dict per turn 1..end_turn and seat: TURN_LOG_FIELDS, science_gained and units.

    science_gained: the science the seat earned during the turn (its flow's income and
    event cards), that is its stock's change plus what its research events spent in
    the turn (a match starts with no science). units: its units alive by type, in the
    tables' unit order (sim.rules.tables.Tables.unit_names)."""
    n_seats = int(state.n_seats[0])
    last = min(end_turn, turn_log.shape[0] - 1)
    spent = np.zeros((last + 2, n_seats), dtype=np.int64)
    n = min(int(state.n_events[0]), state.event_log.shape[0])
    log = state.event_log[:n]
    research = log[log[:, COL_KIND] == EV_RESEARCH]
    for turn, seat, cost in research[:, [COL_TURN, COL_SEAT, COL_B]].tolist():
        if turn <= last:
            spent[turn, seat] += cost
    stock = turn_log[: last + 1, :n_seats, LOG_SCIENCE_STOCK].copy()
    stock[0] = 0
    gained = (stock[1:] - stock[:-1] + spent[1: last + 1]).tolist()
    fields = turn_log[1: last + 1, :n_seats, :TURN_FIELDS].tolist()
    units = turn_log[1: last + 1, :n_seats, TURN_FIELDS:].tolist()
    return [{"turn": t, "seat": s, **dict(zip(TURN_LOG_FIELDS, fields[t - 1][s], strict=True)),
             "science_gained": gained[t - 1][s], "units": units[t - 1][s]}
            for t in range(1, last + 1) for s in range(n_seats)]


def prepare(tables: Tables, seed: int, match_index: int, n_seats: int | None,
            length: str | None, personalities: list[str] | None = None,
            seat_ai: Sequence[Mapping[str, Any]] | None = None,
            ) -> tuple[State, Board, np.ndarray, np.ndarray, int]:
    """An empty state with the match's streams (sim.world.rng: root seed, match index,
    purpose), last turn, personalities and per-seat AI settings (skill, forbids:
    SeatAIError when the tables cannot give them); returns (state, board, turn_log,
    map stream, seats). `setup_match` then draws the map on the map stream."""
    n_seats = n_seats or tables.model.match.seats
    tb = tables.arrays(length, n_seats)
    board = make_board(int(tb.radius))
    st = _fresh_state(board.n_tiles, n_seats, len(tables.tech_names), len(tables.building_names))
    # st["name"] (numpy's C item lookup), not st.name (numpy.record's Python attribute
    # lookup, which cost more than the rest of the setup)
    last_turn = tables.match_length(length, n_seats)
    st["last_turn"][0] = last_turn
    st["rng_events"][0] = stream_seed(seed, match_index, Purpose.EVENTS)
    rng_ai = st["rng_ai"]
    for s in range(n_seats):
        rng_ai[s] = stream_seed(seed, match_index, Purpose.AI, s)
    names = tables.personality_names
    order = personalities or tables.model.match.personalities
    personality = st["seat_personality"]
    for s in range(n_seats):
        personality[s] = names.index(order[s % len(order)])
    if not is_default(seat_ai):
        for field, values in seat_masks(tables, check_seat_ai(tables, seat_ai,
                                                              n_seats)).items():
            st[field][: len(values)] = values
        for s in np.flatnonzero(st["seat_skill"][:n_seats] == SKILL_RANDOM):  # its own stream
            st["rng_random"][s] = stream_seed(seed, match_index, Purpose.RANDOM_PLAY, int(s))
    turn_log = np.zeros((last_turn + 1, MAX_SEATS, TURN_FIELDS + len(tables.unit_names)),
                        dtype=np.int64)
    rng_map = new_state(stream_seed(seed, match_index, Purpose.MAP))
    return st, board, turn_log, rng_map, n_seats


def new_match(tables: Tables, seed: int, match_index: int = 0, n_seats: int | None = None,
              length: str | None = None) -> tuple[State, Board]:
    """The opening state of match `match_index` under root `seed`, map drawn."""
    st, board, _log, rng_map, n_seats = prepare(tables, seed, match_index, n_seats, length)
    if not setup_match(st, tables.arrays(length, n_seats), board, rng_map, np.int64(n_seats)):
        raise _unplayable(tables, seed, match_index, n_seats, length)
    return st, board


@lru_cache(maxsize=8)
def _pristine_state(n_tiles: int, n_seats: int, n_techs: int, n_buildings: int) -> State:
    """empty_state(...) built once per shape; never handed out, only copied."""
    return empty_state(n_tiles, n_seats, n_techs, n_buildings)


_SPAN_GAP = 4096  # bytes: a page


@lru_cache(maxsize=8)
def _pristine_spans(n_tiles: int, n_seats: int, n_techs: int,
                    n_buildings: int) -> tuple[np.ndarray, tuple[tuple[int, int], ...]]:
    """(the pristine state's holder as uint8, [start, stop) byte spans outside which it
    is zero): most of an empty state is zero bytes (the event log alone is over half
    of it), so a copy needs to write only these. Spans less than _SPAN_GAP bytes apart
    are merged (zeros between them are copied too): a few copies, not thousands."""
    raw = _pristine_state(n_tiles, n_seats, n_techs, n_buildings).base.view(np.uint8)
    nonzero = np.concatenate(([0], (raw != 0).view(np.int8), [0]))
    edges = np.flatnonzero(np.diff(nonzero)).tolist()
    spans: list[list[int]] = []
    for start, stop in zip(edges[::2], edges[1::2], strict=True):
        if spans and start - spans[-1][1] < _SPAN_GAP:
            spans[-1][1] = stop
        else:
            spans.append([start, stop])
    return raw, tuple((start, stop) for start, stop in spans)


def _fresh_state(n_tiles: int, n_seats: int, n_techs: int, n_buildings: int) -> State:
    """A new empty_state(n_tiles, n_seats, n_techs, n_buildings): a copy of the cached
    pristine one (one memory copy instead of the dtype build and a dozen fills). The
    copy is of the raw bytes of its (1,) holder, alignment padding included, so the
    state is byte-equal to a new empty_state (numpy copies a record array field by
    field, leaving the padding uninitialised). Only the pristine state's nonzero
    spans are copied into zeroed memory: np.zeros takes fresh pages from the system
    already zero, and the event log's pages are not touched until events are logged."""
    raw, spans = _pristine_spans(n_tiles, n_seats, n_techs, n_buildings)
    fresh = np.zeros(raw.shape[0], dtype=np.uint8)
    for start, stop in spans:
        fresh[start:stop] = raw[start:stop]
    holder = _pristine_state(n_tiles, n_seats, n_techs, n_buildings).base
    return fresh.view(holder.dtype).view(np.recarray)[0]


def _holder(record: np.record) -> np.ndarray:
    """The (1,) plain array whose element `record` is (its memory, not a copy), for
    sim.kernels.loop.run_match_held. State and tables records are always built as
    element 0 of a (1,) array (sim.world.state, sim.rules.record)."""
    base = record.base
    if not isinstance(base, np.ndarray) or base.shape != (1,):
        raise TypeError("the record is not element 0 of a (1,) record array")
    return base.view(np.ndarray)


def _tables_holder(record: np.record) -> np.ndarray:
    """`_holder` of a tables record; a record that lost its holder (unpickled in a
    worker process: pickle keeps the record, not the array it was element 0 of) is
    copied into a new (1,) array once and remembered there."""
    base = record.base
    if isinstance(base, np.ndarray) and base.shape == (1,):
        return base.view(np.ndarray)
    held = _HELD_TABLES.get(id(record))
    if held is None or held[0] is not record:
        holder = np.empty(1, dtype=record.dtype)
        holder[0] = record
        held = (record, holder)
        _HELD_TABLES[id(record)] = held
    return held[1]


_HELD_TABLES: dict[int, tuple[np.record, np.ndarray]] = {}


def lookahead_scratch(state: State) -> Scratch:
    """The lookahead's scratch for the kernels' match loop (sim.kernels.lookahead.Scratch:
    a (1,) holder of the state's dtype, the state's holder as uint8, the scratch
    as uint8, the [start, stop) byte span of the event log, which the copy skips).
    With no skill-1 or skill-2 seat nothing reads them, and they are (0,)-long arrays
    of the same types: no allocation, and the compiled loop is the same one."""
    holder = _holder(state)
    n = int(state["n_seats"][0])
    if not np.isin(state["seat_skill"][:n], (R.SKILL_LOOKAHEAD, R.SKILL_SEARCH)).any():
        none, none_bytes = _no_scratch(holder.dtype)
        return Scratch(none, none_bytes, none_bytes, np.zeros(2, dtype=np.int64))
    scratch = np.empty_like(holder)
    log_type, offset = holder.dtype.fields["event_log"][:2]
    uncopied = np.array([offset, offset + log_type.itemsize], dtype=np.int64)
    return Scratch(scratch, holder.view(np.uint8), scratch.view(np.uint8), uncopied)


def loop_scratch(state: State) -> Scratch | None:
    """What the match loop's kernels take as the lookahead's scratch: None when no seat
    has skill 1 or 2 (D11), so numba compiles and runs the loop without the lookahead
    and the search (sim.kernels.search.decide_orders), else lookahead_scratch."""
    n = int(state["n_seats"][0])
    if int(state["seat_skill"][:n].max()) < R.SKILL_LOOKAHEAD:
        return None
    return lookahead_scratch(state)


@lru_cache(maxsize=8)
def _no_scratch(dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """(0,)-long arrays of the state's dtype and of uint8, the types lookahead_scratch
    hands the kernels when no seat looks ahead; made once (a view of a structured
    array as bytes costs numpy's field-by-field safety check) and never written:
    nothing has an element to write."""
    none = np.empty(0, dtype=dtype)
    return none, np.empty(0, dtype=np.uint8)


def new_path_table(n_tiles: int) -> np.ndarray:
    """The AI's passable-distance table: rows filled on demand (-1 = not yet)."""
    return np.full((n_tiles, n_tiles), -1, dtype=np.int64)


_PATH_TABLES = threading.local()


def _reused_path_table(n_tiles: int) -> np.ndarray:
    """A path table equivalent to new_path_table(n_tiles) for a new match, reused by
    the matches this thread plays one after another.

    sim.kernels.ai.paths.path_row treats a row as filled exactly when its diagonal
    entry is 0 and then rewrites the whole row before anything reads it, so marking
    every diagonal -1 forgets the previous match's map as completely as a fresh
    table of -1 (tests/test_match.py: a match gives the same result after other
    matches as alone in a fresh process, and as `iter_turns` with a fresh table)."""
    table = getattr(_PATH_TABLES, "table", None)
    if table is None or table.shape[0] != n_tiles:
        table = new_path_table(n_tiles)
        _PATH_TABLES.table = table
    else:
        table.reshape(-1)[:: n_tiles + 1] = -1  # the diagonal (np.fill_diagonal's, faster)
    return table


def play_turns(state, tb, board, n: int) -> int:
    """`play_turns n`: refused once the match is over."""
    if state.finished[0]:
        return R.R_FINISHED
    _play_turns(state, tb, board, new_path_table(board.n_tiles), np.int64(n),
                loop_scratch(state))
    return R.OK

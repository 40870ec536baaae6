"""A finished match as columns of the outcome tables (sim.outputs.schemas), built with
numpy from the state's arrays and its raw event log.

`outcome` (sim.engine.match) is the same match as JSON-ready dicts, one per event and
per turn row, for `sim match --json` and the library; a sweep writes thousands of
matches of about 1,500 events each, and building those dicts cost three to four times
the match itself. `match_columns` gives the same rows, column by column
(tests/test_columns.py checks every table against `outcome` and the dict-based
reference in tests/reference/rows.py, match by match).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from sim.engine.match import forbid_text
from sim.kernels.rules.standings import scores
from sim.rules.codes import (
    COL_A,
    COL_B,
    COL_BY,
    COL_C,
    COL_CITY,
    COL_KIND,
    COL_SEAT,
    COL_TURN,
    DAMAGE_SPLIT,
    EVENT_NAMES,
    LOG_CITIES_HELD,
    LOG_DOMINANCE,
    LOG_SCIENCE_STOCK,
    LOG_SCORE,
    REVOLT_CAUSES,
    SCORE_TERMS,
    TRUCE_AFTER_TURNS,
    TURN_FIELDS,
    TURN_LOG_FIELDS,
    VICTORY_NAMES,
)
from sim.rules.tables import Tables
from sim.world.board import Board
from sim.world.state import State

_KIND = {name: code for code, name in enumerate(EVENT_NAMES)}
# the kinds whose generic `value` column is the raw a, b, or c's damage part, and the
# kinds whose `cause` column is an event row (a); the names say what the rows mean
# (sim.engine.report.event_list, docs/outcomes.md)
def _codes(*names: str) -> np.ndarray:
    return np.array([_KIND[n] for n in names], dtype=np.int64)


_VALUE_A = _codes("transfer", "kept", "eliminated", "revolt_start", "unrest", "truce",
                  "capture", "unit_disbanded", "repair", "truce_declined")
_VALUE_B = _codes("tile_bought", "camp_cleared", "rush", "research", "repairs", "heals")
_CAUSE_A = _codes("transfer", "kept", "eliminated")
_CAPTURED = _codes("capture", "transfer")  # a city taken, by its new owner (`by`)


def _member(codes: np.ndarray) -> np.ndarray:
    """(len(EVENT_NAMES),) bool: which kind codes are in `codes`. `_member(c)[kind]` is
    np.isin(kind, c) for any log (kind codes index EVENT_NAMES) at a fraction of
    np.isin's cost, which is mostly set-up for arrays this small."""
    member = np.zeros(len(EVENT_NAMES), dtype=bool)
    member[codes] = True
    return member


_IS_VALUE_A, _IS_VALUE_B = _member(_VALUE_A), _member(_VALUE_B)
_IS_CAUSE_A, _IS_CAPTURED = _member(_CAUSE_A), _member(_CAPTURED)
_HAS_VALUE = _IS_VALUE_A | _IS_VALUE_B


def _owners(values: np.ndarray, none: np.ndarray) -> dict[str, Any]:
    return {"values": values, "null": none}


@functools.lru_cache(maxsize=8)
def _detail_names(units: tuple[str, ...], buildings: tuple[str, ...], techs: tuple[str, ...],
                  ) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray]:
    """The names the `detail` column can hold, and per kind code (len(EVENT_NAMES),)
    int64 arrays: where that kind's names start in them, how many it has (0: a kind
    without a detail) and which log field indexes them (COL_A or COL_B)."""
    bandit = (*units, "bandit")  # -1: a bandit, the last name
    items = (*units, *buildings)
    groups = (("victory", VICTORY_NAMES, COL_A), ("built", items, COL_A),
              ("rush", items, COL_A), ("revolt_start", REVOLT_CAUSES, COL_B),
              ("revolt_end", REVOLT_CAUSES, COL_B), ("unit_disbanded", bandit, COL_B),
              ("attack", bandit, COL_A), ("research", techs, COL_A))
    names: list[str] = []
    start, size, col = (np.zeros(len(EVENT_NAMES), dtype=np.int64) for _ in range(3))
    for kind, group, field in groups:
        k = _KIND[kind]
        start[k], size[k], col[k] = len(names), len(group), field
        names.extend(group)
    return tuple(names), start, size, col


def event_columns(log: np.ndarray, tables: Tables) -> dict[str, Any]:
    """Columns of the events table for a raw event log (n, EVENT_FIELDS) int64:
    event, turn, kind, seat, by, city, cause, value, detail, a, b, c. Nullable integer
    columns are {"values": (n,) int64, "null": (n,) bool}; the string columns kind and
    detail are {"codes": (n,) int64, "names": tuple of str}, each row the name its code
    indexes (-1: null), so that a chunk of 300,000 rows never holds a Python string
    per row."""
    n = log.shape[0]
    kind = log[:, COL_KIND]
    a, b, c = log[:, COL_A], log[:, COL_B], log[:, COL_C]
    value = np.where(_IS_VALUE_A[kind], a, np.where(_IS_VALUE_B[kind], b, 0))
    has_value = _HAS_VALUE[kind]
    fall = (kind == _KIND["capital_fall"]) & (a >= 0)   # the new capital, if any
    attack = kind == _KIND["attack"]
    value = np.where(fall, a, np.where(attack, c % DAMAGE_SPLIT, value))
    has_value = has_value | fall | attack
    cause = _IS_CAUSE_A[kind]
    names, start, size, col = _detail_names(tuple(tables.unit_names),
                                            tuple(tables.building_names),
                                            tuple(tables.tech_names))
    size_of = size[kind]
    named = size_of > 0
    index = np.where(col[kind] == COL_A, a, b)
    beyond = named & ((index >= size_of) | (index < -size_of))
    if beyond.any():
        bad = np.flatnonzero(beyond)[0]
        raise IndexError(f"a {EVENT_NAMES[kind[bad]]} event names item {int(index[bad])} "
                         f"of {int(size_of[bad])}")
    # a negative index counts from the group's end (-1: a bandit)
    detail = np.where(named, start[kind] + index % np.maximum(size_of, 1), -1)
    seat, by, city = log[:, COL_SEAT], log[:, COL_BY], log[:, COL_CITY]
    return {"event": np.arange(n, dtype=np.int64), "turn": log[:, COL_TURN].copy(),
            "kind": {"codes": kind.copy(), "names": EVENT_NAMES},
            "seat": _owners(seat.copy(), seat == -1), "by": _owners(by.copy(), by == -1),
            "city": _owners(city.copy(), city < 0),
            "cause": _owners(np.where(cause, a, 0), ~cause),
            "value": _owners(value, ~has_value), "detail": {"codes": detail, "names": names},
            "a": a.copy(), "b": b.copy(), "c": c.copy()}


def turn_columns(state: State, turn_log: np.ndarray) -> dict[str, Any]:
    """Columns of the turns table: one row per turn 1..end turn and seat (sim.engine.
    match.turn_rows): turn, seat, TURN_LOG_FIELDS, science_gained, units ((rows, U)
    int64, the seat's units alive by type)."""
    n_seats = int(state["n_seats"][0])
    last = min(int(state["turn"][0]), turn_log.shape[0] - 1)
    n_rows = max(last, 0) * n_seats
    log = state["event_log"][: min(int(state["n_events"][0]), state["event_log"].shape[0])]
    research = log[(log[:, COL_KIND] == _KIND["research"]) & (log[:, COL_TURN] <= last)]
    spent = np.zeros((max(last, 0) + 2, n_seats), dtype=np.int64)
    np.add.at(spent, (research[:, COL_TURN], research[:, COL_SEAT]), research[:, COL_B])
    stock = turn_log[: last + 1, :n_seats, LOG_SCIENCE_STOCK].copy()
    if stock.shape[0]:
        stock[0] = 0
    gained = stock[1:] - stock[:-1] + spent[1: last + 1]
    fields = turn_log[1: last + 1, :n_seats, :TURN_FIELDS].reshape(n_rows, TURN_FIELDS)
    out: dict[str, Any] = {
        "turn": np.repeat(np.arange(1, last + 1, dtype=np.int64), n_seats),
        "seat": np.tile(np.arange(n_seats, dtype=np.int64), max(last, 0))}
    for k, name in enumerate(TURN_LOG_FIELDS):
        out[name] = fields[:, k].copy()
    out["science_gained"] = gained.reshape(n_rows)
    out["units"] = turn_log[1: last + 1, :n_seats, TURN_FIELDS:].reshape(n_rows, -1).copy()
    return out


TRUCE_SIDES = ("buyer", "seller")
TRUCE_HELD = (("cities", LOG_CITIES_HELD), ("score", LOG_SCORE))


def truce_columns(state: State, turn_log: np.ndarray, log: np.ndarray) -> dict[str, Any]:
    """Columns of the truces table (D9): one row per truce offer, accepted (a `truce`
    event) or declined (`truce_declined`), in log order: offer (its index in the
    match), turn, buyer, seller, price, turns, accepted, then for each side what it
    held (turn_log's cities_held and score) at the end of the turn before the offer
    (`*_before`; turn 1 for an offer on turn 1) and TRUCE_AFTER_TURNS turns after it,
    or at the match's last turn if sooner (`*_after`, read at `after_turn`). log: the
    raw event log (n, EVENT_FIELDS)."""
    kind = log[:, COL_KIND]
    rows = np.flatnonzero((kind == _KIND["truce"]) | (kind == _KIND["truce_declined"]))
    offers = log[rows]
    turn = offers[:, COL_TURN]
    last = max(min(int(state["turn"][0]), turn_log.shape[0] - 1), 0)
    before = np.clip(turn - 1, 1, last)   # turn rows start at turn 1
    after = np.minimum(turn + TRUCE_AFTER_TURNS, last)
    out: dict[str, Any] = {
        "offer": np.arange(rows.shape[0], dtype=np.int64), "turn": turn.copy(),
        "buyer": offers[:, COL_SEAT].copy(), "seller": offers[:, COL_BY].copy(),
        "price": offers[:, COL_B].copy(), "turns": offers[:, COL_A].copy(),
        "accepted": offers[:, COL_KIND] == _KIND["truce"], "after_turn": after}
    for side, seat in zip(TRUCE_SIDES, (out["buyer"], out["seller"]), strict=True):
        for name, field in TRUCE_HELD:
            out[f"{side}_{name}_before"] = turn_log[before, seat, field].astype(np.int64)
            out[f"{side}_{name}_after"] = turn_log[after, seat, field].astype(np.int64)
    return out


def seat_rows(state: State, tables: Tables, board: Board, turn_log: np.ndarray,
              log: np.ndarray) -> list[dict[str, Any]]:
    """The seats table's rows of a finished match (sim.engine.match.outcome's seats),
    without the event dicts: log is the raw event log (n, EVENT_FIELDS)."""
    terms, _counts, score, rank = scores(state, tables.arrays(), board)
    n_seats = int(state["n_seats"][0])
    n_cities = int(state["n_cities"][0])
    city_tile = state["city_tile"][:n_cities]
    city_owner = state["city_owner"][:n_cities]
    city_pop = state["city_pop"][:n_cities]
    kind, seat, by = log[:, COL_KIND], log[:, COL_SEAT], log[:, COL_BY]
    turn = log[:, COL_TURN]
    captured = _IS_CAPTURED[kind]
    n_techs = len(tables.tech_names)
    names = tables.personality_names
    # the turn of each seat's first event of a kind: the rows of the kind once, not a
    # pass over the whole log per seat and kind
    firsts: dict[str, dict[int, int]] = {}
    for name in ("observatory_queued", "observatory_lost", "observatory_completed"):
        rows = np.flatnonzero(kind == _KIND[name])
        firsts[name] = {}
        for s_, t_ in zip(seat[rows].tolist(), turn[rows].tolist(), strict=True):
            firsts[name].setdefault(s_, t_)

    def first_turn(name: str, s: int) -> int | None:
        return firsts[name].get(s)

    # per-seat counts in one pass each (owners and seats outside 0..n_seats-1 drop out)
    def per_seat(owners: np.ndarray, weights: np.ndarray | None = None) -> list[int]:
        keep = (owners >= 0) & (owners < n_seats)
        counts = np.bincount(owners[keep], None if weights is None else weights[keep],
                             minlength=n_seats)
        return [int(x) for x in counts[:n_seats]]

    held = city_tile >= 0
    cities = per_seat(city_owner[held])
    population = per_seat(city_owner[held], city_pop[held].astype(np.float64))
    capitals_lost = per_seat(seat[kind == _KIND["capital_fall"]])
    cities_captured = per_seat(by[captured])
    # each field read once, as Python ints: a record's field costs a lookup per read
    personality = state["seat_personality"][:n_seats].tolist()
    skill = state["seat_skill"][:n_seats].tolist()
    alive = state["seat_alive"][:n_seats].tolist()
    eliminated_turn = state["seat_eliminated_turn"][:n_seats].tolist()
    gold_stock = state["seat_gold"][:n_seats].tolist()
    techs = state["seat_techs"][:n_seats, :n_techs].sum(axis=1).tolist()
    science_unspent = state["seat_science"][:n_seats].tolist()
    peak_dominance = turn_log[:, :n_seats, LOG_DOMINANCE].max(axis=0).tolist() \
        if turn_log.size else [0] * n_seats
    points = terms.tolist()
    rows = []
    for s in range(n_seats):
        eliminated = eliminated_turn[s]
        rows.append({
            "seat": s, "personality": names[personality[s]],
            "skill": skill[s], "forbid": forbid_text(state, tables, s),
            "alive": bool(alive[s]), "rank": int(rank[s]),
            "score": int(score[s]),
            **{f"{term}_points": points[s][k] for k, term in enumerate(SCORE_TERMS)},
            "gold_stock": gold_stock[s], "cities": cities[s],
            "population": population[s],
            "techs": techs[s],
            "eliminated_turn": eliminated if eliminated >= 0 else None,
            "capitals_lost": capitals_lost[s],
            "cities_captured": cities_captured[s],
            "observatory_queued_turn": first_turn("observatory_queued", s),
            "observatory_lost_turn": first_turn("observatory_lost", s),
            "observatory_completed_turn": first_turn("observatory_completed", s),
            "peak_dominance": peak_dominance[s],
            "science_unspent": science_unspent[s],
        })
    return rows


def match_columns(state: State, tables: Tables, board: Board, turn_log: np.ndarray,
                  seed: int, match_index: int) -> dict[str, Any]:
    """One finished match for the outcome tables: {"match": the matches row (dict),
    "seats": rows (dicts), "events": event_columns, "turns": turn_columns, "truces":
    truce_columns}."""
    cap = state["event_log"].shape[0]
    n_events = int(state["n_events"][0])
    log = state["event_log"][: min(n_events, cap)]
    winner = int(state["winner"][0])
    victory = int(state["victory"][0])
    match = {"seed": seed, "match_index": match_index, "tables_hash": tables.hash,
             "seats": int(state["n_seats"][0]), "length": int(state["last_turn"][0]),
             "winner": winner if winner >= 0 else None,
             "victory": VICTORY_NAMES[victory] if victory >= 0 else None,
             "end_turn": int(state["turn"][0]), "events_dropped": max(n_events - cap, 0)}
    return {"match": match, "seats": seat_rows(state, tables, board, turn_log, log),
            "events": event_columns(log, tables), "turns": turn_columns(state, turn_log),
            "truces": truce_columns(state, turn_log, log)}


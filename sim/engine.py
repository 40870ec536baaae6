"""Python face of the rules engine: command names, refusal texts, the state report.

Rule logic lives in sim.kernels; this module only translates between the
kernels' integer codes and the words and JSON a designer reads.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sim.board import Board
from sim.kernels import reasons as R
from sim.kernels.capture import capture_city, enter_check
from sim.kernels.combat import resolve_attack
from sim.kernels.commands import (
    C_ATTACK,
    C_BUY_TILE,
    C_END_TURN,
    C_ENTER,
    C_FOUND,
    C_MOVE,
    C_QUEUE,
    C_REPAIR,
    C_RESEARCH,
    C_RUSH,
    C_SET_SEAT,
    C_TRUCE,
    buy_tile,
    buy_truce,
    found_city,
    move_unit,
    queue_item,
    repair,
    research,
    rush,
    set_seat,
)
from sim.kernels.common import regions, scores
from sim.kernels.events import (
    EV_CAPITAL_FALL,
    EV_KEPT,
    EV_TRANSFER,
    EVENT_NAMES,
)
from sim.kernels.flow import end_turn
from sim.kernels.territory import dominance_shares
from sim.state import BANDIT, NEUTRAL, REVOLT_CAUSES, VICTORY_NAMES, State, arrays_of
from sim.tables import Tables

# scenario `do` name -> (kernel code, required keys)
COMMANDS: dict[str, tuple[int, tuple[str, ...]]] = {
    "move": (C_MOVE, ("unit", "to")),
    "attack": (C_ATTACK, ("unit", "target")),
    "enter": (C_ENTER, ("unit", "city")),
    "found": (C_FOUND, ("unit",)),
    "buy_tile": (C_BUY_TILE, ("city", "at")),
    "queue": (C_QUEUE, ("city", "item")),
    "rush": (C_RUSH, ("city",)),
    "repair": (C_REPAIR, ("city", "hp")),
    "research": (C_RESEARCH, ("tech",)),
    "truce": (C_TRUCE, ("with",)),
    "end_turn": (C_END_TURN, ()),
    "play_turns": (-1, ("n",)),
    "set_seat": (C_SET_SEAT, ("seat",)),
}

REASON_TEXT: dict[int, str] = {
    R.R_FINISHED: "the match is over",
    R.R_NO_UNIT: "unit {unit} is not on the board",
    R.R_NOT_YOUR_UNIT: "unit {unit} belongs to {unit_owner}, not seat {seat}",
    R.R_NO_MOVES: "unit {unit} has no moves left this turn",
    R.R_CANNOT_ATTACK: "unit {unit} ({unit_type}) cannot attack",
    R.R_OUT_OF_RANGE: "the target is out of range of unit {unit} ({unit_type})",
    R.R_NO_TARGET: "there is nothing to attack on that tile",
    R.R_ATTACK_OWN: "seat {seat} cannot attack its own side",
    R.R_TRUCE: "truce with seat {other}: cannot attack it or enter its cities",
    R.R_PACT: "pact with seat {other}: cannot attack it or enter its cities",
    R.R_CITY_AT_ZERO: "city {city} is already at 0 HP; enter it to capture",
    R.R_NO_CITY: "city {city} does not exist",
    R.R_NOT_YOUR_CITY: "city {city} belongs to {city_owner}, not seat {seat}",
    R.R_CITY_HAS_HP: "city {city} still has {city_hp} HP; it must be at 0 to be entered",
    R.R_NOT_ADJACENT: "unit {unit} is not next to city {city}",
    R.R_NOT_MELEE: "unit {unit} ({unit_type}) cannot capture: only melee fighting units do",
    R.R_IMPASSABLE: "that tile is impassable (mountain or water)",
    R.R_OCCUPIED: "another unit stands on that tile",
    R.R_FOREIGN_CITY: "that tile is another side's city; use enter to capture it",
    R.R_NO_PATH: "no path within the unit's moves left",
    R.R_NOT_SETTLER: "unit {unit} ({unit_type}) cannot found cities",
    R.R_TOO_CLOSE: "too close to another city: cities stay at least {min_distance} steps apart",
    R.R_IN_REGION: "the tile lies inside a city's region",
    R.R_QUOTA: "seat {seat} already holds its quota of {quota} cities",
    R.R_CAPACITY: "no room for another city or unit in this match",
    R.R_BUY_NEUTRAL: "a neutral village has no region and cannot buy tiles",
    R.R_BUY_IN_REGION: "the tile already belongs to a region",
    R.R_BUY_NOT_ADJACENT: "the tile is not next to city {city}'s region",
    R.R_NO_GOLD: "not enough gold: {price} needed, seat {seat} has {gold}",
    R.R_QUEUE_FULL: "city {city}'s queue is full",
    R.R_TECH_MISSING: "seat {seat} does not know the tech {item} needs",
    R.R_ALREADY_BUILT: "city {city} already has {item}",
    R.R_ALREADY_QUEUED: "{item} is already in city {city}'s queue",
    R.R_ONE_PER_EMPIRE: "one {item} per empire: seat {seat} already holds or queues one",
    R.R_SETTLER_POP: "a settler needs a city of population {settler_pop} or more",
    R.R_QUEUE_EMPTY: "city {city}'s queue is empty",
    R.R_NOT_RUSHABLE: "{item} can never be bought or rushed with gold",
    R.R_NOTHING_TO_RUSH: "the front item is already paid for",
    R.R_HP_RANGE: "repair must be between 1 HP and the city's missing HP",
    R.R_TECH_KNOWN: "seat {seat} already knows {tech}",
    R.R_PREREQ: "{tech} needs its prerequisites first",
    R.R_NO_SCIENCE: "not enough science points for {tech}",
    R.R_BAD_SEAT: "no such seat to deal with",
    R.R_SEAT_OUT: "that seat is eliminated",
    R.R_TRUCE_EXISTS: "a truce with that seat is already running",
    R.R_BAD_ITEM: "unknown item",
    R.R_NO_AI: "play_turns needs the AI, which is not built yet",
}


def _enter(st, tb, board, unit, city, seat):
    why = enter_check(st, tb, board, unit, city, seat)
    if why == R.OK:
        capture_city(st, tb, board, unit, city, seat)
    return why


def _end_turn(st, tb, board, _a, _b, _seat):
    end_turn(st, tb, board)
    return R.OK


# kernel per command code, called as f(state, tb, board, a, b, seat). Scenarios
# dispatch here in Python rather than through the jitted `apply_command`, so a
# scenario compiles only the rules it exercises (a cold start stays short).
_KERNELS = {
    C_MOVE: move_unit,
    C_ATTACK: resolve_attack,
    C_ENTER: _enter,
    C_FOUND: lambda st, tb, board, a, _b, seat: found_city(st, tb, board, a, seat),
    C_BUY_TILE: buy_tile,
    C_QUEUE: lambda st, tb, _board, a, b, seat: queue_item(st, tb, a, b, seat),
    C_RUSH: lambda st, tb, _board, a, _b, seat: rush(st, tb, a, seat),
    C_REPAIR: lambda st, tb, _board, a, b, seat: repair(st, tb, a, b, seat),
    C_RESEARCH: lambda st, tb, _board, a, _b, seat: research(st, tb, a, seat),
    C_TRUCE: lambda st, tb, _board, a, _b, seat: buy_truce(st, tb, a, seat),
    C_END_TURN: _end_turn,
    C_SET_SEAT: lambda st, _tb, _board, a, _b, _seat: set_seat(st, a),
}


def run_command(state: State, tb: np.record, board: Board, code: int, a: int, b: int) -> int:
    """Apply one command as the active seat; the same kernels as `apply_command`."""
    if state.finished[0]:
        return R.R_FINISHED
    seat = np.int64(state.active_seat[0])
    return int(_KERNELS[code](state, tb, board, np.int64(a), np.int64(b), seat))


def owner_name(owner: int) -> int | str:
    if owner == NEUTRAL:
        return "neutral"
    if owner == BANDIT:
        return "bandit"
    return int(owner)


def item_name(tables: Tables, item: int) -> str:
    units = tables.unit_names
    return units[item] if item < len(units) else tables.building_names[item - len(units)]


def state_report(record: State, tables: Tables, board: Board) -> dict[str, Any]:
    """The JSON-ready report of SCENARIOS.md: turn, seats, cities, units, events."""
    tb = tables.arrays()
    terms, _counts, score, rank = scores(record, tb, board)
    tile_city = regions(record, tb, board)
    state = arrays_of(record)
    n_seats = int(state.n_seats[0])
    held, total = dominance_shares(state.city_tile, state.city_owner, n_seats)
    n_cities = int(state.n_cities[0])
    techs = tables.tech_names
    seats = []
    for s in range(n_seats):
        owned = [c for c in range(n_cities) if state.city_tile[c] >= 0 and state.city_owner[c] == s]
        cap = int(state.seat_capital[s])
        seats.append({
            "seat": s, "alive": bool(state.seat_alive[s]), "human": bool(state.seat_human[s]),
            "gold": int(state.seat_gold[s]), "science": int(state.seat_science[s]),
            "techs": [techs[k] for k in range(len(techs)) if state.seat_techs[s, k]],
            "capital": cap if cap >= 0 else None, "cities": owned,
            "dominance_counter": int(state.seat_dominance[s]),
            "dominance_share": float(held[s] / total) if total else 0.0,
            "score": int(score[s]), "rank": int(rank[s]),
            "score_terms": dict(zip(("region", "population", "cities", "gold", "monuments"),
                                    (int(x) for x in terms[s]), strict=True)),
            "eliminated_turn": int(state.seat_eliminated_turn[s])
            if state.seat_eliminated_turn[s] >= 0 else None,
        })
    cities = []
    for c in range(n_cities):
        if state.city_tile[c] < 0:
            continue
        region = sorted(board.axial(t) for t in np.flatnonzero(tile_city == c))
        bought = sorted(board.axial(t) for t in np.flatnonzero(state.tile_bought_by == c))
        hp_max = tb.hp_base + tb.hp_per_population * int(state.city_pop[c]) + int(
            (tb.building_hp * state.city_buildings[c]).sum())
        cities.append({
            "id": c, "seat": owner_name(int(state.city_owner[c])),
            "at": list(board.axial(int(state.city_tile[c]))), "pop": int(state.city_pop[c]),
            "hp": int(state.city_hp[c]), "hp_max": int(hp_max),
            "capital": bool(state.city_capital[c]), "revolt": int(state.city_revolt[c]),
            "revolt_cause": REVOLT_CAUSES[int(state.city_revolt_cause[c])],
            "region": [list(x) for x in region], "bought": [list(x) for x in bought],
            "buildings": [b for k, b in enumerate(tables.building_names)
                          if state.city_buildings[c, k]],
            "queue": [item_name(tables, int(i)) for i in state.city_queue[c] if i >= 0],
            "production": int(state.city_production[c]), "food": int(state.city_food[c]),
        })
    units = []
    for u in range(int(state.n_units[0])):
        t = int(state.unit_tile[u])
        units.append({
            "id": u, "seat": owner_name(int(state.unit_owner[u])),
            "type": "bandit" if state.unit_type[u] < 0 else tables.unit_names[state.unit_type[u]],
            "at": list(board.axial(t)) if t >= 0 else None, "hp": int(state.unit_hp[u]),
            "alive": t >= 0, "moves_left": int(state.unit_moves_left[u]),
        })
    winner = int(state.winner[0])
    victory = int(state.victory[0])
    return {
        "turn": int(state.turn[0]), "active_seat": int(state.active_seat[0]),
        "last_turn": int(state.last_turn[0]),
        "finished": bool(state.finished[0]), "winner": winner if winner >= 0 else None,
        "victory": VICTORY_NAMES[victory] if victory >= 0 else None,
        "tables_hash": tables.hash,
        "seats": seats, "cities": cities, "units": units,
        "camps": [list(board.axial(int(t))) for t in state.camp_tile if t >= 0],
        "events": event_list(record, tables, board),
    }


def event_list(state: State, tables: Tables, board: Board) -> list[dict[str, Any]]:
    """Event rows as dicts; a capital_fall carries its transferred and kept cities."""
    event_log = state["event_log"]
    n = min(int(state["n_events"][0]), event_log.shape[0])
    log = event_log[:n].tolist()
    out: list[dict[str, Any]] = []
    falls: dict[int, dict[str, Any]] = {}
    for i in range(n):
        turn, kind, seat, by, city, a, b, _c = log[i]
        name = EVENT_NAMES[kind]
        ev: dict[str, Any] = {"turn": turn, "kind": name}
        if seat != -1:
            ev["seat"] = owner_name(seat)
        if by != -1:
            ev["by"] = owner_name(by)
        if city >= 0:
            ev["city"] = city
        if kind == EV_CAPITAL_FALL:
            ev.update(transferred=[], kept=[], new_capital=a if a >= 0 else None)
            falls[i] = ev
        elif kind in (EV_TRANSFER, EV_KEPT):
            if a in falls:
                falls[a]["transferred" if kind == EV_TRANSFER else "kept"].append(city)
            ev["cause"] = a
        elif name == "eliminated":
            ev["cause"] = a
        elif name == "victory":
            ev["victory"] = VICTORY_NAMES[a]
        elif name in ("revolt_start", "revolt_end"):
            ev["cause"] = REVOLT_CAUSES[b]
            if name == "revolt_start":
                ev["turns"] = a
        elif name == "unrest":
            ev["turns"] = a
        elif name == "truce":
            ev.update(turns=a, price=b)
        elif name == "tile_bought":
            ev.update(at=list(board.axial(a)), price=b)
        elif name == "built":
            ev["item"] = item_name(tables, a)
        elif name == "capture":
            ev["unit"] = a
        elif name == "camp_cleared":
            ev.update(camp=a, gold=b)
        ev["row"] = i
        out.append(ev)
    return out

"""The JSON state report of SCENARIOS.md and the event list (kernel codes -> names)."""

from __future__ import annotations

from typing import Any

import numpy as np

from sim.engine.commands import item_name, owner_name
from sim.kernels.rules.standings import regions, scores
from sim.kernels.rules.territory import dominance_shares
from sim.rules.codes import (
    DAMAGE_SPLIT,
    DISBAND_CAUSES,
    EV_CAPITAL_FALL,
    EV_KEPT,
    EV_TRANSFER,
    EVENT_NAMES,
    FOOD,
    REVOLT_CAUSES,
    SCORE_TERMS,
    VICTORY_NAMES,
)
from sim.rules.tables import Tables
from sim.world.board import Board
from sim.world.state import (
    State,
    arrays_of,
)


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
            "score_terms": dict(zip(SCORE_TERMS,
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
        turn, kind, seat, by, city, a, b, c = log[i]
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
        elif name in ("truce", "truce_declined"):
            ev.update(turns=a, price=b)
        elif name == "tile_bought":
            ev.update(at=list(board.axial(a)), price=b)
        elif name == "built":
            ev["item"] = item_name(tables, a)
        elif name == "capture":
            ev["unit"] = a
        elif name == "camp_cleared":
            ev.update(camp=a, gold=b)
        elif name == "unit_disbanded":
            ev.update(unit=a, type=_unit_name(tables, b), cause=DISBAND_CAUSES[c])
        elif name == "attack":
            ev.update(attacker=_unit_name(tables, a),
                      target="city" if city >= 0 else _unit_name(tables, b),
                      damage=c % DAMAGE_SPLIT, taken=c // DAMAGE_SPLIT)
        elif name == "rush":
            ev.update(item=item_name(tables, a), gold=b)
        elif name == "research":
            ev.update(tech=tables.tech_names[a], cost=b)
        elif name == "repair":
            ev.update(hp=a, gold=b)
        elif name == "repairs":
            ev.update(cities=a, hp=b)
        elif name == "heals":
            ev.update(units=a, hp=b)
        ev["row"] = i
        out.append(ev)
    return out


def _unit_name(tables: Tables, unit_type: int) -> str:
    """A unit type's name; "bandit" for -1 (bandits have no type)."""
    return "bandit" if unit_type < 0 else tables.unit_names[unit_type]


def start_balance(state: State, tables: Tables, board: Board) -> list[dict[str, Any]]:
    """D1: each seat's start at the opening, as map generation weighed it: its capital's
    tile, passable tiles, resource nodes and food nodes within start_balance_radius,
    the worth those make (sim.kernels.world.starts.start_worth) and the distance to
    the nearest rival start."""
    tb = tables.arrays()
    n_seats = int(state.n_seats[0])
    radius = int(tb.start_balance_radius)
    terrain = state["tile_terrain"][: board.n_tiles]
    node = state["tile_node"][: board.n_tiles]
    starts = [int(state["city_tile"][state["seat_capital"][s]]) for s in range(n_seats)]
    rows = []
    for s, tile in enumerate(starts):
        near = board.distance[tile] <= radius
        land = near & tb.terrain_passable[terrain].astype(bool)
        nodes = land & (node >= 0)
        food = nodes & (node == FOOD)
        worth = int(land.sum() * tb.start_land_weight + nodes.sum() * tb.start_node_weight
                    + food.sum() * tb.start_food_weight)
        rival = min((int(board.distance[tile, o]) for o in starts if o != tile), default=0)
        rows.append({"seat": s, "at": list(board.axial(tile)), "land": int(land.sum()),
                     "nodes": int(nodes.sum()), "food": int(food.sum()), "worth": worth,
                     "nearest_rival": rival})
    return rows

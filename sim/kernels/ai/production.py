"""What the AI builds (C: Production queue, C: Units, C: Buildings, C: AI, D8).

Each idle city scores every legal item and draws among the near-best
(sim.kernels.ai.choice, `[ai.choice]`): a fighting unit while the army is
smaller than wanted (by cities held, military weight, war and the threat near
the city), a share of it ranged/siege, and only within what gold income can
keep (C: Economy upkeep); which unit of its role is itself a graded choice by
fighting value per cost (attack, defence, moves, HP), so every unit type is
built and a small change to a unit's stats is a small change in how often it
is built. A settler while a site is in reach (T07, B1), worth the score a city
brings (T13). Buildings by their yields times the personality weights, their
score points (T14) and, for a defence building, the threat; the Observatory
(V16) only in the seat's best production city. A building that shortens
transferred revolts (the Divan, V13; in our reading also those of the cities
its seat takes by a capital fall) is worth its military weight and war to a
seat that holds none yet. Queueing goes through `queue_item`, the command a scenario's
`queue` uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from sim.jit import njit
from sim.kernels.ai.choice import graded_pick
from sim.kernels.ai.gold import gold_income
from sim.kernels.ai.sites import best_site
from sim.kernels.ai.threats import in_score_phase
from sim.kernels.rules.cities import city_yield
from sim.kernels.rules.commands import queue_check, queue_item, seat_has_building
from sim.kernels.rules.seats import cities_held, forbidden_item, forbidden_tech
from sim.kernels.rules.territory import node_income
from sim.kernels.rules.units import is_military
from sim.rules.codes import (
    DISC_SIZES,
    DRAW_BUILD,
    DRAW_UNIT,
    FOOD,
    GOLD,
    OK,
    PERCENT,
    PRODUCTION,
    SCIENCE,
    W_ECONOMY,
    W_EXPANSION,
    W_MILITARY,
    W_SCIENCE,
)

if TYPE_CHECKING:
    from sim.rules.record import AIRecord, TableArrays
    from sim.world.board import Board
    from sim.world.state import State


class Forces(NamedTuple):
    """What the seat has as its production counts it (ai_production, int64 each):
    army: its fighting units; n_ranged: the ranged ones among them; n_settlers: its
    city founders; n_cities: the cities it holds. Each queued item adds to its count,
    so the record is rebuilt for each city's choice."""

    army: np.int64
    n_ranged: np.int64
    n_settlers: np.int64
    n_cities: np.int64


class Room(NamedTuple):
    """What is left for an item to add (D10), as ai_production reads it (int64 / bool):
    turns_left: the match's turns after this one; production: the city's production
    per turn; science_open: whether more science can still buy a tech the seat may
    research before the match ends (D7: science after the last tech adds nothing)."""

    turns_left: np.int64
    production: np.int64
    science_open: bool


@njit
def turns_after(tb: TableArrays, room: Room, cost: np.int64) -> np.int64:
    """D10: the turns left in the match once an item of `cost` completes at the
    city's production (0: it would not complete in time)."""
    build = (cost + room.production - 1) // max(room.production, np.int64(1))
    return max(room.turns_left - build, np.int64(0))


@njit
def span_pct(st: State, ai: AIRecord, after: np.int64) -> np.int64:
    """D10: the % of an item's full worth that `after` turns of effect give: in full
    over value_horizon_pct % of the match's turns (D6) or more, pro rata below."""
    horizon = max(st.last_turn[0] * ai.value_horizon_pct // PERCENT, np.int64(1))
    return min(after, horizon) * PERCENT // horizon


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def unit_values(st: State, tb: TableArrays, ai: AIRecord, seat: np.int64,
                ranged: bool) -> np.ndarray:
    """(U,) fighting value per cost of every military unit of the role (ranged or
    melee) the seat can build, 0 for the others.

    Melee: attack × (melee_attack_weight + military weight) + defence ×
    melee_defence_weight + moves beyond the first × melee_moves_weight + HP ×
    melee_hp_weight; ranged: attack × (its city_attack_pct + ranged_unit_attack_weight)
    + defence × ranged_defence_weight; both × pick_value_scale / (cost +
    pick_cost_offset)."""
    n = tb.unit_cost.shape[0]
    out = np.zeros(n, dtype=np.int64)
    for u in range(n):
        if not is_military(tb, u) or (tb.unit_range[u] > 0) != ranged:
            continue
        if tb.unit_tech[u] >= 0 and not st.seat_techs[seat, tb.unit_tech[u]]:
            continue
        if forbidden_item(st, n, seat, u):   # planned around, never attempted
            continue
        if ranged:
            v = tb.unit_attack[u] * (tb.unit_city_attack_pct[u] + ai.ranged_unit_attack_weight) + \
                tb.unit_defence[u] * ai.ranged_defence_weight
        else:
            v = tb.unit_attack[u] * (ai.melee_attack_weight + ai.weights[W_MILITARY]) + \
                tb.unit_defence[u] * ai.melee_defence_weight + \
                (tb.unit_moves[u] - 1) * ai.melee_moves_weight + tb.unit_hp[u] * ai.melee_hp_weight
        out[u] = max(v * ai.pick_value_scale // (tb.unit_cost[u] + ai.pick_cost_offset),
                     np.int64(1))
    return out


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def pick_unit(st: State, tb: TableArrays, ai: AIRecord, seat: np.int64,
              ranged: bool, city: np.int64) -> np.int64:
    """A unit of the role drawn among the near-best by `unit_values`
    (unit_band_pct) for `city`, or -1 when the seat can build none."""
    values = unit_values(st, tb, ai, seat, ranged)
    return graded_pick(st, seat, values, values.shape[0], ai.unit_band_pct,
                       np.int64(DRAW_UNIT), city)


@njit
def can_build_role(st: State, tb: TableArrays, seat: np.int64, ranged: bool) -> bool:
    for u in range(tb.unit_cost.shape[0]):
        if is_military(tb, u) and (tb.unit_range[u] > 0) == ranged and \
                (tb.unit_tech[u] < 0 or st.seat_techs[seat, tb.unit_tech[u]]) and \
                not forbidden_item(st, tb.unit_cost.shape[0], seat, u):
            return True
    return False


@njit
def building_value(st: State, tb: TableArrays, ai: AIRecord, seat: np.int64, city: np.int64,
                   b: np.int64, threat: np.int64, obs_home: np.int64, at_war: bool,
                   room: Room) -> np.int64:
    """Utility of queueing building `b` in `city` (0: not wanted), before the cost.

    D10: its yields, defence and revolt shortening count over the turns left once it
    completes (span_pct); food counts only while the city can still grow
    (growth_room population below max_population in full, pro rata nearer, nothing
    at the cap), science only while a tech is left to buy (room.science_open);
    score points and the Observatory only when it completes before the end."""
    after = turns_after(tb, room, tb.building_cost[b])
    if after <= 0:
        return 0
    span = span_pct(st, ai, after)
    w = ai.weights
    y = tb.building_yield[b]
    growth = min(max(tb.max_population - st.city_pop[city], np.int64(0)), ai.growth_room)
    science = y[SCIENCE] * w[W_SCIENCE] if room.science_open else 0
    # production serves the economy and the army alike: the mean of their weights
    v = (y[FOOD] * w[W_EXPANSION] * growth // ai.growth_room +
         y[PRODUCTION] * (w[W_ECONOMY] + w[W_MILITARY]) // 2 +
         y[GOLD] * w[W_ECONOMY] + science) * ai.building_yield_value
    if tb.building_defence_pct[b] > 0:
        v += threat * ai.defence_threat_value + \
            w[W_MILITARY] * ai.defence_military_pct // PERCENT
    # V13, our reading: a Divan also shortens the revolts of the cities its seat takes
    # by a capital fall, so one serves them all and a second adds nothing
    if tb.building_revolt_shorten[b] > 0 and not seat_has_building(st, tb, seat, b):
        v += ai.revolt_building_value * w[W_MILITARY] // PERCENT
        if at_war:
            v += ai.revolt_war_value
    v = v * span // PERCENT
    if tb.building_score_points[b] > 0:   # T13, T14: points count whenever held at the end
        late = st.turn[0] * PERCENT > st.last_turn[0] * ai.late_game_pct or \
            in_score_phase(st, ai)
        v += tb.building_score_points[b] * (ai.score_building_late_value if late
                                            else ai.score_building_value)
    if tb.building_science_victory[b]:
        if city != obs_home:
            return 0
        v = w[W_SCIENCE] * ai.science_victory_value
    return v * ai.building_value_scale // (tb.building_cost[b] + ai.building_cost_offset)


@njit
def choose_item(st: State, tb: TableArrays, ai: AIRecord, board: Board, path: np.ndarray,
                seat: np.int64, city: np.int64, threat: np.int64, forces: Forces,
                afford: bool, at_war: bool, obs_home: np.int64,
                tile_city: np.ndarray, room: Room) -> np.int64:
    """The queue item drawn among the near-best by utility (band_pct) for this city, or -1.

    Units: the army wanted grows with the cities held and the military weight
    (army_base_pct, army_military_pct), with war and with the threat near the
    city; no new unit while upkeep would pass upkeep_share_pct of gold income
    (`afford`) unless the city is threatened. A share of the army (siege_share_pct)
    is ranged/siege. Buildings: `building_value`; the Observatory only in the seat's
    best production city (`obs_home`). forces: what the seat has (Forces);
    tile_city: (T,) owning city or -1. D10 (room: Room): nothing that would complete
    after the last turn; a settler's expansion counts over the turns left (span_pct).
    """
    army = forces.army
    n_ranged = forces.n_ranged
    n_cities = forces.n_cities
    n_settlers = forces.n_settlers
    n_units = tb.unit_cost.shape[0]
    n_b = tb.building_cost.shape[0]
    w = ai.weights
    # options: [0, n_units) units, then buildings
    values = np.empty(n_units + n_b, dtype=np.int64)
    values[:] = 0
    has_melee = can_build_role(st, tb, seat, np.bool_(False))
    has_ranged = can_build_role(st, tb, seat, np.bool_(True))
    ranged = has_ranged and (not has_melee or
                             n_ranged * PERCENT < (army + 1) * ai.siege_share_pct)
    # under threat, with much of the army ranged, a melee unit holds the city
    if threat > 0 and has_melee and n_ranged * PERCENT > army * ai.threat_ranged_max_pct:
        ranged = False
    desired = n_cities * (ai.army_base_pct + w[W_MILITARY] * ai.army_military_pct // PERCENT) \
        // PERCENT
    if at_war:
        desired += n_cities * ai.war_army_pct // PERCENT + ai.war_army_extra
    desired += threat // ai.threat_per_unit
    if has_melee or has_ranged:
        u_val = w[W_MILITARY] * max(desired - army, 0) * ai.recruit_shortfall_value + \
            threat * ai.recruit_threat_value
        # early defence: the capital recruits its guard (home_guard units) first
        early = st.turn[0] * PERCENT < st.last_turn[0] * ai.guard_pct and \
            city == st.seat_capital[seat]
        if army < n_cities or (early and army < ai.home_guard):
            u_val += ai.recruit_garrison_value
        if not afford and threat == 0 and army >= n_cities:
            u_val = np.int64(0)
        if u_val > 0:
            unit = pick_unit(st, tb, ai, seat, ranged, city)
            if unit >= 0 and queue_check(st, tb, city, unit, seat) == OK and \
                    turns_after(tb, room, tb.unit_cost[unit]) > 0:
                values[unit] = u_val
    for b in range(n_b):
        v = building_value(st, tb, ai, seat, city, b, threat, obs_home, at_war, room)
        if v > 0 and queue_check(st, tb, city, n_units + b, seat) == OK:
            values[n_units + b] = v
    # settler, when a site is in reach of this city: worth its expansion and the score
    # a city brings (T13). The site search (the costly part) runs only when the settler
    # could be drawn: at or below the others' band floor its weight is 0 anyway.
    if n_cities + n_settlers < tb.quota and n_settlers < ai.max_settlers and threat == 0:
        for u in range(n_units):
            if tb.unit_founds_city[u] and queue_check(st, tb, city, u, seat) == OK:
                after = turns_after(tb, room, tb.unit_cost[u])
                points = tb.w_city + DISC_SIZES[tb.ring_radius] * tb.w_region
                v = (w[W_EXPANSION] * ai.settler_expansion_value -
                     n_cities * ai.settler_city_cost) * span_pct(st, ai, after) // PERCENT + \
                    points * ai.score_value_pct // PERCENT
                if after <= 0:
                    v = np.int64(0)
                others = np.int64(0)
                for i in range(n_units + n_b):
                    others = max(others, values[i])
                floor = others - max(others * ai.band_pct // PERCENT, np.int64(1))
                if v > 0 and (others <= 0 or v > floor):
                    site, _steps = best_site(st, tb, ai, board, path, seat, st.city_tile[city],
                                             tile_city)
                    if site >= 0:
                        values[u] = v
                break
    return graded_pick(st, seat, values, n_units + n_b, ai.band_pct, np.int64(DRAW_BUILD), city)


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def science_left(st: State, tb: TableArrays, seat: np.int64) -> bool:
    """D10, D7: whether more science could still buy something: the techs the seat
    may still research cost more than its science stock."""
    needed = np.int64(0)
    for t in range(tb.tech_cost.shape[0]):
        if not st.seat_techs[seat, t] and not forbidden_tech(st, seat, t):
            needed += tb.tech_cost[t]
    return needed > st.seat_science[seat]


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def best_production_city(st: State, tb: TableArrays, seat: np.int64,
                         nodes: np.ndarray) -> np.int64:
    """The seat's city with the most production (not in revolt), ties to the lowest ID.
    nodes: (C, 3) territory.node_income of the current regions."""
    best = np.int64(-1)
    best_p = np.int64(-1)
    for c in range(st.n_cities[0]):
        if st.city_tile[c] >= 0 and st.city_owner[c] == seat and st.city_revolt[c] == 0:
            p = city_yield(st, tb, c, nodes, np.int64(PRODUCTION))
            if p > best_p:
                best, best_p = c, p
    return best


@njit
def ai_production(st: State, tb: TableArrays, ai: AIRecord, board: Board, path: np.ndarray,
                  seat: np.int64, army: np.int64, n_ranged: np.int64, at_war: bool,
                  tile_city: np.ndarray, threats: np.ndarray, live: np.ndarray) -> None:
    """Queue one item in each of the seat's cities with an empty queue (`choose_item`);
    `army` and `n_ranged` count the seat's fighting and ranged units and grow with
    what is queued. threats: (C,) threats.city_threat of the seat's cities; live:
    rules.units.live_units (the units on the board, ascending)."""
    n_cities = cities_held(st, seat)
    n_settlers = np.int64(0)
    for u in live:
        if st.unit_tile[u] >= 0 and st.unit_owner[u] == seat and st.unit_type[u] >= 0 and \
                tb.unit_founds_city[st.unit_type[u]]:
            n_settlers += 1
    # one node table serves the income and the best city: queueing changes no region
    nodes = node_income(tile_city, st.tile_node, st.city_tile.shape[0], tb.node_yield)
    income = gold_income(st, tb, seat, nodes)
    obs_home = best_production_city(st, tb, seat, nodes)
    turns_left = max(st.last_turn[0] - st.turn[0], np.int64(0))
    science_open = science_left(st, tb, seat)
    for c in range(st.n_cities[0]):
        if st.city_tile[c] < 0 or st.city_owner[c] != seat or st.city_queue[c, 0] >= 0:
            continue
        over = max(army + 1 - tb.free_units_per_city * n_cities, 0) * tb.upkeep_per_unit
        afford = over * PERCENT <= income * ai.upkeep_share_pct
        threat = threats[c]
        # np.int64: one type for each field of the record (sim.jit)
        forces = Forces(np.int64(army), np.int64(n_ranged), np.int64(n_settlers),
                        np.int64(n_cities))
        room = Room(np.int64(turns_left), city_yield(st, tb, c, nodes, np.int64(PRODUCTION)),
                    np.bool_(science_open))
        item = choose_item(st, tb, ai, board, path, seat, c, threat, forces, afford, at_war,
                           obs_home, tile_city, room)
        if item >= 0 and queue_item(st, tb, c, item, seat) == OK:
            if item < tb.unit_cost.shape[0]:
                if tb.unit_founds_city[item]:
                    n_settlers += 1
                else:
                    army += 1
                    if tb.unit_range[item] > 0:
                        n_ranged += 1

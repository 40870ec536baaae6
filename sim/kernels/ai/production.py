"""What the AI builds (C: Production queue, C: Units, C: Buildings, C: AI).

Each idle city queues the item of highest utility (`[ai.army]`,
`[ai.expansion]`, `[ai.buildings]`): a fighting unit while the army is smaller
than wanted (by cities held, military weight, war and the threat near the city),
a share of it ranged/siege, and only within what gold income can keep (C:
Economy upkeep); a settler while a site is in reach (T07, B1); buildings by
their yields times the personality weights, the Observatory (V16) only in the
seat's best production city. Queueing goes through `queue_item`, the command a
scenario's `queue` uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.ai.gold import gold_income
from sim.kernels.ai.sites import best_site
from sim.kernels.ai.threats import city_threat
from sim.kernels.rules.commands import queue_check, queue_item
from sim.kernels.rules.common import cities_held, city_yields, is_military
from sim.kernels.rules.territory import node_income
from sim.rules.codes import (
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
    from sim.rules.record import TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit
def pick_units(st: State, tb: TableArrays, seat: np.int64, w: np.ndarray):
    """(melee, siege): the best melee unit by attack and defence per cost, and the
    best ranged unit by damage against cities per cost, that the seat can build
    (-1 for none). w: (4,) personality weights."""
    melee = -1
    melee_v = -1
    siege = -1
    siege_v = -1
    for u in range(tb.unit_cost.shape[0]):
        if not is_military(tb, u):
            continue
        if tb.unit_tech[u] >= 0 and not st.seat_techs[seat, tb.unit_tech[u]]:
            continue
        if tb.unit_range[u] > 0:
            v = (tb.unit_attack[u] * tb.unit_city_attack_pct[u] +
                 tb.unit_attack[u] * tb.ranged_unit_attack_weight +
                 tb.unit_defence[u] * tb.ranged_defence_weight) * tb.pick_value_scale // \
                (tb.unit_cost[u] + tb.pick_cost_offset)
            if v > siege_v:
                siege, siege_v = u, v
        else:
            v = (tb.unit_attack[u] * (tb.melee_attack_weight + w[W_MILITARY]) +
                 tb.unit_defence[u] * tb.melee_defence_weight) * tb.pick_value_scale // \
                (tb.unit_cost[u] + tb.pick_cost_offset)
            if v > melee_v:
                melee, melee_v = u, v
    return melee, siege


@njit
def choose_item(st: State, tb: TableArrays, board: Board, path: np.ndarray, seat: np.int64,
                city: np.int64, w: np.ndarray, threat: np.int64, army: np.int64,
                n_ranged: np.int64, n_cities: np.int64, n_settlers: np.int64, afford: bool,
                at_war: bool, obs_home: np.int64, tile_city: np.ndarray) -> np.int64:
    """The queue item with the highest utility for this city, or -1.

    Units: the army wanted grows with the cities held and the military weight
    (army_base_pct, army_military_pct), with war and with the threat near the
    city; no new unit while upkeep would pass upkeep_share_pct of gold income
    unless the city is threatened. A share of the army (siege_share_pct) is
    ranged/siege. Buildings by their yields times the personality weights; the
    Observatory only in the seat's best production city (`obs_home`).
    w: (4,) personality weights; tile_city: (T,) owning city or -1.
    """
    n_units = tb.unit_cost.shape[0]
    best = -1
    best_u = 0
    melee, siege = pick_units(st, tb, seat, w)
    unit = melee
    if siege >= 0 and (melee < 0 or n_ranged * PERCENT < (army + 1) * tb.siege_share_pct):
        unit = siege
    # under threat, with much of the army ranged, a melee unit holds the city
    if threat > 0 and melee >= 0 and n_ranged * PERCENT > army * tb.threat_ranged_max_pct:
        unit = melee
    desired = n_cities * (tb.army_base_pct + w[W_MILITARY] * tb.army_military_pct // PERCENT) \
        // PERCENT
    if at_war:
        desired += n_cities * tb.war_army_pct // PERCENT + tb.war_army_extra
    desired += threat // tb.threat_per_unit
    if unit >= 0:
        u_val = w[W_MILITARY] * max(desired - army, 0) * tb.recruit_shortfall_value + \
            threat * tb.recruit_threat_value
        if army < n_cities:
            u_val += tb.recruit_garrison_value
        if not afford and threat == 0 and army >= n_cities:
            u_val = 0
        if u_val > best_u and queue_check(st, tb, city, unit, seat) == OK:
            best, best_u = unit, u_val
    # settler, when a site is in reach of this city
    if n_cities + n_settlers < tb.quota and n_settlers < tb.max_settlers and threat == 0:
        for u in range(n_units):
            if tb.unit_founds_city[u] and queue_check(st, tb, city, u, seat) == OK:
                v = w[W_EXPANSION] * tb.settler_expansion_value - n_cities * tb.settler_city_cost
                if v > best_u:
                    site, _steps = best_site(st, tb, board, path, seat, st.city_tile[city],
                                             tile_city)
                    if site >= 0:
                        best, best_u = u, v
                break
    # buildings
    late = st.turn[0] * PERCENT > st.last_turn[0] * tb.late_game_pct
    for b in range(tb.building_cost.shape[0]):
        item = n_units + b
        y = tb.building_yield[b]
        # production serves the economy and the army alike: the mean of their weights
        v = (y[FOOD] * w[W_EXPANSION] + y[PRODUCTION] * (w[W_ECONOMY] + w[W_MILITARY]) // 2 +
             y[GOLD] * w[W_ECONOMY] + y[SCIENCE] * w[W_SCIENCE]) * tb.building_yield_value
        if tb.building_defence_pct[b] > 0:
            v += threat * tb.defence_threat_value + \
                w[W_MILITARY] * tb.defence_military_pct // PERCENT
        if tb.building_score_points[b] > 0:
            v += tb.building_score_points[b] * (tb.score_building_late_value if late
                                                else tb.score_building_value)
        if tb.building_revolt_shorten[b] > 0:
            v += tb.revolt_building_value
        if tb.building_science_victory[b]:
            if city != obs_home:
                continue
            v = w[W_SCIENCE] * tb.science_victory_value
        v = v * tb.building_value_scale // (tb.building_cost[b] + tb.building_cost_offset)
        if v > best_u and queue_check(st, tb, city, item, seat) == OK:
            best, best_u = item, v
    return best


@njit
def best_production_city(st: State, tb: TableArrays, seat: np.int64,
                         tile_city: np.ndarray) -> np.int64:
    """The seat's city with the most production (not in revolt), ties to the lowest ID."""
    nodes = node_income(tile_city, st.tile_node, st.city_tile.shape[0], tb.node_yield)
    best = -1
    best_p = -1
    for c in range(st.n_cities[0]):
        if st.city_tile[c] >= 0 and st.city_owner[c] == seat and st.city_revolt[c] == 0:
            p = city_yields(st, tb, c, nodes)[PRODUCTION]
            if p > best_p:
                best, best_p = c, p
    return best


@njit
def ai_production(st: State, tb: TableArrays, board: Board, path: np.ndarray, seat: np.int64,
                  w: np.ndarray, army: np.int64, n_ranged: np.int64, at_war: bool,
                  tile_city: np.ndarray) -> None:
    """Queue one item in each of the seat's cities with an empty queue (`choose_item`);
    `army` and `n_ranged` count the seat's fighting and ranged units and grow with
    what is queued."""
    n_cities = cities_held(st, seat)
    n_settlers = 0
    for u in range(st.n_units[0]):
        if st.unit_tile[u] >= 0 and st.unit_owner[u] == seat and st.unit_type[u] >= 0 and \
                tb.unit_founds_city[st.unit_type[u]]:
            n_settlers += 1
    income = gold_income(st, tb, seat, tile_city)
    obs_home = best_production_city(st, tb, seat, tile_city)
    for c in range(st.n_cities[0]):
        if st.city_tile[c] < 0 or st.city_owner[c] != seat or st.city_queue[c, 0] >= 0:
            continue
        over = max(army + 1 - tb.free_units_per_city * n_cities, 0) * tb.upkeep_per_unit
        afford = over * PERCENT <= income * tb.upkeep_share_pct
        threat = city_threat(st, tb, board, seat, c)
        item = choose_item(st, tb, board, path, seat, c, w, threat, army, n_ranged, n_cities,
                           n_settlers, afford, at_war, obs_home, tile_city)
        if item >= 0 and queue_item(st, tb, c, item, seat) == OK:
            if item < tb.unit_cost.shape[0]:
                if tb.unit_founds_city[item]:
                    n_settlers += 1
                else:
                    army += 1
                    if tb.unit_range[item] > 0:
                        n_ranged += 1

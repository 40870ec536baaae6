"""The utility AI that plays every seat (C: AI), inside numba.

Each seat turn, after its flow: research, diplomacy, production, gold, then
unit orders. Every action goes through the same rule kernels a scenario
command uses (commands.py, combat.py, capture.py), so the AI can only play
legal moves. Its utilities multiply by the seat's personality weights
(expansion, military, science, economy; 0–100) from the tables.

Production keeps an army sized by cities held and military weight, a share of
it ranged/siege, within what gold income can keep; settlers only while a site
is in reach; the Observatory (V16) in the seat's best production city. Units:
ranged units act first, then melee units, so these can enter what the ranged
ones brought to 0 HP (V05). The army marches on one war target, valued by
population, capital (and the cities its fall passes on, V08), buildings,
the owner's running dominance counter (V18) and an announced Observatory
(V16); a target that threatens to win is assaulted at once. Next to the target
the melee units strike together and keep one fresh to enter. Units too hurt to
survive a city's retaliation (units never heal) leave the siege ring. While its
own dominance counter runs, a seat sends each unit at the nearest rival city.

Pathing reads a passable-tile distance table (`path`, (T, T) int64, -1 not
computed yet) filled one row per target on demand by breadth-first search over
passable terrain, so each row is computed at most once per map.

Ties between equally good options break by the lowest ID; nothing depends on
set or dict order, and the AI draws no random numbers.
"""

from __future__ import annotations

import numpy as np

from sim.jit import njit
from sim.kernels.rules.capture import capture_city, enter_check
from sim.kernels.rules.combat import (
    attack_outcome,
    city_defence_strength,
    may_attack_owner,
    resolve_attack,
)
from sim.kernels.rules.commands import (
    buy_tile,
    buy_truce,
    found_check,
    found_city,
    move_unit,
    queue_check,
    queue_item,
    repair,
    research,
    rush,
    rush_price,
)
from sim.kernels.rules.common import (
    cities_held,
    city_yields,
    is_military,
    max_hp,
    regions,
)
from sim.kernels.rules.events import (
    log_event,
)
from sim.kernels.rules.territory import node_income, tile_price
from sim.rules.codes import (
    BANDIT,
    EV_PACT,
    FAR,
    NEUTRAL,
    OK,
    TARGET_CITY,
    W_ECONOMY,
    W_EXPANSION,
    W_MILITARY,
    W_SCIENCE,
)


@njit
def path_row(st, tb, board, path: np.ndarray, target: np.int64) -> np.ndarray:
    """Steps over passable tiles from every tile to `target` (row of `path`), -1 unreachable."""
    if path[target, target] == 0:
        return path[target]
    n = st.n_tiles[0]
    row = path[target]
    for t in range(n):
        row[t] = -1
    queue = np.empty(n, dtype=np.int64)
    head = 0
    tail = 0
    row[target] = 0
    queue[tail] = target
    tail += 1
    while head < tail:
        t = queue[head]
        head += 1
        for k in range(6):
            m = board.neighbours[t, k]
            if m >= 0 and row[m] < 0 and tb.terrain_passable[st.tile_terrain[m]]:
                row[m] = row[t] + 1
                queue[tail] = m
                tail += 1
    return row


@njit
def hostile_owner(st, seat: np.int64, owner: np.int64) -> bool:
    """A side `seat` may fight: bandits, villages, and seats without truce or pact (V07)."""
    return may_attack_owner(st, seat, owner) == OK


@njit
def city_threat(st, tb, board, seat: np.int64, city: np.int64) -> np.int64:
    """Attack strength of hostile fighting units within 3 steps of `city`."""
    home = st.city_tile[city]
    total = 0
    for u in range(st.n_units[0]):
        t = st.unit_tile[u]
        if t < 0 or board.distance[home, t] > 3:
            continue
        owner = st.unit_owner[u]
        if owner == seat or owner == BANDIT:
            continue
        if not is_military(tb, st.unit_type[u]) or not hostile_owner(st, seat, owner):
            continue
        total += tb.unit_attack[st.unit_type[u]]
    return total


@njit
def observatory_queued_by(st, tb, seat: np.int64) -> np.int64:
    """City where `seat` has the science building queued, or -1 (announced: V16)."""
    code = tb.unit_cost.shape[0] + tb.observatory
    for c in range(st.n_cities[0]):
        if st.city_tile[c] >= 0 and st.city_owner[c] == seat:
            for k in range(st.city_queue.shape[1]):
                if st.city_queue[c, k] == code:
                    return c
    return -1


# ---------------------------------------------------------------- research


@njit
def ai_research(st, tb, seat: np.int64, w: np.ndarray) -> None:
    """Save for the available tech the personality values most per point; buy when affordable."""
    n = tb.tech_cost.shape[0]
    best = -1
    best_u = -1
    for t in range(n):
        if st.seat_techs[seat, t]:
            continue
        ok = True
        for p in range(n):
            if tb.tech_requires[t, p] and not st.seat_techs[seat, p]:
                ok = False
        if not ok:
            continue
        u = (10 + w[tb.tech_focus[t]]) * 1000 // (tb.tech_cost[t] + 10)
        if u > best_u:
            best, best_u = t, u
    if best >= 0 and st.seat_science[seat] >= tb.tech_cost[best]:
        research(st, tb, best, seat)


# ---------------------------------------------------------------- diplomacy


@njit
def ai_diplomacy(st, tb, board, seat: np.int64) -> None:
    """Join or refresh a pact against a seat whose dominance counter runs or that
    announced the Observatory (C: Diplomacy); buy a truce when losing a war."""
    n = st.n_seats[0]
    for x in range(n):
        if x == seat or not st.seat_alive[x]:
            continue
        threat = st.seat_dominance[x] >= tb.pact_dominance_trigger or \
            observatory_queued_by(st, tb, x) >= 0
        slot = -1
        for p in range(st.pact_target.shape[0]):
            if st.pact_target[p] == x:
                slot = p
        if not threat:
            continue
        if slot < 0:
            for p in range(st.pact_target.shape[0]):
                if st.pact_target[p] < 0:
                    slot = p
                    break
            if slot < 0:
                continue
            st.pact_target[slot] = x
            from_log_pact(st, slot)
        st.pact_members[slot, seat] = 1
        st.pact_turns[slot] = tb.pact_turns
    # sue for peace: a city lost within 3 turns and a hostile army near home
    if st.seat_lost_turn[seat] >= 0 and st.turn[0] - st.seat_lost_turn[seat] <= 3:
        worst = -1
        worst_n = 0
        for x in range(n):
            if x == seat or not st.seat_alive[x] or st.truce_turns[seat, x] > 0:
                continue
            near = 0
            for u in range(st.n_units[0]):
                t = st.unit_tile[u]
                if t < 0 or st.unit_owner[u] != x or not is_military(tb, st.unit_type[u]):
                    continue
                for c in range(st.n_cities[0]):
                    if st.city_owner[c] == seat and st.city_tile[c] >= 0 and \
                            board.distance[t, st.city_tile[c]] <= 3:
                        near += 1
                        break
            if near > worst_n:
                worst, worst_n = x, near
        if worst >= 0 and worst_n >= 2 and st.seat_dominance[worst] < tb.pact_dominance_trigger:
            buy_truce(st, tb, worst, seat)


@njit
def from_log_pact(st, slot: np.int64) -> None:
    log_event(st.event_log, st.n_events, st.turn[0], EV_PACT, st.pact_target[slot], -1, -1,
              slot, 0, 0)


# ---------------------------------------------------------------- production


@njit
def site_value(st, tb, board, t: np.int64) -> np.int64:
    """Worth of founding on `t`: passable tiles and resource nodes of its radius-1 ring."""
    v = 0
    for k in range(7):
        m = board.disc[t, k]
        if m >= 0 and tb.terrain_passable[st.tile_terrain[m]]:
            v += 2
            if st.tile_node[m] >= 0:
                v += 4
    return v


@njit
def best_site(st, tb, board, path: np.ndarray, seat: np.int64, from_tile: np.int64,
              tile_city: np.ndarray):
    """(tile, steps) of the best founding site for a settler at `from_tile`, or (-1, 0).

    A site is passable, in no region, city_min_distance from every city (T07);
    its value counts passable tiles and resource nodes around it, less its
    distance.
    """
    n = st.n_tiles[0]
    best = -1
    best_v = -FAR
    best_steps = 0
    for t in range(n):
        if not tb.terrain_passable[st.tile_terrain[t]] or tile_city[t] >= 0:
            continue
        d = board.distance[from_tile, t]
        if d > 10:
            continue
        ok = True
        for c in range(st.n_cities[0]):
            if st.city_tile[c] >= 0 and board.distance[t, st.city_tile[c]] < tb.city_min_distance:
                ok = False
                break
        if not ok:
            continue
        v = site_value(st, tb, board, t) - 3 * d
        if v > best_v:
            best, best_v = t, v
    if best >= 0:
        row = path_row(st, tb, board, path, best)
        best_steps = row[from_tile]
        if best_steps < 0:
            return -1, 0
    return best, best_steps


@njit
def pick_units(st, tb, seat: np.int64, w: np.ndarray):
    """(melee, siege): the best melee unit by attack and defence per cost, and the
    best ranged unit by damage against cities per cost, that the seat can build."""
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
            v = (tb.unit_attack[u] * tb.unit_city_attack_pct[u] + tb.unit_attack[u] * 100 +
                 tb.unit_defence[u] * 50) * 10 // (tb.unit_cost[u] + 5)
            if v > siege_v:
                siege, siege_v = u, v
        else:
            v = (tb.unit_attack[u] * (100 + w[W_MILITARY]) + tb.unit_defence[u] * 100) * 10 // \
                (tb.unit_cost[u] + 5)
            if v > melee_v:
                melee, melee_v = u, v
    return melee, siege


@njit
def choose_item(st, tb, board, path: np.ndarray, seat: np.int64, city: np.int64,
                w: np.ndarray, threat: np.int64, army: np.int64, n_ranged: np.int64,
                n_cities: np.int64, n_settlers: np.int64, afford: bool, at_war: bool,
                obs_home: np.int64, tile_city: np.ndarray) -> np.int64:
    """The queue item with the highest utility for this city, or -1.

    Units: the army wanted grows with the cities held and the military weight
    (army_base_pct, army_military_pct), with war and with the threat near the
    city; no new unit while upkeep would pass upkeep_share_pct of gold income
    unless the city is threatened. A share of the army (siege_share_pct) is
    ranged/siege. Buildings by their yields times the personality weights; the
    Observatory only in the seat's best production city (`obs_home`).
    """
    n_units = tb.unit_cost.shape[0]
    best = -1
    best_u = 0
    melee, siege = pick_units(st, tb, seat, w)
    unit = melee
    if siege >= 0 and (melee < 0 or n_ranged * 100 < (army + 1) * tb.siege_share_pct):
        unit = siege
    if threat > 0 and melee >= 0 and n_ranged * 2 > army:
        unit = melee
    desired = n_cities * (tb.army_base_pct + w[W_MILITARY] * tb.army_military_pct // 100) // 100
    if at_war:
        desired += n_cities // 2 + 1
    desired += threat // 4
    if unit >= 0:
        u_val = w[W_MILITARY] * max(desired - army, 0) * 2 + threat * 30
        if army < n_cities:
            u_val += 150
        if not afford and threat == 0 and army >= n_cities:
            u_val = 0
        if u_val > best_u and queue_check(st, tb, city, unit, seat) == OK:
            best, best_u = unit, u_val
    # settler, when a site is in reach of this city
    if n_cities + n_settlers < tb.quota and n_settlers < 2 and threat == 0:
        for u in range(n_units):
            if tb.unit_founds_city[u] and queue_check(st, tb, city, u, seat) == OK:
                v = w[W_EXPANSION] * 6 - n_cities * 40
                if v > best_u:
                    site, _steps = best_site(st, tb, board, path, seat, st.city_tile[city],
                                             tile_city)
                    if site >= 0:
                        best, best_u = u, v
                break
    # buildings
    late = st.turn[0] * 2 > st.last_turn[0]
    for b in range(tb.building_cost.shape[0]):
        item = n_units + b
        y = tb.building_yield[b]
        v = (y[0] * w[W_EXPANSION] + y[1] * (w[W_ECONOMY] + w[W_MILITARY]) // 2 +
             y[2] * w[W_ECONOMY] + y[3] * w[W_SCIENCE]) * 2
        if tb.building_defence_pct[b] > 0:
            v += threat * 20 + w[W_MILITARY] // 2
        if tb.building_score_points[b] > 0:
            v += tb.building_score_points[b] * (20 if late else 4)
        if tb.building_revolt_shorten[b] > 0:
            v += 10
        if tb.building_science_victory[b]:
            if city != obs_home:
                continue
            v = w[W_SCIENCE] * 12
        v = v * 30 // (tb.building_cost[b] + 10)
        if v > best_u and queue_check(st, tb, city, item, seat) == OK:
            best, best_u = item, v
    return best


@njit
def gold_income(st, tb, seat: np.int64, tile_city: np.ndarray) -> np.int64:
    """Gold the seat's cities yield per flow (revolting cities: none)."""
    nodes = node_income(tile_city, st.tile_node, st.city_tile.shape[0], tb.node_yield)
    total = 0
    for c in range(st.n_cities[0]):
        if st.city_tile[c] >= 0 and st.city_owner[c] == seat and st.city_revolt[c] == 0:
            total += city_yields(st, tb, c, nodes)[2]
    return total


@njit
def best_production_city(st, tb, seat: np.int64, tile_city: np.ndarray) -> np.int64:
    """The seat's city with the most production (not in revolt), ties to the lowest ID."""
    nodes = node_income(tile_city, st.tile_node, st.city_tile.shape[0], tb.node_yield)
    best = -1
    best_p = -1
    for c in range(st.n_cities[0]):
        if st.city_tile[c] >= 0 and st.city_owner[c] == seat and st.city_revolt[c] == 0:
            p = city_yields(st, tb, c, nodes)[1]
            if p > best_p:
                best, best_p = c, p
    return best


@njit
def ai_production(st, tb, board, path: np.ndarray, seat: np.int64, w: np.ndarray,
                  army: np.int64, n_ranged: np.int64, at_war: bool,
                  tile_city: np.ndarray) -> None:
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
        afford = over * 100 <= income * tb.upkeep_share_pct
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


# ---------------------------------------------------------------- gold


@njit
def ai_gold(st, tb, board, seat: np.int64, w: np.ndarray) -> None:
    """Repair and rush where threatened; rush and buy node tiles with spare gold."""
    reserve = tb.truce_price if st.seat_lost_turn[seat] >= 0 else 0
    for c in range(st.n_cities[0]):
        if st.city_tile[c] < 0 or st.city_owner[c] != seat:
            continue
        threat = city_threat(st, tb, board, seat, c)
        missing = max_hp(st, tb, c) - st.city_hp[c]
        if threat > 0 and missing > 0:
            hp = min(missing, st.seat_gold[seat] // max(tb.gold_repair_price, 1))
            if hp > 0:
                repair(st, tb, c, hp, seat)
        item = st.city_queue[c, 0]
        if item < 0:
            continue
        price = rush_price(st, tb, c)
        spare = st.seat_gold[seat] - reserve
        if price <= 0 or price > spare:
            continue
        fighting = item < tb.unit_cost.shape[0] and is_military(tb, item)
        if (threat > 0 and fighting) or spare >= price * 200 // (100 + w[W_ECONOMY]) + 20:
            rush(st, tb, c, seat)
    # buy a resource tile next to a region
    spare = st.seat_gold[seat] - reserve
    if spare < tb.tile_price_first + 10 or w[W_ECONOMY] < 40:
        return
    tile_city = regions(st, tb, board)
    for t in range(st.n_tiles[0]):
        if st.tile_node[t] < 0 or tile_city[t] >= 0:
            continue
        for k in range(6):
            m = board.neighbours[t, k]
            if m < 0:
                continue
            c = tile_city[m]
            if c >= 0 and st.city_owner[c] == seat:
                n_bought = 0
                for x in range(st.n_tiles[0]):
                    if st.tile_bought_by[x] == c:
                        n_bought += 1
                if tile_price(n_bought, tb.tile_price_first, tb.tile_price_step) + 10 <= spare:
                    buy_tile(st, tb, board, c, t, seat)
                return


# ---------------------------------------------------------------- units


@njit
def city_value(st, tb, board, seat: np.int64, city: np.int64) -> np.int64:
    """How much `seat` wants to take `city`: population, capital (four times as much
    while the seat's own dominance counter runs: a capital fall can end a rival,
    V08/V10), buildings, revolt, a running dominance counter (V18) or a queued
    Observatory (V16) of its owner."""
    owner = st.city_owner[city]
    v = 10 + st.city_pop[city] * 8
    if owner == NEUTRAL:
        return v + 5
    if st.city_capital[city]:
        v += tb.capital_value * (4 if st.seat_dominance[seat] > 0 else 1)
        # V08: the cities that would pass on with it
        home = st.city_tile[city]
        for c in range(st.n_cities[0]):
            if c != city and st.city_tile[c] >= 0 and st.city_owner[c] == owner and \
                    board.distance[home, st.city_tile[c]] <= tb.capital_fall_radius:
                v += (10 + st.city_pop[c] * 8) * tb.transfer_value_pct // 100
    for b in range(tb.building_cost.shape[0]):
        if st.city_buildings[city, b]:
            v += 5 + tb.building_score_points[b]
    v += st.seat_dominance[owner] * tb.dominance_value
    code = tb.unit_cost.shape[0] + tb.observatory
    for k in range(st.city_queue.shape[1]):
        if st.city_queue[city, k] == code:
            v += tb.observatory_value
    if st.city_revolt[city] > 0:
        v += 15
    return v


@njit
def war_target(st, tb, board, seat: np.int64, w: np.ndarray) -> np.int64:
    """The hostile city most worth marching on, or -1: its value over its distance,
    the nearer of its distance from the seat's cities and the army's mean distance
    to it (so a marching army keeps its target). While the seat's own dominance
    counter runs (V18) neutral villages are left alone: only seats' cities matter."""
    tiles = np.empty(st.n_units[0], dtype=np.int64)
    n_army = 0
    for u in range(st.n_units[0]):
        if st.unit_tile[u] >= 0 and st.unit_owner[u] == seat and is_military(tb, st.unit_type[u]):
            tiles[n_army] = st.unit_tile[u]
            n_army += 1
    finishing = st.seat_dominance[seat] > 0
    best = -1
    best_v = -FAR
    for c in range(st.n_cities[0]):
        t = st.city_tile[c]
        if t < 0 or not hostile_owner(st, seat, st.city_owner[c]):
            continue
        if st.city_owner[c] == NEUTRAL and finishing:
            continue
        near = FAR
        for h in range(st.n_cities[0]):
            if st.city_tile[h] >= 0 and st.city_owner[h] == seat:
                near = min(near, board.distance[t, st.city_tile[h]])
        if n_army > 0:
            total = 0
            for k in range(n_army):
                total += board.distance[t, tiles[k]]
            near = min(near, total // n_army)
        v = city_value(st, tb, board, seat, c) * (50 + w[W_MILITARY]) * 10 // (50 * (4 + near))
        if v > best_v:
            best, best_v = c, v
    return best


@njit
def urgent_target(st, tb, city: np.int64) -> bool:
    """A city whose owner threatens to win: Observatory queued there (V16) or a
    running dominance counter at the pact trigger (V18)."""
    owner = st.city_owner[city]
    if owner < 0:
        return False
    if st.seat_dominance[owner] >= tb.pact_dominance_trigger:
        return True
    code = tb.unit_cost.shape[0] + tb.observatory
    for k in range(st.city_queue.shape[1]):
        if st.city_queue[city, k] == code:
            return True
    return False


@njit
def step_toward(st, tb, board, path: np.ndarray, unit: np.int64, target: np.int64,
                seat: np.int64, stop_at: np.int64) -> None:
    """Walk `unit` one tile at a time toward `target` until `stop_at` steps from it
    or out of moves; each step is a `move` command (the same rule as scenarios).
    A unit blocked on every closer tile sidesteps to a free tile as close as it is,
    so columns flow around one another instead of jamming."""
    row = path_row(st, tb, board, path, target)
    sidestepped = False
    while st.unit_moves_left[unit] > 0 and st.unit_tile[unit] >= 0:
        here = st.unit_tile[unit]
        d_here = row[here]
        if d_here < 0 or d_here <= stop_at:
            return
        best = -1
        best_d = d_here + 1
        for k in range(6):
            m = board.neighbours[here, k]
            if m < 0 or row[m] < 0 or row[m] > d_here or st.tile_unit[m] >= 0:
                continue
            if row[m] == d_here and sidestepped:
                continue
            site = st.tile_site[m]
            if site >= 0 and st.city_owner[site] != seat:
                continue
            if row[m] < best_d:
                best, best_d = m, row[m]
        if best < 0:
            return
        if best_d == d_here:
            sidestepped = True
        if move_unit(st, tb, board, unit, best, seat) != OK:
            return


@njit
def try_attack(st, tb, board, unit: np.int64, seat: np.int64, w: np.ndarray,
               assault: bool) -> bool:
    """Attack the best target in reach when the combat preview favours it (T16).

    An exchange is worth: damage dealt minus damage taken, the latter weighed
    down by the military weight (a conqueror accepts even trades), plus a bonus
    for a kill and for hitting a city the seat values. A melee unit strikes a
    city only in an assault (enough of the army gathered) or to bring it to 0 HP.
    """
    here = st.unit_tile[unit]
    utype = st.unit_type[unit]
    reach = max(tb.unit_range[utype], 1)
    size = 3 * reach * (reach + 1) + 1
    best = -1
    best_v = -1 if w[W_MILITARY] >= 50 else 0
    for k in range(1, size):
        t = board.disc[here, k]
        if t < 0:
            continue
        if st.tile_site[t] < 0 and st.tile_unit[t] < 0:
            continue
        why, kind, tid, to_target, to_attacker = attack_outcome(st, tb, board, unit, t, seat)
        if why != OK:
            continue
        if to_attacker >= st.unit_hp[unit]:
            continue
        if kind == TARGET_CITY:
            kill = to_target >= st.city_hp[tid]
            if to_attacker > 0 and not assault and not kill:
                continue
            v = to_target * (10 + city_value(st, tb, board, seat, tid) // 10) - to_attacker * 8
            if kill:
                v += 100
        else:
            v = to_target * 10 - to_attacker * (120 - w[W_MILITARY]) // 10
            if to_target >= st.unit_hp[tid]:
                v += 30
        if v > best_v:
            best, best_v = t, v
    if best >= 0:
        resolve_attack(st, tb, board, unit, best, seat)
        return True
    return False


@njit
def try_enter(st, tb, board, unit: np.int64, seat: np.int64) -> bool:
    """Capture a hostile city at 0 HP next to the unit (V05)."""
    here = st.unit_tile[unit]
    for k in range(6):
        m = board.neighbours[here, k]
        if m < 0 or st.tile_site[m] < 0:
            continue
        c = st.tile_site[m]
        if enter_check(st, tb, board, unit, c, seat) == OK:
            capture_city(st, tb, board, unit, c, seat)
            return True
    return False


@njit
def intruder_of(st, tb, board, seat: np.int64, city: np.int64) -> np.int64:
    """Tile of the first hostile fighting unit (or bandit) within defend_radius of
    the seat's `city`, or -1."""
    home = st.city_tile[city]
    for u in range(st.n_units[0]):
        t = st.unit_tile[u]
        if t < 0 or board.distance[home, t] > tb.defend_radius:
            continue
        owner = st.unit_owner[u]
        if owner == seat:
            continue
        if owner == BANDIT or (is_military(tb, st.unit_type[u]) and
                               hostile_owner(st, seat, owner)):
            return t
    return -1


@njit
def intruder_near(st, tb, board, seat: np.int64, unit: np.int64, alarm: np.ndarray,
                  answered: np.ndarray) -> np.int64:
    """Tile of a hostile fighting unit within defend_radius of one of the seat's
    cities that is within 4 steps of `unit`, or -1; at most `defenders` units
    answer one city. `alarm` caches each city's intruder tile (-2 not looked up
    yet) and is refreshed when the intruder left; `answered` counts responders."""
    here = st.unit_tile[unit]
    for c in range(st.n_cities[0]):
        home = st.city_tile[c]
        if home < 0 or st.city_owner[c] != seat or board.distance[here, home] > 4 or \
                answered[c] >= tb.defenders:
            continue
        t = alarm[c]
        if t >= 0:
            x = st.tile_unit[t]
            if x < 0 or st.unit_owner[x] == seat:
                t = -2
        if t == -2:
            t = intruder_of(st, tb, board, seat, c)
            alarm[c] = t
        if t >= 0:
            answered[c] += 1
            return t
    return -1


@njit
def settler_orders(st, tb, board, path: np.ndarray, u: np.int64, seat: np.int64,
                   tile_city: np.ndarray) -> bool:
    """Found here, or walk to the best site and found there; True when a city was founded.
    A settler founds where it stands when that is nearly as good as its site, or
    when the site is taken by another unit."""
    here = st.unit_tile[u]
    can_here = found_check(st, tb, board, u, seat) == OK
    site, _steps = best_site(st, tb, board, path, seat, here, tile_city)
    if can_here:
        if site < 0 or site == here or st.tile_unit[site] >= 0 or \
                site_value(st, tb, board, here) + 4 >= site_value(st, tb, board, site):
            found_city(st, tb, board, u, seat)
            return True
    if site >= 0:
        step_toward(st, tb, board, path, u, site, seat, 0)
        if st.unit_tile[u] == site and found_check(st, tb, board, u, seat) == OK:
            found_city(st, tb, board, u, seat)
            return True
    return False


@njit
def spent(st, tb, u: np.int64, city: np.int64) -> bool:
    """A melee unit that could not strike `city` without dying of its retaliation
    (units never heal): it leaves the siege ring to the others and goes home."""
    utype = st.unit_type[u]
    if tb.unit_range[utype] > 0 or not tb.city_retaliation:
        return False
    a = max(tb.unit_attack[utype] * 100 * tb.unit_city_attack_pct[utype] // 100, np.int64(1))
    d = city_defence_strength(st, tb, city)
    return max(tb.min_damage, tb.damage_scale * d // (a + d)) >= st.unit_hp[u]


@njit
def step_away(st, tb, board, u: np.int64, frm: np.int64, seat: np.int64,
              dist: np.int64) -> None:
    """Move `u` to the first free neighbouring tile (direction order) at least `dist`
    steps from `frm`, if there is one, to leave the siege ring to fresh units."""
    here = st.unit_tile[u]
    for k in range(6):
        m = board.neighbours[here, k]
        if m < 0 or st.tile_unit[m] >= 0 or st.tile_site[m] >= 0 or \
                not tb.terrain_passable[st.tile_terrain[m]] or board.distance[m, frm] < dist:
            continue
        if move_unit(st, tb, board, u, m, seat) == OK:
            return


@njit
def unit_orders(st, tb, board, path: np.ndarray, u: np.int64, seat: np.int64, w: np.ndarray,
                target: np.int64, hold: np.int64, assault: bool, alarm: np.ndarray,
                answered: np.ndarray) -> None:
    """One fighting unit: capture, attack, else defend a threatened city, march on the
    war target (`target` >= 0; no closer than `hold` steps until the assault, so the
    army arrives as one wave), clear a camp, or garrison. A melee unit next to the
    target in an assault waits for `siege`, which orders the strikes together."""
    if try_enter(st, tb, board, u, seat) or besieging(st, tb, board, u, target, assault) or \
            try_attack(st, tb, board, u, seat, w, assault):
        return
    utype = st.unit_type[u]
    reach = tb.unit_range[utype] if tb.unit_range[utype] > 0 else 1
    goal = intruder_near(st, tb, board, seat, u, alarm, answered)
    stop = reach
    if goal < 0 and target >= 0:
        goal = st.city_tile[target]
        if not assault:
            stop = max(reach, hold)
        if spent(st, tb, u, target):
            stop = max(stop, tb.muster_radius)
            if board.distance[st.unit_tile[u], goal] < stop:
                step_away(st, tb, board, u, goal, seat, stop)
    if goal < 0:
        stop = 0
        best_d = 6
        for m in range(st.camp_tile.shape[0]):
            t = st.camp_tile[m]
            if t >= 0 and board.distance[st.unit_tile[u], t] < best_d:
                goal, best_d = t, board.distance[st.unit_tile[u], t]
    if goal < 0:
        # garrison: the nearest own city without a unit on it
        best_d = FAR
        for c in range(st.n_cities[0]):
            t = st.city_tile[c]
            if t >= 0 and st.city_owner[c] == seat and (st.tile_unit[t] < 0 or
                                                         st.tile_unit[t] == u):
                d = board.distance[st.unit_tile[u], t]
                if d < best_d:
                    goal, best_d = t, d
    if goal >= 0:
        step_toward(st, tb, board, path, u, goal, seat, stop)
        if st.unit_moves_left[u] > 0 and not try_enter(st, tb, board, u, seat) and \
                not besieging(st, tb, board, u, target, assault):
            try_attack(st, tb, board, u, seat, w, assault)


@njit
def besieging(st, tb, board, u: np.int64, target: np.int64, assault: bool) -> bool:
    """A melee unit with moves left next to the assaulted target city (HP above 0)."""
    if not assault or target < 0 or st.city_hp[target] <= 0 or st.unit_moves_left[u] <= 0:
        return False
    utype = st.unit_type[u]
    return tb.unit_range[utype] == 0 and \
        board.distance[st.unit_tile[u], st.city_tile[target]] == 1


@njit
def siege(st, tb, board, seat: np.int64, w: np.ndarray, target: np.int64) -> None:
    """The melee units next to the target strike it one after another, strongest blow
    first, while at least one other stays fresh to enter once it is at 0 HP (V05);
    the last one enters. Units that could not strike fight whatever else is in reach."""
    tt = st.city_tile[target]
    while st.city_hp[target] > 0 and st.city_owner[target] != seat:
        fresh = 0
        best = -1
        best_d = 0
        for k in range(6):
            m = board.neighbours[tt, k]
            if m < 0:
                continue
            u = st.tile_unit[m]
            if u < 0 or st.unit_owner[u] != seat or st.unit_moves_left[u] <= 0 or \
                    tb.unit_range[st.unit_type[u]] > 0 or not is_military(tb, st.unit_type[u]):
                continue
            fresh += 1
            why, _kind, _tid, to_target, to_attacker = attack_outcome(st, tb, board, u, tt, seat)
            if why == OK and to_attacker < st.unit_hp[u] and to_target > best_d:
                best, best_d = u, to_target
        if fresh < 2 or best < 0:
            break
        resolve_attack(st, tb, board, best, tt, seat)
    for k in range(6):
        m = board.neighbours[tt, k]
        if m < 0:
            continue
        u = st.tile_unit[m]
        if u >= 0 and st.unit_owner[u] == seat and st.unit_moves_left[u] > 0 and \
                is_military(tb, st.unit_type[u]):
            if not try_enter(st, tb, board, u, seat):
                try_attack(st, tb, board, u, seat, w, False)
            if st.finished[0]:
                return


@njit
def nearest_rival_city(st, board, seat: np.int64, tile: np.int64) -> np.int64:
    """The city of another standing seat nearest `tile` that `seat` may attack, or -1."""
    best = -1
    best_d = FAR
    for c in range(st.n_cities[0]):
        t = st.city_tile[c]
        if t < 0 or st.city_owner[c] < 0 or not hostile_owner(st, seat, st.city_owner[c]):
            continue
        if board.distance[tile, t] < best_d:
            best, best_d = c, board.distance[tile, t]
    return best


@njit
def village_target(st, board, seat: np.int64, army: np.int64) -> np.int64:
    """In peace: the neutral village nearest the seat's cities within 6 steps (B7), or -1."""
    target = -1
    if army < 2:
        return target
    best_d = 7
    for c in range(st.n_cities[0]):
        t = st.city_tile[c]
        if t < 0 or st.city_owner[c] != NEUTRAL:
            continue
        for h in range(st.n_cities[0]):
            if st.city_tile[h] >= 0 and st.city_owner[h] == seat and \
                    board.distance[t, st.city_tile[h]] < best_d:
                target, best_d = c, board.distance[t, st.city_tile[h]]
    return target


@njit
def ai_units(st, tb, board, path: np.ndarray, seat: np.int64, w: np.ndarray,
             army: np.int64, tile_city: np.ndarray) -> None:
    """Settlers, then ranged units, then melee units (so these can enter what the
    ranged ones brought to 0 HP), then a last capture pass.

    The army marches on the war target in formation: the muster_units-th nearest
    unit is the front and advances one step a turn (units ahead of it wait, the
    others close up with their full moves); the assault starts when the front is
    within muster_radius. A target that threatens to win (Observatory, dominance
    counter, the seat's own running counter) is assaulted at once, a neutral
    village too. Before war_turn only a seat with a large army goes to war;
    otherwise it takes a neutral village near home.
    """
    n_cities = cities_held(st, seat)
    target = war_target(st, tb, board, seat, w)
    urgent = target >= 0 and (urgent_target(st, tb, target) or st.seat_dominance[seat] > 0)
    aggressive = urgent or st.turn[0] >= tb.war_turn or \
        army >= n_cities * (1 + (100 - w[W_MILITARY]) // 35)
    if not aggressive:
        target = village_target(st, board, seat, army)
    assault = urgent or (target >= 0 and st.city_owner[target] == NEUTRAL)
    hold = 0
    if target >= 0 and not assault:
        tt = st.city_tile[target]
        dist = np.empty(army + 1, dtype=np.int64)
        k = 0
        for u in range(st.n_units[0]):
            t = st.unit_tile[u]
            if t >= 0 and st.unit_owner[u] == seat and is_military(tb, st.unit_type[u]) and \
                    k < dist.shape[0]:
                dist[k] = board.distance[t, tt]
                k += 1
        if k < max(tb.muster_units, 1):
            target = -1
        else:
            front = np.sort(dist[:k])[max(tb.muster_units, 1) - 1]
            assault = front <= tb.muster_radius
            hold = max(front - 1, tb.muster_radius - 1)
    for u in range(st.n_units[0]):
        if st.finished[0]:
            return
        if st.unit_tile[u] < 0 or st.unit_owner[u] != seat:
            continue
        if tb.unit_founds_city[st.unit_type[u]]:
            if settler_orders(st, tb, board, path, u, seat, tile_city):
                tile_city = regions(st, tb, board)
    alarm = np.full(st.n_cities[0], -2, dtype=np.int64)
    answered = np.zeros(st.n_cities[0], dtype=np.int64)
    finishing = st.seat_dominance[seat] > 0 and tb.finish_nearest
    if st.seat_dominance[seat] > 0:
        # finishing (V18 counter running): one unit per threatened city, the rest march
        answered[:] = max(tb.defenders - 1, 0)
    for phase in range(2):
        ranged = phase == 0
        for u in range(st.n_units[0]):
            if st.finished[0]:
                return
            if st.unit_tile[u] < 0 or st.unit_owner[u] != seat:
                continue
            utype = st.unit_type[u]
            if not is_military(tb, utype) or (tb.unit_range[utype] > 0) != ranged:
                continue
            own = target
            if finishing:
                own = nearest_rival_city(st, board, seat, st.unit_tile[u])
            unit_orders(st, tb, board, path, u, seat, w, own, hold, assault, alarm,
                        answered)
    if assault and target >= 0 and not st.finished[0]:
        siege(st, tb, board, seat, w, target)
    zeroed = target >= 0 and st.city_hp[target] == 0 and st.city_owner[target] != seat
    for u in range(st.n_units[0]):
        if st.finished[0]:
            return
        if st.unit_tile[u] >= 0 and st.unit_owner[u] == seat and st.unit_moves_left[u] > 0 \
                and is_military(tb, st.unit_type[u]):
            if zeroed and st.city_owner[target] != seat and tb.unit_range[st.unit_type[u]] == 0:
                step_toward(st, tb, board, path, u, st.city_tile[target], seat, 1)
            try_enter(st, tb, board, u, seat)


@njit
def ai_take_turn(st, tb, board, path: np.ndarray, seat: np.int64) -> None:
    """Play the active seat's actions for this turn (its flow has already run)."""
    if st.finished[0] or not st.seat_alive[seat]:
        return
    w = tb.personality_weights[st.seat_personality[seat]]
    ai_research(st, tb, seat, w)
    ai_diplomacy(st, tb, board, seat)
    army = 0
    n_ranged = 0
    for u in range(st.n_units[0]):
        if st.unit_tile[u] >= 0 and st.unit_owner[u] == seat and is_military(tb, st.unit_type[u]):
            army += 1
            if tb.unit_range[st.unit_type[u]] > 0:
                n_ranged += 1
    tile_city = regions(st, tb, board)
    target = war_target(st, tb, board, seat, w)
    at_war = target >= 0 and (urgent_target(st, tb, target) or st.turn[0] >= tb.war_turn)
    ai_production(st, tb, board, path, seat, w, army, n_ranged, at_war, tile_city)
    ai_gold(st, tb, board, seat, w)
    ai_units(st, tb, board, path, seat, w, army, regions(st, tb, board))

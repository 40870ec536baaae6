"""Player commands as rule kernels: one function per command, each checking
everything before it changes anything, so a refused command leaves the state
exactly as it was. The AI (sim.kernels.ai) and scenario files
(sim.engine.commands.run_command) call these same functions.

Each returns a reason code (sim.rules.codes; OK = 0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.rules.cities import max_hp, place_city
from sim.kernels.rules.events import (
    log_event,
)
from sim.kernels.rules.seats import cities_held, forbidden_item, forbidden_mechanic, forbidden_tech
from sim.kernels.rules.standings import regions, ring_rule
from sim.kernels.rules.territory import (
    buy_tile_check,
    region_city_of,
)
from sim.kernels.rules.units import kill_unit
from sim.rules.codes import (
    BUY_OK,
    BUY_REASON,
    DISBAND_COMMAND,
    EV_CAMP_CLEARED,
    EV_FOUND,
    EV_OBSERVATORY_QUEUED,
    EV_REPAIR,
    EV_RESEARCH,
    EV_RUSH,
    EV_TILE_BOUGHT,
    EV_TRUCE,
    EV_TRUCE_DECLINED,
    EV_UNIT_DISBANDED,
    M_BUY_TILES,
    M_RUSH,
    M_TRUCE,
    N_DIRECTIONS,
    OK,
    R_ALREADY_BUILT,
    R_ALREADY_QUEUED,
    R_BAD_ITEM,
    R_BAD_SEAT,
    R_CAPACITY,
    R_FORBIDDEN,
    R_FOREIGN_CITY,
    R_HP_RANGE,
    R_IMPASSABLE,
    R_IN_REGION,
    R_NO_CITY,
    R_NO_GOLD,
    R_NO_MOVES,
    R_NO_PATH,
    R_NO_SCIENCE,
    R_NO_UNIT,
    R_NOT_RUSHABLE,
    R_NOT_SETTLER,
    R_NOT_YOUR_CITY,
    R_NOT_YOUR_UNIT,
    R_NOTHING_TO_RUSH,
    R_OCCUPIED,
    R_ONE_PER_EMPIRE,
    R_PREREQ,
    R_PRICE_LOW,
    R_QUEUE_EMPTY,
    R_QUEUE_FULL,
    R_QUOTA,
    R_SEAT_OUT,
    R_SETTLER_POP,
    R_TECH_KNOWN,
    R_TECH_MISSING,
    R_TOO_CLOSE,
    R_TRUCE_EXISTS,
)

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.board import Board
    from sim.world.state import State

_BUY_REASON = np.array(BUY_REASON, dtype=np.int64)


@njit
def _own_unit(st: State, unit: np.int64, seat: np.int64) -> np.int64:
    if unit < 0 or unit >= st.n_units[0] or st.unit_tile[unit] < 0:
        return R_NO_UNIT
    if st.unit_owner[unit] != seat:
        return R_NOT_YOUR_UNIT
    return OK


@njit
def _own_city(st: State, city: np.int64, seat: np.int64) -> np.int64:
    if city < 0 or city >= st.n_cities[0] or st.city_tile[city] < 0:
        return R_NO_CITY
    if st.city_owner[city] != seat:
        return R_NOT_YOUR_CITY
    return OK


@njit
def path_steps(st: State, tb: TableArrays, neighbours: np.ndarray, unit: np.int64,
               to: np.int64, seat: np.int64) -> np.int64:
    """Fewest steps for `unit` to reach `to` within its moves left, or -1.

    Steps go over passable tiles with no unit on them, through the seat's own
    cities but not another side's (that takes `enter`). neighbours: (T, 6)
    board.neighbours (path_length is this search on a board).
    """
    start = st.unit_tile[unit]
    budget = st.unit_moves_left[unit]
    n = neighbours.shape[0]
    dist = np.full(n, -1, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    head = np.int64(0)
    tail = np.int64(0)
    dist[start] = 0
    queue[tail] = start
    tail += 1
    while head < tail:
        t = queue[head]
        head += 1
        if t == to:
            return dist[t]
        if dist[t] >= budget:
            continue
        for k in range(N_DIRECTIONS):
            m = neighbours[t, k]
            if m < 0 or dist[m] >= 0 or st.tile_unit[m] >= 0:
                continue
            if not tb.terrain_passable[st.tile_terrain[m]]:
                continue
            site = st.tile_site[m]
            if site >= 0 and st.city_owner[site] != seat:
                continue
            dist[m] = dist[t] + 1
            queue[tail] = m
            tail += 1
    return -1


@njit(inline='always')  # a thin level: see sim.jit
def path_length(st: State, tb: TableArrays, board: Board, unit: np.int64, to: np.int64,
                seat: np.int64) -> np.int64:
    """Fewest steps for `unit` to reach `to` within its moves left, or -1 (path_steps)."""
    return path_steps(st, tb, board.neighbours, unit, to, seat)


@njit(inline='always')  # a thin level: see sim.jit
def move_unit(st: State, tb: TableArrays, board: Board, unit: np.int64, to: np.int64,
              seat: np.int64) -> np.int64:
    """Move along a legal path within the unit's moves (C: Units). Ending on an
    empty bandit camp clears it for camp_clear_gold (C: Neutrals)."""
    return move_unit_at(st, tb, board.neighbours, board.distance, unit, to, seat)


@njit
def move_unit_at(st: State, tb: TableArrays, neighbours: np.ndarray, distance: np.ndarray,
                 unit: np.int64, to: np.int64, seat: np.int64) -> np.int64:
    """move_unit on the two board arrays it reads (neighbours: (T, 6), distance: (T, T)),
    for the AI's walks."""
    why = _own_unit(st, unit, seat)
    if why != OK:
        return why
    if st.unit_moves_left[unit] <= 0:
        return R_NO_MOVES
    if not tb.terrain_passable[st.tile_terrain[to]]:
        return R_IMPASSABLE
    if st.tile_unit[to] >= 0:
        return R_OCCUPIED
    site = st.tile_site[to]
    if site >= 0 and st.city_owner[site] != seat:
        return R_FOREIGN_CITY
    if distance[st.unit_tile[unit], to] == 1:
        # one step onto the free, passable, not foreign tile checked above, with a move
        # left: exactly what path_length would find, without its search (the AI's moves
        # are all single steps)
        steps = np.int64(1)
    else:
        steps = path_steps(st, tb, neighbours, unit, to, seat)
    if steps < 0:
        return R_NO_PATH
    st.tile_unit[st.unit_tile[unit]] = -1
    st.unit_tile[unit] = to
    st.tile_unit[to] = unit
    st.unit_moves_left[unit] -= steps
    for m in range(st.camp_tile.shape[0]):
        if st.camp_tile[m] == to:
            st.camp_tile[m] = -1
            st.seat_gold[seat] += tb.camp_clear_gold
            log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_CAMP_CLEARED), seat,
                      np.int64(-1), np.int64(-1), m,
                      tb.camp_clear_gold, np.int64(0))
    return OK


@njit
def found_check(st: State, tb: TableArrays, board: Board, unit: np.int64,
                seat: np.int64) -> np.int64:
    """OK, or why the settler `unit` cannot found a city where it stands (T07, B1)."""
    why = _own_unit(st, unit, seat)
    if why != OK:
        return why
    utype = st.unit_type[unit]
    if utype < 0 or not tb.unit_founds_city[utype]:
        return R_NOT_SETTLER
    tile = st.unit_tile[unit]
    if not tb.terrain_passable[st.tile_terrain[tile]]:
        return R_IMPASSABLE
    for c in range(st.n_cities[0]):
        if st.city_tile[c] >= 0 and board.distance[tile, st.city_tile[c]] < tb.city_min_distance:
            return R_TOO_CLOSE
    # the one tile's owner (region_city_of: resolve_regions(...)[tile], T08), not
    # every region: a settler checks this every turn
    if region_city_of(board.distance, st.city_tile, st.city_owner, st.city_pop,
                      st.tile_bought_by, tile, ring_rule(tb)) >= 0:
        return R_IN_REGION
    if cities_held(st, seat) >= tb.quota:
        return R_QUOTA
    if st.n_cities[0] >= st.city_tile.shape[0]:
        return R_CAPACITY
    return OK


@njit
def found_city(st: State, tb: TableArrays, board: Board, unit: np.int64,
               seat: np.int64) -> np.int64:
    """A settler founds a city of start_population where it stands (C: Cities)."""
    why = found_check(st, tb, board, unit, seat)
    if why != OK:
        return why
    tile = st.unit_tile[unit]
    kill_unit(st, unit)  # the settler becomes the city
    c = place_city(st, tb, tile, seat, tb.start_population)
    log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_FOUND), seat, np.int64(-1), c,
              np.int64(0), np.int64(0), np.int64(0))
    return OK


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def buy_tile(st: State, tb: TableArrays, board: Board, city: np.int64, tile: np.int64,
             seat: np.int64) -> np.int64:
    """T04, T05, B2: buy `tile` for `city` at first + step × tiles it already bought."""
    if forbidden_mechanic(st, seat, np.int64(M_BUY_TILES)):
        return R_FORBIDDEN
    tile_city = regions(st, tb, board)
    code, price = buy_tile_check(city, seat, tile, tile_city, st.tile_terrain, tb.terrain_passable,
                                 board.neighbours, st.city_tile[: st.n_cities[0]],
                                 st.city_owner[: st.n_cities[0]], st.tile_bought_by,
                                 st.seat_gold, tb.tile_price_first, tb.tile_price_step)
    if code != BUY_OK:
        return _BUY_REASON[code]
    st.seat_gold[seat] -= price
    st.tile_bought_by[tile] = city
    log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_TILE_BOUGHT), seat, np.int64(-1),
              city, tile, price,
              np.int64(0))
    return OK


@njit
def seat_has_building(st: State, tb: TableArrays, seat: np.int64, b: np.int64) -> bool:
    """B9: the seat holds `b` in a city or has it in any queue."""
    code = tb.unit_cost.shape[0] + b
    for c in range(st.n_cities[0]):
        if st.city_tile[c] < 0 or st.city_owner[c] != seat:
            continue
        if st.city_buildings[c, b]:
            return True
        for k in range(st.city_queue.shape[1]):
            if st.city_queue[c, k] == code:
                return True
    return False


@njit
def queue_check(st: State, tb: TableArrays, city: np.int64, item: np.int64,
                seat: np.int64) -> np.int64:
    """OK, or why `item` (unit code, or n_units + building) cannot join the queue."""
    why = _own_city(st, city, seat)
    if why != OK:
        return why
    n_units = tb.unit_cost.shape[0]
    if item < 0 or item >= n_units + tb.building_cost.shape[0]:
        return R_BAD_ITEM
    if forbidden_item(st, n_units, seat, item):
        return R_FORBIDDEN
    slot = np.int64(-1)
    for k in range(st.city_queue.shape[1]):
        if st.city_queue[city, k] < 0:
            slot = k
            break
    if slot < 0:
        return R_QUEUE_FULL
    if item < n_units:
        tech = tb.unit_tech[item]
        if tech >= 0 and not st.seat_techs[seat, tech]:
            return R_TECH_MISSING
        if tb.unit_founds_city[item] and st.city_pop[city] < tb.settler_min_population:
            return R_SETTLER_POP
        return OK
    b = item - n_units
    tech = tb.building_tech[b]
    if tech >= 0 and not st.seat_techs[seat, tech]:
        return R_TECH_MISSING
    if b == tb.observatory and not st.seat_techs[seat, tb.observatory_tech]:
        return R_TECH_MISSING
    if st.city_buildings[city, b]:
        return R_ALREADY_BUILT
    for k in range(st.city_queue.shape[1]):
        if st.city_queue[city, k] == item:
            return R_ALREADY_QUEUED
    if tb.building_one_per_empire[b] and seat_has_building(st, tb, seat, b):
        return R_ONE_PER_EMPIRE
    return OK


@njit
def queue_item(st: State, tb: TableArrays, city: np.int64, item: np.int64,
               seat: np.int64) -> np.int64:
    """Append `item` to the city's queue; the Observatory is announced (V16)."""
    why = queue_check(st, tb, city, item, seat)
    if why != OK:
        return why
    for k in range(st.city_queue.shape[1]):
        if st.city_queue[city, k] < 0:
            st.city_queue[city, k] = item
            if k == 0:
                st.city_production[city] = 0
            break
    n_units = tb.unit_cost.shape[0]
    if item >= n_units and tb.building_science_victory[item - n_units]:
        log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_OBSERVATORY_QUEUED), seat,
                  np.int64(-1), city,
                  np.int64(0), np.int64(0), np.int64(0))
    return OK


@njit
def rush_price(st: State, tb: TableArrays, city: np.int64) -> np.int64:
    """Gold to finish the front item: missing production × rush_gold_per_production."""
    item = st.city_queue[city, 0]
    n_units = tb.unit_cost.shape[0]
    cost = tb.unit_cost[item] if item < n_units else tb.building_cost[item - n_units]
    return max(cost - st.city_production[city], 0) * tb.rush_gold_per_production


@njit
def rush(st: State, tb: TableArrays, city: np.int64, seat: np.int64) -> np.int64:
    """Pay gold for the rest of the front item; it completes at the next flow
    (after a revolt ends, V11). Never for the Observatory (V16)."""
    why = _own_city(st, city, seat)
    if why != OK:
        return why
    if forbidden_mechanic(st, seat, np.int64(M_RUSH)):
        return R_FORBIDDEN
    item = st.city_queue[city, 0]
    if item < 0:
        return R_QUEUE_EMPTY
    n_units = tb.unit_cost.shape[0]
    if item >= n_units and not tb.building_rushable[item - n_units]:
        return R_NOT_RUSHABLE
    price = rush_price(st, tb, city)
    if price <= 0:
        return R_NOTHING_TO_RUSH
    if st.seat_gold[seat] < price:
        return R_NO_GOLD
    st.seat_gold[seat] -= price
    cost = tb.unit_cost[item] if item < n_units else tb.building_cost[item - n_units]
    st.city_production[city] = cost
    log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_RUSH), seat, np.int64(-1), city,
              item, price, np.int64(0))
    return OK


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def repair(st: State, tb: TableArrays, city: np.int64, hp: np.int64, seat: np.int64) -> np.int64:
    """Gold repair of `hp` points at gold_repair_price each; works in revolt (V11)."""
    why = _own_city(st, city, seat)
    if why != OK:
        return why
    if hp <= 0 or st.city_hp[city] + hp > max_hp(st, tb, city):
        return R_HP_RANGE
    price = hp * tb.gold_repair_price
    if st.seat_gold[seat] < price:
        return R_NO_GOLD
    st.seat_gold[seat] -= price
    st.city_hp[city] += hp
    log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_REPAIR), seat, np.int64(-1), city,
              hp, price, np.int64(0))
    return OK


@njit
def research(st: State, tb: TableArrays, tech: np.int64, seat: np.int64) -> np.int64:
    """Buy `tech` with science points once its prerequisites are known (C: Research)."""
    if tech < 0 or tech >= tb.tech_cost.shape[0]:
        return R_BAD_ITEM
    if st.seat_techs[seat, tech]:
        return R_TECH_KNOWN
    if forbidden_tech(st, seat, tech):
        return R_FORBIDDEN
    for p in range(tb.tech_cost.shape[0]):
        if tb.tech_requires[tech, p] and not st.seat_techs[seat, p]:
            return R_PREREQ
    if st.seat_science[seat] < tb.tech_cost[tech]:
        return R_NO_SCIENCE
    st.seat_science[seat] -= tb.tech_cost[tech]
    st.seat_techs[seat, tech] = 1
    log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_RESEARCH), seat, np.int64(-1),
              np.int64(-1), tech,
              tb.tech_cost[tech], np.int64(0))
    return OK


@njit
def offer_truce(st: State, tb: TableArrays, other: np.int64, seat: np.int64, price: np.int64,
                accepted: bool) -> np.int64:
    """D9, V07, C: Diplomacy: `seat` offers `other` price gold for truce_turns of truce;
    `other` has answered `accepted` (the AI's answer: sim.kernels.ai.diplomacy). Both
    answers are logged (EV_TRUCE, EV_TRUCE_DECLINED); only an accepted offer moves gold
    and starts the truce. An offer must name at least truce_price and be payable."""
    if other < 0 or other >= st.n_seats[0] or other == seat:
        return R_BAD_SEAT
    if not st.seat_alive[other]:
        return R_SEAT_OUT
    if st.truce_turns[seat, other] > 0:
        return R_TRUCE_EXISTS
    # a truce binds both seats: neither may be one forbidden truces
    if forbidden_mechanic(st, seat, np.int64(M_TRUCE)) or forbidden_mechanic(st, other,
                                                                             np.int64(M_TRUCE)):
        return R_FORBIDDEN
    if price < tb.truce_price:
        return R_PRICE_LOW
    if st.seat_gold[seat] < price:
        return R_NO_GOLD
    if not accepted:
        log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_TRUCE_DECLINED), seat, other,
                  np.int64(-1),
                  tb.truce_turns, price, np.int64(0))
        return OK
    st.seat_gold[seat] -= price
    st.seat_gold[other] += price
    st.truce_turns[seat, other] = tb.truce_turns
    st.truce_turns[other, seat] = tb.truce_turns
    log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_TRUCE), seat, other, np.int64(-1),
              tb.truce_turns,
              price, np.int64(0))
    return OK


@njit
def buy_truce(st: State, tb: TableArrays, other: np.int64, seat: np.int64) -> np.int64:
    """V07, C: Diplomacy: the scenario's `truce` command, an offer of truce_price that
    `other` accepts (offer_truce)."""
    return offer_truce(st, tb, other, seat, np.int64(tb.truce_price), True)


@njit
def set_seat(st: State, seat: np.int64) -> np.int64:
    """Act as another standing seat without ending the turn (scenario setup)."""
    if seat < 0 or seat >= st.n_seats[0]:
        return R_BAD_SEAT
    if not st.seat_alive[seat]:
        return R_SEAT_OUT
    st.active_seat[0] = seat
    return OK


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def disband_unit(st: State, unit: np.int64, seat: np.int64) -> np.int64:
    """D5: remove one of `seat`'s units from the board (any unit, settlers included)."""
    why = _own_unit(st, unit, seat)
    if why != OK:
        return why
    kill_unit(st, unit)  # the slot keeps its unit_type
    log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_UNIT_DISBANDED), seat,
              np.int64(-1), np.int64(-1), unit,
              st.unit_type[unit], np.int64(DISBAND_COMMAND))
    return OK

"""Capture (V05, B7, V15), capital falls (V08, V09, V10, V12, V13) and elimination (V02).

All of it happens inside the one `enter` command, followed by the conquest
check (V03, V06, B6).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.rules.cities import free_tile_near, max_hp
from sim.kernels.rules.combat import may_attack_owner
from sim.kernels.rules.events import (
    log_event,
)
from sim.kernels.rules.seats import forbidden_mechanic
from sim.kernels.rules.units import kill_unit, unit_stat_attack, unit_stat_range
from sim.kernels.rules.victory import check_conquest, eliminate
from sim.rules.codes import (
    COL_A,
    EV_CAPITAL_FALL,
    EV_CAPTURE,
    EV_KEPT,
    EV_OBSERVATORY_LOST,
    EV_REVOLT_START,
    EV_TRANSFER,
    M_ATTACK_CITIES,
    OK,
    R_CITY_HAS_HP,
    R_FORBIDDEN,
    R_NO_CITY,
    R_NO_MOVES,
    R_NO_UNIT,
    R_NOT_ADJACENT,
    R_NOT_MELEE,
    R_NOT_YOUR_UNIT,
    REVOLT_TRANSFER,
)

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit(inline='always')  # a thin level: see sim.jit
def enter_check(st: State, tb: TableArrays, board: Board, unit: np.int64, city: np.int64,
                seat: np.int64) -> np.int64:
    """OK, or why `unit` of `seat` may not enter `city` (V05, V07)."""
    return enter_check_at(st, tb, board.distance, unit, city, seat)


@njit
def enter_check_at(st: State, tb: TableArrays, distance: np.ndarray, unit: np.int64,
                   city: np.int64, seat: np.int64) -> np.int64:
    """enter_check on the board's distance table alone (distance: (T, T))."""
    if unit < 0 or unit >= st.n_units[0] or st.unit_tile[unit] < 0:
        return R_NO_UNIT
    if st.unit_owner[unit] != seat:
        return R_NOT_YOUR_UNIT
    utype = st.unit_type[unit]
    if utype < 0 or unit_stat_range(tb, utype) > 0 or unit_stat_attack(tb, utype) <= 0 \
            or tb.unit_founds_city[utype]:
        return R_NOT_MELEE
    if st.unit_moves_left[unit] <= 0:
        return R_NO_MOVES
    if city < 0 or city >= st.n_cities[0] or st.city_tile[city] < 0:
        return R_NO_CITY
    why = may_attack_owner(st, seat, st.city_owner[city])
    if why != OK:
        return why
    if forbidden_mechanic(st, seat, np.int64(M_ATTACK_CITIES)):   # taking a city attacks it
        return R_FORBIDDEN
    if distance[st.unit_tile[unit], st.city_tile[city]] != 1:
        return R_NOT_ADJACENT
    if st.city_hp[city] > 0:
        return R_CITY_HAS_HP
    return OK


@njit
def _wipe_queue(st: State, tb: TableArrays, city: np.int64, by: np.int64) -> None:
    """Clear the queue and accumulated production; an Observatory in it is lost (V17)."""
    n_units = tb.unit_cost.shape[0]
    for k in range(st.city_queue.shape[1]):
        item = st.city_queue[city, k]
        if item >= n_units and tb.building_science_victory[item - n_units]:
            log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_OBSERVATORY_LOST),
                      st.city_owner[city], by, city, np.int64(0), np.int64(0), np.int64(0))
        st.city_queue[city, k] = -1
    st.city_production[city] = 0


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def revolt_turns_for_transfer(st: State, tb: TableArrays, city: np.int64,
                              capturer_held: np.ndarray) -> np.int64:
    """V11 length minus the Divan's shortening (V13), never below 0.

    Our reading of V13 ("the Divan shortens the duration" of the prize's delay):
    a Divan shortens the transferred revolt when it stands in the transferred
    city or when the capturer held one at the fall (the fallen capital, already
    the capturer's by V05, included; the cities passing with it are not), so
    the building serves the seat that builds it. Each building type shortens
    once. capturer_held: (B,) bool, from `buildings_held` before the transfers.
    """
    turns = tb.revolt_transfer_turns
    for b in range(tb.building_revolt_shorten.shape[0]):
        if st.city_buildings[city, b] or capturer_held[b]:
            turns -= tb.building_revolt_shorten[b]
    return max(turns, np.int64(0))


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def buildings_held(st: State, tb: TableArrays, seat: np.int64) -> np.ndarray:
    """(B,) bool: `seat` holds that building in at least one of its cities."""
    held = np.zeros(tb.building_revolt_shorten.shape[0], dtype=np.bool_)
    for c in range(st.n_cities[0]):
        if st.city_tile[c] >= 0 and st.city_owner[c] == seat:
            for b in range(held.shape[0]):
                if st.city_buildings[c, b]:
                    held[b] = True
    return held


@njit
def capture_city(st: State, tb: TableArrays, board: Board, unit: np.int64, city: np.int64,
                 seat: np.int64) -> np.int64:
    """Apply `enter` after `enter_check` said OK. Returns the capture event's row.

    V05 on the city itself (B7 for a village): population −1 (never below 1),
    queue, accumulated production and food store wiped (B3), buildings kept,
    new owner at full HP for its new population; a revolt is cleared (V15).
    A garrison of another side on the tile is destroyed. A fallen capital
    runs V08 (`capital_fall`); then elimination (V02, V10) and conquest (V03).
    """
    old = st.city_owner[city]
    was_capital = st.city_capital[city]
    tile = st.city_tile[city]
    _wipe_queue(st, tb, city, seat)
    st.city_pop[city] = max(st.city_pop[city] - 1, np.int64(1))
    st.city_food[city] = 0
    st.city_owner[city] = seat
    st.city_capital[city] = 0
    st.city_revolt[city] = 0
    st.city_revolt_cause[city] = 0
    st.city_hp[city] = max_hp(st, tb, city)
    garrison = st.tile_unit[tile]
    if garrison >= 0 and garrison != unit:
        kill_unit(st, garrison)
    st.tile_unit[st.unit_tile[unit]] = -1
    st.unit_tile[unit] = tile
    st.tile_unit[tile] = unit
    st.unit_moves_left[unit] = 0
    row = log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_CAPTURE), old, seat, city,
                    unit, np.int64(0), np.int64(0))
    if old >= 0:
        st.seat_lost_turn[old] = st.turn[0]
        if was_capital:
            capital_fall(st, tb, board, city, old, seat)
        elif not _holds_city(st, old):
            eliminate(st, old, seat, row)
        check_conquest(st, tb, board)
    return row


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def _holds_city(st: State, seat: np.int64) -> bool:
    for c in range(st.n_cities[0]):
        if st.city_tile[c] >= 0 and st.city_owner[c] == seat:
            return True
    return False


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def _step_out(st: State, tb: TableArrays, board: Board, tile: np.int64, old: np.int64) -> None:
    """Move a unit of `old` out of the (now foreign) city on `tile`, or lose it."""
    u = st.tile_unit[tile]
    if u < 0 or st.unit_owner[u] != old:
        return
    n = free_tile_near(st, tb, board, tile, old)  # a neighbour: the unit is on `tile`
    if n < 0:
        kill_unit(st, u)
        return
    st.tile_unit[tile] = -1
    st.unit_tile[u] = n
    st.tile_unit[n] = u


@njit
def capital_fall(st: State, tb: TableArrays, board: Board, fallen: np.int64, old: np.int64,
                 by: np.int64) -> None:
    """V08–V10, V12, V13: split the empire of `old` whose capital `fallen` was taken by `by`.

    Cities of `old` within capital_fall_radius steps (inclusive) of the fallen
    capital pass to `by` at once (V12) keeping population, HP and food (V09),
    queue and production wiped, in revolt (V11, shortened by a Divan in the city or held by
    the capturer: V13).
    Cities beyond stay with `old`, whose new capital is its most populous
    remaining city, ties to the lowest ID. No city left: eliminated (V10).
    A unit of `old` standing in a transferred city steps out to the first free
    passable neighbour that is no other side's city, or is lost if there is none
    (our reading: its units stay on the board, never inside another side's city).
    """
    home = st.city_tile[fallen]
    fall_row = log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_CAPITAL_FALL), old, by,
                         fallen,
                         np.int64(-1), np.int64(0), np.int64(0))
    st.seat_capital[old] = -1
    # before any transfer, so the order cities pass in does not matter (V13 reading)
    capturer_held = buildings_held(st, tb, by)
    for c in range(st.n_cities[0]):
        if c == fallen or st.city_tile[c] < 0 or st.city_owner[c] != old:
            continue
        if board.distance[home, st.city_tile[c]] <= tb.capital_fall_radius:
            _wipe_queue(st, tb, c, by)
            st.city_owner[c] = by
            st.city_capital[c] = 0
            turns = revolt_turns_for_transfer(st, tb, c, capturer_held)
            st.city_revolt[c] = turns
            st.city_revolt_cause[c] = REVOLT_TRANSFER if turns > 0 else 0
            log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_TRANSFER), old, by, c,
                      fall_row,
                      np.int64(0), np.int64(0))
            _step_out(st, tb, board, st.city_tile[c], old)
            if turns > 0:
                log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_REVOLT_START), by,
                          old, c,
                          turns, np.int64(REVOLT_TRANSFER), np.int64(0))
        else:
            log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_KEPT), old, by, c,
                      fall_row, np.int64(0), np.int64(0))
    best = np.int64(-1)
    for c in range(st.n_cities[0]):
        if st.city_tile[c] >= 0 and st.city_owner[c] == old:
            if best < 0 or st.city_pop[c] > st.city_pop[best]:
                best = c
    if best >= 0:
        st.city_capital[best] = 1
        st.seat_capital[old] = best
        if fall_row < st.event_log.shape[0]:
            st.event_log[fall_row, COL_A] = best  # the capital_fall row names the new capital
    else:
        eliminate(st, old, by, fall_row)

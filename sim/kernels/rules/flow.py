"""The turn cycle (T12, C: Turn cycle): a seat's flow (B8), its V18 check, turn advance.

A seat's turn opens with its flow — income, production, growth, repair,
revolt counters, event draw (B8, V11, V14) — then its dominance check (V18,
B5), then its actions. `end_turn` hands over to the next standing seat in
seating order from the turn's opening seat, which rotates every turn (T12);
after the last seat of the last turn the turn limit decides (V19, B6).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.rules.cities import city_yields, free_tile_near, max_hp, repair_city
from sim.kernels.rules.events import (
    log_event,
)
from sim.kernels.rules.healing import heal_units
from sim.kernels.rules.neutrals import neutral_turn
from sim.kernels.rules.seats import end_pact
from sim.kernels.rules.standings import regions, scores
from sim.kernels.rules.territory import dominance_shares, node_income
from sim.kernels.rules.units import is_military, kill_unit, seat_units, spawn_unit, unit_stat_moves
from sim.kernels.rules.victory import finish
from sim.kernels.timing import clock, tick
from sim.rules.codes import (
    CARD_FOOD,
    CARD_GOLD,
    CARD_PUBLIC_UNREST,
    CARD_SCIENCE,
    DISBAND_UPKEEP,
    DOMINANCE,
    DRAW_EVENT_CARD,
    DRAW_UNREST_CITY,
    EV_BUILT,
    EV_OBSERVATORY_COMPLETED,
    EV_REPAIRS,
    EV_REVOLT_END,
    EV_REVOLT_START,
    EV_UNIT_DISBANDED,
    EV_UNREST,
    FOOD,
    GOLD,
    P_GROWTH,
    P_HEAL,
    P_INCOME,
    P_PRODUCTION,
    P_UPKEEP,
    P_VICTORY,
    PERCENT,
    PRODUCTION,
    REVOLT_UNREST,
    SCIENCE,
    SCIENCE_WIN,
    TURN_LIMIT,
)
from sim.world.rng import draw_key, keyed_below, keyed_weighted

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit(inline='always')  # a thin level: see sim.jit
def opening_seat(turn: np.int64, n_seats: np.int64) -> np.int64:
    """The seat that opens `turn` (T12): rotates by one every turn, seat 0 opens turn 1."""
    return (turn - 1) % n_seats


@njit
def flow_income(st: State, tb: TableArrays, board: Board, seat: np.int64,
                mine: np.ndarray) -> None:
    """Income of every city of `seat` (C: Economy, V11, B4, B8), then unit upkeep.

    A revolting city yields nothing, except that an owner who knows Law gets
    law_share_pct % (rounded down) of its normal food and gold (B4).
    Upkeep: military units beyond free_units_per_city × cities cost
    upkeep_per_unit gold each; what the treasury cannot pay is settled by
    disbanding the newest military units (C: Economy). mine: units.seat_units of the
    seat, taken with none of its units gone since.
    """
    tile_city = regions(st, tb, board)
    nodes = node_income(tile_city, st.tile_node, st.city_tile.shape[0], tb.node_yield)
    knows_law = st.seat_techs[seat, tb.law_tech]
    n_held = np.int64(0)
    for c in range(st.n_cities[0]):
        if st.city_tile[c] < 0 or st.city_owner[c] != seat:
            continue
        n_held += 1
        y = city_yields(st, tb, c, nodes)
        if st.city_revolt[c] > 0:
            if knows_law:
                st.city_food[c] += y[FOOD] * tb.law_share_pct // PERCENT
                st.seat_gold[seat] += y[GOLD] * tb.law_share_pct // PERCENT
            continue
        st.city_food[c] += y[FOOD]
        if st.city_queue[c, 0] >= 0:
            st.city_production[c] += y[PRODUCTION]
        st.seat_gold[seat] += y[GOLD]
        st.seat_science[seat] += y[SCIENCE]
    n_military = np.int64(0)
    for u in mine:
        if st.unit_tile[u] >= 0 and is_military(tb, st.unit_type[u]):
            n_military += 1
    over = max(n_military - tb.free_units_per_city * n_held, 0)
    u = st.n_units[0] - 1
    while over * tb.upkeep_per_unit > st.seat_gold[seat] and u >= 0:
        if st.unit_tile[u] >= 0 and st.unit_owner[u] == seat and is_military(tb, st.unit_type[u]):
            kill_unit(st, u)  # the slot keeps its unit_type
            log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_UNIT_DISBANDED), seat,
                      np.int64(-1), np.int64(-1), u,
                      st.unit_type[u], np.int64(DISBAND_UPKEEP))
            over -= 1
        u -= 1
    st.seat_gold[seat] -= over * tb.upkeep_per_unit


@njit
def flow_production(st: State, tb: TableArrays, board: Board, seat: np.int64) -> None:
    """Complete the front item of each city of `seat` whose production covers it.

    A revolting city's queue does not advance (V11) even when funded. A unit
    needs a free tile on or beside the city, and a settler a city of at least
    settler_min_population (it costs settler_population_cost). Completing the
    science building wins at once (V16, B6). Production beyond the cost
    carries over to the next item.
    """
    n_units = tb.unit_cost.shape[0]
    for c in range(st.n_cities[0]):
        if st.city_tile[c] < 0 or st.city_owner[c] != seat or st.city_revolt[c] > 0:
            continue
        item = st.city_queue[c, 0]
        if item < 0:
            continue
        if item < n_units:
            cost = tb.unit_cost[item]
            if st.city_production[c] < cost:
                continue
            if tb.unit_founds_city[item] and st.city_pop[c] < tb.settler_min_population:
                continue
            tile = free_tile_near(st, tb, board, st.city_tile[c], seat)
            if tile < 0:
                continue
            if spawn_unit(st, tb, item, seat, tile, tb.unit_hp[item], np.int64(-1)) < 0:
                continue
            if tb.unit_founds_city[item]:
                st.city_pop[c] -= tb.settler_population_cost
                st.city_hp[c] = min(st.city_hp[c], max_hp(st, tb, c))
        else:
            b = item - n_units
            cost = tb.building_cost[b]
            if st.city_production[c] < cost:
                continue
            st.city_buildings[c, b] = 1
        st.city_production[c] -= cost
        for k in range(st.city_queue.shape[1] - 1):
            st.city_queue[c, k] = st.city_queue[c, k + 1]
        st.city_queue[c, st.city_queue.shape[1] - 1] = -1
        if st.city_queue[c, 0] < 0:
            st.city_production[c] = 0
        log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_BUILT), seat, np.int64(-1), c,
                  item, np.int64(0), np.int64(0))
        if item >= n_units and tb.building_science_victory[item - n_units]:
            log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_OBSERVATORY_COMPLETED),
                      seat, np.int64(-1),
                      c, np.int64(0), np.int64(0), np.int64(0))
            finish(st, np.int64(SCIENCE_WIN), seat)
            return


@njit
def flow_growth_repair_revolt(st: State, tb: TableArrays, seat: np.int64) -> None:
    """Growth by food store, repair (not while in revolt, V11), revolt counters (B8).

    The repair is logged as one EV_REPAIRS row (cities repaired, HP total) when any."""
    n_repaired = np.int64(0)
    hp_repaired = np.int64(0)
    for c in range(st.n_cities[0]):
        if st.city_tile[c] < 0 or st.city_owner[c] != seat:
            continue
        need = tb.growth_base + tb.growth_per_population * st.city_pop[c]
        if st.city_pop[c] < tb.max_population:
            if st.city_food[c] >= need:
                st.city_food[c] -= need
                st.city_pop[c] += 1
        else:
            st.city_food[c] = min(st.city_food[c], need)
        if st.city_revolt[c] == 0:
            gained = repair_city(st, tb, c)
            if gained > 0:
                n_repaired += 1
                hp_repaired += gained
    if n_repaired > 0:
        log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_REPAIRS), seat, np.int64(-1),
                  np.int64(-1), n_repaired,
                  hp_repaired, np.int64(0))
    for c in range(st.n_cities[0]):
        if st.city_tile[c] < 0 or st.city_owner[c] != seat or st.city_revolt[c] <= 0:
            continue
        st.city_revolt[c] -= 1
        if st.city_revolt[c] == 0:
            log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_REVOLT_END), seat,
                      np.int64(-1), c, np.int64(0),
                      st.city_revolt_cause[c], np.int64(0))
            st.city_revolt_cause[c] = 0


@njit
def flow_event_card(st: State, tb: TableArrays, seat: np.int64) -> None:
    """Draw one card from the EVENTS stream (V14, C: Events), keyed by (turn, the
    seat): the seat's card does not depend on how many draws came before it.

    Public unrest puts one of the seat's own cities not already in revolt,
    drawn uniformly, in revolt for unrest_turns (a Divan does not shorten it).
    """
    turn = st.turn[0]
    card = keyed_weighted(draw_key(st.rng_events[0], turn, np.int64(DRAW_EVENT_CARD), seat),
                          tb.card_weight)
    kind = tb.card_kind[card]
    amount = tb.card_amount[card]
    if kind == CARD_PUBLIC_UNREST:
        n = np.int64(0)
        for c in range(st.n_cities[0]):
            if st.city_tile[c] >= 0 and st.city_owner[c] == seat and st.city_revolt[c] == 0:
                n += 1
        if n == 0 or tb.unrest_turns <= 0:
            return
        pick = keyed_below(draw_key(st.rng_events[0], turn, np.int64(DRAW_UNREST_CITY), seat), n)
        for c in range(st.n_cities[0]):
            if st.city_tile[c] >= 0 and st.city_owner[c] == seat and st.city_revolt[c] == 0:
                if pick == 0:
                    st.city_revolt[c] = tb.unrest_turns
                    st.city_revolt_cause[c] = REVOLT_UNREST
                    log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_UNREST), seat,
                              np.int64(-1), c,
                              tb.unrest_turns, np.int64(0), np.int64(0))
                    log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_REVOLT_START),
                              seat, np.int64(-1),
                              c, tb.unrest_turns, np.int64(REVOLT_UNREST), np.int64(0))
                    return
                pick -= 1
    elif kind == CARD_GOLD:
        st.seat_gold[seat] += amount
    elif kind == CARD_FOOD:
        cap = st.seat_capital[seat]
        if cap >= 0:
            st.city_food[cap] += amount
    elif kind == CARD_SCIENCE:
        st.seat_science[seat] += amount


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def dominance_check(st: State, tb: TableArrays, seat: np.int64) -> None:
    """V18, B5: share >= share_pct adds 1 to the counter, else it resets; reaching
    counter_to_win wins at once. Villages count in neither side of the share."""
    held, total = dominance_shares(st.city_tile, st.city_owner, st.n_seats[0])
    if total > 0 and held[seat] * PERCENT >= tb.dominance_share_pct * total:
        st.seat_dominance[seat] += 1
    else:
        st.seat_dominance[seat] = 0
    if st.seat_dominance[seat] >= tb.dominance_to_win:
        finish(st, np.int64(DOMINANCE), seat)


@njit
def open_seat_turn(st: State, tb: TableArrays, board: Board, seat: np.int64,
                   ticks: np.ndarray) -> None:
    """Make `seat` active and run its flow then its V18 check (C: Turn cycle).

    Healing (D3) reads the moves the seat's units kept from its previous turn, so it
    runs before their moves are renewed. ticks: sim.kernels.timing (the flow's phases)."""
    t0 = clock(ticks)
    st.active_seat[0] = seat
    # the seat's units, taken once for the scans of healing, moves and upkeep (none of
    # them leaves the board or spawns before upkeep's count)
    mine = seat_units(st, seat)
    heal_units(st, tb, board, seat, mine)
    for u in mine:
        st.unit_moves_left[u] = unit_stat_moves(tb, st.unit_type[u])
    t0 = tick(ticks, np.int64(P_HEAL), t0)
    flow_income(st, tb, board, seat, mine)
    t0 = tick(ticks, np.int64(P_INCOME), t0)
    flow_production(st, tb, board, seat)
    t0 = tick(ticks, np.int64(P_PRODUCTION), t0)
    if st.finished[0]:
        return
    flow_growth_repair_revolt(st, tb, seat)
    flow_event_card(st, tb, seat)
    t0 = tick(ticks, np.int64(P_GROWTH), t0)
    dominance_check(st, tb, seat)
    tick(ticks, np.int64(P_VICTORY), t0)


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def start_of_turn(st: State, tb: TableArrays, board: Board) -> None:
    """Once per turn, before its opening seat: truce and pact counters, then the neutral
    side's turn (village repair, bandit spawns and orders: D3, D4)."""
    n = st.n_seats[0]
    for a in range(n):
        for b in range(n):
            if st.truce_turns[a, b] > 0:
                st.truce_turns[a, b] -= 1
    for p in range(st.pact_target.shape[0]):
        if st.pact_target[p] >= 0:
            st.pact_turns[p] -= 1
            if st.pact_turns[p] <= 0:
                end_pact(st, p)
    neutral_turn(st, tb, board)


@njit
def next_seat(st: State) -> np.int64:
    """The next standing seat of the current turn after the active one, or -1."""
    n = st.n_seats[0]
    first = opening_seat(st.turn[0], n)
    pos = (st.active_seat[0] - first) % n
    for k in range(pos + 1, n):
        s = (first + k) % n
        if st.seat_alive[s]:
            return s
    return -1


@njit(inline='always')  # a thin level: one fewer in the call tree (sim.jit)
def end_turn(st: State, tb: TableArrays, board: Board, ticks: np.ndarray) -> None:
    """End the active seat's turn and open the next one's (its flow and V18 run).

    After the last standing seat of the last turn, the turn limit ends the
    match and the seat ranked first by T11 wins (V19, B6). ticks: sim.kernels.timing.
    """
    s = next_seat(st)
    if s < 0:
        if st.turn[0] >= st.last_turn[0]:
            t0 = clock(ticks)
            _terms, _counts, _score, rank = scores(st, tb, board)
            for t in range(rank.shape[0]):
                if rank[t] == 1:
                    finish(st, np.int64(TURN_LIMIT), t)
            tick(ticks, np.int64(P_VICTORY), t0)
            return
        st.turn[0] += 1
        open_turn(st, tb, board, ticks)
        return
    open_seat_turn(st, tb, board, s, ticks)


@njit
def open_turn(st: State, tb: TableArrays, board: Board, ticks: np.ndarray) -> None:
    """Open the current turn: once-per-turn upkeep (start_of_turn), then the flow of the
    first standing seat from the turn's opening seat (T12). ticks: sim.kernels.timing."""
    t0 = clock(ticks)
    start_of_turn(st, tb, board)
    tick(ticks, np.int64(P_UPKEEP), t0)
    n = st.n_seats[0]
    first = opening_seat(st.turn[0], n)
    for k in range(n):
        s = (first + k) % n
        if st.seat_alive[s]:
            open_seat_turn(st, tb, board, s, ticks)
            return

"""Random legal play (issue 43): the ladder's floor, a seat that plays each decision at random.

A random-play seat (State.seat_skill == SKILL_RANDOM) takes every decision the AI takes
for a seat, each drawn uniformly among the options that decision has, every option a
command the rule kernels accept (sim.kernels.rules: commands, combat, capture), so every
action stays legal:

- research: a tech to buy among those it may research (C: Research: not known, not
  forbidden, prerequisites known); it buys it when the science points cover it;
- production: each of its cities with an empty queue queues one item among every item
  the queue takes (queue_check OK);
- gold: each city with a front item rushes it or not, when a rush is legal;
- a truce (D9, V07): no offer, or an offer of truce_price to one of the rivals an offer
  may go to (offer_truce's checks); asked by a rival, it accepts or declines at random
  (sim.kernels.ai.diplomacy.random_answer);
- each of its units, in ID order, step by step while it has moves: stay (its turn ends),
  step onto one of the free neighbouring tiles a move may enter, strike one of the
  targets in reach (attack_outcome OK), enter a neighbouring city at 0 HP (V05), or, a
  settler, found a city where it stands (found_check OK).

It joins no pact, repairs no city and buys no tile (the skill-0 AI's answers to a
threat and its spending of spare gold: no decision between options a draw could make).
A ladder compares the levels against this floor: random choice among legal actions.

The match loop plays a random-play seat's turn from its skilled entry (sim.kernels.search.
decide_orders, compiled only into a match with a skill-1, skill-2 or random-play seat; it
tells the loop the skill-0 AI must not act for the seat), so a match of skill-0 seats
compiles and plays none of this module; its one trace there is the answer to a truce.
Inside a lookahead's or a search's playout the skill-0 AI plays the seat on its orders,
as it models every seat.

Random numbers: the seat's own random-play stream (State.rng_random, Purpose.RANDOM_PLAY,
derived only for such seats): one counter-based stream a turn, keyed by the turn
(draw_key), drawn in the fixed order of the decisions above, so no other stream of the
match moves and a match plays the same on any worker or chunking.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from sim.jit import njit
from sim.kernels.ai.diplomacy import accepts_truce
from sim.kernels.rules.capture import capture_city, enter_check_at
from sim.kernels.rules.combat import attack_outcome_at, resolve_attack_at
from sim.kernels.rules.commands import (
    found_check,
    found_city,
    move_unit_at,
    offer_truce,
    queue_check,
    queue_item,
    research,
    rush,
)
from sim.kernels.rules.seats import forbidden_mechanic, forbidden_tech
from sim.kernels.rules.units import live_units
from sim.rules.codes import (
    DISC_SIZES,
    DRAW_PLAN,
    M_RUSH,
    M_TRUCE,
    N_DIRECTIONS,
    OK,
)
from sim.world.rng import below, draw_key

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit(inline='always')  # a thin level: see sim.jit
def turn_stream(st: State, seat: np.int64) -> np.ndarray:
    """(1,) uint64: the random-play seat's stream for this turn, keyed by the turn from
    its random-play key (State.rng_random), for sim.world.rng.below."""
    stream = np.empty(1, dtype=np.uint64)
    stream[0] = draw_key(st.rng_random[seat], st.turn[0], np.int64(DRAW_PLAN), seat)
    return stream


@njit
def random_research(st: State, tb: TableArrays, seat: np.int64, stream: np.ndarray) -> None:
    """C: Research: draw a tech among those the seat may research; buy it when its science
    points cover the cost (else it saves, and draws again next turn)."""
    n = tb.tech_cost.shape[0]
    options = np.empty(n, dtype=np.int64)
    k = np.int64(0)
    for t in range(n):
        if st.seat_techs[seat, t] or forbidden_tech(st, seat, np.int64(t)):
            continue
        known = True
        for p in range(n):
            if tb.tech_requires[t, p] and not st.seat_techs[seat, p]:
                known = False
        if known:
            options[k] = t
            k += 1
    if k == 0:
        return
    tech = options[below(stream, k)]
    if st.seat_science[seat] >= tb.tech_cost[tech]:
        research(st, tb, tech, seat)


@njit
def random_production(st: State, tb: TableArrays, seat: np.int64, stream: np.ndarray) -> None:
    """Each of the seat's cities with an empty queue queues one item drawn among every
    item the queue takes (queue_check); then each city with a front item rushes it or
    not, when a rush is legal (its price > 0 and within the seat's gold)."""
    n_items = tb.unit_cost.shape[0] + tb.building_cost.shape[0]
    options = np.empty(n_items, dtype=np.int64)
    for c in range(st.n_cities[0]):
        if st.city_tile[c] < 0 or st.city_owner[c] != seat or st.city_queue[c, 0] >= 0:
            continue
        k = np.int64(0)
        for item in range(n_items):
            if queue_check(st, tb, c, np.int64(item), seat) == OK:
                options[k] = item
                k += 1
        if k > 0:
            queue_item(st, tb, c, options[below(stream, k)], seat)
    if forbidden_mechanic(st, seat, np.int64(M_RUSH)):
        return
    for c in range(st.n_cities[0]):
        if st.city_tile[c] < 0 or st.city_owner[c] != seat or st.city_queue[c, 0] < 0:
            continue
        if below(stream, np.int64(2)) == 1:
            rush(st, tb, c, seat)   # refused (no gold, not rushable): nothing happens


@njit
def random_truce(st: State, tb: TableArrays, distance: np.ndarray, seat: np.int64,
                 stream: np.ndarray) -> None:
    """D9: no offer, or an offer of truce_price to one rival drawn among those an offer
    may go to (offer_truce's checks), which the rival answers by its own AI
    (sim.kernels.ai.diplomacy.accepts_truce). distance: (T, T) board.distance."""
    if forbidden_mechanic(st, seat, np.int64(M_TRUCE)) or st.seat_gold[seat] < tb.truce_price:
        return
    n = st.n_seats[0]
    options = np.empty(n + 1, dtype=np.int64)
    options[0] = -1   # no offer
    k = np.int64(1)
    for x in range(n):
        if x != seat and st.seat_alive[x] and st.truce_turns[seat, x] == 0 and \
                not forbidden_mechanic(st, np.int64(x), np.int64(M_TRUCE)):
            options[k] = x
            k += 1
    other = options[below(stream, k)]
    if other >= 0:
        price = np.int64(tb.truce_price)
        offer_truce(st, tb, other, seat, price,
                    accepts_truce(st, tb, distance, other, seat, price))


class UnitOptions(NamedTuple):
    """How many options of each kind one step of a unit has, in the order they fill
    `places` after the first place (staying, -1): found (0 or 1: the unit's tile),
    move (the tiles), enter (the cities), strike (the tiles). Built with np.int64 values
    (sim.jit)."""
    found: np.int64
    move: np.int64
    enter: np.int64
    strike: np.int64


@njit
def unit_options(st: State, tb: TableArrays, board: Board, unit: np.int64, seat: np.int64,
                 places: np.ndarray) -> UnitOptions:
    """The options of one step of `unit` (module docstring), each a place in
    places[:1 + found + move + enter + strike]: staying first (-1), then founding where
    it stands (found_check), the neighbouring tiles a move command takes (move_unit_at's
    checks of one step), the neighbouring cities it may enter (enter_check_at), the
    tiles in reach it may strike (attack_outcome_at), each in direction or disc order.
    places: (2 + 2 × 6 + board.disc's row length,) int64 scratch."""
    neighbours = board.neighbours
    distance = board.distance
    here = st.unit_tile[unit]
    utype = st.unit_type[unit]
    places[0] = -1
    n = np.int64(1)
    if tb.unit_founds_city[utype] and found_check(st, tb, board, unit, seat) == OK:
        places[n] = here
        n += 1
    n_found = n - 1
    for k in range(N_DIRECTIONS):
        m = neighbours[here, k]
        if m < 0:
            continue
        site = st.tile_site[m]
        # move_unit_at's checks for one step (moves left: the caller's loop)
        if tb.terrain_passable[st.tile_terrain[m]] and st.tile_unit[m] < 0 and \
                (site < 0 or st.city_owner[site] == seat):
            places[n] = m
            n += 1
    n_move = n - 1 - n_found
    for k in range(N_DIRECTIONS):
        m = neighbours[here, k]
        if m >= 0 and st.tile_site[m] >= 0 and \
                enter_check_at(st, tb, distance, unit, st.tile_site[m], seat) == OK:
            places[n] = st.tile_site[m]
            n += 1
    n_enter = n - 1 - n_found - n_move
    reach = max(tb.unit_range[utype], 1)
    for k in range(1, DISC_SIZES[reach]):
        t = board.disc[here, k]
        if t < 0 or (st.tile_site[t] < 0 and st.tile_unit[t] < 0):
            continue
        if attack_outcome_at(st, tb, distance, unit, t, seat)[0] == OK:
            places[n] = t
            n += 1
    return UnitOptions(n_found, n_move, n_enter, n - 1 - n_found - n_move - n_enter)


@njit
def random_units(st: State, tb: TableArrays, board: Board, seat: np.int64,
                 stream: np.ndarray) -> None:
    """Each of the seat's units on the board, in ID order, takes one option after another
    drawn uniformly among unit_options while it has moves left: a step costs a move, a
    strike ends its moves, an entry, a founding or staying ends its turn."""
    places = np.empty(2 + 2 * N_DIRECTIONS + board.disc.shape[1], dtype=np.int64)
    for u in live_units(st):
        while not st.finished[0] and st.unit_tile[u] >= 0 and st.unit_owner[u] == seat and \
                st.unit_moves_left[u] > 0:
            opt = unit_options(st, tb, board, u, seat, places)
            i = below(stream, 1 + opt.found + opt.move + opt.enter + opt.strike)
            place = places[i]
            if i == 0:
                break   # it stays
            i -= 1
            if i < opt.found:
                found_city(st, tb, board, u, seat)
                break
            i -= opt.found
            if i < opt.move:
                if move_unit_at(st, tb, board.neighbours, board.distance, u, place,
                                seat) != OK:
                    break
                continue
            i -= opt.move
            if i < opt.enter:
                capture_city(st, tb, board, u, place, seat)
                break
            resolve_attack_at(st, tb, board.distance, u, place, seat)


@njit
def random_turn(st: State, tb: TableArrays, board: Board, seat: np.int64) -> None:
    """Play a random-play seat's actions for this turn (its flow has already run; the
    module docstring says which decisions, in this order)."""
    if st.finished[0] or not st.seat_alive[seat]:
        return
    stream = turn_stream(st, seat)
    random_research(st, tb, seat, stream)
    random_truce(st, tb, board.distance, seat, stream)
    random_production(st, tb, seat, stream)
    random_units(st, tb, board, seat, stream)

"""Small `@njit` helpers shared by the rule kernels.

`st` is a sim.world.state.State, `tb` a sim.rules.record.TableArrays, `board` a
sim.world.board.Board; all are passed in, nothing is global.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.rules.events import (
    log_event,
)
from sim.kernels.rules.territory import (
    city_max_hp,
    resolve_regions,
    score_terms_into,
    term_sum,
    territory_and_score,
)
from sim.rules.codes import (
    CONQUEST,
    EV_ELIMINATED,
    EV_PACT_END,
    EV_VICTORY,
    FOOD,
    GOLD,
    HUMAN_OUT,
    N_DIRECTIONS,
    N_NODE_KINDS,
    N_SCORE_COUNTS,
    N_SCORE_TERMS,
    PRODUCTION,
    SCIENCE,
)

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit
def max_hp(st: State, tb: TableArrays, city: np.int64) -> np.int64:
    """Max HP of `city` at its population with its buildings (V05)."""
    return city_max_hp(st.city_pop[city], st.city_buildings[city], tb.hp_base,
                       tb.hp_per_population, tb.building_hp)


@njit
def regions(st: State, tb: TableArrays, board: Board) -> np.ndarray:
    """(T,) owning city per tile for the current state (T08)."""
    return resolve_regions(board.distance, board.disc, st.city_tile, st.city_owner, st.city_pop,
                           st.tile_bought_by[: st.n_tiles[0]], tb.ring_radius, tb.grown_ring_radius,
                           tb.grown_ring_population)


@njit
def territory_and_scores(st: State, tb: TableArrays, board: Board):
    """(tile_city (T,), terms (S, 5), counts (S, 4), score (S,), rank (S,)) for the
    current state, in one resolve (T08, T10–T13)."""
    n = st.n_seats[0]
    return territory_and_score(
        board.distance, board.disc, st.city_tile, st.city_owner, st.city_pop, st.city_buildings,
        st.tile_bought_by[: st.n_tiles[0]], st.seat_gold[:n], st.seat_alive[:n],
        tb.building_score_points, tb.ring_radius, tb.grown_ring_radius,
        tb.grown_ring_population, tb.w_region, tb.w_population, tb.w_city, tb.gold_per_point)


@njit
def score_parts_into(st: State, tb: TableArrays, board: Board, flat_terms: np.ndarray,
                     flat_counts: np.ndarray):
    """The current score terms (S, 5) and counts (S, 4) (T10, T13,
    territory.score_terms) in the caller's (S × 5,) and (S × 4,) int64 buffers, and
    the region map (T,) they were counted on (T08):
    (tile_city, terms, counts), the last two views of the buffers."""
    n = st.n_seats[0]
    flat_terms[:] = 0
    flat_counts[:] = 0
    terms = flat_terms.reshape((n, N_SCORE_TERMS))
    counts = flat_counts.reshape((n, N_SCORE_COUNTS))
    tile_city = regions(st, tb, board)
    score_terms_into(terms, counts, tile_city, st.city_tile, st.city_owner, st.city_pop,
                     st.city_buildings, tb.building_score_points, st.seat_gold[:n],
                     tb.w_region, tb.w_population, tb.w_city, tb.gold_per_point)
    return tile_city, terms, counts


@njit
def regions_and_scores(st: State, tb: TableArrays, board: Board):
    """(tile_city (T,), score (S,)): territory_and_scores' regions and scores alone, for
    the AI's read of them each seat turn (T08, T10, T13): no ranks are made."""
    n = st.n_seats[0]
    flat_terms = np.empty(n * N_SCORE_TERMS, dtype=np.int64)
    flat_counts = np.empty(n * N_SCORE_COUNTS, dtype=np.int64)
    tile_city, terms, _counts = score_parts_into(st, tb, board, flat_terms, flat_counts)
    score = np.zeros(n, dtype=np.int64)
    for s in range(n):
        score[s] = term_sum(terms, s)
    return tile_city, score


@njit
def scores(st: State, tb: TableArrays, board: Board):
    """(terms (S, 5), counts (S, 4), score (S,), rank (S,)) for the current state (T10–T13)."""
    _tile_city, terms, counts, score, rank = territory_and_scores(st, tb, board)
    return terms, counts, score, rank


@njit
def repair_city(st: State, tb: TableArrays, city: np.int64) -> np.int64:
    """Turn-start repair of `city` (C: Cities; D3 for villages): repair_per_turn HP up
    to its max; returns the HP gained."""
    hp = min(st.city_hp[city] + tb.repair_per_turn, max_hp(st, tb, city))
    gained = max(hp - st.city_hp[city], np.int64(0))
    st.city_hp[city] = hp
    return gained


@njit
def cities_held(st: State, seat: np.int64) -> np.int64:
    n = np.int64(0)
    for c in range(st.n_cities[0]):
        if st.city_tile[c] >= 0 and st.city_owner[c] == seat:
            n += 1
    return n


@njit
def forbidden_item(st: State, n_units: np.int64, seat: np.int64, item: np.int64) -> bool:
    """Whether the experiment forbids `seat` the queue item `item` (a unit code below
    n_units, else n_units + building), issue 16. Non-seats (bandits, villages) never."""
    if seat < 0:
        return False
    if item < n_units:
        return (st.seat_forbid_units[seat] >> item) & 1 == 1
    return (st.seat_forbid_buildings[seat] >> (item - n_units)) & 1 == 1


@njit
def forbidden_tech(st: State, seat: np.int64, tech: np.int64) -> bool:
    """Whether the experiment forbids `seat` to research `tech` (research:<tech>)."""
    return seat >= 0 and (st.seat_forbid_techs[seat] >> tech) & 1 == 1


@njit(inline="always")  # called with several literal mechanics: one compile, not one per mechanic
def forbidden_mechanic(st: State, seat: np.int64, mechanic: np.int64) -> bool:
    """Whether the experiment forbids `seat` a mechanic (sim.rules.codes.MECHANICS)."""
    return seat >= 0 and (st.seat_forbid_mechanics[seat] >> mechanic) & 1 == 1


@njit
def in_pact_together(st: State, a: np.int64, b: np.int64) -> bool:
    """True when `a` and `b` are members of one live pact (V07)."""
    for p in range(st.pact_target.shape[0]):
        if st.pact_target[p] >= 0 and st.pact_members[p, a] and st.pact_members[p, b]:
            return True
    return False


@njit
def pact_against(st: State, seat: np.int64, target: np.int64) -> bool:
    """True when `seat` is a member of a live pact whose target is `target` (V07:
    the pact's target is not protected, our reading: not by a truce either)."""
    for p in range(st.pact_target.shape[0]):
        if st.pact_target[p] == target and st.pact_members[p, seat]:
            return True
    return False


@njit
def truce_between(st: State, a: np.int64, b: np.int64) -> bool:
    return a >= 0 and b >= 0 and a != b and st.truce_turns[a, b] > 0


@njit(inline="always")  # called with each victory code as a literal: one compile, not six
def finish(st: State, code: np.int64, winner: np.int64) -> None:
    """End the match with victory `code` for `winner` (V01: callers check in its order)."""
    if st.finished[0]:
        return
    st.finished[0] = 1
    st.victory[0] = code
    st.winner[0] = winner
    log_event(st.event_log, st.n_events, st.turn[0], EV_VICTORY, winner, -1, -1, code, 0, 0)


@njit
def kill_unit(st: State, u: np.int64) -> None:
    t = st.unit_tile[u]
    if t >= 0 and st.tile_unit[t] == u:
        st.tile_unit[t] = -1
    st.unit_tile[u] = -1
    st.unit_hp[u] = 0
    st.unit_moves_left[u] = 0


@njit
def end_pact(st: State, p: np.int64) -> None:
    log_event(st.event_log, st.n_events, st.turn[0], EV_PACT_END, st.pact_target[p], -1, -1,
              p, 0, 0)
    st.pact_target[p] = -1
    st.pact_turns[p] = 0
    for s in range(st.n_seats[0]):
        st.pact_members[p, s] = 0


@njit
def eliminate(st: State, seat: np.int64, by: np.int64, cause_row: np.int64) -> None:
    """V02: the seat is out; its units leave the board, it owns nothing more."""
    st.seat_alive[seat] = 0
    st.seat_eliminated_turn[seat] = st.turn[0]
    st.seat_capital[seat] = -1
    st.seat_dominance[seat] = 0
    for u in range(st.n_units[0]):
        if st.unit_owner[u] == seat and st.unit_tile[u] >= 0:
            kill_unit(st, u)
    for o in range(st.n_seats[0]):
        st.truce_turns[seat, o] = 0
        st.truce_turns[o, seat] = 0
    for p in range(st.pact_target.shape[0]):
        if st.pact_target[p] == seat:
            end_pact(st, p)
        elif st.pact_target[p] >= 0:
            st.pact_members[p, seat] = 0
    log_event(st.event_log, st.n_events, st.turn[0], EV_ELIMINATED, seat, by, -1, cause_row, 0, 0)


@njit
def check_conquest(st: State, tb: TableArrays, board: Board) -> None:
    """V03, V06, V20, B6: after a command that can eliminate a seat.

    One seat left: conquest. Otherwise, if the setup had human seats and none
    is left standing: the surviving seat ranked first wins (human_out).
    """
    if st.finished[0]:
        return
    alive = np.int64(0)
    last = np.int64(-1)
    humans_set = False
    humans_alive = False
    for s in range(st.n_seats[0]):
        if st.seat_alive[s]:
            alive += 1
            last = s
            if st.seat_human[s]:
                humans_alive = True
        if st.seat_human[s]:
            humans_set = True
    if alive == 1:
        finish(st, CONQUEST, last)
    elif humans_set and not humans_alive and alive > 1:
        _terms, _counts, _score, rank = scores(st, tb, board)
        for s in range(rank.shape[0]):
            if rank[s] == 1:
                finish(st, HUMAN_OUT, s)


@njit
def city_yields(st: State, tb: TableArrays, city: np.int64,
                node_yields: np.ndarray) -> tuple[np.int64, np.int64, np.int64, np.int64]:
    """Normal food, production, gold, science of a city, ignoring revolt (C: Economy):
    a tuple indexed like sim.rules.codes.YIELDS (FOOD, PRODUCTION, GOLD, SCIENCE), not
    an array, since flow_income asks for every city's every turn and an array is an
    allocation each time.

    node_yields: (C, 3) from territory.node_income.
    """
    pop = st.city_pop[city]
    # the node kinds are the first yields (sim.rules.codes.YIELDS)
    food = tb.yield_base[FOOD] + tb.yield_per_population[FOOD] * pop + node_yields[city, FOOD]
    production = tb.yield_base[PRODUCTION] + tb.yield_per_population[PRODUCTION] * pop + \
        node_yields[city, PRODUCTION]
    gold = tb.yield_base[GOLD] + tb.yield_per_population[GOLD] * pop + node_yields[city, GOLD]
    science = tb.yield_base[SCIENCE] + tb.yield_per_population[SCIENCE] * pop
    for b in range(tb.building_cost.shape[0]):
        if st.city_buildings[city, b]:
            food += tb.building_yield[b, FOOD]
            production += tb.building_yield[b, PRODUCTION]
            gold += tb.building_yield[b, GOLD]
            science += tb.building_yield[b, SCIENCE]
    return food, production, gold, science


@njit
def live_units(st: State) -> np.ndarray:
    """(N,) int64: IDs of every unit on the board (any owner, bandits too), ascending.
    Taken once a seat turn: a scan over it visits a few dozen units where a scan of
    the slots visits every unit ever spawned in the match (units that left the board
    keep their slots)."""
    live = np.empty(st.n_units[0], dtype=np.int64)
    n = np.int64(0)
    for u in range(st.n_units[0]):
        if st.unit_tile[u] >= 0:
            live[n] = u
            n += 1
    return live[:n]


@njit
def seat_units(st: State, seat: np.int64) -> np.ndarray:
    """(N,) int64: IDs of the seat's units on the board, ascending (live_units of one
    seat), for the flow's scans of them."""
    mine = np.empty(st.n_units[0], dtype=np.int64)
    n = np.int64(0)
    for u in range(st.n_units[0]):
        if st.unit_tile[u] >= 0 and st.unit_owner[u] == seat:
            mine[n] = u
            n += 1
    return mine[:n]


@njit
def city_yield(st: State, tb: TableArrays, city: np.int64, node_yields: np.ndarray,
               k: np.int64) -> np.int64:
    """city_yields(st, tb, city, node_yields)[k] (yield k: FOOD, PRODUCTION, GOLD or
    SCIENCE), without building the (4,) array: the AI reads one yield of every city."""
    out = tb.yield_base[k] + tb.yield_per_population[k] * st.city_pop[city]
    if k < N_NODE_KINDS:  # the node kinds are the first yields (sim.rules.codes.YIELDS)
        out += node_yields[city, k]
    for b in range(tb.building_cost.shape[0]):
        if st.city_buildings[city, b]:
            out += tb.building_yield[b, k]
    return out


@njit
def free_tile_near(st: State, tb: TableArrays, board: Board, tile: np.int64,
                   seat: np.int64) -> np.int64:
    """`tile` if no unit stands there, else the first empty passable neighbour
    (direction order, sim.world.board) that is not another side's city; -1 if none."""
    if st.tile_unit[tile] < 0:
        return tile
    for k in range(N_DIRECTIONS):
        n = board.neighbours[tile, k]
        if n < 0 or st.tile_unit[n] >= 0 or not tb.terrain_passable[st.tile_terrain[n]]:
            continue
        site = st.tile_site[n]
        if site >= 0 and st.city_owner[site] != seat:
            continue
        return n
    return -1


@njit
def place_city(st: State, tb: TableArrays, tile: np.int64, owner: np.int64,
               pop: np.int64) -> np.int64:
    """A new city on `tile` at full HP for `pop` (the next free ID; IDs are never reused).
    A seat with no capital gets it as its capital. Returns its ID, or -1 when full."""
    c = st.n_cities[0]
    if c >= st.city_tile.shape[0]:
        return -1
    st.n_cities[0] = c + 1
    st.city_tile[c] = tile
    st.tile_site[tile] = c
    st.city_owner[c] = owner
    st.city_pop[c] = pop
    st.city_food[c] = 0
    st.city_production[c] = 0
    st.city_revolt[c] = 0
    st.city_revolt_cause[c] = 0
    st.city_hp[c] = max_hp(st, tb, c)
    if owner >= 0 and st.seat_capital[owner] < 0:
        st.city_capital[c] = 1
        st.seat_capital[owner] = c
    return c


@njit
def spawn_unit(st: State, tb: TableArrays, unit_type: np.int64, owner: np.int64, tile: np.int64,
               hp: np.int64, camp: np.int64) -> np.int64:
    """Put a new unit on an empty `tile`; returns its ID or -1 when capacity is full."""
    u = st.n_units[0]
    if u >= st.unit_tile.shape[0]:
        return -1
    st.n_units[0] = u + 1
    st.unit_type[u] = unit_type
    st.unit_owner[u] = owner
    st.unit_tile[u] = tile
    st.unit_hp[u] = hp
    st.unit_moves_left[u] = unit_stat_moves(tb, unit_type)
    st.unit_camp[u] = camp
    st.tile_unit[tile] = u
    return u


# Bandits have unit_type -1 and take their stats from the neutrals table; these
# accessors keep a negative type from wrapping around a numpy index.
@njit
def unit_stat_attack(tb: TableArrays, unit_type: np.int64) -> np.int64:
    return tb.bandit_attack if unit_type < 0 else tb.unit_attack[unit_type]


@njit
def unit_stat_defence(tb: TableArrays, unit_type: np.int64) -> np.int64:
    return tb.bandit_defence if unit_type < 0 else tb.unit_defence[unit_type]


@njit
def unit_stat_hp(tb: TableArrays, unit_type: np.int64) -> np.int64:
    return tb.bandit_hp if unit_type < 0 else tb.unit_hp[unit_type]


@njit
def unit_stat_moves(tb: TableArrays, unit_type: np.int64) -> np.int64:
    return tb.bandit_moves if unit_type < 0 else tb.unit_moves[unit_type]


@njit
def unit_stat_range(tb: TableArrays, unit_type: np.int64) -> np.int64:
    return np.int64(0) if unit_type < 0 else tb.unit_range[unit_type]


@njit
def is_military(tb: TableArrays, unit_type: np.int64) -> bool:
    """Counts for upkeep and can fight: not a city founder, attack > 0."""
    return unit_type >= 0 and not tb.unit_founds_city[unit_type] and tb.unit_attack[unit_type] > 0

"""Cities (C: Cities, C: Economy): max HP and repair (V05), founding one on a tile,
the free tile beside it a new unit takes, and its yields.

`st` is a sim.world.state.State, `tb` a sim.rules.record.TableArrays, `board` a
sim.world.board.Board; all are passed in, nothing is global.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.rules.territory import (
    city_max_hp,
)
from sim.rules.codes import (
    FOOD,
    GOLD,
    N_DIRECTIONS,
    N_NODE_KINDS,
    PRODUCTION,
    SCIENCE,
)

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit  # callers pass codes as np.int64: one compile (sim.jit)
def max_hp(st: State, tb: TableArrays, city: np.int64) -> np.int64:
    """Max HP of `city` at its population with its buildings (V05)."""
    return city_max_hp(st.city_pop[city], st.city_buildings[city], tb.hp_base,
                       tb.hp_per_population, tb.building_hp)


@njit
def repair_city(st: State, tb: TableArrays, city: np.int64) -> np.int64:
    """Turn-start repair of `city` (C: Cities; D3 for villages): repair_per_turn HP up
    to its max; returns the HP gained."""
    hp = min(st.city_hp[city] + tb.repair_per_turn, max_hp(st, tb, city))
    gained = max(hp - st.city_hp[city], np.int64(0))
    st.city_hp[city] = hp
    return gained


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


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
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

"""Match setup from a generated map (C: Map): capitals, starting units, villages, camps."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.rules.cities import free_tile_near, place_city
from sim.kernels.rules.units import spawn_unit
from sim.kernels.world.mapgen import generate_map_kernel
from sim.rules.codes import (
    NEUTRAL,
)

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit  # not inlined: see sim.jit.njit
def setup_match(st: State, tb: TableArrays, board: Board, rng_map: np.ndarray,
                n_seats: np.int64) -> bool:
    """Fill an empty state `st` for `n_seats` seats from a map drawn on `rng_map`;
    False (and nothing placed) when the map cannot hold the seats' starts (D1).

    Each seat gets a capital of start_population on its start tile, start_gold,
    and its start_units on or beside the capital. Villages become neutral
    cities of village_population (V06, T06); camps are placed empty.
    """
    terrain, node, starts, villages, camps = generate_map_kernel(
        rng_map, board.neighbours, board.distance, n_seats, tb)
    if starts.shape[0] == 0 or starts[0] < 0:
        return False
    n = terrain.shape[0]
    for t in range(n):
        st.tile_terrain[t] = terrain[t]
        st.tile_node[t] = node[t]
    for s in range(n_seats):
        place_city(st, tb, starts[s], s, tb.start_population)  # its capital
        st.seat_gold[s] = tb.start_gold
        for k in range(tb.start_units.shape[0]):
            utype = tb.start_units[k]
            tile = free_tile_near(st, tb, board, starts[s], s)
            if tile >= 0:
                spawn_unit(st, tb, utype, s, tile, tb.unit_hp[utype], np.int64(-1))
    for v in range(villages.shape[0]):
        place_city(st, tb, villages[v], np.int64(NEUTRAL), tb.village_population)
    for m in range(min(camps.shape[0], st.camp_tile.shape[0])):
        st.camp_tile[m] = camps[m]
    return True

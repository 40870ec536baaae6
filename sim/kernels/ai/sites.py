"""Where the AI founds cities (T07, B1, C: Cities, C: AI).

A site is a passable tile in no region, city_min_distance from every city
(T07), within site_search_radius of the settler or city looking; it is worth
the passable tiles and resource nodes of its site_ring_radius ring less its
distance (`[ai.expansion]`). A settler founds where it stands when that is
nearly as good as the best site (found_here_slack), else walks there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.ai.paths import path_row, step_toward
from sim.kernels.rules.commands import disband_unit, found_check, found_city
from sim.kernels.rules.seats import cities_held
from sim.rules.codes import DISC_SIZES, FAR, MAX_DISC_RADIUS, OK

if TYPE_CHECKING:
    from sim.rules.record import AIRecord, TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit
def site_value(st: State, tb: TableArrays, ai: AIRecord, disc: np.ndarray,
               t: np.int64) -> np.int64:
    """Worth of founding on `t`: passable tiles and resource nodes of its
    site_ring_radius ring. disc: (T, DISC) board.disc."""
    v = np.int64(0)
    for k in range(DISC_SIZES[ai.site_ring_radius]):
        m = disc[t, k]
        if m >= 0 and tb.terrain_passable[st.tile_terrain[m]]:
            v += ai.site_tile_value
            if st.tile_node[m] >= 0:
                v += ai.site_node_value
    return v


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def crowded_tiles(st: State, tb: TableArrays, board: Board) -> np.ndarray:
    """(T,) uint8: 1 on the tiles closer than city_min_distance to a city (T07), which
    no site may be. Marks each city's disc (sim.world.board: its first DISC_SIZES[r]
    entries are the tiles within r steps) instead of measuring every tile against
    every city; beyond the disc table's radius it measures."""
    n = st.n_tiles[0]
    crowded = np.zeros(n, dtype=np.uint8)
    reach = tb.city_min_distance - 1  # the farthest step that is still too close
    if reach > MAX_DISC_RADIUS:
        for t in range(n):
            for c in range(st.n_cities[0]):
                if st.city_tile[c] >= 0 and \
                        board.distance[t, st.city_tile[c]] < tb.city_min_distance:
                    crowded[t] = 1
                    break
        return crowded
    if reach < 0:
        return crowded
    for c in range(st.n_cities[0]):
        home = st.city_tile[c]
        if home < 0:
            continue
        for k in range(DISC_SIZES[reach]):
            m = board.disc[home, k]
            if m >= 0:
                crowded[m] = 1
    return crowded


@njit
def best_site(st: State, tb: TableArrays, ai: AIRecord, board: Board, path: np.ndarray,
              seat: np.int64, from_tile: np.int64, tile_city: np.ndarray):
    """(tile, steps) of the best founding site for a settler at `from_tile`, or (-1, 0).

    A site is passable, in no region (tile_city: (T,) owning city or -1),
    city_min_distance from every city (T07) and at most site_search_radius away;
    its value counts passable tiles and resource nodes around it, less
    site_distance_cost per step.
    """
    n = st.n_tiles[0]
    best = np.int64(-1)
    best_v = -FAR
    best_steps = np.int64(0)
    crowded = crowded_tiles(st, tb, board)
    for t in range(n):
        if not tb.terrain_passable[st.tile_terrain[t]] or tile_city[t] >= 0 or crowded[t]:
            continue
        d = board.distance[from_tile, t]
        if d > ai.site_search_radius:
            continue
        v = site_value(st, tb, ai, board.disc, t) - ai.site_distance_cost * d
        if v > best_v:
            best, best_v = t, v
    if best >= 0:
        row = path_row(st, tb, board.neighbours, path, best)
        best_steps = row[from_tile]
        if best_steps < 0:
            return -1, 0
    return best, best_steps


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def settler_orders(st: State, tb: TableArrays, ai: AIRecord, board: Board, path: np.ndarray,
                   u: np.int64, seat: np.int64, tile_city: np.ndarray) -> bool:
    """Found here, or walk to the best site and found there; True when a city was founded.
    A settler founds where it stands when that is nearly as good as its site, or
    when the site is taken by another unit. A settler that can found nowhere (no
    legal site in reach, or the seat holds its quota) is disbanded (D5): it would
    only stand idle and cost its seat a unit slot."""
    here = st.unit_tile[u]
    can_here = found_check(st, tb, board, u, seat) == OK
    site, _steps = best_site(st, tb, ai, board, path, seat, here, tile_city)
    if cities_held(st, seat) >= tb.quota or (site < 0 and not can_here):
        disband_unit(st, u, seat)
        return False
    if can_here:
        if site < 0 or site == here or st.tile_unit[site] >= 0 or \
                site_value(st, tb, ai, board.disc, here) + ai.found_here_slack >= \
                site_value(st, tb, ai, board.disc, site):
            found_city(st, tb, board, u, seat)
            return True
    if site >= 0:
        step_toward(st, tb, board.neighbours, board.distance, path, u, site, seat,
                    np.int64(0))
        if st.unit_tile[u] == site and found_check(st, tb, board, u, seat) == OK:
            found_city(st, tb, board, u, seat)
            return True
    return False

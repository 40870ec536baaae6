"""Seeded map generation (C: Map, T07), as an `@njit` kernel on the MAP stream.

Draws terrain per tile from the table weights, makes passable land connected,
scatters resource nodes over passable tiles only, spreads the seats' start
tiles far apart, then places neutral villages and bandit camps legally.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.world.starts import choose_starts
from sim.rules.codes import (
    FAR,
    N_DIRECTIONS,
    PERCENT,
    PLAINS,
    TIE_KEY_RANGE,
)
from sim.world.rng import below, weighted

if TYPE_CHECKING:
    from sim.rules.record import TableArrays


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def _component(start: np.int64, passable: np.ndarray, neighbours: np.ndarray) -> np.ndarray:
    """Tiles reachable from `start` over passable tiles (bool mask, BFS)."""
    n = passable.shape[0]
    seen = np.zeros(n, dtype=np.bool_)
    stack = np.empty(n, dtype=np.int64)
    top = np.int64(0)
    seen[start] = True
    stack[top] = start
    top += 1
    while top > 0:
        top -= 1
        t = stack[top]
        for k in range(N_DIRECTIONS):
            m = neighbours[t, k]
            if m >= 0 and passable[m] and not seen[m]:
                seen[m] = True
                stack[top] = m
                top += 1
    return seen


@njit
def _connect_land(terrain: np.ndarray, terrain_passable: np.ndarray, neighbours: np.ndarray,
                  rng: np.ndarray) -> None:
    """Turn impassable tiles into plains until all passable land is one component.

    Each step opens the lowest-index impassable tile that touches both the
    main component and passable land outside it (a one-tile bridge); if no
    such tile exists it opens a random impassable tile touching the main
    component, growing it toward the rest.
    """
    n = terrain.shape[0]
    passable = np.empty(n, dtype=np.bool_)
    for t in range(n):
        passable[t] = terrain_passable[terrain[t]]
    # the main component grows from the passable tile nearest the centre (index n // 2)
    start = np.int64(-1)
    for off in range(n):
        for cand in (n // 2 + off, n // 2 - off):
            if 0 <= cand < n and passable[cand] and start < 0:
                start = cand
        if start >= 0:
            break
    if start < 0:
        terrain[n // 2] = PLAINS
        passable[n // 2] = True
        start = n // 2
    while True:
        main = _component(start, passable, neighbours)
        outside = np.int64(0)
        for t in range(n):
            if passable[t] and not main[t]:
                outside += 1
        if outside == 0:
            return
        bridge = np.int64(-1)
        frontier = np.empty(n, dtype=np.int64)
        n_frontier = np.int64(0)
        for t in range(n):
            if passable[t]:
                continue
            touches_main = False
            touches_other = False
            for k in range(N_DIRECTIONS):
                m = neighbours[t, k]
                if m >= 0 and passable[m]:
                    if main[m]:
                        touches_main = True
                    else:
                        touches_other = True
            if touches_main and touches_other:
                bridge = t
                break
            if touches_main:
                frontier[n_frontier] = t
                n_frontier += 1
        if bridge < 0:
            bridge = frontier[below(rng, n_frontier)]
        terrain[bridge] = PLAINS
        passable[bridge] = True


@njit
def _far_from(tile: np.int64, chosen: np.ndarray, n_chosen: np.int64,
              distance: np.ndarray) -> np.int64:
    d = np.int64(FAR)
    for i in range(n_chosen):
        d = min(d, distance[tile, chosen[i]])
    return d


@njit
def generate_map_kernel(rng: np.ndarray, neighbours: np.ndarray, distance: np.ndarray,
                        n_seats: np.int64, tb: TableArrays):
    """Draw a map from the MAP stream `rng` ((1,) uint64, advanced in place), by the
    tables' `[map]` values, terrain passability and city_min_distance (`tb`).

    Returns (terrain (T,), node (T,) code or -1, starts (n_seats,) tiles, seat s
    starting on starts[s], villages (V,) tiles, camps (M,) tiles); V and M may fall
    short of the per-seat counts when the board has no legal room left. When the
    passable land cannot hold the starts `city_min_distance` apart, every start
    is -1 (and no village or camp is placed): the caller reports the map as
    unplayable rather than playing a broken one.

    Starts are chosen by sim.kernels.world.starts (D1: balanced, then dealt to
    the seats by a permutation from this stream); villages keep
    `city_min_distance` from every start and village (T07); camps keep
    `camp_min_distance` from starts and villages and `camp_min_spacing` from
    one another.
    """
    terrain_weights = tb.terrain_weights
    terrain_passable = tb.terrain_passable
    node_weights = tb.node_weights
    city_min_distance = tb.city_min_distance
    n = neighbours.shape[0]
    terrain = np.empty(n, dtype=np.int64)
    for t in range(n):
        terrain[t] = weighted(rng, terrain_weights)
    _connect_land(terrain, terrain_passable, neighbours, rng)

    node = np.full(n, -1, dtype=np.int64)
    for t in range(n):
        if terrain_passable[terrain[t]] and below(rng, PERCENT) < tb.node_share_pct:
            node[t] = weighted(rng, node_weights)

    # random tie-break keys, drawn once so placement is a pure function of the stream
    key = np.empty(n, dtype=np.int64)
    for t in range(n):
        key[t] = below(rng, TIE_KEY_RANGE)

    # D1: start tiles keep start_edge_margin from the edge so their rings are whole; a
    # set's first start lies in the outer half of that disc; choose_starts balances the
    # set and deals it to the seats
    centre = n // 2
    inner = distance[centre, 0] - tb.start_edge_margin
    allowed = np.zeros(n, dtype=np.bool_)
    first_ok = np.zeros(n, dtype=np.bool_)
    for t in range(n):
        d = distance[centre, t]
        if terrain_passable[terrain[t]] and d <= inner:
            allowed[t] = True
            first_ok[t] = d * 2 >= inner
    starts = choose_starts(rng, terrain, node, key, allowed, first_ok, distance, n_seats, tb)
    if starts[0] < 0:
        return terrain, node, starts, starts[:0], starts[:0]

    want = tb.villages_per_seat * n_seats
    villages = np.full(want, -1, dtype=np.int64)
    n_villages = np.int64(0)
    placed = np.empty(n_seats + want, dtype=np.int64)
    for i in range(n_seats):  # not a slice assignment: see world.starts.choose_starts
        placed[i] = starts[i]
    n_placed = n_seats
    for _ in range(want):
        # the legal tile farthest from everything placed, ties to the key
        best = np.int64(-1)
        best_d = np.int64(-1)
        for t in range(n):
            if not terrain_passable[terrain[t]]:
                continue
            d = _far_from(t, placed, n_placed, distance)
            if d >= city_min_distance and (d > best_d or (d == best_d and key[t] < key[best])):
                best, best_d = t, d
        if best < 0:
            break
        villages[n_villages] = best
        n_villages += 1
        placed[n_placed] = best
        n_placed += 1

    want = tb.camps_per_seat * n_seats
    camps = np.full(want, -1, dtype=np.int64)
    n_camps = np.int64(0)
    for _ in range(want):
        best = np.int64(-1)
        for t in range(n):
            if not terrain_passable[terrain[t]]:
                continue
            if _far_from(t, placed, n_placed, distance) < tb.camp_min_distance:
                continue
            if _far_from(t, camps, n_camps, distance) < tb.camp_min_spacing:
                continue
            if best < 0 or key[t] < key[best]:
                best = t
        if best < 0:
            break
        camps[n_camps] = best
        n_camps += 1
    return terrain, node, starts, villages[:n_villages], camps[:n_camps]

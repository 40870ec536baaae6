"""Fair start tiles (RULES.md D1): chosen first, balanced, then dealt to seats.

A start's worth is what a capital there can use early: passable tiles, resource
nodes and food nodes within `start_balance_radius` steps, and its distance to the
nearest rival start. Several start sets are drawn by farthest-point sampling (each
from another first tile); the set whose worths and rival distances are closest to
one another is kept; a start still below the set's mean worth by more than
`start_tolerance_pct` gets resource nodes near it until it is not; finally the
starts are dealt to the seats by a permutation drawn from the map stream, so no
seat index is favoured by where the sampling happened to put it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.rules.codes import FAR, FOOD, PERCENT
from sim.world.rng import below, weighted

if TYPE_CHECKING:
    from sim.rules.record import TableArrays


@njit
def start_worth(tile: np.int64, terrain: np.ndarray, node: np.ndarray, distance: np.ndarray,
                tb: TableArrays) -> np.int64:
    """Worth of a start on `tile` (D1): start_land_weight per passable tile,
    start_node_weight per resource node and start_food_weight more per food node
    within start_balance_radius steps (the tables' values, `tb`)."""
    terrain_passable = tb.terrain_passable
    radius = tb.start_balance_radius
    land_weight = tb.start_land_weight
    node_weight = tb.start_node_weight
    food_weight = tb.start_food_weight
    worth = np.int64(0)
    for t in range(terrain.shape[0]):
        if distance[tile, t] > radius or not terrain_passable[terrain[t]]:
            continue
        worth += land_weight
        if node[t] >= 0:
            worth += node_weight
            if node[t] == FOOD:
                worth += food_weight
    return worth


@njit
def _nearest_rival(starts: np.ndarray, i: np.int64, distance: np.ndarray) -> np.int64:
    d = np.int64(FAR)
    for j in range(starts.shape[0]):
        if j != i:
            d = min(d, distance[starts[i], starts[j]])
    return d


@njit
def _spread_pct(values: np.ndarray) -> np.int64:
    """(max − min) in % of the mean (0 for a single value or a zero mean)."""
    total = np.int64(0)
    lo = values[0]
    hi = values[0]
    for v in values:
        total += v
        lo = min(lo, v)
        hi = max(hi, v)
    if total <= 0:
        return np.int64(0)
    return (hi - lo) * PERCENT * values.shape[0] // total


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def _sample_starts(first: np.int64, allowed: np.ndarray, key: np.ndarray, n_seats: np.int64,
                   distance: np.ndarray) -> np.ndarray:
    """Farthest-point sampling from `first` over the `allowed` tiles (ties to the key)."""
    starts = np.full(n_seats, -1, dtype=np.int64)
    starts[0] = first
    for s in range(1, n_seats):
        best = np.int64(-1)
        best_d = np.int64(-1)
        for t in range(allowed.shape[0]):
            if not allowed[t]:
                continue
            d = np.int64(FAR)
            for i in range(s):
                d = min(d, distance[t, starts[i]])
            if d > best_d or (d == best_d and key[t] < key[best]):
                best, best_d = t, d
        starts[s] = best
    return starts


@njit
def choose_starts(rng: np.ndarray, terrain: np.ndarray, node: np.ndarray, key: np.ndarray,
                  allowed: np.ndarray, first_ok: np.ndarray, distance: np.ndarray,
                  n_seats: np.int64, tb: TableArrays) -> np.ndarray:
    """The seats' start tiles, (n_seats,) with seat s starting on starts[s], or all -1
    when the allowed tiles cannot hold them city_min_distance apart (T07, D1).

    allowed: (T,) bool, tiles a start may take (passable, inside the edge margin);
    first_ok: (T,) bool, tiles a set's first start may take; key: (T,) int64 random
    tie-break keys; node: (T,) node codes, -1 none — nodes added to balance a weak
    start are written here (kinds drawn from node_weights on `rng`). tb: the tables
    (city_min_distance and the map's start_* values, D1).
    """
    min_distance = tb.city_min_distance
    candidates = tb.start_candidates
    n = terrain.shape[0]
    # first tiles of the candidate sets: the allowed first tiles with the lowest keys
    firsts = np.full(max(candidates, 1), -1, dtype=np.int64)
    n_firsts = np.int64(0)
    taken = np.zeros(n, dtype=np.bool_)
    for k in range(firsts.shape[0]):
        best = np.int64(-1)
        for t in range(n):
            if first_ok[t] and not taken[t] and (best < 0 or key[t] < key[best]):
                best = t
        if best < 0:
            break
        taken[best] = True
        firsts[k] = best
        n_firsts += 1
    if n_firsts == 0:
        return np.full(n_seats, -1, dtype=np.int64)
    best_set = np.full(n_seats, -1, dtype=np.int64)
    best_spread = np.int64(FAR)
    worth = np.empty(n_seats, dtype=np.int64)
    rival = np.empty(n_seats, dtype=np.int64)
    for k in range(n_firsts):
        starts = _sample_starts(firsts[k], allowed, key, n_seats, distance)
        if starts[n_seats - 1] < 0:
            continue
        spaced = True
        for i in range(n_seats):
            if _nearest_rival(starts, i, distance) < min_distance:
                spaced = False
        if not spaced:
            continue
        for i in range(n_seats):
            worth[i] = start_worth(starts[i], terrain, node, distance, tb)
            rival[i] = _nearest_rival(starts, i, distance)
        spread = _spread_pct(worth) + _spread_pct(rival)
        if spread < best_spread:
            best_spread = spread
            # element by element: an array assigned to a slice compiles numba's
            # shape-mismatch error (string formatting, 2 s of a cold compile, sim.jit)
            for i in range(n_seats):
                best_set[i] = starts[i]
    if best_set[0] < 0:
        return best_set
    _top_up_weak_starts(rng, best_set, terrain, node, key, distance, tb)
    # deal the starts to the seats: a Fisher–Yates permutation from the map stream
    for i in range(n_seats - 1, 0, -1):
        j = below(rng, i + 1)
        best_set[i], best_set[j] = best_set[j], best_set[i]
    return best_set


@njit
def _top_up_weak_starts(rng: np.ndarray, starts: np.ndarray, terrain: np.ndarray,
                        node: np.ndarray, key: np.ndarray, distance: np.ndarray,
                        tb: TableArrays) -> None:
    """Add resource nodes near the weakest start while it is more than
    start_tolerance_pct below the mean worth of the set (one node a step, on the free
    passable tile with the lowest key within start_balance_radius, never on a start
    tile; kinds drawn from node_weights)."""
    terrain_passable = tb.terrain_passable
    node_weights = tb.node_weights
    radius = tb.start_balance_radius
    tolerance_pct = tb.start_tolerance_pct
    n_seats = starts.shape[0]
    worth = np.empty(n_seats, dtype=np.int64)
    for _ in range(terrain.shape[0]):
        total = np.int64(0)
        weakest = np.int64(0)
        for i in range(n_seats):
            worth[i] = start_worth(starts[i], terrain, node, distance, tb)
            total += worth[i]
            if worth[i] < worth[weakest]:
                weakest = i
        if worth[weakest] * PERCENT * n_seats >= total * (PERCENT - tolerance_pct):
            return
        home = starts[weakest]
        spot = np.int64(-1)
        for t in range(terrain.shape[0]):
            if distance[home, t] > radius or not terrain_passable[terrain[t]] or node[t] >= 0:
                continue
            is_start = False
            for i in range(n_seats):
                if starts[i] == t:
                    is_start = True
            if not is_start and (spot < 0 or key[t] < key[spot]):
                spot = t
        if spot < 0:
            return
        node[spot] = weighted(rng, node_weights)

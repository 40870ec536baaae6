"""How the AI walks (C: Units, C: AI): passable-tile distances and one-step moves.

Pathing reads a passable-tile distance table (`path`, (T, T) int64, -1 not
computed yet) filled one row per target on demand by breadth-first search over
passable terrain (C: Map), so each row is computed at most once per map. Every
step is a `move` command (sim.kernels.rules.commands.move_unit), the rule a
scenario's `move` follows, so the AI can only make legal moves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.rules.commands import move_unit_at
from sim.rules.codes import N_DIRECTIONS, OK, PATH_BLOCKED

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.state import State


@njit
def fill_path_row(st: State, tb: TableArrays, neighbours: np.ndarray, path: np.ndarray,
                  target: np.int64) -> None:
    """Fill row `target` of `path` by breadth-first search from `target` over passable
    tiles (steps from every tile, -1 unreachable); its diagonal entry becomes 0, which
    marks the row filled. neighbours: (T, 6) board.neighbours."""
    n = st.n_tiles[0]
    row = path[target]
    # -1 a passable tile not reached yet, PATH_BLOCKED one the search never enters
    # (made -1 again at the end): the search then tests one entry per neighbour,
    # not the terrain of each tile it meets (a third faster)
    for t in range(n):
        row[t] = -1 if tb.terrain_passable[st.tile_terrain[t]] else PATH_BLOCKED
    queue = np.empty(n, dtype=np.int64)
    head = np.int64(0)
    tail = np.int64(0)
    row[target] = 0
    queue[tail] = target
    tail += 1
    while head < tail:
        t = queue[head]
        head += 1
        step = row[t] + 1  # read once: the stores below may alias it as far as LLVM knows
        for k in range(N_DIRECTIONS):
            m = neighbours[t, k]
            if m >= 0 and row[m] == -1:
                row[m] = step
                queue[tail] = m
                tail += 1
    for t in range(n):
        row[t] = max(row[t], np.int64(-1))


@njit(inline='always')  # a thin level: see sim.jit
def path_row(st: State, tb: TableArrays, neighbours: np.ndarray, path: np.ndarray,
             target: np.int64) -> np.ndarray:
    """Steps over passable tiles from every tile to `target` (row of `path`), -1 unreachable.
    neighbours: (T, 6) board.neighbours."""
    if path[target, target] != 0:
        fill_path_row(st, tb, neighbours, path, target)
    return path[target]


@njit
def step_toward(st: State, tb: TableArrays, neighbours: np.ndarray, distance: np.ndarray,
                path: np.ndarray, unit: np.int64, target: np.int64, seat: np.int64,
                stop_at: np.int64) -> None:
    """Walk `unit` one tile at a time toward `target` until `stop_at` steps from it
    or out of moves; each step is a `move` command (the same rule as scenarios).
    A unit blocked on every closer tile sidesteps to a free tile as close as it is,
    so columns flow around one another instead of jamming.
    neighbours: (T, 6) board.neighbours; distance: (T, T) board.distance (the board's
    arrays one by one: numba counts the references to each array a kernel is handed)."""
    # path_row's check, here: a filled row (nearly every call) costs no call
    if path[target, target] != 0:
        fill_path_row(st, tb, neighbours, path, target)
    row = path[target]
    sidestepped = False
    while st.unit_moves_left[unit] > 0 and st.unit_tile[unit] >= 0:
        here = st.unit_tile[unit]
        d_here = row[here]
        if d_here < 0 or d_here <= stop_at:
            return
        best = np.int64(-1)
        best_d = d_here + 1
        for k in range(N_DIRECTIONS):
            m = neighbours[here, k]
            if m < 0 or row[m] < 0 or row[m] > d_here or st.tile_unit[m] >= 0:
                continue
            if row[m] == d_here and sidestepped:
                continue
            site = st.tile_site[m]
            if site >= 0 and st.city_owner[site] != seat:
                continue
            if row[m] < best_d:
                best, best_d = m, row[m]
        if best < 0:
            return
        if best_d == d_here:
            sidestepped = True
        if move_unit_at(st, tb, neighbours, distance, unit, best, seat) != OK:
            return


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def step_away(st: State, tb: TableArrays, neighbours: np.ndarray, distance: np.ndarray,
              u: np.int64, frm: np.int64, seat: np.int64, dist: np.int64) -> None:
    """Move `u` to the first free neighbouring tile (direction order) at least `dist`
    steps from `frm`, if there is one, to leave the siege ring to fresh units.
    neighbours: (T, 6) board.neighbours; distance: (T, T) board.distance."""
    here = st.unit_tile[u]
    for k in range(N_DIRECTIONS):
        m = neighbours[here, k]
        if m < 0 or st.tile_unit[m] >= 0 or st.tile_site[m] >= 0 or \
                not tb.terrain_passable[st.tile_terrain[m]] or distance[m, frm] < dist:
            continue
        if move_unit_at(st, tb, neighbours, distance, u, m, seat) == OK:
            return

"""Units (C: Units): their stats (bandits' from the neutrals table), which ones fight,
and their lifecycle on the board (spawn, kill, the lists of those on it).

`st` is a sim.world.state.State, `tb` a sim.rules.record.TableArrays; both are passed
in, nothing is global.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.state import State


# Bandits have unit_type -1 and take their stats from the neutrals table; these
# accessors keep a negative type from wrapping around a numpy index.
@njit(inline='always')  # a thin level: see sim.jit
def unit_stat_attack(tb: TableArrays, unit_type: np.int64) -> np.int64:
    return tb.bandit_attack if unit_type < 0 else tb.unit_attack[unit_type]


@njit(inline='always')  # a thin level: see sim.jit
def unit_stat_defence(tb: TableArrays, unit_type: np.int64) -> np.int64:
    return tb.bandit_defence if unit_type < 0 else tb.unit_defence[unit_type]


@njit(inline='always')  # a thin level: see sim.jit
def unit_stat_hp(tb: TableArrays, unit_type: np.int64) -> np.int64:
    return tb.bandit_hp if unit_type < 0 else tb.unit_hp[unit_type]


@njit(inline='always')  # a thin level: see sim.jit
def unit_stat_moves(tb: TableArrays, unit_type: np.int64) -> np.int64:
    return tb.bandit_moves if unit_type < 0 else tb.unit_moves[unit_type]


@njit(inline='always')  # a thin level: see sim.jit
def unit_stat_range(tb: TableArrays, unit_type: np.int64) -> np.int64:
    return np.int64(0) if unit_type < 0 else tb.unit_range[unit_type]


@njit  # callers pass codes as np.int64: one compile (sim.jit)
def is_military(tb: TableArrays, unit_type: np.int64) -> bool:
    """Counts for upkeep and can fight: not a city founder, attack > 0."""
    return unit_type >= 0 and not tb.unit_founds_city[unit_type] and tb.unit_attack[unit_type] > 0


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


@njit
def kill_unit(st: State, u: np.int64) -> None:
    t = st.unit_tile[u]
    if t >= 0 and st.tile_unit[t] == u:
        st.tile_unit[t] = -1
    st.unit_tile[u] = -1
    st.unit_hp[u] = 0
    st.unit_moves_left[u] = 0


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


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
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

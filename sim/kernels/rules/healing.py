"""Healing (RULES.md D3): a damaged unit that neither moved nor attacked during its
seat's previous turn heals at its seat's flow.

It heals heal_in_city HP in one of its seat's cities, heal_in_region in its seat's
region, heal_elsewhere anywhere else, never above its max HP. "Neither moved nor
attacked" is read from the moves it has left when its seat's flow opens: moving
spends moves and attacking ends them, so a unit still holding all its moves stood
still.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.rules.events import log_event
from sim.kernels.rules.standings import ring_rule
from sim.kernels.rules.territory import region_city_of
from sim.kernels.rules.units import unit_stat_hp, unit_stat_moves
from sim.rules.codes import EV_HEALS

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit
def heal_units(st: State, tb: TableArrays, board: Board, seat: np.int64,
               mine: np.ndarray) -> None:
    """D3: heal the seat's idle damaged units (before its moves are reset); logged as one
    EV_HEALS row (units healed, HP total) when any. mine: units.seat_units of the
    seat (its units on the board, ascending)."""
    n_healed = np.int64(0)
    hp_healed = np.int64(0)
    for u in mine:
        t = st.unit_tile[u]
        if t < 0 or st.unit_owner[u] != seat:
            continue
        utype = st.unit_type[u]
        full = unit_stat_hp(tb, utype)
        if st.unit_hp[u] >= full or st.unit_moves_left[u] < unit_stat_moves(tb, utype):
            continue
        site = st.tile_site[t]
        if site >= 0 and st.city_owner[site] == seat:
            gain = tb.heal_in_city
        else:
            # one tile's owner (T08), not the whole board's regions: this runs every flow
            holder = region_city_of(board.distance, st.city_tile, st.city_owner, st.city_pop,
                                    st.tile_bought_by, t, ring_rule(tb))
            if holder >= 0 and st.city_owner[holder] == seat:
                gain = tb.heal_in_region
            else:
                gain = tb.heal_elsewhere
        hp = min(st.unit_hp[u] + gain, full)
        if hp > st.unit_hp[u]:
            n_healed += 1
            hp_healed += hp - st.unit_hp[u]
        st.unit_hp[u] = hp
    if n_healed > 0:
        log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_HEALS), seat, np.int64(-1),
                  np.int64(-1), n_healed,
                  hp_healed, np.int64(0))

"""The AI's diplomacy (V07, C: Diplomacy, C: AI).

A seat joins (or refreshes) a pact against any seat whose dominance counter
reached the pact trigger (V18) or that announced the Observatory (V16), and buys
a truce (V07) from the rival pressing it hardest soon after losing a city; the
thresholds are `[ai.diplomacy]`. It never buys a truce from a seat with the
Observatory queued, nor (unless peace_from_prosperity) from one that knows its
tech: a truce would shield the science victory from it (V16, D8).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.ai.threats import observatory_queued_by
from sim.kernels.rules.commands import buy_truce
from sim.kernels.rules.events import log_event
from sim.kernels.rules.seats import forbidden_mechanic
from sim.kernels.rules.units import is_military
from sim.rules.codes import EV_PACT, M_PACT, M_TRUCE

if TYPE_CHECKING:
    from sim.rules.record import AIRecord, TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit
def ai_diplomacy(st: State, tb: TableArrays, ai: AIRecord, board: Board, seat: np.int64) -> None:
    """Join or refresh a pact against a seat whose dominance counter runs or that
    announced the Observatory (C: Diplomacy); buy a truce when losing a war."""
    n = st.n_seats[0]
    for x in range(n):
        if x == seat or not st.seat_alive[x]:
            continue
        threat = st.seat_dominance[x] >= tb.pact_dominance_trigger or \
            observatory_queued_by(st, tb, x) >= 0
        slot = np.int64(-1)
        for p in range(st.pact_target.shape[0]):
            if st.pact_target[p] == x:
                slot = p
        if not threat or forbidden_mechanic(st, seat, M_PACT):
            continue
        if slot < 0:
            for p in range(st.pact_target.shape[0]):
                if st.pact_target[p] < 0:
                    slot = p
                    break
            if slot < 0:
                continue
            st.pact_target[slot] = x
            from_log_pact(st, slot)
        st.pact_members[slot, seat] = 1
        st.pact_turns[slot] = tb.pact_turns
    # sue for peace: a city lost within peace_window turns and a hostile army near home
    if st.seat_lost_turn[seat] >= 0 and st.turn[0] - st.seat_lost_turn[seat] <= ai.peace_window \
            and not forbidden_mechanic(st, seat, M_TRUCE):
        worst = np.int64(-1)
        worst_n = np.int64(0)
        for x in range(n):
            if x == seat or not st.seat_alive[x] or st.truce_turns[seat, x] > 0 or \
                    forbidden_mechanic(st, x, M_TRUCE):
                continue
            near = np.int64(0)
            for u in range(st.n_units[0]):
                t = st.unit_tile[u]
                if t < 0 or st.unit_owner[u] != x or not is_military(tb, st.unit_type[u]):
                    continue
                for c in range(st.n_cities[0]):
                    if st.city_owner[c] == seat and st.city_tile[c] >= 0 and \
                            board.distance[t, st.city_tile[c]] <= ai.peace_threat_radius:
                        near += 1
                        break
            if near > worst_n:
                worst, worst_n = x, near
        if worst >= 0 and worst_n >= ai.peace_min_units and \
                st.seat_dominance[worst] < tb.pact_dominance_trigger and \
                observatory_queued_by(st, tb, worst) < 0 and \
                (ai.peace_from_prosperity or tb.observatory_tech < 0 or
                 not st.seat_techs[worst, tb.observatory_tech]):
            buy_truce(st, tb, worst, seat)


@njit
def from_log_pact(st: State, slot: np.int64) -> None:
    """Log the founding of the pact in `slot` (EV_PACT)."""
    log_event(st.event_log, st.n_events, st.turn[0], EV_PACT, st.pact_target[slot], -1, -1,
              slot, 0, 0)

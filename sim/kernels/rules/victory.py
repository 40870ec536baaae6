"""The end of a seat and of the match (V01–V03, V06, V20, B6): elimination, conquest,
the last human out, and the victory that finishes the match.

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
from sim.kernels.rules.seats import end_pact
from sim.kernels.rules.standings import scores
from sim.kernels.rules.units import kill_unit
from sim.rules.codes import (
    CONQUEST,
    EV_ELIMINATED,
    EV_VICTORY,
    HUMAN_OUT,
)

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit  # callers pass codes as np.int64: one compile (sim.jit)
def finish(st: State, code: np.int64, winner: np.int64) -> None:
    """End the match with victory `code` for `winner` (V01: callers check in its order)."""
    if st.finished[0]:
        return
    st.finished[0] = 1
    st.victory[0] = code
    st.winner[0] = winner
    log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_VICTORY), winner, np.int64(-1),
              np.int64(-1), code, np.int64(0), np.int64(0))


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
    log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_ELIMINATED), seat, by,
              np.int64(-1), cause_row, np.int64(0), np.int64(0))


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
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
        finish(st, np.int64(CONQUEST), last)
    elif humans_set and not humans_alive and alive > 1:
        _terms, _counts, _score, rank = scores(st, tb, board)
        for s in range(rank.shape[0]):
            if rank[s] == 1:
                finish(st, np.int64(HUMAN_OUT), s)

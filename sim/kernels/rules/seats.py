"""How a seat stands with the others and what it may do: pacts (V07), truces, the
cities it holds, and what the experiment forbids it (issue 16).

`st` is a sim.world.state.State; it is passed in, nothing is global.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.rules.events import (
    log_event,
)
from sim.rules.codes import (
    EV_PACT_END,
)

if TYPE_CHECKING:
    from sim.world.state import State


@njit
def cities_held(st: State, seat: np.int64) -> np.int64:
    n = np.int64(0)
    for c in range(st.n_cities[0]):
        if st.city_tile[c] >= 0 and st.city_owner[c] == seat:
            n += 1
    return n


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def in_pact_together(st: State, a: np.int64, b: np.int64) -> bool:
    """True when `a` and `b` are members of one live pact (V07)."""
    for p in range(st.pact_target.shape[0]):
        if st.pact_target[p] >= 0 and st.pact_members[p, a] and st.pact_members[p, b]:
            return True
    return False


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def pact_against(st: State, seat: np.int64, target: np.int64) -> bool:
    """True when `seat` is a member of a live pact whose target is `target` (V07:
    the pact's target is not protected, our reading: not by a truce either)."""
    for p in range(st.pact_target.shape[0]):
        if st.pact_target[p] == target and st.pact_members[p, seat]:
            return True
    return False


@njit(inline='always')  # a thin level: see sim.jit
def truce_between(st: State, a: np.int64, b: np.int64) -> bool:
    return a >= 0 and b >= 0 and a != b and st.truce_turns[a, b] > 0


@njit
def end_pact(st: State, p: np.int64) -> None:
    log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_PACT_END), st.pact_target[p],
              np.int64(-1), np.int64(-1),
              p, np.int64(0), np.int64(0))
    st.pact_target[p] = -1
    st.pact_turns[p] = 0
    for s in range(st.n_seats[0]):
        st.pact_members[p, s] = 0


@njit
def forbidden_item(st: State, n_units: np.int64, seat: np.int64, item: np.int64) -> bool:
    """Whether the experiment forbids `seat` the queue item `item` (a unit code below
    n_units, else n_units + building), issue 16. Non-seats (bandits, villages) never."""
    if seat < 0:
        return False
    if item < n_units:
        return (st.seat_forbid_units[seat] >> item) & 1 == 1
    return (st.seat_forbid_buildings[seat] >> (item - n_units)) & 1 == 1


@njit  # callers pass codes as np.int64: one compile (sim.jit)
def forbidden_tech(st: State, seat: np.int64, tech: np.int64) -> bool:
    """Whether the experiment forbids `seat` to research `tech` (research:<tech>)."""
    return seat >= 0 and (st.seat_forbid_techs[seat] >> tech) & 1 == 1


@njit  # callers pass codes as np.int64: one compile (sim.jit)
def forbidden_mechanic(st: State, seat: np.int64, mechanic: np.int64) -> bool:
    """Whether the experiment forbids `seat` a mechanic (sim.rules.codes.MECHANICS)."""
    return seat >= 0 and (st.seat_forbid_mechanics[seat] >> mechanic) & 1 == 1

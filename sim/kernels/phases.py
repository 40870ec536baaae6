"""Where a match's time goes: the match loop of sim.kernels.loop with a cycle counter
around each phase (issue 15's profiling mode, `sim bench match --phases`).

`run_match_phases` is a copy of `run_match` whose every call is the same rule and AI
function in the same order, so it plays exactly the same match (tests/test_phases.py
checks the state and turn log byte for byte against the fast path). The copy inlines
the three loop functions whose insides are split (`end_turn`, `open_seat_turn`,
`ai_take_turn`); a change to one of them must be made here too, and the test fails
until it is.

The counter is sim.jit.cycles (the CPU's time-stamp counter: a few cycles a read, no
system call), so timing ~40,000 phase calls a match barely slows it; the bench turns
counts into seconds by the same run's wall time. The phases are named and numbered in
sim.rules.codes (PHASES).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import cycles, njit
from sim.kernels.ai.diplomacy import ai_diplomacy
from sim.kernels.ai.gold import ai_gold
from sim.kernels.ai.military import ai_units
from sim.kernels.ai.production import ai_production
from sim.kernels.ai.research import ai_research
from sim.kernels.ai.threats import (
    observatory_alarm,
    urgent_target,
    war_target,
    war_time,
)
from sim.kernels.ai.turn import city_threats, plan_of
from sim.kernels.lookahead import look_ahead
from sim.kernels.loop import record_turn, unowned_inputs
from sim.kernels.rules.common import (
    finish,
    forbidden_mechanic,
    is_military,
    live_units,
    regions_and_scores,
    scores,
    seat_units,
    unit_stat_moves,
)
from sim.kernels.rules.flow import (
    dominance_check,
    flow_event_card,
    flow_growth_repair_revolt,
    flow_income,
    flow_production,
    next_seat,
    opening_seat,
    start_of_turn,
)
from sim.kernels.rules.healing import heal_units
from sim.kernels.world.setup import setup_match
from sim.rules.codes import (
    M_ATTACK_CITIES,
    P_AI_GOLD,
    P_AI_PRODUCTION,
    P_AI_RESEARCH,
    P_AI_TARGETS,
    P_AI_TERRITORY,
    P_AI_UNITS,
    P_GROWTH,
    P_HEAL,
    P_INCOME,
    P_LOOKAHEAD,
    P_PRODUCTION,
    P_RECORD,
    P_SETUP,
    P_UPKEEP,
    P_VICTORY,
    TURN_LIMIT,
)

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.board import Board
    from sim.world.state import State

@njit
def _tick(ticks: np.ndarray, phase: np.int64, since: np.int64) -> np.int64:
    now = cycles()
    ticks[phase] += now - since
    return now


@njit
def _open_seat_turn(st: State, tb: TableArrays, board: Board, seat: np.int64,
                    ticks: np.ndarray) -> None:
    """sim.kernels.rules.flow.open_seat_turn, timed."""
    t0 = cycles()
    st.active_seat[0] = seat
    mine = seat_units(st, seat)
    heal_units(st, tb, board, seat, mine)
    for u in mine:
        st.unit_moves_left[u] = unit_stat_moves(tb, st.unit_type[u])
    t0 = _tick(ticks, P_HEAL, t0)
    flow_income(st, tb, board, seat, mine)
    t0 = _tick(ticks, P_INCOME, t0)
    flow_production(st, tb, board, seat)
    t0 = _tick(ticks, P_PRODUCTION, t0)
    if st.finished[0]:
        return
    flow_growth_repair_revolt(st, tb, seat)
    flow_event_card(st, tb, seat)
    t0 = _tick(ticks, P_GROWTH, t0)
    dominance_check(st, tb, seat)
    _tick(ticks, P_VICTORY, t0)


@njit
def _open_turn(st: State, tb: TableArrays, board: Board, ticks: np.ndarray) -> None:
    """sim.kernels.rules.flow.open_turn, timed."""
    t0 = cycles()
    start_of_turn(st, tb, board)
    _tick(ticks, P_UPKEEP, t0)
    n = st.n_seats[0]
    first = opening_seat(st.turn[0], n)
    for k in range(n):
        s = (first + k) % n
        if st.seat_alive[s]:
            _open_seat_turn(st, tb, board, s, ticks)
            return


@njit
def _end_turn(st: State, tb: TableArrays, board: Board, ticks: np.ndarray) -> None:
    """sim.kernels.rules.flow.end_turn, timed."""
    s = next_seat(st)
    if s < 0:
        if st.turn[0] >= st.last_turn[0]:
            t0 = cycles()
            _terms, _counts, _score, rank = scores(st, tb, board)
            for t in range(rank.shape[0]):
                if rank[t] == 1:
                    finish(st, TURN_LIMIT, t)
            _tick(ticks, P_VICTORY, t0)
            return
        st.turn[0] += 1
        _open_turn(st, tb, board, ticks)
        return
    _open_seat_turn(st, tb, board, s, ticks)


@njit
def _ai_take_turn(st: State, tb: TableArrays, board: Board, path: np.ndarray,
                  seat: np.int64, ticks: np.ndarray) -> None:
    """sim.kernels.ai.turn.ai_take_turn, timed."""
    if st.finished[0] or not st.seat_alive[seat]:
        return
    t0 = cycles()
    ai = tb.ai[plan_of(st, seat)]
    ai_research(st, tb, ai, seat)
    ai_diplomacy(st, tb, ai, board, seat)
    t0 = _tick(ticks, P_AI_RESEARCH, t0)
    live = live_units(st)
    n_seen = st.n_units[0]
    army = 0
    n_ranged = 0
    for u in live:
        if st.unit_owner[u] == seat and is_military(tb, st.unit_type[u]):
            army += 1
            if tb.unit_range[st.unit_type[u]] > 0:
                n_ranged += 1
    t0 = _tick(ticks, P_AI_TARGETS, t0)
    tile_city, score = regions_and_scores(st, tb, board)
    t0 = _tick(ticks, P_AI_TERRITORY, t0)
    target = war_target(st, tb, ai, board.distance, seat, score, live)
    alarm = observatory_alarm(st, tb, ai, board.distance, seat, live)
    at_war = alarm >= 0 or (target >= 0 and (urgent_target(st, tb, target) or war_time(st, ai)))
    threats = city_threats(st, tb, ai, board.distance, seat, live)
    t0 = _tick(ticks, P_AI_TARGETS, t0)
    ai_production(st, tb, ai, board, path, seat, army, n_ranged, at_war, tile_city, threats,
                  live)
    t0 = _tick(ticks, P_AI_PRODUCTION, t0)
    ai_gold(st, tb, ai, board, seat, alarm >= 0, tile_city, threats)
    t0 = _tick(ticks, P_AI_GOLD, t0)
    if forbidden_mechanic(st, seat, M_ATTACK_CITIES):
        target = -1
        alarm = -1
    ai_units(st, tb, ai, board, path, seat, army, tile_city, target, alarm, score, live,
             n_seen)
    _tick(ticks, P_AI_UNITS, t0)


@njit
def run_match_phases(states: np.ndarray, tables: np.ndarray, board: Board,
                     rng_map: np.ndarray, n_seats: np.int64, path: np.ndarray,
                     turn_log: np.ndarray, scratch: np.ndarray, state_bytes: np.ndarray,
                     scratch_bytes: np.ndarray, uncopied: np.ndarray,
                     ticks: np.ndarray) -> bool:
    """sim.kernels.loop.run_match_held, adding each phase's cycles to ticks (N_PHASES,)
    int64 (PHASES names them). Same match, same state, same turn log; the arrays handed
    on without their owner records, as run_match_held hands them (sim.jit.unowned)."""
    st = states[0]
    tb = tables[0]
    board, rng_map, path, turn_log, scratch, state_bytes, scratch_bytes, uncopied = \
        unowned_inputs(board, rng_map, path, turn_log, scratch, state_bytes, scratch_bytes,
                       uncopied)
    t0 = cycles()
    if not setup_match(st, tb, board, rng_map, n_seats):
        return False
    _tick(ticks, P_SETUP, t0)
    _open_turn(st, tb, board, ticks)
    while not st.finished[0]:
        t = st.turn[0]
        while not st.finished[0] and st.turn[0] == t:
            seat = st.active_seat[0]
            t0 = cycles()
            look_ahead(st, tb, board, path, seat, scratch, state_bytes, scratch_bytes, uncopied)
            _tick(ticks, P_LOOKAHEAD, t0)
            _ai_take_turn(st, tb, board, path, seat, ticks)
            if st.finished[0]:
                break
            if next_seat(st) < 0:
                t0 = cycles()
                record_turn(st, tb, board, turn_log)
                _tick(ticks, P_RECORD, t0)
            _end_turn(st, tb, board, ticks)
        if st.finished[0]:
            t0 = cycles()
            record_turn(st, tb, board, turn_log)
            _tick(ticks, P_RECORD, t0)
    return True

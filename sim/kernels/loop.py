"""A whole match in compiled code: setup, turns played by the AI, per-turn records.

`run_match` is the fast path the runner calls; `play_one_turn` is the same loop
body, callable from Python so `sim match --check` can run the invariant
checker between turns, and `play_turns` lets scenarios hand a position to the AI.

This is the only match loop: the engine, scenarios and the benchmarks all play it.
Each function takes a `ticks` array (sim.kernels.timing): (0,) to play, (N_PHASES,)
to time each phase as it plays (`sim bench match --phases`). Each takes the
lookahead's scratch (sim.kernels.lookahead.Scratch, built by
sim.engine.match.lookahead_scratch); a skill-1 or skill-2 seat sets its orders at the
opening of its turn, before it acts (sim.kernels.search.decide_orders). A match with
no such seat passes None instead (sim.engine.match.loop_scratch): numba then compiles
the loop without the lookahead and the search, which a cold start of the common
all-skill-0 match never needs. The engine picks the entry in Python:
`run_match_held` (no scratch) or `run_match_held_skilled`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.ai.turn import ai_take_turn
from sim.kernels.lookahead import Scratch
from sim.kernels.rules.flow import end_turn, next_seat, open_turn
from sim.kernels.rules.standings import score_parts_into
from sim.kernels.rules.territory import term_sum
from sim.kernels.search import decide_orders
from sim.kernels.timing import clock, tick
from sim.kernels.world.setup import setup_match
from sim.rules.codes import (
    COUNT_CITIES,
    LOG_CITIES_HELD,
    LOG_DOMINANCE,
    LOG_GOLD_STOCK,
    LOG_SCIENCE_STOCK,
    LOG_SCORE,
    N_SCORE_COUNTS,
    N_SCORE_TERMS,
    P_LOOKAHEAD,
    P_RECORD,
    P_SETUP,
    TURN_FIELDS,
)
from sim.world.board import Board

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.state import State


@njit
def record_turn(st: State, tb: TableArrays, board: Board, turn_log: np.ndarray) -> None:
    """turn_log[turn, seat] = score terms, score, dominance counter, gold stock, cities
    held (T13's count, revolting ones included: V12), science stock, then the seat's
    units alive by type: turn_log[turn, seat, TURN_FIELDS + unit type].

    turn_log: (last_turn + 1, MAX_SEATS, TURN_FIELDS + U) int64, U = unit types of the
    tables (a type beyond the last slot is not counted). Recording a turn twice (the
    match ended after its record) rewrites the same numbers."""
    t = st.turn[0]
    if t >= turn_log.shape[0]:
        return
    n = st.n_seats[0]
    flat_terms = np.empty(n * N_SCORE_TERMS, dtype=np.int64)
    flat_counts = np.empty(n * N_SCORE_COUNTS, dtype=np.int64)
    _tile_city, terms, counts = score_parts_into(st, tb, board, flat_terms, flat_counts)
    for s in range(n):
        for k in range(N_SCORE_TERMS):  # the score terms open the turn log's fields
            turn_log[t, s, k] = terms[s, k]
        turn_log[t, s, LOG_SCORE] = term_sum(terms, s)
        turn_log[t, s, LOG_DOMINANCE] = st.seat_dominance[s]
        turn_log[t, s, LOG_GOLD_STOCK] = st.seat_gold[s]
        turn_log[t, s, LOG_CITIES_HELD] = counts[s, COUNT_CITIES]
        turn_log[t, s, LOG_SCIENCE_STOCK] = st.seat_science[s]
        for k in range(TURN_FIELDS, turn_log.shape[2]):
            turn_log[t, s, k] = 0
    for u in range(st.n_units[0]):
        owner = st.unit_owner[u]
        slot = TURN_FIELDS + st.unit_type[u]
        if st.unit_tile[u] >= 0 and owner >= 0 and TURN_FIELDS <= slot < turn_log.shape[2]:
            turn_log[t, owner, slot] += 1


@njit(inline='always')  # one level fewer in the call tree (sim.jit)
def record_turn_timed(st: State, tb: TableArrays, board: Board, turn_log: np.ndarray,
                      ticks: np.ndarray) -> None:
    """record_turn, its cycles added to the turn record's phase."""
    t0 = clock(ticks)
    record_turn(st, tb, board, turn_log)
    tick(ticks, np.int64(P_RECORD), t0)


@njit(inline='always')  # one level fewer in the call tree (sim.jit)
def begin_match(st: State, tb: TableArrays, board: Board, ticks: np.ndarray) -> None:
    """Open turn 1 (the opening seat's flow runs, T12)."""
    open_turn(st, tb, board, ticks)


@njit(inline='always')  # one level fewer in the call tree (sim.jit)
def play_one_turn(st: State, tb: TableArrays, board: Board, path: np.ndarray,
                  turn_log: np.ndarray, scratch: Scratch | None, ticks: np.ndarray) -> None:
    """The AI plays the active seat and every later seat of the current turn (a
    skill-1 or skill-2 seat sets its orders first, D11); the turn is recorded after its last seat
    played, before the next turn opens. ticks: sim.kernels.timing."""
    t = st.turn[0]
    while not st.finished[0] and st.turn[0] == t:
        seat = st.active_seat[0]
        t0 = clock(ticks)
        played = decide_orders(st, tb, board, path, seat, scratch)  # random play: True
        tick(ticks, np.int64(P_LOOKAHEAD), t0)
        if not played:
            ai_take_turn(st, tb, board, path, seat, ticks)
        if st.finished[0]:
            break
        if next_seat(st) < 0:
            record_turn_timed(st, tb, board, turn_log, ticks)
        end_turn(st, tb, board, ticks)
    if st.finished[0]:
        record_turn_timed(st, tb, board, turn_log, ticks)


@njit(inline='always')  # one level fewer in the call tree (sim.jit)
def run_match(st: State, tb: TableArrays, board: Board, rng_map: np.ndarray, n_seats: np.int64,
              path: np.ndarray, turn_log: np.ndarray, scratch: Scratch | None,
              ticks: np.ndarray) -> bool:
    """Set up a match on an empty state and play it to its end; False, with nothing
    played, when the map cannot hold the seats' starts (D1). The one match loop: the
    engine, scenarios (play_turns) and the benchmarks (with ticks) all play it."""
    t0 = clock(ticks)
    if not setup_match(st, tb, board, rng_map, n_seats):
        return False
    tick(ticks, np.int64(P_SETUP), t0)
    begin_match(st, tb, board, ticks)
    while not st.finished[0]:
        play_one_turn(st, tb, board, path, turn_log, scratch, ticks)
    return True


@njit
def run_match_held(states: np.ndarray, tables: np.ndarray, board: Board, rng_map: np.ndarray,
                   n_seats: np.int64, path: np.ndarray, turn_log: np.ndarray,
                   ticks: np.ndarray) -> bool:
    """`run_match` of a match with no skill-1 or skill-2 seat (the common case), on the
    state and tables records held by (1,) record arrays (states[0], tables[0], by
    reference: the state is played in place). Called from Python, numba unboxes a
    record array in about a microsecond but a record scalar of this size in tens of
    microseconds, every match. Its scratch is None, so this kernel holds no lookahead
    or search (search.decide_orders): a cold start of such a match does not compile
    them."""
    return run_match(states[0], tables[0], board, rng_map, n_seats, path, turn_log, None,
                     ticks)


@njit
def run_match_held_skilled(states: np.ndarray, tables: np.ndarray, board: Board,
                           rng_map: np.ndarray, n_seats: np.int64, path: np.ndarray,
                           turn_log: np.ndarray, scratch: Scratch, ticks: np.ndarray) -> bool:
    """run_match_held of a match with a skill-1 or skill-2 seat (D11): the same loop
    with the lookahead's and the search's scratch. scratch.state_bytes is `states` as
    uint8 (the lookahead copies the state through it)."""
    return run_match(states[0], tables[0], board, rng_map, n_seats, path, turn_log, scratch,
                     ticks)


@njit
def play_turns(st: State, tb: TableArrays, board: Board, path: np.ndarray, n: np.int64,
               scratch: Scratch | None) -> None:
    """The AI plays every seat for `n` whole turns from the active seat (scenarios)."""
    turn_log = np.zeros((0, 1, TURN_FIELDS), dtype=np.int64)
    untimed = np.zeros(0, dtype=np.int64)
    for _ in range(n):
        if st.finished[0]:
            return
        play_one_turn(st, tb, board, path, turn_log, scratch, untimed)

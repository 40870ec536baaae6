"""A whole match in compiled code: setup, turns played by the AI, per-turn records.

`run_match` is the fast path the runner calls; `play_one_turn` is the same loop
body, callable from Python so `sim match --check` can run the invariant
checker between turns, and `play_turns` lets scenarios hand a position to the AI.

Each takes the lookahead's scratch (scratch, state_bytes, scratch_bytes, uncopied:
sim.kernels.lookahead, built by sim.engine.match.lookahead_scratch); a skill-1
seat looks ahead at the opening of its turn, before it acts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import local_empty, njit, unowned
from sim.kernels.ai.turn import ai_take_turn
from sim.kernels.lookahead import look_ahead
from sim.kernels.rules.common import score_parts_into
from sim.kernels.rules.flow import end_turn, next_seat, open_turn
from sim.kernels.rules.territory import term_sum
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
    # the terms and counts on this kernel's stack (sim.jit.local_empty): no ranks, no
    # arrays made a turn but the region map
    n = st.n_seats[0]
    flat_terms = local_empty(n * N_SCORE_TERMS)
    flat_counts = local_empty(n * N_SCORE_COUNTS)
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


@njit(inline='always')  # a level of the call tree: see sim.jit.njit
def begin_match(st: State, tb: TableArrays, board: Board) -> None:
    """Open turn 1 (the opening seat's flow runs, T12)."""
    open_turn(st, tb, board)


@njit(inline='always')  # a level of the call tree: see sim.jit.njit
def play_one_turn(st: State, tb: TableArrays, board: Board, path: np.ndarray,
                  turn_log: np.ndarray, scratch: np.ndarray, state_bytes: np.ndarray,
                  scratch_bytes: np.ndarray, uncopied: np.ndarray) -> None:
    """The AI plays the active seat and every later seat of the current turn (a
    skill-1 seat looks ahead first); the turn is recorded after its last seat
    played, before the next turn opens."""
    t = st.turn[0]
    while not st.finished[0] and st.turn[0] == t:
        seat = st.active_seat[0]
        look_ahead(st, tb, board, path, seat, scratch, state_bytes, scratch_bytes, uncopied)
        ai_take_turn(st, tb, board, path, seat)
        if st.finished[0]:
            break
        if next_seat(st) < 0:
            record_turn(st, tb, board, turn_log)
        end_turn(st, tb, board)
    if st.finished[0]:
        record_turn(st, tb, board, turn_log)


@njit(inline='always')  # a level of the call tree: see sim.jit.njit
def run_match(st: State, tb: TableArrays, board: Board, rng_map: np.ndarray, n_seats: np.int64,
              path: np.ndarray, turn_log: np.ndarray, scratch: np.ndarray,
              state_bytes: np.ndarray, scratch_bytes: np.ndarray,
              uncopied: np.ndarray) -> bool:
    """Set up a match on an empty state and play it to its end; False, with nothing
    played, when the map cannot hold the seats' starts (D1)."""
    if not setup_match(st, tb, board, rng_map, n_seats):
        return False
    begin_match(st, tb, board)
    while not st.finished[0]:
        play_one_turn(st, tb, board, path, turn_log, scratch, state_bytes, scratch_bytes,
                      uncopied)
    return True


@njit
def run_match_held(states: np.ndarray, tables: np.ndarray, board: Board, rng_map: np.ndarray,
                   n_seats: np.int64, path: np.ndarray, turn_log: np.ndarray,
                   scratch: np.ndarray, state_bytes: np.ndarray,
                   scratch_bytes: np.ndarray, uncopied: np.ndarray) -> bool:
    """`run_match` on the state and tables records held by (1,) record arrays
    (states[0], tables[0], by reference: the state is played in place). Called from
    Python, numba unboxes a record array in about a microsecond but a record scalar
    of this size in tens of microseconds, every match. state_bytes is `states` as
    uint8 (the lookahead copies the state through it). The arrays are handed on
    without their owner records (sim.jit.unowned): the caller holds them until the
    match returns, so no kernel below counts references to them."""
    board, rng_map, path, turn_log, scratch, state_bytes, scratch_bytes, uncopied = \
        unowned_inputs(board, rng_map, path, turn_log, scratch, state_bytes, scratch_bytes,
                       uncopied)
    return run_match(states[0], tables[0], board, rng_map, n_seats, path, turn_log, scratch,
                     state_bytes, scratch_bytes, uncopied)


@njit(inline="always")
def unowned_inputs(board: Board, rng_map: np.ndarray, path: np.ndarray, turn_log: np.ndarray,
                   scratch: np.ndarray, state_bytes: np.ndarray, scratch_bytes: np.ndarray,
                   uncopied: np.ndarray):
    """A whole match's arrays (run_match_held's) without their owner records
    (sim.jit.unowned): the board's, then the others in the order given."""
    return (Board(board.radius, unowned(board.q), unowned(board.r), unowned(board.index_of),
                  unowned(board.neighbours), unowned(board.distance), unowned(board.disc)),
            unowned(rng_map), unowned(path), unowned(turn_log), unowned(scratch),
            unowned(state_bytes), unowned(scratch_bytes), unowned(uncopied))


@njit
def play_turns(st: State, tb: TableArrays, board: Board, path: np.ndarray, n: np.int64,
               scratch: np.ndarray, state_bytes: np.ndarray, scratch_bytes: np.ndarray,
               uncopied: np.ndarray) -> None:
    """The AI plays every seat for `n` whole turns from the active seat (scenarios)."""
    turn_log = np.zeros((0, 1, TURN_FIELDS), dtype=np.int64)
    for _ in range(n):
        if st.finished[0]:
            return
        play_one_turn(st, tb, board, path, turn_log, scratch, state_bytes, scratch_bytes,
                      uncopied)

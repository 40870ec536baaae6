"""Skill 1 (issue 16, D8): a seat that looks ahead before it commits to a plan.

Every `[ai.lookahead] every_pct` % of the match's turns (from `start_pct` %), at
the opening of its turn (its flow has run), a skill-1 seat plays out each
candidate plan on a copy of the state for `horizon_pct` % of the match's turns
(whole turns, D6: timings are fractions of the match) and adopts the best. A
candidate is a personality of the tables (`tb.ai`, index order): the whole AI
parameter set the seat would play by (State.seat_plan). In the copy every seat
plays its current plan as the greedy AI (skill is ignored there: no lookahead
inside a lookahead, no recursion), and the turn log is not written.

Random numbers. Before the candidates are played, the seat draws once from its
own AI stream (State.rng_ai[seat], keyed by the turn and DRAW_PLAN); that draw
re-seeds the copy's event stream and every seat's AI stream, the same for every
candidate. So the lookahead never peeks at the real future event cards or another
seat's real AI draws, the candidates are compared on common random numbers, and
outside its plan the real state is untouched: every stream key stays as it was,
and every skill-0 match is exactly as without lookahead.

The best candidate: a win in the copy beats everything, then no result, then a
loss (another seat won, or the seat was eliminated); among equals the larger
score margin (the seat's score minus the best rival's, T13). The current plan
is played first and its margin counts `keep_margin` points more (a new plan must
beat it by more than that); it is kept on a tie, and among other equals the
lowest index wins.

The copy is a memory copy of the state's bytes into a scratch state of the same
dtype that the caller allocated (Scratch: the scratch's (1,) holder and uint8
views of both holders), so no record is built inside compiled code. The bytes
uncopied[0]:uncopied[1] (the event log, 70 % of the state) are left out: kernels
append rows to it and never read one back, so the copy plays the same without
them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from sim.jit import njit
from sim.kernels.ai.turn import ai_take_turn, plan_of
from sim.kernels.rules.flow import end_turn
from sim.kernels.rules.standings import scores
from sim.rules.codes import DRAW_PLAN, PERCENT, SKILL_LOOKAHEAD
from sim.world.rng import draw_key, next_u64

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.board import Board
    from sim.world.state import State



class Scratch(NamedTuple):
    """The lookahead's scratch, built by sim.engine.match.lookahead_scratch and handed
    down the match loop whole. (0,)-long arrays of the same types when no seat has
    skill 1, and then nothing here reads them.

    holder: (1,) state records, the copy's holder; state_bytes: (N,) uint8, the real
    state's holder; scratch_bytes: (N,) uint8, the copy's holder; uncopied: (2,) int64,
    the byte span [start, stop) the copy leaves out (the event log).
    """

    holder: np.ndarray
    state_bytes: np.ndarray
    scratch_bytes: np.ndarray
    uncopied: np.ndarray


@njit(inline='always')  # a thin level: see sim.jit
def match_turns(st: State, pct: np.int64) -> np.int64:
    """`pct` % of the match's turns, in whole turns (rounded down)."""
    return st.last_turn[0] * pct // PERCENT


@njit
def lookahead_due(st: State, tb: TableArrays, seat: np.int64) -> bool:
    """Whether the seat about to act looks ahead this turn: skill 1, a horizon of at
    least one turn, at or after start_pct % of the match's turns (turn 1 at the
    earliest), then every every_pct % of them (at least every turn)."""
    if st.seat_skill[seat] < SKILL_LOOKAHEAD or match_turns(st, tb.lookahead_horizon_pct) <= 0:
        return False
    start = max(match_turns(st, tb.lookahead_start_pct), np.int64(1))
    every = max(match_turns(st, tb.lookahead_every_pct), np.int64(1))
    t = st.turn[0]
    return t >= start and (t - start) % every == 0


@njit(inline='always')  # one level fewer in the call tree (sim.jit)
def play_greedy_turn(st: State, tb: TableArrays, board: Board, path: np.ndarray,
                     ticks: np.ndarray) -> None:
    """The rest of the current turn, every seat played by the greedy AI on its current
    plan (sim.kernels.loop.play_one_turn without lookahead and turn log: a lookahead
    inside a lookahead would be a recursion numba cannot type). ticks: (0,), untimed
    (the loop times the whole lookahead as one phase)."""
    t = st.turn[0]
    while not st.finished[0] and st.turn[0] == t:
        ai_take_turn(st, tb, board, path, st.active_seat[0], ticks)
        if st.finished[0]:
            break
        end_turn(st, tb, board, ticks)


@njit
def plan_outcome(cp: State, tb: TableArrays, board: Board, seat: np.int64):
    """(result, margin) of the seat in a played-out copy: result 1 it won, -1 another
    seat won or it is out, 0 neither; margin its score minus the best rival's."""
    result = np.int64(0)
    if cp.finished[0] and cp.winner[0] >= 0:
        result = np.int64(1) if cp.winner[0] == seat else np.int64(-1)
    elif not cp.seat_alive[seat]:
        result = np.int64(-1)
    _terms, _counts, score, _rank = scores(cp, tb, board)
    best_rival = np.int64(0)
    first = True
    for s in range(cp.n_seats[0]):
        if s != seat and cp.seat_alive[s] and (first or score[s] > best_rival):
            best_rival = score[s]
            first = False
    return result, score[seat] - best_rival


@njit(inline='always')  # one level fewer in the call tree (sim.jit)
def play_out(st: State, tb: TableArrays, board: Board, path: np.ndarray, seat: np.int64,
             plan: np.int64, seed: np.uint64, scratch: Scratch):
    """plan_outcome of playing `plan` for the seat on a fresh copy of `st` (in
    scratch.holder) for horizon_pct % of the match's turns (the current one
    included), the copy's streams re-seeded from `seed`."""
    lo, hi = scratch.uncopied[0], scratch.uncopied[1]
    scratch_bytes = scratch.scratch_bytes
    state_bytes = scratch.state_bytes
    scratch_bytes[:lo] = state_bytes[:lo]
    scratch_bytes[hi:] = state_bytes[hi:]
    cp = scratch.holder[0]
    cp.seat_plan[seat] = plan
    stream = np.empty(1, dtype=np.uint64)
    stream[0] = seed
    cp.rng_events[0] = next_u64(stream)
    for s in range(cp.rng_ai.shape[0]):
        cp.rng_ai[s] = next_u64(stream)
    end = st.turn[0] + match_turns(st, tb.lookahead_horizon_pct)
    untimed = np.zeros(0, dtype=np.int64)
    while not cp.finished[0] and cp.turn[0] < end:
        play_greedy_turn(cp, tb, board, path, untimed)
    return plan_outcome(cp, tb, board, seat)


@njit(inline='always')  # one level fewer in the call tree (sim.jit)
def choose_plan(st: State, tb: TableArrays, board: Board, path: np.ndarray, seat: np.int64,
                scratch: Scratch) -> np.int64:
    """The plan the seat adopts (module docstring): the current one played first, its
    margin counting keep_margin more, then every personality in index order. Draws
    once from the seat's AI stream (a keyed draw: `st` is not changed). path: the match's
    path table (terrain only, so the copy shares it)."""
    seed = draw_key(st.rng_ai[seat], st.turn[0], np.int64(DRAW_PLAN), seat)
    current = plan_of(st, seat)
    best = current
    best_result = best_margin = np.int64(0)
    # one call site of play_out, so that inlining it copies the playout once
    for k in range(tb.ai.shape[0] + 1):
        plan = current if k == 0 else np.int64(k - 1)
        if k > 0 and plan == current:
            continue
        result, margin = play_out(st, tb, board, path, seat, plan, seed, scratch)
        if k == 0:
            best_result, best_margin = result, margin + tb.lookahead_keep_margin
        elif result > best_result or (result == best_result and margin > best_margin):
            best, best_result, best_margin = plan, result, margin
    return best


@njit(inline='always')  # one level fewer in the call tree (sim.jit)
def look_ahead(st: State, tb: TableArrays, board: Board, path: np.ndarray, seat: np.int64,
               scratch: Scratch) -> None:
    """Before the seat acts: when its lookahead is due, set State.seat_plan[seat] to
    the plan choose_plan picks."""
    if lookahead_due(st, tb, seat):
        st.seat_plan[seat] = choose_plan(st, tb, board, path, seat, scratch)

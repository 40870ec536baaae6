"""Skill 1 (D11): a seat that looks ahead at its orders before it commits to them.

A seat's orders are what the skill-0 AI (sim.kernels.ai) plays it by: a plan, the
personality whose whole AI parameter set it uses (State.seat_plan: what it builds,
researches, when it goes to war, when it buys a truce), and a war order
(State.seat_target: the AI's own war target, no war, or one rival city to march
on; sim.kernels.ai.turn.ordered_target). `order_options` lists the orders a seat
can give: every personality × the war orders (the AI's own target, none, and the
`targets` rival cities nearest the seat's cities), its current orders first.

Every `[ai.lookahead] every_pct` % of the match's turns (from `start_pct` % to
`stop_pct` %), at
the opening of its turn (its flow has run), a skill-1 seat plays `candidates`
orders out on a copy of the state for `horizon_pct` % of the match's turns (whole
turns, D6): its current orders and candidates - 1 others from their neighbours
among its options (another plan with the same war order, or another war order with
the same plan: a local search, which a small budget covers), drawn, or with
`city_candidate` and `plan_candidate` two of them fixed: the same plan marching on
the nearest rival city, and another plan on the same war order (`draw_candidates`;
the tables' default since issue 42's item 4, ai5 round: three fixed candidates gain
about 5 points over three drawn, docs/ai.md "Within 6×"). Lookaheads on events
under a cap and a screen of short play-outs were tried, measured not to pay (same
section) and removed.
In the copy every seat is played by the skill-0 AI on its current orders, the
seat under test on the candidate (skill is ignored there: no lookahead inside a
lookahead), and the turn log is not written. The seat keeps the best candidate
(`order_value`; the current orders count `keep_margin` more and win a tie,
among other equals the first drawn). Skill 2 (sim.kernels.search) searches the
same options with sampled rollouts of the same copy (`play_out`).

Random numbers. Before the candidates are played, the seat draws once from its
own AI stream (State.rng_ai[seat], keyed by the turn and DRAW_PLAN: `decision_key`);
that draw picks the candidates and re-seeds the copy's event stream and every
seat's AI stream (`seed_copy`), the same for every candidate. So the lookahead
never peeks at the real future event cards or another seat's real AI draws, the
candidates are compared on common random numbers, and outside its orders and its
playout count the real state is untouched: every stream key stays as it was, and
every skill-0 match is exactly as without lookahead.

The copy is a memory copy of the state's bytes into a scratch state of the same
dtype that the caller allocated (Scratch: the scratch's (1,) holder and uint8
views of both holders), so no record is built inside compiled code. Of the event
log (the bytes uncopied[0]:uncopied[1], 70 % of the state) only the rows logged so
far are copied: the AI reads the log back (ai.diplomacy.war_record: the war's
captures and declined truces), and the log's unused capacity is most of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from sim.jit import njit
from sim.kernels.ai.threats import hostile_owner
from sim.kernels.ai.turn import ai_take_turn, plan_of
from sim.kernels.rules.flow import end_turn
from sim.kernels.rules.standings import scores
from sim.rules.codes import (
    COUNT_CITIES,
    DRAW_PLAN,
    F_ARMY,
    F_BIAS,
    F_CITIES,
    F_DOMINANCE,
    F_GOLD,
    F_LATE_SCORE,
    F_PROGRESS,
    F_SCIENCE,
    F_SCORE,
    FAR,
    N_VALUE_FEATURES,
    ORDER_NO_WAR,
    ORDER_OWN_TARGET,
    PERCENT,
)
from sim.world.rng import below, draw_key, next_u64

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.board import Board
    from sim.world.state import State


class Scratch(NamedTuple):
    """The lookahead's and the search's scratch, built by
    sim.engine.match.lookahead_scratch and handed down the match loop whole. (0,)-long
    arrays of the same types when no seat has skill 1 or 2, and then nothing here
    reads them.

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


@njit(inline='always')  # a thin level: see sim.jit
def decision_due(st: State, start_pct: np.int64, stop_pct: np.int64, every_pct: np.int64,
                 horizon_pct: np.int64) -> bool:
    """Whether a seat deciding by these timings (% of the match's turns) decides this
    turn: a horizon of at least one turn, from start_pct % of the match's turns (turn
    1 at the earliest) to stop_pct %, every every_pct % of them (at least every
    turn)."""
    if match_turns(st, horizon_pct) <= 0:
        return False
    start = max(match_turns(st, start_pct), np.int64(1))
    every = max(match_turns(st, every_pct), np.int64(1))
    t = st.turn[0]
    return start <= t <= match_turns(st, stop_pct) and (t - start) % every == 0


@njit
def order_options(st: State, tb: TableArrays, board: Board, seat: np.int64,
                  n_targets: np.int64) -> tuple[np.ndarray, np.ndarray]:
    """(plans, targets): (N,) int64 each, the orders the seat may give, its current
    ones (plan_of, State.seat_target) first, then every personality (index order)
    × every war order: ORDER_OWN_TARGET, ORDER_NO_WAR, then up to `n_targets` cities
    of rival seats the seat may attack (V07), nearest its own cities first (ties to
    the lowest ID). Each pair once."""
    n_c = st.n_cities[0]
    near = np.full(n_c, FAR, dtype=np.int64)  # a rival city's distance to the seat's cities
    for c in range(n_c):
        t = st.city_tile[c]
        owner = st.city_owner[c]
        if t < 0 or owner < 0 or owner == seat or not hostile_owner(st, seat, owner):
            continue
        for h in range(n_c):
            if st.city_tile[h] >= 0 and st.city_owner[h] == seat:
                near[c] = min(near[c], board.distance[t, st.city_tile[h]])
    wars = np.empty(n_targets + 2, dtype=np.int64)
    wars[0] = ORDER_OWN_TARGET
    wars[1] = ORDER_NO_WAR
    n_wars = np.int64(2)
    for _k in range(n_targets):
        best = np.int64(-1)
        for c in range(n_c):
            if near[c] < FAR and (best < 0 or near[c] < near[best]):
                best = c
        if best < 0:
            break
        wars[n_wars] = best
        n_wars += 1
        near[best] = FAR
    n_plans = tb.ai.shape[0]
    plans = np.empty(n_plans * n_wars + 1, dtype=np.int64)
    targets = np.empty(n_plans * n_wars + 1, dtype=np.int64)
    plans[0] = plan_of(st, seat)
    targets[0] = st.seat_target[seat]
    n = np.int64(1)
    for p in range(n_plans):
        for w in range(n_wars):
            if p != plans[0] or wars[w] != targets[0]:
                plans[n] = p
                targets[n] = wars[w]
                n += 1
    return plans[:n], targets[:n]


@njit(inline='always')  # with seed_copy, the one place the copies' dice are keyed
def decision_key(st: State, seat: np.int64) -> np.uint64:
    """The seat's one draw for a decision this turn: a keyed draw of its AI stream
    (sim.world.rng.draw_key, purpose DRAW_PLAN), so no stream of `st` moves."""
    return draw_key(st.rng_ai[seat], st.turn[0], np.int64(DRAW_PLAN), seat)


@njit(inline='always')  # the one place the copies' dice are keyed (see the module doc)
def seed_copy(cp: State, seed: np.uint64) -> None:
    """Re-seed a copy's event stream and every seat's AI stream from `seed`, in this
    order: the copy plays with dice of its own, none of the real match's future."""
    stream = np.empty(1, dtype=np.uint64)
    stream[0] = seed
    cp.rng_events[0] = next_u64(stream)
    for s in range(cp.rng_ai.shape[0]):
        cp.rng_ai[s] = next_u64(stream)


@njit(inline='always')  # one level fewer in the call tree (sim.jit)
def play_greedy_turn(st: State, tb: TableArrays, board: Board, path: np.ndarray,
                     ticks: np.ndarray) -> None:
    """The rest of the current turn, every seat played by the skill-0 AI on its current
    orders (sim.kernels.loop.play_one_turn without lookahead and turn log: a lookahead
    inside a lookahead would be a recursion numba cannot type). ticks: (0,), untimed
    (the loop times the whole lookahead as one phase)."""
    t = st.turn[0]
    while not st.finished[0] and st.turn[0] == t:
        ai_take_turn(st, tb, board, path, st.active_seat[0], ticks)
        if st.finished[0]:
            break
        end_turn(st, tb, board, ticks)


@njit(inline='always')  # a thin level: see sim.jit
def plan_outcome(cp: State, tb: TableArrays, board: Board, seat: np.int64):
    """(result, margin) of the seat in a played-out copy: result 1 it won, -1 another
    seat won or it is out, 0 neither; margin its score minus the best rival's (T13)."""
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


@njit
def seat_standing(cp: State, tb: TableArrays, board: Board) -> np.ndarray:
    """(S, F) int64: each seat's own numbers behind VALUE_FEATURES (sim.rules.codes):
    its score (T13), cities held, science earned (stock + its known techs' costs),
    army (cost of its units that can attack), gold stock and V18 counter at their
    features' columns; the other columns 0. The same numbers a turns table row holds
    (tools/fit_value.py: science earned is the sum of science_gained)."""
    n = cp.n_seats[0]
    _terms, counts, score, _rank = scores(cp, tb, board)
    own = np.zeros((n, N_VALUE_FEATURES), dtype=np.int64)
    for s in range(n):
        own[s, F_SCORE] = score[s]
        own[s, F_CITIES] = counts[s, COUNT_CITIES]
        science = cp.seat_science[s]
        for k in range(tb.tech_cost.shape[0]):
            if cp.seat_techs[s, k]:
                science += tb.tech_cost[k]
        own[s, F_SCIENCE] = science
        own[s, F_GOLD] = cp.seat_gold[s]
        own[s, F_DOMINANCE] = cp.seat_dominance[s]
    for u in range(cp.n_units[0]):
        owner = cp.unit_owner[u]
        kind = cp.unit_type[u]
        if cp.unit_tile[u] >= 0 and 0 <= owner < n and kind >= 0 and tb.unit_attack[kind] > 0:
            own[owner, F_ARMY] += tb.unit_cost[kind]
    return own


@njit
def value_features(cp: State, tb: TableArrays, board: Board, seat: np.int64) -> np.ndarray:
    """(F,) int64, VALUE_FEATURES of the seat's standing in `cp` (sim.rules.codes): bias
    1, progress the % of the match's turns played (the turn now open not counted), then
    each of seat_standing's numbers minus the best alive rival's (0 with none), and the
    score lead × progress / 100. tools/fit_value.py reads the same from a skill-0
    match's turns table at the end of the turn before (the seat that opened the turn
    has had its income since: a small bias the fit does not see)."""
    own = seat_standing(cp, tb, board)
    x = np.zeros(N_VALUE_FEATURES, dtype=np.int64)
    x[F_BIAS] = 1
    x[F_PROGRESS] = max(cp.turn[0] - 1, np.int64(0)) * PERCENT // cp.last_turn[0]
    for f in (F_SCORE, F_CITIES, F_SCIENCE, F_ARMY, F_GOLD, F_DOMINANCE):
        best_rival = np.int64(0)
        first = True
        for s in range(cp.n_seats[0]):
            if s != seat and cp.seat_alive[s] and (first or own[s, f] > best_rival):
                best_rival = own[s, f]
                first = False
        x[f] = own[seat, f] - best_rival
    x[F_LATE_SCORE] = x[F_SCORE] * x[F_PROGRESS] // PERCENT
    return x


@njit
def position_value(cp: State, tb: TableArrays, board: Board, seat: np.int64,
                   weights: np.ndarray) -> np.int64:
    """The learned value of the seat's standing in `cp` ([ai.value], D11): the logit of
    its chance to win the match in 1/VALUE_UNIT, weights · value_features. weights:
    (F,) int64, tb.value_weights."""
    x = value_features(cp, tb, board, seat)
    value = np.int64(0)
    for f in range(N_VALUE_FEATURES):
        value += weights[f] * x[f]
    return value


@njit
def play_out(st: State, tb: TableArrays, board: Board, path: np.ndarray, seat: np.int64,
             plan: np.int64, target: np.int64, seed: np.uint64, turns: np.int64,
             win_value: np.int64, weights: np.ndarray, scratch: Scratch) -> np.int64:
    """The value to the seat of its orders (plan, target) played out on a fresh copy
    of `st` (in scratch.holder) for `turns` turns, the current one included, the
    copy's dice re-seeded from `seed` (seed_copy): its learned value (position_value
    with `weights`, (F,) int64) or, when weights is (0,), its score margin over the best
    rival; plus win_value for a win, minus it for a loss (plan_outcome). Counts one
    playout of the seat (State.seat_playouts); changes nothing else of `st`.
    The lookahead and the search both call it: one compiled playout."""
    lo, hi = scratch.uncopied[0], scratch.uncopied[1]
    scratch_bytes = scratch.scratch_bytes
    state_bytes = scratch.state_bytes
    # plain loops, not slice assignments: those link numba's shape-mismatch error (its
    # string formatting and all) into the playout and every level above it (sim.jit)
    for i in range(lo):
        scratch_bytes[i] = state_bytes[i]
    for i in range(hi, state_bytes.shape[0]):
        scratch_bytes[i] = state_bytes[i]
    cp = scratch.holder[0]
    # the rows logged so far: the AI reads the log back (ai.diplomacy.war_record)
    logged = min(st.n_events[0], st.event_log.shape[0])
    for r in range(logged):
        for k in range(st.event_log.shape[1]):
            cp.event_log[r, k] = st.event_log[r, k]
    cp.seat_plan[seat] = plan
    cp.seat_target[seat] = target
    seed_copy(cp, seed)
    end = st.turn[0] + turns
    untimed = np.zeros(0, dtype=np.int64)
    while not cp.finished[0] and cp.turn[0] < end:
        play_greedy_turn(cp, tb, board, path, untimed)
    st.seat_playouts[seat] += 1
    result, margin = plan_outcome(cp, tb, board, seat)
    if weights.shape[0] == 0:
        return result * win_value + margin
    if result != 0:  # the match decided in the copy: no estimate of the chance needed
        return result * win_value
    return position_value(cp, tb, board, seat, weights)


@njit
def draw_candidates(st: State, tb: TableArrays, board: Board, seat: np.int64,
                    stream: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(plans, targets, picks): the seat's order_options ((N,) int64 each) and the
    candidates a lookahead plays out, (k,) int64 indices into them, k = candidates
    (fewer when the seat has fewer neighbours): its current orders (index 0) first,
    then with city_candidate the same plan on the nearest rival city it does not
    march on yet, with plan_candidate another plan on the same war order (drawn among
    them), and the rest drawn without replacement from the neighbours of the current
    orders (one of the two changed: a local search). Draws from `stream` ((1,) uint64)."""
    plans, targets = order_options(st, tb, board, seat, tb.lookahead_targets)
    # the neighbours of the current orders: one of the two changed (a local search)
    picks = np.empty(plans.shape[0], dtype=np.int64)
    n = np.int64(0)
    for o in range(plans.shape[0]):
        if plans[o] == plans[0] or targets[o] == targets[0]:
            picks[n] = o
            n += 1
    k = min(tb.lookahead_candidates, n)
    drawn = np.int64(1)  # picks[:drawn] are fixed, the rest drawn below
    if tb.lookahead_city_candidate and drawn < k:
        # the same plan marching on the nearest rival city it does not march on yet
        # (order_options lists the cities nearest first)
        for i in range(drawn, n):
            o = picks[i]
            if plans[o] == plans[0] and targets[o] >= 0:
                picks[drawn], picks[i] = picks[i], picks[drawn]
                drawn += 1
                break
    if tb.lookahead_plan_candidate and drawn < k:
        # another plan on the same war order, drawn among them
        m = np.int64(0)
        for i in range(drawn, n):
            if targets[picks[i]] == targets[0]:
                m += 1
        if m > 0:
            r = below(stream, m)
            for i in range(drawn, n):
                if targets[picks[i]] == targets[0]:
                    if r == 0:
                        picks[drawn], picks[i] = picks[i], picks[drawn]
                        drawn += 1
                        break
                    r -= 1
    for i in range(drawn, k):  # a partial Fisher-Yates draw of the other candidates
        j = i + below(stream, n - i)
        picks[i], picks[j] = picks[j], picks[i]
    return plans, targets, picks[:k]


@njit(inline='always')  # one level fewer in the call tree (sim.jit)
def lookahead_orders(st: State, tb: TableArrays, board: Board, path: np.ndarray,
                     seat: np.int64, scratch: Scratch) -> tuple[np.int64, np.int64]:
    """(plan, target) the skill-1 seat keeps (module docstring): its current orders
    and candidates - 1 others drawn without replacement from their neighbours among
    order_options (the same plan or the same war order; draw_candidates), each played
    out once on the same dice (a lone candidate: none). One keyed draw (decision_key);
    changes nothing of `st` but its playout count. path: the match's path table
    (terrain only, so the copy shares it)."""
    stream = np.empty(1, dtype=np.uint64)
    stream[0] = decision_key(st, seat)
    seed = next_u64(stream)
    plans, targets, picks = draw_candidates(st, tb, board, seat, stream)
    k = picks.shape[0]
    turns = match_turns(st, tb.lookahead_horizon_pct)
    best = picks[0]  # one candidate: nothing to compare, so no play-out
    best_value = np.int64(0)
    # value_weights[:] is a slice, the array type of the search's [:0]: play_out and
    # position_value compile once for both, not once per weights type (sim.jit)
    for i in range(k if k > 1 else 0):
        o = picks[i]
        value = play_out(st, tb, board, path, seat, plans[o], targets[o], seed, turns,
                         tb.lookahead_win_value, tb.value_weights[:], scratch)
        if o == 0:
            value += tb.lookahead_keep_margin
        if i == 0 or value > best_value:
            best, best_value = o, value
    return plans[best], targets[best]

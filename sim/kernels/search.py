"""Skill 2 (D11): a search player, and the one place a seat's skill picks how it decides.

At a decision (every `[ai.search] every_pct` % of the match's turns from `start_pct`
% to `stop_pct` %, at the opening of its turn) a skill-2 seat scores every order it may give
(sim.kernels.lookahead.order_options: each personality × each war order) by sampled
rollouts: a copy of the whole match state played out for `horizon_pct` % of its
turns with the skill-0 AI for every seat (sim.kernels.lookahead.play_out), its dice
drawn afresh for each rollout. Rollout i of every order uses the same dice (common
random numbers), so orders are compared on the same futures.

The budget is exactly `rollouts` play-outs per decision, spent by sequential halving
(Karnin, Koren and Somekh 2013, the budgeted bandit of Gumbel MuZero's root): in
round 1 every order gets an equal share, then the better half (by mean value) the
next share, and so on until one order is left or the budget is spent; the last
round spends what is left. The seat keeps the order with the best mean value, its
current orders counting keep_margin more (and winning a tie). A rollout's value is
the lookahead's (play_out: score margin over the best rival, ± win_value).

This is a one-level Monte Carlo tree search: the root's children are the seat's
orders, each rollout a sampled play-out of the whole state by the default policy;
the other seats and the seat's later decisions are played by that policy (OpenSpiel's
MCTSBot with a random-rollout evaluator has the same shape, with UCT in place of
sequential halving, which spends a fixed budget better when it is small).

Random numbers: one keyed draw of the seat's own AI stream per decision
(lookahead.decision_key) keys every rollout's dice (a local splitmix64 stream), so a
decision is a pure function of the state, bit for bit on any worker or chunking, and
no stream of the match moves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.ai.random_play import random_turn
from sim.kernels.lookahead import (
    Scratch,
    decision_due,
    decision_key,
    lookahead_orders,
    match_turns,
    order_options,
    play_out,
)
from sim.rules.codes import SKILL_LOOKAHEAD, SKILL_RANDOM, SKILL_SEARCH
from sim.world.rng import next_u64

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit(inline='always')  # a thin level: see sim.jit
def better(sums: np.ndarray, counts: np.ndarray, keep: np.int64, a: np.int64,
           b: np.int64) -> bool:
    """Whether order `a` has a higher mean value than `b` (order 0, the current one,
    counts `keep` more; an order with no rollout is worse than any with one)."""
    if counts[b] == 0:
        return counts[a] > 0
    if counts[a] == 0:
        return False
    keep_a = keep if a == 0 else np.int64(0)
    keep_b = keep if b == 0 else np.int64(0)
    return (sums[a] + keep_a * counts[a]) * counts[b] > (sums[b] + keep_b * counts[b]) * counts[a]


@njit(inline='always')  # one level fewer in the call tree (sim.jit)
def search_orders(st: State, tb: TableArrays, board: Board, path: np.ndarray,
                  seat: np.int64, scratch: Scratch) -> tuple[np.int64, np.int64]:
    """(plan, target) the skill-2 seat keeps (module docstring): sequential halving
    over order_options with exactly `rollouts` play-outs. One keyed draw
    (lookahead.decision_key); changes nothing of `st` but its playout count."""
    stream = np.empty(1, dtype=np.uint64)
    stream[0] = decision_key(st, seat)
    plans, targets = order_options(st, tb, board, seat, tb.search_targets)
    n = plans.shape[0]
    budget = tb.search_rollouts
    seeds = np.empty(budget, dtype=np.uint64)  # rollout i's dice, the same for every order
    for i in range(budget):
        seeds[i] = next_u64(stream)
    sums = np.zeros(n, dtype=np.int64)
    counts = np.zeros(n, dtype=np.int64)
    alive = np.arange(n)
    n_alive = n
    rounds = np.int64(1)
    while np.int64(1) << rounds < n:
        rounds += 1
    turns = match_turns(st, tb.search_horizon_pct)
    used = np.int64(0)
    while True:
        if rounds <= 1:   # the last round spends what is left
            share = (budget - used + n_alive - 1) // n_alive
        else:
            share = max((budget - used) // (n_alive * rounds), np.int64(1))
        for i in range(n_alive):
            o = alive[i]
            for _ in range(share):
                if used >= budget:
                    break
                sums[o] += play_out(st, tb, board, path, seat, plans[o], targets[o],
                                    seeds[counts[o]], turns, tb.search_win_value,
                                    tb.value_weights[:0], scratch)
                counts[o] += 1
                used += 1
        # the alive orders best first (insertion sort: a stable sort of a few dozen)
        for i in range(1, n_alive):
            o = alive[i]
            j = i
            while j > 0 and better(sums, counts, tb.search_keep_margin, o, alive[j - 1]):
                alive[j] = alive[j - 1]
                j -= 1
            alive[j] = o
        if used >= budget or n_alive <= 1:
            break
        n_alive = (n_alive + 1) // 2
        rounds = max(rounds - 1, np.int64(1))
    return plans[alive[0]], targets[alive[0]]


@njit
def decide_orders(st: State, tb: TableArrays, board: Board, path: np.ndarray, seat: np.int64,
                  scratch: Scratch | None) -> bool:
    """Before the seat acts: a skill-1 seat whose lookahead is due or a skill-2 seat
    whose search is due sets its orders (State.seat_plan, seat_target); every other
    seat plays on as it is (D11: the levels differ only in how they pick orders). A
    random-play seat plays its whole turn here (sim.kernels.ai.random_play).
    True: the seat's actions are played (the skill-0 AI must not act for it).

    scratch None: a match with no skill-1, skill-2 or random-play seat
    (sim.engine.match.loop_scratch).
    numba prunes the branch below on the argument's type, so that specialisation is
    this one test and the match loop that calls it never compiles the lookahead,
    the search or random play (a third of a cold compile)."""
    if scratch is None:
        return False
    skill = st.seat_skill[seat]
    if skill == SKILL_RANDOM:
        random_turn(st, tb, board, seat)
        return True
    if skill == SKILL_SEARCH and decision_due(st, tb.search_start_pct, tb.search_stop_pct,
                                              tb.search_every_pct, tb.search_horizon_pct):
        plan, target = search_orders(st, tb, board, path, seat, scratch)
    elif skill == SKILL_LOOKAHEAD and decision_due(st, tb.lookahead_start_pct,
                                                   tb.lookahead_stop_pct,
                                                   tb.lookahead_every_pct,
                                                   tb.lookahead_horizon_pct):
        plan, target = lookahead_orders(st, tb, board, path, seat, scratch)
    else:
        return False
    st.seat_plan[seat] = plan
    st.seat_target[seat] = target
    return False

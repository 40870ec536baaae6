"""The AI's diplomacy (V07, D9, C: Diplomacy, C: AI).

A seat joins (or refreshes) a pact against any seat whose dominance counter
reached the pact trigger (V18) or that announced the Observatory (V16).

A truce is an offer (D9). Each side reads what a truce is worth to it over its
length (`truce_worth`): the cities it expects to lose by fighting on
(`loss_value_pct` of their score points, T13: a lost city also costs its output),
less those it expects to take (`conquest_value_pct`), as gold at the score's rate
(gold_per_point). The cities it
expects to lose to a rival are the war's recent record (the cities the rival took
from it in the last `war_memory` turns, carried over the truce's length) plus the
rival's attack near its cities beyond its own defence there (`attack_per_city`
of it per city). A seat pressed by a rival's army names the price it reads the
rival would ask (`offer_margin_pct` on top, at least truce_price) and offers it
only when the truce is worth that much to it; the rival accepts when the price
covers what fighting on is worth to it, so a seat winning a war declines a cheap
truce (and a conqueror, valuing its conquests more, asks more). Both answers
are logged (EV_TRUCE, EV_TRUCE_DECLINED: the truces table); a declined buyer
asks the same seat again only after `retry_turns`. Neither side makes a truce
with a seat whose Observatory is queued or whose counter reached the pact
trigger, nor (unless peace_from_prosperity) with one that knows the
Observatory's tech: a truce would shield its victory (V16, V18, D8).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.ai.threats import city_score_points, observatory_queued_by, plan_of
from sim.kernels.rules.commands import offer_truce
from sim.kernels.rules.events import log_event
from sim.kernels.rules.seats import cities_held, forbidden_mechanic
from sim.kernels.rules.units import is_military
from sim.rules.codes import (
    A_ATTACK_NEAR_B,
    A_DEFENCE_NEAR_A,
    B_ATTACK_NEAR_A,
    B_DEFENCE_NEAR_B,
    B_UNITS_NEAR_A,
    COL_BY,
    COL_KIND,
    COL_SEAT,
    COL_TURN,
    DRAW_PLAN,
    EV_CAPTURE,
    EV_PACT,
    EV_TRANSFER,
    EV_TRUCE_DECLINED,
    M_PACT,
    M_TRUCE,
    N_FRONT,
    PERCENT,
    SKILL_RANDOM,
)
from sim.world.rng import draw_key, keyed_below

if TYPE_CHECKING:
    from sim.rules.record import AIRecord, TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit
def war_record(st: State, a: np.int64, b: np.int64, since: np.int64,
               ) -> tuple[np.int64, np.int64, bool]:
    """From turn `since` on, read back through the event log: the cities `a` took
    from `b` and `b` from `a` (capture, transfer), and whether `b` declined a truce
    `a` offered. A full log (rows counted, not stored) reads as no record."""
    took_ab = np.int64(0)
    took_ba = np.int64(0)
    declined = False
    log = st.event_log
    for i in range(min(st.n_events[0], log.shape[0]) - 1, -1, -1):
        if log[i, COL_TURN] < since:
            break
        kind = log[i, COL_KIND]
        seat, by = log[i, COL_SEAT], log[i, COL_BY]
        if kind == EV_CAPTURE or kind == EV_TRANSFER:
            if seat == b and by == a:
                took_ab += 1
            elif seat == a and by == b:
                took_ba += 1
        elif kind == EV_TRUCE_DECLINED and seat == a and by == b:
            declined = True
    return took_ab, took_ba, declined


@njit
def front(st: State, tb: TableArrays, distance: np.ndarray, a: np.int64, b: np.int64,
          radius: np.int64) -> np.ndarray:
    """(N_FRONT,) int64 about the war between seats `a` and `b`, indexed by
    sim.rules.codes.FRONT_FIELDS: a's attack near b's cities, b's defence near b's
    cities, b's attack near a's cities, a's defence near a's cities, b's fighting units
    near a's cities ("near": within `radius` steps; fighting units only). distance:
    (T, T) board.distance."""
    out = np.zeros(N_FRONT, dtype=np.int64)
    for u in range(st.n_units[0]):
        t = st.unit_tile[u]
        o = st.unit_owner[u]
        if t < 0 or (o != a and o != b) or not is_military(tb, st.unit_type[u]):
            continue
        near_a = False
        near_b = False
        for c in range(st.n_cities[0]):
            h = st.city_tile[c]
            if h >= 0 and distance[t, h] <= radius:
                near_a = near_a or st.city_owner[c] == a
                near_b = near_b or st.city_owner[c] == b
        ut = st.unit_type[u]
        if o == a:
            out[A_ATTACK_NEAR_B] += tb.unit_attack[ut] if near_b else 0
            out[A_DEFENCE_NEAR_A] += tb.unit_defence[ut] if near_a else 0
        else:
            out[B_ATTACK_NEAR_A] += tb.unit_attack[ut] if near_a else 0
            out[B_DEFENCE_NEAR_B] += tb.unit_defence[ut] if near_b else 0
            out[B_UNITS_NEAR_A] += 1 if near_a else 0
    return out


@njit
def mean_city_points(st: State, tb: TableArrays, seat: np.int64) -> np.int64:
    """The mean score points (T13, threats.city_score_points) of `seat`'s cities, 0
    with none."""
    total = np.int64(0)
    n = np.int64(0)
    for c in range(st.n_cities[0]):
        if st.city_tile[c] >= 0 and st.city_owner[c] == seat:
            total += city_score_points(st, tb, c)
            n += 1
    return total // n if n > 0 else np.int64(0)


@njit
def expected_loss_pct(cities: np.int64, taken: np.int64, attack: np.int64, defence: np.int64,
                      turns: np.int64, ai: AIRecord) -> np.int64:
    """Cities (in % of one) a side holding `cities` expects to lose over `turns` of
    fighting on: its rival took `taken` of its cities in the last war_memory turns
    (carried over `turns`), plus the rival's `attack` near its cities beyond its
    `defence` there, attack_per_city per city; never more than it holds."""
    loss = taken * turns * PERCENT // ai.war_memory + \
        max(attack - defence, np.int64(0)) * PERCENT // ai.attack_per_city
    return min(loss, cities * PERCENT)


@njit
def truce_worth(st: State, tb: TableArrays, ai: AIRecord, distance: np.ndarray,
                seat: np.int64, rival: np.int64) -> np.int64:
    """D9: what a truce with `rival` over truce_turns is worth to `seat`, in gold, as
    read with the AI values `ai` (positive: `seat` would rather stop fighting).

    The cities it expects to lose (expected_loss_pct) at its mean city points (×
    loss_value_pct), less those it expects to take at the rival's (×
    conquest_value_pct); points are gold at gold_per_point (T13). A lost city costs
    more than a taken one brings, so a seat losing a war can pay the winner its ask."""
    since = st.turn[0] - ai.war_memory
    took, lost, _declined = war_record(st, seat, rival, since)
    f = front(st, tb, distance, seat, rival, np.int64(ai.peace_threat_radius))
    turns = np.int64(tb.truce_turns)
    loss = expected_loss_pct(cities_held(st, seat), lost, f[B_ATTACK_NEAR_A],
                             f[A_DEFENCE_NEAR_A], turns, ai)
    gain = expected_loss_pct(cities_held(st, rival), took, f[A_ATTACK_NEAR_B],
                             f[B_DEFENCE_NEAR_B], turns, ai)
    points = loss * mean_city_points(st, tb, seat) * ai.loss_value_pct // PERCENT - \
        gain * mean_city_points(st, tb, rival) * ai.conquest_value_pct // PERCENT
    return points * tb.gold_per_point // PERCENT


@njit
def shields_victory(st: State, tb: TableArrays, ai: AIRecord, other: np.int64) -> bool:
    """Whether a truce with `other` would shield a victory it is close to: its
    Observatory queued, its counter at the pact trigger, or (unless
    peace_from_prosperity) the Observatory's tech known (V16, V18)."""
    return st.seat_dominance[other] >= tb.pact_dominance_trigger or \
        observatory_queued_by(st, tb, other) >= 0 or \
        (not ai.peace_from_prosperity and tb.observatory_tech >= 0 and
         st.seat_techs[other, tb.observatory_tech] == 1)


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def random_answer(st: State, seller: np.int64, buyer: np.int64) -> bool:
    """D9, issue 43: a random-play seat `seller` (sim.kernels.ai.random_play) asked for a
    truce by `buyer` accepts with chance 1/2: one keyed draw of its own random-play
    stream (State.rng_random) by the turn and the buyer (a seat offers one truce a turn
    at most), so no other stream moves."""
    key = draw_key(st.rng_random[seller], st.turn[0], np.int64(DRAW_PLAN),
                   buyer + st.n_seats[0])
    return keyed_below(key, np.int64(2)) == 1


@njit
def accepts_truce(st: State, tb: TableArrays, distance: np.ndarray, seller: np.int64,
                  buyer: np.int64, price: np.int64) -> bool:
    """D9: the seat asked (`seller`, by its own AI values) accepts `buyer`'s offer of
    `price` gold when it covers what fighting on is worth to it (-truce_worth), and
    the truce shields no victory of the buyer's; a random-play seat answers at random
    (random_answer)."""
    if st.seat_skill[seller] == SKILL_RANDOM:
        return random_answer(st, seller, buyer)
    ai = tb.ai[plan_of(st, seller)]
    if shields_victory(st, tb, ai, buyer):
        return False
    return price + truce_worth(st, tb, ai, distance, seller, buyer) >= 0


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def truce_offer(st: State, tb: TableArrays, ai: AIRecord, distance: np.ndarray,
                seat: np.int64) -> tuple[np.int64, np.int64]:
    """D9: the rival `seat` would offer a truce to and the price it names, or (-1, 0).

    A rival qualifies with peace_min_units fighting units near the seat's cities
    and no truce, no forbid, no victory the truce would shield, and no offer it
    declined in the last retry_turns. The price is the rival's ask as the seat reads
    it (-truce_worth with the seat's own values) × offer_margin_pct, at least
    truce_price; the seat offers it only when it can pay and the truce is worth that
    much to it. Among the rivals, the largest worth over price wins (ties: the
    lowest seat)."""
    best = np.int64(-1)
    best_price = np.int64(0)
    best_gain = np.int64(-1)
    for x in range(st.n_seats[0]):
        if x == seat or not st.seat_alive[x] or st.truce_turns[seat, x] > 0 or \
                forbidden_mechanic(st, x, np.int64(M_TRUCE)) or shields_victory(st, tb, ai, x):
            continue
        f = front(st, tb, distance, seat, x, np.int64(ai.peace_threat_radius))
        if f[B_UNITS_NEAR_A] < ai.peace_min_units:
            continue
        _took, _lost, declined = war_record(st, seat, x, st.turn[0] - ai.retry_turns)
        if declined:
            continue
        worth = truce_worth(st, tb, ai, distance, seat, x)
        ask = -truce_worth(st, tb, ai, distance, x, seat)
        price = max(ask * ai.offer_margin_pct // PERCENT, np.int64(tb.truce_price))
        if price <= worth and price <= st.seat_gold[seat] and worth - price > best_gain:
            best, best_price, best_gain = x, price, worth - price
    return best, best_price


@njit
def ai_diplomacy(st: State, tb: TableArrays, ai: AIRecord, board: Board, seat: np.int64) -> None:
    """Join or refresh a pact against a seat whose dominance counter runs or that
    announced the Observatory (C: Diplomacy); offer a truce when one is worth it to
    the seat, which the rival asked answers by its own reading (D9)."""
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
        if not threat or forbidden_mechanic(st, seat, np.int64(M_PACT)):
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
    if forbidden_mechanic(st, seat, np.int64(M_TRUCE)):
        return
    other, price = truce_offer(st, tb, ai, board.distance, seat)
    if other >= 0:
        offer_truce(st, tb, other, seat, price,
                    accepts_truce(st, tb, board.distance, other, seat, price))


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def from_log_pact(st: State, slot: np.int64) -> None:
    """Log the founding of the pact in `slot` (EV_PACT)."""
    log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_PACT), st.pact_target[slot],
              np.int64(-1), np.int64(-1),
              slot, np.int64(0), np.int64(0))

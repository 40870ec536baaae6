"""What the AI sees around it (C: AI, T10, D8): threats to its cities, what rival cities are worth.

Hostile means a side the seat may fight (V07: no truce or pact; bandits and
villages always, V06). A city's threat is the attack strength of hostile
fighting units within threat_radius; an intruder is a hostile fighting unit (or
a bandit) within defend_radius. A city's worth to an attacker counts its
population, a capital and the cities its fall would pass on (V08), its
buildings, a revolt (V11: an open target), the score it carries under the T13
formula (read from the public score, T10; more so in the last part of the
match), its owner's lead by score, its owner's running dominance counter (V18),
an announced Observatory (V16) and an owner that could announce one. The war
target is the hostile city of the best worth over distance. Every weight is the
seat's own AI parameter set (`ai`: tb.ai[personality], `[ai.defence]`,
`[ai.war]`, `[ai.score]`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from sim.jit import njit
from sim.kernels.rules.combat import may_attack_owner
from sim.kernels.rules.units import is_military
from sim.rules.codes import BANDIT, DISC_SIZES, FAR, NEUTRAL, OK, PERCENT, UNSET, W_MILITARY

if TYPE_CHECKING:
    from sim.rules.record import AIRecord, TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit  # callers pass codes as np.int64: one compile (sim.jit)
def hostile_owner(st: State, seat: np.int64, owner: np.int64) -> bool:
    """A side `seat` may fight: bandits, villages, and seats without truce or pact (V07)."""
    return may_attack_owner(st, seat, owner) == OK


@njit(inline='always')  # a thin level: see sim.jit
def plan_of(st: State, seat: np.int64) -> np.int64:
    """The personality index whose AI values `seat` plays by: State.seat_plan, or
    its own seat_personality while the plan is -1 (no lookahead has chosen)."""
    plan = st.seat_plan[seat]
    return st.seat_personality[seat] if plan < 0 else plan


@njit
def city_threat(st: State, tb: TableArrays, ai: AIRecord, board: Board, seat: np.int64,
                city: np.int64) -> np.int64:
    """Attack strength of hostile fighting units within threat_radius of `city`."""
    home = st.city_tile[city]
    total = np.int64(0)
    for u in range(st.n_units[0]):
        t = st.unit_tile[u]
        if t < 0 or board.distance[home, t] > ai.threat_radius:
            continue
        owner = st.unit_owner[u]
        if owner == seat or owner == BANDIT:
            continue
        if not is_military(tb, st.unit_type[u]) or not hostile_owner(st, seat, owner):
            continue
        total += tb.unit_attack[st.unit_type[u]]
    return total


@njit
def observatory_queued_by(st: State, tb: TableArrays, seat: np.int64) -> np.int64:
    """City where `seat` has the science building queued, or -1 (announced: V16)."""
    code = tb.unit_cost.shape[0] + tb.observatory
    for c in range(st.n_cities[0]):
        if st.city_tile[c] >= 0 and st.city_owner[c] == seat:
            for k in range(st.city_queue.shape[1]):
                if st.city_queue[c, k] == code:
                    return c
    return -1


@njit(inline='always')  # numba-inlined where called: no array references per call
def nth_unit(live: np.ndarray, n_seen: np.int64, i: np.int64) -> np.int64:
    """The i-th unit slot of a scan over `live` (rules.units.live_units, taken when n_units was
    `n_seen`) then every slot from n_seen on: the order of a scan of every slot,
    with the slots that were empty when the list was taken left out (a unit that
    left the board never comes back). Scan length: live.shape[0] + n_units - n_seen."""
    return live[i] if i < live.shape[0] else n_seen + i - live.shape[0]


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def intruder_of(st: State, tb: TableArrays, ai: AIRecord, distance: np.ndarray, seat: np.int64,
                city: np.int64, live: np.ndarray, n_seen: np.int64) -> np.int64:
    """Tile of the first hostile fighting unit (or bandit, lowest ID first) within
    defend_radius of the seat's `city`, or -1. distance: (T, T) board.distance;
    live, n_seen: the units to look at (nth_unit)."""
    home = st.city_tile[city]
    for i in range(live.shape[0] + st.n_units[0] - n_seen):
        u = nth_unit(live, n_seen, i)
        t = st.unit_tile[u]
        if t < 0 or distance[home, t] > ai.defend_radius:
            continue
        owner = st.unit_owner[u]
        if owner == seat:
            continue
        if owner == BANDIT or (is_military(tb, st.unit_type[u]) and
                               hostile_owner(st, seat, owner)):
            return t
    return -1


class Sight(NamedTuple):
    """What a seat's units see this turn, taken once by military.ai_units for its unit
    orders (the arrays travel together; the last two are filled in as units look).

    mine: (N,) int64 the seat's units on the board when `live` was taken, ascending
    (military.own_units); live: (N,) int64 rules.units.live_units, taken when
    st.n_units was `n_seen` (int64): the units an intruder may be (nth_unit);
    score: (S,) int64 the seats' scores (T10); alarm: (C,) int64 each city's
    intruder tile, UNSET while not looked up (intruder_near); answered: (C,) int64
    the units answering each city's intruder.
    """

    mine: np.ndarray
    live: np.ndarray
    n_seen: np.int64
    score: np.ndarray
    alarm: np.ndarray
    answered: np.ndarray


@njit(inline='always')  # numba-inlined in unit_orders, its one caller: called for every unit,
# it would count references to the per-turn arrays it is handed on every call
def intruder_near(st: State, tb: TableArrays, ai: AIRecord, distance: np.ndarray,
                  seat: np.int64, unit: np.int64, sight: Sight) -> np.int64:
    """Tile of a hostile fighting unit within defend_radius of one of the seat's
    cities that is within defend_reach steps of `unit`, or -1; at most `defenders`
    units answer one city. `sight.alarm` (C,) caches each city's intruder tile (UNSET:
    not looked up yet) and is refreshed when the intruder left; `sight.answered` (C,)
    counts responders. distance: (T, T) board.distance; sight.live, sight.n_seen: the
    units (nth_unit)."""
    alarm = sight.alarm
    answered = sight.answered
    here = st.unit_tile[unit]
    for c in range(st.n_cities[0]):
        home = st.city_tile[c]
        if home < 0 or st.city_owner[c] != seat or distance[here, home] > ai.defend_reach \
                or answered[c] >= ai.defenders:
            continue
        t = alarm[c]
        if t >= 0:
            x = st.tile_unit[t]
            if x < 0 or st.unit_owner[x] == seat:
                t = UNSET
        if t == UNSET:
            t = intruder_of(st, tb, ai, distance, seat, c, sight.live, sight.n_seen)
            alarm[c] = t
        if t >= 0:
            answered[c] += 1
            return t
    return -1


@njit
def urgent_target(st: State, tb: TableArrays, city: np.int64) -> bool:
    """A city whose owner threatens to win: Observatory queued there (V16) or a
    running dominance counter at the pact trigger (V18)."""
    owner = st.city_owner[city]
    if owner < 0:
        return False
    if st.seat_dominance[owner] >= tb.pact_dominance_trigger:
        return True
    code = tb.unit_cost.shape[0] + tb.observatory
    for k in range(st.city_queue.shape[1]):
        if st.city_queue[city, k] == code:
            return True
    return False


@njit(inline='always')  # a thin level: see sim.jit
def in_score_phase(st: State, ai: AIRecord) -> bool:
    """The last score_phase_pct % of the match's turns: the seat plays for the turn
    limit's score (V19, T13; D6: a fraction of the length)."""
    return st.turn[0] * PERCENT >= st.last_turn[0] * (PERCENT - ai.score_phase_pct)


@njit
def city_score_points(st: State, tb: TableArrays, city: np.int64) -> np.int64:
    """The score `city` carries under T13: the city, its population and its ring's
    tiles (T01, T03; overlap and the board's edge ignored)."""
    radius = tb.grown_ring_radius if st.city_pop[city] >= tb.grown_ring_population \
        else tb.ring_radius
    return tb.w_city + st.city_pop[city] * tb.w_population + DISC_SIZES[radius] * tb.w_region


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def score_lead(st: State, score: np.ndarray, owner: np.int64) -> np.int64:
    """How far `owner`'s score (T10: public) is ahead of the best other standing seat;
    0 when it does not lead. score: (S,) current scores."""
    if owner < 0:
        return 0
    best = -FAR
    for s in range(st.n_seats[0]):
        if s != owner and st.seat_alive[s]:
            best = max(best, score[s])
    return max(score[owner] - best, np.int64(0))


@njit
def city_value(st: State, tb: TableArrays, ai: AIRecord, distance: np.ndarray, seat: np.int64,
               city: np.int64, score: np.ndarray) -> np.int64:
    """How much `seat` wants to take `city`: population, capital (capital_finishing_factor
    times as much while the seat's own dominance counter runs: a capital fall can end a
    rival, V08/V10), buildings, revolt (V11), the score it carries (T13; more in the score
    phase), its owner's score lead, running dominance counter (V18), queued Observatory
    (V16) or the Observatory's tech known (prosperity_value, on its capital).
    score: (S,) the seats' current scores (T10); distance: (T, T) board.distance."""
    owner = st.city_owner[city]
    v = ai.city_base_value + st.city_pop[city] * ai.city_pop_value
    if owner == NEUTRAL:
        return v + ai.village_value
    if st.city_capital[city]:
        v += ai.capital_value * (ai.capital_finishing_factor if st.seat_dominance[seat] > 0
                                 else 1)
        # V08: the cities that would pass on with it
        home = st.city_tile[city]
        for c in range(st.n_cities[0]):
            if c != city and st.city_tile[c] >= 0 and st.city_owner[c] == owner and \
                    distance[home, st.city_tile[c]] <= tb.capital_fall_radius:
                v += (ai.city_base_value + st.city_pop[c] * ai.city_pop_value) * \
                    ai.transfer_value_pct // PERCENT
        if tb.observatory_tech >= 0 and st.seat_techs[owner, tb.observatory_tech]:
            v += ai.prosperity_value
    for b in range(tb.building_cost.shape[0]):
        if st.city_buildings[city, b]:
            v += ai.city_building_value + tb.building_score_points[b]
    points = city_score_points(st, tb, city)
    v += points * (ai.score_phase_value_pct if in_score_phase(st, ai) else ai.score_value_pct) \
        // PERCENT
    v += score_lead(st, score, owner) * ai.lead_value * st.turn[0] // \
        (max(st.last_turn[0], np.int64(1)) * ai.lead_scale)
    v += st.seat_dominance[owner] * ai.dominance_value
    code = tb.unit_cost.shape[0] + tb.observatory
    for k in range(st.city_queue.shape[1]):
        if st.city_queue[city, k] == code:
            v += ai.observatory_value
    if st.city_revolt[city] > 0:
        v += ai.revolt_value
    return v


@njit
def war_target(st: State, tb: TableArrays, ai: AIRecord, distance: np.ndarray, seat: np.int64,
               score: np.ndarray, live: np.ndarray) -> np.int64:
    """The hostile city most worth marching on, or -1: its value over its distance,
    the nearer of its distance from the seat's cities and the army's mean distance
    to it (so a marching army keeps its target). While the seat's own dominance
    counter runs (V18) neutral villages are left alone: only seats' cities matter.
    score: (S,) the seats' current scores (T10); distance: (T, T) board.distance;
    live: rules.units.live_units, taken with nothing moved since."""
    tiles = np.empty(live.shape[0], dtype=np.int64)
    n_army = np.int64(0)
    for u in live:
        if st.unit_tile[u] >= 0 and st.unit_owner[u] == seat and is_military(tb, st.unit_type[u]):
            tiles[n_army] = st.unit_tile[u]
            n_army += 1
    homes = np.empty(st.n_cities[0], dtype=np.int64)  # the seat's city tiles
    n_homes = np.int64(0)
    for h in range(st.n_cities[0]):
        if st.city_tile[h] >= 0 and st.city_owner[h] == seat:
            homes[n_homes] = st.city_tile[h]
            n_homes += 1
    finishing = st.seat_dominance[seat] > 0
    best = np.int64(-1)
    best_v = -FAR
    for c in range(st.n_cities[0]):
        t = st.city_tile[c]
        if t < 0 or not hostile_owner(st, seat, st.city_owner[c]):
            continue
        if st.city_owner[c] == NEUTRAL and finishing:
            continue
        near = FAR
        for i in range(n_homes):
            near = min(near, distance[t, homes[i]])
        if n_army > 0:
            total = np.int64(0)
            for k in range(n_army):
                total += distance[t, tiles[k]]
            near = min(near, total // n_army)
        # (base + military weight) / base: a warlike seat values every target more
        v = city_value(st, tb, ai, distance, seat, c, score) * \
            (ai.target_military_base + ai.weights[W_MILITARY]) * ai.target_value_scale // \
            (ai.target_military_base * (ai.target_distance_offset + near))
        if v > best_v:
            best, best_v = c, v
    return best


@njit
def observatory_alarm(st: State, tb: TableArrays, ai: AIRecord, distance: np.ndarray,
                      seat: np.int64, live: np.ndarray) -> np.int64:
    """A rival's city with the Observatory announced (V16) within observatory_reach
    steps of one of the seat's cities or units, that the seat may attack; or -1.
    Such a city is assaulted at once: it wins the match on completion.
    distance: (T, T) board.distance; live: rules.units.live_units, taken with nothing
    moved since."""
    for x in range(st.n_seats[0]):
        if x == seat or not st.seat_alive[x] or not hostile_owner(st, seat, x):
            continue
        c = observatory_queued_by(st, tb, x)
        if c < 0:
            continue
        t = st.city_tile[c]
        for h in range(st.n_cities[0]):
            if st.city_tile[h] >= 0 and st.city_owner[h] == seat and \
                    distance[t, st.city_tile[h]] <= ai.observatory_reach:
                return c
        for u in live:
            if st.unit_tile[u] >= 0 and st.unit_owner[u] == seat and \
                    distance[t, st.unit_tile[u]] <= ai.observatory_reach and \
                    is_military(tb, st.unit_type[u]):
                return c
    return -1


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def nearest_rival_city(st: State, distance: np.ndarray, seat: np.int64,
                       tile: np.int64) -> np.int64:
    """The city of another standing seat nearest `tile` that `seat` may attack, or -1.
    distance: (T, T) board.distance."""
    best = np.int64(-1)
    best_d = FAR
    for c in range(st.n_cities[0]):
        t = st.city_tile[c]
        if t < 0 or st.city_owner[c] < 0 or not hostile_owner(st, seat, st.city_owner[c]):
            continue
        if distance[tile, t] < best_d:
            best, best_d = c, distance[tile, t]
    return best


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def village_target(st: State, tb: TableArrays, ai: AIRecord, board: Board, seat: np.int64,
                   army: np.int64) -> np.int64:
    """In peace: the neutral village nearest the seat's cities within
    village_search_radius steps (B7), once the army has village_min_army units; or -1."""
    target = np.int64(-1)
    if army < ai.village_min_army:
        return target
    best_d = ai.village_search_radius + 1
    for c in range(st.n_cities[0]):
        t = st.city_tile[c]
        if t < 0 or st.city_owner[c] != NEUTRAL:
            continue
        for h in range(st.n_cities[0]):
            if st.city_tile[h] >= 0 and st.city_owner[h] == seat and \
                    board.distance[t, st.city_tile[h]] < best_d:
                target, best_d = c, board.distance[t, st.city_tile[h]]
    return target


@njit(inline='always')  # a thin level: see sim.jit
def war_time(st: State, ai: AIRecord) -> bool:
    """From war_turn_pct of the match's turns on, every army marches (D6: AI timings
    are fractions of the match length, never absolute turns)."""
    return st.turn[0] * PERCENT >= st.last_turn[0] * ai.war_turn_pct

"""The AI's units (C: Units, C: Combat, C: AI): orders, attacks, sieges, the war.

Settlers go first (sim.kernels.ai.sites), then ranged units, then melee units,
so these can enter what the ranged ones brought to 0 HP (V05). A unit captures,
attacks when the combat preview (T16) favours it (`[ai.combat]`), defends a
city with an intruder, marches on the war target, clears a camp or garrisons.
The army marches in formation on one war target (sim.kernels.ai.threats) and
assaults together once mustered (`[ai.war]`); a target that threatens to win is
assaulted at once. Next to the target the melee units strike together and keep
one fresh to enter; units too hurt to survive a city's retaliation (units never
heal) leave the siege ring. While its own dominance counter runs (V18) a seat
sends each unit at the nearest rival city. Every action is a rule kernel a
scenario command uses (move, attack, enter, found).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from sim.jit import njit
from sim.kernels.ai.paths import step_away, step_toward
from sim.kernels.ai.sites import settler_orders
from sim.kernels.ai.threats import (
    Sight,
    city_value,
    intruder_near,
    nearest_rival_city,
    urgent_target,
    village_target,
    war_time,
)
from sim.kernels.rules.capture import capture_city, enter_check_at
from sim.kernels.rules.combat import (
    attack_outcome_at,
    city_defence_strength,
    resolve_attack_at,
)
from sim.kernels.rules.seats import cities_held
from sim.kernels.rules.standings import regions
from sim.kernels.rules.units import is_military
from sim.rules.codes import (
    DISC_SIZES,
    FAR,
    N_DIRECTIONS,
    NEUTRAL,
    OK,
    PERCENT,
    TARGET_CITY,
    UNSET,
    W_MILITARY,
)

if TYPE_CHECKING:
    from sim.rules.record import AIRecord, TableArrays
    from sim.world.board import Board
    from sim.world.state import State


class WarPlan(NamedTuple):
    """The seat's war this turn, as ai_units settles it before its unit orders.

    target: the war target city (threats.war_target, the alarm city or a village),
    -1 for none; hold: steps short of the target the army stops until the assault,
    so it arrives as one wave; assault: whether the army strikes the target now;
    alarm_city: a rival's announced Observatory (V16) in reach, or -1; finishing:
    each unit marches on its nearest rival city instead (the seat's own V18 counter
    runs, ai.finish_nearest). Built with np.int64 / np.bool_ values (sim.jit).
    """

    target: np.int64
    hold: np.int64
    assault: bool
    alarm_city: np.int64
    finishing: bool
    guards: np.ndarray


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def sort_ascending(values: np.ndarray, n: np.int64) -> None:
    """Sort values[:n] ascending in place (an insertion sort: n is an army's size). Not
    numba's ndarray.sort, whose quicksort took 1.6 s of a cold compile (sim.jit);
    sorted values are the same whatever the algorithm."""
    for i in range(1, n):
        v = values[i]
        j = i - 1
        while j >= 0 and values[j] > v:
            values[j + 1] = values[j]
            j -= 1
        values[j + 1] = v


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def home_guards(st: State, tb: TableArrays, ai: AIRecord, distance: np.ndarray,
                seat: np.int64, mine: np.ndarray) -> np.ndarray:
    """(home_guard,) int64: the seat's fighting units nearest its capital (ties to the
    lowest ID; -1 pads), which hold it instead of marching, for the first guard_pct %
    of the match's turns (D6: early defence); empty later or without a capital.
    mine: (N,) own_units."""
    guards = np.full(ai.home_guard, -1, dtype=np.int64)
    capital = st.seat_capital[seat]
    if capital < 0 or st.city_tile[capital] < 0 or \
            st.turn[0] * PERCENT >= st.last_turn[0] * ai.guard_pct:
        return guards[:0]
    home = st.city_tile[capital]
    best = np.full(ai.home_guard, FAR, dtype=np.int64)
    for u in mine:
        t = st.unit_tile[u]
        if t < 0 or not is_military(tb, st.unit_type[u]):
            continue
        d = distance[t, home]
        for k in range(ai.home_guard):   # insertion into the nearest so far
            if d < best[k]:
                for j in range(ai.home_guard - 1, k, -1):
                    best[j], guards[j] = best[j - 1], guards[j - 1]
                best[k], guards[k] = d, u
                break
    return guards


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def own_units(st: State, seat: np.int64, live: np.ndarray) -> np.ndarray:
    """(N,) int64: IDs of the seat's units on the board, ascending. live:
    rules.units.live_units (every unit on the board, ascending)."""
    mine = np.empty(live.shape[0], dtype=np.int64)
    n = np.int64(0)
    for u in live:
        if st.unit_tile[u] >= 0 and st.unit_owner[u] == seat:
            mine[n] = u
            n += 1
    return mine[:n]


@njit(inline='always')  # numba-inlined where called: no array references per call
def strike_in_reach(st: State, tb: TableArrays, disc: np.ndarray, unit: np.int64,
                    seat: np.int64) -> bool:
    """Whether try_attack has a tile to weigh: a city not the seat's, or another side's
    unit, within the unit's reach (the tiles its loop skips are skipped here too).
    Checked before calling it, so a unit with nothing in reach costs one scan.
    disc: (T, DISC) board.disc."""
    here = st.unit_tile[unit]
    reach = max(tb.unit_range[st.unit_type[unit]], 1)
    for k in range(1, DISC_SIZES[reach]):
        t = disc[here, k]
        if t < 0:
            continue
        site = st.tile_site[t]
        if site >= 0:
            if st.city_owner[site] != seat:
                return True
        elif st.tile_unit[t] >= 0 and st.unit_owner[st.tile_unit[t]] != seat:
            return True
    return False


@njit(inline='always')  # numba-inlined where called: no array references per call
def site_beside(st: State, neighbours: np.ndarray, unit: np.int64) -> bool:
    """Whether a city or village stands next to `unit`: try_enter looks at nothing else.
    neighbours: (T, 6) board.neighbours."""
    here = st.unit_tile[unit]
    for k in range(N_DIRECTIONS):
        m = neighbours[here, k]
        if m >= 0 and st.tile_site[m] >= 0:
            return True
    return False


@njit
def try_attack(st: State, tb: TableArrays, ai: AIRecord, distance: np.ndarray,
               disc: np.ndarray, unit: np.int64, seat: np.int64, assault: bool,
               score: np.ndarray) -> bool:
    """Attack the best target in reach when the combat preview favours it (T16).

    An exchange is worth: damage dealt minus damage taken, the latter weighed
    down by the military weight (a conqueror accepts even trades), plus a bonus
    for a kill and for hitting a city the seat values. A melee unit strikes a
    city only in an assault (enough of the army gathered) or to bring it to 0 HP.
    ai: the seat's AI parameter set; score: (S,) the seats' scores (T10).
    distance: (T, T) board.distance; disc: (T, DISC) board.disc (the board's arrays
    one by one: numba counts the references to each array a kernel is handed).
    """
    here = st.unit_tile[unit]
    utype = st.unit_type[unit]
    reach = max(tb.unit_range[utype], 1)
    best = np.int64(-1)
    best_v = -1 if ai.weights[W_MILITARY] >= ai.reckless_military else 0
    for k in range(1, DISC_SIZES[reach]):
        t = disc[here, k]
        if t < 0:
            continue
        site = st.tile_site[t]
        if site >= 0:
            if st.city_owner[site] == seat:
                continue
        elif st.tile_unit[t] < 0 or st.unit_owner[st.tile_unit[t]] == seat:
            continue   # nothing to strike, or the seat's own (attack_outcome refuses both)
        why, kind, tid, to_target, to_attacker = attack_outcome_at(st, tb, distance, unit, t,
                                                                   seat)
        if why != OK:
            continue
        if to_attacker >= st.unit_hp[unit]:
            continue
        if kind == TARGET_CITY:
            kill = to_target >= st.city_hp[tid]
            if to_attacker > 0 and not assault and not kill:
                continue
            worth = city_value(st, tb, ai, distance, seat, tid, score)
            v = to_target * (ai.strike_city_value + worth // ai.strike_city_value_divisor) - \
                to_attacker * ai.strike_city_cost
            if kill:
                v += ai.strike_zero_value
        else:
            v = to_target * ai.strike_unit_value - to_attacker * \
                (ai.strike_unit_cost_base - ai.weights[W_MILITARY]) // ai.strike_unit_cost_divisor
            if to_target >= st.unit_hp[tid]:
                v += ai.strike_kill_value
        if v > best_v:
            best, best_v = t, v
    if best >= 0:
        resolve_attack_at(st, tb, distance, unit, best, seat)
        return True
    return False


@njit(inline='always')  # numba-inlined where called: no array references per call
def enter_target(st: State, tb: TableArrays, neighbours: np.ndarray, distance: np.ndarray,
                 unit: np.int64, seat: np.int64) -> np.int64:
    """The first city (direction order) next to the unit that it may enter (V05: hostile,
    at 0 HP), or -1. neighbours: (T, 6) board.neighbours; distance: (T, T)."""
    here = st.unit_tile[unit]
    for k in range(N_DIRECTIONS):
        m = neighbours[here, k]
        if m < 0 or st.tile_site[m] < 0:
            continue
        c = st.tile_site[m]
        if enter_check_at(st, tb, distance, unit, c, seat) == OK:
            return c
    return -1


@njit(inline='always')  # a thin level: one fewer in the call tree (sim.jit)
def try_enter(st: State, tb: TableArrays, board: Board, unit: np.int64, seat: np.int64) -> bool:
    """Capture a hostile city at 0 HP next to the unit (V05)."""
    c = enter_target(st, tb, board.neighbours, board.distance, unit, seat)
    if c >= 0:
        capture_city(st, tb, board, unit, c, seat)
        return True
    return False


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def spent(st: State, tb: TableArrays, u: np.int64, city: np.int64) -> bool:
    """A melee unit that could not strike `city` without dying of its retaliation
    (units never heal): it leaves the siege ring to the others and goes home."""
    utype = st.unit_type[u]
    if tb.unit_range[utype] > 0 or not tb.city_retaliation:
        return False
    # the attack strength attack_outcome uses against a city (T16)
    a = max(tb.unit_attack[utype] * PERCENT * tb.unit_city_attack_pct[utype] // PERCENT,
            np.int64(1))
    d = city_defence_strength(st, tb, city)
    return max(tb.min_damage, tb.damage_scale * d // (a + d)) >= st.unit_hp[u]


@njit
def unit_orders(st: State, tb: TableArrays, ai: AIRecord, board: Board, path: np.ndarray,
                seat: np.int64, war: WarPlan, sight: Sight, ranged: bool) -> None:
    """The seat's fighting units of one phase (`ranged` ones, or melee ones), in ID order
    (`sight.mine`, then any slot from sight.n_seen on: see ai_units). Each one captures,
    attacks, else defends a threatened city, marches on the war target (`war.target`
    >= 0, or with `war.finishing` the nearest rival city; no closer than `war.hold`
    steps until the assault, so the army arrives as one wave), clears a camp, or
    garrisons. A melee unit next to the target in an assault waits for `siege`, which
    orders the strikes together. sight.alarm, sight.answered: (C,) see
    threats.intruder_near. A unit whose target is `war.alarm_city`, a rival's announced
    Observatory (V16), marches before it strikes anything else on the way while out of
    reach of it, so the army reaches the city in time. sight.live:
    rules.units.live_units as of sight.n_seen (the units an intruder may be).
    One call per phase, not per unit: numba counts the references to each
    array a kernel is handed, on every call."""
    neighbours = board.neighbours
    distance = board.distance
    disc = board.disc
    mine = sight.mine
    n_seen = sight.n_seen
    score = sight.score
    target = war.target
    assault = war.assault
    for i in range(mine.shape[0] + st.n_units[0] - n_seen):
        u = mine[i] if i < mine.shape[0] else n_seen + i - mine.shape[0]
        if st.finished[0]:
            return
        if st.unit_tile[u] < 0 or st.unit_owner[u] != seat:
            continue
        utype = st.unit_type[u]
        if not is_military(tb, utype) or (tb.unit_range[utype] > 0) != ranged:
            continue
        own = target
        if war.finishing:
            own = nearest_rival_city(st, distance, seat, st.unit_tile[u])
        guard = False
        for g in war.guards:
            guard = guard or g == u
        if guard:   # early defence: it holds the capital, striking only what comes in reach
            own = np.int64(-1)
        straight = war.alarm_city >= 0 and own == war.alarm_city
        reach = tb.unit_range[utype] if tb.unit_range[utype] > 0 else 1
        detour = not straight or distance[st.unit_tile[u], st.city_tile[own]] <= reach
        enter = np.int64(-1)  # a city to enter (V05): nothing else follows an entry
        if site_beside(st, neighbours, u):
            enter = enter_target(st, tb, neighbours, distance, u, seat)
        if enter < 0 and not (besieging(st, tb, distance, u, own, assault) or
                              (detour and strike_in_reach(st, tb, disc, u, seat) and
                               try_attack(st, tb, ai, distance, disc, u, seat, assault,
                                          score))):
            goal = intruder_near(st, tb, ai, distance, seat, u, sight)
            # where the unit stood and its moves before it walks: a unit that did not
            # move (every move costs one) sees the very position it saw above
            start, start_moves = st.unit_tile[u], st.unit_moves_left[u]
            stop = reach
            if guard:
                goal, stop = st.city_tile[st.seat_capital[seat]], np.int64(0)
            if goal < 0 and own >= 0:
                goal = st.city_tile[own]
                if not assault:
                    stop = max(reach, war.hold)
                if spent(st, tb, u, own):
                    stop = max(stop, ai.muster_radius)
                    if distance[st.unit_tile[u], goal] < stop:
                        step_away(st, tb, neighbours, distance, u, goal, seat, stop)
            if goal < 0:
                stop = np.int64(0)
                best_d = ai.camp_search_radius + 1
                for m in range(st.camp_tile.shape[0]):
                    t = st.camp_tile[m]
                    if t >= 0 and distance[st.unit_tile[u], t] < best_d:
                        goal, best_d = t, distance[st.unit_tile[u], t]
            if goal < 0:
                # garrison: the nearest own city without a unit on it
                best_d = FAR
                for c in range(st.n_cities[0]):
                    t = st.city_tile[c]
                    if t >= 0 and st.city_owner[c] == seat and (st.tile_unit[t] < 0 or
                                                                 st.tile_unit[t] == u):
                        d = distance[st.unit_tile[u], t]
                        if d < best_d:
                            goal, best_d = t, d
            if goal >= 0:
                step_toward(st, tb, neighbours, distance, path, u, goal, seat, stop)
                # unmoved, after a detour check: no city to enter, no siege and no
                # strike the preview favours (try_attack changed nothing), as above
                moved = st.unit_tile[u] != start or st.unit_moves_left[u] != start_moves
                if st.unit_moves_left[u] > 0 and (moved or not detour):
                    if site_beside(st, neighbours, u):
                        enter = enter_target(st, tb, neighbours, distance, u, seat)
                    if enter < 0 and not besieging(st, tb, distance, u, own, assault) and \
                            strike_in_reach(st, tb, disc, u, seat):
                        try_attack(st, tb, ai, distance, disc, u, seat, assault, score)
        if enter >= 0:
            capture_city(st, tb, board, u, enter, seat)


@njit(inline='always')  # numba-inlined where called: no array references per call
def besieging(st: State, tb: TableArrays, distance: np.ndarray, u: np.int64, target: np.int64,
              assault: bool) -> bool:
    """A melee unit with moves left next to the assaulted target city (HP above 0).
    distance: (T, T) board.distance."""
    if not assault or target < 0 or st.city_hp[target] <= 0 or st.unit_moves_left[u] <= 0:
        return False
    utype = st.unit_type[u]
    return tb.unit_range[utype] == 0 and distance[st.unit_tile[u], st.city_tile[target]] == 1


@njit
def siege(st: State, tb: TableArrays, ai: AIRecord, board: Board, seat: np.int64,
          target: np.int64, score: np.ndarray) -> None:
    """The melee units next to the target strike it one after another, strongest blow
    first, while at least one other stays fresh to enter once it is at 0 HP (V05);
    the last one enters. Units that could not strike fight whatever else is in reach."""
    neighbours = board.neighbours
    distance = board.distance
    disc = board.disc
    tt = st.city_tile[target]
    while st.city_hp[target] > 0 and st.city_owner[target] != seat:
        fresh = np.int64(0)
        best = np.int64(-1)
        best_d = np.int64(0)
        for k in range(N_DIRECTIONS):
            m = neighbours[tt, k]
            if m < 0:
                continue
            u = st.tile_unit[m]
            if u < 0 or st.unit_owner[u] != seat or st.unit_moves_left[u] <= 0 or \
                    tb.unit_range[st.unit_type[u]] > 0 or not is_military(tb, st.unit_type[u]):
                continue
            fresh += 1
            why, _kind, _tid, to_target, to_attacker = attack_outcome_at(st, tb, distance, u,
                                                                         tt, seat)
            if why == OK and to_attacker < st.unit_hp[u] and to_target > best_d:
                best, best_d = u, to_target
        # one strikes, one more stays fresh to enter
        if fresh < 2 or best < 0:
            break
        resolve_attack_at(st, tb, distance, best, tt, seat)
    for k in range(N_DIRECTIONS):
        m = neighbours[tt, k]
        if m < 0:
            continue
        u = st.tile_unit[m]
        if u >= 0 and st.unit_owner[u] == seat and st.unit_moves_left[u] > 0 and \
                is_military(tb, st.unit_type[u]):
            if not (site_beside(st, neighbours, u) and try_enter(st, tb, board, u, seat)) \
                    and strike_in_reach(st, tb, disc, u, seat):
                try_attack(st, tb, ai, distance, disc, u, seat, np.bool_(False), score)
            if st.finished[0]:
                return


@njit
def ai_units(st: State, tb: TableArrays, ai: AIRecord, board: Board, path: np.ndarray,
             seat: np.int64, army: np.int64, tile_city: np.ndarray, target: np.int64,
             alarm_city: np.int64, score: np.ndarray, live: np.ndarray,
             n_seen: np.int64) -> None:
    """Settlers, then ranged units, then melee units (so these can enter what the
    ranged ones brought to 0 HP), then a last capture pass.

    The army marches on the war target (`target`, threats.war_target) in formation:
    the muster_units-th nearest unit is the front and advances one step a turn
    (units ahead of it wait, the others close up with their full moves); the
    assault starts when the front is within muster_radius. A target that
    threatens to win (Observatory, dominance counter, the seat's own running
    counter) is assaulted at once, as are a neutral village and a city in revolt
    (V11: an open target); a rival's announced Observatory in reach
    (`alarm_city`, threats.observatory_alarm) overrides every other target.
    Before war_turn_pct only a seat with a large army goes to war (early_war_*);
    otherwise it takes a neutral village near home. With dominance_hold, a seat
    whose V18 counter runs marches on nothing: every unit defends or garrisons
    (a lost city would reset the counter). score: (S,) the seats' scores; live:
    rules.units.live_units, taken when st.n_units was `n_seen`.
    """
    neighbours = board.neighbours
    distance = board.distance
    n_cities = cities_held(st, seat)
    if alarm_city >= 0:
        target = alarm_city
    holding = ai.dominance_hold and st.seat_dominance[seat] > 0 and alarm_city < 0
    if holding:
        target = np.int64(-1)   # V18 counter running: hold every city, strike only what comes near
    urgent = target >= 0 and (urgent_target(st, tb, target) or st.seat_dominance[seat] > 0)
    # the seat's units alive when `live` was taken (units die but never come back; a
    # slot spawned later has a higher ID): each loop below visits them, then any newer
    # slot, in ID order, as a scan of every slot would
    mine = own_units(st, seat, live)
    guards = home_guards(st, tb, ai, distance, seat, mine)
    # early, only the field army (without the capital's guards) decides a war
    aggressive = urgent or war_time(st, ai) or \
        army - guards.shape[0] >= n_cities * (ai.early_war_units_per_city +
                                              (PERCENT - ai.weights[W_MILITARY]) //
                                              ai.early_war_weight_step)
    if not aggressive:
        target = village_target(st, tb, ai, board, seat, army)
    assault = urgent or (target >= 0 and (st.city_owner[target] == NEUTRAL or
                                          st.city_revolt[target] > 0))
    hold = np.int64(0)
    if target >= 0 and not assault:
        tt = st.city_tile[target]
        dist = np.empty(army + 1, dtype=np.int64)
        k = np.int64(0)
        for i in range(mine.shape[0] + st.n_units[0] - n_seen):
            u = mine[i] if i < mine.shape[0] else n_seen + i - mine.shape[0]
            t = st.unit_tile[u]
            if t >= 0 and st.unit_owner[u] == seat and is_military(tb, st.unit_type[u]) and \
                    k < dist.shape[0]:
                dist[k] = distance[t, tt]
                k += 1
        if k < max(ai.muster_units, 1):
            target = np.int64(-1)
        else:
            sort_ascending(dist, k)
            front = dist[max(ai.muster_units, 1) - 1]
            assault = front <= ai.muster_radius
            hold = max(front - 1, ai.muster_radius - 1)
    for i in range(mine.shape[0] + st.n_units[0] - n_seen):
        u = mine[i] if i < mine.shape[0] else n_seen + i - mine.shape[0]
        if st.finished[0]:
            return
        if st.unit_tile[u] < 0 or st.unit_owner[u] != seat:
            continue
        if tb.unit_founds_city[st.unit_type[u]]:
            if settler_orders(st, tb, ai, board, path, u, seat, tile_city):
                tile_city = regions(st, tb, board)
    alarm = np.empty(st.n_cities[0], dtype=np.int64)
    alarm[:] = UNSET
    answered = np.empty(st.n_cities[0], dtype=np.int64)
    answered[:] = 0
    finishing = st.seat_dominance[seat] > 0 and ai.finish_nearest and not holding
    if st.seat_dominance[seat] > 0 and not holding:
        # finishing (V18 counter running): one unit per threatened city, the rest march
        answered[:] = max(ai.defenders - 1, 0)
    # np.int64 / np.bool_: one type for each field of the records (sim.jit)
    war = WarPlan(np.int64(target), np.int64(hold), np.bool_(assault), np.int64(alarm_city),
                  np.bool_(finishing), guards)
    sight = Sight(mine, live, np.int64(n_seen), score, alarm, answered)
    for phase in range(2):
        if st.finished[0]:
            return
        unit_orders(st, tb, ai, board, path, seat, war, sight, phase == 0)
    if assault and target >= 0 and not st.finished[0]:
        siege(st, tb, ai, board, seat, target, score)
    zeroed = target >= 0 and st.city_hp[target] == 0 and st.city_owner[target] != seat
    if st.finished[0]:
        return
    for i in range(mine.shape[0] + st.n_units[0] - n_seen):
        u = mine[i] if i < mine.shape[0] else n_seen + i - mine.shape[0]
        if st.finished[0]:
            return
        if st.unit_tile[u] >= 0 and st.unit_owner[u] == seat and st.unit_moves_left[u] > 0 \
                and is_military(tb, st.unit_type[u]):
            if zeroed and st.city_owner[target] != seat and tb.unit_range[st.unit_type[u]] == 0:
                step_toward(st, tb, neighbours, distance, path, u, st.city_tile[target], seat,
                            np.int64(1))
            if site_beside(st, neighbours, u):
                try_enter(st, tb, board, u, seat)

"""Deterministic combat (T16, C: Combat, V07, V11).

`attack_outcome` is both the preview and the resolution: `resolve_attack`
applies exactly what it returns, so the preview can never lie (T16).

Strengths are integers in percent of a point (× PERCENT, sim.rules.codes) so
percentage modifiers stay exact:
  attacker: attack × 100, × city_attack_pct / 100 against a city (siege bonus);
  unit defender: defence × (100 + terrain defence %) / 100 × 100;
  city defender: (defence_base + defence_per_population × pop) — a village's
  village_defence — × (100 + terrain % + building defence %, Walls) / 100,
  then × revolt defence % / 100 while in revolt (V11).
Damage: to the target max(min_damage, damage_scale × A // (A + D)); to a melee
attacker max(min_damage, damage_scale × D // (A + D)); ranged attackers take
none, and a city strikes back only when `city_retaliation` is set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.rules.events import log_event
from sim.kernels.rules.seats import (
    forbidden_mechanic,
    in_pact_together,
    pact_against,
    truce_between,
)
from sim.kernels.rules.units import kill_unit, unit_stat_attack, unit_stat_defence, unit_stat_range
from sim.rules.codes import (
    BANDIT,
    DAMAGE_SPLIT,
    EV_ATTACK,
    M_ATTACK_CITIES,
    OK,
    PERCENT,
    R_ATTACK_OWN,
    R_CANNOT_ATTACK,
    R_CITY_AT_ZERO,
    R_FORBIDDEN,
    R_NO_MOVES,
    R_NO_TARGET,
    R_NO_UNIT,
    R_NOT_YOUR_UNIT,
    R_OUT_OF_RANGE,
    R_PACT,
    R_TRUCE,
    TARGET_CITY,
    TARGET_UNIT,
)

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit
def city_defence_strength(st: State, tb: TableArrays, city: np.int64) -> np.int64:
    """Defence strength ×100 of a city with terrain, Walls and revolt (V11) applied."""
    if st.city_owner[city] < 0:
        base = tb.village_defence
    else:
        base = tb.city_defence_base + tb.city_defence_per_population * st.city_pop[city]
    pct = PERCENT + tb.terrain_defence_pct[st.tile_terrain[st.city_tile[city]]]
    for b in range(tb.building_defence_pct.shape[0]):
        if st.city_buildings[city, b]:
            pct += tb.building_defence_pct[b]
    strength = base * max(pct, 0)
    if st.city_revolt[city] > 0:
        strength = strength * tb.revolt_defence_pct // PERCENT
    return max(strength, np.int64(1))


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def unit_defence_strength(st: State, tb: TableArrays, unit: np.int64) -> np.int64:
    pct = PERCENT + tb.terrain_defence_pct[st.tile_terrain[st.unit_tile[unit]]]
    return max(unit_stat_defence(tb, st.unit_type[unit]) * max(pct, 0), np.int64(1))


@njit
def may_attack_owner(st: State, seat: np.int64, owner: np.int64) -> np.int64:
    """OK, or why `seat` may not attack what `owner` holds (V07): own, truce, pact.

    The pact's target is not protected: our reading, not by a truce with one of the
    pact's members either (a truce could otherwise shield an announced Observatory
    or a running dominance counter from the very pact formed against it).
    """
    if owner == seat:
        return R_ATTACK_OWN
    if owner >= 0 and seat >= 0:
        if truce_between(st, seat, owner) and not pact_against(st, seat, owner):
            return R_TRUCE
        if in_pact_together(st, seat, owner):
            return R_PACT
    return OK


@njit(inline='always')  # a thin level: see sim.jit
def attack_outcome(st: State, tb: TableArrays, board: Board, unit: np.int64, target_tile: np.int64,
                   seat: np.int64):
    """Preview an attack by `unit` (acting for `seat`) on whatever stands on `target_tile`.

    Returns (reason, target_kind, target_id, damage_to_target, damage_to_attacker).
    A tile with a city is a city target (its garrison does not fight);
    otherwise the unit on it. Bandits (seat = BANDIT) never attack cities (V06).
    """
    return attack_outcome_at(st, tb, board.distance, unit, target_tile, seat)


@njit
def attack_outcome_at(st: State, tb: TableArrays, distance: np.ndarray, unit: np.int64,
                      target_tile: np.int64, seat: np.int64):
    """attack_outcome on the board's distance table alone (distance: (T, T)
    board.distance): the AI's hot loops pass the one array they read, not the
    board's six (numba counts the references to every array a kernel is handed)."""
    if unit < 0 or unit >= st.n_units[0] or st.unit_tile[unit] < 0:
        return R_NO_UNIT, 0, -1, 0, 0
    if st.unit_owner[unit] != seat:
        return R_NOT_YOUR_UNIT, 0, -1, 0, 0
    utype = st.unit_type[unit]
    attack = unit_stat_attack(tb, utype)
    if attack <= 0:
        return R_CANNOT_ATTACK, 0, -1, 0, 0
    if st.unit_moves_left[unit] <= 0:
        return R_NO_MOVES, 0, -1, 0, 0
    rng = unit_stat_range(tb, utype)
    reach = rng if rng > 0 else 1
    dist = distance[st.unit_tile[unit], target_tile]
    city = st.tile_site[target_tile]
    target = st.tile_unit[target_tile]
    if city >= 0 and seat != BANDIT:
        kind = TARGET_CITY
        owner = st.city_owner[city]
    elif target >= 0 and target != unit:
        kind = TARGET_UNIT
        owner = st.unit_owner[target]
    else:
        return R_NO_TARGET, 0, -1, 0, 0
    if dist < 1 or dist > reach:
        return R_OUT_OF_RANGE, 0, -1, 0, 0
    why = may_attack_owner(st, seat, owner)
    if why != OK:
        return why, 0, -1, 0, 0
    if kind == TARGET_CITY and forbidden_mechanic(st, seat, np.int64(M_ATTACK_CITIES)):
        return R_FORBIDDEN, 0, -1, 0, 0
    a = attack * PERCENT
    if kind == TARGET_CITY:
        if st.city_hp[city] <= 0:
            return R_CITY_AT_ZERO, 0, -1, 0, 0
        if utype >= 0:
            a = a * tb.unit_city_attack_pct[utype] // PERCENT
        d = city_defence_strength(st, tb, city)
        tid = city
    else:
        d = unit_defence_strength(st, tb, target)
        tid = target
    a = max(a, np.int64(1))
    to_target = max(tb.min_damage, tb.damage_scale * a // (a + d))
    to_attacker = np.int64(0)
    if rng == 0 and (kind == TARGET_UNIT or tb.city_retaliation):
        to_attacker = max(tb.min_damage, tb.damage_scale * d // (a + d))
    return OK, kind, tid, to_target, to_attacker


@njit(inline='always')  # a thin level: see sim.jit
def resolve_attack(st: State, tb: TableArrays, board: Board, unit: np.int64, target_tile: np.int64,
                   seat: np.int64) -> np.int64:
    """Perform the attack `attack_outcome` previews; returns its reason code.

    Units at 0 HP die; a city stops at 0 HP (it is taken by `enter`, V05).
    Attacking ends the attacker's movement for the turn. Every resolved attack is
    logged (EV_ATTACK: sides, target, unit types, both damages).
    """
    return resolve_attack_at(st, tb, board.distance, unit, target_tile, seat)


@njit
def resolve_attack_at(st: State, tb: TableArrays, distance: np.ndarray, unit: np.int64,
                      target_tile: np.int64, seat: np.int64) -> np.int64:
    """resolve_attack on the board's distance table alone (distance: (T, T))."""
    why, kind, tid, to_target, to_attacker = attack_outcome_at(st, tb, distance, unit,
                                                               target_tile, seat)
    if why != OK:
        return why
    if kind == TARGET_CITY:
        log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_ATTACK), seat,
                  st.city_owner[tid],
                  tid, st.unit_type[unit], np.int64(-1), to_target + DAMAGE_SPLIT * to_attacker)
    else:
        log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_ATTACK), seat,
                  st.unit_owner[tid],
                  np.int64(-1), st.unit_type[unit], st.unit_type[tid],
                  to_target + DAMAGE_SPLIT * to_attacker)
    if kind == TARGET_CITY:
        st.city_hp[tid] = max(st.city_hp[tid] - to_target, np.int64(0))
    else:
        st.unit_hp[tid] -= to_target
        if st.unit_hp[tid] <= 0:
            kill_unit(st, tid)
    st.unit_moves_left[unit] = 0
    if to_attacker > 0:
        st.unit_hp[unit] -= to_attacker
        if st.unit_hp[unit] <= 0:
            kill_unit(st, unit)
    return OK

"""The neutral side's turn (V06, RULES.md D3 and D4): villages repair, camps spawn,
bandits roam and strike.

Once per turn, before the opening seat's flow:
- a neutral village repairs repair_per_turn HP like a seat's city does (D3);
- from turn bandit_first_spawn_turn, every bandit_spawn_interval turns, each camp
  spawns a bandit beside it while it has fewer than bandit_cap_per_camp alive (D4);
- each bandit strikes a seat unit next to it, else steps toward the nearest seat unit
  within bandit_chase_radius of its camp, else back toward its camp (D4). Bandits
  fight units, never cities: they never attack a city, a unit standing in one, nor
  step into one (V06).
Targets and steps break ties by the lowest distance, then direction order
(sim.world.board), then unit ID: nothing is random.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.rules.cities import free_tile_near, repair_city
from sim.kernels.rules.combat import resolve_attack
from sim.kernels.rules.events import log_event
from sim.kernels.rules.units import spawn_unit, unit_stat_moves
from sim.rules.codes import BANDIT, EV_REPAIRS, FAR, NEUTRAL

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def repair_villages(st: State, tb: TableArrays) -> None:
    """D3: every neutral village below its max HP repairs repair_per_turn HP; logged as
    one EV_REPAIRS row of the neutral side (villages repaired, HP total) when any."""
    n_repaired = np.int64(0)
    hp_repaired = np.int64(0)
    for c in range(st.n_cities[0]):
        if st.city_tile[c] >= 0 and st.city_owner[c] == NEUTRAL:
            gained = repair_city(st, tb, c)
            if gained > 0:
                n_repaired += 1
                hp_repaired += gained
    if n_repaired > 0:
        log_event(st.event_log, st.n_events, st.turn[0], np.int64(EV_REPAIRS), np.int64(NEUTRAL),
                  np.int64(-1), np.int64(-1),
                  n_repaired, hp_repaired, np.int64(0))


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def spawn_bandits(st: State, tb: TableArrays, board: Board) -> None:
    """D4: on spawn turns each live camp below its cap spawns one bandit beside it."""
    turn = st.turn[0]
    if turn < tb.bandit_first_spawn_turn or tb.bandit_spawn_interval <= 0 or \
            (turn - tb.bandit_first_spawn_turn) % tb.bandit_spawn_interval != 0:
        return
    for m in range(st.camp_tile.shape[0]):
        tile = st.camp_tile[m]
        if tile < 0:
            continue
        live = np.int64(0)
        for u in range(st.n_units[0]):
            if st.unit_tile[u] >= 0 and st.unit_camp[u] == m:
                live += 1
        if live >= tb.bandit_cap_per_camp:
            continue
        spot = free_tile_near(st, tb, board, tile, np.int64(BANDIT))
        if spot >= 0 and st.tile_site[spot] < 0:
            spawn_unit(st, tb, np.int64(-1), np.int64(BANDIT), spot, tb.bandit_hp, m)


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def _prey_of(st: State, tb: TableArrays, board: Board, u: np.int64) -> np.int64:
    """The seat unit outside cities nearest bandit `u` (ties to the lowest ID) within
    bandit_chase_radius of its camp (of the bandit itself once the camp is cleared);
    its ID, or -1."""
    home = st.unit_tile[u]
    camp = st.unit_camp[u]
    if camp >= 0 and st.camp_tile[camp] >= 0:
        home = st.camp_tile[camp]
    here = st.unit_tile[u]
    best = np.int64(-1)
    best_d = np.int64(FAR)
    for v in range(st.n_units[0]):
        t = st.unit_tile[v]
        if t < 0 or st.unit_owner[v] < 0 or st.tile_site[t] >= 0:
            continue
        if board.distance[home, t] > tb.bandit_chase_radius:
            continue
        if board.distance[here, t] < best_d:
            best, best_d = v, board.distance[here, t]
    return best


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def _step_toward(st: State, tb: TableArrays, board: Board, u: np.int64,
                 goal: np.int64) -> None:
    """One step of bandit `u` to the free passable non-city neighbour nearest `goal`
    that is nearer than where it stands (direction order breaks ties)."""
    here = st.unit_tile[u]
    best = np.int64(-1)
    best_d = board.distance[here, goal]
    for k in range(board.neighbours.shape[1]):
        m = board.neighbours[here, k]
        if m < 0 or st.tile_unit[m] >= 0 or st.tile_site[m] >= 0 or \
                not tb.terrain_passable[st.tile_terrain[m]]:
            continue
        if board.distance[m, goal] < best_d:
            best, best_d = m, board.distance[m, goal]
    if best >= 0:
        st.tile_unit[here] = -1
        st.tile_unit[best] = u
        st.unit_tile[u] = best
        st.unit_moves_left[u] -= 1


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def _strike(st: State, tb: TableArrays, board: Board, u: np.int64) -> bool:
    """Bandit `u` attacks the first seat unit next to it that is not in a city."""
    here = st.unit_tile[u]
    for k in range(board.neighbours.shape[1]):
        t = board.neighbours[here, k]
        if t < 0 or st.tile_site[t] >= 0:
            continue
        target = st.tile_unit[t]
        if target >= 0 and st.unit_owner[target] >= 0:
            resolve_attack(st, tb, board, u, t, np.int64(BANDIT))
            return True
    return False


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def bandit_orders(st: State, tb: TableArrays, board: Board) -> None:
    """D4: each bandit (in ID order) strikes, else roams toward its prey or its camp."""
    for u in range(st.n_units[0]):
        if st.unit_tile[u] < 0 or st.unit_owner[u] != BANDIT:
            continue
        st.unit_moves_left[u] = unit_stat_moves(tb, st.unit_type[u])
        while st.unit_moves_left[u] > 0 and st.unit_tile[u] >= 0:
            if _strike(st, tb, board, u):
                break
            prey = _prey_of(st, tb, board, u)
            camp = st.unit_camp[u]
            if prey >= 0:
                goal = st.unit_tile[prey]
            elif camp >= 0 and st.camp_tile[camp] >= 0:
                goal = st.camp_tile[camp]
            else:
                break
            before = st.unit_tile[u]
            _step_toward(st, tb, board, u, goal)
            if st.unit_tile[u] == before:
                break


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def neutral_turn(st: State, tb: TableArrays, board: Board) -> None:
    """The neutral side's part of a turn (D3, D4): repair, spawn, bandit orders."""
    repair_villages(st, tb)
    spawn_bandits(st, tb, board)
    bandit_orders(st, tb, board)

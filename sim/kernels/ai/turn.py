"""The utility AI that plays every seat (C: AI, D8), inside numba: one seat's turn.

Each seat turn, after its flow: research (research.py), diplomacy
(diplomacy.py), production (production.py), gold (gold.py), then unit orders
(military.py, with sites.py for settlers, threats.py for what it sees and
paths.py for how it walks). Every action goes through the same rule kernels a
scenario command uses (sim.kernels.rules: commands, combat, capture), so the AI
can only play legal moves. Every number it decides by is the seat's own AI
parameter set, `ai = tb.ai[plan_of(st, seat)]` (sim.rules.record.AI_DTYPE: the
personality's weights and its overrides of the shared `[ai.*]` tables), so
each seat may play its own plan: its own personality, or for a skill-1 or skill-2
seat the one its lookahead or search adopted (State.seat_plan, sim.kernels.lookahead,
sim.kernels.search), and such a seat's army marches on the war target they ordered
(State.seat_target, `ordered_target`). It reads the public score (T10) once a turn.
Skill levels differ only in these orders (D11): every action is this turn's.

Near-equal options are drawn from the seat's own AI stream (sim.kernels.ai.choice,
State.rng_ai); every other tie breaks by the lowest ID, and nothing depends on
set or dict order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.ai.diplomacy import ai_diplomacy
from sim.kernels.ai.gold import ai_gold
from sim.kernels.ai.military import ai_units
from sim.kernels.ai.production import ai_production
from sim.kernels.ai.research import ai_research
from sim.kernels.ai.threats import (
    hostile_owner,
    observatory_alarm,
    plan_of,
    urgent_target,
    war_target,
    war_time,
)
from sim.kernels.rules.seats import forbidden_mechanic
from sim.kernels.rules.standings import regions_and_scores
from sim.kernels.rules.units import is_military, live_units
from sim.kernels.timing import clock, tick
from sim.rules.codes import (
    BANDIT,
    M_ATTACK_CITIES,
    ORDER_NO_WAR,
    P_AI_GOLD,
    P_AI_PRODUCTION,
    P_AI_RESEARCH,
    P_AI_TARGETS,
    P_AI_TERRITORY,
    P_AI_UNITS,
)

if TYPE_CHECKING:
    from sim.rules.record import AIRecord, TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit(inline='always')  # a thin level: see sim.jit
def ordered_target(st: State, seat: np.int64, own: np.int64) -> np.int64:
    """The war target the seat marches on: its ordered city (State.seat_target) while
    it stands and the seat may fight its owner (V07), none under ORDER_NO_WAR, else
    `own`, the AI's own choice (threats.war_target)."""
    order = st.seat_target[seat]
    if order == ORDER_NO_WAR:
        return np.int64(-1)
    if order >= 0 and st.city_tile[order] >= 0 and st.city_owner[order] != seat and \
            hostile_owner(st, seat, st.city_owner[order]):
        return order
    return own


@njit
def city_threats(st: State, tb: TableArrays, ai: AIRecord, distance: np.ndarray,
                 seat: np.int64, live: np.ndarray) -> np.ndarray:
    """(C,) int64: threats.city_threat of each of the seat's cities, 0 elsewhere, in one
    pass over the units (each hostile fighting unit adds its attack to every city of
    the seat within threat_radius) instead of one pass per city: the same sums.
    distance: (T, T) board.distance; live: rules.units.live_units, taken with nothing
    moved since (the units on the board, ascending)."""
    threats = np.zeros(st.n_cities[0], dtype=np.int64)
    homes = np.empty(st.n_cities[0], dtype=np.int64)  # the seat's cities, ascending
    n_homes = np.int64(0)
    for c in range(st.n_cities[0]):
        if st.city_tile[c] >= 0 and st.city_owner[c] == seat:
            homes[n_homes] = c
            n_homes += 1
    for u in live:
        t = st.unit_tile[u]
        if t < 0:
            continue
        owner = st.unit_owner[u]
        if owner == seat or owner == BANDIT:
            continue
        if not is_military(tb, st.unit_type[u]) or not hostile_owner(st, seat, owner):
            continue
        attack = tb.unit_attack[st.unit_type[u]]
        for i in range(n_homes):
            c = homes[i]
            if distance[st.city_tile[c], t] <= ai.threat_radius:
                threats[c] += attack
    return threats


@njit(inline='always')  # one level fewer in the call tree (sim.jit)
def ai_take_turn(st: State, tb: TableArrays, board: Board, path: np.ndarray,
                 seat: np.int64, ticks: np.ndarray) -> None:
    """Play the active seat's actions for this turn (its flow has already run).

    path: (T, T) int64 passable-step table, filled on demand (sim.kernels.ai.paths).
    ticks: sim.kernels.timing (the AI's phases).
    """
    if st.finished[0] or not st.seat_alive[seat]:
        return
    t0 = clock(ticks)
    ai = tb.ai[plan_of(st, seat)]
    ai_research(st, tb, ai, seat)
    ai_diplomacy(st, tb, ai, board, seat)
    t0 = tick(ticks, np.int64(P_AI_RESEARCH), t0)
    # the units on the board, taken once: no unit spawns during a seat's actions (only
    # its flow and the neutral turn spawn), so every scan below looks at these alone
    live = live_units(st)
    n_seen = st.n_units[0]
    army = np.int64(0)
    n_ranged = np.int64(0)
    for u in live:
        if st.unit_owner[u] == seat and is_military(tb, st.unit_type[u]):
            army += 1
            if tb.unit_range[st.unit_type[u]] > 0:
                n_ranged += 1
    t0 = tick(ticks, np.int64(P_AI_TARGETS), t0)
    tile_city, score = regions_and_scores(st, tb, board)
    t0 = tick(ticks, np.int64(P_AI_TERRITORY), t0)
    target = ordered_target(st, seat, war_target(st, tb, ai, board.distance, seat, score, live))
    alarm = observatory_alarm(st, tb, ai, board.distance, seat, live)
    at_war = alarm >= 0 or (target >= 0 and (urgent_target(st, tb, target) or war_time(st, ai)))
    # production and gold move no unit: one threat table serves both
    threats = city_threats(st, tb, ai, board.distance, seat, live)
    t0 = tick(ticks, np.int64(P_AI_TARGETS), t0)
    ai_production(st, tb, ai, board, path, seat, army, n_ranged, at_war, tile_city, threats,
                  live)
    t0 = tick(ticks, np.int64(P_AI_PRODUCTION), t0)
    ai_gold(st, tb, ai, board, seat, alarm >= 0, tile_city, threats)
    t0 = tick(ticks, np.int64(P_AI_GOLD), t0)
    if forbidden_mechanic(st, seat, np.int64(M_ATTACK_CITIES)):
        # a seat that may not attack cities marches on none; it still fights units
        target = np.int64(-1)
        alarm = np.int64(-1)
    ai_units(st, tb, ai, board, path, seat, army, tile_city, target, alarm, score, live,
             n_seen)
    tick(ticks, np.int64(P_AI_UNITS), t0)

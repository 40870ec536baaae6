"""What the AI researches (C: Research, C: AI, D8).

Every available tech is worth the weight of its focus (one of
PERSONALITY_WEIGHTS) per science point, shaped by `[ai.research]`; the seat
draws its target among the near-best (`research_band_pct`, sim.kernels.ai.choice)
and buys it with the `research` command once it can pay. A seat whose plan is
science (its science weight) values the techs on the road to the Observatory's
tech (V16) by that weight too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.ai.choice import graded_pick
from sim.kernels.rules.commands import research
from sim.kernels.rules.seats import forbidden_tech
from sim.rules.codes import DRAW_RESEARCH, PERCENT, W_SCIENCE

if TYPE_CHECKING:
    from sim.rules.record import AIRecord, TableArrays
    from sim.world.state import State


@njit
def on_road_to(tb: TableArrays, tech: np.int64, goal: np.int64) -> bool:
    """True when `tech` is `goal` or a prerequisite of it, at any depth (tech_requires)."""
    if tech == goal:
        return True
    n = tb.tech_cost.shape[0]
    for p in range(n):
        if tb.tech_requires[goal, p] and on_road_to(tb, tech, p):
            return True
    return False


@njit
def ai_research(st: State, tb: TableArrays, ai: AIRecord, seat: np.int64) -> None:
    """Draw a tech to save for among the near-best by value per point; buy it when
    affordable. ai: the seat's AI parameter set (tb.ai[personality])."""
    n = tb.tech_cost.shape[0]
    values = np.empty(n, dtype=np.int64)
    values[:] = 0
    for t in range(n):
        if st.seat_techs[seat, t] or forbidden_tech(st, seat, t):
            continue
        ok = True
        for p in range(n):
            if tb.tech_requires[t, p] and not st.seat_techs[seat, p]:
                ok = False
        if not ok:
            continue
        weight = ai.research_weight_base + ai.weights[tb.tech_focus[t]]
        if tb.observatory_tech >= 0 and on_road_to(tb, t, tb.observatory_tech):
            weight += ai.weights[W_SCIENCE] * ai.science_road_pct // PERCENT
        values[t] = weight * ai.research_value_scale // (tb.tech_cost[t] + ai.research_cost_offset)
    best = graded_pick(st, seat, values, n, ai.research_band_pct,
                       np.int64(DRAW_RESEARCH), np.int64(-1))
    if best >= 0 and st.seat_science[seat] >= tb.tech_cost[best]:
        research(st, tb, best, seat)

"""What the AI researches (C: Research, C: AI).

It saves for the available tech its personality values most per point: the
weight of the tech's focus (one of PERSONALITY_WEIGHTS) over its cost, shaped
by `[ai.research]`, and buys it with the `research` command once it can pay.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.rules.commands import research

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.state import State


@njit
def ai_research(st: State, tb: TableArrays, seat: np.int64, w: np.ndarray) -> None:
    """Save for the available tech the personality values most per point; buy when affordable.

    w: (4,) the seat's personality weights (PERSONALITY_WEIGHTS order).
    """
    n = tb.tech_cost.shape[0]
    best = -1
    best_u = -1
    for t in range(n):
        if st.seat_techs[seat, t]:
            continue
        ok = True
        for p in range(n):
            if tb.tech_requires[t, p] and not st.seat_techs[seat, p]:
                ok = False
        if not ok:
            continue
        u = (tb.research_weight_base + w[tb.tech_focus[t]]) * tb.research_value_scale // \
            (tb.tech_cost[t] + tb.research_cost_offset)
        if u > best_u:
            best, best_u = t, u
    if best >= 0 and st.seat_science[seat] >= tb.tech_cost[best]:
        research(st, tb, best, seat)

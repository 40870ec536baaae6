"""The utility AI that plays every seat (C: AI), inside numba: one seat's turn.

Each seat turn, after its flow: research (research.py), diplomacy
(diplomacy.py), production (production.py), gold (gold.py), then unit orders
(military.py, with sites.py for settlers, threats.py for what it sees and
paths.py for how it walks). Every action goes through the same rule kernels a
scenario command uses (sim.kernels.rules: commands, combat, capture), so the AI
can only play legal moves. Its utilities multiply by the seat's personality
weights (expansion, military, science, economy; 0-100) and read every other
number from the `[ai]` tables (the record's AI fields).

Ties between equally good options break by the lowest ID; nothing depends on
set or dict order, and the AI draws no random numbers.
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
from sim.kernels.ai.threats import urgent_target, war_target, war_time
from sim.kernels.rules.common import is_military, regions

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit
def ai_take_turn(st: State, tb: TableArrays, board: Board, path: np.ndarray,
                 seat: np.int64) -> None:
    """Play the active seat's actions for this turn (its flow has already run).

    path: (T, T) int64 passable-step table, filled on demand (sim.kernels.ai.paths).
    """
    if st.finished[0] or not st.seat_alive[seat]:
        return
    w = tb.personality_weights[st.seat_personality[seat]]
    ai_research(st, tb, seat, w)
    ai_diplomacy(st, tb, board, seat)
    army = 0
    n_ranged = 0
    for u in range(st.n_units[0]):
        if st.unit_tile[u] >= 0 and st.unit_owner[u] == seat and is_military(tb, st.unit_type[u]):
            army += 1
            if tb.unit_range[st.unit_type[u]] > 0:
                n_ranged += 1
    tile_city = regions(st, tb, board)
    target = war_target(st, tb, board, seat, w)
    at_war = target >= 0 and (urgent_target(st, tb, target) or war_time(st, tb))
    ai_production(st, tb, board, path, seat, w, army, n_ranged, at_war, tile_city)
    ai_gold(st, tb, board, seat, w)
    ai_units(st, tb, board, path, seat, w, army, regions(st, tb, board))

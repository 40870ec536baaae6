"""How the AI spends gold (C: Cities repair, C: Production queue rush, T04 tiles, C: AI, D8).

Threatened cities repair (as many HP as it can pay) and rush fighting units, as
every city does while a rival's announced Observatory is in reach (V16: it wins
on completion); spare gold rushes any front item when there is plenty of it
(`[ai.gold]`, scaled by the economy weight), and an economy-minded seat buys a
resource tile next to a region (T04, B2). In the score phase (the last part of
the match, `[ai.score]`) gold is score too (T13: gold_per_point): nothing is
rushed without a threat, and any tile is bought whose region points are worth
more than the gold it costs. While it has lost a city recently the seat keeps
truce_price in reserve (a truce may be its way out, V07).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.ai.threats import in_score_phase
from sim.kernels.rules.cities import city_yield, max_hp
from sim.kernels.rules.commands import buy_tile, repair, rush, rush_price
from sim.kernels.rules.seats import forbidden_mechanic
from sim.kernels.rules.territory import tile_price
from sim.kernels.rules.units import is_military
from sim.rules.codes import GOLD, M_BUY_TILES, M_RUSH, N_DIRECTIONS, OK, PERCENT, W_ECONOMY

if TYPE_CHECKING:
    from sim.rules.record import AIRecord, TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def gold_income(st: State, tb: TableArrays, seat: np.int64, nodes: np.ndarray) -> np.int64:
    """Gold the seat's cities yield per flow (revolting cities: none); nodes: (C, 3)
    territory.node_income of the current regions."""
    total = np.int64(0)
    for c in range(st.n_cities[0]):
        if st.city_tile[c] >= 0 and st.city_owner[c] == seat and st.city_revolt[c] == 0:
            total += city_yield(st, tb, c, nodes, np.int64(GOLD))
    return total


@njit
def ai_gold(st: State, tb: TableArrays, ai: AIRecord, board: Board, seat: np.int64,
            emergency: bool, tile_city: np.ndarray, threats: np.ndarray) -> None:
    """Repair and rush where threatened (everywhere in an `emergency`: a rival's
    Observatory in reach); rush and buy tiles with spare gold. tile_city: (T,)
    owning city or -1, as of the start of the seat's actions; threats: (C,)
    threats.city_threat of the seat's cities (no unit moves before ai_units)."""
    reserve = tb.truce_price if st.seat_lost_turn[seat] >= 0 else 0
    scoring = in_score_phase(st, ai)
    for c in range(st.n_cities[0]):
        if st.city_tile[c] < 0 or st.city_owner[c] != seat:
            continue
        threat = threats[c]
        missing = max_hp(st, tb, c) - st.city_hp[c]
        if threat > 0 and missing > 0:
            hp = min(missing, st.seat_gold[seat] // max(tb.gold_repair_price, 1))
            if hp > 0:
                repair(st, tb, c, hp, seat)
        item = st.city_queue[c, 0]
        if item < 0 or forbidden_mechanic(st, seat, np.int64(M_RUSH)):
            continue
        price = rush_price(st, tb, c)
        spare = st.seat_gold[seat] - reserve
        if price <= 0 or price > spare:
            continue
        fighting = item < tb.unit_cost.shape[0] and is_military(tb, item)
        if ((threat > 0 or emergency) and fighting) or (not scoring and spare >= price *
                                                        ai.rush_price_pct //
                                                        (ai.rush_economy_base +
                                                         ai.weights[W_ECONOMY]) +
                                                        ai.rush_reserve):
            rush(st, tb, c, seat)
    # buy a tile next to a region: a resource tile for an economy-minded seat; in the
    # score phase any tile whose region points outweigh the gold's points (T13)
    spare = st.seat_gold[seat] - reserve
    tile_points = tb.w_region * tb.gold_per_point * PERCENT
    if spare < tb.tile_price_first + ai.tile_buy_reserve or \
            forbidden_mechanic(st, seat, np.int64(M_BUY_TILES)):
        return
    if ai.weights[W_ECONOMY] < ai.tile_buy_min_economy and \
            not (scoring and tile_points > tb.tile_price_first * ai.tile_margin_pct):
        return
    for t in range(st.n_tiles[0]):
        if tile_city[t] >= 0 or not tb.terrain_passable[st.tile_terrain[t]]:
            continue
        if st.tile_node[t] < 0 and not scoring:
            continue
        for k in range(N_DIRECTIONS):
            m = board.neighbours[t, k]
            if m < 0:
                continue
            c = tile_city[m]
            if c >= 0 and st.city_owner[c] == seat:
                n_bought = np.int64(0)
                for x in range(st.n_tiles[0]):
                    if st.tile_bought_by[x] == c:
                        n_bought += 1
                price = tile_price(n_bought, tb.tile_price_first, tb.tile_price_step)
                worth = st.tile_node[t] >= 0 or tile_points > price * ai.tile_margin_pct
                if worth and price + ai.tile_buy_reserve <= spare and \
                        buy_tile(st, tb, board, c, t, seat) == OK:
                    tile_city[t] = c   # a bought tile is its city's (T05, T08): as regions()
                return

"""How the AI spends gold (C: Cities repair, C: Production queue rush, T04 tiles, C: AI).

Threatened cities repair (as many HP as it can pay) and rush fighting units;
spare gold rushes any front item when there is plenty of it (`[ai.gold]`,
scaled by the economy weight), and an economy-minded seat buys a resource tile
next to a region (T04, B2). While it has lost a city recently the seat keeps
truce_price in reserve (a truce may be its way out, V07).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.ai.threats import city_threat
from sim.kernels.rules.commands import buy_tile, repair, rush, rush_price
from sim.kernels.rules.common import city_yields, is_military, max_hp, regions
from sim.kernels.rules.territory import node_income, tile_price
from sim.rules.codes import GOLD, N_DIRECTIONS, W_ECONOMY

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit
def gold_income(st: State, tb: TableArrays, seat: np.int64, tile_city: np.ndarray) -> np.int64:
    """Gold the seat's cities yield per flow (revolting cities: none); tile_city (T,)."""
    nodes = node_income(tile_city, st.tile_node, st.city_tile.shape[0], tb.node_yield)
    total = 0
    for c in range(st.n_cities[0]):
        if st.city_tile[c] >= 0 and st.city_owner[c] == seat and st.city_revolt[c] == 0:
            total += city_yields(st, tb, c, nodes)[GOLD]
    return total


@njit
def ai_gold(st: State, tb: TableArrays, board: Board, seat: np.int64, w: np.ndarray) -> None:
    """Repair and rush where threatened; rush and buy node tiles with spare gold.

    w: (4,) the seat's personality weights (PERSONALITY_WEIGHTS order).
    """
    reserve = tb.truce_price if st.seat_lost_turn[seat] >= 0 else 0
    for c in range(st.n_cities[0]):
        if st.city_tile[c] < 0 or st.city_owner[c] != seat:
            continue
        threat = city_threat(st, tb, board, seat, c)
        missing = max_hp(st, tb, c) - st.city_hp[c]
        if threat > 0 and missing > 0:
            hp = min(missing, st.seat_gold[seat] // max(tb.gold_repair_price, 1))
            if hp > 0:
                repair(st, tb, c, hp, seat)
        item = st.city_queue[c, 0]
        if item < 0:
            continue
        price = rush_price(st, tb, c)
        spare = st.seat_gold[seat] - reserve
        if price <= 0 or price > spare:
            continue
        fighting = item < tb.unit_cost.shape[0] and is_military(tb, item)
        if (threat > 0 and fighting) or spare >= price * tb.rush_price_pct // \
                (tb.rush_economy_base + w[W_ECONOMY]) + tb.rush_reserve:
            rush(st, tb, c, seat)
    # buy a resource tile next to a region
    spare = st.seat_gold[seat] - reserve
    if spare < tb.tile_price_first + tb.tile_buy_reserve or \
            w[W_ECONOMY] < tb.tile_buy_min_economy:
        return
    tile_city = regions(st, tb, board)
    for t in range(st.n_tiles[0]):
        if st.tile_node[t] < 0 or tile_city[t] >= 0:
            continue
        for k in range(N_DIRECTIONS):
            m = board.neighbours[t, k]
            if m < 0:
                continue
            c = tile_city[m]
            if c >= 0 and st.city_owner[c] == seat:
                n_bought = 0
                for x in range(st.n_tiles[0]):
                    if st.tile_bought_by[x] == c:
                        n_bought += 1
                if tile_price(n_bought, tb.tile_price_first, tb.tile_price_step) + \
                        tb.tile_buy_reserve <= spare:
                    buy_tile(st, tb, board, c, t, seat)
                return

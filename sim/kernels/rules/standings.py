"""Where the seats stand (T08, T10–T13): the current state's regions, score terms,
scores and ranks, read through the pure kernels of sim.kernels.rules.territory.

`st` is a sim.world.state.State, `tb` a sim.rules.record.TableArrays, `board` a
sim.world.board.Board; all are passed in, nothing is global.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.jit import njit
from sim.kernels.rules.territory import (
    Rings,
    ScoreWeights,
    resolve_regions,
    score_terms_into,
    term_sum,
    territory_and_score,
)
from sim.rules.codes import (
    N_SCORE_COUNTS,
    N_SCORE_TERMS,
)

if TYPE_CHECKING:
    from sim.rules.record import TableArrays
    from sim.world.board import Board
    from sim.world.state import State


@njit(inline='always')  # a tuple of three table values, built where it is used
def ring_rule(tb: TableArrays) -> Rings:
    """The tables' ring rule (T01, T03) for the territory kernels: the one place a
    Rings is built from the tables, so every caller hands them the same types."""
    return Rings(tb.ring_radius, tb.grown_ring_radius, tb.grown_ring_population)


@njit(inline='always')  # a tuple of table values, built where it is used
def score_weights(tb: TableArrays) -> ScoreWeights:
    """The tables' score formula (T13, T14) for the territory kernels: the one place a
    ScoreWeights is built from the tables."""
    return ScoreWeights(tb.w_region, tb.w_population, tb.w_city, tb.gold_per_point,
                        tb.building_score_points)


@njit(inline='always')  # a thin level: see sim.jit
def regions(st: State, tb: TableArrays, board: Board) -> np.ndarray:
    """(T,) owning city per tile for the current state (T08)."""
    return resolve_regions(board.distance, board.disc, st.city_tile, st.city_owner, st.city_pop,
                           st.tile_bought_by[: st.n_tiles[0]], ring_rule(tb))


@njit(inline='always')  # a thin level: see sim.jit
def territory_and_scores(st: State, tb: TableArrays, board: Board):
    """(tile_city (T,), terms (S, 5), counts (S, 4), score (S,), rank (S,)) for the
    current state, in one resolve (T08, T10–T13)."""
    n = st.n_seats[0]
    return territory_and_score(
        board.distance, board.disc, st.city_tile, st.city_owner, st.city_pop, st.city_buildings,
        st.tile_bought_by[: st.n_tiles[0]], st.seat_gold[:n], st.seat_alive[:n],
        ring_rule(tb), score_weights(tb))


@njit
def score_parts_into(st: State, tb: TableArrays, board: Board, flat_terms: np.ndarray,
                     flat_counts: np.ndarray):
    """The current score terms (S, 5) and counts (S, 4) (T10, T13,
    territory.score_terms) in the caller's (S × 5,) and (S × 4,) int64 buffers, and
    the region map (T,) they were counted on (T08):
    (tile_city, terms, counts), the last two views of the buffers."""
    n = st.n_seats[0]
    flat_terms[:] = 0
    flat_counts[:] = 0
    terms = flat_terms.reshape((n, N_SCORE_TERMS))
    counts = flat_counts.reshape((n, N_SCORE_COUNTS))
    tile_city = regions(st, tb, board)
    score_terms_into(terms, counts, tile_city, st.city_tile, st.city_owner, st.city_pop,
                     st.city_buildings, st.seat_gold[:n], score_weights(tb))
    return tile_city, terms, counts


@njit(inline='always')  # a thin level: one fewer in the call tree (sim.jit)
def regions_and_scores(st: State, tb: TableArrays, board: Board):
    """(tile_city (T,), score (S,)): territory_and_scores' regions and scores alone, for
    the AI's read of them each seat turn (T08, T10, T13): no ranks are made."""
    n = st.n_seats[0]
    flat_terms = np.empty(n * N_SCORE_TERMS, dtype=np.int64)
    flat_counts = np.empty(n * N_SCORE_COUNTS, dtype=np.int64)
    tile_city, terms, _counts = score_parts_into(st, tb, board, flat_terms, flat_counts)
    score = np.zeros(n, dtype=np.int64)
    for s in range(n):
        score[s] = term_sum(terms, s)
    return tile_city, score


@njit(inline='always')  # a thin level: one fewer in the call tree (sim.jit)
def scores(st: State, tb: TableArrays, board: Board):
    """(terms (S, 5), counts (S, 4), score (S,), rank (S,)) for the current state (T10–T13)."""
    _tile_city, terms, counts, score, rank = territory_and_scores(st, tb, board)
    return terms, counts, score, rank

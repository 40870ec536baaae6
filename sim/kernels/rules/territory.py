"""Territory and score kernels (T01–T16, B2).

Every function is a pure `@njit` function of arrays and table values passed
as arguments; the table values that travel together come as one small record
(`Rings`, `ScoreWeights`). Array shapes: T tiles, C city slots, S seats, B buildings.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sim.jit import njit
from sim.rules.codes import (
    BUY_IMPASSABLE,
    BUY_IN_REGION,
    BUY_NEUTRAL_CITY,
    BUY_NO_GOLD,
    BUY_NOT_A_CITY,
    BUY_NOT_ADJACENT,
    BUY_NOT_OWNER,
    BUY_OK,
    COUNT_CITIES,
    COUNT_GOLD,
    COUNT_POPULATION,
    COUNT_REGION,
    DISC_SIZES,
    N_DIRECTIONS,
    N_NODE_KINDS,
    N_SCORE_COUNTS,
    N_SCORE_TERMS,
    TERM_CITIES,
    TERM_GOLD,
    TERM_MONUMENTS,
    TERM_POPULATION,
    TERM_REGION,
)


class Rings(NamedTuple):
    """A city's ring (T01, T03), int64 each: `base` steps, `grown` steps once its
    population is `grown_population` or more (the tables' ring_radius,
    grown_ring_radius, grown_ring_population: sim.kernels.rules.standings.ring_rule)."""

    base: np.int64
    grown: np.int64
    grown_population: np.int64


class ScoreWeights(NamedTuple):
    """The score formula's table values (T13, T14): w_region points per region tile,
    w_population per population, w_city per city, a point per gold_per_point gold
    (int64 each), and building_points (B,) int64 each building's Monument points
    (building_score_points; sim.kernels.rules.standings.score_weights)."""

    w_region: np.int64
    w_population: np.int64
    w_city: np.int64
    gold_per_point: np.int64
    building_points: np.ndarray


@njit
def ring_radius(pop: np.int64, rings: Rings) -> np.int64:
    """Radius of a city's ring: `rings.grown` at population >= `rings.grown_population`,
    else `rings.base` (T01, T03)."""
    if pop >= rings.grown_population:
        return rings.grown
    return rings.base


@njit
def resolve_regions(distance: np.ndarray, disc: np.ndarray, city_tile: np.ndarray,
                    city_owner: np.ndarray, city_pop: np.ndarray, tile_bought_by: np.ndarray,
                    rings: Rings) -> np.ndarray:
    """The city that owns each tile, after T08's contest order.

    distance: (T, T) hex steps (terrain ignored: T01). disc: (T, D) tiles
    nearest first (sim.world.board). city_tile: (C,) tile or -1 for an unused slot.
    city_owner: (C,) seat, or negative for a neutral village (no region: T06).
    city_pop: (C,). tile_bought_by: (T,) city or -1. rings: the ring rule (T01, T03).

    Returns tile_city: (T,) owning city ID or -1. A bought tile belongs to its
    buyer (T05, T08.1); otherwise the closest seat city whose ring covers the
    tile (T01, T03; clipped at the edge: off-board disc entries are -1), equal
    distance to the lower city ID (T08.2-3). Each tile has one owner (T08).
    """
    n_tiles = tile_bought_by.shape[0]
    tile_city = np.full(n_tiles, -1, dtype=np.int64)
    for c in range(city_tile.shape[0]):
        home = city_tile[c]
        if home < 0 or city_owner[c] < 0:
            continue
        rad = ring_radius(city_pop[c], rings)
        for k in range(DISC_SIZES[rad]):
            t = disc[home, k]
            if t < 0:
                continue
            # the closest so far is the distance from the tile's current owner, read
            # off the board rather than kept in an array of its own (an allocation per
            # call, some 600 a match); strict < keeps the lower city ID on equal
            # distance (cities ascend)
            held = tile_city[t]
            if held < 0 or distance[home, t] < distance[city_tile[held], t]:
                tile_city[t] = c
    for t in range(n_tiles):
        b = tile_bought_by[t]
        if b >= 0 and city_tile[b] >= 0:
            tile_city[t] = b
    return tile_city


@njit
def region_city_of(distance: np.ndarray, city_tile: np.ndarray, city_owner: np.ndarray,
                   city_pop: np.ndarray, tile_bought_by: np.ndarray, tile: np.int64,
                   rings: Rings) -> np.int64:
    """The city that owns one `tile` (resolve_regions(...)[tile], T08), or -1, without
    resolving the whole board: its buyer, else the closest seat city whose ring covers
    it, equal distance to the lower city ID."""
    b = tile_bought_by[tile]
    if b >= 0 and city_tile[b] >= 0:
        return b
    best = np.int64(-1)
    best_d = np.iinfo(np.int64).max
    for c in range(city_tile.shape[0]):
        home = city_tile[c]
        if home < 0 or city_owner[c] < 0:
            continue
        d = distance[home, tile]
        if d <= ring_radius(city_pop[c], rings) and \
                d < best_d:
            best, best_d = c, d
    return best


@njit
def node_income(tile_city: np.ndarray, tile_node: np.ndarray, n_cities: np.int64,
                node_yield: np.ndarray) -> np.ndarray:
    """Per-city node yields (C, 3) by node kind (T02, T09).

    tile_node: (T,) node code or -1. node_yield: (3,) yield of one node per kind.
    A node counts once, for the city that owns its tile (T09); tiles in no
    region (beside a neutral village: T06) yield to nobody. Revolt is applied
    by the economy, not here (T02: the region still counts for score).
    """
    out = np.zeros((n_cities, N_NODE_KINDS), dtype=np.int64)
    for t in range(tile_city.shape[0]):
        c = tile_city[t]
        k = tile_node[t]
        if c >= 0 and k >= 0:
            out[c, k] += node_yield[k]
    return out


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def score_terms(tile_city: np.ndarray, city_tile: np.ndarray, city_owner: np.ndarray,
                city_pop: np.ndarray, city_buildings: np.ndarray, seat_gold: np.ndarray,
                weights: ScoreWeights):
    """Score terms and the raw counts behind them, per seat (T13, T14, T02, V12).

    Returns (terms, counts): terms (S, 5) int64 points for region, population,
    cities, gold, monuments; counts (S, 4) int64 region tiles, population,
    cities, gold stock (T11 tiebreak keys). Neutral villages count for nobody
    (V06); a revolting city counts in full for its current owner (T02, V12);
    Monument points are whatever buildings of the seat's cities carry (T14).
    """
    n_seats = seat_gold.shape[0]
    counts = np.zeros((n_seats, N_SCORE_COUNTS), dtype=np.int64)
    terms = np.zeros((n_seats, N_SCORE_TERMS), dtype=np.int64)
    score_terms_into(terms, counts, tile_city, city_tile, city_owner, city_pop, city_buildings,
                     seat_gold, weights)
    return terms, counts


@njit
def score_terms_into(terms: np.ndarray, counts: np.ndarray, tile_city: np.ndarray,
                     city_tile: np.ndarray, city_owner: np.ndarray, city_pop: np.ndarray,
                     city_buildings: np.ndarray, seat_gold: np.ndarray,
                     weights: ScoreWeights) -> None:
    """score_terms written into `terms` (S, 5) and `counts` (S, 4), both all zero on
    entry, for a caller that keeps them where it likes."""
    building_score_points = weights.building_points
    w_region = weights.w_region
    w_population = weights.w_population
    w_city = weights.w_city
    gold_per_point = weights.gold_per_point
    n_seats = seat_gold.shape[0]
    # Monument points add up in their own term's column (no array of their own)
    for t in range(tile_city.shape[0]):
        c = tile_city[t]
        if c >= 0 and city_owner[c] >= 0:
            counts[city_owner[c], COUNT_REGION] += 1
    for c in range(city_tile.shape[0]):
        s = city_owner[c]
        if city_tile[c] < 0 or s < 0:
            continue
        counts[s, COUNT_POPULATION] += city_pop[c]
        counts[s, COUNT_CITIES] += 1
        for b in range(building_score_points.shape[0]):
            if city_buildings[c, b]:
                terms[s, TERM_MONUMENTS] += building_score_points[b]
    for s in range(n_seats):
        counts[s, COUNT_GOLD] = seat_gold[s]
        terms[s, TERM_REGION] = counts[s, COUNT_REGION] * w_region
        terms[s, TERM_POPULATION] = counts[s, COUNT_POPULATION] * w_population
        terms[s, TERM_CITIES] = counts[s, COUNT_CITIES] * w_city
        terms[s, TERM_GOLD] = max(seat_gold[s], 0) // gold_per_point  # rounds down (T13)


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def rank_seats(score: np.ndarray, counts: np.ndarray, alive: np.ndarray) -> np.ndarray:
    """Rank 1..S of each seat (T11, V19): standing seats first, then score,
    population, region tiles, gold stock (not gold points), then seat order.

    score: (S,), counts: (S, 4) from `score_terms`, alive: (S,) bool.
    """
    n = score.shape[0]
    rank = np.ones(n, dtype=np.int64)
    for s in range(n):
        for o in range(n):
            if o != s and _ahead(o, s, score, counts, alive):
                rank[s] += 1
    return rank


@njit(inline='always')  # numba-inlined in rank_seats: S × (S - 1) calls a ranking, each
# counting references to the two arrays it is handed
def _ahead(a: np.int64, b: np.int64, score: np.ndarray, counts: np.ndarray,
           alive: np.ndarray) -> bool:
    """Whether seat `a` ranks ahead of seat `b` (rank_seats' order)."""
    if alive[a] != alive[b]:
        return alive[a] != 0
    if score[a] != score[b]:
        return score[a] > score[b]
    for k in (COUNT_POPULATION, COUNT_REGION, COUNT_GOLD):
        if counts[a, k] != counts[b, k]:
            return counts[a, k] > counts[b, k]
    return a < b  # fixed seat order, never who opened the turn (T12)


@njit
def territory_and_score(distance: np.ndarray, disc: np.ndarray, city_tile: np.ndarray,
                        city_owner: np.ndarray, city_pop: np.ndarray, city_buildings: np.ndarray,
                        tile_bought_by: np.ndarray, seat_gold: np.ndarray, seat_alive: np.ndarray,
                        rings: Rings, weights: ScoreWeights):
    """Regions, score terms, scores and ranks of a position in one call (T01–T16).

    Returns (tile_city (T,), terms (S, 5), counts (S, 4), score (S,), rank (S,));
    see `resolve_regions`, `score_terms` and `rank_seats`.
    """
    tile_city = resolve_regions(distance, disc, city_tile, city_owner, city_pop, tile_bought_by,
                                rings)
    terms, counts = score_terms(tile_city, city_tile, city_owner, city_pop, city_buildings,
                                seat_gold, weights)
    n = seat_gold.shape[0]
    score = np.zeros(n, dtype=np.int64)
    for s in range(n):
        score[s] = term_sum(terms, s)
    rank = rank_seats(score, counts, seat_alive)
    return tile_city, terms, counts, score, rank


@njit(inline='always')  # numba-inlined: a few additions, no call
def term_sum(terms: np.ndarray, s: np.int64) -> np.int64:
    """Seat s's score: the sum of its terms (T13); terms: (S, 5) from score_terms."""
    total = np.int64(0)
    for k in range(N_SCORE_TERMS):
        total += terms[s, k]
    return total


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def bought_count(tile_bought_by: np.ndarray, city: np.int64) -> np.int64:
    """How many tiles `city` has bought and still holds (T04 price step)."""
    n = np.int64(0)
    for t in range(tile_bought_by.shape[0]):
        if tile_bought_by[t] == city:
            n += 1
    return n


@njit(inline='always')  # a thin level: see sim.jit
def tile_price(n_bought: np.int64, first: np.int64, step: np.int64) -> np.int64:
    """Gold for a city's next tile: first + step × tiles it already bought (T04)."""
    return first + step * n_bought


@njit
def buy_tile_check(city: np.int64, seat: np.int64, tile: np.int64, tile_city: np.ndarray,
                   tile_terrain: np.ndarray, terrain_passable: np.ndarray,
                   neighbours: np.ndarray, city_tile: np.ndarray, city_owner: np.ndarray,
                   tile_bought_by: np.ndarray, seat_gold: np.ndarray, first: np.int64,
                   step: np.int64):
    """Whether `seat` may buy `tile` for `city`, and at what price (T04, B2).

    Returns (reason, price): reason BUY_OK or a BUY_* refusal code. The tile
    must be passable, in no region, and adjacent to this city's own region
    (B2); the city must belong to the acting seat.
    """
    if city < 0 or city >= city_tile.shape[0] or city_tile[city] < 0:
        return BUY_NOT_A_CITY, np.int64(0)
    if city_owner[city] < 0:
        return BUY_NEUTRAL_CITY, np.int64(0)
    if city_owner[city] != seat:
        return BUY_NOT_OWNER, np.int64(0)
    price = tile_price(bought_count(tile_bought_by, city), first, step)
    if not terrain_passable[tile_terrain[tile]]:
        return BUY_IMPASSABLE, price
    if tile_city[tile] >= 0:
        return BUY_IN_REGION, price
    adjacent = False
    for k in range(N_DIRECTIONS):
        n = neighbours[tile, k]
        if n >= 0 and tile_city[n] == city:
            adjacent = True
    if not adjacent:
        return BUY_NOT_ADJACENT, price
    if seat_gold[seat] < price:
        return BUY_NO_GOLD, price
    return BUY_OK, price


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def city_max_hp(pop: np.int64, buildings_row: np.ndarray, hp_base: np.int64,
                hp_per_population: np.int64, building_hp: np.ndarray) -> np.int64:
    """Max HP of a city: base + per population × pop + building HP (Walls) (V05, C: Cities)."""
    hp = hp_base + hp_per_population * pop
    for b in range(building_hp.shape[0]):
        if buildings_row[b]:
            hp += building_hp[b]
    return hp


@njit(inline='always')  # one caller: one level fewer in the call tree (sim.jit)
def dominance_shares(city_tile: np.ndarray, city_owner: np.ndarray, n_seats: np.int64):
    """Cities per seat (S,) and the total held by seats (V18: villages count in neither)."""
    held = np.zeros(n_seats, dtype=np.int64)
    for c in range(city_tile.shape[0]):
        if city_tile[c] >= 0 and city_owner[c] >= 0:
            held[city_owner[c]] += 1
    total = np.int64(0)
    for s in range(n_seats):
        total += held[s]
    return held, total

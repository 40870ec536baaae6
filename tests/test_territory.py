"""Territory and score kernels (T01–T16, B2) against the plain oracle in
tests/reference/territory.py, on hand cases and hypothesis-drawn positions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim.kernels.rules.territory import (
    Rings,
    ScoreWeights,
    buy_tile_check,
    node_income,
    resolve_regions,
    territory_and_score,
)
from sim.rules.codes import (
    BUY_IMPASSABLE,
    BUY_IN_REGION,
    BUY_NEUTRAL_CITY,
    BUY_NO_GOLD,
    BUY_NOT_ADJACENT,
    BUY_NOT_OWNER,
    BUY_OK,
)
from sim.world.board import make_board
from tests.reference import territory as ref

BUY_NAMES = {BUY_OK: "ok", BUY_NEUTRAL_CITY: "neutral", BUY_NOT_OWNER: "not_owner",
             BUY_IMPASSABLE: "impassable", BUY_IN_REGION: "in_region",
             BUY_NOT_ADJACENT: "not_adjacent", BUY_NO_GOLD: "no_gold"}


def rings(tb) -> Rings:
    """The tables' ring rule as the kernels take it (standings.ring_rule in compiled code)."""
    return Rings(tb.ring_radius, tb.grown_ring_radius, tb.grown_ring_population)


def score_weights(tb) -> ScoreWeights:
    """The tables' score formula as the kernels take it (standings.score_weights)."""
    return ScoreWeights(tb.w_region, tb.w_population, tb.w_city, tb.gold_per_point,
                        tb.building_score_points)


def rules_of(tb) -> ref.Rules:
    return ref.Rules(ring_radius=int(tb.ring_radius), grown_ring_radius=int(tb.grown_ring_radius),
                     grown_ring_population=int(tb.grown_ring_population),
                     w_region=int(tb.w_region), w_population=int(tb.w_population),
                     w_city=int(tb.w_city), gold_per_point=int(tb.gold_per_point),
                     tile_price_first=int(tb.tile_price_first),
                     tile_price_step=int(tb.tile_price_step), monument_points={})


@st.composite
def positions(draw, min_gap: int = 4):
    """A random position: board, seat and neutral cities >= min_gap apart, bought tiles."""
    radius = draw(st.integers(3, 9))
    board = make_board(radius)
    n_seats = draw(st.integers(2, 6))
    order = draw(st.permutations(range(board.n_tiles)))
    want = draw(st.integers(1, 14))
    sites: list[int] = []
    for t in order:
        if all(board.distance[t, s] >= min_gap for s in sites):
            sites.append(int(t))
        if len(sites) == want:
            break
    n = len(sites)
    owner = [draw(st.one_of(st.integers(0, n_seats - 1), st.just(-2))) for _ in range(n)]
    pop = [draw(st.integers(1, 5)) for _ in range(n)]
    monument = [draw(st.booleans()) for _ in range(n)]
    bought = np.full(board.n_tiles, -1, dtype=np.int64)
    seat_cities = [c for c in range(n) if owner[c] >= 0]
    if seat_cities:
        for t in draw(st.lists(st.integers(0, board.n_tiles - 1), max_size=12, unique=True)):
            if t not in sites:
                bought[t] = draw(st.sampled_from(seat_cities))
    gold = [draw(st.integers(0, 300)) for _ in range(n_seats)]
    alive = [draw(st.booleans()) or any(o == s for o in owner) for s in range(n_seats)]
    terrain_impassable = draw(st.lists(st.integers(0, board.n_tiles - 1), max_size=30))
    nodes = {t: draw(st.integers(0, 2)) for t in draw(
        st.lists(st.integers(0, board.n_tiles - 1), max_size=40, unique=True))}
    return dict(board=board, sites=sites, owner=owner, pop=pop, monument=monument, bought=bought,
                gold=gold, alive=alive, impassable=set(terrain_impassable), nodes=nodes)


def kernel_inputs(p, tables):
    n_b = len(tables.building_names)
    monument = tables.building_names.index("monument")
    buildings = np.zeros((len(p["sites"]), n_b), dtype=np.uint8)
    buildings[np.array(p["monument"], dtype=bool), monument] = 1
    return (np.array(p["sites"], dtype=np.int64), np.array(p["owner"], dtype=np.int64),
            np.array(p["pop"], dtype=np.int64), buildings)


def ref_inputs(p, tables, tb):
    board = p["board"]
    cities = [ref.City(i, "neutral" if p["owner"][i] < 0 else p["owner"][i],
                       board.axial(p["sites"][i]), p["pop"][i],
                       ["monument"] if p["monument"][i] else [])
              for i in range(len(p["sites"]))]
    bought = {board.axial(int(t)): int(p["bought"][t]) for t in np.flatnonzero(p["bought"] >= 0)}
    rules = rules_of(tb)
    rules.monument_points = {"monument": int(
        tb.building_score_points[tables.building_names.index("monument")])}
    return cities, bought, rules


def run_kernel(p, tables, tb):
    board = p["board"]
    sites, owner, pop, buildings = kernel_inputs(p, tables)
    return territory_and_score(board.distance, board.disc, sites, owner, pop, buildings,
                               p["bought"], np.array(p["gold"], dtype=np.int64),
                               np.array(p["alive"], dtype=np.uint8), rings(tb),
                               score_weights(tb))


def check_against_reference(p, tables, tb):
    board = p["board"]
    cities, bought, rules = ref_inputs(p, tables, tb)
    tile_city, terms, _counts, score, rank = run_kernel(p, tables, tb)
    owners = ref.tile_owners(board.radius, cities, bought, rules)
    got = {board.axial(t): int(tile_city[t]) for t in range(board.n_tiles) if tile_city[t] >= 0}
    assert got == owners
    rows = ref.score_table(board.radius, cities, bought, p["gold"], p["alive"], rules)
    for row in rows:
        s = row["seat"]
        assert list(terms[s]) == [row["terms"][k] for k in
                                  ("region", "population", "cities", "gold", "monuments")]
        assert score[s] == row["score"]
        assert rank[s] == row["rank"]
    node_kind = np.full(board.n_tiles, -1, dtype=np.int64)
    for t, k in p["nodes"].items():
        node_kind[t] = k
    node_yield = np.array([2, 3, 5], dtype=np.int64)
    income = node_income(tile_city, node_kind, len(p["sites"]), node_yield)
    want = ref.node_yields(board.radius, cities, bought,
                           {board.axial(t): k for t, k in p["nodes"].items()}, [2, 3, 5], rules)
    for c in range(len(p["sites"])):
        assert list(income[c]) == want[c]


PROPERTY = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.nojit
@PROPERTY
@given(p=positions())
def test_t01_t03_t08_t09_t13_regions_and_score_match_reference(p, tables, tb):
    """T01 ring, T03 growth, T05/T08 bought tiles and contest order, T06 villages,
    T09 nodes once, T11 ranks, T13/T14 score terms: kernel == oracle."""
    check_against_reference(p, tables, tb)


@pytest.mark.nojit
@PROPERTY
@given(p=positions(min_gap=1))
def test_t08_contest_order_holds_even_for_crowded_cities(p, tables, tb):
    """T08 on positions that break T07 (cities 1+ apart): the kernel still picks the
    closest city, ties to the lower ID, a bought tile first."""
    check_against_reference(p, tables, tb)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(p=positions())
def test_t08_regions_and_score_match_reference_many(p, tables, tb):
    check_against_reference(p, tables, tb)


@pytest.mark.nojit
@PROPERTY
@given(p=positions(), data=st.data())
def test_t04_b2_tile_purchase_matches_reference(p, data, tables, tb):
    """T04 price and legality, B2 adjacency to the buying city's own region."""
    board = p["board"]
    if not p["sites"]:
        return
    cities, bought, rules = ref_inputs(p, tables, tb)
    sites, owner, pop, _ = kernel_inputs(p, tables)
    tile_city = resolve_regions(board.distance, board.disc, sites, owner, pop, p["bought"],
                                rings(tb))
    terrain = np.zeros(board.n_tiles, dtype=np.int64)
    for t in p["impassable"]:
        terrain[t] = 3  # mountain
    city = data.draw(st.integers(0, len(p["sites"]) - 1))
    seat = data.draw(st.integers(0, len(p["gold"]) - 1))
    tile = data.draw(st.integers(0, board.n_tiles - 1))
    gold = np.array(p["gold"], dtype=np.int64)
    code, price = buy_tile_check(city, seat, tile, tile_city, terrain, tb.terrain_passable,
                                 board.neighbours, sites, owner, p["bought"], gold,
                                 tb.tile_price_first, tb.tile_price_step)
    want, want_price = ref.can_buy(board.radius, cities, bought,
                                   {board.axial(t) for t in p["impassable"]}, city, seat,
                                   board.axial(tile), p["gold"][seat], rules)
    assert BUY_NAMES[int(code)] == want
    if want not in ("neutral", "not_owner"):
        assert price == want_price


@pytest.mark.nojit
def test_t01_region_is_seven_tiles_and_clipped_at_the_edge(tables, tb):
    board = make_board(4)
    centre, corner = board.index(0, 0), board.index(4, -4)
    tile_city = resolve_regions(board.distance, board.disc, np.array([centre, corner]),
                                np.array([0, 1]), np.array([1, 1]),
                                np.full(board.n_tiles, -1), rings(tb))
    assert (tile_city == 0).sum() == 7
    assert (tile_city == 1).sum() == 4  # a corner city keeps 4 of its 7 tiles (T01)


@pytest.mark.nojit
def test_t01_ring_ignores_terrain_and_t03_grows_at_three(tables, tb):
    """T01: terrain plays no part in a region; T03: pop 3 -> 19 tiles, below 3 -> 7."""
    board = make_board(5)
    c = np.array([board.index(0, 0)])
    for pop, size in ((1, 7), (2, 7), (3, 19), (5, 19)):
        tile_city = resolve_regions(board.distance, board.disc, c, np.array([0]),
                                    np.array([pop]), np.full(board.n_tiles, -1),
                                    rings(tb))
        assert (tile_city == 0).sum() == size


@pytest.mark.nojit
def test_t06_village_has_no_region(tables, tb):
    board = make_board(4)
    tile_city = resolve_regions(board.distance, board.disc, np.array([board.index(0, 0)]),
                                np.array([-2]), np.array([3]), np.full(board.n_tiles, -1),
                                rings(tb))
    assert (tile_city >= 0).sum() == 0


@pytest.mark.nojit
def test_t08_equal_distance_goes_to_the_lower_city_id(tables, tb):
    board = make_board(5)
    a, b = board.index(-2, 0), board.index(2, 0)  # 4 apart, pop 3: rings of 2 meet at (0, 0)
    tile_city = resolve_regions(board.distance, board.disc, np.array([b, a]), np.array([0, 1]),
                                np.array([3, 3]), np.full(board.n_tiles, -1), rings(tb))
    assert tile_city[board.index(0, 0)] == 0  # city 0 (at +2) wins the tie, lower ID
    bought = np.full(board.n_tiles, -1)
    bought[board.index(0, 0)] = 1
    tile_city = resolve_regions(board.distance, board.disc, np.array([b, a]), np.array([0, 1]),
                                np.array([3, 3]), bought, rings(tb))
    assert tile_city[board.index(0, 0)] == 1  # a bought tile beats a ring (T08.1)


def test_t13_default_weights_make_a_city_worth_more_than_several_tiles(tables):
    """T13: 'one city worth more than several region tiles' — here more than 3."""
    from sim.rules.tables import load_tables

    for t in (tables, load_tables()):
        assert t.model.score.w_city > 3 * t.model.score.w_region
        assert t.model.score.gold_per_point == 5


def test_t15_bounds_in_the_tables(tables):
    """T15: quota 6, population ceiling 5, a ring holds at most 19 tiles."""
    m = tables.model
    assert (m.city.quota, m.city.max_population, m.territory.max_ring_tiles) == (6, 5, 19)
    r = m.territory.grown_ring_radius
    assert 3 * r * (r + 1) + 1 == 19


@pytest.mark.nojit
def test_t11_rank_tiebreaks(tables, tb):
    """T11: equal scores break by population, then region tiles, then gold stock
    (not gold points), then seat order; T10 every seat has a row."""
    from sim.kernels.rules.territory import rank_seats

    score = np.array([10, 10, 10, 10, 10])
    counts = np.array([[5, 3, 1, 7],   # region, population, cities, gold stock
                       [5, 4, 1, 0],
                       [6, 3, 1, 7],
                       [5, 3, 1, 9],
                       [5, 3, 1, 7]])
    alive = np.ones(5, dtype=np.uint8)
    assert list(rank_seats(score, counts, alive)) == [4, 1, 2, 3, 5]

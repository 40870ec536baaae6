"""Shortcuts the engine takes for speed, each proven equal to the plain rule it skips,
on positions of played matches:

- a one-step move (sim.kernels.rules.commands.move_unit) costs 1 move without the
  path search: path_length finds every legal single step at 1;
- founding sites (sim.kernels.ai.sites.best_site, T07) mark the tiles too close to a
  city from each city's disc: the best site is the one a plain scan of every tile
  against every city picks;
"""

from __future__ import annotations

from collections import deque

import numpy as np

from sim.engine.match import iter_turns, new_path_table
from sim.kernels.ai.sites import best_site, crowded_tiles
from sim.kernels.rules.commands import path_length
from sim.kernels.rules.standings import regions
from sim.rules.codes import DISC_SIZES
from sim.rules.tables import load_tables
from sim.world.state import copy_state
from tests.conftest import FIXTURE_TABLES

TABLES = load_tables(FIXTURE_TABLES)
TB = TABLES.arrays()
AI = TB.ai[0]  # the first personality's AI values (D8); sites read only shared ones


def _positions(seeds=range(4), every=12):
    for seed in seeds:
        for step in iter_turns(TABLES, seed, 0, n_seats=4):
            if step.played % every == 0:
                yield step.state, step.board


def test_single_step_moves_cost_one_move_as_the_path_search_finds():
    checked = 0
    for st, board in _positions():
        st = copy_state(st)
        for u in range(int(st.n_units[0])):
            here = int(st.unit_tile[u])
            seat = int(st.unit_owner[u])
            if here < 0 or seat < 0:
                continue
            st.unit_moves_left[u] = max(int(st.unit_moves_left[u]), 1)
            for m in board.neighbours[here]:
                if m < 0 or st.tile_unit[m] >= 0 or \
                        not TB.terrain_passable[st.tile_terrain[m]]:
                    continue
                site = st.tile_site[m]
                if site >= 0 and st.city_owner[site] != seat:
                    continue
                assert path_length(st, TB, board, np.int64(u), np.int64(m),
                                   np.int64(seat)) == 1
                checked += 1
    assert checked > 500


def _plain_best_site(st, board, from_tile, tile_city):
    """best_site's rule as a plain scan: every tile against every city (T07)."""
    passable = TB.terrain_passable
    cities = [int(t) for t in st.city_tile[: st.n_cities[0]] if t >= 0]
    best, best_v = -1, None
    for t in range(board.n_tiles):
        if not passable[st.tile_terrain[t]] or tile_city[t] >= 0:
            continue
        d = int(board.distance[from_tile, t])
        if d > AI.site_search_radius:
            continue
        if any(board.distance[t, c] < TB.city_min_distance for c in cities):
            continue
        v = 0
        for m in board.disc[t, : DISC_SIZES[AI.site_ring_radius]]:
            if m >= 0 and passable[st.tile_terrain[m]]:
                v += AI.site_tile_value + (AI.site_node_value if st.tile_node[m] >= 0 else 0)
        v -= AI.site_distance_cost * d
        if best_v is None or v > best_v:
            best, best_v = t, v
    if best < 0:
        return -1, 0
    steps = {best: 0}
    queue = deque([best])
    while queue:
        t = queue.popleft()
        for m in board.neighbours[t]:
            if m >= 0 and m not in steps and passable[st.tile_terrain[m]]:
                steps[int(m)] = steps[t] + 1
                queue.append(int(m))
    return (best, steps[from_tile]) if from_tile in steps else (-1, 0)


def test_t07_best_site_equals_the_plain_scan():
    checked = 0
    for st, board in _positions(every=9):
        tile_city = regions(st, TB, board)
        path = new_path_table(board.n_tiles)
        crowded = crowded_tiles(st, TB, board)
        cities = [int(t) for t in st.city_tile[: st.n_cities[0]] if t >= 0]
        want = [int(any(board.distance[t, c] < TB.city_min_distance for c in cities))
                for t in range(board.n_tiles)]
        assert crowded[: board.n_tiles].tolist() == want
        froms = {int(t) for t in st.city_tile[: st.n_cities[0]] if t >= 0}
        froms |= {int(t) for t in st.unit_tile[: st.n_units[0]] if t >= 0}
        for f in sorted(froms)[::3]:
            got = best_site(st, TB, AI, board, path, np.int64(0), np.int64(f), tile_city)
            assert (int(got[0]), int(got[1])) == _plain_best_site(st, board, f, tile_city)
            checked += 1
    assert checked > 100


def test_city_yields_are_the_plain_economy_rule_per_yield():
    """city_yields (C: Economy) gives its four yields as a tuple, not an array (flow_income
    asks for every city every turn): on played positions each equals the plain rule
    (base + per-population × population, the city's nodes for the node kinds, its
    buildings' yields) and city_yield's one yield, in sim.rules.codes.YIELDS order."""
    from sim.kernels.rules.cities import city_yield, city_yields
    from sim.kernels.rules.territory import node_income
    from sim.rules.codes import N_NODE_KINDS, N_YIELDS

    checked = 0
    for st, board in _positions(every=20):
        tile_city = regions(st, TB, board)
        nodes = node_income(tile_city, st.tile_node, st.city_tile.shape[0], TB.node_yield)
        for c in range(int(st.n_cities[0])):
            if st.city_tile[c] < 0:
                continue
            got = city_yields(st, TB, np.int64(c), nodes)
            assert len(got) == N_YIELDS
            pop = int(st.city_pop[c])
            for k in range(N_YIELDS):
                plain = int(TB.yield_base[k]) + int(TB.yield_per_population[k]) * pop
                plain += int(nodes[c, k]) if k < N_NODE_KINDS else 0
                plain += sum(int(TB.building_yield[b, k])
                             for b in range(TB.building_cost.shape[0])
                             if st.city_buildings[c, b])
                assert got[k] == plain == city_yield(st, TB, np.int64(c), nodes, np.int64(k))
                checked += 1
    assert checked > 200


def test_regions_and_scores_are_territory_and_scores_own():
    """The AI's read of regions and scores (T08, T10, T13), with no ranks, gives
    territory_and_scores' region map and scores."""
    from sim.kernels.rules.standings import regions_and_scores, territory_and_scores

    checked = 0
    for st, board in _positions(every=10):
        tile_city, score = regions_and_scores(st, TB, board)
        full_tiles, _terms, _counts, full_score, _rank = territory_and_scores(st, TB, board)
        assert np.array_equal(tile_city, full_tiles)
        assert np.array_equal(score, full_score)
        checked += 1
    assert checked > 20

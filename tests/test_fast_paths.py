"""Shortcuts the engine takes for speed, each proven equal to the plain rule it skips,
on positions of played matches:

- a one-step move (sim.kernels.rules.commands.move_unit) costs 1 move without the
  path search: path_length finds every legal single step at 1;
- founding sites (sim.kernels.ai.sites.best_site, T07) mark the tiles too close to a
  city from each city's disc: the best site is the one a plain scan of every tile
  against every city picks;
- a match hands its board and buffers on without owner records (sim.jit.unowned): the
  view reads and writes the array itself. That the fast path so plays the same match
  as `iter_turns`, which hands them on owned, is tests/test_match.py's.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from sim.engine.match import iter_turns, new_path_table
from sim.jit import local_empty, njit
from sim.kernels.ai.sites import best_site, crowded_tiles
from sim.kernels.loop import unowned_inputs
from sim.kernels.rules.commands import path_length
from sim.kernels.rules.common import regions
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


@njit
def _summary(a, out, k):
    out[k, 0] = a.shape[0]
    out[k, 1] = a.sum()
    out[k, 2] = (a * np.arange(a.shape[0])).sum()


@njit
def _through_unowned(board, path):
    """Every array of the board and the path table through unowned views: each view's
    size and two checksums of its values; a write through the path view."""
    b, _rng, p, _log, _scratch, _state, _scratch_bytes, _uncopied = unowned_inputs(
        board, path[0], path, path, path[0], path[0].view(np.uint8), path[0].view(np.uint8),
        path[0])
    p[1, 2] = 7
    out = np.zeros((7, 3), dtype=np.int64)
    _summary(b.q, out, 0)
    _summary(b.r, out, 1)
    _summary(b.index_of.ravel(), out, 2)
    _summary(b.neighbours.ravel(), out, 3)
    _summary(b.distance.ravel(), out, 4)
    _summary(b.disc.ravel(), out, 5)
    _summary(p.ravel(), out, 6)
    return b.radius, out


def test_unowned_views_are_the_arrays_themselves():
    board = _positions_board()
    path = new_path_table(board.n_tiles)
    radius, got = _through_unowned(board, path)
    assert path[1, 2] == 7   # the write went to the caller's table
    want = np.array([[a.size, a.sum(), (a.ravel() * np.arange(a.size)).sum()]
                     for a in (board.q, board.r, board.index_of, board.neighbours,
                               board.distance, board.disc, path)])
    assert radius == board.radius
    np.testing.assert_array_equal(got, want)


def _positions_board():
    return next(_positions(seeds=range(1), every=1))[1]


def test_city_yields_are_the_plain_economy_rule_per_yield():
    """city_yields (C: Economy) gives its four yields as a tuple, not an array (flow_income
    asks for every city every turn): on played positions each equals the plain rule
    (base + per-population × population, the city's nodes for the node kinds, its
    buildings' yields) and city_yield's one yield, in sim.rules.codes.YIELDS order."""
    from sim.kernels.rules.common import city_yield, city_yields
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


# --- scratch on the stack (sim.jit.local_empty) -----------------------------------------

def _local_empty_uses():
    """(module, function node, call node) of every local_empty call under sim/kernels."""
    import ast
    from pathlib import Path

    import sim.kernels

    for path in sorted(Path(sim.kernels.__file__).parent.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Call) and "local_empty" in (
                        getattr(node.func, "id", None), getattr(node.func, "attr", None)):
                    yield path.name, fn, node


def test_stack_scratch_is_used_only_where_it_cannot_outlive_its_frame():
    """local_empty's array lives on its caller's stack: the caller must not be numba-
    inlined (its stack space would land in the caller's caller, once per call of a
    loop), must not call it inside a loop (each pass would take more stack) and must
    not return the array."""
    import ast

    uses = list(_local_empty_uses())
    assert len({(m, fn.name) for m, fn, _ in uses}) >= 6
    for module, fn, call in uses:
        where = f"{module}:{fn.name}"
        for deco in fn.decorator_list:
            assert "inline" not in ast.unparse(deco), where
        loops = [n for n in ast.walk(fn) if isinstance(n, ast.For | ast.While)]
        assert not any(call in list(ast.walk(loop)) for loop in loops), where
        names = {t.id for n in ast.walk(fn) if isinstance(n, ast.Assign) and n.value is call
                 for t in n.targets if isinstance(t, ast.Name)}
        assert names, f"{where}: the scratch is not held in a name"
        # views of it are the scratch too: a slice, a reshape, a name bound to either
        grown = True
        while grown:
            grown = False
            for n in ast.walk(fn):
                if isinstance(n, ast.Assign) and _view_of(n.value, names):
                    new = {t.id for t in n.targets if isinstance(t, ast.Name)} - names
                    names |= new
                    grown = grown or bool(new)
        for ret in (n for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value):
            # the names a return hands back (itself, a slice, a tuple's items), not
            # those only read by a call whose answer is returned
            assert not names & set(_returned_names(ret.value)), where


def _view_of(node, names):
    """Whether `node` is one of `names`, or a slice, reshape or view of one."""
    import ast

    if isinstance(node, ast.Name):
        return node.id in names
    if isinstance(node, ast.Subscript):
        return _view_of(node.value, names)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in ("reshape", "view", "ravel", "T"):
        return _view_of(node.func.value, names)
    return False


def _returned_names(node):
    import ast

    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        yield from _returned_names(node.func.value)   # x.reshape(...) hands x back
    elif not isinstance(node, ast.Call):
        for child in ast.iter_child_nodes(node):
            yield from _returned_names(child)


@njit
def _stack_scratch_sum(n):
    a = local_empty(n)
    for i in range(n):
        a[i] = i
    return a[1:].sum()


@njit
def _many_stack_scratches(calls):
    total = 0
    for k in range(calls):
        total += _stack_scratch_sum(500 + k % 7)
    return total


def test_stack_scratch_holds_its_values_and_leaves_no_stack_behind():
    """Values written are read back (a view of it too); 200,000 calls of a function
    that takes 4 KB of stack each, from one compiled loop, finish (the stack space is
    given back at each return)."""
    assert _stack_scratch_sum(np.int64(10)) == 45
    assert _stack_scratch_sum(np.int64(0)) == 0
    calls = 200_000
    expect = sum((n * (n - 1)) // 2 for n in (500 + k % 7 for k in range(7)))
    assert _many_stack_scratches(np.int64(calls)) == \
        expect * (calls // 7) + sum((n * (n - 1)) // 2 for n in (500 + k % 7 for k in
                                                              range(calls % 7)))


def test_regions_and_scores_are_territory_and_scores_own():
    """The AI's read of regions and scores (T08, T10, T13), with the terms and counts on
    its stack and no ranks, gives territory_and_scores' region map and scores."""
    from sim.kernels.rules.common import regions_and_scores, territory_and_scores

    checked = 0
    for st, board in _positions(every=10):
        tile_city, score = regions_and_scores(st, TB, board)
        full_tiles, _terms, _counts, full_score, _rank = territory_and_scores(st, TB, board)
        assert np.array_equal(tile_city, full_tiles)
        assert np.array_equal(score, full_score)
        checked += 1
    assert checked > 20

"""Hex board topology, the counter-based generator and seeded map generation (C: Map, T07)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_

from sim.engine.check import check_invariants
from sim.engine.match import new_match
from sim.kernels.rules.standings import regions
from sim.world.board import DIRECTIONS, disc_size, hex_distance, make_board
from sim.world.rng import (
    Purpose,
    below,
    draw_key,
    keyed_below,
    keyed_weighted,
    new_state,
    next_u64,
    stream_seed,
    weighted,
)
from tests.reference import engine as ref


@pytest.mark.parametrize("radius", [1, 2, 5, 9])
def test_board_indexing_neighbours_and_distance(radius):
    board = make_board(radius)
    assert board.n_tiles == 3 * radius * (radius + 1) + 1
    for t in range(board.n_tiles):
        q, r = board.axial(t)
        assert board.index(q, r) == t
        for k, (dq, dr) in enumerate(DIRECTIONS):
            n = board.neighbours[t, k]
            if n < 0:
                assert board.index(q + dq, r + dr) == -1
            else:
                assert board.axial(n) == (q + dq, r + dr)
                assert board.distance[t, n] == 1
    a, b = board.n_tiles // 3, board.n_tiles - 1
    assert board.distance[a, b] == hex_distance(*board.axial(a), *board.axial(b))
    assert board.index(radius + 1, 0) == -1


def test_disc_lists_tiles_nearest_first():
    board = make_board(6)
    centre = board.index(0, 0)
    for r in range(4):
        ring = board.disc[centre, : disc_size(r)]
        assert sorted(board.distance[centre, ring]) == list(board.distance[centre, ring])
        assert set(ring) == {t for t in range(board.n_tiles) if board.distance[centre, t] <= r}
    edge = board.index(6, 0)
    inside = [t for t in board.disc[edge, :19] if t >= 0]
    assert len(inside) == sum(1 for t in range(board.n_tiles) if board.distance[edge, t] <= 2)


def test_streams_are_distinct_and_stable():
    a = stream_seed(42, 0, Purpose.MAP)
    assert a == stream_seed(42, 0, Purpose.MAP)
    seeds = {stream_seed(42, m, p) for m in range(50) for p in Purpose}
    assert len(seeds) == 50 * len(Purpose)
    with pytest.raises(ValueError):
        stream_seed(-1, 0, Purpose.MAP)


def test_splitmix64_matches_a_plain_python_replay():
    seed = stream_seed(1, 2, Purpose.AI)
    state = new_state(seed)
    mask = (1 << 64) - 1
    x = seed
    for _ in range(20):
        x = (x + 0x9E3779B97F4A7C15) & mask
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        assert int(next_u64(state)) == z ^ (z >> 31)


def test_below_and_weighted_are_in_range_and_unbiased_enough():
    state = new_state(123)
    draws = np.array([below(state, 6) for _ in range(6000)])
    assert draws.min() == 0 and draws.max() == 5
    assert np.all(np.abs(np.bincount(draws) - 1000) < 150)
    w = np.array([0, 3, 1], dtype=np.int64)
    picks = np.array([weighted(state, w) for _ in range(4000)])
    assert not np.any(picks == 0)
    assert 2700 < (picks == 1).sum() < 3300


@settings(deadline=None, max_examples=200)
@given(st_.integers(0, (1 << 64) - 1), st_.integers(0, 5000), st_.integers(0, 10),
       st_.integers(-1, 3000), st_.integers(1, (1 << 63) - 1))
def test_keyed_draws_equal_the_plain_reference(stream, turn, purpose, subject, n):
    """draw_key and keyed_below (issue 44) against tests.reference's integer versions,
    over every key and any range up to 2^63: floor(top 32 bits × n / 2^32), in [0, n)."""
    key = draw_key(np.uint64(stream), np.int64(turn), np.int64(purpose), np.int64(subject))
    assert int(key) == ref.draw_key(stream, turn, purpose, subject)
    got = int(keyed_below(np.uint64(key), np.int64(n)))
    assert got == ref.keyed_below(int(key), n)
    assert 0 <= got < n


def test_keyed_draws_are_uniform_and_each_key_its_own():
    """Over many subjects a keyed draw is uniform; changing any part of the key gives
    another draw; the weighted draw follows its weights."""
    def key(stream: int, turn: int, purpose: int, subject: int) -> np.uint64:
        # numba hands a uint64 back as a Python int; give it back as a uint64
        return np.uint64(draw_key(np.uint64(stream), np.int64(turn), np.int64(purpose),
                                  np.int64(subject)))

    draws = np.array([keyed_below(key(9, 4, 1, c), np.int64(6)) for c in range(6000)])
    assert np.all(np.abs(np.bincount(draws, minlength=6) - 1000) < 150)
    keys = {int(key(s, t, p, c))
            for s in range(3) for t in range(3) for p in range(3) for c in range(-1, 2)}
    assert len(keys) == 81
    w = np.array([0, 3, 1], dtype=np.int64)
    picks = np.array([keyed_weighted(key(1, 2, 3, c), w) for c in range(4000)])
    assert not np.any(picks == 0)
    assert 2700 < (picks == 1).sum() < 3300


@pytest.mark.parametrize("seed", range(12))
def test_generated_maps_are_legal(seed, tables):
    """C: Map — connected passable land, nodes on passable tiles, starts far apart
    and off the edge, villages and cities >= 4 apart (T07), camps on free land."""
    state, board = new_match(tables, seed)
    tb = tables.arrays()
    n = board.n_tiles
    terrain = state.tile_terrain[:n]
    passable = tb.terrain_passable[terrain].astype(bool)
    start = int(np.flatnonzero(passable)[0])
    seen = {start}
    stack = [start]
    while stack:
        t = stack.pop()
        for m in board.neighbours[t]:
            if m >= 0 and passable[m] and m not in seen:
                seen.add(int(m))
                stack.append(int(m))
    assert len(seen) == passable.sum()
    assert np.all(passable[state.tile_node[:n] >= 0])
    node_share = (state.tile_node[:n] >= 0).sum() / passable.sum()
    assert 0.05 < node_share < 0.30
    cities = [int(t) for t in state.city_tile if t >= 0]
    seats = tables.model.match.seats
    assert len(cities) == seats * (1 + tables.model.map.villages_per_seat)
    for i, a in enumerate(cities):
        for b in cities[:i]:
            assert board.distance[a, b] >= tb.city_min_distance
    centre = board.index(0, 0)
    for c in range(seats):
        assert board.distance[centre, state.city_tile[c]] <= board.radius - tb.start_edge_margin
        assert (regions(state, tb, board) == c).sum() == 7
    starts = state.city_tile[:seats]
    nearest = min(board.distance[a, b] for i, a in enumerate(starts) for b in starts[:i])
    assert nearest >= 7  # two grown rings (2 + 2) and a founding gap between any two starts
    camps = [int(t) for t in state.camp_tile if t >= 0]
    assert len(camps) == seats * tables.model.map.camps_per_seat
    for t in camps:
        assert passable[t] and state.tile_site[t] < 0
        assert min(board.distance[t, c] for c in cities) >= tb.camp_min_distance
    assert check_invariants(state, tables, board) == []


def test_map_is_a_pure_function_of_the_seed(tables):
    a, _ = new_match(tables, 5)
    b, _ = new_match(tables, 5)
    c, _ = new_match(tables, 6)
    assert a.tobytes() == b.tobytes()
    assert not np.array_equal(a.tile_terrain, c.tile_terrain)


def test_map_does_not_depend_on_a_variant(tables):
    """Common random numbers: a balance override that does not touch the map
    leaves match i's map unchanged."""
    variant = tables.with_overrides({"score.gold_per_point": 3, "revolt.transfer_turns": 5})
    a, _ = new_match(tables, 9, match_index=3)
    b, _ = new_match(variant, 9, match_index=3)
    assert np.array_equal(a.tile_terrain, b.tile_terrain)
    assert np.array_equal(a.city_tile, b.city_tile)

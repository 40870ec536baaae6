"""D1: start tiles are chosen first, balanced within the table tolerance, spaced by
T07, and dealt to the seats by a permutation from the map stream."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from scipy.stats import chisquare

from sim.engine.match import MapError, new_match, play_match
from sim.kernels.world.starts import choose_starts, start_worth
from sim.rules.tables import load_tables
from sim.world.rng import new_state

TABLES = load_tables()


def _worths(state, board, tb) -> list[int]:
    n = int(state.n_seats[0])
    terrain = state.tile_terrain[: board.n_tiles]
    node = state.tile_node[: board.n_tiles]
    return [int(start_worth(state.city_tile[state.seat_capital[s]], terrain, node,
                            board.distance, tb))
            for s in range(n)]


@pytest.mark.parametrize("n_seats", [2, 3, 4, 6])
def test_d1_t07_starts_are_spaced_and_balanced_within_the_tolerance(n_seats):
    tb = TABLES.arrays()
    for i in range(40):
        state, board = new_match(TABLES, seed=31, match_index=i, n_seats=n_seats)
        capitals = [int(state.city_tile[state.seat_capital[s]]) for s in range(n_seats)]
        spacing = min(board.distance[a, b] for a in capitals for b in capitals if a != b)
        assert spacing >= tb.city_min_distance
        worths = _worths(state, board, tb)
        mean = sum(worths) / n_seats
        assert min(worths) * 100 >= mean * (100 - tb.start_tolerance_pct), (i, worths)


def test_d1_the_same_starts_are_dealt_to_the_seats_by_the_map_stream():
    """Same map, other map streams: the same set of start tiles, each seat receiving
    each of them about equally often (no seat index inherits the sampling order)."""
    state, board = new_match(TABLES, seed=5, match_index=0, n_seats=3)
    tb = TABLES.arrays()
    n = board.n_tiles
    terrain = state.tile_terrain[:n].copy()
    key = np.arange(n, dtype=np.int64)[::-1].copy()
    centre = n // 2
    inner = board.distance[centre, 0] - tb.start_edge_margin
    passable = tb.terrain_passable[terrain].astype(bool)
    allowed = passable & (board.distance[centre] <= inner)
    first_ok = allowed & (board.distance[centre] * 2 >= inner)
    seats_of: dict[int, Counter] = {}
    sets = set()
    for seed in range(600):
        node = state.tile_node[:n].copy()
        starts = choose_starts(new_state(seed), terrain, node, key, allowed, first_ok,
                               board.distance, np.int64(3), tb)
        sets.add(frozenset(int(t) for t in starts))
        for seat, tile in enumerate(starts):
            seats_of.setdefault(int(tile), Counter())[seat] += 1
    assert len(sets) == 1, "the set of start tiles must not depend on the dealing"
    for tile, counts in seats_of.items():
        assert chisquare([counts[s] for s in range(3)]).pvalue > 1e-3, (tile, counts)


def test_d1_a_map_with_no_room_for_the_starts_is_an_error_never_a_match():
    """Tables validated for 2 seats, played at 6 on a board whose start disc (radius 5
    less a margin of 2: 37 tiles) cannot hold 6 tiles 4 steps apart: the match raises
    MapError with one clear line instead of playing a broken map."""
    small = TABLES.with_overrides({"map.radius": 5, "match.seats": 2})
    assert play_match(small, seed=1, n_seats=2)[0].finished[0]
    with pytest.raises(MapError, match="no room for 6 starts 4 steps apart"):
        play_match(small, seed=1, n_seats=6)


def test_d1_the_map_error_names_the_board_the_match_played():
    """A short match plays the short board (map.radius × radius_scale_pct.short, D6):
    the error names that board's radius and key, not map.radius alone (radius 9 at 67 %
    is a radius-6 board, too small for 6 starts)."""
    small = TABLES.with_overrides({"match.radius_scale_pct.short": 67})
    with pytest.raises(MapError, match=r"the short board \(radius 6\) has no room for 6 "
                       r"starts.*match\.radius_scale_pct\.short"):
        play_match(small, seed=7100, match_index=2, n_seats=6, length="short")


def test_d1_tables_check_refuses_a_map_that_cannot_hold_the_starts():
    from sim.rules.tables import TablesError

    with pytest.raises(TablesError, match=r"map\.terrain_weights: too little passable land"):
        TABLES.with_overrides({"map.terrain_weights.water": 1_000_000})
    with pytest.raises(TablesError, match=r"map\.radius: no room for 4 starts"):
        TABLES.with_overrides({"map.radius": 5})


def test_d1_start_balance_reports_the_worth_map_generation_used():
    from sim.engine.report import start_balance

    tb = TABLES.arrays()
    state, board = new_match(TABLES, seed=7, match_index=3, n_seats=4)
    rows = start_balance(state, TABLES, board)
    assert [r["worth"] for r in rows] == _worths(state, board, tb)
    assert all(r["nearest_rival"] >= tb.city_min_distance for r in rows)
    assert all(r["land"] >= r["nodes"] >= r["food"] >= 0 for r in rows)

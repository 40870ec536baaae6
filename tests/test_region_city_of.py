"""T08: the one-tile owner lookup healing uses (D3) equals the whole-board regions."""

from __future__ import annotations

import numpy as np

from sim.engine.match import iter_turns
from sim.kernels.rules.standings import regions
from sim.kernels.rules.territory import Rings, region_city_of
from sim.rules.tables import load_tables
from tests.conftest import FIXTURE_TABLES


def test_t08_region_city_of_matches_resolve_regions_on_played_positions():
    tables = load_tables(FIXTURE_TABLES)
    tb = tables.arrays()
    rings = Rings(tb.ring_radius, tb.grown_ring_radius, tb.grown_ring_population)
    checked = 0
    for seed in range(6):
        for step in iter_turns(tables, seed, 0, n_seats=4):
            if step.played % 15:
                continue
            st, board = step.state, step.board
            want = regions(st, tb, board)
            got = [region_city_of(board.distance, st.city_tile, st.city_owner, st.city_pop,
                                  st.tile_bought_by, np.int64(t), rings)
                   for t in range(board.n_tiles)]
            assert got == want.tolist(), (seed, step.played)
            checked += int((want >= 0).sum())
    assert checked > 1000

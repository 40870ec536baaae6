"""D6: each match-length preset carries a cost scale; AI timings are fractions of the
match length."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from sim.kernels.ai.threats import war_time
from sim.rules.record import SPEED_SCALED, scaled_cost
from sim.rules.tables import TablesError, load_tables
from sim.world.state import empty_state

TABLES = load_tables()


@pytest.mark.parametrize("preset", ["short", "standard", "long"])
def test_d6_research_production_and_growth_costs_follow_the_preset(preset):
    pct = TABLES.model.match.cost_scale_pct[preset]
    base = TABLES.arrays("standard")
    scaled = TABLES.arrays(preset)
    assert TABLES.model.match.cost_scale_pct["standard"] == 100
    for name in SPEED_SCALED:
        want = np.maximum((np.asarray(base[name]) * pct + 50) // 100, 1)
        assert np.array_equal(np.asarray(scaled[name]), want), (preset, name)
    # everything else is the same record
    for name in base.dtype.names:
        if name not in SPEED_SCALED:
            assert np.array_equal(np.asarray(base[name]), np.asarray(scaled[name])), name


def test_d6_short_matches_cost_less_than_long_ones():
    short, long = TABLES.arrays("short"), TABLES.arrays("long")
    assert (short.tech_cost < long.tech_cost).all()
    assert (short.building_cost <= long.building_cost).all()
    assert short.growth_base < long.growth_base


def test_d6_scaled_costs_round_half_up_and_keep_a_positive_cost_positive():
    assert scaled_cost(np.array([0, 1, 5, 15]), 60).tolist() == [0, 1, 3, 9]
    assert scaled_cost(7, 150) == 11


def test_d6_every_preset_needs_a_cost_scale(tmp_path):
    text = Path(TABLES.source).read_text()
    head, sep, tail = text.partition("[match.cost_scale_pct]")
    path = tmp_path / "tables.toml"
    path.write_text(head + sep + re.sub(r"(?m)^long = .*\n", "", tail, count=1))
    with pytest.raises(TablesError, match=r"match\.cost_scale_pct: needs one value per length"):
        load_tables(path)


@pytest.mark.parametrize("last_turn", [60, 100, 150])
def test_d6_war_starts_at_a_fraction_of_the_match_length(last_turn):
    tb = TABLES.arrays()
    st = empty_state(10, 2, len(TABLES.tech_names), len(TABLES.building_names))
    st.last_turn[0] = last_turn
    first = next(t for t in range(1, last_turn + 1)
                 if t * 100 >= last_turn * tb.ai[0].war_turn_pct)
    for turn, expected in ((first - 1, False), (first, True)):
        st.turn[0] = turn
        assert war_time(st, tb.ai[0]) is expected

"""Dose-response curves (issue 13): points along one key, paired steps, the cliff,
the band range, and the report section they make."""

from __future__ import annotations

import polars as pl
import pytest

from sim.analysis import charts
from sim.analysis.dose import curves_of, dose_response

# science wins of 100 matches at each Prosperity cost: a slope, then a cliff 600 -> 800
SCIENCE_WINS = {400: 40, 500: 34, 600: 28, 800: 2}


def _matches() -> pl.DataFrame:
    rows = []
    ids = {500: "baseline", 400: "cost-400", 600: "cost-600", 800: "cost-800"}
    for cost, vid in ids.items():
        for i in range(100):
            # match i wins by science at every cost below its own threshold: nested,
            # so a dearer Prosperity only ever takes science wins away (paired)
            victory = "science" if i < SCIENCE_WINS[cost] else \
                ("conquest" if i % 3 == 0 else "dominance" if i % 3 == 1 else "turn_limit")
            rows.append({"variant": vid, "match_index": i, "victory": victory,
                         "winner": i % 4, "end_turn": 80})
    for i in range(100):   # a variant overriding two keys makes no point of the curve
        rows.append({"variant": "two-keys", "match_index": i, "victory": "conquest",
                     "winner": 0, "end_turn": 80})
    return pl.DataFrame(rows)


PROVENANCE = {"baseline": "baseline", "variants": [
    {"id": "baseline", "overrides": {}, "tables": {"techs": {"prosperity": {"cost": 500}}}},
    {"id": "cost-400", "overrides": {"techs.prosperity.cost": 400}},
    {"id": "cost-600", "overrides": {"techs.prosperity.cost": 600}},
    {"id": "cost-800", "overrides": {"techs.prosperity.cost": 800}},
    {"id": "two-keys", "overrides": {"techs.prosperity.cost": 900, "score.w_region": 2}}]}


def test_curve_points_are_the_single_key_variants_and_the_baseline_in_value_order():
    assert curves_of(PROVENANCE) == {"techs.prosperity.cost": [
        (400, "cost-400"), (500, "baseline"), (600, "cost-600"), (800, "cost-800")]}
    # a baseline that overrides something is not a point at the base value, and two
    # points are no curve (one paired comparison, which the report shows anyway)
    prov = {**PROVENANCE, "variants": [{**PROVENANCE["variants"][0],
                                        "overrides": {"score.w_region": 2}},
                                       *PROVENANCE["variants"][1:]]}
    assert curves_of(prov) == {"techs.prosperity.cost": [(400, "cost-400"),
                                                         (600, "cost-600"),
                                                         (800, "cost-800")]}
    assert curves_of({**prov, "variants": prov["variants"][:3]}) == {}


def test_points_steps_cliff_and_band():
    points, steps, band = dose_response(_matches(), PROVENANCE)
    science = points.filter(pl.col("victory") == "science").sort("value")
    assert science.get_column("share").to_list() == [0.40, 0.34, 0.28, 0.02]
    assert (science.get_column("lo") < science.get_column("share")).all()
    s = steps.filter(pl.col("victory") == "science").sort("from_value")
    assert s.get_column("difference").to_list() == pytest.approx([-0.06, -0.06, -0.26])
    assert s.get_column("slope").to_list() == pytest.approx([-0.0006, -0.0006, -0.0013])
    # the steepest step per unit of the key is the cliff, and only it
    assert s.get_column("cliff").to_list() == [False, False, True]
    assert s.filter(pl.col("cliff")).item(0, "p_value") < 1e-6
    # nested wins: every discordant pair goes one way, so the paired interval excludes 0
    assert (s.get_column("hi") < 0).all()
    in_band = band.filter(pl.col("in_band")).get_column("value").to_list()
    # science at 2 % leaves its 10-45 % band; the turn limit stays under 30 % throughout
    assert 800.0 not in in_band and in_band == [400.0, 500.0, 600.0]
    spec = charts.dose_response(points, "techs.prosperity.cost").to_dict()
    assert spec["title"] == "Victory mix along techs.prosperity.cost"

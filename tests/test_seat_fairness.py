"""D1: the seat-fairness table (win rate by seat, Wilson intervals, chi-square test)."""

from __future__ import annotations

import polars as pl
import pytest
from scipy.stats import chisquare

from sim.analysis.seats import seat_fairness


def _frames(winners: list[int | None], n_seats: int, variant: str = "v"):
    matches = pl.DataFrame({"variant": [variant] * len(winners),
                            "match_id": [f"m{i}" for i in range(len(winners))],
                            "seats": [n_seats] * len(winners), "winner": winners},
                           schema={"variant": pl.Utf8, "match_id": pl.Utf8, "seats": pl.Int64,
                                   "winner": pl.Int64})
    seats = pl.DataFrame([{"variant": variant, "match_id": f"m{i}", "seat": s,
                           "winner": w == s}
                          for i, w in enumerate(winners) for s in range(n_seats)])
    return matches, seats


def test_d1_equal_wins_are_fair_and_a_favoured_seat_is_not():
    even = [i % 3 for i in range(300)]
    table = seat_fairness(*_frames(even, 3))
    assert table.get_column("wins").to_list() == [100, 100, 100]
    assert table.get_column("p_value").to_list() == pytest.approx([1.0] * 3)
    assert table.get_column("fair").all()
    biased = [0] * 140 + [1] * 120 + [2] * 40  # 47 / 40 / 13 %
    table = seat_fairness(*_frames(biased, 3))
    expected = chisquare([140, 120, 40]).pvalue
    assert table.get_column("p_value")[0] == pytest.approx(expected)
    assert not table.get_column("fair").any()
    row = table.row(2, named=True)
    assert row["rate"] == pytest.approx(40 / 300) and row["lo"] < row["rate"] < row["hi"]


def test_d1_matches_without_a_winner_are_left_out_and_groups_are_per_seat_count():
    m3, s3 = _frames([0, 1, 2, None], 3, "v")
    m4, s4 = _frames([0, 1, 2, 3, 3], 4, "v")
    m4 = m4.with_columns(pl.col("match_id") + "b")
    s4 = s4.with_columns(pl.col("match_id") + "b")
    table = seat_fairness(pl.concat([m3, m4]), pl.concat([s3, s4]))
    by = {(r["seats_n"], r["seat"]): r for r in table.iter_rows(named=True)}
    assert by[(3, 0)]["decided"] == 3 and by[(3, 0)]["wins"] == 1
    assert by[(4, 3)]["decided"] == 5 and by[(4, 3)]["wins"] == 2
    assert len(table) == 7


def test_d1_a_sweep_naming_no_personalities_rotates_the_tables_own(tmp_path):
    from sim.runner.chunk import personalities_for, settings_for
    from sim.runner.experiments import load_experiment
    from tests.conftest import FIXTURE_TABLES

    path = tmp_path / "x.toml"
    path.write_text(f'name = "x"\ntables = "{FIXTURE_TABLES}"\nroot_seed = 1\nmatches = 8\n'
                    'seats = 3\n[[variants]]\nname = "baseline"\n')
    experiment = load_experiment(path)
    settings = settings_for(experiment, tmp_path / "run")
    base = list(experiment.variants[0].tables.model.match.personalities)
    seen = {(s, personalities_for(settings, i)[s]) for i in range(len(base)) for s in range(3)}
    assert seen == {(s, p) for s in range(3) for p in base}

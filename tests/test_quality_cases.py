"""The game-quality metrics and the mechanism explainer on known cases, from a real
sweep (issue 45, item 4): doubling the truce length must rank a truce mechanism
first, a Granary ten times dearer must rank Granaries built first, and a variant that
ends matches early must move the duration and the decisive turn down.

The sweep plays tests/fixtures/tables-2026-12-07.toml, the default tables of that
day frozen (tests/fixtures/tables.toml is an older game, in which truces and wars
are too rare to test this): 60 standard 4-seat matches per variant, about 15 s on
this machine under load."""

from __future__ import annotations

import polars as pl
import pytest

from sim.analysis import mechanisms, quality
from sim.analysis.load import load_run
from tests.conftest import TESTS

TABLES = TESTS / "fixtures" / "tables-2026-12-07.toml"

EXPERIMENT = f"""
name = "quality-cases"
tables = "{TABLES}"
root_seed = 45
matches = 60
seats = 4
length = "standard"
personalities = ["balanced", "conqueror", "scholar", "merchant"]
chunk_size = 30
baseline = "baseline"

[[variants]]
name = "baseline"

[[variants]]
name = "truce-double"
set = {{ "diplomacy.truce_turns" = 60 }}

[[variants]]
name = "granary-dear"
set = {{ "buildings.granary.cost" = 250 }}

[[variants]]
name = "ends-early"
set = {{ "match.lengths.standard" = 50 }}
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from sim.rules.tables import load_tables
    from sim.runner.experiments import load_experiment
    from sim.runner.sweep import run_sweep

    tables = load_tables(TABLES)  # the frozen copy is still what the variants change
    assert tables.data["diplomacy"]["truce_turns"] == 30
    assert tables.data["buildings"]["granary"]["cost"] == 25
    tmp = tmp_path_factory.mktemp("quality-cases")
    path = tmp / "exp.toml"
    path.write_text(EXPERIMENT)
    out = tmp / "run"
    run_sweep(load_experiment(path), out, jobs=1, progress=False)
    return load_run(out)


@pytest.fixture(scope="module")
def changes(run):
    counts = mechanisms.mechanism_counts(run.events, run.matches, run.variants, run.root)
    return mechanisms.mechanism_changes(counts, "baseline")


def test_the_report_s_sliced_mechanism_changes_are_the_whole_table_s(run, changes):
    """run_mechanism_changes (what the report calls: a few matches at a time, never the
    table of every match × mechanism) gives exactly mechanism_changes of
    mechanism_counts, read from the lazy scan in slices of 7 matches (issue 46)."""
    from polars.testing import assert_frame_equal

    from sim.analysis.load import scan_table

    assert run.matches.height > 7 * 2
    sliced = mechanisms.run_mechanism_changes(scan_table(run.root, "events"), run.matches,
                                              run.variants, "baseline", run.root, size=7)
    assert_frame_equal(sliced, changes, check_exact=True)
    assert {"truce offers", "granary built"} <= set(sliced.get_column("mechanism"))


def _top(changes: pl.DataFrame, variant: str) -> dict:
    return changes.filter(pl.col("variant") == variant).row(0, named=True)


def test_doubling_the_truce_length_ranks_a_truce_mechanism_first(changes):
    top = _top(changes, "truce-double")
    assert top["mechanism"] in ("truce turns", "truce", "truce offers"), top
    assert top["changed"] and top["rank"] == 1
    # truces are offers (D9): a truce twice as long is worth more to both sides, so
    # fewer are offered and signed; the ranking names that change, with its sign
    assert top["hi"] < 0 or top["lo"] > 0


def test_a_granary_ten_times_dearer_ranks_granaries_built_first(changes):
    top = _top(changes, "granary-dear")
    assert (top["mechanism"], top["rank"], top["changed"]) == ("granary built", 1, True)
    assert top["hi"] < 0 and top["relative"] < -0.5


def test_a_variant_that_ends_matches_early_moves_duration_and_decisive_turn_down(run):
    table = quality.quality_table(run.turns, run.matches, run.seats)
    tests = quality.quality_tests(table, "baseline").filter(pl.col("variant") == "ends-early")
    moved = tests.rows_by_key("metric", named=True, unique=True)
    for metric in ("end_turn", "decisive_turn"):
        assert moved[metric]["difference"] < 0 and moved[metric]["hi"] < 0, moved[metric]
    ends = table.filter(pl.col("variant") == "ends-early")
    assert ends.get_column("end_turn").max() <= 50
    assert (ends.get_column("decisive_turn") <= ends.get_column("end_turn")).all()

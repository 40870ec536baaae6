"""Content usage (sim.analysis.content): which units, buildings, techs and mechanics the
matches of a variant use at all, and which are dead content (under 5 % of matches)."""

from __future__ import annotations

import polars as pl
import pytest

from sim.analysis import metrics
from sim.analysis.stats import wilson
from tests.test_analysis import frame, matches_of, row

# made-up names: the item lists must come from the run's provenance, not from code
PROVENANCE = {"variants": [
    {"id": "base", "items": {"units": ["pikeman", "trebuchet", "scout"],
                             "buildings": ["granary", "lighthouse"],
                             "techs": ["masonry", "sailing"]}},
    {"id": "cheap", "tables": {"units": {"trebuchet": {}, "pikeman": {}, "scout": {}},
                               "buildings": {"lighthouse": {}, "granary": {}},
                               "techs": {"sailing": {}, "masonry": {}}}},
]}


def _events(variant: str, uses: list[tuple[int, str, dict]]) -> pl.DataFrame:
    return frame("events", [{"match_id": f"{variant}:{m}", "match_index": m, "event": k,
                             "turn": 1, "kind": kind, **fields}
                            for k, (m, kind, fields) in enumerate(uses)], variant)


@pytest.fixture
def run():
    """base: 20 finished matches and one that did not finish (index 20). Pikemen built
    in all 20, scouts in exactly 1 (5 %: not dead), trebuchets never (their only built
    row is in the unfinished match); the granary in 3; masonry researched in 10;
    rushes in 2; an attack by a seat in match 0, by bandits only in match 1; one city
    capture from a seat and one village capture. cheap: 4 matches, trebuchets in all."""
    base = [(m, "built", {"seat": 0, "detail": "pikeman"}) for m in range(20)]
    base += [(7, "built", {"seat": 1, "detail": "scout"}),
             (20, "built", {"seat": 0, "detail": "trebuchet"})]
    base += [(m, "built", {"seat": 0, "detail": "granary"}) for m in (1, 2, 3)]
    base += [(m, "research", {"seat": 0, "detail": "masonry"}) for m in range(10)]
    base += [(m, "rush", {"seat": 2, "detail": "pikeman"}) for m in (4, 5)]
    base += [(0, "attack", {"seat": 1, "by": 0}), (1, "attack", {"seat": -3, "by": 0}),
             (2, "capture", {"seat": 1, "by": 0}), (3, "capture", {"seat": -2, "by": 1})]
    cheap = [(m, "built", {"seat": 0, "detail": "trebuchet"}) for m in range(4)]
    matches = pl.concat([matches_of("base", ["conquest"] * 20 + [None]),
                         matches_of("cheap", ["science"] * 4)])
    events = pl.concat([_events("base", base), _events("cheap", cheap)])
    return matches, events


def test_content_usage_counts_finished_matches_and_flags_dead_content(run):
    matches, events = run
    usage = metrics.content_usage(matches, events, PROVENANCE)
    pike = row(usage, variant="base", item="pikeman")
    assert (pike["category"], pike["matches"], pike["used"], pike["share"]) == \
        ("unit", 20, 20, 1.0)
    assert (pike["lo"], pike["hi"]) == pytest.approx(wilson(20, 20))
    scout = row(usage, variant="base", item="scout")
    assert (scout["used"], scout["share"], scout["dead"]) == (1, 0.05, False)
    treb = row(usage, variant="base", item="trebuchet")  # built only in a match that raised
    assert (treb["used"], treb["dead"]) == (0, True)
    assert (treb["lo"], treb["hi"]) == pytest.approx(wilson(0, 20))
    assert row(usage, variant="cheap", item="trebuchet")["dead"] is False
    assert row(usage, variant="base", item="granary")["category"] == "building"
    assert row(usage, variant="base", item="lighthouse")["dead"] is True
    assert row(usage, variant="base", item="masonry")["share"] == 0.5
    assert row(usage, variant="base", item="sailing")["used"] == 0
    assert row(usage, variant="base", item="rush")["used"] == 2
    assert row(usage, variant="base", item="attack")["used"] == 1  # bandits' strikes: no
    assert row(usage, variant="base", item="city capture")["used"] == 1
    assert row(usage, variant="base", item="village capture")["used"] == 1
    assert row(usage, variant="base", item="truce")["dead"] is True
    assert row(usage, variant="cheap", item="pikeman")["used"] == 0


def test_content_usage_lists_items_in_the_recorded_order(run):
    matches, events = run
    usage = metrics.content_usage(matches, events, PROVENANCE)
    base = usage.filter(pl.col("variant") == "base")
    assert base.filter(pl.col("category") == "unit")["item"].to_list() == \
        ["pikeman", "trebuchet", "scout"]  # variants[].items order
    cheap = usage.filter(pl.col("variant") == "cheap")
    assert cheap.filter(pl.col("category") == "unit")["item"].to_list() == \
        ["pikeman", "scout", "trebuchet"]  # resolved tables only: sorted (code order)
    assert base["category"].unique(maintain_order=True).to_list() == \
        ["unit", "building", "tech", "mechanic"]
    assert base.filter(pl.col("category") == "mechanic")["item"].to_list() == \
        list(metrics.MECHANICS)


def test_without_provenance_only_the_items_the_events_name_are_listed(run):
    matches, events = run
    usage = metrics.content_usage(matches, events, {})
    base = usage.filter(pl.col("variant") == "base")
    assert set(base.filter(pl.col("category") == "built")["item"]) == \
        {"pikeman", "scout", "granary"}
    assert set(base.filter(pl.col("category") == "tech")["item"]) == {"masonry"}


def test_a_match_with_dropped_events_is_counted(run):
    matches, events = run
    matches = matches.with_columns(
        pl.when(pl.col("match_index") == 3).then(5).otherwise(0).alias("events_dropped"))
    usage = metrics.content_usage(matches, events, PROVENANCE)
    assert set(usage.filter(pl.col("variant") == "base")["matches_with_dropped_events"]) == {1}
    assert set(usage.filter(pl.col("variant") == "cheap")["matches_with_dropped_events"]) == {1}

"""The per-match aggregates a chunk writes for the report (sim.outputs.summaries): the
dominance runs by peak (V18's near misses) and the gold shares summed per turn (T13),
on hand-made turns whose answers are counted here by hand, and the report's metrics
read from them equal the same metrics read from the turns."""

from __future__ import annotations

import polars as pl
from polars.testing import assert_frame_equal

from sim.analysis import metrics
from sim.outputs.summaries import dominance_run_rows, dominance_runs, gold_turn_rows


def _turns(variant: str, match_index: int, seat: int, dominance: list[int],
           gold: list[int] | None = None, score: list[int] | None = None) -> pl.DataFrame:
    n = len(dominance)
    return pl.DataFrame({
        "match_id": [f"{variant}:{match_index}"] * n, "match_index": [match_index] * n,
        "turn": list(range(1, n + 1)), "seat": [seat] * n, "dominance": dominance,
        "gold": gold or [0] * n, "score": score or [1] * n, "variant": [variant] * n})


def test_dominance_runs_count_finished_runs_by_peak():
    """A run ends when the counter drops back to 0; one still going at the end is no
    near miss (it may have won); each run counts once, at its peak."""
    turns = pl.concat([
        _turns("v", 0, 0, [1, 2, 3, 0, 0, 5, 6, 0, 6, 0]),  # peaks 3, 6, 6: all finished
        _turns("v", 0, 1, [0, 7, 0, 1, 2, 3, 4, 5, 6, 7]),  # peak 7 finished; last goes on
        _turns("v", 1, 0, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),  # never above 0
    ])
    rows = dominance_run_rows(turns.drop("variant"))
    assert rows.rows() == [("v:0", 0, 3, 1), ("v:0", 0, 6, 2), ("v:0", 0, 7, 1)]
    assert dominance_runs(turns, ["variant", "match_id"]).collect().sort("peak").rows() == [
        ("v", "v:0", 3, 1), ("v", "v:0", 6, 2), ("v", "v:0", 7, 1)]


def test_near_misses_from_the_runs_equal_those_from_the_turns():
    """Each variant's own threshold: W - 2 and W - 1 are near misses, W is not."""
    turns = pl.concat([
        _turns("a", 0, 0, [1, 2, 3, 0, 0, 5, 6, 0, 6, 0]),
        _turns("a", 0, 1, [0, 7, 0, 1, 2, 3, 4, 5, 6, 7]),
        _turns("a", 1, 0, [4, 0, 2, 0, 0, 0, 0, 0, 0, 0]),
        _turns("b", 0, 2, [1, 2, 3, 4, 0, 1, 2, 0, 0, 0]),
    ])
    matches = pl.DataFrame({"variant": ["a", "a", "b"], "match_id": ["a:0", "a:1", "b:0"],
                            "match_index": [0, 1, 0], "victory": ["science"] * 3,
                            "winner": [0, 0, 2], "end_turn": [10] * 3})
    events = pl.DataFrame({"variant": ["a"], "match_id": ["a:1"], "match_index": [1],
                           "kind": ["observatory_lost"]})
    chunks = [dominance_run_rows(turns.filter(pl.col("variant") == v).drop("variant"))
              .with_columns(pl.lit(v).alias("variant")) for v in ("a", "b")]
    runs = pl.concat(chunks).lazy()
    for counter in (8, {"a": 8, "b": 5}, {"a": 6}):
        near = metrics.near_misses(turns, matches, events, counter)
        assert_frame_equal(metrics.near_misses(turns, matches, events, counter, runs=runs),
                           near)
    by_own = metrics.near_misses(turns, matches, events, {"a": 8, "b": 5}, runs=runs)
    # a: peaks 6, 6 (seat 0) and 7 (seat 1) are W - 2 and W - 1; b: peak 4 is W - 1
    assert by_own.select("variant", "dominance_near_misses", "observatories_lost",
                         "matches_with_near_miss").rows() == [("a", 3, 1, 2), ("b", 1, 0, 1)]


def test_gold_turn_sums_add_up_to_the_share_over_turns():
    """Rows of seats standing at the end of the turn with score > 0, each share gold /
    score; the chunks' sums give the run's mean per turn."""
    a = pl.concat([_turns("v", 0, 0, [0, 0, 0], gold=[1, 2, 3], score=[4, 4, 0]),
                   _turns("v", 0, 1, [0, 0, 0], gold=[3, 3, 3], score=[4, 6, 6])])
    b = _turns("v", 1, 0, [0, 0, 0], gold=[0, 1, 2], score=[2, 2, 2])
    seats = pl.DataFrame({"variant": ["v"] * 3, "match_index": [0, 0, 1], "seat": [0, 1, 0],
                          "eliminated_turn": [None, 3, None]}, schema_overrides={
                              "eliminated_turn": pl.Int64})
    sums = pl.concat([gold_turn_rows(part.drop("variant"), seats.filter(
        pl.col("match_index") == part.item(0, "match_index")).drop("variant"))
        for part in (a, b)]).with_columns(pl.lit("v").alias("variant"))
    # one chunk holding both matches writes the same rows as a chunk each: one row per
    # match and turn, whatever the chunking
    both = gold_turn_rows(pl.concat([a, b]).drop("variant"), seats.drop("variant"))
    assert_frame_equal(both, sums.drop("variant"))
    # (match 0 has no row at turn 3: seat 0 scores nothing, seat 1 is eliminated)
    assert both.select("match_index", "turn", "n").rows() == [(0, 1, 2), (0, 2, 2), (1, 1, 1),
                                                              (1, 2, 1), (1, 3, 1)]
    got = metrics.gold_share_over_turns(pl.concat([a, b]), seats, sums=sums.lazy())
    # turn 1: 1/4, 3/4, 0/2; turn 2: 2/4, 3/6, 1/2; turn 3: seat 0 of match 0 has no
    # score and seat 1 was eliminated that turn: 2/2 alone
    assert got.rows() == [("v", 1, (0.25 + 0.75 + 0.0) / 3, 3), ("v", 2, 0.5, 3),
                          ("v", 3, 1.0, 1)]
    assert_frame_equal(got, metrics.gold_share_over_turns(pl.concat([a, b]), seats))

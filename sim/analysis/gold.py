"""The score and its gold term (T13, T14's Monument points).

One definition per question, used by the summary, the charts and the paired
tests alike (`share_rows` is the only place a gold share is computed):

* winners: the winner's gold_points / score at the end of each finished match
  (one value per match);
* standing: gold_points / score of every seat still standing at the end
  (`alive`), each seat weighing the same;
* over turns while standing: gold / score of every seat at the end of each turn
  before the turn it was eliminated in.

Eliminated seats are left out of all three: they keep their treasury, so their
whole remaining score is gold and their share is 100 % (T13 counts gold for a
seat that holds nothing), which says nothing about how standing seats score.
A seat whose score is 0 has no share and is left out too. Intervals are
clustered by match (the seats of one match are correlated).
"""

from __future__ import annotations

import polars as pl

from sim.analysis._frames import TERMS, clustered_means, sort_keys
from sim.outputs.summaries import gold_turn_sums, standing

MATCH_INDEX = ["variant", "match_index"]  # a match, within the run (standing's join)

GROUPS = ("winners", "standing")


def _rows(seats: pl.DataFrame | pl.LazyFrame, group: str) -> pl.LazyFrame:
    """The seat rows of one question: the winner's ("winners") or the standing
    seats' ("standing"), with score > 0 (a share of 0 points is undefined). Lazy: the
    caller's select reaches the filter, so it copies only the columns read, not the
    seats table's 28 (150 MB a pass at 100,000 matches, issue 46)."""
    if group not in GROUPS:
        raise ValueError(f"group must be one of {GROUPS}, got {group!r}")
    chosen = pl.col("winner") if group == "winners" else pl.col("alive")
    return seats.lazy().filter(chosen.fill_null(False) & (pl.col("score") > 0))


def share_rows(seats: pl.DataFrame | pl.LazyFrame, group: str,
               value: str = "gold_points") -> pl.DataFrame:
    """The seat rows of one gold-share question with their share.

    Columns: variant, match_index, seat, share (`value` / score, Float64). group
    "winners": the winner's row of each match; "standing": rows with alive. Only
    rows with score > 0. `value` may be any `{term}_points` column (the same rows
    then give that term's share).
    """
    return _rows(seats, group).select(
        "variant", "match_index", "seat",
        (pl.col(value) / pl.col("score")).cast(pl.Float64).alias("share")).collect()


def gold_share(seats: pl.DataFrame | pl.LazyFrame, confidence: float = 0.95) -> pl.DataFrame:
    """Share of T13's gold term, floor(gold / gold_per_point), in the final score.

    Columns: variant, group ("winners" | "standing", see the module docstring),
    mean (mean share over the group's seat rows, each row weighing the same), lo,
    hi (cluster-robust interval by match, stats.clustered_mean, clipped to [0, 1];
    null with fewer than 2 matches), n (seat rows used), matches (matches they
    come from). A group with no row has no row.
    """
    # one group's rows at a time, with only the columns the means read: both groups'
    # rows concatenated held 300,000 at 100,000 matches (issue 46); each (variant,
    # group) sees the same rows in the same order either way
    out = pl.concat([clustered_means(
        _rows(seats, g).select("variant", "match_index",
                               (pl.col("gold_points") / pl.col("score")).cast(pl.Float64)
                               .alias("share")).collect().with_columns(pl.lit(g).alias("group")),
        "share", ["variant", "group"], confidence) for g in GROUPS])
    out = out.with_columns(pl.col("lo").clip(lower_bound=0.0),
                           pl.col("hi").clip(upper_bound=1.0))
    return sort_keys(out, ["variant", "group"], {"group": GROUPS}).select(
        "variant", "group", "mean", "lo", "hi", "n", "matches")


def standing_turns(turns: pl.DataFrame | pl.LazyFrame,
                   seats: pl.DataFrame | None = None) -> pl.DataFrame:
    """The rows of `turns` (the table or its lazy scan) of seats still standing at
    the end of that turn.

    With `seats`: rows before the seat's eliminated_turn (all rows of a seat never
    eliminated). Without: rows where the seat holds region, population, city or
    Monument points (a standing seat holds at least one city; an eliminated one
    holds nothing but its gold), the same rows unless a variant sets all those
    weights to 0 (sim.outputs.summaries.standing).
    """
    return standing(turns.lazy(), seats, MATCH_INDEX).collect()


def gold_share_over_turns(turns: pl.DataFrame | pl.LazyFrame,
                          seats: pl.DataFrame | pl.LazyFrame | None = None,
                          sums: pl.LazyFrame | None = None) -> pl.DataFrame:
    """T13's gold term as a share of score, turn by turn, over standing seats.

    Columns: variant, turn, mean_share (mean over the seat rows of that turn that
    are standing (standing_turns) and have score > 0 of gold / score), n (those
    rows). Pass `seats` to read eliminations from seats.eliminated_turn. `turns` may
    be a lazy scan: the rows are aggregated as they stream, never held. `sums`: the
    run's `gold_turns` table (each match's sums per turn, written by the sweep with
    its seats: sim.outputs.summaries; sim.analysis.load.RunScan.gold_turns), read
    instead of `turns` when given.
    """
    if sums is None:
        sums = gold_turn_sums(turns, seats, MATCH_INDEX, ["variant"])
    out = sums.group_by("variant", "turn").agg(
        (pl.col("share_sum").sum() / pl.col("n").sum()).alias("mean_share"),
        pl.col("n").sum().cast(pl.Int64))
    return out.collect(engine="streaming").sort("variant", "turn")


def score_decomposition(seats: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """The final score split into T13's terms (and T14's Monument points).

    Columns: variant, group ("winners" | "standing", the rows of gold_share),
    term (region, population, cities, gold, monuments), mean_points (mean of
    `{term}_points` over those rows), share (mean over those rows of
    `{term}_points` / score, so the gold row equals gold_share's mean and the five
    shares of a group add up to 1 when the terms add up to the score).
    """
    read = ["variant", "score", *(f"{t}_points" for t in TERMS)]
    out = pl.concat([_decomposition(_rows(seats, g).select(*read).collect()
                                    .with_columns(pl.lit(g).alias("group")))
                     for g in GROUPS])
    return sort_keys(out, ["variant", "group", "term"], {"group": GROUPS, "term": TERMS})


def _decomposition(rows: pl.DataFrame) -> pl.DataFrame:
    """score_decomposition's rows of one group's seat rows (variant, group, score and
    the terms' points): one group at a time, as both groups' rows held together came to
    300,000 at 100,000 matches (issue 46); each (variant, group) sees the same rows in
    the same order either way."""
    return pl.concat([rows.group_by("variant", "group").agg(
        pl.lit(t).alias("term"),
        pl.col(f"{t}_points").cast(pl.Float64).mean().alias("mean_points"),
        (pl.col(f"{t}_points") / pl.col("score")).cast(pl.Float64).mean().alias("share"))
        for t in TERMS])


__all__ = ["GROUPS", "gold_share", "gold_share_over_turns", "score_decomposition",
           "share_rows", "standing_turns"]

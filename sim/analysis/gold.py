"""The score and its gold term (T13, T14's Monument points): the gold term's share
of score, turn by turn, and the score split into its terms. Sorting: see _frames."""

from __future__ import annotations

import polars as pl

from sim.analysis._frames import GROUPS, TERMS, normal_bounds, sort_keys


def _groups(seats: pl.DataFrame) -> pl.DataFrame:
    """Seat rows twice: once as group "winners" (winner rows only), once as "all"."""
    return pl.concat([
        seats.filter(pl.col("winner")).with_columns(pl.lit("winners").alias("group")),
        seats.with_columns(pl.lit("all").alias("group")),
    ])


def gold_share(seats: pl.DataFrame, confidence: float = 0.95) -> pl.DataFrame:
    """Share of T13's gold term, floor(gold / gold_per_point), in the final score.

    Columns: variant, group ("winners" | "all"), mean, lo, hi, n. Over the seat rows
    with score > 0: mean of gold_points / score; lo, hi = normal approximation
    mean ± z·sd/√n clipped to [0, 1] (null when n < 2); n = seat rows used.
    """
    rows = (_groups(seats.filter(pl.col("score") > 0))
            .with_columns((pl.col("gold_points") / pl.col("score")).alias("share"))
            .group_by("variant", "group")
            .agg(pl.col("share").mean().alias("mean"), pl.col("share").std().alias("sd"),
                 pl.len().cast(pl.Int64).alias("n")))
    out = rows.with_columns(normal_bounds("mean", "sd", "n", confidence, 0.0, 1.0))
    return sort_keys(out, ["variant", "group"], {"group": GROUPS}).select(
        "variant", "group", "mean", "lo", "hi", "n")


def gold_share_over_turns(turns: pl.DataFrame) -> pl.DataFrame:
    """T13's gold term as a share of score, turn by turn.

    Columns: variant, turn, mean_share (mean over the seat rows of that turn with
    score > 0 of gold / score), n (those rows).
    """
    out = (turns.filter(pl.col("score") > 0)
           .with_columns((pl.col("gold") / pl.col("score")).alias("share"))
           .group_by("variant", "turn")
           .agg(pl.col("share").mean().alias("mean_share"), pl.len().cast(pl.Int64).alias("n")))
    return out.sort("variant", "turn")


def score_decomposition(seats: pl.DataFrame) -> pl.DataFrame:
    """The final score split into T13's terms (and T14's Monument points).

    Columns: variant, group ("winners" | "all"), term (region, population, cities,
    gold, monuments), mean_points (mean of `{term}_points` over the group's seat
    rows, eliminated seats included in "all"), share (mean_points / the sum of the
    five mean_points, i.e. of the mean total; null when that is 0).
    """
    aggs = [pl.col(f"{t}_points").cast(pl.Float64).mean().alias(t) for t in TERMS]
    wide = _groups(seats).group_by("variant", "group").agg(aggs)
    long = wide.unpivot(index=["variant", "group"], on=list(TERMS), variable_name="term",
                        value_name="mean_points")
    total = pl.col("mean_points").sum().over("variant", "group")
    out = long.with_columns(pl.when(total > 0).then(pl.col("mean_points") / total).alias("share"))
    return sort_keys(out, ["variant", "group", "term"], {"group": GROUPS, "term": TERMS})



__all__ = ["gold_share", "gold_share_over_turns", "score_decomposition"]

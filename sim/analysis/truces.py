"""Truce offers (D9) per variant, from the truces table: how many, how often accepted,
what each side held ten turns on, and who went on to win the match."""

from __future__ import annotations

import polars as pl

from sim.analysis.stats import wilson_bounds

# the means of truce_summary, by column: each offer's value (null where it has none, as
# the won columns when the match has no winner); truce_counts keeps a sum and a count of
# values of each, so that the counts of slices of the table add up (every value is an
# integer or a boolean: the sums are exact in any order, and sum / count is the mean
# polars takes of the whole column, to the last bit)
MEANS = {
    "mean price": pl.col("price"),
    "buyer cities +10": pl.col("buyer_cities_after") - pl.col("buyer_cities_before"),
    "seller cities +10": pl.col("seller_cities_after") - pl.col("seller_cities_before"),
    "buyer won": pl.col("winner") == pl.col("buyer"),
    "seller won": pl.col("winner") == pl.col("seller"),
    "other won": (pl.col("winner") != pl.col("buyer")) & (pl.col("winner") != pl.col("seller")),
}


def truce_counts(truces: pl.DataFrame | pl.LazyFrame, matches: pl.DataFrame) -> pl.DataFrame:
    """variant, answer ("accepted", "declined", "all offers"), offers, accepted, and for
    each of MEANS its `{name} sum` and `{name} n` (the offers with a value): Int64 sums
    over the offers of `truces` (the table, a scan or a slice of it), joined to their
    match's winner in `matches` (no winner: the won columns have no value). The counts
    of slices of the table add up to the whole table's (load.sum_over_slices)."""
    winners = matches.lazy().select("variant", "match_index", "winner")
    offers = truces.lazy().join(winners, on=["variant", "match_index"], how="left")
    values = [v.cast(pl.Int64).alias(name) for name, v in MEANS.items()]
    sums = [pl.len().cast(pl.Int64).alias("offers"),
            pl.col("accepted").sum().cast(pl.Int64),
            *(a for name in MEANS for a in (pl.col(name).sum().cast(pl.Int64).alias(f"{name} sum"),
                                           pl.col(name).count().cast(pl.Int64).alias(f"{name} n")))]
    answer = (pl.when(pl.col("accepted")).then(pl.lit("accepted"))
              .otherwise(pl.lit("declined")).alias("answer"))
    rows = offers.select("variant", answer, "accepted", *values)
    both = pl.concat([rows, rows.with_columns(pl.lit("all offers").alias("answer"))])
    return both.group_by("variant", "answer").agg(sums).collect()


def truce_summary(truces: pl.DataFrame | pl.LazyFrame | None, matches: pl.DataFrame,
                  counts: pl.DataFrame | None = None) -> pl.DataFrame:
    """One row per variant and answer (accepted or declined offers, then all of them):
    offers, offers per match, the accepted share of all offers with its Wilson 95 %
    interval, the mean price, the mean change in cities over the offer's
    TRUCE_AFTER_TURNS turns for buyer and seller, and the share of offers whose match
    the buyer, the seller or another seat won (the matches table's winner; no winner:
    neither). truces, matches: the run's tables (with `variant`); truces may be its
    scan. `counts`: truce_counts of `truces`, when already counted (the report sums
    them over slices of the scan: a truces table held whole took 18.5 MB at 100,000
    matches, issue 46); `truces` is then not read."""
    if counts is None:
        counts = truce_counts(truces, matches)
    n_matches = matches.group_by("variant").agg(pl.len().alias("matches"))
    rows = counts.select(
        "variant", "answer", pl.col("offers").cast(pl.UInt32),
        pl.col("accepted").cast(pl.UInt32),
        *(pl.when(pl.col(f"{name} n") > 0)
          .then(pl.col(f"{name} sum").cast(pl.Float64) / pl.col(f"{name} n"))
          .alias(name) for name in MEANS)).join(n_matches, on="variant", how="left")
    if rows.height == 0:
        return rows
    total = rows.filter(pl.col("answer") == "all offers").select("variant", "offers", "accepted")
    low, high = wilson_bounds(total["accepted"].to_numpy(), total["offers"].to_numpy())
    share = total.select("variant", (pl.col("accepted") / pl.col("offers")).alias("acceptance"),
                         pl.Series("acceptance low", low), pl.Series("acceptance high", high))
    return (rows.join(share, on="variant", how="left")
            .with_columns((pl.col("offers") / pl.col("matches")).alias("offers per match"))
            .select("variant", "answer", "matches", "offers", "offers per match",
                    "acceptance", "acceptance low", "acceptance high", "mean price",
                    "buyer cities +10", "seller cities +10", "buyer won", "seller won",
                    "other won")
            .sort("variant", "answer"))

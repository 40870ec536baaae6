"""Truce offers (D9) per variant, from the truces table: how many, how often accepted,
what each side held ten turns on, and who went on to win the match."""

from __future__ import annotations

import polars as pl

from sim.analysis.load import sorted_by
from sim.analysis.stats import wilson_bounds
from sim.outputs.schemas import SORT_KEYS

# the columns of the truces table truce_summary reads: its sort keys, the answer, the
# price and what each side held; a truces table held whole (every column, for the whole
# report) took 18.5 MB at 100,000 matches (issue 46)
SUMMARY_COLUMNS = ("variant", *SORT_KEYS["truces"], "accepted", "price", "buyer", "seller",
                   *(f"{side}_cities_{when}" for side in ("buyer", "seller")
                     for when in ("before", "after")))


def truce_summary(truces: pl.DataFrame | pl.LazyFrame, matches: pl.DataFrame
                  ) -> pl.DataFrame:
    """One row per variant and answer (accepted or declined offers, then all of them):
    offers, offers per match, the accepted share of all offers with its Wilson 95 %
    interval, the mean price, the mean change in cities over the offer's
    TRUCE_AFTER_TURNS turns for buyer and seller, and the share of offers whose match
    the buyer, the seller or another seat won (the matches table's winner; no winner:
    neither). truces, matches: the run's tables (with `variant`); truces may be its
    scan (load.scan_run), of which only SUMMARY_COLUMNS are read, in read_table's order."""
    if isinstance(truces, pl.LazyFrame):
        truces = sorted_by(truces.select(SUMMARY_COLUMNS).collect(),
                           ["variant", *SORT_KEYS["truces"]])
    n_matches = matches.group_by("variant").agg(pl.len().alias("matches"))
    winners = matches.select("variant", "match_index", "winner")
    offers = truces.join(winners, on=["variant", "match_index"], how="left").with_columns(
        pl.when(pl.col("accepted")).then(pl.lit("accepted")).otherwise(pl.lit("declined"))
        .alias("answer"))
    both = pl.concat([offers, offers.with_columns(pl.lit("all offers").alias("answer"))])
    rows = (both.group_by("variant", "answer", maintain_order=True).agg(
        pl.len().alias("offers"),
        pl.col("accepted").sum().alias("accepted"),
        pl.col("price").mean().alias("mean price"),
        (pl.col("buyer_cities_after") - pl.col("buyer_cities_before")).mean()
        .alias("buyer cities +10"),
        (pl.col("seller_cities_after") - pl.col("seller_cities_before")).mean()
        .alias("seller cities +10"),
        (pl.col("winner") == pl.col("buyer")).mean().alias("buyer won"),
        (pl.col("winner") == pl.col("seller")).mean().alias("seller won"),
        ((pl.col("winner") != pl.col("buyer")) & (pl.col("winner") != pl.col("seller")))
        .mean().alias("other won"))
        .join(n_matches, on="variant", how="left"))
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

"""Matches that raised instead of finishing (the `errors` table, docs/outcomes.md).

Every other metric counts finished matches only, so a variant that fails often
looks like a smaller sample, not a worse one; this is where its failures show.
"""

from __future__ import annotations

import polars as pl

from sim.analysis._frames import finished, variant_spine, wilson_columns


def error_rates(matches: pl.DataFrame, errors: pl.DataFrame,
                confidence: float = 0.95) -> pl.DataFrame:
    """How many of each variant's matches failed.

    A match (variant × match_index) finished when `matches` has a row for it with
    a victory; it failed when it did not finish and `errors` (or a `matches` row
    without a victory) names it. A match that failed once and finished on a retry
    counts as finished. Columns: variant, played (finished + failed), finished,
    failed, error_rate (failed / played), lo, hi (Wilson interval), first_error
    (the message of the failed match with the lowest index, null if none). Every
    variant of either table has a row.
    """
    key = ["variant", "match_index"]
    done = finished(matches).select(*key).unique()
    raised = pl.concat([errors.select(*key, "message"),
                        matches.filter(pl.col("victory").is_null())
                        .select(*key, pl.lit("no victory recorded").alias("message"))])
    failed = raised.join(done, on=key, how="anti").sort(*key).unique(key, keep="first")
    per = (variant_spine(matches, errors)
           .join(done.group_by("variant").agg(pl.len().cast(pl.Int64).alias("finished")),
                 on="variant", how="left")
           .join(failed.group_by("variant").agg(pl.len().cast(pl.Int64).alias("failed"),
                                                pl.col("message").sort_by("match_index")
                                                .first().alias("first_error")),
                 on="variant", how="left")
           .with_columns(pl.col("finished", "failed").fill_null(0))
           .with_columns((pl.col("finished") + pl.col("failed")).alias("played"))
           .with_columns(pl.when(pl.col("played") > 0)
                         .then(pl.col("failed") / pl.col("played")).alias("error_rate")))
    out = wilson_columns(per, "failed", "played", confidence)
    return out.sort("variant").select("variant", "played", "finished", "failed", "error_rate",
                                      "lo", "hi", "first_error")


__all__ = ["error_rates"]

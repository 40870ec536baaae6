"""Variant against baseline, paired by match (common random numbers: match i of
every variant uses the same map, AI and event streams, so rows pair by
`match_index`): exact McNemar per victory type, a sign-flip test per continuous
metric, and the multiple-testing correction across them. Sorting: see _frames."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from sim.analysis._frames import nan_to_null, sort_keys, victory_categories
from sim.analysis.stats import benjamini_hochberg, holm, mcnemar_exact, paired_bootstrap

PAIRED_METRICS = ("end_turn", "winner_gold_share", "mean_gold_share", "capital_falls")


def _pairs(values: pl.DataFrame, baseline: str, keys: Sequence[str]) -> pl.DataFrame:
    """Rows of every other variant joined to the baseline's row of the same match."""
    variants = set(values.get_column("variant").unique().to_list())
    if baseline not in variants:
        raise ValueError(f"baseline {baseline!r} not among the variants {sorted(variants)}")
    base = (values.filter(pl.col("variant") == baseline).drop("variant")
            .rename({"value": "base"}))
    return (values.filter(pl.col("variant") != baseline)
            .join(base, on=list(keys), how="inner"))


def paired_victory_tests(matches: pl.DataFrame, baseline: str) -> pl.DataFrame:
    """Does a variant change how often each victory type happens (V01, V03, V16, V18,
    V19)? Exact McNemar test on the per-match indicator "victory = X", pairing
    match i of the variant with match i of the baseline (common random numbers).

    Columns: variant, metric ("victory=science", …), baseline_value, variant_value
    (shares over the paired matches), difference (variant − baseline), p_value,
    n_pairs, discordant_gain (X in the variant's match only), discordant_loss (X in
    the baseline's only). The baseline itself is excluded; a variant with no match
    index in common with the baseline gives no rows.
    """
    cats = victory_categories(matches)
    values = matches.select("variant", "match_index", pl.col("victory").alias("value"))
    pairs = _pairs(values, baseline, ["match_index"])
    rows = []
    for cat in cats:
        v = pl.col("value") == cat
        b = pl.col("base") == cat
        rows.append(pairs.group_by("variant").agg(
            pl.lit(f"victory={cat}").alias("metric"),
            b.mean().cast(pl.Float64).alias("baseline_value"),
            v.mean().cast(pl.Float64).alias("variant_value"),
            pl.len().cast(pl.Int64).alias("n_pairs"),
            (v & ~b).sum().cast(pl.Int64).alias("discordant_gain"),
            (b & ~v).sum().cast(pl.Int64).alias("discordant_loss"),
        ))
    schema = {"variant": pl.Utf8, "metric": pl.Utf8, "baseline_value": pl.Float64,
              "variant_value": pl.Float64, "n_pairs": pl.Int64, "discordant_gain": pl.Int64,
              "discordant_loss": pl.Int64}
    out = pl.concat(rows) if rows else pl.DataFrame(schema=schema)
    p = [mcnemar_exact(int(g), int(lo)) for g, lo in
         zip(out.get_column("discordant_gain"), out.get_column("discordant_loss"), strict=True)]
    out = out.with_columns(
        (pl.col("variant_value") - pl.col("baseline_value")).alias("difference"),
        pl.Series("p_value", p, dtype=pl.Float64))
    out = sort_keys(out, ["variant", "metric"], {"metric": [f"victory={c}" for c in cats]})
    return out.select("variant", "metric", "baseline_value", "variant_value", "difference",
                      "p_value", "n_pairs", "discordant_gain", "discordant_loss")


def per_match_metrics(matches: pl.DataFrame, seats: pl.DataFrame,
                      events: pl.DataFrame) -> pl.DataFrame:
    """The continuous per-match metrics of paired_metric_tests, long format.

    Columns: variant, match_index, metric, value (null when undefined, e.g. a
    winner with score 0). end_turn; winner_gold_share = the winner's
    gold_points / score (T13's gold term); mean_gold_share = mean over the seats with
    score > 0 of gold_points / score; capital_falls = capital_fall events (V08).
    """
    spine = matches.select("variant", "match_index",
                           pl.col("end_turn").cast(pl.Float64).alias("end_turn"))
    share = (pl.col("gold_points") / pl.col("score")).cast(pl.Float64)
    scored = seats.filter(pl.col("score") > 0)
    winner = (scored.filter(pl.col("winner")).group_by("variant", "match_index")
              .agg(share.mean().alias("winner_gold_share")))
    mean_share = (scored.group_by("variant", "match_index")
                  .agg(share.mean().alias("mean_gold_share")))
    falls = (events.filter(pl.col("kind") == "capital_fall").group_by("variant", "match_index")
             .agg(pl.len().cast(pl.Float64).alias("capital_falls")))
    wide = (spine.join(winner, on=["variant", "match_index"], how="left")
            .join(mean_share, on=["variant", "match_index"], how="left")
            .join(falls, on=["variant", "match_index"], how="left")
            .with_columns(pl.col("capital_falls").fill_null(0.0)))
    long = wide.unpivot(index=["variant", "match_index"], on=list(PAIRED_METRICS),
                        variable_name="metric", value_name="value")
    return sort_keys(long, ["variant", "metric", "match_index"], {"metric": PAIRED_METRICS})


def paired_metric_tests(matches: pl.DataFrame, seats: pl.DataFrame, events: pl.DataFrame,
                        baseline: str, n_boot: int = 2000, seed: int = 0) -> pl.DataFrame:
    """Does a variant shift a continuous per-match metric? Paired by match_index
    (common random numbers): end_turn (V19 and the instant victories V03, V16, V18),
    winner_gold_share and mean_gold_share (T13's gold term), capital_falls (V08).

    Columns: variant, metric, baseline_value, variant_value (means over the pairs),
    difference (mean of variant − baseline per pair), lo, hi (percentile bootstrap
    interval of that mean), p_value (two-sided sign-flip permutation test, see
    stats.paired_bootstrap), n_pairs. Pairs where either value is null are dropped
    and a variant × metric with no pair left gives no row; every test uses
    numpy.random.default_rng(seed), so a row does not depend on which other variants
    are present. The baseline itself is excluded.
    """
    values = per_match_metrics(matches, seats, events)
    pairs = (_pairs(values, baseline, ["match_index", "metric"])
             .filter(pl.col("value").is_not_null() & pl.col("base").is_not_null()))
    rows = []
    for (variant, metric), part in pairs.group_by(["variant", "metric"]):
        diff = (part.get_column("value") - part.get_column("base")).to_numpy()
        mean, lo, hi, p = paired_bootstrap(diff, n_boot=n_boot, seed=seed)
        rows.append({"variant": variant, "metric": metric,
                     "baseline_value": float(part.get_column("base").mean()),
                     "variant_value": float(part.get_column("value").mean()),
                     "difference": mean, "lo": lo, "hi": hi,
                     "p_value": nan_to_null(p), "n_pairs": part.height})
    schema = {"variant": pl.Utf8, "metric": pl.Utf8, "baseline_value": pl.Float64,
              "variant_value": pl.Float64, "difference": pl.Float64, "lo": pl.Float64,
              "hi": pl.Float64, "p_value": pl.Float64, "n_pairs": pl.Int64}
    out = pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)
    return sort_keys(out, ["variant", "metric"], {"metric": PAIRED_METRICS})


def significance(tests: pl.DataFrame, method: str = "holm", alpha: float = 0.05) -> pl.DataFrame:
    """Correct the p_value column for multiple testing across ALL rows given (every
    metric × variant of one or more test tables, e.g. pl.concat(how="diagonal")).

    method "holm" (family-wise error, stats.holm) or "bh" (false discovery rate,
    stats.benjamini_hochberg). Adds p_adjusted and changed (p_adjusted <= alpha);
    a null p_value stays null, is not counted, and gives changed = False.
    """
    adjust = {"holm": holm, "bh": benjamini_hochberg}.get(method)
    if adjust is None:
        raise ValueError(f"method must be 'holm' or 'bh', got {method!r}")
    p = tests.get_column("p_value").cast(pl.Float64).fill_nan(None).to_list()
    adjusted = [nan_to_null(v) for v in adjust(p)]
    return tests.with_columns(pl.Series("p_adjusted", adjusted, dtype=pl.Float64)).with_columns(
        (pl.col("p_adjusted") <= alpha).fill_null(False).alias("changed"))


__all__ = ["PAIRED_METRICS", "paired_metric_tests", "paired_victory_tests",
           "per_match_metrics", "significance"]

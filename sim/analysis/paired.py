"""Variant against baseline, paired by match.

Common random numbers: match i of every variant uses the same map, AI and event
streams, so rows pair by `match_index`. A pair is used only when both of its
matches finished (a `matches` row with a victory; a match that raised has an
`errors` row instead), and `n_pairs` counts exactly the pairs a test used.

* paired_victory_tests: per victory type, exact McNemar and a paired interval
  of the difference of shares;
* victory_mix_tests: the whole victory mix at once (Stuart–Maxwell) and how many
  matches changed their victory type or their winner;
* paired_metric_tests: continuous metrics, a cluster-robust paired t-test
  (continuous p-values: their resolution does not depend on resamples);
* significance: Holm or Benjamini–Hochberg across every row given, with a
  warning where an exact test cannot reach significance at the family's size.

Sorting: see _frames.
"""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl

from sim.analysis._frames import finished, nan_to_null, sort_keys, victory_categories
from sim.analysis.gold import share_rows
from sim.analysis.stats import (
    benjamini_hochberg,
    clustered_difference,
    holm,
    mcnemar_exact,
    paired_share_interval,
    stuart_maxwell,
)

PAIRED_METRICS = ("end_turn", "winner_gold_share", "standing_gold_share", "capital_falls")
EVENT_KINDS = ("capital_fall",)  # the events metric_observations reads

_TESTS_SCHEMA = {"variant": pl.Utf8, "metric": pl.Utf8, "baseline_value": pl.Float64,
                 "variant_value": pl.Float64, "difference": pl.Float64, "lo": pl.Float64,
                 "hi": pl.Float64, "p_value": pl.Float64, "min_p_value": pl.Float64,
                 "n_pairs": pl.Int64}


class ResolutionWarning(UserWarning):
    """Some tests of a corrected family cannot reach significance on their own:
    their smallest attainable p-value times the family size exceeds alpha."""


def _check_baseline(matches: pl.DataFrame, baseline: str) -> None:
    variants = set(matches.get_column("variant").unique().to_list())
    if baseline not in variants:
        raise ValueError(f"baseline {baseline!r} not among the variants {sorted(variants)}")


def _victory_pairs(matches: pl.DataFrame, baseline: str) -> pl.DataFrame:
    """One row per (variant, match_index) finished in both the variant and the
    baseline: victory, winner, and the baseline's base_victory, base_winner."""
    _check_baseline(matches, baseline)
    done = finished(matches).select("variant", "match_index", "victory", "winner")
    base = (done.filter(pl.col("variant") == baseline).drop("variant")
            .rename({"victory": "base_victory", "winner": "base_winner"}))
    return done.filter(pl.col("variant") != baseline).join(base, on="match_index", how="inner")


def paired_victory_tests(matches: pl.DataFrame, baseline: str,
                         confidence: float = 0.95) -> pl.DataFrame:
    """Does a variant change how often each victory type happens (V01, V03, V16, V18,
    V19)? Exact McNemar test on the per-match indicator "victory = X", pairing
    match i of the variant with match i of the baseline (common random numbers).

    Columns: variant, metric ("victory=science", …), baseline_value, variant_value
    (shares over the pairs used), difference (variant − baseline), lo, hi (paired
    interval of the difference, stats.paired_share_interval: Newcombe's
    square-and-add of Wilson intervals), p_value (stats.mcnemar_exact; null when no
    pair is discordant: the test cannot be computed, and a correction must not count
    it), min_p_value (the smallest p-value McNemar can give with these discordant
    pairs; null with none), n_pairs (pairs used: both matches
    finished), discordant_gain (X in the variant's match only), discordant_loss
    (X in the baseline's only). The baseline itself is excluded; a variant with
    no finished match in common with the baseline gives no rows.
    """
    cats = victory_categories(finished(matches))
    pairs = _victory_pairs(matches, baseline)
    rows = []
    for (variant,), part in pairs.group_by(["variant"]):
        n = part.height
        for cat in cats:
            v = part.get_column("victory") == cat
            b = part.get_column("base_victory") == cat
            gain, loss = int((v & ~b).sum()), int((b & ~v).sum())
            both = int((v & b).sum())
            diff, lo, hi = paired_share_interval(both, gain, loss, n - both - gain - loss,
                                                 confidence)
            rows.append({"variant": variant, "metric": f"victory={cat}",
                         "baseline_value": float(b.mean()), "variant_value": float(v.mean()),
                         "difference": diff, "lo": lo, "hi": hi,
                         # no discordant pair: McNemar's statistic is 0/0, a test that
                         # cannot be computed; null keeps it out of the Holm family
                         "p_value": mcnemar_exact(gain, loss) if gain + loss else None,
                         "min_p_value": mcnemar_exact(gain + loss, 0) if gain + loss
                         else None, "n_pairs": n,
                         "discordant_gain": gain, "discordant_loss": loss})
    schema = {**_TESTS_SCHEMA, "discordant_gain": pl.Int64, "discordant_loss": pl.Int64}
    out = pl.DataFrame(rows, schema=schema, orient="row")
    return sort_keys(out, ["variant", "metric"], {"metric": [f"victory={c}" for c in cats]})


def victory_mix_tests(matches: pl.DataFrame, baseline: str) -> pl.DataFrame:
    """Does a variant move the victory mix as a whole? One joint test per variant
    instead of one per victory type, and how many matches changed at all.

    Columns: variant, n_pairs (pairs used: both matches finished),
    victory_changed (pairs whose victory type differs), winner_changed (pairs
    whose winning seat differs), statistic, df, p_value (Stuart–Maxwell test of
    marginal homogeneity of the baseline × variant table of victory types,
    stats.stuart_maxwell: categories no pair left or entered are left out; no
    changed pair gives statistic 0 and a null p: nothing to test). The baseline
    itself is excluded.
    """
    cats = victory_categories(finished(matches))
    index = {c: i for i, c in enumerate(cats)}
    pairs = _victory_pairs(matches, baseline)
    rows = []
    for (variant,), part in pairs.group_by(["variant"]):
        table = np.zeros((len(cats), len(cats)), dtype=np.int64)
        for b, v in part.select("base_victory", "victory").iter_rows():
            table[index[b], index[v]] += 1
        statistic, df, p = stuart_maxwell(table)
        # no pair changed category: no test to compute (and none to correct for)
        p = p if df else None
        rows.append({"variant": variant, "n_pairs": part.height,
                     "victory_changed": int(table.sum() - np.trace(table)),
                     "winner_changed": int(part.select(
                         pl.col("winner").ne_missing(pl.col("base_winner")).sum()).item()),
                     "statistic": statistic, "df": df, "p_value": p})
    schema = {"variant": pl.Utf8, "n_pairs": pl.Int64, "victory_changed": pl.Int64,
              "winner_changed": pl.Int64, "statistic": pl.Float64, "df": pl.Int64,
              "p_value": pl.Float64}
    return pl.DataFrame(rows, schema=schema, orient="row").sort("variant")


def metric_observations(matches: pl.DataFrame, seats: pl.DataFrame | pl.LazyFrame,
                        events: pl.DataFrame) -> pl.DataFrame:
    """The observations behind paired_metric_tests, long format, finished matches only.

    Columns: variant, match_index, metric, value, seat (the seat of a gold share's
    row, null for the per-match metrics). One row per finished match for
    end_turn, winner_gold_share (the winner's gold_points / score, T13; no row
    when the winner scored 0) and capital_falls (capital_fall events, V08); one
    row per standing seat with score > 0 for standing_gold_share (its
    gold_points / score). The gold shares are sim.analysis.gold.share_rows, the
    rows of gold_share's "winners" and "standing" groups.
    """
    out = pl.concat([_observations(matches, seats, events, m) for m in PAIRED_METRICS])
    return sort_keys(out, ["variant", "metric", "match_index"], {"metric": PAIRED_METRICS})


def _observations(matches: pl.DataFrame, seats: pl.DataFrame | pl.LazyFrame,
                  events: pl.DataFrame, metric: str) -> pl.DataFrame:
    """metric_observations' rows of one metric of PAIRED_METRICS, in no order."""
    done = finished(matches).select("variant", "match_index")
    no_seat = pl.lit(None, dtype=pl.Int64).alias("seat")
    if metric == "end_turn":
        return finished(matches).select("variant", "match_index", pl.lit(metric).alias("metric"),
                                        pl.col("end_turn").cast(pl.Float64).alias("value"),
                                        no_seat)
    if metric == "capital_falls":
        falls = (events.filter(pl.col("kind") == "capital_fall")
                 .group_by("variant", "match_index")
                 .agg(pl.len().cast(pl.Float64).alias("value")))
        return (done.join(falls, on=["variant", "match_index"], how="left")
                .select("variant", "match_index", pl.lit(metric).alias("metric"),
                        pl.col("value").fill_null(0.0), no_seat))
    group = {"winner_gold_share": "winners", "standing_gold_share": "standing"}[metric]
    return (share_rows(seats, group).join(done, on=["variant", "match_index"])
            .select("variant", "match_index", pl.lit(metric).alias("metric"),
                    pl.col("share").alias("value"), pl.col("seat").cast(pl.Int64)))


def paired_metric_tests(matches: pl.DataFrame, seats: pl.DataFrame | pl.LazyFrame,
                        events: pl.DataFrame, baseline: str,
                        confidence: float = 0.95) -> pl.DataFrame:
    """Does a variant shift a continuous metric? Paired by match_index (common random
    numbers): end_turn (V19 and the instant victories V03, V16, V18),
    winner_gold_share and standing_gold_share (T13's gold term, the definitions of
    gold_share), capital_falls (V08). See metric_observations.

    A pair is a match index where both the variant and the baseline finished and
    have at least one observation of the metric; for standing_gold_share only the
    seats standing in both matches of the pair count (the common survivors: a
    variant that eliminates other seats would otherwise average other seats' shares
    than its baseline). Columns: variant, metric,
    baseline_value, variant_value (means over the observations of the pairs
    used, each observation weighing the same: a match, or a standing seat),
    difference (variant_value − baseline_value), lo, hi, p_value
    (stats.clustered_difference: cluster-robust by match, so the seats of one
    match count as correlated and the pairing is kept; for the one-value-per-match
    metrics it is the paired t-test), min_p_value (0: the p-value is continuous),
    n_pairs (pairs used). A variant × metric with no pair gives no row; with a
    single pair, lo, hi and p_value are null, and so is p_value where every pair
    agrees exactly (no spread and no difference: nothing to test, and nothing for a
    correction to count). The baseline itself is excluded.
    """
    _check_baseline(matches, baseline)
    # one metric's observations at a time: all four, concatenated and sorted, held
    # 600,000 rows at 100,000 matches (issue 46); each test reads its metric's rows only
    tests = pl.concat([observation_tests(_observations(matches, seats, events, m), baseline,
                                         confidence) for m in PAIRED_METRICS])
    return sort_keys(tests, ["variant", "metric"], {"metric": PAIRED_METRICS})


def observation_tests(obs: pl.DataFrame, baseline: str, confidence: float = 0.95,
                      order: tuple[str, ...] = ()) -> pl.DataFrame:
    """The paired tests of paired_metric_tests on any observations in its long format
    (variant, match_index, metric, value: one row per match, or several per match,
    e.g. one per seat): each variant's metric against the baseline's on the match
    indices both have (stats.clustered_difference). Columns as paired_metric_tests';
    rows sorted by variant, then metric in `order` (others after, alphabetically).
    sim.analysis.quality and sim.analysis.mechanisms test their metrics with it."""
    rows = []
    for (variant, metric), part in obs.group_by(["variant", "metric"]):
        if variant == baseline:
            continue
        keys = ["match_index", "seat"] if metric == "standing_gold_share" else ["match_index"]
        # only the columns read, before the joins: the variant's and the metric's names
        # on every row of a per-seat metric weighed as much again (issue 46)
        part = part.select(*keys, "value")
        base = (obs.lazy().filter((pl.col("variant") == baseline) & (pl.col("metric") == metric))
                .select(*keys, "value").collect())
        common = part.select(keys).unique().join(base.select(keys).unique(), on=keys,
                                                 nulls_equal=True)
        if common.height == 0:
            continue
        # in one order whatever order the joins gave: the fit sums its floats in row order,
        # and the report prints them to 12 digits
        v = part.join(common, on=keys, nulls_equal=True).sort("match_index", "value")
        b = base.join(common, on=keys, nulls_equal=True).sort("match_index", "value")
        values = np.concatenate([b.get_column("value").to_numpy(),
                                 v.get_column("value").to_numpy()])
        treated = np.r_[np.zeros(b.height), np.ones(v.height)]
        clusters = np.concatenate([b.get_column("match_index").to_numpy(),
                                   v.get_column("match_index").to_numpy()])
        diff, lo, hi, p, n_pairs = clustered_difference(values, treated, clusters, confidence)
        if diff == lo == hi == 0.0:  # every pair agrees exactly: no test to compute
            p = None
        rows.append({"variant": variant, "metric": metric,
                     "baseline_value": float(b.get_column("value").mean()),
                     "variant_value": float(v.get_column("value").mean()),
                     "difference": diff, "lo": nan_to_null(lo), "hi": nan_to_null(hi),
                     "p_value": nan_to_null(p), "min_p_value": 0.0, "n_pairs": n_pairs})
    out = pl.DataFrame(rows, schema=_TESTS_SCHEMA, orient="row")
    return sort_keys(out, ["variant", "metric"], {"metric": order})


def significance(tests: pl.DataFrame, method: str = "holm", alpha: float = 0.05) -> pl.DataFrame:
    """Correct the p_value column for multiple testing across ALL rows given (every
    metric × variant of one or more test tables, e.g. pl.concat(how="diagonal")).

    method "holm" (family-wise error, stats.holm) or "bh" (false discovery rate,
    stats.benjamini_hochberg). Adds p_adjusted, changed (p_adjusted <= alpha) and
    resolution_limited: the row's min_p_value (the smallest p-value its test can
    give with these data, e.g. 2·0.5^m for McNemar with m discordant pairs) times
    the family size m exceeds alpha, so it can be flagged only if the tests ranked
    before it are flagged too; False where min_p_value is missing (a continuous
    test). When any row is resolution-limited a ResolutionWarning says how many.
    A null p_value stays null, is not counted in m, and gives changed = False.
    """
    adjust = {"holm": holm, "bh": benjamini_hochberg}.get(method)
    if adjust is None:
        raise ValueError(f"method must be 'holm' or 'bh', got {method!r}")
    p = tests.get_column("p_value").cast(pl.Float64).fill_nan(None).to_list()
    m = sum(v is not None for v in p)
    adjusted = [nan_to_null(v) for v in adjust(p)]
    floor = (pl.col("min_p_value").cast(pl.Float64) if "min_p_value" in tests.columns
             else pl.lit(None, dtype=pl.Float64))
    out = tests.with_columns(pl.Series("p_adjusted", adjusted, dtype=pl.Float64)).with_columns(
        (pl.col("p_adjusted") <= alpha).fill_null(False).alias("changed"),
        (pl.col("p_value").is_not_null() & (floor * m > alpha)).fill_null(False)
        .alias("resolution_limited"))
    limited = out.filter(pl.col("resolution_limited"))
    if limited.height:
        names = ", ".join(f"{r.get('variant', '?')} {r.get('metric', '?')}"
                          for r in limited.head(3).iter_rows(named=True))
        warnings.warn(f"{limited.height} of {m} tests cannot reach p <= {alpha} after "
                      f"{method} over {m} tests on their own: their smallest attainable "
                      f"p-value (too few discordant pairs) times {m} exceeds {alpha} "
                      f"(e.g. {names}); more matches per variant or fewer tests restore "
                      "their resolution", ResolutionWarning, stacklevel=2)
    return out


__all__ = ["EVENT_KINDS", "PAIRED_METRICS", "ResolutionWarning", "metric_observations",
           "observation_tests", "paired_metric_tests", "paired_victory_tests", "significance",
           "victory_mix_tests"]

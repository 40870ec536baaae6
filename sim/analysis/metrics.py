"""Per-variant metrics over the outcome tables (docs/outcomes.md).

Every function is pure: DataFrames in (with the `variant` column that hive
partitioning adds, as sim.analysis.load gives them), a polars DataFrame out,
sorted by its key columns: `variant` first, then categorical keys in their
natural order (victory: V01's order conquest, science, dominance, turn_limit,
then human_out; group: winners, all; term: T13's order; metric: the order listed
in the function), then numeric keys ascending. Counts are Int64, rates and means
Float64; a statistic that cannot be computed (no rows) is null.

Paired comparisons rely on common random numbers: match i of every variant uses
the same map, AI and event streams, so rows are paired by `match_index`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl

from sim.analysis.stats import (
    benjamini_hochberg,
    holm,
    mcnemar_exact,
    multinomial_intervals,
    paired_bootstrap,
    two_sided_z,
    wilson,
)
from sim.rules.codes import HUMAN_OUT as HUMAN_OUT_CODE
from sim.rules.codes import SCORE_TERMS, VICTORY_NAMES

VICTORIES = VICTORY_NAMES[: VICTORY_NAMES.index("human_out")]  # the four of V01
HUMAN_OUT = VICTORY_NAMES[HUMAN_OUT_CODE]
GROUPS = ("winners", "all")
TERMS = SCORE_TERMS
PAIRED_METRICS = ("end_turn", "winner_gold_share", "mean_gold_share", "capital_falls")

_MATCH = ["variant", "match_id"]


# ---------------------------------------------------------------- helpers

def _sorted(frame: pl.DataFrame, keys: Sequence[str],
            orders: dict[str, Sequence[str]] | None = None) -> pl.DataFrame:
    """Sort by `keys`; a key listed in `orders` sorts by its position in that order
    (values not listed come after, alphabetically)."""
    orders = orders or {}
    by: list[pl.Expr] = []
    for key in keys:
        if key in orders:
            order = list(orders[key])
            by.append(pl.col(key).replace_strict(order, list(range(len(order))),
                                                  default=len(order),
                                                  return_dtype=pl.Int64))
        by.append(pl.col(key))
    return frame.sort(by)


def _victory_categories(matches: pl.DataFrame) -> list[str]:
    """V01's victory types, plus human_out (and anything else) only if it occurs."""
    seen = set(matches.get_column("victory").drop_nulls().unique().to_list())
    extra = sorted(seen - set(VICTORIES) - {HUMAN_OUT})
    return [*VICTORIES, *([HUMAN_OUT] if HUMAN_OUT in seen else []), *extra]


def _variants(*frames: pl.DataFrame) -> pl.DataFrame:
    """The variants found in any of the frames, as a one-column spine."""
    ids = sorted({v for f in frames for v in f.get_column("variant").unique().to_list()})
    return pl.DataFrame({"variant": ids}, schema={"variant": pl.Utf8})


def _wilson_columns(frame: pl.DataFrame, k: str, n: str, confidence: float,
                    lo: str = "lo", hi: str = "hi") -> pl.DataFrame:
    bounds = [wilson(int(a), int(b), confidence)
              for a, b in zip(frame.get_column(k), frame.get_column(n), strict=True)]
    return frame.with_columns(pl.Series(lo, [b[0] for b in bounds], dtype=pl.Float64),
                              pl.Series(hi, [b[1] for b in bounds], dtype=pl.Float64))


def _normal_bounds(mean: str, sd: str, n: str, confidence: float,
                   floor: float | None = None, ceil: float | None = None) -> list[pl.Expr]:
    """lo, hi = mean ± z·sd/√n (null when n < 2), optionally clipped."""
    half = two_sided_z(confidence) * pl.col(sd) / pl.col(n).cast(pl.Float64).sqrt()
    lo = pl.when(pl.col(n) >= 2).then(pl.col(mean) - half)
    hi = pl.when(pl.col(n) >= 2).then(pl.col(mean) + half)
    if floor is not None:
        lo = lo.clip(lower_bound=floor)
    if ceil is not None:
        hi = hi.clip(upper_bound=ceil)
    return [lo.alias("lo"), hi.alias("hi")]


def _nan_to_null(value: float) -> float | None:
    return None if value is None or math.isnan(value) else value


# ---------------------------------------------------------------- victories

def victory_frequencies(matches: pl.DataFrame, confidence: float = 0.95) -> pl.DataFrame:
    """How often each victory type ends a match (V01: conquest V03, science V16,
    dominance V18, turn limit V19; human_out only if it occurs).

    Columns: variant, victory, wins, matches, share, lo, hi, lo_simultaneous,
    hi_simultaneous. One row per variant × victory type, zero-win rows included.
    lo/hi: Wilson interval of each share alone; lo_simultaneous/hi_simultaneous:
    Bonferroni-adjusted Wilson intervals that hold for all the variant's victory
    types together (stats.multinomial_intervals). Matches with a null victory are
    not counted.
    """
    cats = _victory_categories(matches)
    grid = _variants(matches).join(pl.DataFrame({"victory": cats}, schema={"victory": pl.Utf8}),
                                   how="cross")
    counts = (matches.filter(pl.col("victory").is_not_null())
              .group_by("variant", "victory").agg(pl.len().cast(pl.Int64).alias("wins")))
    out = (grid.join(counts, on=["variant", "victory"], how="left")
           .with_columns(pl.col("wins").fill_null(0))
           .with_columns(pl.col("wins").sum().over("variant").alias("matches"))
           .with_columns((pl.col("wins") / pl.col("matches")).alias("share")))
    out = _sorted(out, ["variant", "victory"], {"victory": cats})
    out = _wilson_columns(out, "wins", "matches", confidence)
    simultaneous: list[tuple[float, float]] = []
    for part in out.partition_by("variant", maintain_order=True):
        simultaneous += multinomial_intervals(part.get_column("wins").to_list(), confidence)
    return out.with_columns(
        pl.Series("lo_simultaneous", [b[0] for b in simultaneous], dtype=pl.Float64),
        pl.Series("hi_simultaneous", [b[1] for b in simultaneous], dtype=pl.Float64),
    ).select("variant", "victory", "wins", "matches", "share", "lo", "hi",
             "lo_simultaneous", "hi_simultaneous")


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
    cats = _victory_categories(matches)
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
    out = _sorted(out, ["variant", "metric"], {"metric": [f"victory={c}" for c in cats]})
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
    return _sorted(long, ["variant", "metric", "match_index"], {"metric": PAIRED_METRICS})


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
                     "p_value": _nan_to_null(p), "n_pairs": part.height})
    schema = {"variant": pl.Utf8, "metric": pl.Utf8, "baseline_value": pl.Float64,
              "variant_value": pl.Float64, "difference": pl.Float64, "lo": pl.Float64,
              "hi": pl.Float64, "p_value": pl.Float64, "n_pairs": pl.Int64}
    out = pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)
    return _sorted(out, ["variant", "metric"], {"metric": PAIRED_METRICS})


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
    adjusted = [_nan_to_null(v) for v in adjust(p)]
    return tests.with_columns(pl.Series("p_adjusted", adjusted, dtype=pl.Float64)).with_columns(
        (pl.col("p_adjusted") <= alpha).fill_null(False).alias("changed"))


# ---------------------------------------------------------------- score and gold (T13)

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
    out = rows.with_columns(_normal_bounds("mean", "sd", "n", confidence, 0.0, 1.0))
    return _sorted(out, ["variant", "group"], {"group": GROUPS}).select(
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
    return _sorted(out, ["variant", "group", "term"], {"group": GROUPS, "term": TERMS})


# ---------------------------------------------------------------- capital falls (V08–V12)

def capital_falls_per_match(events: pl.DataFrame, matches: pl.DataFrame,
                            confidence: float = 0.95) -> pl.DataFrame:
    """How many capitals fall per match (V08, V10).

    Columns: variant, matches, falls (capital_fall events), mean (falls per match),
    lo, hi (normal approximation mean ± z·sd/√n over matches, lo clipped at 0, null
    when fewer than 2 matches), matches_with_fall.
    """
    per_match = (events.filter(pl.col("kind") == "capital_fall")
                 .group_by("variant", "match_index").agg(pl.len().cast(pl.Int64).alias("f")))
    rows = (matches.select("variant", "match_index")
            .join(per_match, on=["variant", "match_index"], how="left")
            .with_columns(pl.col("f").fill_null(0))
            .group_by("variant")
            .agg(pl.len().cast(pl.Int64).alias("matches"), pl.col("f").sum().alias("falls"),
                 pl.col("f").cast(pl.Float64).mean().alias("mean"),
                 pl.col("f").cast(pl.Float64).std().alias("sd"),
                 (pl.col("f") > 0).sum().cast(pl.Int64).alias("matches_with_fall")))
    out = rows.with_columns(_normal_bounds("mean", "sd", "matches", confidence, 0.0))
    return out.sort("variant").select("variant", "matches", "falls", "mean", "lo", "hi",
                                      "matches_with_fall")


def cascade_depth(events: pl.DataFrame) -> pl.DataFrame:
    """How deep capital-fall cascades go (V08, V10: a new capital can fall again).

    For each match × seat that lost at least one capital, depth = the number of its
    capitals that fell in that match. Columns: variant, depth, seats (match × seat
    pairs with that depth). Depths that never occur have no row.
    """
    per_seat = (events.filter(pl.col("kind") == "capital_fall")
                .group_by("variant", "match_id", "seat")
                .agg(pl.len().cast(pl.Int64).alias("depth")))
    out = per_seat.group_by("variant", "depth").agg(pl.len().cast(pl.Int64).alias("seats"))
    return out.sort("variant", "depth")


def transfers_per_fall(events: pl.DataFrame) -> pl.DataFrame:
    """How much of an empire a capital fall hands over (V08: cities within the
    radius transfer, cities beyond are kept).

    Columns: variant, falls, mean_transferred, mean_kept (transfer and kept rows per
    capital_fall, matched through their `cause`). Every variant of `events` has a
    row; the means are null when it has no fall.
    """
    falls = (events.filter(pl.col("kind") == "capital_fall")
             .select(*_MATCH, pl.col("event").alias("fall")))
    linked = (events.filter(pl.col("kind").is_in(["transfer", "kept"]))
              .group_by(*_MATCH, pl.col("cause").alias("fall"))
              .agg((pl.col("kind") == "transfer").sum().cast(pl.Int64).alias("transferred"),
                   (pl.col("kind") == "kept").sum().cast(pl.Int64).alias("kept")))
    per_fall = (falls.join(linked, on=[*_MATCH, "fall"], how="left")
                .with_columns(pl.col("transferred", "kept").fill_null(0))
                .group_by("variant")
                .agg(pl.len().cast(pl.Int64).alias("falls"),
                     pl.col("transferred").cast(pl.Float64).mean().alias("mean_transferred"),
                     pl.col("kept").cast(pl.Float64).mean().alias("mean_kept")))
    return (_variants(events).join(per_fall, on="variant", how="left")
            .with_columns(pl.col("falls").fill_null(0)).sort("variant"))


def eliminations_by_fall(events: pl.DataFrame) -> pl.DataFrame:
    """Which eliminations (V02) come from a capital fall (V10: the last city within
    the radius) rather than the capture of a last city.

    Columns: variant, eliminations, by_capital_fall (eliminated rows whose `cause`
    is a capital_fall row of the same match), share (null with no elimination).
    """
    kinds = events.select(*_MATCH, pl.col("event").alias("cause"),
                          pl.col("kind").alias("cause_kind"))
    per = (events.filter(pl.col("kind") == "eliminated").select(*_MATCH, "cause")
           .join(kinds, on=[*_MATCH, "cause"], how="left")
           .group_by("variant")
           .agg(pl.len().cast(pl.Int64).alias("eliminations"),
                (pl.col("cause_kind") == "capital_fall").fill_null(False).sum()
                .cast(pl.Int64).alias("by_capital_fall")))
    out = (_variants(events).join(per, on="variant", how="left")
           .with_columns(pl.col("eliminations", "by_capital_fall").fill_null(0))
           .with_columns(pl.when(pl.col("eliminations") > 0)
                         .then(pl.col("by_capital_fall") / pl.col("eliminations"))
                         .alias("share")))
    return out.sort("variant")


def fall_to_elimination(events: pl.DataFrame) -> pl.DataFrame:
    """How long a seat survives its first capital fall (V08) before elimination (V02).

    For each match × seat eliminated after (later in the event log than) its first
    capital_fall: turns = elimination turn − first fall turn (0 when V10 eliminates it
    by that same fall). Columns: variant, n (such seats), mean_turns, median_turns
    (null when n is 0).
    """
    first = (events.filter(pl.col("kind") == "capital_fall")
             .group_by(*_MATCH, "seat")
             .agg(pl.col("event").min().alias("fall_event"),
                  pl.col("turn").sort_by("event").first().alias("fall_turn")))
    gone = (events.filter(pl.col("kind") == "eliminated")
            .group_by(*_MATCH, "seat")
            .agg(pl.col("event").min().alias("elim_event"),
                 pl.col("turn").sort_by("event").first().alias("elim_turn")))
    per = (first.join(gone, on=[*_MATCH, "seat"], how="inner")
           .filter(pl.col("elim_event") > pl.col("fall_event"))
           .with_columns((pl.col("elim_turn") - pl.col("fall_turn")).cast(pl.Float64)
                         .alias("turns"))
           .group_by("variant")
           .agg(pl.len().cast(pl.Int64).alias("n"), pl.col("turns").mean().alias("mean_turns"),
                pl.col("turns").median().alias("median_turns")))
    return (_variants(events).join(per, on="variant", how="left")
            .with_columns(pl.col("n").fill_null(0)).sort("variant"))


def revolting_taken_by_third(events: pl.DataFrame) -> pl.DataFrame:
    """How often a city handed over by a capital fall (V08) is taken from its new
    owner while its revolt (V11, shortened by a Divan: V13) still lasts.

    For each transfer row, the city's later events are read in log order: the
    revolt started by the transfer (a revolt_start right after it, detail
    "transfer"; none when a Divan brought the revolt to 0 turns) lasts until the
    city's next revolt_end, capture or transfer. The transfer counts as taken by a
    third seat when that next event is a capture, or a transfer by another capital
    fall (the recipient's own capital falling), by a seat other than the recipient.
    Columns: variant, transfers (all transfer rows), taken_by_third, share (null with
    no transfer).
    """
    life = (events.filter(pl.col("kind").is_in(["transfer", "capture", "revolt_start",
                                                "revolt_end"]) & pl.col("city").is_not_null())
            .sort(*_MATCH, "city", "event"))
    city = [*_MATCH, "city"]
    life = life.with_columns(
        pl.col("kind").shift(-1).over(city).alias("next_kind"),
        pl.col("detail").shift(-1).over(city).alias("next_detail"),
        pl.col("kind").shift(-2).over(city).alias("end_kind"),
        pl.col("by").shift(-2).over(city).alias("end_by"),
    )
    revolting = (pl.col("next_kind") == "revolt_start") & (pl.col("next_detail") == "transfer")
    taken = (revolting & pl.col("end_kind").is_in(["capture", "transfer"])
             & (pl.col("end_by") != pl.col("by"))).fill_null(False)
    per = (life.filter(pl.col("kind") == "transfer").group_by("variant")
           .agg(pl.len().cast(pl.Int64).alias("transfers"),
                taken.sum().cast(pl.Int64).alias("taken_by_third")))
    out = (_variants(events).join(per, on="variant", how="left")
           .with_columns(pl.col("transfers", "taken_by_third").fill_null(0))
           .with_columns(pl.when(pl.col("transfers") > 0)
                         .then(pl.col("taken_by_third") / pl.col("transfers"))
                         .alias("share")))
    return out.sort("variant")


# ---------------------------------------------------------------- match length, seats

def end_turn_distribution(matches: pl.DataFrame) -> pl.DataFrame:
    """When matches end, by victory type (V01; V19's turn limit caps it).

    Columns: variant, victory, n, mean, p10, p25, median, p75, p90 (quantiles with
    linear interpolation). Only victory types that occur have a row.
    """
    q = pl.col("end_turn").cast(pl.Float64)
    out = (matches.filter(pl.col("victory").is_not_null()).group_by("variant", "victory")
           .agg(pl.len().cast(pl.Int64).alias("n"), q.mean().alias("mean"),
                q.quantile(0.10, "linear").alias("p10"), q.quantile(0.25, "linear").alias("p25"),
                q.quantile(0.50, "linear").alias("median"),
                q.quantile(0.75, "linear").alias("p75"),
                q.quantile(0.90, "linear").alias("p90")))
    return _sorted(out, ["variant", "victory"], {"victory": _victory_categories(matches)})


def _win_rate(seats: pl.DataFrame, key: str, confidence: float) -> pl.DataFrame:
    out = (seats.group_by("variant", key)
           .agg(pl.col("winner").sum().cast(pl.Int64).alias("wins"),
                pl.len().cast(pl.Int64).alias("matches"))
           .with_columns((pl.col("wins") / pl.col("matches")).alias("rate"))
           .sort("variant", key))
    return _wilson_columns(out, "wins", "matches", confidence)


def win_rate_by_seat(seats: pl.DataFrame, confidence: float = 0.95) -> pl.DataFrame:
    """Win rate of each seat position (seating order: T11's last tiebreak, T12's
    rotating first seat).

    Columns: variant, seat, wins, matches (matches with that seat), rate, lo, hi
    (Wilson interval).
    """
    return _win_rate(seats, "seat", confidence)


def win_rate_by_personality(seats: pl.DataFrame, confidence: float = 0.95) -> pl.DataFrame:
    """Win rate of each AI personality.

    Columns: variant, personality, wins, matches (seat rows played by that
    personality: a personality seated twice in one match counts twice), rate, lo, hi
    (Wilson interval).
    """
    return _win_rate(seats, "personality", confidence)


# ---------------------------------------------------------------- near misses (V16–V18)

def near_misses(turns: pl.DataFrame, matches: pl.DataFrame, events: pl.DataFrame,
                counter_to_win: int = 8) -> pl.DataFrame:
    """Instant victories that almost happened: dominance (V18) and science (V16, V17).

    dominance_near_misses: runs of a seat's dominance counter (turns table, seat rows
    in turn order) that reached counter_to_win − 2 or counter_to_win − 1 (6 or 7 by
    default) and then dropped back to 0; each run counts once, a run still going
    when the match ends does not count. observatories_lost: observatory_lost events
    (V17: a queued Observatory lost with its city). matches_with_near_miss: matches
    with at least one near miss of either kind. Columns: variant, matches,
    dominance_near_misses, observatories_lost, matches_with_near_miss.
    """
    seat = [*_MATCH, "seat"]
    runs = (turns.sort(*seat, "turn")
            .with_columns((pl.col("dominance") == 0).cum_sum().over(seat).alias("run"))
            .with_columns(pl.col("run").max().over(seat).alias("last_run"))
            .filter(pl.col("dominance") > 0)
            .group_by(*seat, "run")
            .agg(pl.col("dominance").max().alias("peak"), pl.col("last_run").first()))
    missed = (runs.filter((pl.col("peak") >= counter_to_win - 2)
                          & (pl.col("peak") < counter_to_win)
                          & (pl.col("run") < pl.col("last_run")))
              .group_by(*_MATCH).agg(pl.len().cast(pl.Int64).alias("dom")))
    lost = (events.filter(pl.col("kind") == "observatory_lost")
            .group_by(*_MATCH).agg(pl.len().cast(pl.Int64).alias("obs")))
    per_match = (matches.select(*_MATCH)
                 .join(missed, on=_MATCH, how="left").join(lost, on=_MATCH, how="left")
                 .with_columns(pl.col("dom", "obs").fill_null(0)))
    out = per_match.group_by("variant").agg(
        pl.len().cast(pl.Int64).alias("matches"),
        pl.col("dom").sum().alias("dominance_near_misses"),
        pl.col("obs").sum().alias("observatories_lost"),
        ((pl.col("dom") + pl.col("obs")) > 0).sum().cast(pl.Int64).alias("matches_with_near_miss"))
    return out.sort("variant")


__all__ = [
    "capital_falls_per_match",
    "cascade_depth",
    "eliminations_by_fall",
    "end_turn_distribution",
    "fall_to_elimination",
    "gold_share",
    "gold_share_over_turns",
    "near_misses",
    "paired_metric_tests",
    "paired_victory_tests",
    "per_match_metrics",
    "revolting_taken_by_third",
    "score_decomposition",
    "significance",
    "transfers_per_fall",
    "victory_frequencies",
    "win_rate_by_personality",
    "win_rate_by_seat",
]

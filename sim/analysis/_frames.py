"""What the metric modules share: category orders, the sort rule and small frame
helpers (Wilson and normal bounds as columns, a variant spine).

Every metric function is pure: DataFrames in (with the `variant` column that hive
partitioning adds, as sim.analysis.load gives them), a polars DataFrame out,
sorted by its key columns: `variant` first, then categorical keys in their
natural order (victory: V01's order conquest, science, dominance, turn_limit,
then human_out; group: winners, standing; term: T13's order; metric: the order listed
in the function), then numeric keys ascending. Counts are Int64, rates and means
Float64; a statistic that cannot be computed (no rows) is null.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import polars as pl

from sim.analysis.stats import clustered_mean, two_sided_z, wilson_bounds
from sim.rules.codes import HUMAN_OUT as HUMAN_OUT_CODE
from sim.rules.codes import SCORE_TERMS, VICTORY_NAMES

VICTORIES = VICTORY_NAMES[: VICTORY_NAMES.index("human_out")]  # the four of V01
HUMAN_OUT = VICTORY_NAMES[HUMAN_OUT_CODE]
TERMS = SCORE_TERMS

# the keys of one match in every table
MATCH = ["variant", "match_id"]


def sort_keys(frame: pl.DataFrame, keys: Sequence[str],
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


def victory_categories(matches: pl.DataFrame) -> list[str]:
    """V01's victory types, plus human_out (and anything else) only if it occurs."""
    seen = set(matches.get_column("victory").drop_nulls().unique().to_list())
    extra = sorted(seen - set(VICTORIES) - {HUMAN_OUT})
    return [*VICTORIES, *([HUMAN_OUT] if HUMAN_OUT in seen else []), *extra]


def variant_spine(*frames: pl.DataFrame) -> pl.DataFrame:
    """The variants found in any of the frames, as a one-column spine."""
    ids = sorted({v for f in frames for v in f.get_column("variant").unique().to_list()})
    return pl.DataFrame({"variant": ids}, schema={"variant": pl.Utf8})


def wilson_columns(frame: pl.DataFrame, k: str, n: str, confidence: float,
                   lo: str = "lo", hi: str = "hi") -> pl.DataFrame:
    """Wilson bounds of k out of n as two Float64 columns, null where n is 0 (no
    observation: no interval, rather than the uninformative [0, 1])."""
    ks, ns = frame.get_column(k), frame.get_column(n).fill_null(0)  # no count: no interval
    if (ks.is_null() & (ns > 0)).any():
        raise ValueError(f"{k} is null where {n} is not")
    lows, highs = wilson_bounds(ks.fill_null(0).to_numpy(), ns.to_numpy(), confidence)
    # NaN (n = 0) becomes null
    return frame.with_columns(pl.Series(lo, lows, dtype=pl.Float64, nan_to_null=True),
                              pl.Series(hi, highs, dtype=pl.Float64, nan_to_null=True))


def normal_bounds(mean: str, sd: str, n: str, confidence: float,
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


def nan_to_null(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else value


def table_value(tables: dict[str, Any], dotted: str) -> Any:
    """The value at a dotted key ("dominance.counter_to_win") of a nested tables dict
    (provenance's variants[].tables), None where it is missing."""
    node: Any = tables
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def finished(matches: pl.DataFrame) -> pl.DataFrame:
    """The matches that finished: rows of `matches` with a victory. A match that
    raised has an `errors` row and no `matches` row; a row without a victory is
    not trusted either, so every count, share and pair is over these rows."""
    return matches.filter(pl.col("victory").is_not_null())


def clustered_means(frame: pl.DataFrame, value: str, by: Sequence[str],
                    confidence: float, cluster: str = "match_index") -> pl.DataFrame:
    """Per group of `by`: mean of `value` over its rows (each row weighs the same),
    lo, hi (cluster-robust interval, stats.clustered_mean, clusters = `cluster`),
    n (rows) and matches (clusters). Null values are dropped; lo, hi null with
    fewer than 2 clusters."""
    rows = []
    for key, part in frame.filter(pl.col(value).is_not_null()).group_by(list(by)):
        mean, lo, hi, n, g = clustered_mean(part.get_column(value).to_numpy(),
                                            part.get_column(cluster).to_numpy(), confidence)
        rows.append((*key, mean, nan_to_null(lo), nan_to_null(hi), n, g))
    schema = {**{k: frame.schema[k] for k in by}, "mean": pl.Float64, "lo": pl.Float64,
              "hi": pl.Float64, "n": pl.Int64, "matches": pl.Int64}
    return pl.DataFrame(rows, schema=schema, orient="row")


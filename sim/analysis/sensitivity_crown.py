"""Crown's hooks for `sim sensitivity` and `sim tune` (issue 48 item 1; named by
sim.outputs.games.CROWN.study_analysis, the hex game's being sim.analysis.sensitivity).

Crown's outcome metrics (CROWN.metrics) are per-match values over one row of its
`matches` table, defined once here (`per_match`): 0/1 indicators whose mean is a share
(side A wins, side B wins, draws, K13; the side first in order more often wins, K05;
the fault-round leader wins, L6) or a share within the match (the winning attacks that
Surge, or the lead cycle, decided, K07). A metric is null where it has no value (no
side first more often, a draw, no fault leader, no winning attack), and such a match
is left out of that metric's mean and pairs.

`sim tune` bands any of them (each a share, in [0, 1]): outcome_values gives a
trial's, and confirm_table the before/after of the tuned values on fresh matches.

The sensitivity compares each parameter's high side with its low side on the same
matches with the paired test of sim.analysis.paired.observation_tests (for one value
per match, the paired t-test; on a 0/1 indicator, on the 0/1 differences), then
ranks as the hex game's (sim.analysis.sensitivity.finish_effects).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from scipy import stats

from sim.analysis.load import read_table
from sim.analysis.paired import observation_tests
from sim.analysis.sensitivity import finish_effects
from sim.analysis.stats import wilson
from sim.analysis.tune import CONFIRM_SCHEMA
from sim.outputs.games import CROWN

# the shown and printed outcomes: every metric, in the game's order
TORNADO_METRICS = PRINTED_METRICS = CROWN.metrics
SETUP_MEANS = "the match's rounds, waves and team sizes, and the AI's weights"
INERT_MEANS = "any column of its matches row (winner, totals, score terms, leads, attacks)"
# columns that name a row rather than say what happened in its match
_NOT_PLAYED = ("match_id", "replay", "tables_hash", "variant")


def per_match() -> dict[str, pl.Expr]:
    """CROWN.metrics -> an expression over one `matches` row (null: no value)."""
    def total(count: str) -> pl.Expr:
        return pl.sum_horizontal(c for c in CROWN.schemas["matches"]
                                 if c.startswith(f"{count}_"))

    wins = total("wins")
    winner = pl.col("winner")
    return {
        "side_a_wins": (winner == "A").cast(pl.Float64),
        "side_b_wins": (winner == "B").cast(pl.Float64),
        "draws": (winner == "draw").cast(pl.Float64),
        "first_in_order_wins": pl.when(pl.col("first_side").is_not_null() & (winner != "draw"))
        .then((pl.col("first_side") == winner).cast(pl.Float64)),
        "fault_leader_wins": pl.when(pl.col("fault_leader").is_not_null())
        .then((pl.col("fault_leader") == winner).cast(pl.Float64)),
        "surge_decided_share": pl.when(wins > 0).then(total("surge_decided") / wins),
        "cycle_decided_share": pl.when(wins > 0).then(total("cycle_decided") / wins),
    }


def observations(matches: pl.DataFrame) -> pl.DataFrame:
    """Long format (variant, match_index, metric, value, seat: null), one row per
    match and metric with a value: what observation_tests pairs."""
    metrics = per_match()
    wide = matches.select("variant", "match_index",
                          *(expr.alias(name) for name, expr in metrics.items()))
    return (wide.unpivot(index=["variant", "match_index"], on=list(metrics),
                         variable_name="metric", value_name="value")
            .drop_nulls("value")
            .with_columns(pl.lit(None, dtype=pl.Int64).alias("seat")))


def sensitivity_effects(design: dict[str, Any], sweep: Path, confidence: float = 0.95
                        ) -> pl.DataFrame:
    """sim.analysis.sensitivity.effects for a Crown sweep: per parameter and metric the
    high side against the low side on the same matches; inert when every column of
    every match (winner, totals, score terms, leads, attacks, …) is equal."""
    matches = read_table(sweep, "matches")
    plays = design.get("plays", {})
    played = [c for c in matches.columns if c not in _NOT_PLAYED]

    def side(name: str) -> pl.DataFrame:
        ran = plays.get(name, name)
        return matches.filter(pl.col("variant") == ran).with_columns(
            pl.lit(name).alias("variant"))

    frames, inert = [], {}
    for p in design["parameters"]:
        lo, hi = side(p["low_variant"]), side(p["high_variant"])
        if lo.height == 0 or hi.height == 0:
            continue
        tests = observation_tests(observations(pl.concat([lo, hi])), p["low_variant"],
                                  confidence, order=CROWN.metrics)
        frames.append(tests.with_columns(pl.lit(p["key"]).alias("parameter"),
                                         pl.lit(float(p["base"])).alias("base"),
                                         pl.lit(float(p["low"])).alias("low"),
                                         pl.lit(float(p["high"])).alias("high")))
        inert[p["key"]] = lo.select(played).sort("match_index").equals(
            hi.select(played).sort("match_index"))
    return finish_effects(frames, inert, design)


def outcome_values(matches: pl.DataFrame, variant: str | None = None
                   ) -> dict[str, float | None]:
    """`sim tune`'s outcomes of one variant's matches (all rows when None): each of
    CROWN.metrics as its mean over the matches with a value (None with none), and
    `matches`."""
    if variant is not None:
        matches = matches.filter(pl.col("variant") == variant)
    out: dict[str, float | None] = {"matches": float(matches.height)}
    means = matches.select(expr.mean().alias(name) for name, expr in per_match().items())
    for name in CROWN.metrics:
        value = means.get_column(name)[0] if matches.height else None
        out[name] = None if value is None else float(value)
    return out


def confirm_table(matches: pl.DataFrame, bands: dict[str, tuple[float, float]],
                  baseline: str, tuned: str, confidence: float = 0.95) -> pl.DataFrame:
    """A Crown tune's before (the baseline) and after (the tuned values) on the same
    fresh matches, one row per banded metric in CROWN.metrics' order, in the columns
    of sim.analysis.tune.confirm_table (CONFIRM_SCHEMA). A side's interval: Wilson's
    for a 0/1 metric (a share of matches), else the t interval of the mean; the
    difference, its interval and p-value: the paired test over the matches where
    both have a value (observation_tests)."""
    obs = observations(matches.filter(pl.col("variant").is_in([baseline, tuned])))
    tests = {r["metric"]: r for r in observation_tests(obs, baseline, confidence)
             .iter_rows(named=True)}
    rows = []
    for metric in (m for m in CROWN.metrics if m in bands):
        band = bands[metric]
        row: dict[str, Any] = {"outcome": metric, "band_lo": float(band[0]),
                               "band_hi": float(band[1])}
        for side, variant in (("before", baseline), ("after", tuned)):
            values = obs.filter((pl.col("variant") == variant) & (pl.col("metric") == metric)
                                ).get_column("value").to_numpy()
            value, lo, hi = _mean_interval(values, confidence)
            row |= {side: value, f"{side}_lo": lo, f"{side}_hi": hi,
                    f"{side}_in_band": None if value is None else band[0] <= value <= band[1]}
        row["after_interval_in_band"] = None if row["after_lo"] is None else \
            band[0] <= row["after_lo"] and row["after_hi"] <= band[1]
        test = tests.get(metric, {})
        row |= {"difference": test.get("difference"), "difference_lo": test.get("lo"),
                "difference_hi": test.get("hi"), "p_value": test.get("p_value"),
                "n_pairs": test.get("n_pairs", 0)}
        rows.append(row)
    return pl.DataFrame(rows, schema=CONFIRM_SCHEMA, orient="row")


def _mean_interval(values: np.ndarray, confidence: float
                   ) -> tuple[float | None, float | None, float | None]:
    """(mean, lo, hi) of a metric's values: Wilson for 0/1 values, the t interval
    otherwise; (None, None, None) with no value, the interval None with one."""
    n = len(values)
    if n == 0:
        return None, None, None
    mean = float(values.mean())
    if np.isin(values, (0.0, 1.0)).all():
        lo, hi = wilson(int(values.sum()), n, confidence)
        return mean, float(lo), float(hi)
    if n < 2:
        return mean, None, None
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1) * values.std(ddof=1) / np.sqrt(n))
    return mean, mean - half, mean + half

"""Tuning toward bands: the outcomes `sim tune` aims at, its distance to the bands,
the paired before/after table of its confirmation and its history chart (issue 13).

A *band* is a designer's target range for one outcome: the share of finished
matches won by a victory type (conquest, science, dominance, turn_limit; V01) or
the median end turn of the finished matches. The *distance* of a set of outcomes
to the bands is the sum, over the banded outcomes, of how far each value lies
outside its band (0 inside it):

    gap(v, [lo, hi]) = max(lo - v, 0, v - hi) / scale

with scale 1 for a share (so a share 5 points above its band adds 0.05) and
TURN_SCALE = 100 turns for the median end turn (so 5 turns outside adds 0.05: a
turn weighs like a point of share). The distance is that of the point estimates
on the trial's matches, with no allowance for noise: proposals are compared on
the same seeded matches (common random numbers), which removes most of the
noise between them, and the winner is confirmed on fresh matches with intervals.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path

import polars as pl

from sim.analysis._altair import alt
from sim.analysis._frames import VICTORIES, finished
from sim.analysis.charts import WIDTH
from sim.analysis.load import read_table
from sim.analysis.stats import mcnemar_exact, median_interval, paired_share_interval, wilson
from sim.outputs.games import HEX, Game

SHARES: tuple[str, ...] = tuple(VICTORIES)   # conquest, science, dominance, turn_limit
MEDIAN_END_TURN = "median_end_turn"
OUTCOMES: tuple[str, ...] = (*SHARES, MEDIAN_END_TURN)
TURN_SCALE = 100.0

Band = tuple[float, float]


def scale_of(outcome: str) -> float:
    """The unit in which an outcome's distance to its band counts: 1 for a share,
    TURN_SCALE turns for the median end turn."""
    return TURN_SCALE if outcome == MEDIAN_END_TURN else 1.0


def band_gap(outcome: str, value: float, band: Band) -> float:
    """How far `value` lies outside `band`, in the outcome's scale (0 inside).
    Example: band_gap("science", 0.35, (0.20, 0.30)) == 0.05 (up to rounding);
    band_gap("median_end_turn", 60, (70, 95)) == 0.10."""
    lo, hi = band
    return max(lo - value, 0.0, value - hi) / scale_of(outcome)


def distance(values: Mapping[str, float | None], bands: Mapping[str, Band]) -> float | None:
    """Sum of band_gap over the banded outcomes; None when a banded outcome has no
    value (no finished match). Outcomes without a band do not count."""
    total = 0.0
    for outcome, band in bands.items():
        value = values.get(outcome)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        total += band_gap(outcome, float(value), band)
    return total


def outcome_values(matches: pl.DataFrame, variant: str | None = None) -> dict[str, float | None]:
    """The outcomes of one variant's finished matches (all rows when `variant` is
    None): each victory share (wins / finished matches), median_end_turn (the
    median of end_turn, the mean of the two middle values for an even count) and
    `matches` (finished matches). Shares and the median are None with no
    finished match."""
    done = finished(matches)
    if variant is not None:
        done = done.filter(pl.col("variant") == variant)
    n = done.height
    out: dict[str, float | None] = {"matches": float(n)}
    counts = dict(done.group_by("victory").len().iter_rows())
    for name in SHARES:
        out[name] = counts.get(name, 0) / n if n else None
    out[MEDIAN_END_TURN] = float(done.get_column("end_turn").median()) if n else None
    return out


def scorer(bands: Mapping[str, Band], game: Game = HEX
           ) -> Callable[[Path], tuple[dict[str, float | None], float | None]]:
    """The scorer `sim.runner.tune.run_tune` calls after each trial: a run folder ->
    (the outcomes of all its finished matches, by the game's outcome_values hook:
    this module's for the hex game; their distance to `bands`)."""
    values_of = game.hooks("analysis").outcome_values

    def score(run_dir: Path) -> tuple[dict[str, float | None], float | None]:
        values = values_of(read_table(run_dir, "matches"))
        return values, distance(values, bands)

    return score


def _in_band(value: float | None, band: Band) -> bool | None:
    if value is None or math.isnan(value):
        return None
    return band[0] <= value <= band[1]


def _nan_none(value: float) -> float | None:
    return None if math.isnan(value) else value


CONFIRM_SCHEMA = {
    "outcome": pl.Utf8, "band_lo": pl.Float64, "band_hi": pl.Float64,
    "before": pl.Float64, "before_lo": pl.Float64, "before_hi": pl.Float64,
    "before_in_band": pl.Boolean,
    "after": pl.Float64, "after_lo": pl.Float64, "after_hi": pl.Float64,
    "after_in_band": pl.Boolean, "after_interval_in_band": pl.Boolean,
    "difference": pl.Float64, "difference_lo": pl.Float64, "difference_hi": pl.Float64,
    "p_value": pl.Float64, "n_pairs": pl.Int64}


def confirm_table(matches: pl.DataFrame, bands: Mapping[str, Band], baseline: str, tuned: str,
                  confidence: float = 0.95) -> pl.DataFrame:
    """Before (the baseline) and after (the tuned variant) on the same fresh matches,
    one row per banded outcome, in OUTCOMES order.

    Columns: outcome, band_lo, band_hi; before, before_lo, before_hi (a share with
    its Wilson interval, stats.wilson; the median end turn with its order-statistic
    interval, stats.median_interval), before_in_band (the point estimate inside the
    band); the same for after, plus after_interval_in_band (the whole interval
    inside the band: inside beyond the noise); difference (after − before), for a
    share with its paired interval (Newcombe, stats.paired_share_interval) and
    exact McNemar p_value over the pairs both finished, null for the median;
    n_pairs (match indices finished in both). A value that cannot be computed is
    null.
    """
    done = finished(matches).select("variant", "match_index", "victory", "end_turn")
    before = done.filter(pl.col("variant") == baseline)
    after = done.filter(pl.col("variant") == tuned)
    pairs = before.join(after, on="match_index", suffix="_after")
    rows = []
    for outcome in (o for o in OUTCOMES if o in bands):
        band = bands[outcome]
        row: dict[str, object] = {"outcome": outcome, "band_lo": float(band[0]),
                                  "band_hi": float(band[1]), "n_pairs": pairs.height}
        for side, part in (("before", before), ("after", after)):
            if outcome == MEDIAN_END_TURN:
                value, lo, hi, _n = median_interval(part.get_column("end_turn").to_numpy())
                value, lo, hi = _nan_none(value), _nan_none(lo), _nan_none(hi)
            else:
                k, n = int((part.get_column("victory") == outcome).sum()), part.height
                value = k / n if n else None
                lo, hi = wilson(k, n, confidence) if n else (None, None)
            row |= {side: value, f"{side}_lo": lo, f"{side}_hi": hi,
                    f"{side}_in_band": _in_band(value, band)}
        lo, hi = row["after_lo"], row["after_hi"]
        row["after_interval_in_band"] = None if lo is None or hi is None else \
            band[0] <= lo and hi <= band[1]
        if outcome == MEDIAN_END_TURN:
            b, a = row["before"], row["after"]
            row |= {"difference": None if a is None or b is None else a - b,
                    "difference_lo": None, "difference_hi": None, "p_value": None}
        elif pairs.height:
            x = pairs.get_column("victory") == outcome
            y = pairs.get_column("victory_after") == outcome
            gain, loss, both = int((y & ~x).sum()), int((x & ~y).sum()), int((x & y).sum())
            diff, dlo, dhi = paired_share_interval(both, gain, loss,
                                                   pairs.height - both - gain - loss,
                                                   confidence)
            row |= {"difference": diff, "difference_lo": dlo, "difference_hi": dhi,
                    "p_value": mcnemar_exact(gain, loss)}
        else:
            row |= {"difference": None, "difference_lo": None, "difference_hi": None,
                    "p_value": None}
        rows.append(row)
    return pl.DataFrame(rows, schema=CONFIRM_SCHEMA, orient="row")


def with_best_so_far(history: pl.DataFrame) -> pl.DataFrame:
    """`history` (one row per trial, columns trial and distance; null distance for a
    trial the tables refused) sorted by trial, with best_so_far: the smallest
    distance of the trials up to this one (null before the first scored one)."""
    return history.sort("trial").with_columns(
        pl.col("distance").cum_min().forward_fill().alias("best_so_far"))


def history_chart(history: pl.DataFrame) -> alt.Chart:
    """The optimiser's history: each trial's distance to the bands (points) and the
    best so far (a step line), against the trial index. `history`:
    with_best_so_far's frame (tune.parquet). The y axis is the distance (0: every
    banded outcome inside its band)."""
    rows = history.select("trial", "distance", "best_so_far").drop_nulls("distance")
    data = alt.Data(values=rows.to_dicts())
    x = alt.X("trial:Q", title="trial", axis=alt.Axis(tickMinStep=1), scale=alt.Scale(zero=False))
    points = alt.Chart(data).mark_point(filled=True, size=40, color="#7f7f7f").encode(
        x=x, y=alt.Y("distance:Q", title="distance to the bands"),
        tooltip=[alt.Tooltip("trial:Q"), alt.Tooltip("distance:Q", format=".4f"),
                 alt.Tooltip("best_so_far:Q", format=".4f")])
    best = alt.Chart(data).mark_line(interpolate="step-after", color="#d62728").encode(
        x=x, y="best_so_far:Q")
    return (points + best).properties(width=WIDTH, height=220,
                                      title="Distance per trial (grey) and best so far (red)")


__all__ = ["MEDIAN_END_TURN", "OUTCOMES", "SHARES", "TURN_SCALE", "band_gap", "confirm_table",
           "distance", "history_chart", "outcome_values", "scale_of", "scorer", "with_best_so_far"]

"""Seats: win rate by seat position (T11's last tiebreak, T12's rotating first
seat) and by AI personality, with Wilson intervals; seat fairness (RULES.md D1):
is any seat index favoured? Sorting: see _frames."""

from __future__ import annotations

import polars as pl

from sim.analysis._frames import wilson_columns


def _win_rate(seats: pl.DataFrame | pl.LazyFrame, key: str,
              confidence: float) -> pl.DataFrame:
    # lazy: a scan of the seats table (the report's) reads only these three columns
    out = (seats.lazy().group_by("variant", key)
           .agg(pl.col("winner").sum().cast(pl.Int64).alias("wins"),
                pl.len().cast(pl.Int64).alias("matches"))
           .with_columns((pl.col("wins") / pl.col("matches")).alias("rate"))
           .sort("variant", key).collect())
    return wilson_columns(out, "wins", "matches", confidence)


def win_rate_by_seat(seats: pl.DataFrame | pl.LazyFrame,
                     confidence: float = 0.95) -> pl.DataFrame:
    """Win rate of each seat position (seating order: T11's last tiebreak, T12's
    rotating first seat).

    Columns: variant, seat, wins, matches (matches with that seat), rate, lo, hi
    (Wilson interval).
    """
    return _win_rate(seats, "seat", confidence)


def win_rate_by_personality(seats: pl.DataFrame | pl.LazyFrame,
                            confidence: float = 0.95) -> pl.DataFrame:
    """Win rate of each AI personality.

    Columns: variant, personality, wins, matches (seat rows played by that
    personality: a personality seated twice in one match counts twice), rate, lo, hi
    (Wilson interval).
    """
    return _win_rate(seats, "personality", confidence)


FAIR_ALPHA = 0.01  # the acceptance level: no test rejects equality at p < 0.01


def seat_fairness(matches: pl.DataFrame, seats: pl.DataFrame,
                  confidence: float = 0.95) -> pl.DataFrame:
    """Win rate by seat with intervals and a chi-square test of equal win rates.

    matches: the `matches` table (variant, match_id, seats, winner, ...);
    seats: the `seats` table (variant, match_id, seat, winner, ...).
    Returns one row per variant × seat count × seat: variant, seats_n, seat, wins,
    decided (matches of that variant and seat count with a winner), rate, lo, hi
    (Wilson), chi2 and p_value (of the group's test: the same on each of its rows),
    and fair (p_value >= FAIR_ALPHA).
    """
    # here, not at the top: importing scipy.stats costs every importer of metrics a
    # second, and only this test uses it directly (sim.analysis.stats loads it lazily)
    from scipy.stats import chisquare
    from statsmodels.stats.proportion import proportion_confint

    decided = (matches.filter(pl.col("winner").is_not_null())
               .select("variant", "match_id", pl.col("seats").alias("seats_n")))
    rows = (seats.join(decided, on=["variant", "match_id"], how="inner")
            .group_by("variant", "seats_n", "seat")
            .agg(pl.col("winner").cast(pl.Int64).sum().alias("wins"))
            .sort("variant", "seats_n", "seat"))
    totals = decided.group_by("variant", "seats_n").agg(pl.len().alias("decided"))
    rows = rows.join(totals, on=["variant", "seats_n"])
    out = []
    for (variant, seats_n), group in rows.group_by(["variant", "seats_n"], maintain_order=True):
        wins = group.get_column("wins").to_list()
        n = int(group.get_column("decided")[0])
        stat, p = chisquare(wins) if sum(wins) > 0 else (float("nan"), float("nan"))
        for seat, k in zip(group.get_column("seat").to_list(), wins, strict=True):
            lo, hi = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
            out.append({"variant": variant, "seats_n": seats_n, "seat": seat, "wins": k,
                        "decided": n, "rate": k / n, "lo": float(lo), "hi": float(hi),
                        "chi2": float(stat), "p_value": float(p),
                        "fair": bool(p >= FAIR_ALPHA)})
    schema = {"variant": pl.Utf8, "seats_n": pl.Int64, "seat": pl.Int64, "wins": pl.Int64,
              "decided": pl.Int64, "rate": pl.Float64, "lo": pl.Float64, "hi": pl.Float64,
              "chi2": pl.Float64, "p_value": pl.Float64, "fair": pl.Boolean}
    return pl.DataFrame(out, schema=schema)


__all__ = ["FAIR_ALPHA", "seat_fairness", "win_rate_by_personality", "win_rate_by_seat"]

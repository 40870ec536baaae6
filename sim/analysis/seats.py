"""Seats: win rate by seat position (T11's last tiebreak, T12's rotating first
seat) and by AI personality, with Wilson intervals. Sorting: see _frames."""

from __future__ import annotations

import polars as pl

from sim.analysis._frames import wilson_columns


def _win_rate(seats: pl.DataFrame, key: str, confidence: float) -> pl.DataFrame:
    out = (seats.group_by("variant", key)
           .agg(pl.col("winner").sum().cast(pl.Int64).alias("wins"),
                pl.len().cast(pl.Int64).alias("matches"))
           .with_columns((pl.col("wins") / pl.col("matches")).alias("rate"))
           .sort("variant", key))
    return wilson_columns(out, "wins", "matches", confidence)


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



__all__ = ["win_rate_by_personality", "win_rate_by_seat"]

"""Per-match aggregates a sweep writes beside the outcome tables, chunk by chunk.

The report needs four things from the big tables that no metric can get from a few
columns: which events each match had (content usage: every item and mechanic used),
each match's longest quiet stretch (the stall flag), its seats' dominance runs (the
near misses) and the gold share of standing seats turn by turn (summed per match
and turn). Each is a full pass
over the events or turns table, some 14 and 4 million rows in a 12,000-match run:
about half a second of CPU each in every report. A chunk's worker has those rows in
memory already, so it writes the aggregates as tables of their own (`usage`,
`quiet`, `dominance_runs`, `gold_turns`; docs/outcomes.md), with the same layout,
marker checksums and verification as the others. A match lies in one chunk, so the
run's aggregates are the concatenation of the chunks'.

The functions take one chunk's frames or a whole table's lazy scan alike: the
report computes the same rows from the events and turns of a run written before
these tables existed (sim.analysis.content, sim.analysis.anomalies), and the tests
check the written tables against that.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from sim.outputs.schemas import SUMMARY_SCHEMAS, SUMMARY_SORT_KEYS

# events whose `detail` names the item used (a unit or building built, a tech researched)
NAMED_KINDS = ("built", "research")
CAPTURES = ("capture", "capital_fall")   # a city changed hands: never a quiet turn

def event_use(events: pl.DataFrame | pl.LazyFrame, keys: list[str] | None = None,
              ) -> list[pl.LazyFrame]:
    """The events each match had, as two lazy queries whose rows are `usage` rows
    (`keys` first: default match_index): (1) for NAMED_KINDS, kind and item (the
    event's detail; side null), distinct; (2) for every other kind, kind and side
    (the event's seat clipped to 0: 0 for any seat index, else the neutral or
    bandit code; item null), distinct. Two queries, so a caller over a whole table
    can collect them one after the other (each holds its own read buffers)."""
    keys = keys or ["match_index"]
    kind, seat = pl.col("kind"), pl.col("seat")
    events = events.lazy()
    named = (events.filter(kind.is_in(NAMED_KINDS), pl.col("detail").is_not_null())
             .select(*keys, kind, pl.lit(None, pl.Int64).alias("side"),
                     pl.col("detail").alias("item"))
             .unique())
    others = (events.filter(~kind.is_in(NAMED_KINDS))
              .select(*keys, kind, seat.clip(upper_bound=0).alias("side"),
                      pl.lit(None, pl.Utf8).alias("item"))
              .unique())
    return [named, others]


def usage_rows(events: pl.DataFrame) -> pl.DataFrame:
    """One chunk's `usage` table: event_use of its events, sorted."""
    named, others = pl.collect_all(event_use(events))
    return pl.concat([named, others]).cast(SUMMARY_SCHEMAS["usage"]).sort(
        SUMMARY_SORT_KEYS["usage"], nulls_last=True)


def _fits(frame: pl.DataFrame) -> bool:
    """Whether match_index (below 2^31), seat and turn (below 2^16), all
    non-negative, pack into one Int64: a sort or group by one integer key takes a
    third of the time of one by two or three columns."""
    if frame.height == 0:
        return False
    lows = frame.select(pl.min_horizontal(pl.col("match_index", "seat", "turn").min())).item()
    top = frame.select(pl.col("match_index").max(), pl.max_horizontal("seat", "turn").max()).row(0)
    return lows >= 0 and top[0] < 2**31 and top[1] < 2**16


def quiet_runs(turns: pl.DataFrame, events: pl.DataFrame, at_least: int = 1) -> pl.DataFrame:
    """Per match, its longest run of quiet turns (no capture, no score change of any
    seat) when it lasts `at_least` turns or more: match_index, quiet (turns), turn
    (its first; the earliest of equal runs), sorted by match_index. turns: rows
    (match_index, turn, seat, score) of one variant or chunk; events: at least its
    rows of CAPTURES. The longest run of a match is also its longest of `at_least`
    or more whenever it has one, so filtering the runs of 1 by `quiet >= K` gives the
    runs of K."""
    mi, seat, turn = pl.col("match_index"), pl.col("seat"), pl.col("turn")
    if _fits(turns):
        by_seat: pl.Expr | list[str] = (mi * 2**16 + seat) * 2**16 + turn
        by_turn: pl.Expr | list[str] = mi * 2**16 + turn
    else:
        by_seat, by_turn = ["match_index", "seat", "turn"], ["match_index", "turn"]
    per_seat = turns.sort(by_seat)
    # sorted, a seat's previous turn is the row above when that row is the same seat's:
    # a shift and a mask, not a window over every seat of every match
    same = pl.all_horizontal(pl.col(c) == pl.col(c).shift(1) for c in ("match_index", "seat"))
    changed = per_seat.select(
        "match_index", "turn",
        pl.when(same).then(pl.col("score") != pl.col("score").shift(1)).otherwise(True)
        .fill_null(True).alias("changed"))
    keys = ["match_index", "turn"]
    if isinstance(by_turn, pl.Expr):
        per_turn = (changed.group_by(by_turn.alias("_k")).agg(pl.col("changed").any())
                    .with_columns((pl.col("_k") // 2**16).alias("match_index"),
                                  (pl.col("_k") % 2**16).alias("turn")).drop("_k"))
    else:
        per_turn = changed.group_by(keys).agg(pl.col("changed").any())
    caps = (events.filter(pl.col("kind").is_in(CAPTURES)).select(keys)
            .unique().with_columns(pl.lit(True).alias("captured")))
    per_turn = (per_turn.join(caps.cast({c: per_turn.schema[c] for c in keys}), on=keys,
                              how="left")
                .with_columns((pl.col("changed") | pl.col("captured").fill_null(False))
                              .alias("active")))
    per_turn = (per_turn.sort(by_turn)
                # numbered across matches, not within each: (match, run) still names
                # the same quiet stretches
                .with_columns(pl.col("active").cast(pl.Int64).cum_sum().alias("run")))
    return (per_turn.filter(~pl.col("active"))
            .group_by("match_index", "run")
            .agg(pl.len().alias("quiet"), pl.col("turn").min().alias("turn"))
            .filter(pl.col("quiet") >= at_least)
            .sort(["match_index", "quiet", "turn"], descending=[False, True, False])
            .unique(subset="match_index", keep="first", maintain_order=True)
            .select("match_index", "quiet", "turn"))


def quiet_rows(turns: pl.DataFrame, events: pl.DataFrame, matches: pl.DataFrame,
               ) -> pl.DataFrame:
    """One chunk's `quiet` table: quiet_runs of its turns and events, with each
    match's id (from `matches`)."""
    runs = quiet_runs(turns.select("match_index", "turn", "seat", "score"), events)
    ids = matches.select("match_index", "match_id")
    return (runs.join(ids, on="match_index", how="left").cast(SUMMARY_SCHEMAS["quiet"])
            .select(list(SUMMARY_SCHEMAS["quiet"])).sort("match_index"))


def dominance_runs(turns: pl.DataFrame | pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """Each match's finished runs of a seat's dominance counter (V18), counted by
    peak: `keys` (naming the match), peak (the run's highest counter), runs (how many
    of the match's runs peaked there). A run is the counter's turns above 0 between
    turns at 0, finished when the counter dropped back to 0 before the match ended (a
    run still going at the end is no near miss: it may have won). turns: rows (keys,
    seat, turn, dominance), the table or its lazy scan. A near miss of a threshold W is
    a run whose peak is W - 2 or W - 1 (sim.analysis.victory.near_misses)."""
    seat = [*keys, "seat"]
    return (turns.lazy().select(*seat, "turn", "dominance").sort(*seat, "turn")
            .with_columns((pl.col("dominance") == 0).cum_sum().over(seat).alias("run"))
            .with_columns(pl.col("run").max().over(seat).alias("last_run"))
            .filter(pl.col("dominance") > 0)
            .group_by(*seat, "run")
            .agg(pl.col("dominance").max().alias("peak"), pl.col("last_run").first())
            .filter(pl.col("run") < pl.col("last_run"))
            .group_by(*keys, "peak").agg(pl.len().cast(pl.Int64).alias("runs")))


def dominance_run_rows(turns: pl.DataFrame) -> pl.DataFrame:
    """One chunk's `dominance_runs` table: dominance_runs of its turns."""
    return (dominance_runs(turns, ["match_id", "match_index"]).collect()
            .cast(SUMMARY_SCHEMAS["dominance_runs"])
            .select(list(SUMMARY_SCHEMAS["dominance_runs"]))
            .sort(SUMMARY_SORT_KEYS["dominance_runs"]))


def standing(turns: pl.LazyFrame, seats: pl.DataFrame | pl.LazyFrame | None,
             keys: list[str]) -> pl.LazyFrame:
    """The rows of `turns` of seats still standing at the end of that turn: before
    the seat's eliminated_turn in `seats` (every row of a seat never eliminated),
    joined on `keys` and seat; without `seats`, the rows where the seat holds region,
    population, city or Monument points (a standing seat holds at least one city; an
    eliminated one holds nothing but its gold: the same rows unless a variant sets all
    those weights to 0)."""
    if seats is None:
        return turns.filter((pl.col("region") + pl.col("population") + pl.col("cities")
                             + pl.col("monuments")) > 0)
    gone = seats.lazy().select(*keys, "seat", "eliminated_turn")
    return (turns.join(gone, on=[*keys, "seat"], how="left")
            .filter(pl.col("eliminated_turn").is_null()
                    | (pl.col("turn") < pl.col("eliminated_turn")))
            .drop("eliminated_turn"))


def gold_turn_sums(turns: pl.DataFrame | pl.LazyFrame,
                   seats: pl.DataFrame | pl.LazyFrame | None,
                   keys: list[str], by: list[str]) -> pl.LazyFrame:
    """T13's gold term as a share of score summed per turn over the rows of seats
    standing at that turn with score > 0: `by`, turn, share_sum (the sum of gold /
    score), n (the rows summed); `keys` name a match (standing's join). Sums, so
    per-match rows add up to the run's (sim.analysis.gold.gold_share_over_turns).
    Lazy: a whole run's turns stream through it."""
    return (standing(turns.lazy(), seats, keys).filter(pl.col("score") > 0)
            .group_by(*by, "turn")
            .agg((pl.col("gold") / pl.col("score")).sum().alias("share_sum"),
                 pl.len().cast(pl.Int64).alias("n")))


def gold_turn_rows(turns: pl.DataFrame, seats: pl.DataFrame) -> pl.DataFrame:
    """One chunk's `gold_turns` table: the rows of gold_turn_sums per match and turn
    (per match, so the table, like every other, is the same whatever the chunking)."""
    keys = ["match_index"]
    group = [*keys, "turn"]
    rows = (standing(turns.lazy().select(*keys, "seat", "turn", "gold", "score"), seats,
                     keys)
            .filter(pl.col("score") > 0)
            .select(*group, "seat", (pl.col("gold") / pl.col("score")).alias("share"))
            .sort(*group, "seat").collect())
    # summed by numpy in seat order: a float sum depends on the order it adds in, and
    # no written table may depend on how polars' threads meet the rows
    starts = rows.select(pl.struct(group).is_first_distinct().arg_true()).to_series().to_numpy()
    share = rows.get_column("share").to_numpy()
    sums = np.add.reduceat(share, starts) if rows.height else share[:0]
    return (rows[starts].select(*group)
            .with_columns(pl.Series("share_sum", sums, pl.Float64),
                          pl.Series("n", np.diff(np.append(starts, rows.height)), pl.Int64))
            .cast(SUMMARY_SCHEMAS["gold_turns"]).select(list(SUMMARY_SCHEMAS["gold_turns"])))


def summaries(frames: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    """The aggregate tables of one chunk's outcome frames (matches, seats, events,
    turns)."""
    return {"usage": usage_rows(frames["events"]),
            "quiet": quiet_rows(frames["turns"], frames["events"], frames["matches"]),
            "dominance_runs": dominance_run_rows(frames["turns"]),
            "gold_turns": gold_turn_rows(frames["turns"], frames["seats"])}


__all__ = ["CAPTURES", "NAMED_KINDS", "dominance_run_rows", "dominance_runs", "event_use",
           "gold_turn_rows", "gold_turn_sums", "quiet_rows", "quiet_runs", "standing",
           "summaries", "usage_rows"]

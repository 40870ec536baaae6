"""Anomaly triage (issue 14): matches a designer should look at, each with the
command that replays it.

A balance number averages over thousands of matches; a broken rule or an AI that
loops shows first in a few strange ones. Each flag is computed from the outcome
tables with thresholds from the experiment file (`[anomalies]`,
sim.outputs.settings.AnomalySettings):

- `stall`: `stall_turns` turns in a row in which no city was captured and no
  seat's score changed (turns and events tables);
- `truce_cycling`: the same two seats signed `truce_cycles` truces or more;
- `blowout`: a turn-limit win whose winner scored at least `blowout_ratio` times
  the runner-up (seats table, final scores);
- `end_turn_outlier`: an end turn outside [Q1 - k·IQR, Q3 + k·IQR] of the matches of
  its variant that ended in the same victory type (k = `outlier_iqr`; Tukey's
  far-out fences at 3);
- `early_elimination`: a seat eliminated before `early_elimination_pct` % of the
  match's turns (or before turn `early_elimination_turn` when the file gives one);
- `error`: the match raised (errors table).
"""

from __future__ import annotations

import polars as pl

from sim.analysis._frames import MATCH, finished, sort_keys
from sim.outputs.settings import AnomalySettings

FLAGS = ("error", "stall", "truce_cycling", "blowout", "end_turn_outlier",
         "early_elimination")
SCHEMA = {"variant": pl.Utf8, "match_id": pl.Utf8, "match_index": pl.Int64,
          "flag": pl.Utf8, "turn": pl.Int64, "detail": pl.Utf8, "replay": pl.Utf8}
CAPTURES = ("capture", "capital_fall")
EVENT_KINDS = (*CAPTURES, "truce")  # the events the flags read


def _empty() -> pl.DataFrame:
    return pl.DataFrame(schema={c: t for c, t in SCHEMA.items() if c != "replay"})


def stalls(turns: pl.DataFrame | pl.LazyFrame, events: pl.DataFrame,
           stall_turns: int) -> pl.DataFrame:
    """Per match, its longest run of quiet turns (no capture, no score change of any
    seat) when it lasts `stall_turns` or more: flag rows with `turn` = the run's first
    turn. turns: the turns table (variant, match_id, match_index, turn, seat, score),
    or its lazy scan (sim.analysis.load.scan_table); events: the events table."""
    turns = turns.lazy()
    # one variant's rows at a time (the hive layout reads only its files): every run lies
    # within one match, and sorting a whole 12,000-match turns table by its string keys
    # would hold gigabytes and take seconds
    names = turns.select("variant").unique().collect().get_column("variant").sort()
    parts = []
    for v in names:
        mine = turns.filter(pl.col("variant") == v)
        runs = _stalls_of(mine.select("match_index", "turn", "seat", "score").collect(),
                          events.filter(pl.col("variant") == v), stall_turns)
        # the ids of the flagged matches only: reading match_id, a string, for every
        # row cost more than the rest of the search
        ids = (mine.filter(pl.col("match_index").is_in(runs.get_column("match_index")
                                                       .implode()))
               .select("match_index", "match_id").unique(subset="match_index").collect())
        parts.append(runs.join(ids, on="match_index", how="left").sort("match_index").select(
            pl.lit(v, pl.Utf8).alias("variant"), "match_id", "match_index",
            pl.lit("stall").alias("flag"), "turn",
            pl.format("{} quiet turns from turn {}", "quiet", "turn").alias("detail")))
    return pl.concat(parts, how="vertical_relaxed") if parts else _empty()


def _fits(frame: pl.DataFrame) -> bool:
    """Whether match_index (below 2^31), seat and turn (below 2^16), all
    non-negative, pack into one Int64: a sort or group by one integer key takes a
    third of the time of one by two or three columns."""
    if frame.height == 0:
        return False
    lows = frame.select(pl.min_horizontal(pl.col("match_index", "seat", "turn").min())).item()
    top = frame.select(pl.col("match_index").max(), pl.max_horizontal("seat", "turn").max()).row(0)
    return lows >= 0 and top[0] < 2**31 and top[1] < 2**16


def _stalls_of(turns: pl.DataFrame, events: pl.DataFrame, stall_turns: int) -> pl.DataFrame:
    """The stall runs of one variant's rows (match_index, turn, seat, score): per match
    with a run of `stall_turns` quiet turns or more, its longest (the earliest of
    equal ones) as match_index, quiet (turns), turn (its first)."""
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
            .filter(pl.col("quiet") >= stall_turns)
            .sort(["match_index", "quiet", "turn"], descending=[False, True, False])
            .unique(subset="match_index", keep="first", maintain_order=True)
            .select("match_index", "quiet", "turn"))


def truce_cycling(events: pl.DataFrame, cycles: int) -> pl.DataFrame:
    """Pairs of seats that signed `cycles` truces or more in one match (the first
    such pair by seat numbers; `turn` = its last truce)."""
    truces = events.filter(pl.col("kind") == "truce")
    if truces.height == 0:
        return _empty()
    pairs = (truces.with_columns(pl.min_horizontal("seat", "by").alias("a"),
                                 pl.max_horizontal("seat", "by").alias("b"))
             .group_by([*MATCH, "match_index", "a", "b"])
             .agg(pl.len().alias("truces"), pl.col("turn").max().alias("turn"))
             .filter(pl.col("truces") >= cycles)
             .sort(["variant", "match_index", "a", "b"])
             .unique(subset=["variant", "match_index"], keep="first", maintain_order=True))
    return pairs.select(*MATCH, "match_index", pl.lit("truce_cycling").alias("flag"), "turn",
                        pl.format("seats {} and {} signed {} truces", "a", "b", "truces")
                        .alias("detail"))


def blowouts(matches: pl.DataFrame, seats: pl.DataFrame, ratio: float) -> pl.DataFrame:
    """Turn-limit wins whose winner's final score is at least `ratio` times the
    runner-up's (a runner-up at 0 counts as a blowout)."""
    limit = finished(matches).filter(pl.col("victory") == "turn_limit").select(
        "variant", "match_index", "end_turn")
    if limit.height == 0 or seats.height == 0:
        return _empty()
    top = (seats.join(limit, on=["variant", "match_index"])
           .sort(["variant", "match_index", "score"], descending=[False, False, True])
           .group_by([*MATCH, "match_index"], maintain_order=True)
           .agg(pl.col("score").first().alias("first"),
                pl.col("score").slice(1, 1).first().alias("second"),
                pl.col("end_turn").first().alias("turn")))
    hit = top.filter(pl.col("second").is_not_null() &
                     (pl.col("first") >= ratio * pl.col("second")))
    return hit.select(*MATCH, "match_index", pl.lit("blowout").alias("flag"), "turn",
                      pl.format("turn-limit win {} to {}", "first", "second").alias("detail"))


def end_turn_outliers(matches: pl.DataFrame, k: float) -> pl.DataFrame:
    """End turns outside Tukey's fences [Q1 - k·IQR, Q3 + k·IQR] of their variant's
    matches with the same victory type (groups of fewer than 8 matches are skipped:
    their quartiles say little)."""
    done = finished(matches)
    if done.height == 0:
        return _empty()
    group = ["variant", "victory"]
    fenced = done.with_columns(
        pl.col("end_turn").quantile(0.25, "linear").over(group).alias("q1"),
        pl.col("end_turn").quantile(0.75, "linear").over(group).alias("q3"),
        pl.len().over(group).alias("n")).with_columns(
        (pl.col("q1") - k * (pl.col("q3") - pl.col("q1"))).alias("low"),
        (pl.col("q3") + k * (pl.col("q3") - pl.col("q1"))).alias("high"))
    hit = fenced.filter((pl.col("n") >= 8) & ((pl.col("end_turn") < pl.col("low")) |
                                               (pl.col("end_turn") > pl.col("high"))))
    return hit.select(*MATCH, "match_index", pl.lit("end_turn_outlier").alias("flag"),
                      pl.col("end_turn").alias("turn"),
                      pl.format("{} on turn {}; its fences {}–{}", "victory", "end_turn",
                                pl.col("low").round(1), pl.col("high").round(1))
                      .alias("detail"))


def early_eliminations(seats: pl.DataFrame, matches: pl.DataFrame, pct: int,
                       before_turn: int | None = None) -> pl.DataFrame:
    """Seats eliminated before `before_turn`, or (None) before `pct` % of their match's
    last turn (matches.length); the earliest per match."""
    limit = pl.lit(before_turn) if before_turn is not None else pl.col("length") * pct / 100
    out = (seats.join(matches.select("variant", "match_index", "length"),
                      on=["variant", "match_index"])
           .filter(pl.col("eliminated_turn").is_not_null() &
                   (pl.col("eliminated_turn") >= 0) & (pl.col("eliminated_turn") < limit)))
    if out.height == 0:
        return _empty()
    out = (out.sort(["variant", "match_index", "eliminated_turn", "seat"])
           .unique(subset=["variant", "match_index"], keep="first", maintain_order=True))
    return out.select(*MATCH, "match_index", pl.lit("early_elimination").alias("flag"),
                      pl.col("eliminated_turn").alias("turn"),
                      pl.format("seat {} ({}) out on turn {} of {}", "seat", "personality",
                                "eliminated_turn", "length").alias("detail"))


def anomalies(matches: pl.DataFrame, seats: pl.DataFrame, events: pl.DataFrame,
              turns: pl.DataFrame | pl.LazyFrame, errors: pl.DataFrame,
              settings: AnomalySettings | None = None) -> pl.DataFrame:
    """Every flag of every match, one row per match × flag: variant, match_id,
    match_index, flag (FLAGS), turn (where it shows, null for an error), detail (in
    words) and replay (the command that replays the match). Sorted by variant, flag
    in FLAGS order, match_index. `turns` may be a lazy scan (see stalls); `events`
    needs only the rows of EVENT_KINDS (sim.analysis.load.event_rows)."""
    s = settings or AnomalySettings()
    parts = [stalls(turns, events, s.stall_turns), truce_cycling(events, s.truce_cycles),
             blowouts(matches, seats, s.blowout_ratio), end_turn_outliers(matches, s.outlier_iqr),
             early_eliminations(seats, matches, s.early_elimination_pct,
                                s.early_elimination_turn)]
    cols = [c for c in SCHEMA if c != "replay"]
    flags = pl.concat([p.select(cols).cast({c: SCHEMA[c] for c in cols}) for p in parts])
    flags = flags.join(matches.select("variant", "match_index", "replay"),
                       on=["variant", "match_index"], how="left")
    failed = errors.select(*MATCH, "match_index", pl.lit("error").alias("flag"),
                           pl.lit(None, pl.Int64).alias("turn"),
                           pl.col("message").str.slice(0, 200).alias("detail"), "replay")
    flags = pl.concat([failed.cast(SCHEMA), flags.select(list(SCHEMA)).cast(SCHEMA)])
    return sort_keys(flags, ["variant", "flag", "match_index"], {"flag": FLAGS})


def anomaly_counts(flags: pl.DataFrame, matches: pl.DataFrame,
                   errors: pl.DataFrame) -> pl.DataFrame:
    """Per variant × flag: matches flagged, matches played (finished + failed) and the
    share. Every flag appears for every variant, 0 where none was raised."""
    played = pl.concat([matches.select("variant", "match_index"),
                        errors.select("variant", "match_index")]).unique().group_by(
        "variant").agg(pl.len().alias("played"))
    grid = played.join(pl.DataFrame({"flag": list(FLAGS)}), how="cross")
    counted = flags.group_by("variant", "flag").agg(pl.col("match_index").n_unique()
                                                    .alias("matches"))
    out = (grid.join(counted, on=["variant", "flag"], how="left")
           .with_columns(pl.col("matches").fill_null(0).cast(pl.Int64))
           .with_columns((pl.col("matches") / pl.col("played")).alias("share")))
    return sort_keys(out.select("variant", "flag", "matches", "played", "share"),
                     ["variant", "flag"], {"flag": FLAGS})


__all__ = ["EVENT_KINDS", "FLAGS", "anomalies", "anomaly_counts", "blowouts", "early_eliminations",
           "end_turn_outliers", "stalls", "truce_cycling"]

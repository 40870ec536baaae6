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
from sim.outputs.summaries import CAPTURES, quiet_runs

FLAGS = ("error", "stall", "truce_cycling", "blowout", "end_turn_outlier",
         "early_elimination")
SCHEMA = {"variant": pl.Utf8, "match_id": pl.Utf8, "match_index": pl.Int64,
          "flag": pl.Utf8, "turn": pl.Int64, "detail": pl.Utf8, "replay": pl.Utf8}
EVENT_KINDS = (*CAPTURES, "truce")  # the events the flags read


def _empty() -> pl.DataFrame:
    return pl.DataFrame(schema={c: t for c, t in SCHEMA.items() if c != "replay"})


def stalls(turns: pl.DataFrame | pl.LazyFrame, events: pl.DataFrame,
           stall_turns: int, quiet: pl.LazyFrame | None = None) -> pl.DataFrame:
    """Per match, its longest run of quiet turns (no capture, no score change of any
    seat) when it lasts `stall_turns` or more: flag rows with `turn` = the run's first
    turn. From `quiet`, the run's aggregate of each match's longest run (written by
    the sweep: sim.outputs.summaries; sim.analysis.load.RunScan.quiet), when given;
    else computed from turns: the turns table (variant, match_id, match_index, turn,
    seat, score), or its lazy scan (sim.analysis.load.scan_table), and events: the
    events table (its capture rows)."""
    if quiet is not None:
        runs = (quiet.filter(pl.col("quiet") >= stall_turns).collect()
                .sort("variant", "match_index"))
        return _stall_flags(runs)
    turns = turns.lazy()
    # one variant's rows at a time (the hive layout reads only its files): every run lies
    # within one match, and sorting a whole 12,000-match turns table by its string keys
    # would hold gigabytes and take seconds
    names = turns.select("variant").unique().collect().get_column("variant").sort()
    parts = []
    for v in names:
        mine = turns.filter(pl.col("variant") == v)
        runs = quiet_runs(mine.select("match_index", "turn", "seat", "score").collect(),
                          events.filter(pl.col("variant") == v), stall_turns)
        # the ids of the flagged matches only: reading match_id, a string, for every
        # row cost more than the rest of the search
        ids = (mine.filter(pl.col("match_index").is_in(runs.get_column("match_index")
                                                       .implode()))
               .select("match_index", "match_id").unique(subset="match_index").collect())
        parts.append(runs.join(ids, on="match_index", how="left").sort("match_index")
                     .select(pl.lit(v, pl.Utf8).alias("variant"), pl.all()))
    return _stall_flags(pl.concat(parts, how="vertical_relaxed")) if parts else _empty()


def _stall_flags(runs: pl.DataFrame) -> pl.DataFrame:
    """Flag rows of stall runs (variant, match_id, match_index, quiet, turn)."""
    return runs.select(
        "variant", "match_id", "match_index", pl.lit("stall").alias("flag"), "turn",
        pl.format("{} quiet turns from turn {}", "quiet", "turn").alias("detail"))


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


def blowouts(matches: pl.DataFrame, seats: pl.DataFrame | pl.LazyFrame,
             ratio: float) -> pl.DataFrame:
    """Turn-limit wins whose winner's final score is at least `ratio` times the
    runner-up's (a runner-up at 0 counts as a blowout). `seats` may be a lazy scan."""
    limit = finished(matches).filter(pl.col("victory") == "turn_limit").select(
        "variant", "match_index", "end_turn")
    if limit.height == 0:
        return _empty()
    # the columns read, before the join: a scan of the seats table (the report's) reads
    # only these
    top = (seats.lazy().select(*MATCH, "match_index", "score")
           .join(limit.lazy(), on=["variant", "match_index"])
           .sort(["variant", "match_index", "score"], descending=[False, False, True])
           .group_by([*MATCH, "match_index"], maintain_order=True)
           .agg(pl.col("score").first().alias("first"),
                pl.col("score").slice(1, 1).first().alias("second"),
                pl.col("end_turn").first().alias("turn")).collect())
    if top.height == 0:
        return _empty()
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


def early_eliminations(seats: pl.DataFrame | pl.LazyFrame, matches: pl.DataFrame, pct: int,
                       before_turn: int | None = None) -> pl.DataFrame:
    """Seats eliminated before `before_turn`, or (None) before `pct` % of their match's
    last turn (matches.length); the earliest per match."""
    limit = pl.lit(before_turn) if before_turn is not None else pl.col("length") * pct / 100
    # the eliminated seats' columns read below, before the join: joined first, every
    # seat's 28 columns were copied (120 MB at 100,000 matches, issue 46)
    out = (seats.lazy().select(*MATCH, "match_index", "seat", "personality",
                               "eliminated_turn")
           .filter(pl.col("eliminated_turn").is_not_null() & (pl.col("eliminated_turn") >= 0))
           .join(matches.lazy().select("variant", "match_index", "length"),
                 on=["variant", "match_index"])
           .filter(pl.col("eliminated_turn") < limit).collect())
    if out.height == 0:
        return _empty()
    out = (out.sort(["variant", "match_index", "eliminated_turn", "seat"])
           .unique(subset=["variant", "match_index"], keep="first", maintain_order=True))
    return out.select(*MATCH, "match_index", pl.lit("early_elimination").alias("flag"),
                      pl.col("eliminated_turn").alias("turn"),
                      pl.format("seat {} ({}) out on turn {} of {}", "seat", "personality",
                                "eliminated_turn", "length").alias("detail"))


def anomalies(matches: pl.DataFrame, seats: pl.DataFrame | pl.LazyFrame, events: pl.DataFrame,
              turns: pl.DataFrame | pl.LazyFrame, errors: pl.DataFrame,
              settings: AnomalySettings | None = None,
              quiet: pl.LazyFrame | None = None,
              replays: pl.LazyFrame | None = None) -> pl.DataFrame:
    """Every flag of every match, one row per match × flag: variant, match_id,
    match_index, flag (FLAGS), turn (where it shows, null for an error), detail (in
    words) and replay (the command that replays the match). Sorted by variant, flag
    in FLAGS order, match_index. `turns` may be a lazy scan, and `quiet` the run's
    aggregate of quiet runs (see stalls); `events` needs only the rows of EVENT_KINDS
    (sim.analysis.load.event_rows). `replays`: the matches table's scan, from which the
    flagged matches' replay commands are read when `matches` does not hold them (the
    report's: sim.analysis.load.REPORT_UNREAD)."""
    s = settings or AnomalySettings()
    parts = [stalls(turns, events, s.stall_turns, quiet), truce_cycling(events, s.truce_cycles),
             blowouts(matches, seats, s.blowout_ratio), end_turn_outliers(matches, s.outlier_iqr),
             early_eliminations(seats, matches, s.early_elimination_pct,
                                s.early_elimination_turn)]
    cols = [c for c in SCHEMA if c != "replay"]
    flags = pl.concat([p.select(cols).cast({c: SCHEMA[c] for c in cols}) for p in parts])
    if replays is None or "replay" in matches.columns:
        replay = matches.select("variant", "match_index", "replay")
    else:
        replay = (replays.select("variant", "match_index", "replay")
                  .join(flags.lazy().select("variant", "match_index").unique(),
                        on=["variant", "match_index"], how="semi")
                  .collect())
    flags = flags.join(replay, on=["variant", "match_index"], how="left")
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

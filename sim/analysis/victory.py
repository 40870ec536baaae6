"""Victory types (V01): how often each ends a match, when matches end, and the
instant victories that almost happened (V16–V18). Sorting and nulls: see _frames."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from sim.analysis._frames import (
    MATCH,
    finished,
    sort_keys,
    table_value,
    variant_spine,
    victory_categories,
    wilson_columns,
)
from sim.analysis.stats import multinomial_intervals
from sim.outputs.games import game_of_run
from sim.outputs.storage import run_path
from sim.outputs.store import read_provenance, scan
from sim.outputs.summaries import dominance_runs


def victory_frequencies(matches: pl.DataFrame, confidence: float = 0.95,
                        errors: pl.DataFrame | None = None) -> pl.DataFrame:
    """How often each victory type ends a finished match (V01: conquest V03,
    science V16, dominance V18, turn limit V19; human_out only if it occurs).

    Columns: variant, victory, wins, matches (finished matches: a victory; a match
    that raised is in `errors`, not here), share (wins / matches), lo, hi (Wilson
    interval of each share alone), lo_simultaneous, hi_simultaneous (Goodman's
    intervals, which hold for all the variant's victory types together,
    stats.multinomial_intervals). One row per variant × victory type, zero-win
    rows included. Pass the run's `errors` so that a variant whose every match
    failed still has its rows: matches 0, share and bounds null (not NaN).
    """
    done = finished(matches)
    cats = victory_categories(done)
    spine = variant_spine(matches, *([errors] if errors is not None else []))
    grid = spine.join(pl.DataFrame({"victory": cats}, schema={"victory": pl.Utf8}),
                      how="cross")
    counts = done.group_by("variant", "victory").agg(pl.len().cast(pl.Int64).alias("wins"))
    out = (grid.join(counts, on=["variant", "victory"], how="left")
           .with_columns(pl.col("wins").fill_null(0))
           .with_columns(pl.col("wins").sum().over("variant").alias("matches"))
           .with_columns(pl.when(pl.col("matches") > 0)
                         .then(pl.col("wins") / pl.col("matches")).alias("share")))
    out = sort_keys(out, ["variant", "victory"], {"victory": cats})
    out = wilson_columns(out, "wins", "matches", confidence)
    simultaneous: list[tuple[float | None, float | None]] = []
    for part in out.partition_by("variant", maintain_order=True):
        wins = part.get_column("wins").to_list()
        simultaneous += (multinomial_intervals(wins, confidence) if sum(wins)
                         else [(None, None)] * len(wins))
    return out.with_columns(
        pl.Series("lo_simultaneous", [b[0] for b in simultaneous], dtype=pl.Float64),
        pl.Series("hi_simultaneous", [b[1] for b in simultaneous], dtype=pl.Float64),
    ).select("variant", "victory", "wins", "matches", "share", "lo", "hi",
             "lo_simultaneous", "hi_simultaneous")


def end_turn_distribution(matches: pl.DataFrame) -> pl.DataFrame:
    """When matches end, by victory type (V01; V19's turn limit caps it).

    Columns: variant, victory, n, mean, p10, p25, median, p75, p90 (quantiles with
    linear interpolation). Only victory types that occur have a row.
    """
    q = pl.col("end_turn").cast(pl.Float64)
    out = (finished(matches).group_by("variant", "victory")
           .agg(pl.len().cast(pl.Int64).alias("n"), q.mean().alias("mean"),
                q.quantile(0.10, "linear").alias("p10"), q.quantile(0.25, "linear").alias("p25"),
                q.quantile(0.50, "linear").alias("median"),
                q.quantile(0.75, "linear").alias("p75"),
                q.quantile(0.90, "linear").alias("p90")))
    return sort_keys(out, ["variant", "victory"], {"victory": victory_categories(matches)})


EVENT_KINDS = ("observatory_lost",)  # the events near_misses reads
COUNTER_TO_WIN = 8  # V18's default: the dominance counter that wins


def counters_to_win(provenance: dict[str, Any]) -> dict[str, int]:
    """Variant id -> its dominance.counter_to_win (V18): the variant's override, else
    its resolved tables' value as provenance.json recorded them; a variant with
    neither is left out (near_misses then assumes COUNTER_TO_WIN)."""
    out = {}
    for v in provenance.get("variants", []):
        value = (v.get("overrides") or {}).get("dominance.counter_to_win",
                                               table_value(v.get("tables") or {},
                                                           "dominance.counter_to_win"))
        if "id" in v and isinstance(value, int) and not isinstance(value, bool):
            out[v["id"]] = value
    return out


def near_misses(turns: pl.DataFrame | pl.LazyFrame, matches: pl.DataFrame,
                events: pl.DataFrame,
                counter_to_win: int | dict[str, int] = COUNTER_TO_WIN,
                runs: pl.LazyFrame | None = None) -> pl.DataFrame:
    """Instant victories that almost happened: dominance (V18) and science (V16, V17).

    dominance_near_misses: runs of a seat's dominance counter (turns table, seat rows
    in turn order) that reached counter_to_win − 2 or counter_to_win − 1 (6 or 7 by
    default) and then dropped back to 0; `counter_to_win` is one value for every
    variant or each variant's own (counters_to_win(provenance); COUNTER_TO_WIN for a
    variant it leaves out); each run counts once, a run still going
    when the match ends does not count. observatories_lost: observatory_lost events
    (V17: a queued Observatory lost with its city). matches_with_near_miss: matches
    with at least one near miss of either kind. Columns: variant, matches,
    dominance_near_misses, observatories_lost, matches_with_near_miss. `turns` may
    be a lazy scan (sim.analysis.load.scan_table).
    """
    seat = [*MATCH, "seat"]
    limits = counter_to_win if isinstance(counter_to_win, dict) else {}
    default = COUNTER_TO_WIN if isinstance(counter_to_win, dict) else counter_to_win
    win = pl.col("variant").replace_strict(list(limits), list(limits.values()),
                                           default=default, return_dtype=pl.Int64)
    if runs is None:
        turns = turns.lazy().select(*seat, "match_index", "turn", "dominance")
        # only a seat whose counter ever reached counter_to_win - 2 can have a near
        # miss: the runs of the others (nearly all rows) need not be sorted out at all
        close = turns.filter(pl.col("dominance") >= win - 2).select(*seat, "match_index") \
            .unique().collect(engine="streaming")
        # their matches first, by integer index within each variant (cheap to test on
        # every row), then exactly their seats
        theirs = pl.lit(False)
        for (variant,), part in close.group_by(["variant"]):
            theirs = theirs | ((pl.col("variant") == variant)
                               & pl.col("match_index").is_in(
                                   part.get_column("match_index").unique().implode()))
        runs = dominance_runs(turns.filter(theirs).join(close.lazy().select(seat), on=seat,
                                                        how="semi"), MATCH)
    missed = (runs.lazy().filter((pl.col("peak") >= win - 2) & (pl.col("peak") < win))
              .group_by(*MATCH).agg(pl.col("runs").sum().cast(pl.Int64).alias("dom"))
              .collect(engine="streaming"))
    lost = (events.filter(pl.col("kind") == "observatory_lost")
            .group_by(*MATCH).agg(pl.len().cast(pl.Int64).alias("obs")))
    per_match = (finished(matches).select(*MATCH)
                 .join(missed, on=MATCH, how="left").join(lost, on=MATCH, how="left")
                 .with_columns(pl.col("dom", "obs").fill_null(0)))
    out = per_match.group_by("variant").agg(
        pl.len().cast(pl.Int64).alias("matches"),
        pl.col("dom").sum().alias("dominance_near_misses"),
        pl.col("obs").sum().alias("observatories_lost"),
        ((pl.col("dom") + pl.col("obs")) > 0).sum().cast(pl.Int64).alias("matches_with_near_miss"))
    return out.sort("variant")


__all__ = ["COUNTER_TO_WIN", "EVENT_KINDS", "counters_to_win", "end_turn_distribution",
           "near_misses", "victory_frequencies"]


def victory_mix(run_dir: Path | str,
                ) -> tuple[list[str], list[str], dict[str, dict[str, float] | None]] | None:
    """The victory shares per variant of a run folder's matches, as `sim sweep` prints
    them when it is done: the variants in the run's order, the victory types that ended
    some match (in V01's order), and per variant each type's share of its matches (None
    for a variant without any). None when the run holds no match."""
    run_dir = run_path(run_dir)
    prov = read_provenance(run_dir)
    game = game_of_run(prov)  # another game's run: its own outcomes (Crown: winner side)
    order = [v["id"] for v in prov["variants"]]
    counts = (scan(run_dir, "matches").group_by("variant", game.outcome_column)
              .agg(pl.len().alias("n")).collect()).rename({game.outcome_column: "victory"})
    if not counts.height:
        return None
    victories = [v for v in game.outcomes if v in counts["victory"].to_list()]
    shares: dict[str, dict[str, float] | None] = {}
    for variant in order:
        rows = counts.filter(pl.col("variant") == variant)
        total = rows["n"].sum()
        share = dict(zip(rows["victory"].to_list(), rows["n"].to_list(), strict=True))
        shares[variant] = {v: share.get(v, 0) / total for v in victories} if total else None
    return order, victories, shares

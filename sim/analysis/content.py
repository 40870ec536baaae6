"""Content usage: which units, buildings, techs and mechanics the AI ever uses.

A balance lever on content nobody uses does nothing: raising the catapult's attack
changes no match in which no catapult is built. `content_usage` counts, per
variant, the finished matches in which each item was used at least once:

* unit and building: a `built` event names it (starting units are not built);
* tech: a `research` event names it;
* mechanic: its event (`MECHANICS`: kind, and for a few the side that acted).
  The mechanics are the engine's event kinds (sim.rules.codes.EVENT_KINDS, the
  codes this layer may read), named for designers here.

The item lists come from the run itself: each variant's units, buildings and techs
as provenance.json recorded them (`variants[].items`, else the names of its
resolved tables `variants[].tables`), so an item never used still gets its row
with 0 %. A run folder without provenance
lists the items its events name (and so cannot show one never used).

Shares are over finished matches (sim.analysis._frames.finished) with Wilson
intervals (sim.analysis.stats.wilson); an item used in fewer than DEAD_SHARE of
them is flagged `dead`. Events beyond a match's log capacity are not stored
(`matches.events_dropped`): such a match can only undercount, and `content_usage`
counts how many there were in `matches_with_dropped_events`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from sim.analysis._frames import finished, sort_keys, wilson_columns
from sim.analysis.load import EVENT_SLICE, sum_over_slices
from sim.outputs.schemas import SUMMARY_SCHEMAS
from sim.outputs.summaries import NAMED_KINDS, event_use
from sim.rules.codes import NEUTRAL

DEAD_SHARE = 0.05  # used in fewer than this share of finished matches: dead content
CATEGORIES = ("unit", "building", "built", "tech", "mechanic")

# mechanic name -> (event kind, whose row counts: "seat" = its seat is a seat index,
# "village" = its seat is the neutral side (a village taken), None = any row)
MECHANICS: dict[str, tuple[str, str | None]] = {
    "attack": ("attack", "seat"),
    "rush": ("rush", None),
    "gold repair": ("repair", None),
    "turn-start repair": ("repairs", "seat"),
    "heal": ("heals", None),
    "tile buying": ("tile_bought", None),
    "founding": ("found", None),
    "truce": ("truce", None),
    "pact": ("pact", None),
    "camp clearing": ("camp_cleared", None),
    "village capture": ("capture", "village"),
    "city capture": ("capture", "seat"),
    "capital fall": ("capital_fall", None),
    "capital-fall transfer": ("transfer", None),
    "disband": ("unit_disbanded", None),
    "unrest": ("unrest", None),
    "observatory queued": ("observatory_queued", None),
    "elimination": ("eliminated", None),
}


def item_lists(provenance: dict[str, Any]) -> dict[str, dict[str, list[str]]]:
    """Per variant id: {"unit": [...], "building": [...], "tech": [...]} in code order:
    provenance's `variants[].items` (the order the runner recorded), else the names of
    the variant's resolved tables sorted (the same order); {} without either."""
    out: dict[str, dict[str, list[str]]] = {}
    for v in provenance.get("variants", []):
        items = v.get("items") or {}
        tables = v.get("tables") or {}
        if "id" not in v or not (items or tables):
            continue
        out[v["id"]] = {category: list(items[key]) if key in items else sorted(tables.get(key, {}))
                        for category, key in (("unit", "units"), ("building", "buildings"),
                                              ("tech", "techs"))}
    return out


def _usage_events(events: pl.DataFrame | pl.LazyFrame, variants: Sequence[str],
                  usage: pl.LazyFrame | None = None) -> pl.LazyFrame:
    """Lazy rows (variant, match_index, kind, item), unique, for every use the events show: kind
    "built" or "tech" with the item's name, or "mechanic" with the MECHANICS name.
    From `usage`, the run's aggregate of the events each match had (written by the
    sweep: sim.outputs.summaries), when given; else the same rows computed from
    `events` (the table, or its lazy scan sim.analysis.load.scan_table), one
    variant at a time (a filter on the hive column reads only its files), each
    one streaming pass per query. Each row is at most one use: a kind names one
    mechanic, and capture's two sides exclude each other. Only the rows of
    `variants`."""
    kind, seat = pl.col("kind"), pl.col("seat")
    if usage is not None:
        # lazy to the end: the caller's counts stream through the scan of 500,000 rows
        rows = usage.filter(pl.col("variant").is_in(list(variants)))
    else:
        # the queries one after the other (not collect_all): each holds its own read
        # buffers; a variant at a time, its name added after: `variant`, a string on
        # every row, in the key of each unique cost a third of the passes
        found = []
        lazy = events.lazy()
        for v in variants:
            for query in event_use(lazy.filter(pl.col("variant") == v)):
                found.append(query.collect(engine="streaming")
                             .select(pl.lit(v, pl.Utf8).alias("variant"), pl.all()))
        rows = (pl.concat(found) if found else pl.DataFrame(
            schema={"variant": pl.Utf8, **SUMMARY_SCHEMAS["usage"]})).lazy()
    named = rows.filter(kind.is_in(NAMED_KINDS)).select(
        "variant", "match_index",
        pl.when(kind == "built").then(pl.lit("built")).otherwise(pl.lit("tech")).alias("kind"),
        "item")
    # only the side a mechanic asks for matters: any seat index (0 here) or neutral
    mechanics = rows.filter(kind.is_in(sorted({k for k, _side in MECHANICS.values()}))).select(
        "variant", "match_index", "kind", pl.col("side").alias("seat"))
    item = pl.lit(None, pl.Utf8)
    for name, (event, side) in reversed(MECHANICS.items()):
        acted = kind == event
        if side == "seat":  # a seat acted (a capture: a seat's city was taken)
            acted = acted & (seat >= 0)
        elif side == "village":
            acted = acted & (seat == NEUTRAL)
        item = pl.when(acted).then(pl.lit(name)).otherwise(item)
    used = (mechanics.select("variant", "match_index", pl.lit("mechanic").alias("kind"),
                             item.alias("item"))
            .drop_nulls("item"))
    return pl.concat([named, used]).unique()


def content_usage(matches: pl.DataFrame, events: pl.DataFrame | pl.LazyFrame,
                  provenance: dict[str, Any] | None = None, confidence: float = 0.95,
                  dead_below: float = DEAD_SHARE, usage: pl.LazyFrame | None = None,
                  ) -> pl.DataFrame:
    """One row per variant × item: how many finished matches used it at least once.

    Columns: variant, category (unit, building, tech, mechanic; "built" for an item
    its events name but no recorded tables list), item, matches (finished matches
    of the variant), used (those that used the item), share (used / matches, null
    with no finished match), lo, hi (Wilson interval at `confidence`), dead (share
    below `dead_below`: a lever on it does nothing), matches_with_dropped_events
    (finished matches whose event log overflowed, so `used` may undercount).
    Items: the variant's tables in `provenance` (item_lists), plus any name its
    events show (`events`: the table, or its lazy scan; or `usage`, the run's
    aggregate of them, sim.analysis.load.RunScan.usage, which gives the same rows
    without reading the events); mechanics: MECHANICS, in that order. Sorted by
    variant, category (CATEGORIES order), then the tables' order.
    """
    return usage_intervals(usage_counts(matches, events, provenance, usage), confidence,
                           dead_below)


def usage_counts(matches: pl.DataFrame, events: pl.DataFrame | pl.LazyFrame,
                 provenance: dict[str, Any] | None = None,
                 usage: pl.LazyFrame | None = None, size: int = EVENT_SLICE) -> pl.DataFrame:
    """content_usage's rows before their intervals (unsorted; no lo, hi or dead):
    the items, the finished matches and the matches that used each item, read from
    the Parquet alone (usage_intervals finishes them); from `usage`, `size` matches
    at a time."""
    done = finished(matches).select("variant", "match_index", "events_dropped")
    per_variant = done.group_by("variant").agg(
        pl.len().cast(pl.Int64).alias("matches"),
        (pl.col("events_dropped").fill_null(0) > 0).sum().cast(pl.Int64)
        .alias("matches_with_dropped_events"))
    # only finished matches count, so only their variants' events are read
    variants = sorted(set(done.get_column("variant").to_list()))
    keys = done.select("variant", "match_index")
    if usage is None:
        counted = _used(_usage_events(events, variants), keys)
    else:
        # a slice of the matches at a time (each a match's uses lie in one slice, so the
        # slices' counts add up): one pass over every match held the distinct uses of
        # the whole run, 480 MB at 100,000 matches (issue 46)
        counted = sum_over_slices(usage, lambda part: _used(_usage_events(events, variants,
                                                                          part), keys),
                                  keys, size, by=("variant", "kind", "item"))
    lists = item_lists(provenance or {})
    named = {(v, k): items for v, k, items in
             counted.filter(pl.col("kind").is_in(["built", "tech"]))
             .group_by("variant", "kind").agg(pl.col("item").unique().sort()).iter_rows()}
    rows: list[tuple[str, str, str, str, int]] = []  # variant, category, kind, item, rank
    for variant in sorted(set(done.get_column("variant").to_list()) | set(lists)):
        known = lists.get(variant, {"unit": [], "building": [], "tech": []})
        seen = {k: named.get((variant, k), []) for k in ("built", "tech")}
        listed = [("unit", "built", known["unit"]), ("building", "built", known["building"]),
                  ("tech", "tech", known["tech"])]
        extra = [("built", "built", [n for n in seen["built"]
                                     if n not in known["unit"] and n not in known["building"]]),
                 ("tech", "tech", [n for n in seen["tech"] if n not in known["tech"]])]
        rank = 0
        for category, kind, items in [*listed, *extra, ("mechanic", "mechanic",
                                                         list(MECHANICS))]:
            for item in items:
                rows.append((variant, category, kind, item, rank))
                rank += 1
    spine = pl.DataFrame(rows, schema={"variant": pl.Utf8, "category": pl.Utf8,
                                       "kind": pl.Utf8, "item": pl.Utf8, "rank": pl.Int64},
                         orient="row")
    out = (spine.join(counted, on=["variant", "kind", "item"], how="left")
           .join(per_variant, on="variant", how="left")
           .with_columns(pl.col("used", "matches", "matches_with_dropped_events").fill_null(0))
           .with_columns(pl.when(pl.col("matches") > 0)
                         .then(pl.col("used") / pl.col("matches")).alias("share")))
    return out


def _used(uses: pl.LazyFrame, keys: pl.DataFrame) -> pl.DataFrame:
    """variant, kind, item, used (Int64): the matches of `keys` (variant, match_index:
    the finished ones) that used each item."""
    return (uses.join(keys.lazy(), on=["variant", "match_index"], how="semi")
            .group_by("variant", "kind", "item")
            .agg(pl.col("match_index").n_unique().cast(pl.Int64).alias("used"))
            .collect(engine="streaming"))


def usage_intervals(counts: pl.DataFrame, confidence: float = 0.95,
                    dead_below: float = DEAD_SHARE) -> pl.DataFrame:
    """content_usage from usage_counts' rows: the Wilson interval, the dead flag, the
    order and the columns. The first of the two steps reads only Parquet; this one
    needs the statistics libraries (the report runs other scans between the two while
    they load)."""
    out = wilson_columns(counts, "used", "matches", confidence)
    out = out.with_columns(pl.col("share").is_not_null().and_(pl.col("share") < dead_below)
                           .alias("dead"))
    out = sort_keys(out, ["variant", "category", "rank"], {"category": CATEGORIES})
    return out.select("variant", "category", "item", "matches", "used", "share", "lo", "hi",
                      "dead", "matches_with_dropped_events")


__all__ = ["CATEGORIES", "DEAD_SHARE", "MECHANICS", "content_usage", "item_lists",
           "usage_counts", "usage_intervals"]

"""Capital falls and their cascades (V08–V13): falls per match, cascade depth
(falls linked through the event log), cities handed over, eliminations by a
fall, survival after a first fall, revolting cities taken by a third seat or
retaken by their former owner. Sorting and nulls: see _frames."""

from __future__ import annotations

import polars as pl

from sim.analysis._frames import MATCH, finished, normal_bounds, variant_spine

# the events this module's functions read (an elimination's cause is looked up among
# them: only a capital_fall cause counts)
EVENT_KINDS = ("capital_fall", "transfer", "kept", "eliminated", "capture", "revolt_start",
               "revolt_end")


def capital_falls_per_match(events: pl.DataFrame, matches: pl.DataFrame,
                            confidence: float = 0.95) -> pl.DataFrame:
    """How many capitals fall per match (V08, V10).

    Columns: variant, matches, falls (capital_fall events), mean (falls per match),
    lo, hi (normal approximation mean ± z·sd/√n over matches, lo clipped at 0, null
    when fewer than 2 matches), matches_with_fall.
    """
    per_match = (events.filter(pl.col("kind") == "capital_fall")
                 .group_by("variant", "match_index").agg(pl.len().cast(pl.Int64).alias("f")))
    rows = (finished(matches).select("variant", "match_index")
            .join(per_match, on=["variant", "match_index"], how="left")
            .with_columns(pl.col("f").fill_null(0))
            .group_by("variant")
            .agg(pl.len().cast(pl.Int64).alias("matches"), pl.col("f").sum().alias("falls"),
                 pl.col("f").cast(pl.Float64).mean().alias("mean"),
                 pl.col("f").cast(pl.Float64).std().alias("sd"),
                 (pl.col("f") > 0).sum().cast(pl.Int64).alias("matches_with_fall")))
    out = rows.with_columns(normal_bounds("mean", "sd", "matches", confidence, 0.0))
    return out.sort("variant").select("variant", "matches", "falls", "mean", "lo", "hi",
                                      "matches_with_fall")


# A new capital that holds this many turns has stopped the cascade (cascade_links). In
# the demo run half of the repeat falls of one seat come within 9 turns of the previous
# one and a tail reaches 57: those late ones are a new war, not the same collapse.
CASCADE_WITHIN = 10


def cascade_links(events: pl.DataFrame, within: int = CASCADE_WITHIN) -> pl.DataFrame:
    """Every capital_fall row with the cascade it belongs to.

    A fall continues the seat's previous fall when the event log links them: the
    city that fell is the capital the previous fall named (its `value`, V08's new
    capital: a city whose `kept` row has that fall as its `cause`), and it fell at
    most `within` turns later (V10: a new capital can fall again). Otherwise it
    starts a new cascade; so a capital that holds for longer than `within` turns
    ends its cascade, and two falls of one seat 50 turns apart are two cascades of
    depth 1. Columns: variant, match_index, seat, event, turn, cascade (number of
    the cascade within the match × seat, from 1), step (1 for the fall that
    starts it, 2 for the next, …).
    """
    seat = ["variant", "match_index", "seat"]
    falls = (events.filter(pl.col("kind") == "capital_fall")
             .select(*seat, "event", "turn", "city", "value").sort(*seat, "event"))
    # sorted by seat, a fall's previous fall of the same seat is the row above when that
    # row is the same seat's; a cascade's and a seat's first rows are where a running
    # count restarts (shifts, masks and forward fills: a window per seat and per cascade
    # over tens of thousands of small groups cost far more)
    same = pl.all_horizontal(pl.col(c) == pl.col(c).shift(1) for c in seat).fill_null(False)
    linked = (same & (pl.col("city") == pl.col("value").shift(1))
              & (pl.col("turn") - pl.col("turn").shift(1) <= within)).fill_null(False)
    starts = (~linked).cum_sum()
    row = pl.int_range(pl.len())
    return (falls.with_columns(
        (starts - pl.when(~same).then(starts).forward_fill() + 1).cast(pl.Int64)
        .alias("cascade"),
        (row - pl.when(~linked).then(row).forward_fill() + 1).cast(pl.Int64).alias("step"))
        .select(*seat, "event", "turn", "cascade", "step"))


def cascade_depth(events: pl.DataFrame, seats: pl.DataFrame | None = None,
                  within: int = CASCADE_WITHIN) -> pl.DataFrame:
    """How deep capital-fall cascades go (V08, V10: a new capital can fall again).

    For each match × seat, depth = the number of falls in its deepest cascade
    (cascade_links: falls linked through the capital each fall named, at most
    `within` turns apart); 0 for a seat whose capital never fell. Columns:
    variant, depth, seats (match × seat pairs with that depth); every depth from
    0 to the variant's deepest has a row. The seats counted are the rows of
    `seats` (pass it: a seat that lost nothing may have no event at all);
    without it, the seats that appear in the event log (as `seat` or `by`).
    """
    key = ["variant", "match_index", "seat"]
    if seats is not None:
        everyone = seats.select(key).unique()
    else:
        everyone = pl.concat([
            events.select("variant", "match_index", pl.col(c).alias("seat")) for c in ("seat", "by")
        ]).filter(pl.col("seat") >= 0).unique()
    return depth_table(deepest_cascades(events, within), everyone)


def deepest_cascades(events: pl.DataFrame, within: int = CASCADE_WITHIN) -> pl.DataFrame:
    """variant, match_index, seat, depth: the deepest cascade of each seat whose capital
    fell (cascade_depth's units: each lies within its match, so those of disjoint sets
    of matches concatenate)."""
    return cascade_links(events, within).group_by(["variant", "match_index", "seat"]).agg(
        pl.col("step").max().alias("depth"))


def depth_table(deepest: pl.DataFrame, everyone: pl.DataFrame) -> pl.DataFrame:
    """cascade_depth's table from deepest_cascades and the seats counted (`everyone`:
    variant, match_index, seat)."""
    return depth_grid(depth_counts(deepest, everyone))


def depth_counts(deepest: pl.DataFrame, everyone: pl.DataFrame) -> pl.DataFrame:
    """variant, depth, seats (Int64): the seats of `everyone` and of `deepest` by the
    depth of their deepest cascade (0 without one). A seat lies within its match, so
    the counts of disjoint sets of matches add up to the whole run's (the report sums
    them slice by slice)."""
    key = ["variant", "match_index", "seat"]
    everyone = pl.concat([everyone, deepest.select(key)]).unique()
    per_seat = (everyone.join(deepest, on=key, how="left")
                .with_columns(pl.col("depth").fill_null(0).cast(pl.Int64)))
    return per_seat.group_by("variant", "depth").agg(pl.len().cast(pl.Int64).alias("seats"))


def depth_grid(counts: pl.DataFrame) -> pl.DataFrame:
    """cascade_depth's table from depth_counts: every depth from 0 to the variant's
    deepest, 0 seats where none."""
    grid = (counts.group_by("variant").agg(pl.int_ranges(0, pl.col("depth").max() + 1)
                                           .first().alias("depth"))
            .explode("depth").with_columns(pl.col("depth").cast(pl.Int64)))
    return (grid.join(counts, on=["variant", "depth"], how="left")
            .with_columns(pl.col("seats").fill_null(0)).sort("variant", "depth"))


def transfers_per_fall(events: pl.DataFrame) -> pl.DataFrame:
    """How much of an empire a capital fall hands over (V08: cities within the
    radius transfer, cities beyond are kept).

    Columns: variant, falls, mean_transferred, mean_kept (transfer and kept rows per
    capital_fall, matched through their `cause`). Every variant of `events` has a
    row; the means are null when it has no fall.
    """
    return transfers_table(fall_transfers(events), variant_spine(events))


def fall_transfers(events: pl.DataFrame) -> pl.DataFrame:
    """variant, transferred, kept: a row per capital_fall (transfers_per_fall's units;
    a fall's rows lie within its match)."""
    falls = (events.filter(pl.col("kind") == "capital_fall")
             .select(*MATCH, pl.col("event").alias("fall")))
    linked = (events.filter(pl.col("kind").is_in(["transfer", "kept"]))
              .group_by(*MATCH, pl.col("cause").alias("fall"))
              .agg((pl.col("kind") == "transfer").sum().cast(pl.Int64).alias("transferred"),
                   (pl.col("kind") == "kept").sum().cast(pl.Int64).alias("kept")))
    return (falls.join(linked, on=[*MATCH, "fall"], how="left")
            .with_columns(pl.col("transferred", "kept").fill_null(0))
            .select("variant", "transferred", "kept"))


def transfers_table(per_fall: pl.DataFrame, spine: pl.DataFrame) -> pl.DataFrame:
    """transfers_per_fall's table from fall_transfers and the variants' spine."""
    per_fall = (per_fall.group_by("variant")
                .agg(pl.len().cast(pl.Int64).alias("falls"),
                     pl.col("transferred").cast(pl.Float64).mean().alias("mean_transferred"),
                     pl.col("kept").cast(pl.Float64).mean().alias("mean_kept")))
    return (spine.join(per_fall, on="variant", how="left")
            .with_columns(pl.col("falls").fill_null(0)).sort("variant"))


def eliminations_by_fall(events: pl.DataFrame) -> pl.DataFrame:
    """Which eliminations (V02) come from a capital fall (V10: the last city within
    the radius) rather than the capture of a last city.

    Columns: variant, eliminations, by_capital_fall (eliminated rows whose `cause`
    is a capital_fall row of the same match), share (null with no elimination).
    """
    return eliminations_table(elimination_causes(events), variant_spine(events))


def elimination_causes(events: pl.DataFrame) -> pl.DataFrame:
    """variant, cause_kind ("capital_fall" or null): a row per eliminated row
    (eliminations_by_fall's units; a cause lies within its match)."""
    # only a capital_fall cause counts, so only those rows are looked up
    kinds = events.filter(pl.col("kind") == "capital_fall").select(
        *MATCH, pl.col("event").alias("cause"), pl.col("kind").alias("cause_kind"))
    return (events.filter(pl.col("kind") == "eliminated").select(*MATCH, "cause")
            .join(kinds, on=[*MATCH, "cause"], how="left").select("variant", "cause_kind"))


def eliminations_table(causes: pl.DataFrame, spine: pl.DataFrame) -> pl.DataFrame:
    """eliminations_by_fall's table from elimination_causes and the variants' spine."""
    per = (causes.group_by("variant")
           .agg(pl.len().cast(pl.Int64).alias("eliminations"),
                (pl.col("cause_kind") == "capital_fall").fill_null(False).sum()
                .cast(pl.Int64).alias("by_capital_fall")))
    out = (spine.join(per, on="variant", how="left")
           .with_columns(pl.col("eliminations", "by_capital_fall").fill_null(0))
           .with_columns(pl.when(pl.col("eliminations") > 0)
                         .then(pl.col("by_capital_fall") / pl.col("eliminations"))
                         .alias("share")))
    return out.sort("variant")


def fall_to_elimination(events: pl.DataFrame) -> pl.DataFrame:
    """How long a seat survives its first capital fall (V08) before elimination (V02).

    For each match × seat eliminated after (later in the event log than) its first
    capital_fall: turns = elimination turn − first fall turn (0 when V10 eliminates it
    by that same fall). Columns: variant, n (such seats), mean_turns, median_turns
    (null when n is 0).
    """
    return survival_table(fall_survivals(events), variant_spine(events))


def fall_survivals(events: pl.DataFrame) -> pl.DataFrame:
    """variant, turns: a row per seat eliminated after its first capital fall
    (fall_to_elimination's units; a seat's rows lie within its match)."""
    first = (events.filter(pl.col("kind") == "capital_fall")
             .group_by(*MATCH, "seat")
             .agg(pl.col("event").min().alias("fall_event"),
                  pl.col("turn").sort_by("event").first().alias("fall_turn")))
    gone = (events.filter(pl.col("kind") == "eliminated")
            .group_by(*MATCH, "seat")
            .agg(pl.col("event").min().alias("elim_event"),
                 pl.col("turn").sort_by("event").first().alias("elim_turn")))
    return (first.join(gone, on=[*MATCH, "seat"], how="inner")
            .filter(pl.col("elim_event") > pl.col("fall_event"))
            .select("variant", (pl.col("elim_turn") - pl.col("fall_turn")).cast(pl.Float64)
                    .alias("turns")))


def survival_table(per: pl.DataFrame, spine: pl.DataFrame) -> pl.DataFrame:
    """fall_to_elimination's table from fall_survivals and the variants' spine."""
    per = (per.group_by("variant")
           .agg(pl.len().cast(pl.Int64).alias("n"), pl.col("turns").mean().alias("mean_turns"),
                pl.col("turns").median().alias("median_turns")))
    return (spine.join(per, on="variant", how="left")
            .with_columns(pl.col("n").fill_null(0)).sort("variant"))


def revolting_taken_by_third(events: pl.DataFrame,
                             counts: pl.DataFrame | None = None) -> pl.DataFrame:
    """How often a city handed over by a capital fall (V08) is taken from its new
    owner while its revolt (V11, shortened by a Divan: V13) still lasts, and by whom.

    For each transfer row (seat = the former owner, by = the recipient), the
    city's later events are read in log order: the revolt started by the
    transfer (a revolt_start right after it, detail "transfer"; none when a Divan
    brought the revolt to 0 turns) lasts until the city's next revolt_end,
    capture or transfer. If that next event is a capture, or a transfer by
    another capital fall (the recipient's own capital falling), the city was
    taken while revolting: by the former owner (retaken_by_former_owner) or by a
    third seat, neither recipient nor former owner (taken_by_third). Columns:
    variant, transfers (all transfer rows), taken_by_third,
    retaken_by_former_owner, share (taken_by_third / transfers), retaken_share
    (retaken_by_former_owner / transfers); the shares are null with no transfer.
    `counts`: revolting_counts of the events, when the caller summed them over
    slices of the matches (the report: sim.analysis.load.sum_over_slices); `events`
    then only gives the variants (every variant of the events table).
    """
    per = revolting_counts(events) if counts is None else counts
    some = pl.col("transfers") > 0
    out = (variant_spine(events).join(per, on="variant", how="left")
           .with_columns(pl.col("transfers", "taken_by_third", "retaken_by_former_owner")
                         .fill_null(0))
           .with_columns(pl.when(some).then(pl.col("taken_by_third") / pl.col("transfers"))
                         .alias("share"),
                         pl.when(some).then(pl.col("retaken_by_former_owner")
                                            / pl.col("transfers")).alias("retaken_share")))
    return out.sort("variant")


def revolting_counts(events: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """The counts revolting_taken_by_third reads, per variant with a transfer:
    transfers, taken_by_third, retaken_by_former_owner (Int64). Every count is a sum
    over matches (a city's events lie within its match), so the counts of disjoint
    sets of matches add up to the whole run's."""
    # what the rule reads of the next two events, as flags before the shift: shifting
    # the kind and detail strings of every row took 70 MB on a 12,000-match run
    life = (events.lazy()
            .filter(pl.col("kind").is_in(["transfer", "capture", "revolt_start",
                                          "revolt_end"]) & pl.col("city").is_not_null())
            .select("variant", pl.col("variant").rank("dense").alias("variant_code"),
                    "match_index", "city", "event", "kind", "seat", "by",
                    ((pl.col("kind") == "revolt_start") & (pl.col("detail") == "transfer"))
                    .alias("transfer_revolt"),
                    pl.col("kind").is_in(["capture", "transfer"]).alias("taking"))
            # by the match's index, not its id: the same grouping (one id per index in
            # a variant), and integer keys sort without a copy of the id strings
            .sort("variant_code", "match_index", "city", "event"))
    # a city: integers only (the id strings, shifted, took most of that memory)
    city = ["variant_code", "match_index", "city"]
    # sorted by city, the city's n-th next event is n rows down if that row is its
    # (a shift and a mask: a window over every city of every match costs far more)
    same = {n: pl.all_horizontal(pl.col(c) == pl.col(c).shift(-n) for c in city)
            for n in (1, 2)}

    def ahead(col: str, n: int) -> pl.Expr:
        return pl.when(same[n]).then(pl.col(col).shift(-n))

    taken = ahead("transfer_revolt", 1) & ahead("taking", 2)
    end_by = ahead("by", 2)
    by_former = (taken & (end_by == pl.col("seat"))).fill_null(False)
    by_third = (taken & (end_by != pl.col("by")) & (end_by != pl.col("seat"))).fill_null(False)
    # the flags over every row first (the next events are other rows), then the transfers
    return (life.with_columns(by_third.alias("by_third"), by_former.alias("by_former"))
            .filter(pl.col("kind") == "transfer").group_by("variant")
            .agg(pl.len().cast(pl.Int64).alias("transfers"),
                 pl.col("by_third").sum().cast(pl.Int64).alias("taken_by_third"),
                 pl.col("by_former").sum().cast(pl.Int64).alias("retaken_by_former_owner"))
            .collect())


__all__ = [
    "CASCADE_WITHIN",
    "EVENT_KINDS",
    "capital_falls_per_match",
    "cascade_depth",
    "cascade_links",
    "deepest_cascades",
    "depth_counts",
    "depth_grid",
    "depth_table",
    "elimination_causes",
    "eliminations_by_fall",
    "eliminations_table",
    "fall_survivals",
    "fall_to_elimination",
    "fall_transfers",
    "revolting_counts",
    "revolting_taken_by_third",
    "survival_table",
    "transfers_per_fall",
    "transfers_table",
]

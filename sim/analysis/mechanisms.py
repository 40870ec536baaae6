"""Why did a variant move? The mechanism explainer (issue 45).

For a variant whose victory mix moved, every mechanism the event log counts is
compared with the baseline on the same matches, and the mechanisms are ranked by
the size of their paired change. The ranking lists **associations**: what else
changed in the matches where the outcome changed. It points a designer to where
to look; it does not prove a cause (a mechanism may move because the outcome did).

A mechanism is a per-match count (MECHANISMS): each mechanic of content usage
(sim.analysis.content.MECHANICS, the same names: truce, pact, city capture, village
capture, capital fall, capital-fall transfer, elimination, attack, founding, tile
buying, camp clearing, rush, gold repair, disband, unrest, heal, …), then what only
a count tells apart: truce turns (the turns the truces bought), revolt after a fall,
city attack, bandit fight (an attack by or on a bandit), observatory lost; each unit
and building built ("<item> built") and each tech researched ("<tech> researched");
and, when the run has the AI issue's `truces` table, truce offers, accepted and
declined. The event kinds are sim.rules.codes.EVENT_KINDS.

Statistics: each mechanism's per-match count (0 for a match without one) paired
with the baseline's on the same match index (sim.analysis.stats.paired_t: the
paired t-test, which paired_metric_tests' cluster-robust test equals with one value
per match), its interval, and one Holm correction over every variant ×
mechanism of the call (statsmodels `multipletests`, via paired.significance). The
size of a change is its standardised paired effect d_z = mean difference / SD of
the differences (Cohen), so counts of a hundred attacks and of one Granary
compare; the rank is by |d_z|.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from sim.analysis._frames import finished, nan_to_null
from sim.analysis.content import MECHANICS
from sim.analysis.headline import effect_text
from sim.analysis.paired import significance
from sim.analysis.quality import match_slices
from sim.analysis.stats import paired_t
from sim.outputs.storage import run_path
from sim.outputs.store import scan
from sim.rules.codes import BANDIT, NEUTRAL

_MATCH = ["variant", "match_index"]

# which rows of a kind a content.MECHANICS side counts: a seat acted, a village was taken
_SIDES: dict[str | None, pl.Expr | None] = {
    "seat": pl.col("seat") >= 0, "village": pl.col("seat") == NEUTRAL, None: None}
# mechanism -> (event kind, condition on its rows or None); each row counts 1: the
# mechanics of content usage (one name for each, there and here), then what only a
# count tells apart
MECHANISMS: dict[str, tuple[str, pl.Expr | None]] = {
    **{name: (kind, _SIDES[side]) for name, (kind, side) in MECHANICS.items()},
    "revolt after a fall": ("revolt_start", pl.col("detail") == "transfer"),
    "city attack": ("attack", pl.col("city").is_not_null() & (pl.col("seat") >= 0)),
    "bandit fight": ("attack", (pl.col("seat") == BANDIT) | (pl.col("by") == BANDIT)),
    "observatory lost": ("observatory_lost", None),
}
# mechanism -> (event kind, the column summed over its rows)
SUMS: dict[str, tuple[str, str]] = {"truce turns": ("truce", "value")}
# the kinds whose detail names the mechanism: "<detail> built", "<detail> researched"
NAMED = {"built": "built", "research": "researched"}
KINDS = sorted({k for k, _ in MECHANISMS.values()} | {k for k, _ in SUMS.values()} | set(NAMED))
# matches whose events one streaming pass groups: a chunk of the nightly run (250
# matches, some 250,000 events); 500 at a time raised the report's peak by 70 MB, 250
# by 50 (the scan decodes whole files, so fewer would not read less)
EVENT_SLICE = 250
TRUCE_OFFERS = ("truce offers", "truce offers accepted", "truce offers declined")

CAVEAT = ("These are associations, not causes: each line is a mechanism that changed "
          "together with the outcome on the same matches. It points to where to look (a "
          "replay of a changed match, a restricted-play variant); a mechanism may move "
          "because the outcome did.")


def _event_counts(events: pl.LazyFrame) -> pl.DataFrame:
    """(match_index, mechanism, count) of one variant's events. One streaming pass
    groups the rows by match, kind, detail and what the conditions read (seat and
    by clipped to 0 or below: 0 any seat index, else the neutral or bandit code;
    city: 0 or null), a few hundred rows a match; the mechanisms are read from those."""
    owner = [pl.col(c).clip(upper_bound=0) for c in ("seat", "by")]
    groups = (events.filter(pl.col("kind").is_in(KINDS))
              .group_by("match_index", "kind", "detail", *owner,
                        pl.when(pl.col("city").is_not_null()).then(0).alias("city"))
              .agg(pl.len().cast(pl.Int64).alias("n"),
                   pl.col("value").fill_null(0).sum().cast(pl.Int64).alias("value"))
              .collect(engine="streaming").rechunk())
    parts = [groups.filter(pl.col("kind") == kind, *([] if cond is None else [cond]))
             .select("match_index", pl.lit(name).alias("mechanism"), "n")
             for name, (kind, cond) in MECHANISMS.items()]
    parts += [groups.filter(pl.col("kind") == kind)
              .select("match_index", pl.lit(name).alias("mechanism"), pl.col(column).alias("n"))
              for name, (kind, column) in SUMS.items()]
    for kind, word in NAMED.items():
        rows = groups.filter(pl.col("kind") == kind, pl.col("detail").is_not_null())
        # names looked up, not formatted: polars 1.3x's string format panicked on these
        # grouped string views ("assertion failed: i < self.len()")
        names = {d: f"{d} {word}" for d in rows.get_column("detail").unique().to_list()}
        parts.append(rows.select("match_index", pl.col("detail").replace_strict(
            names, return_dtype=pl.Utf8).alias("mechanism"), "n"))
    return (pl.concat(parts).group_by("match_index", "mechanism")
            .agg(pl.col("n").sum().cast(pl.Int64).alias("count")))


def _offer_counts(root: Path | None, variant: str) -> pl.LazyFrame | None:
    """(match_index, mechanism, count) of the run's `truces` table (truce offers,
    accepted and declined), when the run has one; else None."""
    folder = None if root is None else run_path(root) / "truces"
    if folder is None or not folder.is_dir() or not any(folder.rglob("*.parquet")):
        return None
    offers = scan(run_path(root), "truces").filter(pl.col("variant") == variant)
    names = offers.collect_schema().names()
    if "match_index" not in names:
        return None
    accepted = pl.col("accepted").cast(pl.Boolean) if "accepted" in names else None
    parts = [offers.select("match_index", pl.lit(TRUCE_OFFERS[0]).alias("mechanism"),
                           pl.lit(1, pl.Int64).alias("n"))]
    if accepted is not None:
        parts += [offers.filter(accepted).select(
                      "match_index", pl.lit(TRUCE_OFFERS[1]).alias("mechanism"),
                      pl.lit(1, pl.Int64).alias("n")),
                  offers.filter(~accepted).select(
                      "match_index", pl.lit(TRUCE_OFFERS[2]).alias("mechanism"),
                      pl.lit(1, pl.Int64).alias("n"))]
    return (pl.concat(parts).group_by("match_index", "mechanism")
            .agg(pl.col("n").sum().cast(pl.Int64).alias("count")))


def mechanism_counts(events: pl.DataFrame | pl.LazyFrame, matches: pl.DataFrame,
                     variants: Sequence[str], root: Path | str | None = None) -> pl.DataFrame:
    """Per finished match of each of `variants` and per mechanism (module docstring)
    seen in any of them: variant, match_index, mechanism, count (0 where the match
    had none). `events`: the table or its lazy scan, read EVENT_SLICE matches of
    one variant at a time (one streaming pass each); `root`: the run folder, whose
    `truces` table is read when it has one."""
    done = finished(matches).filter(pl.col("variant").is_in(list(variants))).select(_MATCH)
    found = []
    for variant in variants:
        mine = events.lazy().filter(pl.col("variant") == variant)
        index = done.filter(pl.col("variant") == variant).get_column("match_index")
        counted = [_event_counts(mine.filter(pl.col("match_index").is_between(lo, hi)))
                   for lo, hi in match_slices(index, EVENT_SLICE)]
        offers = _offer_counts(run_path(root) if root is not None else None, variant)
        if offers is not None:
            counted.append(offers.collect(engine="streaming"))
        found += [part.select(pl.lit(variant, pl.Utf8).alias("variant"), pl.all())
                  for part in counted]
    counts = pl.concat(found) if found else pl.DataFrame(
        schema={"variant": pl.Utf8, "match_index": pl.Int64, "mechanism": pl.Utf8,
                "count": pl.Int64})
    names = counts.select(pl.col("mechanism").unique().sort())
    return (done.join(names, how="cross")
            .join(counts, on=[*_MATCH, "mechanism"], how="left")
            .with_columns(pl.col("count").fill_null(0))
            .sort([*_MATCH, "mechanism"]))


def _paired(counts: pl.DataFrame, baseline: str, confidence: float) -> pl.DataFrame:
    """variant, mechanism, baseline_value, variant_value, difference, lo, hi, p_value,
    min_p_value, n_pairs, d_z: each count paired with the baseline's on the same match
    (stats.paired_t)."""
    base = counts.filter(pl.col("variant") == baseline).select(
        "match_index", "mechanism", pl.col("count").alias("base"))
    pairs = (counts.filter(pl.col("variant") != baseline)
             .join(base, on=["match_index", "mechanism"])
             .sort("variant", "mechanism", "match_index")
             .group_by("variant", "mechanism", maintain_order=True)
             .agg(pl.col("base").mean().alias("baseline_value"),
                  pl.col("count").mean().alias("variant_value"),
                  (pl.col("count") - pl.col("base")).cast(pl.Float64).alias("d")))
    return _paired_rows(pairs.iter_rows(), confidence)


def _paired_rows(pairs, confidence: float) -> pl.DataFrame:
    """_paired's frame from (variant, mechanism, baseline_value, variant_value, d) per
    pair of counts, d the differences in match order."""
    rows = []
    for variant, mechanism, base_value, value, d in pairs:
        diff, lo, hi, p, n = paired_t(d, confidence)
        sd = float(np.std(d, ddof=1)) if n > 1 else math.nan
        size = diff / sd if sd > 0 else (0.0 if diff == 0 else math.copysign(math.inf, diff))
        rows.append((variant, mechanism, base_value, value, diff, nan_to_null(lo),
                     nan_to_null(hi), nan_to_null(p), 0.0, n, nan_to_null(size)))
    return pl.DataFrame(rows, orient="row", schema={
        "variant": pl.Utf8, "mechanism": pl.Utf8, "baseline_value": pl.Float64,
        "variant_value": pl.Float64, "difference": pl.Float64, "lo": pl.Float64,
        "hi": pl.Float64, "p_value": pl.Float64, "min_p_value": pl.Float64,
        "n_pairs": pl.Int64, "d_z": pl.Float64})


def mechanism_changes(counts: pl.DataFrame, baseline: str, confidence: float = 0.95,
                      method: str = "holm", tests: pl.DataFrame | None = None
                      ) -> pl.DataFrame:
    """Each variant's paired change of every mechanism against the baseline, ranked.
    `counts`: a row per finished match and mechanism, 0 where it had none
    (mechanism_counts), so that a match without the mechanism pairs as a 0.

    Columns: variant, rank (1 = the largest |d_z| of its variant; changed rows rank
    before unchanged ones), mechanism, baseline_value, variant_value (means per
    match), difference (variant − baseline, per match), lo, hi (its paired
    interval), relative (difference / baseline_value, null when the baseline's is
    0), d_z (the standardised size, module docstring), p_value, p_adjusted
    (`method` over every row, paired.significance), changed, n_pairs. `tests`: the
    paired tests already made from the counts (run_mechanism_changes), `counts` then
    unread."""
    tests = _paired(counts, baseline, confidence) if tests is None else tests
    if tests.height == 0:
        return tests
    out = significance(tests, method=method).with_columns(
        pl.when(pl.col("baseline_value") != 0)
        .then(pl.col("difference") / pl.col("baseline_value")).alias("relative"),
        pl.col("d_z").abs().fill_null(0.0).alias("size"))
    out = out.sort(["variant", "changed", "size", "mechanism"],
                   descending=[False, True, True, False])
    out = out.with_columns(pl.int_range(1, pl.len() + 1).over("variant").alias("rank"))
    return out.select("variant", "rank", "mechanism", "baseline_value", "variant_value",
                      "difference", "lo", "hi", "relative", "d_z", "p_value", "p_adjusted",
                      "changed", "n_pairs")


def run_mechanism_changes(events: pl.LazyFrame, matches: pl.DataFrame,
                          variants: Sequence[str], baseline: str,
                          root: Path | str | None = None, confidence: float = 0.95,
                          method: str = "holm", size: int = EVENT_SLICE) -> pl.DataFrame:
    """mechanism_changes(mechanism_counts(events, matches, [baseline, *variants], root),
    baseline), the same frame, without holding mechanism_counts' table: a row per
    match, mechanism and variant (490,000 for a 10,000-match run of 2 variants, whose
    cross join and sort grew the report past 1.8 GB at 75,000 matches). The matches
    are read `size` at a time and each pair keeps only its two counts per match
    (32-bit) until every mechanism any slice saw is known; a mechanism a slice did not
    see counts 0 there, as mechanism_counts' zeros do."""
    names = [baseline, *(v for v in variants if v != baseline)]
    done = finished(matches).filter(pl.col("variant").is_in(names)).select(_MATCH)
    offers = {v: _offer_counts(run_path(root) if root is not None else None, v)
              for v in names}
    seen: set[str] = set()
    # per slice: {variant: (its paired match indices, {mechanism: (base, count)})}
    slices: list[dict[str, tuple[np.ndarray, dict[str, tuple[np.ndarray, np.ndarray]]]]] = []
    for lo, hi in match_slices(done.get_column("match_index"), size):
        counted = {v: _slice_counts(events, offers[v], done, v, lo, hi) for v in names}
        for frame in counted.values():
            seen.update(frame.get_column("mechanism").unique().to_list())
        slices.append({v: _slice_pairs(counted[baseline], counted[v])
                       for v in names[1:]})
    pairs = []
    for variant in sorted(names[1:]):
        for mechanism in sorted(seen):
            base_parts, count_parts = [np.zeros(0, np.int32)], [np.zeros(0, np.int32)]
            for part in slices:
                both, counts = part[variant]
                zeros = np.zeros(both.size, np.int32)
                b, c = counts.get(mechanism, (zeros, zeros))
                base_parts.append(b)
                count_parts.append(c)
            base, count = np.concatenate(base_parts), np.concatenate(count_parts)
            if base.size == 0:
                continue
            pairs.append((variant, mechanism, pl.Series(base, dtype=pl.Int64).mean(),
                          pl.Series(count, dtype=pl.Int64).mean(),
                          (count.astype(np.int64) - base).astype(np.float64)))
    return mechanism_changes(pl.DataFrame(), baseline, confidence, method,
                             tests=_paired_rows(pairs, confidence))


def _slice_counts(events: pl.LazyFrame, offers: pl.LazyFrame | None, done: pl.DataFrame,
                  variant: str, lo: int, hi: int) -> pl.DataFrame:
    """(match_index, mechanism, count) of `variant`'s finished matches from lo to hi,
    every mechanism its events (and truce offers) show, 0 where a match had none."""
    mine = events.lazy().filter(pl.col("variant") == variant,
                                pl.col("match_index").is_between(lo, hi))
    parts = [_event_counts(mine)]
    if offers is not None:
        parts.append(offers.filter(pl.col("match_index").is_between(lo, hi))
                     .collect(engine="streaming"))
    counts = pl.concat(parts).group_by("match_index", "mechanism").agg(pl.col("count").sum())
    index = done.filter(pl.col("variant") == variant,
                        pl.col("match_index").is_between(lo, hi)).select("match_index")
    names = counts.select(pl.col("mechanism").unique())
    return (index.join(names, how="cross")
            .join(counts, on=["match_index", "mechanism"], how="left")
            .with_columns(pl.col("count").fill_null(0)))


def _slice_pairs(base: pl.DataFrame, mine: pl.DataFrame
                 ) -> tuple[np.ndarray, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """The slice's matches finished in both the baseline and the variant (in match
    order) and, per mechanism either saw, their two counts on those matches (int32; 0
    where one of them had none of it)."""
    both = np.intersect1d(base.get_column("match_index").unique().to_numpy(),
                          mine.get_column("match_index").unique().to_numpy())
    spine = pl.DataFrame({"match_index": both})
    names = sorted(set(base.get_column("mechanism").to_list())
                   | set(mine.get_column("mechanism").to_list()))
    wide = [_wide(spine, frame) for frame in (base, mine)]
    return both, {m: tuple(w[m].to_numpy() if m in w.columns else np.zeros(both.size, np.int32)
                           for w in wide) for m in names}


def _wide(spine: pl.DataFrame, counts: pl.DataFrame) -> pl.DataFrame:
    """A column per mechanism of `counts` (int32) on the matches of `spine`, in its
    order (0: none)."""
    if counts.height == 0:
        return spine
    wide = counts.pivot(on="mechanism", index="match_index", values="count")
    return (spine.join(wide, on="match_index", how="left")
            .with_columns(pl.exclude("match_index").fill_null(0).cast(pl.Int32)))


def moved_variants(mix: pl.DataFrame | None) -> list[str]:
    """The variants whose whole victory mix moved: the joint test (paired.
    victory_mix_tests, corrected by paired.significance) says changed."""
    if mix is None or mix.height == 0 or "changed" not in mix.columns:
        return []
    return mix.filter(pl.col("changed")).get_column("variant").to_list()


def _signed(x: float, digits: int) -> str:
    return f"{x:+.{digits}f}".replace("-", "−")


def mechanism_words(row: dict) -> str:
    """One ranked mechanism in words: "truce +1.80 per match [+1.60, +2.00] (from
    2.10)"."""
    interval = (f" [{_signed(row['lo'], 2)}, {_signed(row['hi'], 2)}]"
                if row.get("lo") is not None and row.get("hi") is not None else "")
    return (f"{row['mechanism']} {_signed(row['difference'], 2)} per match{interval} "
            f"(from {row['baseline_value']:.2f})")


def explanation(victory_tests: pl.DataFrame, changes: pl.DataFrame, variant: str,
                top: int = 5) -> str:
    """The effect of one variant on the victory mix beside the mechanisms that moved
    most with it: "science +13.0 points, conquest −9.1 points: truce +1.80 per match
    [+1.60, +2.00] (from 2.10); …". `victory_tests`: paired_victory_tests rows
    (with `changed` after the correction: only those effects are named, else the
    largest); `changes`: mechanism_changes. Only changed mechanisms are listed."""
    mine = victory_tests.filter((pl.col("variant") == variant)
                                & pl.col("metric").str.starts_with("victory="))
    if "changed" in mine.columns and mine.filter(pl.col("changed")).height:
        mine = mine.filter(pl.col("changed"))
    else:
        mine = mine.sort(pl.col("difference").abs(), descending=True).head(1)
    effects = ", ".join(effect_text(r["metric"], r["difference"], None, None, True)
                        .split(":")[0] for r in mine.iter_rows(named=True))
    ranked = changes.filter((pl.col("variant") == variant) & pl.col("changed")).head(top)
    if ranked.height == 0:
        return f"{effects}: no mechanism changed significantly with it."
    return f"{effects}: " + "; ".join(mechanism_words(r) for r in
                                      ranked.iter_rows(named=True)) + "."


__all__ = ["CAVEAT", "KINDS", "MECHANISMS", "SUMS", "TRUCE_OFFERS", "explanation",
           "mechanism_changes", "mechanism_counts", "mechanism_words", "moved_variants",
           "run_mechanism_changes"]

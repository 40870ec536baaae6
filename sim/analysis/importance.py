"""What each strategy is worth (issue 16): restricted play, after Jaffe et al.,
"Evaluating Competitive Game Balance with Restricted Play" (AIIDE 2012).

A restricted variant forbids one seat index something (a unit, a building, a
mechanic, `research:<tech>`; its `seat_ai`, recorded in the seats table's `forbid`
column). The strategy's worth is what the restriction costs that seat: its win rate,
overall and by victory type, against the same seat index unrestricted in the
baseline, on the same seeded matches (common random numbers: match i of both
variants has the same map, personalities and streams, so the rows pair by
`match_index`).

* `strategy_importance`: one row per restricted variant × seat × outcome ("win",
  "win=conquest", …) with the paired difference, Newcombe's paired interval
  (stats.paired_share_interval), the exact McNemar p (stats.mcnemar_exact) and
  Holm's correction across every row of the table (stats.holm), plus the verdict
  of the "win" row: `costs` (the Holm-corrected loss is significant), `nothing`
  (the whole interval lies within ±margin: the game does not reward the
  strategy), `gains` (the seat wins significantly more without it) or
  `undecided` (too few matches to tell).
* `baseline_use`: how often the restricted seat used the forbidden items in the
  free twin's matches (a strategy never used cannot be worth anything: the
  restriction changes nothing).

The free twin of a restricted variant is the variant playing the same tables with no
seat settings: the baseline when the restricted variant overrides nothing else
(with the run's provenance, any variant whose overrides are the same, so a
restriction can be measured on other tables too; the baseline first).

Sorting: see _frames; rows rank by the win difference (largest loss first).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from sim.analysis._frames import VICTORIES, finished, sort_keys
from sim.analysis.stats import holm, mcnemar_exact, paired_share_interval

MARGIN = 0.03  # a restriction within ±3 points of win rate costs nothing a designer acts on
VERDICTS = ("costs", "gains", "nothing", "undecided")

_SCHEMA = {"variant": pl.Utf8, "seat": pl.Int64, "forbid": pl.Utf8, "twin": pl.Utf8,
           "outcome": pl.Utf8,
           "baseline_value": pl.Float64, "variant_value": pl.Float64,
           "difference": pl.Float64, "lo": pl.Float64, "hi": pl.Float64,
           "p_value": pl.Float64, "p_holm": pl.Float64, "n_pairs": pl.Int64,
           "discordant_gain": pl.Int64, "discordant_loss": pl.Int64, "verdict": pl.Utf8}


def restricted_seats(seats: pl.DataFrame | pl.LazyFrame, baseline: str) -> pl.DataFrame:
    """(variant, seat, forbid): every seat index a variant other than the baseline
    forbids something, one row each (the forbid is the same in every match of a
    variant: it stays with the seat index while personalities rotate). `seats` may be
    a lazy scan (the report's: only these three columns are read)."""
    seats = seats.lazy()
    if "forbid" not in seats.collect_schema().names():
        return pl.DataFrame(schema={"variant": pl.Utf8, "seat": pl.Int64, "forbid": pl.Utf8})
    return (seats.filter(pl.col("forbid").fill_null("") != "", pl.col("variant") != baseline)
            .select("variant", "seat", "forbid").unique().sort("variant", "seat").collect())


def free_twins(variants: list[str], baseline: str,
               provenance: dict[str, Any] | None = None) -> dict[str, str]:
    """Restricted or other variant id -> the variant it is measured against: the one
    with the same overrides and no seat settings (the baseline first). Without
    provenance every variant's twin is the baseline; with it, a variant that has no
    such twin is left out (pairing it with the baseline would mix its table change
    into the restriction's worth)."""
    entries = {v["id"]: v for v in (provenance or {}).get("variants", []) if "id" in v}
    if not entries:
        return dict.fromkeys(variants, baseline)

    def overrides(vid: str) -> tuple:
        return tuple(sorted((k, repr(x)) for k, x in
                            (entries.get(vid, {}).get("overrides") or {}).items()))

    free = [vid for vid, v in entries.items()
            if not any(e.get("skill") or e.get("forbid") for e in v.get("seat_ai") or [])]
    free.sort(key=lambda vid: vid != baseline)  # the baseline first, then file order
    out = {}
    for vid in variants:
        twin = next((f for f in free if overrides(f) == overrides(vid)), None)
        if twin is not None:
            out[vid] = twin
    return out


def _seat_outcomes(matches: pl.DataFrame, seats: pl.DataFrame | pl.LazyFrame, variant: str,
                   seat: int) -> pl.DataFrame:
    """(match_index, won, victory) of one seat index in one variant's finished matches."""
    done = finished(matches).filter(pl.col("variant") == variant).select(
        "match_index", "victory")
    # lazy: the filter copies only the two columns selected, not every seat column
    mine = seats.lazy().filter(pl.col("variant") == variant, pl.col("seat") == seat).select(
        "match_index", pl.col("winner").fill_null(False).alias("won")).collect()
    return done.join(mine, on="match_index", how="inner")


def _verdict(difference: float, lo: float, hi: float, p_holm: float, margin: float,
             alpha: float) -> str:
    if p_holm < alpha and hi < 0:
        return "costs"
    if p_holm < alpha and lo > 0:
        return "gains"
    if -margin <= lo and hi <= margin:
        return "nothing"
    return "undecided"


def strategy_importance(matches: pl.DataFrame, seats: pl.DataFrame | pl.LazyFrame,
                        baseline: str, confidence: float = 0.95, margin: float = MARGIN,
                        provenance: dict[str, Any] | None = None) -> pl.DataFrame:
    """The restricted seat's win rate change, overall and per victory type (V01).

    matches, seats: the run's tables (sim.analysis.load), every variant; a pair is a
    match index finished in both the restricted variant and its free twin (see the
    module; `provenance` finds twins other than `baseline`). Columns:
    variant, seat, forbid, twin (the variant it is paired with), outcome ("win" or
    "win=<victory>"), baseline_value (the seat's share of the pairs won, by that
    type, in the twin), variant_value
    (the same, restricted), difference (variant − baseline), lo, hi (paired
    interval at `confidence`), p_value (exact McNemar), p_holm (Holm across every
    row of this table), n_pairs, discordant_gain (the seat won only when
    restricted), discordant_loss (only when free), verdict (on every row: costs,
    gains, nothing within ±margin, undecided; see the module). A run without a
    restricted seat gives no rows. Sorted by the "win" difference, largest loss
    first, then seat, then outcome (win, then V01's order).
    """
    alpha = 1.0 - confidence
    rows: list[dict] = []
    held_seats = restricted_seats(seats, baseline)
    twins = free_twins(held_seats.get_column("variant").unique().to_list(), baseline,
                       provenance)
    for variant, seat, forbid in held_seats.iter_rows():
        if variant not in twins:
            continue
        free = _seat_outcomes(matches, seats, twins[variant], seat)
        held = _seat_outcomes(matches, seats, variant, seat)
        pairs = held.join(free, on="match_index", suffix="_base")
        n = pairs.height
        if n == 0:
            continue
        won, won_base = pairs.get_column("won"), pairs.get_column("won_base")
        for outcome in ("win", *VICTORIES):
            if outcome == "win":
                v, b = won, won_base
            else:
                v = won & (pairs.get_column("victory") == outcome)
                b = won_base & (pairs.get_column("victory_base") == outcome)
            gain, loss, both = int((v & ~b).sum()), int((b & ~v).sum()), int((v & b).sum())
            diff, lo, hi = paired_share_interval(both, gain, loss, n - both - gain - loss,
                                                 confidence)
            rows.append({"variant": variant, "seat": seat, "forbid": forbid,
                         "twin": twins[variant],
                         "outcome": outcome if outcome == "win" else f"win={outcome}",
                         "baseline_value": float(b.mean()), "variant_value": float(v.mean()),
                         "difference": diff, "lo": lo, "hi": hi,
                         "p_value": mcnemar_exact(gain, loss), "n_pairs": n,
                         "discordant_gain": gain, "discordant_loss": loss})
    for row, p in zip(rows, holm([r["p_value"] for r in rows]), strict=True):
        row["p_holm"] = p
        row["verdict"] = _verdict(row["difference"], row["lo"], row["hi"], p, margin, alpha)
    out = pl.DataFrame(rows, schema=_SCHEMA, orient="row")
    if out.height == 0:
        return out
    win = out.filter(pl.col("outcome") == "win").select(
        "variant", "seat", pl.col("difference").alias("_rank"))
    out = out.join(win, on=["variant", "seat"], how="left")
    order = ["win", *(f"win={v}" for v in VICTORIES)]
    return sort_keys(out, ["_rank", "variant", "seat", "outcome"], {"outcome": order}).drop(
        "_rank")


def _use_filter(name: str, seat: int) -> pl.Expr | None:
    """The events that show `seat` using the forbid `name` (docs/outcomes.md's kinds),
    None when no event shows it."""
    acted = pl.col("seat") == seat
    if name.startswith("research:"):
        return (pl.col("kind") == "research") & (pl.col("detail") == name.split(":", 1)[1]) & acted
    mechanics = {
        "attack_cities": (pl.col("kind") == "attack") & pl.col("city").is_not_null() & acted,
        "buy_tiles": (pl.col("kind") == "tile_bought") & acted,
        "truce": (pl.col("kind") == "truce") & (acted | (pl.col("by") == seat)),
        "rush": (pl.col("kind") == "rush") & acted,
    }
    if name == "pact":
        return None  # a pact event names its target, not its members
    if name in mechanics:
        return mechanics[name]
    return (pl.col("kind") == "built") & (pl.col("detail") == name) & acted


def baseline_use(matches: pl.DataFrame, events: pl.DataFrame | pl.LazyFrame,
                 seats: pl.DataFrame | pl.LazyFrame,
                 baseline: str, provenance: dict[str, Any] | None = None) -> pl.DataFrame:
    """How often each restricted seat index used what its variant forbids, in its
    free twin's finished matches (free_twins), where it was free to.

    Columns: variant, seat, item (one forbid name), twin, used (twin's matches in which
    that seat index used it at least once: built the unit or building, researched
    the tech, attacked a city, bought a tile, bought or granted a truce, rushed),
    matches (the twin's finished matches), share (null for `pact`, whose events
    name the target only, and with no finished match). `events`: the table, or its
    lazy scan (sim.analysis.load.scan_table), read once per twin."""
    held_seats = restricted_seats(seats, baseline)
    twins = free_twins(held_seats.get_column("variant").unique().to_list(), baseline,
                       provenance)
    rows = [{"variant": variant, "seat": seat, "item": item, "twin": twins[variant],
             "expr": _use_filter(item, seat)}
            for variant, seat, forbid in held_seats.iter_rows() if variant in twins
            for item in forbid.split(",")]
    for twin in dict.fromkeys(r["twin"] for r in rows):
        done = finished(matches).filter(pl.col("variant") == twin).select("match_index")
        mine = [(i, r) for i, r in enumerate(rows) if r["twin"] == twin]
        counted = [pl.col("match_index").filter(r["expr"]).n_unique().alias(f"u{i}")
                   for i, r in mine if r["expr"] is not None]
        used = {}
        if counted:  # every item of this twin counted in one pass over its events
            used = (events.lazy().filter(pl.col("variant") == twin)
                    .join(done.lazy(), on="match_index", how="semi")
                    .select(counted).collect().row(0, named=True))
        for i, r in mine:
            r["used"] = used.get(f"u{i}")
            r["matches"] = done.height
            r["share"] = (None if r["used"] is None or done.height == 0
                          else r["used"] / done.height)
    for r in rows:
        del r["expr"]
    schema = {"variant": pl.Utf8, "seat": pl.Int64, "item": pl.Utf8, "twin": pl.Utf8,
              "used": pl.Int64,
              "matches": pl.Int64, "share": pl.Float64}
    return pl.DataFrame(rows, schema=schema, orient="row")

"""Which table values matter: paired effects of a sensitivity sweep (issue 13).

A sensitivity folder holds a sweep (in `sweep/`) whose variants move one table
value each to a low and a high value (sim.runner.sensitivity; the design is the
folder's `sensitivity.json`). For every parameter the high variant is compared with the
low one on the same matches (common random numbers), with the paired tests of
sim.analysis.paired: per victory type an exact McNemar test and Newcombe's
paired interval; for end_turn, the gold shares and capital falls a paired
(cluster-robust) t-test. One Holm correction runs over every parameter ×
outcome. A parameter is *inert* when not one match changed its winner, victory
type or end turn between its low and high value and no outcome moved at all (every
effect, the gold shares' too, exactly 0): a lever on it does nothing. A value that
moves only the score's gold term changes no winner, yet is not inert.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from sim.analysis.load import read_table, scan_table, write_frame
from sim.analysis.paired import paired_metric_tests, paired_victory_tests, significance
from sim.outputs.folders import SENSITIVITY_DESIGN_FILE, SWEEP_DIR
from sim.outputs.games import game_of
from sim.outputs.schemas import SCHEMAS
from sim.outputs.storage import run_path
from sim.rules.codes import VICTORY_NAMES

SCHEMA = {"parameter": pl.Utf8, "base": pl.Float64, "low": pl.Float64, "high": pl.Float64,
          "metric": pl.Utf8, "low_value": pl.Float64, "high_value": pl.Float64,
          "effect": pl.Float64, "lo": pl.Float64, "hi": pl.Float64,
          "effect_per_10pct": pl.Float64, "p_value": pl.Float64, "min_p_value": pl.Float64,
          "n_pairs": pl.Int64}


def read_design(run_dir: Path | str) -> dict[str, Any]:
    """The design `sim sensitivity` wrote beside the sweep (sensitivity.json)."""
    path = run_path(run_dir) / SENSITIVITY_DESIGN_FILE
    if not path.is_file():
        raise ValueError(f"{run_dir}: no {SENSITIVITY_DESIGN_FILE}: not a sensitivity run folder")
    return json.loads(path.read_text(encoding="utf-8"))


def _per_10pct(effect: float, p: dict[str, Any]) -> float | None:
    """The effect scaled to a +10 % move of the base value (None for a base of 0)."""
    if p["base"] == 0 or effect is None or (isinstance(effect, float) and math.isnan(effect)):
        return None
    return effect * 0.1 * abs(p["base"]) / (p["high"] - p["low"])


def load_frames(run_dir: Path | str) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """matches, seats and the capital_fall events of a run folder (the events table
    of a large sensitivity sweep is big: only the rows the outcomes need are read)."""
    root = run_path(run_dir)  # a path or a URL
    matches = read_table(root, "matches")
    seats = read_table(root, "seats")
    # the run's own reader (a compacted run's files; a URL): the table's columns, then
    # `variant`, then any others, which are left out
    events = scan_table(root, "events").filter(pl.col("kind") == "capital_fall").collect()
    columns = [c for c in (*SCHEMAS["events"], "variant") if c in events.columns]
    return matches, seats, events.select(columns)


def effects(design: dict[str, Any], matches: pl.DataFrame, seats: pl.DataFrame,
            events: pl.DataFrame, confidence: float = 0.95) -> pl.DataFrame:
    """One row per parameter × metric: high value minus low value, paired.

    Columns: parameter, base, low, high (the table values), metric ("victory=X",
    end_turn, winner_gold_share, standing_gold_share, capital_falls), low_value,
    high_value (the metric at each), effect (high − low) with its paired interval
    lo, hi, effect_per_10pct (effect × 10 % of the base / (high − low): the slope
    per +10 %; null for a base of 0), p_value, min_p_value, n_pairs, then
    p_adjusted and changed (Holm over every row, alpha 0.05), inert (no match
    changed winner, victory or end turn, and every effect of the parameter is 0),
    same_as (the design's: the earlier key whose
    sides play the same matches, null for the first), rank within the metric (1 is
    the strongest): changed effects first, then by |effect_per_10pct|, then the
    effects of a base of 0 by |effect|; the keys of one lever share its rank; group
    (the design's: "setup" for the match's length, board size and game-speed and
    seat-count scales, sim.runner.sensitivity.SETUP_KEYS, "balance" for every other
    value) and group_rank, the place within the metric and group (rank_effects; what
    the tornado of each group shows). A side the design did not play (its `plays`)
    reads the matches of the one it plays as.
    """
    plays = design.get("plays", {})

    def split(frame: pl.DataFrame) -> dict[str, pl.DataFrame]:
        return {k[0]: v for k, v in frame.partition_by("variant", as_dict=True).items()}

    def of(store: dict[str, pl.DataFrame], name: str, empty: pl.DataFrame) -> pl.DataFrame:
        """The rows of variant `name`: those of the variant it plays as (the design's
        `plays`), named `name`, so a pair of sides never shares a variant name."""
        ran = plays.get(name, name)
        rows = store.get(ran, empty)
        return rows if ran == name else rows.with_columns(pl.lit(name).alias("variant"))

    by_variant, seats_by, events_by = split(matches), split(seats), split(events)
    empty = {"matches": matches.clear(), "seats": seats.clear(), "events": events.clear()}
    frames, inert = [], {}
    for p in design["parameters"]:
        lo_id, hi_id = p["low_variant"], p["high_variant"]
        if plays.get(lo_id, lo_id) not in by_variant or plays.get(hi_id, hi_id) not in by_variant:
            continue
        m = pl.concat([of(by_variant, v, empty["matches"]) for v in (lo_id, hi_id)])
        s = pl.concat([of(seats_by, v, empty["seats"]) for v in (lo_id, hi_id)])
        e = pl.concat([of(events_by, v, empty["events"]) for v in (lo_id, hi_id)])
        tests = pl.concat([paired_victory_tests(m, lo_id, confidence)
                           .drop("discordant_gain", "discordant_loss"),
                           paired_metric_tests(m, s, e, lo_id, confidence)])
        frames.append(tests.with_columns(pl.lit(p["key"]).alias("parameter"),
                                         pl.lit(float(p["base"])).alias("base"),
                                         pl.lit(float(p["low"])).alias("low"),
                                         pl.lit(float(p["high"])).alias("high")))
        cols = ["match_index", "winner", "victory", "end_turn"]
        a = of(by_variant, lo_id, empty["matches"]).select(cols).sort("match_index")
        b = of(by_variant, hi_id, empty["matches"]).select(cols).sort("match_index")
        inert[p["key"]] = a.equals(b)
    return finish_effects(frames, inert, design)


def finish_effects(frames: list[pl.DataFrame], inert: dict[str, bool],
                   design: dict[str, Any]) -> pl.DataFrame:
    """`effects`' table from its parts, for any game: `frames`, per parameter its
    paired tests (variant, metric, baseline_value, variant_value, difference, lo, hi,
    p_value, min_p_value, n_pairs; the low side as the baseline) with parameter, base,
    low and high; `inert`, per parameter whether its two sides played alike; then the
    slopes per +10 %, Holm, inertness and the ranks as `effects` describes."""
    if not frames:
        return pl.DataFrame(schema={**SCHEMA, "p_adjusted": pl.Float64, "changed": pl.Boolean,
                                    "inert": pl.Boolean, "same_as": pl.Utf8,
                                    "group": pl.Utf8, "rank": pl.Int64,
                                    "group_rank": pl.Int64})
    tests = pl.concat(frames).rename({"baseline_value": "low_value",
                                      "variant_value": "high_value", "difference": "effect"})
    params = {p["key"]: p for p in design["parameters"]}
    tests = tests.with_columns(
        pl.struct("parameter", "effect").map_elements(
            lambda r: _per_10pct(r["effect"], params[r["parameter"]]),
            return_dtype=pl.Float64).alias("effect_per_10pct"))
    # `variant` names the row in significance's resolution warning
    tests = significance(tests.select(*SCHEMA).with_columns(pl.col("parameter").alias("variant")),
                         "holm")
    # an effect on any outcome (the gold shares move without a winner changing) is not
    # nothing: inert needs the matches alike and every effect 0
    moved = set(tests.filter(pl.col("effect").fill_nan(0.0).fill_null(0.0) != 0)
                .get_column("parameter").to_list())
    inert = {k: same and k not in moved for k, same in inert.items()}
    tests = tests.drop("resolution_limited", "variant").with_columns(
        pl.col("parameter").replace_strict(inert, return_dtype=pl.Boolean).alias("inert"))
    same_as = {p["key"]: p.get("same_as") for p in design["parameters"]}
    # a design written before groups existed ranks every key as a balance value
    group = {p["key"]: p.get("group", "balance") for p in design["parameters"]}
    return rank_effects(tests, same_as, group)


def rank_effects(tests: pl.DataFrame, same_as: dict[str, str | None],
                 group: dict[str, str]) -> pl.DataFrame:
    """`tests` (one row per parameter × metric: effect, effect_per_10pct, changed) with
    same_as and group (by parameter) and the ranks within the metric: `rank` among all
    keys, `group_rank` among the keys of the same group.

    Significant effects rank first: a tornado must not open with an effect its own test
    cannot tell from noise. Then slopes per +10 % come before the effects of a base of 0
    (a move from 0 to one unit, which no slope compares with); ties (inert parameters:
    effect 0) rank by parameter name, so the table is stable. One lever under several
    keys (`same_as`: the same matches at both sides) takes one rank, the place of its
    strongest key, and the next lever the next rank; within a group, the place of its
    strongest key in that group (a balance key that is one lever with a setup key
    ranks among the balance values by its own slope)."""
    strength = pl.coalesce(pl.col("effect_per_10pct").abs(), pl.col("effect").abs())
    ranked = tests.with_columns(
        pl.col("parameter").replace_strict(same_as, default=None, return_dtype=pl.Utf8)
        .alias("same_as"),
        pl.col("parameter").replace_strict(group, return_dtype=pl.Utf8).alias("group"),
        strength.fill_nan(None).alias("_strength"),
        pl.col("effect_per_10pct").is_not_null().alias("_slope"),
        pl.col("changed").fill_null(False).alias("_changed")).sort(
        ["metric", "_changed", "_slope", "_strength", "parameter"],
        descending=[False, True, True, True, False], nulls_last=True)
    lever = pl.coalesce("same_as", "parameter")
    row = pl.col("_row")
    return (ranked.with_columns(pl.int_range(pl.len()).over("metric").alias("_row"))
            .with_columns(row.min().over("metric", lever).alias("_lead"),
                          row.min().over("metric", "group", lever).alias("_group_lead"))
            .with_columns(pl.col("_lead").rank("dense").over("metric").cast(pl.Int64)
                          .alias("rank"),
                          pl.col("_group_lead").rank("dense").over("metric", "group")
                          .cast(pl.Int64).alias("group_rank"))
            .drop("_strength", "_slope", "_changed", "_row", "_lead", "_group_lead"))


def strongest(table: pl.DataFrame, metric: str, group: str | None = None) -> pl.DataFrame:
    """The rows of `metric` (table: `effects`), strongest first: every key by `rank`, or
    one group's keys by `group_rank`. Setup keys only where they moved something (not
    inert, or an effect on this metric): most are other lengths' or seat counts' scales,
    which the matches never read."""
    rows = table.filter(pl.col("metric") == metric)
    if group is None:
        return rows.sort("rank")
    rows = rows.filter(pl.col("group") == group)
    if group == "setup":
        rows = rows.filter(~pl.col("inert") | (pl.col("effect") != 0))
    return rows.sort("group_rank")


def inert_parameters(table: pl.DataFrame) -> list[str]:
    """Parameters with which not one match changed: a lever on them does nothing."""
    return table.filter(pl.col("inert")).get_column("parameter").unique(
        maintain_order=True).sort().to_list()


def top_parameters(table: pl.DataFrame, k: int) -> list[str]:
    """The `k` parameters with the largest absolute effect on any outcome: the ones
    the Morris screen studies (sim.runner.morris).

    Outcomes have different units (shares, turns), so "largest" is the rank within
    each outcome (by |effect_per_10pct|, else |effect|: unlike `effects`, whatever
    their significance, since the screen is what tests them; rounded to 9 significant
    digits so the last bits of a mean cannot reorder equal effects). Parameters
    compare by their best rank over the outcomes, then their second best and so on;
    remaining ties by key name. Balance values come before the match's setup keys
    (`group`, sim.runner.sensitivity.SETUP_KEYS), as the tornado ranks them apart: a
    setup key moves many values at once, and the screen is for the values a designer
    tunes; setup keys fill the screen only when fewer than `k` balance values are live,
    ranked among themselves. Inert
    parameters are never chosen (not one match changed: nothing to interact), nor a
    key that is the same lever as an earlier one (`same_as`).
    Fewer than `k` when fewer parameters are not inert. table: `effects`.
    """
    live = table.filter(~pl.col("inert"))
    if k <= 0 or live.height == 0:
        return []
    if "group" not in live.columns:
        live = live.with_columns(pl.lit("balance").alias("group"))
    if "same_as" in live.columns:
        # one lever under several keys: the screen studies it once, under a balance key
        # when the lever has one (the dominance counter, not the setup key of the same
        # matches that `all` lists first)
        lever = pl.coalesce("same_as", "parameter")
        keys = (live.select(lever.alias("_lever"), "parameter", "group", "same_as")
                .unique(maintain_order=True)
                .with_columns((pl.col("group") != "balance").alias("_setup"),
                              pl.col("same_as").is_not_null().alias("_follows"))
                .with_row_index("_order")
                .sort("_lever", "_setup", "_follows", "_order")
                .group_by("_lever", maintain_order=True).first())
        live = live.filter(pl.col("parameter").is_in(keys.get_column("parameter")))
    strength = pl.coalesce(pl.col("effect_per_10pct").abs(), pl.col("effect").abs()) \
        .fill_nan(None).round_sig_figs(9)
    ranks = (live.with_columns(strength.alias("_s"))
             .sort(["metric", "_s", "parameter"], descending=[False, True, False],
                   nulls_last=True)
             .with_columns((pl.int_range(pl.len()).over("metric", "group") + 1)
                           .alias("_rank")))
    by_parameter: dict[str, list[int]] = {}
    setup: set[str] = set()
    for key, group, rank in ranks.select("parameter", "group", "_rank").iter_rows():
        by_parameter.setdefault(key, []).append(rank)
        if group != "balance":
            setup.add(key)
    order = sorted(by_parameter,
                   key=lambda key: (key in setup, sorted(by_parameter[key]), key))
    return order[:k]


def sensitivity_effects(design: dict[str, Any], sweep: Path, confidence: float = 0.95
                        ) -> pl.DataFrame:
    """The hex game's hook (Game.study_analysis): `effects` of the sweep in `sweep`."""
    matches, seats, events = load_frames(sweep)
    return effects(design, matches, seats, events, confidence)


def outcome_values(matches: pl.DataFrame, variant: str | None = None
                   ) -> dict[str, float | None]:
    """The hex game's hook: `sim tune`'s outcomes (sim.analysis.tune.outcome_values)."""
    from sim.analysis.tune import outcome_values as hex_outcome_values  # tune imports this

    return hex_outcome_values(matches, variant)


def confirm_table(matches: pl.DataFrame, bands: dict[str, tuple[float, float]],
                  baseline: str, tuned: str, confidence: float = 0.95) -> pl.DataFrame:
    """The hex game's hook: a tune's before/after (sim.analysis.tune.confirm_table)."""
    from sim.analysis.tune import confirm_table as hex_confirm_table

    return hex_confirm_table(matches, bands, baseline, tuned, confidence)


# the outcomes the page draws a tornado of, and those `sim sensitivity` prints, in order
TORNADO_METRICS = ("victory=conquest", "victory=science", "victory=dominance",
                   "victory=turn_limit", "end_turn", "capital_falls", "winner_gold_share")
PRINTED_METRICS = tuple(f"victory={name}" for name in VICTORY_NAMES)
# what of a match an inert parameter's two values left unchanged (the page's words)
INERT_MEANS = "its winner, victory type or end turn"
# what the setup keys (sim.outputs.games.HEX.setup_keys) are, in the page's words
SETUP_MEANS = ("its length, board size and game-speed and seat-count scales, which each "
               "move many values at once")


def sensitivity_table(folder: Path | str, confidence: float = 0.95) -> pl.DataFrame:
    """The effects of a sensitivity folder (its design, and its sweep in `sweep/`),
    by the hooks of the design's game (sim.outputs.games; `effects` for the hex game)."""
    design = read_design(folder)
    hooks = game_of(design.get("game")).hooks("analysis")
    return hooks.sensitivity_effects(design, run_path(folder) / SWEEP_DIR, confidence)


def write_sensitivity_table(folder: Path | str, note: Callable[[str], None]) -> pl.DataFrame:
    """sensitivity_table of the folder, written to its sensitivity.parquet. What the
    analysis warns about (the resolution of a parameter's values) goes to `note` as
    words, one call per warning, before the table is written."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = sensitivity_table(folder)
    for w in caught:
        note(str(w.message))
    write_frame(table, run_path(folder) / "sensitivity.parquet")
    return table

"""Does a balance conclusion survive a stronger player? (issue 16, after Zook et al.:
agents of graded skill as proxies for players of graded skill.)

A robustness sweep plays each balance change twice: once with every seat at skill 0
and once with every seat at skill 1 (its variants differ only in `seat_ai`'s skill),
each against the baseline's tables at the same skill, on the same seeded matches.
`skill_effects` gives every change's paired effect on each victory share at each
skill; `skill_interactions` sets them side by side with a real interaction test (issue
43): the difference of the two paired effects, per match, between two skills, with its
interval and a p-value corrected with the rest of the report's family. Its verdicts:
"holds at both" (no significant interaction), "flips sign" (the effect is significant
at both skills, in opposite directions), "only at skill N" (significant at one skill
only), "larger at skill N" (significant at both, one way, more at N), "differs by
skill" (the interaction is significant, neither effect alone).

The test. Match i of all four arms (the change and the baseline's tables, at skill a
and at skill b) is played on the same seeds, so per match the contrast
c_i = (change_b,i − base_b,i) − (change_a,i − base_a,i) of the indicator "victory = X"
is one draw whose mean is the interaction; matches are independent, so a paired t
test on c_i is its test, and its t interval the interaction's interval. An experiment
names its two skills with `skills = [a, b]` (sim.runner.experiments: every variant is
played at both). tools/calibrate_interaction.py checks it fires at its nominal rate
with no interaction and fires on a planted one (docs/statistics.md). It replaces the
flag of issue 16 ("significance changes with skill"), which compared two
significance verdicts and fired in up to half of the tries where nothing interacted.

Skill of a variant: the one skill every seat plays at (its provenance's
`variants[].seat_ai`; none given is skill 0). A variant whose seats play at
different skills, or that forbids anything, is no part of this view.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from sim.analysis._frames import VICTORIES, finished, sort_keys
from sim.analysis.headline import override_words
from sim.analysis.paired import paired_victory_tests
from sim.analysis.stats import holm, paired_t

VERDICTS = ("flips sign", "only at skill", "larger at skill", "differs by skill",
            "holds at both")


def uniform_skill(variant: dict[str, Any]) -> int | None:
    """The skill every seat of a provenance variant plays at; None when the seats
    differ or any seat is forbidden something."""
    seat_ai = variant.get("seat_ai") or []
    if any(e.get("forbid") for e in seat_ai):
        return None
    skills = {e.get("skill", 0) for e in seat_ai}
    if any(not isinstance(k, int) for k in skills):  # random play is no level (issue 43)
        return None
    if len(skills) > 1:
        return None
    return skills.pop() if skills else 0


def _change_key(variant: dict[str, Any]) -> tuple:
    return tuple(sorted((k, repr(v)) for k, v in (variant.get("overrides") or {}).items()))


def skill_arms(provenance: dict[str, Any], baseline: str,
               skill_of: Callable[[dict[str, Any]], int | None] = uniform_skill,
               ) -> pl.DataFrame:
    """(variant, skill, change, base): each variant of uniform skill, the change it
    makes (its overrides in words against the baseline, "" for the baseline's own
    tables) and the variant it is compared with: the one with the baseline's tables
    at the same skill. Rows whose skill has no such variant are left out. skill_of:
    a provenance variant's one skill or None (a two-sided game's: both sides')."""
    variants = provenance.get("variants", [])
    by_id = {v["id"]: v for v in variants}
    if baseline not in by_id:
        return pl.DataFrame(schema={"variant": pl.Utf8, "skill": pl.Int64, "change": pl.Utf8,
                                    "base": pl.Utf8})
    base_key = _change_key(by_id[baseline])
    bases: dict[int, str] = {}
    for v in variants:  # the baseline itself first, then the first of each other skill
        skill = skill_of(v)
        if skill is not None and _change_key(v) == base_key:
            if v["id"] == baseline or skill not in bases:
                bases[skill] = v["id"]
    rows = []
    for v in variants:
        skill = skill_of(v)
        if skill is None or skill not in bases or v["id"] == bases[skill]:
            continue
        rows.append({"variant": v["id"], "skill": skill, "base": bases[skill],
                     "change": override_words(provenance, v["id"], baseline) or v["id"]})
    return pl.DataFrame(rows, schema={"variant": pl.Utf8, "skill": pl.Int64,
                                      "change": pl.Utf8, "base": pl.Utf8}, orient="row")


def skill_effects(matches: pl.DataFrame, provenance: dict[str, Any], baseline: str,
                  confidence: float = 0.95) -> pl.DataFrame:
    """Each change's paired effect on each victory share at each skill.

    Columns: change, skill, variant, base (the variant it is paired with: the
    baseline's tables at that skill), metric ("victory=<type>"), difference, lo, hi
    (sim.analysis.paired.paired_victory_tests), p_value, p_holm (Holm across the rows
    of one skill: each skill is its own family, as if run alone), changed (p_holm <
    1 − confidence), n_pairs. Sorted by change, metric (V01's order), skill."""
    arms = skill_arms(provenance, baseline)
    parts = []
    for variant, skill, change, base in arms.iter_rows():
        pair = matches.filter(pl.col("variant").is_in([variant, base]))
        tests = paired_victory_tests(pair, base, confidence)
        parts.append(tests.select("variant", "metric", "difference", "lo", "hi", "p_value",
                                  "n_pairs")
                     .with_columns(pl.lit(change).alias("change"), pl.lit(skill).alias("skill"),
                                   pl.lit(base).alias("base")))
    schema = {"change": pl.Utf8, "skill": pl.Int64, "variant": pl.Utf8, "base": pl.Utf8,
              "metric": pl.Utf8, "difference": pl.Float64, "lo": pl.Float64,
              "hi": pl.Float64, "p_value": pl.Float64, "p_holm": pl.Float64,
              "changed": pl.Boolean, "n_pairs": pl.Int64}
    if not parts:
        return pl.DataFrame(schema=schema)
    out = pl.concat(parts, how="diagonal_relaxed")
    adjusted = []
    for _skill, part in out.group_by(["skill"], maintain_order=True):
        # a test with no discordant pair has no p (paired_victory_tests): null, not NaN
        adjusted.append(part.with_columns(pl.Series("p_holm", holm(part["p_value"].to_list()))
                                          .fill_nan(None)))
    out = pl.concat(adjusted).with_columns(
        (pl.col("p_holm") < 1.0 - confidence).fill_null(False).alias("changed"))
    order = [f"victory={v}" for v in VICTORIES]
    return sort_keys(out.select(list(schema)), ["change", "metric", "skill"], {"metric": order})


def _indicators(matches: pl.DataFrame, variant: str, victory: str) -> pl.DataFrame:
    """match_index -> 1.0 when the variant's finished match ended in `victory`."""
    return (finished(matches).filter(pl.col("variant") == variant)
            .select("match_index", (pl.col("victory") == victory).cast(pl.Float64)
                    .alias("x")))


Indicators = Callable[[pl.DataFrame, str, str], pl.DataFrame]


def interaction_test(matches: pl.DataFrame, arms: tuple[str, str, str, str], victory: str,
                     confidence: float = 0.95,
                     indicators: Indicators = _indicators) -> dict[str, Any]:
    """The interaction of one change on "victory = X" between two skills. arms: (change
    at skill a, baseline at a, change at b, baseline at b). Returns interaction (effect
    at b − effect at a, a share), lo, hi (t interval of the per-match contrast), p_value
    (paired t; None when every contrast is 0: no match says anything), n_pairs (matches
    finished in all four arms). indicators(matches, variant, X): match_index -> x, 1.0
    when the match ended in X (another game's outcome: Crown's winner side)."""
    parts = [indicators(matches, v, victory).rename({"x": f"x{k}"})
             for k, v in enumerate(arms)]
    joined = parts[0]
    for part in parts[1:]:
        joined = joined.join(part, on="match_index", how="inner")
    contrast = ((joined["x2"] - joined["x3"]) - (joined["x0"] - joined["x1"])).to_numpy()
    mean, lo, hi, p, n = paired_t(contrast, confidence)
    if n and not contrast.any():
        p = None
    return {"interaction": mean, "int_lo": lo, "int_hi": hi, "p_value": p, "n_pairs": n}


def _verdict(row: dict[str, Any], alpha: float) -> str:
    """The verdict of one interaction row (module docstring)."""
    p = row["p_holm"]
    if p is None or not p < alpha:
        return "holds at both"
    a, b = row["skill_a"], row["skill_b"]
    ca, cb = row["changed_a"], row["changed_b"]
    if ca and cb:
        if (row["difference_a"] > 0) != (row["difference_b"] > 0):
            return "flips sign"
        return f"larger at skill {b if abs(row['difference_b']) > abs(row['difference_a']) else a}"
    if ca or cb:
        return f"only at skill {a if ca else b}"
    return "differs by skill"


def skill_interactions(matches: pl.DataFrame, effects: pl.DataFrame,
                       confidence: float = 0.95,
                       family: list[float | None] | None = None,
                       indicators: Indicators = _indicators) -> pl.DataFrame:
    """`skill_effects` side by side for each pair of skills (a < b) a change was played
    at, with the interaction test of each change × victory type.

    Columns: change, metric, skill_a, skill_b, difference_a, lo_a, hi_a, changed_a (the
    effect at skill a, its paired interval and its significance after skill_effects'
    Holm), the same for b, interaction (difference at b − at a), int_lo, int_hi, p_value,
    p_holm (Holm over these rows together with `family`: the report passes its other
    tests' p-values, so the interactions join the report's one family), verdict
    (VERDICTS), n_pairs. Sorted by verdict (a change that depends on skill first),
    change, metric. A metric is "<outcome column>=<value>" (`victory=conquest`; Crown's
    `winner=A`), read by `indicators` (interaction_test)."""
    schema = {"change": pl.Utf8, "metric": pl.Utf8, "skill_a": pl.Int64,
              "skill_b": pl.Int64, "difference_a": pl.Float64, "lo_a": pl.Float64,
              "hi_a": pl.Float64, "changed_a": pl.Boolean, "difference_b": pl.Float64,
              "lo_b": pl.Float64, "hi_b": pl.Float64, "changed_b": pl.Boolean,
              "interaction": pl.Float64, "int_lo": pl.Float64, "int_hi": pl.Float64,
              "p_value": pl.Float64, "p_holm": pl.Float64, "verdict": pl.Utf8,
              "n_pairs": pl.Int64}
    rows = []
    for (change, metric), part in effects.group_by(["change", "metric"], maintain_order=True):
        seen = sorted(part.to_dicts(), key=lambda r: r["skill"])
        for i, ra in enumerate(seen):
            for rb in seen[i + 1:]:
                victory = metric.split("=", 1)[1]
                test = interaction_test(matches, (ra["variant"], ra["base"], rb["variant"],
                                                  rb["base"]), victory, confidence,
                                        indicators)
                rows.append({"change": change, "metric": metric, "skill_a": ra["skill"],
                             "skill_b": rb["skill"],
                             **{f"{c}_a": ra[c] for c in ("difference", "lo", "hi",
                                                          "changed")},
                             **{f"{c}_b": rb[c] for c in ("difference", "lo", "hi",
                                                          "changed")},
                             **test})
    if not rows:
        return pl.DataFrame(schema=schema)
    extra = list(family or [])
    adjusted = holm([r["p_value"] for r in rows] + extra)[: len(rows)]
    alpha = 1.0 - confidence
    for r, p in zip(rows, adjusted, strict=True):
        r["p_holm"] = None if p != p else p  # NaN (no test) -> null
        r["verdict"] = _verdict(r, alpha)
    out = pl.DataFrame(rows, schema=schema, orient="row")
    rank = {v: i for i, v in enumerate(VERDICTS)}
    order = [f"victory={v}" for v in VICTORIES]
    kinds = [v.rstrip("0123456789").rstrip() for v in out["verdict"].to_list()]
    out = out.with_columns(pl.Series("_rank", [rank.get(k, len(rank)) for k in kinds]))
    return sort_keys(out, ["_rank", "change", "metric"], {"metric": order}).drop("_rank")

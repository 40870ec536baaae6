"""Does a balance conclusion survive a stronger player? (issue 16, after Zook et al.:
agents of graded skill as proxies for players of graded skill.)

A robustness sweep plays each balance change twice: once with every seat at skill 0
and once with every seat at skill 1 (its variants differ only in `seat_ai`'s skill),
each against the baseline's tables at the same skill, on the same seeded matches.
`skill_effects` gives every change's paired effect on each victory share at each
skill; `skill_robustness` sets them side by side and flags a conclusion whose sign
or significance changes with skill: a designer should not act on it without a
human playtest.

Skill of a variant: the one skill every seat plays at (its provenance's
`variants[].seat_ai`; none given is skill 0). A variant whose seats play at
different skills, or that forbids anything, is no part of this view.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from sim.analysis._frames import VICTORIES, sort_keys
from sim.analysis.headline import override_words
from sim.analysis.paired import paired_victory_tests
from sim.analysis.stats import holm

FLAGS = ("sign flips", "significance changes", "robust")


def uniform_skill(variant: dict[str, Any]) -> int | None:
    """The skill every seat of a provenance variant plays at; None when the seats
    differ or any seat is forbidden something."""
    seat_ai = variant.get("seat_ai") or []
    if any(e.get("forbid") for e in seat_ai):
        return None
    skills = {int(e.get("skill", 0)) for e in seat_ai}
    if len(skills) > 1:
        return None
    return skills.pop() if skills else 0


def _change_key(variant: dict[str, Any]) -> tuple:
    return tuple(sorted((k, repr(v)) for k, v in (variant.get("overrides") or {}).items()))


def skill_arms(provenance: dict[str, Any], baseline: str) -> pl.DataFrame:
    """(variant, skill, change, base): each variant of uniform skill, the change it
    makes (its overrides in words against the baseline, "" for the baseline's own
    tables) and the variant it is compared with: the one with the baseline's tables
    at the same skill. Rows whose skill has no such variant are left out."""
    variants = provenance.get("variants", [])
    by_id = {v["id"]: v for v in variants}
    if baseline not in by_id:
        return pl.DataFrame(schema={"variant": pl.Utf8, "skill": pl.Int64, "change": pl.Utf8,
                                    "base": pl.Utf8})
    base_key = _change_key(by_id[baseline])
    bases: dict[int, str] = {}
    for v in variants:  # the baseline itself first, then the first of each other skill
        skill = uniform_skill(v)
        if skill is not None and _change_key(v) == base_key:
            if v["id"] == baseline or skill not in bases:
                bases[skill] = v["id"]
    rows = []
    for v in variants:
        skill = uniform_skill(v)
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


def skill_robustness(effects: pl.DataFrame) -> pl.DataFrame:
    """`skill_effects` side by side: one row per change × metric seen at two skills
    or more.

    Columns: change, metric, then for each skill k present: difference_k, lo_k,
    hi_k, changed_k; and flag: "sign flips" (changed at two skills in opposite
    directions), "significance changes" (changed at some skill, not at another) or
    "robust" (changed at every skill in one direction, or at none). Sorted like
    skill_effects, flagged rows first."""
    if effects.height == 0:
        return pl.DataFrame(schema={"change": pl.Utf8, "metric": pl.Utf8, "flag": pl.Utf8})
    skills = sorted(effects.get_column("skill").unique().to_list())
    rows = []
    for (change, metric), part in effects.group_by(["change", "metric"], maintain_order=True):
        seen = part.to_dicts()
        if len({r["skill"] for r in seen}) < 2:
            continue
        row: dict[str, Any] = {"change": change, "metric": metric}
        for k in skills:
            hit = [r for r in seen if r["skill"] == k]
            for col in ("difference", "lo", "hi", "changed"):
                row[f"{col}_{k}"] = hit[0][col] if hit else None
        changed = [r for r in seen if r["changed"]]
        directions = {r["difference"] > 0 for r in changed}
        if len(directions) > 1:
            row["flag"] = "sign flips"
        elif changed and len(changed) < len(seen):
            row["flag"] = "significance changes"
        else:
            row["flag"] = "robust"
        rows.append(row)
    schema: dict[str, Any] = {"change": pl.Utf8, "metric": pl.Utf8}
    for k in skills:
        schema.update({f"difference_{k}": pl.Float64, f"lo_{k}": pl.Float64,
                       f"hi_{k}": pl.Float64, f"changed_{k}": pl.Boolean})
    schema["flag"] = pl.Utf8
    out = pl.DataFrame(rows, schema=schema, orient="row")
    order = [f"victory={v}" for v in VICTORIES]
    return sort_keys(out, ["flag", "change", "metric"],
                     {"flag": FLAGS, "metric": order})

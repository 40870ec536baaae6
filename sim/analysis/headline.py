"""The report's headline (issue 14): for each variant, what it changed, in words, and
what that did, in the units a designer reads (points of a share, turns, falls per
match), with paired intervals, the count of matches whose winner changed and a
verdict word per effect.

Input: the paired test tables the report already computes (sim.analysis.paired,
Holm-corrected by metrics.significance) and the run's provenance; nothing is
recomputed here.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from sim.analysis.dose import _lookup as lookup  # one dotted-key reader

# metric -> (label, unit, scale): a share's difference reads in percentage points
UNITS: dict[str, tuple[str, str, float]] = {
    "end_turn": ("mean end turn", "turns", 1.0),
    "winner_gold_share": ("gold share of winners' scores", "points", 100.0),
    "standing_gold_share": ("gold share of standing seats' scores", "points", 100.0),
    "capital_falls": ("capital falls", "per match", 1.0),
}


def override_words(provenance: dict[str, Any], variant: str, baseline: str) -> str:
    """A variant's overrides as `key base → value` phrases (the base read from the
    baseline variant's resolved tables), "" for none."""
    variants = {v["id"]: v for v in provenance.get("variants", [])}
    mine = variants.get(variant, {})
    base_tables = variants.get(baseline, {}).get("tables", {})
    base_overrides = variants.get(baseline, {}).get("overrides", {})
    parts = []
    for key, value in (mine.get("overrides") or {}).items():
        was = base_overrides.get(key, lookup(base_tables, key))
        parts.append(f"{key} {was} → {value}" if was is not None else f"{key} = {value}")
    return "; ".join(parts)


def _signed(x: float, digits: int = 1) -> str:
    return f"{x:+.{digits}f}".replace("-", "−")


def effect_text(metric: str, difference: float | None, lo: float | None, hi: float | None,
                changed: bool | None, p_adjusted: float | None = None) -> str:
    """One effect in words, e.g. "science −8.3 points [−12.3, −4.4]: changed"; with
    `p_adjusted` (the corrected p that decided the verdict) after it, "(adjusted p
    0.0002)", since the interval is the effect's own and may exclude 0 where the
    correction over every effect does not call it changed."""
    if metric.startswith("victory="):
        label, unit, scale = metric.removeprefix("victory="), "points", 100.0
    else:
        label, unit, scale = UNITS.get(metric, (metric, "", 1.0))
    if difference is None:
        return f"{label}: no pairs to compare"
    digits = 2 if unit == "per match" else 1
    interval = f" [{_signed(lo * scale, digits)}, {_signed(hi * scale, digits)}]" \
        if lo is not None and hi is not None else ""
    verdict = "changed" if changed else "not shown to change"
    if p_adjusted is not None and math.isfinite(p_adjusted):
        verdict += f" (adjusted p {p_adjusted:.2g})"
    return f"{label} {_signed(difference * scale, digits)} {unit}{interval}: {verdict}"


def headline(tests: pl.DataFrame | None, mix: pl.DataFrame | None,
             provenance: dict[str, Any], baseline: str) -> list[dict[str, Any]]:
    """One entry per non-baseline variant, in provenance order: variant, overrides
    (words), pairs, winner_flips, victory_flips, effects (list of (text, changed)),
    changed (effects changed, count)."""
    order = [v["id"] for v in provenance.get("variants", [])]
    ids = [v for v in order if v != baseline]
    if tests is not None and tests.height:
        ids += [v for v in tests.get_column("variant").unique(maintain_order=True).to_list()
                if v not in ids and v != baseline]
    out = []
    for variant in ids:
        rows = tests.filter(pl.col("variant") == variant).to_dicts() \
            if tests is not None and tests.height else []
        flips = mix.filter(pl.col("variant") == variant).to_dicts() \
            if mix is not None and mix.height else []
        effects = [(effect_text(r["metric"], r["difference"], r.get("lo"), r.get("hi"),
                                r.get("changed"), r.get("p_adjusted")),
                    bool(r.get("changed"))) for r in rows]
        first = flips[0] if flips else {}
        out.append({"variant": variant,
                    "overrides": override_words(provenance, variant, baseline),
                    "pairs": first.get("n_pairs"),
                    "winner_flips": first.get("winner_changed"),
                    "victory_flips": first.get("victory_changed"),
                    "effects": effects, "changed": sum(c for _, c in effects)})
    return out


__all__ = ["UNITS", "effect_text", "headline", "override_words"]

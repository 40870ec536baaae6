"""Dose-response: how the victory mix follows one table value across a grid (issue 13).

A sweep whose variants each override one key alone (an experiment grid over that
key, or hand-written variants), together with the baseline at the key's base value,
traces a curve per victory type once there are three values or more. Each point is
a share with its Wilson interval; each step between neighbouring values is a paired
difference on the same matches
(exact McNemar, Newcombe's interval). The steepest step of each curve, per unit of
the key, is its *cliff*: a bar per variant hides it, a curve shows it. The values
at which every victory type stays within a designer's band are the key's *band
range* (default bands: issue 13's calibration, each of conquest, science and
dominance 10–45 % and the turn limit at most 30 %).
"""

from __future__ import annotations

import itertools
from typing import Any

import polars as pl

from sim.analysis._frames import finished
from sim.analysis._frames import table_value as _lookup
from sim.analysis.stats import mcnemar_exact, paired_share_interval
from sim.analysis.victory import victory_frequencies

DEFAULT_BANDS: dict[str, tuple[float, float]] = {
    "conquest": (0.10, 0.45), "science": (0.10, 0.45), "dominance": (0.10, 0.45),
    "turn_limit": (0.0, 0.30)}


def curves_of(provenance: dict[str, Any]) -> dict[str, list[tuple[float, str]]]:
    """Per key with at least three values: its (value, variant) points in value
    order, from the variants that override it alone and the baseline at its own
    value of the key (when the baseline overrides nothing). Only numeric values
    make a curve. A variant with per-seat AI settings (`seat_ai`: a skill or a forbid)
    plays another game and is no point of the curve; of two variants at one value, the
    first is kept."""
    variants = [v for v in provenance.get("variants", [])
                if not any(e.get("skill") or e.get("forbid") for e in v.get("seat_ai") or [])]
    baseline = provenance.get("baseline")
    base = next((v for v in variants if v.get("id") == baseline), None)
    points: dict[str, list[tuple[float, str]]] = {}
    for v in variants:
        over = v.get("overrides") or {}
        if len(over) != 1:
            continue
        (key, value), = over.items()
        if isinstance(value, int | float) and not isinstance(value, bool) and \
                all(value != x for x, _ in points.get(key, [])):
            points.setdefault(key, []).append((value, v["id"]))
    out = {}
    for key, pts in points.items():
        if base is not None and not base.get("overrides"):
            value = _lookup(base.get("tables") or {}, key)
            if isinstance(value, int | float) and not isinstance(value, bool) and \
                    all(value != x for x, _ in pts):
                pts = [*pts, (value, base["id"])]
        if len(pts) >= 3:   # two points are one paired comparison: the report has those
            out[key] = sorted(pts)
    return out


def dose_response(matches: pl.DataFrame, provenance: dict[str, Any],
                  bands: dict[str, tuple[float, float]] | None = None,
                  confidence: float = 0.95) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(points, steps, band) frames for every curve of the run.

    points: key, value, variant, victory, share, lo, hi (Wilson), matches.
    steps: key, victory, from_value, to_value, difference (share at to − share at
    from, paired on the matches both finished), lo, hi (Newcombe), p_value
    (McNemar), slope (difference per unit of the key), cliff (the steepest |slope|
    of the key × victory curve; ties to the lower value).
    band: key, value, variant, in_band (every victory type within `bands`).
    """
    bands = bands or DEFAULT_BANDS
    freq = victory_frequencies(matches, confidence)
    done = finished(matches).select("variant", "match_index", "victory")
    point_rows, step_rows, band_rows = [], [], []
    for key, pts in curves_of(provenance).items():
        for value, vid in pts:
            part = freq.filter(pl.col("variant") == vid)
            for r in part.iter_rows(named=True):
                point_rows.append({"key": key, "value": float(value), "variant": vid,
                                   "victory": r["victory"], "share": r["share"],
                                   "lo": r["lo"], "hi": r["hi"], "matches": r["matches"]})
            shares = dict(zip(part.get_column("victory"), part.get_column("share"),
                              strict=True))
            band_rows.append({"key": key, "value": float(value), "variant": vid,
                              "in_band": part.height > 0 and all(
                                  shares.get(v) is not None and lo <= shares[v] <= hi
                                  for v, (lo, hi) in bands.items())})
        for (v0, a), (v1, b) in itertools.pairwise(pts):
            pair = (done.filter(pl.col("variant") == a).drop("variant")
                    .join(done.filter(pl.col("variant") == b).drop("variant"),
                          on="match_index", suffix="_to"))
            for cat in freq.get_column("victory").unique(maintain_order=True).to_list():
                x = pair.get_column("victory") == cat
                y = pair.get_column("victory_to") == cat
                gain, loss, both = int((y & ~x).sum()), int((x & ~y).sum()), int((x & y).sum())
                diff, lo, hi = paired_share_interval(both, gain, loss,
                                                     pair.height - both - gain - loss,
                                                     confidence)
                step_rows.append({"key": key, "victory": cat, "from_value": float(v0),
                                  "to_value": float(v1), "difference": diff, "lo": lo,
                                  "hi": hi, "p_value": mcnemar_exact(gain, loss),
                                  "slope": diff / (v1 - v0)})
    points = pl.DataFrame(point_rows, schema={
        "key": pl.Utf8, "value": pl.Float64, "variant": pl.Utf8, "victory": pl.Utf8,
        "share": pl.Float64, "lo": pl.Float64, "hi": pl.Float64, "matches": pl.Int64})
    steps = pl.DataFrame(step_rows, schema={
        "key": pl.Utf8, "victory": pl.Utf8, "from_value": pl.Float64, "to_value": pl.Float64,
        "difference": pl.Float64, "lo": pl.Float64, "hi": pl.Float64, "p_value": pl.Float64,
        "slope": pl.Float64})
    if steps.height:
        steepest = (steps.with_columns(pl.col("slope").abs().alias("_s"))
                    .sort("key", "victory", "_s", "from_value",
                          descending=[False, False, True, False])
                    .group_by("key", "victory", maintain_order=True).first()
                    .select("key", "victory", "from_value", pl.lit(True).alias("cliff")))
        steps = (steps.join(steepest, on=["key", "victory", "from_value"], how="left")
                 .with_columns(pl.col("cliff").fill_null(False)))
    else:
        steps = steps.with_columns(pl.lit(False).alias("cliff"))
    band = pl.DataFrame(band_rows, schema={"key": pl.Utf8, "value": pl.Float64,
                                           "variant": pl.Utf8, "in_band": pl.Boolean})
    return points, steps, band

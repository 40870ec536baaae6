"""The regression gate (issue 14): is tonight's balance equivalent to last night's?

For every variant both runs hold and every victory type, the difference of shares
(tonight − before) must lie within ±margin: two one-sided tests at level alpha, which
is the same as the (1 − 2·alpha) interval of the difference lying inside the margins
(Schuirmann's TOST). When the two runs played the same matches (same root seed,
seats, length and personalities: each match index is the same map and streams) the
shares pair by match index and the interval is Newcombe's paired one
(stats.paired_share_interval); otherwise the runs are independent samples and it is
Newcombe's square-and-add of the two Wilson intervals. A variant whose matches all
ended alike in both runs (same winner, victory and end turn) passes as identical.

Verdicts: PASS (equivalent), FAIL changed (the interval lies outside the margins
on one side: a regression), FAIL inconclusive (the interval is wider than the
margins: not shown equivalent, run more matches).
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from sim.analysis._frames import finished, victory_categories
from sim.analysis.stats import paired_share_interval, wilson

PAIRING_KEYS = ("root_seed", "seats", "length", "personalities", "rotate_personalities")
SCHEMA = {"variant": pl.Utf8, "victory": pl.Utf8, "before": pl.Float64, "now": pl.Float64,
          "difference": pl.Float64, "lo": pl.Float64, "hi": pl.Float64,
          "margin": pl.Float64, "paired": pl.Boolean, "n_now": pl.Int64,
          "n_before": pl.Int64, "verdict": pl.Utf8}


def same_matches(now: dict[str, Any], before: dict[str, Any]) -> bool:
    """Two runs' match i are the same map and streams (their provenance agrees)."""
    return all(now.get(k) == before.get(k) for k in PAIRING_KEYS)


def _independent_interval(k1: int, n1: int, k2: int, n2: int,
                          confidence: float) -> tuple[float, float, float]:
    """Share 1 minus share 2 of independent samples (Newcombe 1998, method 10)."""
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson(k1, n1, confidence)
    l2, u2 = wilson(k2, n2, confidence)
    diff = p1 - p2
    return (diff, diff - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2),
            diff + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2))


def gate(now: pl.DataFrame, before: pl.DataFrame, paired: bool, margin: float = 0.02,
         alpha: float = 0.05, margins: dict[str, float] | None = None) -> pl.DataFrame:
    """One row per variant (in both runs) × victory type; see the module docstring.
    `margins` overrides `margin` per victory type (the experiment's `[gate]`).

    Columns: variant, victory, before, now (shares), difference, lo, hi (the
    (1 − 2·alpha) interval), margin, paired, n_now, n_before, verdict."""
    margins = margins or {}
    for m in (margin, *margins.values()):
        if not 0 < m < 1:
            raise ValueError(f"margin must be in (0, 1), got {m}")
    confidence = 1 - 2 * alpha
    a, b = finished(now), finished(before)
    cats = victory_categories(pl.concat([a.select("victory"), b.select("victory")]))
    rows = []
    ids = [v for v in a.get_column("variant").unique(maintain_order=True).to_list()
           if v in set(b.get_column("variant").to_list())]
    cols = ["match_index", "winner", "victory", "end_turn"]
    for vid in ids:
        x = a.filter(pl.col("variant") == vid).select(cols).sort("match_index")
        y = b.filter(pl.col("variant") == vid).select(cols).sort("match_index")
        identical = paired and x.equals(y)
        pairs = x.join(y, on="match_index", suffix="_before") if paired else None
        for cat in cats:
            margin_here = margins.get(cat, margin)
            xs, ys = x.get_column("victory") == cat, y.get_column("victory") == cat
            share_now, share_before = float(xs.mean()), float(ys.mean())
            if paired:
                s_now = pairs.get_column("victory") == cat
                s_before = pairs.get_column("victory_before") == cat
                gain = int((s_now & ~s_before).sum())
                loss = int((s_before & ~s_now).sum())
                both = int((s_now & s_before).sum())
                diff, lo, hi = paired_share_interval(both, gain, loss,
                                                     pairs.height - both - gain - loss,
                                                     confidence)
            else:
                diff, lo, hi = _independent_interval(int(xs.sum()), x.height, int(ys.sum()),
                                                     y.height, confidence)
            if identical or (-margin_here <= lo and hi <= margin_here):
                verdict = "PASS identical" if identical else "PASS"
            elif hi < -margin_here or lo > margin_here:
                verdict = "FAIL changed"
            else:
                verdict = "FAIL inconclusive"
            rows.append({"variant": vid, "victory": cat, "before": share_before,
                         "now": share_now, "difference": diff, "lo": lo, "hi": hi,
                         "margin": margin_here, "paired": paired, "n_now": x.height,
                         "n_before": y.height, "verdict": verdict})
    return pl.DataFrame(rows, schema=SCHEMA)


def passed(table: pl.DataFrame) -> bool:
    """Every row of the gate passed."""
    return table.height > 0 and table.get_column("verdict").str.starts_with("PASS").all()

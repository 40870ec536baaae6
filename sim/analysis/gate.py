"""The regression gate (issue 14): is tonight's balance equivalent to last night's?

For every variant both runs hold and every victory type, the difference of shares
(tonight − before) must lie within ±margin: two one-sided tests at level alpha, which
is the same as the (1 − 2·alpha) interval of the difference lying inside the margins
(Schuirmann's TOST). When the two runs played the same matches (same root seed,
seats, length and personalities: each match index is the same map and streams) the
shares pair by match index and the interval is Newcombe's paired one
(stats.paired_share_interval); otherwise the runs are independent samples and it is
Newcombe's square-and-add of the two Wilson intervals. A variant whose paired matches
all ended alike in both runs (same winner, victory and end turn) passes as identical.

Paired runs of different sizes compare on the matches both finished: every column
(before, now, the difference) is over those pairs, and n_now = n_before is their
count.

Verdicts: PASS (equivalent), FAIL changed (the interval lies outside the margins
on one side: a regression), FAIL inconclusive (the interval is wider than the
margins: not shown equivalent, run more matches), FAIL missing (the earlier run has
the variant and this one finished none of its matches: a variant dropped from the
experiment, or one whose every match failed, must not pass unseen), and "not gated"
for a variant only this run has (nothing to compare it with; it neither passes nor
fails the gate).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from sim.analysis._frames import finished, victory_categories
from sim.analysis.load import read_table
from sim.analysis.stats import paired_share_interval, wilson
from sim.outputs.settings import report_settings
from sim.outputs.store import read_provenance, require_complete

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
    """One row per variant (of either run) × victory type; see the module docstring.
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
    in_now = a.get_column("variant").unique(maintain_order=True).to_list()
    in_before = b.get_column("variant").unique(maintain_order=True).to_list()
    cols = ["match_index", "winner", "victory", "end_turn"]
    for vid in (v for v in in_now if v in in_before):
        x = a.filter(pl.col("variant") == vid).select(cols).sort("match_index")
        y = b.filter(pl.col("variant") == vid).select(cols).sort("match_index")
        identical = False
        if paired:  # the matches both runs finished, in both runs' columns alike
            pairs = x.join(y, on="match_index", suffix="_before")
            x = pairs.select(cols)
            y = pairs.select("match_index", *(pl.col(f"{c}_before").alias(c)
                                              for c in cols[1:]))
            identical = pairs.height > 0 and x.equals(y)
            if not pairs.height:  # not one match finished in both: nothing to compare
                rows += [{"variant": vid, "victory": cat, "margin": margins.get(cat, margin),
                          "paired": paired, "n_now": 0, "n_before": 0,
                          "verdict": "FAIL missing"} for cat in cats]
                continue
        for cat in cats:
            margin_here = margins.get(cat, margin)
            xs, ys = x.get_column("victory") == cat, y.get_column("victory") == cat
            share_now, share_before = float(xs.mean()), float(ys.mean())
            if paired:
                gain = int((xs & ~ys).sum())
                loss = int((ys & ~xs).sum())
                both = int((xs & ys).sum())
                diff, lo, hi = paired_share_interval(both, gain, loss,
                                                     x.height - both - gain - loss,
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
    # a variant of one run only: its shares on its own side, nothing to compare
    alone = [("now", v, a, "not gated (not in the earlier run)") for v in in_now
             if v not in in_before] + \
        [("before", v, b, "FAIL missing") for v in in_before if v not in in_now]
    for side, vid, frame, verdict in alone:
        x = frame.filter(pl.col("variant") == vid)
        rows += [{"variant": vid, "victory": cat, "margin": margins.get(cat, margin),
                  side: float((x.get_column("victory") == cat).mean()), "paired": paired,
                  "n_now": 0, "n_before": 0, f"n_{side}": x.height, "verdict": verdict}
                 for cat in cats]
    return pl.DataFrame(rows, schema=SCHEMA)


def passed(table: pl.DataFrame) -> bool:
    """No row of the gate failed, and some row passed (a variant only the new run has
    is not gated: it neither passes nor fails)."""
    verdicts = table.get_column("verdict")
    return bool(verdicts.str.starts_with("PASS").any()
                and not verdicts.str.starts_with("FAIL").any())


def failures(table: pl.DataFrame) -> int:
    """The rows of the gate that failed."""
    return table.filter(pl.col("verdict").str.starts_with("FAIL")).height


def compared(table: pl.DataFrame) -> int:
    """The rows of the gate that count towards its verdict (all but "not gated")."""
    return table.filter(~pl.col("verdict").str.starts_with("not gated")).height


def gate_notes(run_dir: str | Path, prov: dict[str, Any], against: str | Path,
               before: dict[str, Any], table: pl.DataFrame) -> list[str]:
    """What a reader of the gate must not miss, in words: the runs played different
    games (seats, length), paired runs of different sizes (compared on the matches
    both finished), variants only one run holds."""
    notes = []
    game = [(p.get("seats"), p.get("length") or "the tables' length") for p in (prov, before)]
    if game[0] != game[1]:  # a designer may mean it, but should not miss it
        notes.append(f"{run_dir} played {game[0][0]} seats, {game[0][1]}; {against} "
                     f"{game[1][0]} seats, {game[1][1]}: the gate compares the shares of "
                     "two different games")
    done = table.filter(pl.col("difference").is_not_null() & pl.col("paired"))
    sizes = [p.get("matches_per_variant") for p in (prov, before)]
    if done.height and sizes[0] != sizes[1]:
        notes.append(f"{run_dir} played {sizes[0]} matches a variant and {against} "
                     f"{sizes[1]}: the gate pairs the matches both finished "
                     f"({done.get_column('n_now').min()} or more a variant), and every share "
                     "it prints is over those")
    new = table.filter(pl.col("verdict").str.starts_with("not gated"))
    if new.height:
        names = ", ".join(new.get_column("variant").unique(maintain_order=True).to_list())
        notes.append(f"not gated (not in {against}): {names}")
    gone = table.filter(pl.col("verdict") == "FAIL missing")
    if gone.height:
        names = ", ".join(gone.get_column("variant").unique(maintain_order=True).to_list())
        notes.append(f"in {against} but no finished match here: {names} (FAIL missing)")
    return notes


class GateError(ValueError):
    """The two runs cannot be gated (one line naming them)."""


@dataclass(frozen=True)
class RegressionGate:
    """A run gated against an earlier one: the gate table, the notes a reader must not
    miss (gate_notes), whether the runs paired, the margin on every share and the
    margins of single victory types."""

    table: pl.DataFrame
    notes: list[str]
    paired: bool
    margin: float
    margins: dict[str, float]


def regression_gate(run_dir: Path | str, against: Path | str,
                    margin: float | None = None) -> RegressionGate:
    """The regression gate of the run in `run_dir` against the earlier run `against`
    (what `sim report --against` prints). Margins: `margin` on every share when given,
    else the experiment file's [gate]. Raises RunError when `against` is incomplete
    or damaged, GateError when the runs share no variant."""
    require_complete(against)
    prov, before = read_provenance(run_dir), read_provenance(against)
    settings = report_settings(prov).gate
    margins = {} if margin is not None else settings.margins
    margin = settings.margin if margin is None else margin
    paired = same_matches(prov, before)
    table = gate(read_table(run_dir, "matches"), read_table(against, "matches"), paired,
                 margin, margins=margins)
    if table.get_column("difference").is_null().all():
        raise GateError(f"{against}: shares no variant with {run_dir}")
    return RegressionGate(table, gate_notes(run_dir, prov, against, before, table), paired,
                          margin, margins)

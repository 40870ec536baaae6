"""When a precision-targeted sweep may stop (issue 13): anytime-valid intervals.

A sweep that looks at its results every `block` matches and stops once they are
precise enough would, with fixed-size intervals, stop on a lucky streak: looking
many times inflates the error rate. A *confidence sequence* is an interval for
every prefix length at once, valid simultaneously: the chance that the true
mean ever leaves it, at any look, is at most alpha. So the sweep may look after
every block and stop at the first look that meets its target.

The sequence here is the predictable plug-in empirical-Bernstein one of
Waudby-Smith & Ramdas (2023), "Estimating means of bounded random variables by
betting", JRSS-B 86(1), Theorem 2, with the running intersection. It adapts to
the variance, which matters for paired differences on common random numbers:
most pairs agree, so the difference's variance (the discordance) is far below
the worst case a Hoeffding sequence assumes. No maintained Python library
offers it in a wheel (`confseq` ships C++ sources only), and it is a dozen lines
of cumulative sums; `tests/test_sequential.py` checks its time-uniform coverage
by simulation.

Two targets (the experiment's `precision` and `detect`):
- precision: every variant's every victory share (V01's four types) has an
  interval half-width of at most `precision`;
- detect: every variant's paired difference from the baseline in every victory
  share is decided: its interval excludes 0 (the variant differs) or lies
  inside (-detect, +detect) (any difference is smaller than `detect`). The
  comparisons are Bonferroni-corrected, so all decisions hold together.

The data are the match indicators in match-index order over a prefix of the
match sequence, so a decision depends on nothing but that prefix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from sim.analysis._frames import VICTORIES, finished
from sim.analysis.load import read_table
from sim.analysis.plan import mcnemar_matches

# the largest bet: Waudby-Smith & Ramdas use 1/2 or 3/4; 1/2 keeps psi_E well away
# from its pole at 1
_MAX_BET = 0.5


def confidence_sequence(x: np.ndarray, alpha: float = 0.05, low: float = 0.0,
                        high: float = 1.0, target: float | None = None,
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Time-uniform (1 - alpha) bounds on the mean of observations in [low, high].

    x: (n,) observations in arrival order. Returns (lower, upper), each (n,):
    element t bounds the mean given the first t + 1 observations, and with
    probability at least 1 - alpha every one of the n intervals holds at once
    (for i.i.d. or, more generally, constant-conditional-mean observations).
    The bounds only narrow as t grows (running intersection).

    target: a half-width (in the units of x) the caller wants to reach. The bets
    are then tuned to it: with variance s^2 the half-width after n observations is
    about log(2/alpha)/(n*bet) + s^2*bet/2, smallest near the n that reaches the
    target at bet = target/s^2, so bet_t = target/sigma2_hat_{t-1} (a predictable
    choice, so the sequence stays valid at every t). Without it the bets follow the
    paper's anytime schedule, sqrt(2 log(2/alpha) / (sigma2_hat * t * log(1 + t))),
    which is wider wherever it is read."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if high <= low:
        raise ValueError(f"need low < high, got [{low}, {high}]")
    y = (np.asarray(x, dtype=np.float64) - low) / (high - low)
    n = y.size
    if n == 0:
        return np.empty(0), np.empty(0)
    if y.min() < -1e-12 or y.max() > 1 + 1e-12:
        raise ValueError(f"observations outside [{low}, {high}]")
    t = np.arange(1, n + 1, dtype=np.float64)
    # mu_hat[t], sigma2_hat[t] after t observations; index 0 is the prior 1/2, 1/4
    mu_hat = np.concatenate(([0.5], (0.5 + np.cumsum(y)) / (t + 1)))
    sigma2_hat = np.concatenate(([0.25], (0.25 + np.cumsum((y - mu_hat[1:]) ** 2)) / (t + 1)))
    log_term = math.log(2.0 / alpha)
    if target is None:
        bet = np.sqrt(2.0 * log_term / (sigma2_hat[:-1] * t * np.log1p(t)))
    else:
        bet = (target / (high - low)) / sigma2_hat[:-1]
    bet = np.minimum(bet, _MAX_BET)
    v = 4.0 * (y - mu_hat[:-1]) ** 2
    psi = (-np.log1p(-bet) - bet) / 4.0
    bets = np.cumsum(bet)
    center = np.cumsum(bet * y) / bets
    margin = (log_term + np.cumsum(v * psi)) / bets
    lower = np.maximum.accumulate(np.clip(center - margin, 0.0, 1.0))
    upper = np.minimum.accumulate(np.clip(center + margin, 0.0, 1.0))
    return low + (high - low) * lower, low + (high - low) * upper


@dataclass(frozen=True)
class Look:
    """One look at a prefix: whether the target is met and the table behind it."""

    matches: int                 # the prefix length (matches per variant)
    met: bool
    summary: str                 # one line for the progress log
    table: pl.DataFrame          # per variant × victory: lo, hi, half_width, decided


_SCHEMA = {"variant": pl.Utf8, "victory": pl.Utf8, "n": pl.Int64, "estimate": pl.Float64,
           "lo": pl.Float64, "hi": pl.Float64, "half_width": pl.Float64,
           "decided": pl.Utf8}


def _indicators(matches: pl.DataFrame, variant: str) -> pl.DataFrame:
    """match_index and the victory of each finished match of `variant`, in index order."""
    return (finished(matches).filter(pl.col("variant") == variant)
            .select("match_index", "victory").sort("match_index"))


def precision_look(matches: pl.DataFrame, prefix: int, precision: float,
                   confidence: float = 0.95) -> Look:
    """The precision target at a prefix: every variant's every victory share within
    ±precision (confidence sequence at `confidence`). `matches`: the run's matches
    table (variant, match_index, victory); rows at or beyond `prefix` are ignored."""
    alpha = 1.0 - confidence
    rows = []
    frame = matches.filter(pl.col("match_index") < prefix)
    for variant in sorted(frame.get_column("variant").unique().to_list()):
        part = _indicators(frame, variant)
        for victory in VICTORIES:
            x = (part.get_column("victory") == victory).cast(pl.Float64).to_numpy()
            lo, hi = confidence_sequence(x, alpha, target=precision)
            half = float(hi[-1] - lo[-1]) / 2 if x.size else math.inf
            rows.append((variant, victory, x.size, float(x.mean()) if x.size else None,
                         float(lo[-1]) if x.size else None, float(hi[-1]) if x.size else None,
                         half, "precise" if half <= precision else ""))
    table = pl.DataFrame(rows, schema=_SCHEMA, orient="row")
    widest = table.sort("half_width", descending=True).row(0, named=True) if rows else None
    met = bool(rows) and all(r[7] for r in rows)
    summary = (f"widest share interval ±{widest['half_width']:.3f} ({widest['variant']}, "
               f"{widest['victory']}); target ±{precision:g}") if widest else "no matches"
    return Look(prefix, met, summary, table)


def detect_look(matches: pl.DataFrame, prefix: int, baseline: str, detect: float,
                confidence: float = 0.95, power: float = 0.8) -> Look:
    """The detect target at a prefix: each non-baseline variant's paired difference
    from `baseline` in each victory share, on the matches both finished, is decided
    (its Bonferroni-corrected confidence sequence excludes 0: "differs"; or lies
    within ±detect: "within"). `decided` is "" while undecided. The summary also
    gives what a fixed-size McNemar test at `power` would need from the discordance
    seen so far (sim.analysis.plan), for comparison with where the sequence stops."""
    frame = matches.filter(pl.col("match_index") < prefix)
    variants = [v for v in sorted(frame.get_column("variant").unique().to_list())
                if v != baseline]
    base = _indicators(frame, baseline)
    # Bonferroni over the comparisons that have pairs: one without any cannot be made,
    # and counting it would only widen the others
    paired = [v for v in variants
              if _indicators(frame, v).join(base, on="match_index").height]
    comparisons = max(1, len(paired) * len(VICTORIES))
    alpha = (1.0 - confidence) / comparisons
    rows = []
    planned: list[int] = []
    for variant in variants:
        pair = _indicators(frame, variant).join(base, on="match_index", suffix="_base") \
            .sort("match_index")
        for victory in VICTORIES:
            d = ((pair.get_column("victory") == victory).cast(pl.Float64) -
                 (pair.get_column("victory_base") == victory).cast(pl.Float64)).to_numpy()
            if d.size == 0:
                rows.append((variant, victory, 0, None, None, None, math.inf, ""))
                continue
            # tuned to half the margin: a difference near 0 is then "within", one near
            # ±detect "differs", at about the same look
            lo_all, hi_all = confidence_sequence(d, alpha, -1.0, 1.0, target=detect / 2)
            lo, hi = float(lo_all[-1]), float(hi_all[-1])
            need = mcnemar_matches(float((d != 0).mean()), detect, alpha, power)
            if need is not None:
                planned.append(need)
            decided = "differs" if lo > 0 or hi < 0 else \
                "within" if -detect < lo and hi < detect else ""
            rows.append((variant, victory, d.size, float(d.mean()), lo, hi, (hi - lo) / 2,
                         decided))
    table = pl.DataFrame(rows, schema=_SCHEMA, orient="row")
    done = sum(1 for r in rows if r[7])
    met = bool(rows) and done == len(rows)
    fixed = f"; a fixed-size test at power {power:g} would need about {max(planned)}" \
        if planned else ""
    summary = (f"{done} of {len(rows)} paired differences decided (differs from "
               f"{baseline}, or within ±{detect:g}){fixed}") if rows else \
        "no variant to compare with the baseline"
    return Look(prefix, met, summary, table)


def look(matches: pl.DataFrame, prefix: int, baseline: str, precision: float | None,
         detect: float | None, confidence: float = 0.95, power: float = 0.8) -> Look:
    """Both targets an experiment may state; met when every stated one is met."""
    looks = []
    if precision is not None:
        looks.append(precision_look(matches, prefix, precision, confidence))
    if detect is not None:
        looks.append(detect_look(matches, prefix, baseline, detect, confidence, power))
    if not looks:
        raise ValueError("a look needs precision or detect")
    table = pl.concat([x.table.with_columns(pl.lit(kind).alias("target"))
                       for x, kind in zip(looks, [k for k, v in (("precision", precision),
                                                                 ("detect", detect))
                                                  if v is not None], strict=True)])
    return Look(prefix, all(x.met for x in looks), "; ".join(x.summary for x in looks),
                table)


def run_look(run_dir: Path | str, prefix: int, baseline: str, precision: float | None,
             detect: float | None, confidence: float = 0.95, power: float = 0.8,
             ) -> tuple[bool, str, dict[str, Any]]:
    """A look at a run folder's matches table (what sim.runner.sequential calls):
    (met, one line of news, the look's rows for the provenance)."""
    result = look(read_table(run_dir, "matches"), prefix, baseline, precision, detect,
                  confidence, power)
    rows = [{k: (None if math.isinf(v) else round(v, 5)) if isinstance(v, float) else v
             for k, v in row.items()} for row in result.table.to_dicts()]
    return result.met, result.summary, {"rows": rows}


def stopping_rule(spec, baseline: str):
    """The look a sequential sweep asks after each block (sim.runner.sequential's
    `look`): run_look with the experiment's targets. spec: the experiment's spec
    (precision, detect, confidence, power); baseline: its baseline variant."""

    def look_at(run_dir: Path | str, prefix: int) -> tuple[bool, str, dict[str, Any]]:
        return run_look(run_dir, prefix, baseline, spec.precision, spec.detect,
                        spec.confidence, spec.power)

    return look_at


__all__ = ["Look", "confidence_sequence", "detect_look", "look", "precision_look", "run_look",
           "stopping_rule"]

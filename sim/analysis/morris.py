"""Morris elementary effects of a sensitivity folder's Morris sweep (issue 13).

The design (`morris.json`, written by sim.runner.morris) is R trajectories of
K + 1 points over K parameters; consecutive points of a trajectory move one
parameter by a fixed share of its range [low, high]. Each point's outcome is the
mean over the matches of its variant (common random numbers: match i is the same
map and draws at every point). SALib's `analyze.morris.analyze` turns the design
and the outcome means into, per parameter and outcome:

* mu_star: the mean absolute elementary effect, in the outcome's unit per move of
  the parameter over its whole range [low, high] (the same scale as the
  one-at-a-time `effect`, high − low, for a parameter that acts linearly);
* mu: the signed mean (small against mu_star: the effect changes sign);
* sigma: the standard deviation of the elementary effects: how much a parameter's
  effect depends on where the other parameters are (interactions) or on its own
  value (non-linearity); mu_star_conf: the bootstrap half-width of mu_star.

Elementary effects of simulated matches carry sampling noise, which inflates
sigma even where nothing interacts. `ee_se` estimates it: the standard error of
one elementary effect from the paired per-match differences of its two points
(root mean square over the parameter's trajectories). The flag **interacts** is
`sigma > mu_star` (the elementary effects spread more than their mean size) and
`mu_star > 2 * ee_se` (the parameter's effect is above the matches' noise).

Integer parameters are played rounded; the analysis hands SALib the design's
unrounded values, so an integer's elementary effect is taken over its nominal step.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from SALib.analyze import morris as morris_analyze

from sim.analysis._frames import finished, victory_categories
from sim.analysis.load import write_frame
from sim.analysis.paired import PAIRED_METRICS, metric_observations
from sim.analysis.sensitivity import load_frames
from sim.outputs.folders import MORRIS_DESIGN_FILE, MORRIS_DIR
from sim.outputs.storage import run_path

RESAMPLES = 1000               # bootstrap resamples of mu_star_conf

SCHEMA = {"parameter": pl.Utf8, "metric": pl.Utf8, "base": pl.Float64, "low": pl.Float64,
          "high": pl.Float64, "mu": pl.Float64, "mu_star": pl.Float64,
          "mu_star_conf": pl.Float64, "sigma": pl.Float64, "ee_se": pl.Float64,
          "mu_star_per_10pct": pl.Float64, "interacts": pl.Boolean, "n_matches": pl.Int64,
          "rank": pl.Int64}


def read_morris_design(folder: Path | str) -> dict[str, Any] | None:
    """The Morris design `sim sensitivity` wrote into the folder, or None (no screen)."""
    path = run_path(folder) / MORRIS_DESIGN_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def per_match_outcomes(matches: pl.DataFrame, seats: pl.DataFrame,
                       events: pl.DataFrame) -> pl.DataFrame:
    """Every outcome of every match, long format, on the matches finished in every
    variant given (so each variant's mean is over the same match indices).

    Columns: variant, match_index, metric, value (Float64). Metrics: `victory=X`
    (1.0 when the match ended by X, else 0.0) for every victory type of
    victory_categories, then end_turn, winner_gold_share (no row when the winner
    scored 0), standing_gold_share (the mean over the match's standing seats
    with score > 0) and capital_falls, as in sim.analysis.paired.metric_observations.
    """
    done = finished(matches)
    n_variants = done.get_column("variant").n_unique()
    common = (done.group_by("match_index").agg(pl.col("variant").n_unique().alias("n"))
              .filter(pl.col("n") == n_variants).select("match_index"))
    done = done.join(common, on="match_index")
    cats = victory_categories(done)
    wins = [done.select("variant", "match_index", pl.lit(f"victory={c}").alias("metric"),
                        (pl.col("victory") == c).cast(pl.Float64).alias("value"))
            for c in cats]
    others = (metric_observations(done, seats, events)
              .group_by("variant", "match_index", "metric", maintain_order=True)
              .agg(pl.col("value").mean()))
    order = {m: i for i, m in enumerate([f"victory={c}" for c in cats] + list(PAIRED_METRICS))}
    out = pl.concat([*wins, others])
    return out.sort(pl.col("metric").replace_strict(order, default=len(order),
                                                    return_dtype=pl.Int64),
                    "metric", "variant", "match_index")


def _delta(levels: int) -> float:
    """SALib's Morris step as a share of the range: levels / (2 (levels − 1))."""
    return levels / (2.0 * (levels - 1))


def _ee_standard_errors(design: dict[str, Any], wide: dict[str, np.ndarray],
                        ) -> list[float]:
    """Per parameter: root mean square over its elementary effects of the standard
    error of each (paired per-match differences of its two points / √n / step).
    wide: variant -> per-match values over the common match indices (NaN: none)."""
    x = np.asarray(design["x"], dtype=float)
    rows, k = design["rows"], len(design["parameters"])
    delta = _delta(design["levels"])
    squares: list[list[float]] = [[] for _ in range(k)]
    for t in range(design["trajectories"]):
        for j in range(k):
            a, b = t * (k + 1) + j, t * (k + 1) + j + 1
            moved = int(np.argmax(np.abs(x[b] - x[a])))
            diff = wide[rows[b]] - wide[rows[a]]
            diff = diff[~np.isnan(diff)]
            if diff.size >= 2:
                se = float(np.std(diff, ddof=1)) / math.sqrt(diff.size) / delta
                squares[moved].append(se * se)
    return [math.sqrt(sum(s) / len(s)) if s else math.nan for s in squares]


def morris_indices(design: dict[str, Any], outcomes: pl.DataFrame,
                   confidence: float = 0.95, resamples: int = RESAMPLES) -> pl.DataFrame:
    """One row per parameter × metric of a Morris design (`morris.json`) from
    per_match_outcomes of its sweep.

    Columns: parameter, metric, base, low, high (the parameter's range), mu,
    mu_star, mu_star_conf (half-width at `confidence`, bootstrap with a seed from
    the design's), sigma (SALib's, per move over [low, high]), ee_se (the noise
    of one elementary effect), mu_star_per_10pct (mu_star × 10 % of the base /
    (high − low): comparable to the tornado's slopes; null for a base of 0),
    interacts (sigma > mu_star and mu_star > 2 ee_se), n_matches (the common
    matches behind each mean) and rank (by mu_star within the metric, ties by
    name; 1 is the strongest). A metric some point has no value of gives no rows.
    """
    params = design["parameters"]
    names = [p["key"] for p in params]
    problem = {"num_vars": len(params), "names": names,
               "bounds": [[float(p["low"]), float(p["high"])] for p in params]}
    x = np.asarray(design["x"], dtype=float)
    rows_out = []
    metrics = outcomes.get_column("metric").unique(maintain_order=True).to_list()
    for metric in metrics:
        part = outcomes.filter(pl.col("metric") == metric)
        wide_frame = part.pivot(on="variant", index="match_index", values="value",
                                sort_columns=True).sort("match_index")
        if any(v not in wide_frame.columns for v in design["rows"]):
            continue
        wide = {v: wide_frame.get_column(v).cast(pl.Float64).fill_null(math.nan).to_numpy()
                for v in set(design["rows"])}
        means = {v: float(np.nanmean(values)) if np.any(~np.isnan(values)) else math.nan
                 for v, values in wide.items()}
        y = np.array([means[v] for v in design["rows"]], dtype=float)
        if np.isnan(y).any():
            continue
        si = morris_analyze.analyze(problem, x, y, num_resamples=resamples,
                                    conf_level=confidence, num_levels=design["levels"],
                                    seed=np.random.default_rng(design["seed"]))
        ee_se = _ee_standard_errors(design, wide)
        for i, p in enumerate(params):
            mu_star = float(si["mu_star"][i])
            sigma = float(si["sigma"][i])
            per_10 = None if p["base"] == 0 else \
                mu_star * 0.1 * abs(p["base"]) / (p["high"] - p["low"])
            rows_out.append({
                "parameter": p["key"], "metric": metric, "base": float(p["base"]),
                "low": float(p["low"]), "high": float(p["high"]), "mu": float(si["mu"][i]),
                "mu_star": mu_star, "mu_star_conf": float(si["mu_star_conf"][i]),
                "sigma": sigma, "ee_se": ee_se[i], "mu_star_per_10pct": per_10,
                "interacts": bool(sigma > mu_star and mu_star > 2 * ee_se[i]),
                "n_matches": wide_frame.height, "rank": 0})
    out = pl.DataFrame(rows_out, schema=SCHEMA, orient="row")
    order = {m: i for i, m in enumerate(metrics)}
    out = out.sort(pl.col("metric").replace_strict(order, return_dtype=pl.Int64),
                   pl.col("mu_star"), "parameter", descending=[False, True, False])
    return out.with_columns(
        (pl.int_range(pl.len()).over("metric") + 1).cast(pl.Int64).alias("rank"))


def morris_table(folder: Path | str, confidence: float = 0.95) -> pl.DataFrame | None:
    """`morris_indices` of a sensitivity folder (its morris.json and the sweep in
    `morris/`), or None when the folder has no Morris screen."""
    design = read_morris_design(folder)
    if design is None:
        return None
    matches, seats, events = load_frames(run_path(folder) / MORRIS_DIR)
    return morris_indices(design, per_match_outcomes(matches, seats, events), confidence)


def write_morris_table(folder: Path | str) -> tuple[pl.DataFrame, dict[str, Any]]:
    """morris_table of a sensitivity folder whose Morris sweep is done, written to its
    morris.parquet, with the design it read (morris.json)."""
    morris = morris_table(folder)
    design = read_morris_design(folder)
    write_frame(morris, run_path(folder) / "morris.parquet")
    return morris, design

"""How many matches to run (issues 13, 44: sample-size planning from a pilot run).

Variants pair with the baseline on common random numbers, so what a victory share's
difference needs is set by the *discordance*: the share of matches whose indicator
("victory = X") differs between the two members of a pair. From a pilot run's
observed discordance d, the plan is the fewest paired matches at which the report's
own test, the exact McNemar test, rejects a difference `detect` with the given power:
its power is computed exactly (the discordant pairs are Binomial(n, d), the gains among
them Binomial(k, (d + detect) / 2d), and the exact test's rejection region for each k),
starting from Connor's (1987) normal approximation

    n = (z_{1-a/2} * sqrt(d) + z_{power} * sqrt(d - detect^2))^2 / detect^2.

The report corrects every paired test of a run with one Holm correction over the
family (every variant but the baseline × every victory type and paired metric,
sim.analysis.paired), so each test is planned at the level Holm's first step uses,
alpha / family: that power holds under Holm whatever the other tests show (Holm
rejects at least what Bonferroni does). tools/calibrate_plan.py checks the promise
by simulation (docs/statistics.md).

The unpaired count (two independent samples of size n each, same shares;
statsmodels' samplesize_proportions_2indep_onetail) is given beside it to show what
common random numbers save.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
from scipy.stats import binom, norm

from sim.analysis._frames import finished, victory_categories
from sim.analysis.load import load_run
from sim.analysis.outcomes import outcome_categories, outcome_rows
from sim.analysis.paired import PAIRED_METRICS
from sim.outputs.games import game_of_run
from sim.outputs.store import require_complete


def mcnemar_power(n: int, discordance: float, detect: float, alpha: float = 0.05) -> float:
    """The exact power of the two-sided exact McNemar test at level `alpha` over n
    pairs whose indicators disagree with probability `discordance`, one way more often
    by `detect` (gains (d + detect)/2, losses (d − detect)/2): the sum over the number
    k of discordant pairs (Binomial(n, d)) of the chance that the gains among them fall
    in the test's rejection region min(gains, k − gains) <= c_k (c_k: the largest c
    with 2·P(Binomial(k, 1/2) <= c) <= alpha; sim.analysis.stats.mcnemar_exact)."""
    if n <= 0 or discordance <= 0:
        return 0.0
    # only the counts of discordant pairs that happen: beyond 10 standard deviations of
    # Binomial(n, d) the mass is below 1e-20 (and the sum over all n + 1 counts is slow)
    mean, sd = n * discordance, math.sqrt(n * discordance * (1 - discordance))
    k = np.arange(max(0, math.floor(mean - 10 * sd - 1)), min(n, math.ceil(mean + 10 * sd + 1)) + 1)
    c = binom.ppf(alpha / 2, k, 0.5)
    c = np.where(2 * binom.cdf(c, k, 0.5) > alpha * (1 + 1e-12), c - 1, c)
    q = min((discordance + detect) / (2 * discordance), 1.0)
    given_k = np.where(c >= 0, binom.cdf(c, k, q) + binom.sf(k - c - 1, k, q), 0.0)
    return float(np.dot(binom.pmf(k, n, discordance), given_k))


def mcnemar_matches(discordance: float, detect: float, alpha: float = 0.05,
                    power: float = 0.8) -> int | None:
    """The fewest paired matches at which the exact McNemar test at level `alpha`
    reaches `power` (mcnemar_power) for a difference `detect` in a share whose pairs
    disagree with probability `discordance`; None when the difference cannot happen
    with that discordance or nothing disagrees. A paired difference is the share of
    pairs that gained minus the share that lost, so it is at most the discordance
    (Connor's formula itself only needs detect² < discordance, and would plan 17
    matches for a 0.2 difference where a tenth of the pairs disagree). The search
    starts from Connor's approximation and bisects on the exact power (which wobbles a
    little with n, by the test's discreteness: the answer has at least `power`)."""
    if not 0 < detect < 1:
        raise ValueError(f"detect must be in (0, 1), got {detect}")
    if discordance <= 0 or detect >= discordance:
        return None
    za, zb = norm.ppf(1 - alpha / 2), norm.ppf(power)
    start = (za * math.sqrt(discordance) + zb * math.sqrt(discordance - detect * detect)) \
        ** 2 / detect ** 2
    lo, hi = 1, max(2, math.ceil(start))
    while mcnemar_power(hi, discordance, detect, alpha) < power:
        lo, hi = hi, hi * 2
    while hi - lo > 1:  # the first n at power, by bisection (power rises with n on average)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if mcnemar_power(mid, discordance, detect, alpha) >= power \
            else (mid, hi)
    return hi


def unpaired_matches(share: float, detect: float, alpha: float = 0.05,
                     power: float = 0.8) -> int:
    """Matches per variant for two independent samples to detect `detect` around a
    share `share` (statsmodels samplesize_proportions_2indep_onetail, two-sided)."""
    from statsmodels.stats.proportion import samplesize_proportions_2indep_onetail

    moved = min(max(share + detect, 0.0), 1.0)
    return math.ceil(samplesize_proportions_2indep_onetail(
        moved - share, share, power, alpha=alpha, alternative="two-sided"))


def family_size(variants: int, victory_types: int) -> int:
    """The tests the report corrects together (Holm): every variant but the baseline ×
    (every victory type + every paired metric, sim.analysis.paired.PAIRED_METRICS)."""
    return max(1, variants * (victory_types + len(PAIRED_METRICS)))


def plan(matches: pl.DataFrame, baseline: str, detect: float, alpha: float = 0.05,
         power: float = 0.8, family: int | None = None,
         categories: list[str] | None = None) -> pl.DataFrame:
    """Per variant × victory type of a pilot run: the observed discordance with the
    baseline and the paired matches needed to detect `detect` with `power` when the
    report's Holm correction runs over `family` tests (None: family_size of the
    pilot's variants and victory types), i.e. each test at level alpha / family, with
    the unpaired count beside it. Columns: variant, victory, n_pairs, baseline_share,
    discordance, level (alpha / family), paired_matches (null: the pilot's pairs
    disagree on no more than `detect` of the matches, so a difference that large
    cannot happen at that discordance, or none disagree), unpaired_matches.
    `categories`: another game's outcomes in place of the victory types
    (sim.analysis.outcomes: Crown's winner sides)."""
    done = finished(matches).select("variant", "match_index", "victory")
    base = done.filter(pl.col("variant") == baseline).drop("variant")
    cats = categories or victory_categories(done)
    others = [v for v in done.get_column("variant").unique(maintain_order=True).to_list()
              if v != baseline]
    level = alpha / (family or family_size(len(others), len(cats)))
    rows = []
    for variant in others:
        pair = (done.filter(pl.col("variant") == variant).drop("variant")
                .join(base, on="match_index", suffix="_base"))
        n = pair.height
        if n == 0:
            continue
        for cat in cats:
            x = pair.get_column("victory") == cat
            y = pair.get_column("victory_base") == cat
            d = float((x != y).sum()) / n
            share = float(y.mean())
            rows.append({"variant": variant, "victory": cat, "n_pairs": n,
                         "baseline_share": share, "discordance": d, "level": level,
                         "paired_matches": mcnemar_matches(d, detect, level, power),
                         "unpaired_matches": unpaired_matches(share, detect, level, power)})
    return pl.DataFrame(rows, schema={
        "variant": pl.Utf8, "victory": pl.Utf8, "n_pairs": pl.Int64,
        "baseline_share": pl.Float64, "discordance": pl.Float64, "level": pl.Float64,
        "paired_matches": pl.Int64, "unpaired_matches": pl.Int64})


def holm_power(rng: np.random.Generator, matches: int, discordance: float, detect: float,
               family: int, alpha: float = 0.05, tries: int = 2000) -> float:
    """The real power of a planned run, by simulation (tools/calibrate_plan.py): the
    share of `tries` in which the one test with a true difference `detect` is flagged
    (Holm-adjusted p <= alpha, sim.analysis.stats.holm over the whole family, as the
    report does) among `family` exact McNemar tests on `matches` pairs, all with
    discordance `discordance`, the other family − 1 without a difference."""
    from sim.analysis.stats import holm

    probs = np.full((family, 3), [discordance / 2, discordance / 2, 1 - discordance])
    probs[0] = [(discordance + detect) / 2, (discordance - detect) / 2, 1 - discordance]
    hits = 0
    for _ in range(tries):
        counts = np.stack([rng.multinomial(matches, p) for p in probs])
        gain, loss = counts[:, 0], counts[:, 1]
        k = gain + loss
        p = np.where(k > 0, np.minimum(1.0, 2 * binom.cdf(np.minimum(gain, loss), k, 0.5)),
                     np.nan)
        hits += bool(holm(p.tolist())[0] <= alpha)
    return hits / tries


class PlanError(ValueError):
    """The pilot run cannot be planned from as asked (one line)."""


@dataclass(frozen=True)
class RunPlan:
    """`plan` of a pilot run with what `sim plan` says under it: the paired matches per
    variant that detect the difference in every victory share and the unpaired count
    beside it (both None when no row has a count), the rows without a count, and the
    Holm family the plan corrects for with the level of each test in it."""

    table: pl.DataFrame
    matches: int | None
    unpaired: int | None
    without_count: int
    family: int = 1
    level: float = 0.05


def plan_run(run_dir: Path | str, baseline: str | None, detect: float, alpha: float = 0.05,
             power: float = 0.8, family: int | None = None) -> RunPlan:
    """`plan` of the pilot run in `run_dir`, paired with `baseline` (None: the run's),
    for a Holm family of `family` tests (None: the report's family of the pilot's
    variants, family_size). Raises RunError when the run is incomplete or damaged (a
    plan from damaged or foreign parts would look as sure), RunFolderError when it
    holds no run, PlanError when the baseline is not a variant of it or no other
    variant is there to plan for."""
    require_complete(run_dir)
    run = load_run(run_dir)
    base = baseline or run.baseline
    if base not in run.variants:
        raise PlanError(f"--baseline {base}: not a variant of {run_dir} "
                        f"({', '.join(run.variants)})")
    game = game_of_run(run.provenance)  # another game: its outcomes' shares
    cats = outcome_categories(game)
    if cats is not None and family is None:
        # another game's report has no hex paired metrics: its family is its shares
        family = max(1, (len(run.variants) - 1) * len(cats))
    table = plan(outcome_rows(run.matches, game), base, detect, alpha, power, family, cats)
    if not table.height:
        raise PlanError(f"{run_dir}: no variant besides the baseline {base!r} to plan for")
    need = table.get_column("paired_matches").drop_nulls()
    level = float(table.item(0, "level"))
    return RunPlan(table, int(need.max()) if need.len() else None,
                   int(table.get_column("unpaired_matches").max()) if need.len() else None,
                   table.filter(pl.col("paired_matches").is_null()).height,
                   round(alpha / level), level)

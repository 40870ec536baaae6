"""How many matches to run (issue 13, sample-size planning from a pilot run).

Variants pair with the baseline on common random numbers, so what a victory share's
difference needs is set by the *discordance*: the share of matches whose indicator
("victory = X") differs between the two members of a pair. From a pilot run's
observed discordance d, the paired matches needed to detect a difference `detect`
with an exact-McNemar-sized two-sided test at level alpha and the given power are
(Connor 1987, the normal approximation of McNemar's power):

    n = (z_{1-alpha/2} * sqrt(d) + z_{power} * sqrt(d - detect^2))^2 / detect^2

The unpaired count (two independent samples of size n each, same shares) is given
beside it to show what common random numbers save.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import polars as pl
from scipy.stats import norm

from sim.analysis._frames import finished, victory_categories
from sim.analysis.load import load_run
from sim.outputs.store import require_complete


def mcnemar_matches(discordance: float, detect: float, alpha: float = 0.05,
                    power: float = 0.8) -> int | None:
    """Paired matches to detect a difference `detect` in a share whose pairs disagree
    with probability `discordance` (Connor 1987); None when the difference cannot
    happen with that discordance or nothing disagrees. A paired difference is the
    share of pairs that gained minus the share that lost, so it is at most the
    discordance (Connor's formula itself only needs detect² < discordance, and would
    plan 17 matches for a 0.2 difference where a tenth of the pairs disagree). Never
    fewer matches than the exact test needs to reject at all: k discordant pairs all
    one way have p = 2·0.5^k, so at alpha 0.05 six of them, 6 / discordance matches
    on average (where the normal approximation undercounts, near detect = discordance)."""
    if not 0 < detect < 1:
        raise ValueError(f"detect must be in (0, 1), got {detect}")
    if discordance <= 0 or detect >= discordance:
        return None
    za, zb = norm.ppf(1 - alpha / 2), norm.ppf(power)
    n = (za * math.sqrt(discordance) + zb * math.sqrt(discordance - detect * detect)) ** 2 \
        / detect ** 2
    fewest_one_way = math.ceil(math.log2(2 / alpha))
    return max(math.ceil(n), math.ceil(fewest_one_way / discordance))


def unpaired_matches(share: float, detect: float, alpha: float = 0.05,
                     power: float = 0.8) -> int:
    """Matches per variant for two independent samples (normal approximation) to
    detect `detect` around a share `share`."""
    za, zb = norm.ppf(1 - alpha / 2), norm.ppf(power)
    p1, p2 = share, min(max(share + detect, 0.0), 1.0)
    pbar = (p1 + p2) / 2
    n = (za * math.sqrt(2 * pbar * (1 - pbar)) +
         zb * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))) ** 2 / detect ** 2
    return math.ceil(n)


def plan(matches: pl.DataFrame, baseline: str, detect: float, alpha: float = 0.05,
         power: float = 0.8) -> pl.DataFrame:
    """Per variant × victory type of a pilot run: the observed discordance with the
    baseline and the paired matches needed to detect `detect` (with the unpaired
    count beside it). Columns: variant, victory, n_pairs, baseline_share,
    discordance, paired_matches (null: the pilot's pairs disagree on no more than
    `detect` of the matches, so a difference that large cannot happen at that
    discordance, or none disagree), unpaired_matches."""
    done = finished(matches).select("variant", "match_index", "victory")
    base = done.filter(pl.col("variant") == baseline).drop("variant")
    rows = []
    for variant in done.get_column("variant").unique(maintain_order=True).to_list():
        if variant == baseline:
            continue
        pair = (done.filter(pl.col("variant") == variant).drop("variant")
                .join(base, on="match_index", suffix="_base"))
        n = pair.height
        if n == 0:
            continue
        for cat in victory_categories(done):
            x = pair.get_column("victory") == cat
            y = pair.get_column("victory_base") == cat
            d = float((x != y).sum()) / n
            share = float(y.mean())
            rows.append({"variant": variant, "victory": cat, "n_pairs": n,
                         "baseline_share": share, "discordance": d,
                         "paired_matches": mcnemar_matches(d, detect, alpha, power),
                         "unpaired_matches": unpaired_matches(share, detect, alpha, power)})
    return pl.DataFrame(rows, schema={
        "variant": pl.Utf8, "victory": pl.Utf8, "n_pairs": pl.Int64,
        "baseline_share": pl.Float64, "discordance": pl.Float64,
        "paired_matches": pl.Int64, "unpaired_matches": pl.Int64})


class PlanError(ValueError):
    """The pilot run cannot be planned from as asked (one line)."""


@dataclass(frozen=True)
class RunPlan:
    """`plan` of a pilot run with what `sim plan` says under it: the paired matches per
    variant that detect the difference in every victory share and the unpaired count
    beside it (both None when no row has a count), and the rows without a count."""

    table: pl.DataFrame
    matches: int | None
    unpaired: int | None
    without_count: int


def plan_run(run_dir: Path | str, baseline: str | None, detect: float, alpha: float = 0.05,
             power: float = 0.8) -> RunPlan:
    """`plan` of the pilot run in `run_dir`, paired with `baseline` (None: the run's).
    Raises RunError when the run is incomplete or damaged (a plan from damaged or
    foreign parts would look as sure), RunFolderError when it holds no run, PlanError
    when the baseline is not a variant of it or no other variant is there to plan for."""
    require_complete(run_dir)
    run = load_run(run_dir)
    base = baseline or run.baseline
    if base not in run.variants:
        raise PlanError(f"--baseline {base}: not a variant of {run_dir} "
                        f"({', '.join(run.variants)})")
    table = plan(run.matches, base, detect, alpha, power)
    if not table.height:
        raise PlanError(f"{run_dir}: no variant besides the baseline {base!r} to plan for")
    need = table.get_column("paired_matches").drop_nulls()
    return RunPlan(table, int(need.max()) if need.len() else None,
                   int(table.get_column("unpaired_matches").max()) if need.len() else None,
                   table.filter(pl.col("paired_matches").is_null()).height)

"""D10's check: does forbidding an item to a seat raise its win rate? One row per
restricted variant of a run (`seat_ai` forbid), the restricted seat paired match by
match with the same seat in the run's baseline (its free twin: the same tables and
skill, nothing forbidden).

    .venv/bin/python tools/forbid_values.py RUN [RUN ...] [--markdown]

Reads each run folder (e.g. runs/restricted-values from
`sim sweep experiments/restricted/values.toml`) with sim.analysis.importance
(strategy_importance, the report's "What each strategy is worth") and prints, per
forbidden item: the paired win rates, the change with its 95 % interval, the
McNemar z of the discordant pairs (z = (gains - losses) / sqrt(gains + losses):
positive when the seat wins more without the item), the one-sided p of a gain,
Holm-adjusted over the family of every row printed (every run), and the verdict
`misvalued` when that adjusted p is below 0.05 (z above about 2 after Holm).
"""

from __future__ import annotations

import argparse
import math

import polars as pl
from scipy.stats import norm
from statsmodels.stats.multitest import multipletests

from sim.analysis.importance import strategy_importance
from sim.analysis.load import load_run


def forbid_rows(run_dir: str) -> pl.DataFrame:
    """The overall ("win") rows of strategy_importance for one run, with its skill:
    every restricted variant paired with the run's baseline (no provenance given), so
    a baseline with a skill-1 seat 0 is the free twin of its skill-1 restrictions."""
    run = load_run(run_dir)
    rows = strategy_importance(run.matches, run.seats, run.baseline)
    rows = rows.filter(pl.col("outcome") == "win")
    skill = run.seats.group_by("variant", "seat").agg(pl.col("skill").max())
    return rows.join(skill, on=["variant", "seat"], how="left").with_columns(
        pl.lit(run_dir).alias("run"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    rows = pl.concat([forbid_rows(r) for r in args.runs], how="diagonal_relaxed")
    gain = rows["discordant_gain"].to_numpy()
    loss = rows["discordant_loss"].to_numpy()
    z = [(g - lo) / math.sqrt(g + lo) if g + lo else 0.0 for g, lo in zip(gain, loss, strict=True)]
    p = [float(norm.sf(x)) for x in z]
    holm = multipletests(p, method="holm")[1] if p else []
    out = rows.with_columns(pl.Series("z", z), pl.Series("p_gain_holm", holm)).sort("z")
    head = ("| forbidden | skill | free | restricted | change [95 %] | z | Holm p (gain) "
            "| verdict |")
    print(head)
    print("|---|---|---|---|---|---|---|---|")
    for r in out.iter_rows(named=True):
        verdict = "misvalued" if r["p_gain_holm"] < 0.05 else (
            "costs" if r["p_holm"] < 0.05 and r["difference"] < 0 else "no significant gain")
        print(f"| {r['forbid']} | {r['skill']} | {r['baseline_value']:.1%} | "
              f"{r['variant_value']:.1%} | {100 * r['difference']:+.1f} "
              f"[{100 * r['lo']:+.1f}, {100 * r['hi']:+.1f}] | {r['z']:+.2f} | "
              f"{r['p_gain_holm']:.3g} | {verdict} |")


if __name__ == "__main__":
    main()

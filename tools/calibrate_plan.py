"""Calibrate `sim plan` by simulation (issue 44): the power a planned run really has
under the report's Holm correction, against the power the plan promised.

Usage: .venv/bin/python tools/calibrate_plan.py [--tries 1000] [--power 0.8]
           [--alpha 0.05] [--seed 44]

For each scenario (a pilot's discordance d, the difference to detect, the size of the
Holm family the report corrects: 8 tests for one variant, 40 for the nightly's five
variants; sim.analysis.plan.family_size) the tool plans the run as `sim plan` does
(sim.analysis.plan.mcnemar_matches at alpha / family), then simulates it
(sim.analysis.plan.holm_power: the one test with the difference among family − 1
without, exact McNemar tests, Holm over all, as the report) and prints the measured
power beside the promised one. The row "uncorrected plan" sizes the test at alpha
alone, as `sim plan` did before issue 44, and measures it under the same Holm
correction. Target: measured within 5 points of the promise.
"""

from __future__ import annotations

import argparse

import numpy as np

from sim.analysis.plan import holm_power, mcnemar_matches

SCENARIOS = [  # (discordance, detect, family)
    (0.20, 0.05, 8), (0.35, 0.03, 8), (0.35, 0.03, 40), (0.45, 0.02, 40), (0.10, 0.03, 40)]


def calibrate(tries: int, power: float, alpha: float, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for d, detect, family in SCENARIOS:
        for plan_kind, level in (("Holm plan", alpha / family), ("uncorrected plan", alpha)):
            n = mcnemar_matches(d, detect, level, power)
            rows.append({"discordance": d, "detect": detect, "family": family,
                         "plan": plan_kind, "matches": n, "promised": power,
                         "measured": holm_power(rng, n, d, detect, family, alpha, tries),
                         "tries": tries})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tries", type=int, default=1000)
    ap.add_argument("--power", type=float, default=0.8)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=44)
    a = ap.parse_args()
    print(f"plan calibration: promised power {a.power:g}, alpha {a.alpha:g}, Holm over the "
          f"family, {a.tries} tries per row (seed {a.seed})")
    print(f"{'d':>5} {'detect':>6} {'family':>6} {'plan':<17} {'matches':>8} "
          f"{'promised':>8} {'measured':>8}")
    for r in calibrate(a.tries, a.power, a.alpha, a.seed):
        print(f"{r['discordance']:>5.2f} {r['detect']:>6.2f} {r['family']:>6} "
              f"{r['plan']:<17} {r['matches']:>8,} {r['promised']:>8.1%} "
              f"{r['measured']:>8.1%}")


if __name__ == "__main__":
    main()

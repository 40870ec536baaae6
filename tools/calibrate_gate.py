"""Calibrate the regression gate by simulation (issue 44): how often it says PASS,
FAIL and INCONCLUSIVE on victory mixes whose truth is known.

Usage: .venv/bin/python tools/calibrate_gate.py [--tries 400] [--margin 0.02]
           [--budget 64000] [--first 2000] [--block 2000] [--variants 6]
           [--pairing 0.115] [--seed 44]

Each try draws two runs of `--variants` variants (the nightly's six) from a realistic
victory mix (conquest / science / dominance / turn limit = 30 / 25 / 16 / 29 %) with
sim.analysis.gate.simulated_runs, and runs the gate's own sequential decision
(sim.analysis.gate.sequence_verdict: the same bounds and verdicts as `sim report
--against`) at the looks first, first + block, ... up to the budget. Scenarios:
- A/A paired: the same mix, matches that do not replay identically: match i of both
  runs agrees only as often as `--pairing` says (measured from real paired runs of a
  one-point nudge, docs/statistics.md);
- A/A independent: the same mix, runs that share no matches (unpaired);
- planted 1.5 x margin and 2 x margin: one variant's conquest share moved to the turn
  limit by that much (the two largest shares: the hardest to tell apart).
Targets: A/A PASS >= 95 %; planted 1.5 x margin FAIL >= 90 %; planted 2 x margin PASS
<= 5 %. Prints one row per scenario with the rates, exit statuses and where the
sequence stopped (matches per variant in each run).
"""

from __future__ import annotations

import argparse

import numpy as np

from sim.analysis.gate import EXIT, INCONCLUSIVE, sequence_verdict, simulated_runs

MIX = {"conquest": 0.30, "science": 0.25, "dominance": 0.16, "turn_limit": 0.29}


def scenarios(margin: float, variants: int, pairing: float) -> list[tuple[str, np.ndarray,
                                                                           float, str]]:
    """(name, the now-run's mix per variant, pairing, what it must show)."""
    base = np.tile(np.array(list(MIX.values())), (variants, 1))

    def planted(times: float) -> np.ndarray:
        mix = base.copy()
        mix[0, 0] -= times * margin      # conquest ...
        mix[0, 3] += times * margin      # ... to the turn limit
        return mix

    return [("A/A paired", base, pairing, "PASS >= 95 %"),
            ("A/A independent", base, 0.0, "PASS >= 95 %"),
            ("planted 1.5 x margin", planted(1.5), pairing, "FAIL >= 90 %"),
            ("planted 2 x margin", planted(2.0), pairing, "PASS <= 5 %")]


def calibrate(tries: int, margin: float, budget: int, first: int, block: int,
              variants: int, pairing: float, seed: int) -> list[dict]:
    looks = [*range(first, budget, block), budget]
    rng = np.random.default_rng(seed)
    rows = []
    for name, now_mix, pair, target in scenarios(margin, variants, pairing):
        base = np.tile(np.array(list(MIX.values())), (variants, 1))
        counts = {"PASS": 0, "FAIL": 0, INCONCLUSIVE: 0}
        stops = []
        for _ in range(tries):
            now, before = simulated_runs(rng, base, now_mix, budget, pair)
            verdict, stopped = sequence_verdict(now, before, margin, looks)
            counts[verdict] += 1
            stops.append(stopped)
        rows.append({"scenario": name, "target": target, "tries": tries,
                     **{k: 100.0 * v / tries for k, v in counts.items()},
                     "median_stop": int(np.median(stops)),
                     "p90_stop": int(np.percentile(stops, 90))})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tries", type=int, default=400)
    ap.add_argument("--margin", type=float, default=0.02)
    ap.add_argument("--budget", type=int, default=64_000)
    ap.add_argument("--first", type=int, default=2000)
    ap.add_argument("--block", type=int, default=2000)
    ap.add_argument("--variants", type=int, default=6)
    ap.add_argument("--pairing", type=float, default=0.115)
    ap.add_argument("--seed", type=int, default=44)
    a = ap.parse_args()
    rows = calibrate(a.tries, a.margin, a.budget, a.first, a.block, a.variants, a.pairing,
                     a.seed)
    print(f"gate calibration: margin ±{a.margin:g}, {a.variants} variants x 4 shares, "
          f"looks at {a.first} + k x {a.block} up to {a.budget} matches per variant, "
          f"pairing {a.pairing:g}, {a.tries} tries per scenario (seed {a.seed})")
    print(f"exit status: PASS {EXIT['PASS']}, FAIL {EXIT['FAIL']}, "
          f"INCONCLUSIVE {EXIT['INCONCLUSIVE']}")
    print(f"{'scenario':<22} {'target':<14} {'tries':>5} {'PASS':>7} {'FAIL':>7} "
          f"{'INCONCL':>7} {'stop median':>11} {'stop p90':>9}")
    for r in rows:
        print(f"{r['scenario']:<22} {r['target']:<14} {r['tries']:>5} {r['PASS']:>6.1f}% "
              f"{r['FAIL']:>6.1f}% {r[INCONCLUSIVE]:>6.1f}% {r['median_stop']:>11,} "
              f"{r['p90_stop']:>9,}")


if __name__ == "__main__":
    main()

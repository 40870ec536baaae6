"""Seat fairness at 2, 3, 4 and 6 seats (RULES.md D1): sweep, then the fairness table.

    .venv/bin/python tools/seat_fairness.py [--matches N] [--jobs J] [--out runs/fairness]

Runs `experiments/fairness/seats-{2,3,4,6}.toml` (standard length, default tables;
`--matches` overrides their 1,500 matches) with `sim sweep`, then prints each seat's
win rate with its Wilson interval and the chi-square test of equal win rates per seat
count (`sim.analysis.fairness.seat_fairness`). Exit status 1 when any test rejects
equality at p < 0.01.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from sim.analysis.load import load_run
from sim.analysis.seats import FAIR_ALPHA, seat_fairness

ROOT = Path(__file__).resolve().parent.parent
SEATS = (2, 3, 4, 6)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=None)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", default=str(ROOT / "runs" / "fairness"))
    args = parser.parse_args()
    unfair = False
    for n in SEATS:
        experiment = ROOT / "experiments" / "fairness" / f"seats-{n}.toml"
        with tempfile.TemporaryDirectory() as tmp:
            if args.matches:
                text = experiment.read_text().replace("matches = 1500",
                                                      f"matches = {args.matches}")
                text = text.replace('tables = "../../tables/default.toml"',
                                    f'tables = "{ROOT / "tables" / "default.toml"}"')
                experiment = Path(tmp) / experiment.name
                experiment.write_text(text)
            out = Path(args.out) / f"seats-{n}"
            subprocess.run([sys.executable, "-m", "sim.cli", "sweep", str(experiment), "--out",
                            str(out), "--jobs", str(args.jobs), "--replace-stale", "--quiet"],
                           check=True)
        run = load_run(out)
        table = seat_fairness(run.matches, run.seats)
        p = table.get_column("p_value")[0]
        decided = table.get_column("decided")[0]
        rates = " / ".join(f"{100 * r['rate']:.1f} [{100 * r['lo']:.1f}, {100 * r['hi']:.1f}]"
                           for r in table.iter_rows(named=True))
        verdict = "fair" if p >= FAIR_ALPHA else "UNFAIR"
        print(f"{n} seats, {decided} decided matches: win % by seat {rates}; "
              f"chi2 = {table.get_column('chi2')[0]:.2f}, p = {p:.3g} ({verdict})")
        unfair |= p < FAIR_ALPHA
    return 1 if unfair else 0


if __name__ == "__main__":
    sys.exit(main())

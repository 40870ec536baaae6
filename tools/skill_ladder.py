"""The skill ladder (RULES.md D11): seat 0's win share per variant of a sweep's run.

    .venv/bin/python tools/skill_ladder.py RUN [RUN ...]

For each run folder (a sweep of experiments/lookahead/skill1.toml or skill2.toml, or
any sweep whose variants give seat 0 a `seat_ai` skill) prints, per variant, seat 0's
skill, its wins by victory type and its win share with the Wilson 95 % interval (the
par of a seat is 1 / seats).
"""

from __future__ import annotations

import argparse
import sys

import polars as pl

from sim.analysis.load import load_run
from sim.analysis.stats import wilson


def ladder(run_dir: str) -> list[str]:
    """One line per variant of the run: seat 0's skill, wins and share."""
    run = load_run(run_dir)
    seats = run.seats.filter(pl.col("seat") == 0)
    matches = run.matches
    lines = []
    for variant in matches.get_column("variant").unique(maintain_order=True).to_list():
        m = matches.filter(pl.col("variant") == variant)
        n = m.height
        won = m.filter(pl.col("winner") == 0)
        k = won.height
        kinds = won.group_by("victory").len().sort("victory")
        by_kind = ", ".join(f"{r['victory']} {r['len']}" for r in kinds.iter_rows(named=True))
        skill = seats.filter(pl.col("variant") == variant).get_column("skill")
        lo, hi = wilson(k, n)
        lines.append(f"{run_dir} {variant}: seat 0 at skill {skill.max()} wins {k} of {n} = "
                     f"{100 * k / n:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}] ({by_kind})")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+")
    args = parser.parse_args()
    for run_dir in args.runs:
        for line in ladder(run_dir):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The share of seats out of the match before a turn (issue 42's early defence), per
variant of a run, from its seats table.

    .venv/bin/python tools/early_exits.py RUN [--before 20]

Prints, per variant: seats, seats eliminated before turn `--before` (default 20), their
share with its Wilson 95 % interval. E.g. the baseline of `sim sweep
experiments/truces/city-hp.toml` (1,000 standard 4-seat matches).
"""

from __future__ import annotations

import argparse

import polars as pl

from sim.analysis.load import load_run
from sim.analysis.stats import wilson


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--before", type=int, default=20)
    args = parser.parse_args()
    seats = load_run(args.run).seats
    table = (seats.group_by("variant", maintain_order=True)
             .agg(pl.len().alias("seats"),
                  (pl.col("eliminated_turn") < args.before).sum().alias("out"))
             .sort("variant"))
    for row in table.iter_rows(named=True):
        lo, hi = wilson(int(row["out"]), int(row["seats"]))
        print(f"{row['variant']}: {row['out']} of {row['seats']} seats out before turn "
              f"{args.before}: {row['out'] / row['seats']:.1%} [{lo:.1%}, {hi:.1%}]")


if __name__ == "__main__":
    main()

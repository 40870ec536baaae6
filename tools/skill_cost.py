"""What a skill-1 budget costs: every seat at skill 1 under `[ai.lookahead]` overrides,
against every seat at skill 0, in one run.

    .venv/bin/python tools/skill_cost.py [--matches N] [BUDGET ...]

A BUDGET is comma-separated `key=value` overrides of `[ai.lookahead]` (for example
`horizon_pct=20,candidates=4`); "" is the tables' own. Each setting plays standard 4-seat
matches 0..N-1 of one seed on the default tables, the settings taking turns match by
match so a busy machine slows each alike, and prints CPU seconds per match and the
ratio to skill 0 (`sim bench ai` gives the same ratio for the tables' own budget).
"""

from __future__ import annotations

import argparse
import time

from sim.engine.match import play_match
from sim.rules.tables import load_tables

SEED = 20260101


def budget_overrides(text: str) -> dict[str, int | bool]:
    """`horizon_pct=20,city_candidate=true` -> {"ai.lookahead.horizon_pct": 20, ...}: a number, or
    true / false for a flag."""
    pairs = [kv.split("=", 1) for kv in text.split(",") if kv]
    flags = {"true": True, "false": False}
    return {f"ai.lookahead.{k.strip()}": flags[v.strip()] if v.strip() in flags else int(v)
            for k, v in pairs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=20)
    parser.add_argument("budgets", nargs="*", default=[""])
    args = parser.parse_args()
    cases = [("skill 0", load_tables(), None)]
    cases += [(b or "skill 1, the tables' budget", load_tables(overrides=budget_overrides(b)),
               [{"skill": 1}] * 4) for b in args.budgets]
    for _name, tables, seat_ai in cases:
        play_match(tables, SEED, seat_ai=seat_ai)  # compile or load outside the timing
    seconds = [0.0] * len(cases)
    for i in range(args.matches):
        for k, (_name, tables, seat_ai) in enumerate(cases):
            t0 = time.process_time()
            play_match(tables, SEED, i, seat_ai=seat_ai)
            seconds[k] += time.process_time() - t0
    for k, (name, _tables, _seat_ai) in enumerate(cases):
        print(f"{name:<40} {seconds[k] / args.matches:.4f} s/match  "
              f"cost ratio {seconds[k] / seconds[0]:.2f}")


if __name__ == "__main__":
    main()

"""A small search over Crown's skill-1 weights (`ai.*` in tables/crown/default.toml,
K14), issue 48 item 4: the ladder wants skill 1 to beat skill 0 at every team size.

Every point of a grid over the weights plays skill 1 against skill 0 at each team
size of `--sizes`, `--matches` matches in each side order (skill 1 as side A, then as
side B) on common seeds (L7: match i of every point is the same rolls), and scores
the point by its worst team size's head-to-head share (skill 1's share of the
decided matches). Prints every point's shares, best last. The seed is not the
ladder's (experiments/ladder/crown*.toml), so the ladder measures the chosen weights
on matches the search never saw.

    PYTHONPATH=. .venv/bin/python tools/crown_ai_search.py --matches 300 \\
        --grid ai.reply_pct=50,100 --grid ai.follow_pct=25,50,100
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time

from sim.engine.crown import play_crown_match
from sim.rules.crown import NO_WINNER, SIDE_A, SIDE_B, load_crown_tables
from sim.rules.tables import TablesError, parse_overrides


def head_to_head(overrides: dict, size: int, matches: int, seed: int) -> tuple[int, int]:
    """(skill 1's wins, decided matches) against skill 0 at `size` v `size`, both side
    orders, matches 0..matches-1 of root `seed`."""
    tables = load_crown_tables(overrides={**overrides, "match.team_sizes": [size, size]})
    wins = decided = 0
    for i in range(matches):
        for skills, side in (((1, 0), SIDE_A), ((0, 1), SIDE_B)):
            winner = play_crown_match(tables, seed, i, skills).winner
            if winner != NO_WINNER:
                decided += 1
                wins += winner == side
    return wins, decided


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--matches", type=int, default=300, help="matches per side order")
    ap.add_argument("--seed", type=int, default=4848, help="root seed")
    ap.add_argument("--sizes", default="1,3", help="team sizes, each played n v n")
    ap.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2",
                    help="a weight and its values (repeatable)")
    args = ap.parse_args(argv)
    axes = []
    for item in args.grid:
        key, _, values = item.partition("=")
        axes.append([(key, v) for v in values.split(",")])
    sizes = [int(s) for s in args.sizes.split(",")]
    results = []
    for point in itertools.product(*axes):
        try:
            overrides = parse_overrides([f"{k}={v}" for k, v in point])
            load_crown_tables(overrides=overrides)
        except TablesError as exc:
            print("\n".join(exc.errors), file=sys.stderr)
            return 2
        t0 = time.perf_counter()
        shares = []
        for size in sizes:
            wins, decided = head_to_head(overrides, size, args.matches, args.seed)
            shares.append(wins / max(decided, 1))
        label = " ".join(f"{k}={v}" for k, v in point) or "(tables as they are)"
        print(f"{label}: " + "  ".join(f"{s}v{s} {100 * x:.1f} %" for s, x in
                                         zip(sizes, shares, strict=True))
              + f"  ({time.perf_counter() - t0:.0f} s)", flush=True)
        results.append((min(shares), label))
    best = max(results)
    print(f"best (worst team size's share): {best[1]}: {100 * best[0]:.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())

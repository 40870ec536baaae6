"""Victory-mix diagnostic: play N standard matches and print how they ended.

Usage: .venv/bin/python tools/victory_mix.py N [key.path=value ...]

Prints victory shares with mean end turns, event counts per match, wins per
(victory, personality) and the peak dominance counters reached. Used to tune the
default tables (docs/balance.md).
"""

from __future__ import annotations

import collections
import sys

from sim.engine.match import outcome, play_match
from sim.rules.tables import load_tables, parse_overrides


def main(argv: list[str]) -> None:
    n = int(argv[1]) if len(argv) > 1 else 200
    tables = load_tables(overrides=parse_overrides(argv[2:]))
    kinds: collections.Counter = collections.Counter()
    victories: collections.Counter = collections.Counter()
    by_personality: collections.Counter = collections.Counter()
    peak_dominance: collections.Counter = collections.Counter()
    ends = collections.defaultdict(list)
    cities = 0
    for seed in range(5000, 5000 + n):
        state, board, log = play_match(tables, seed)
        result = outcome(state, tables, board, log, seed, 0)
        kinds.update(e["kind"] for e in result["events"])
        victories[result["victory"]] += 1
        ends[result["victory"]].append(result["end_turn"])
        if result["winner"] is not None:
            winner = result["seats"][result["winner"]]
            by_personality[(result["victory"], winner["personality"])] += 1
        cities += sum(s["cities"] for s in result["seats"])
        peak_dominance.update(s["peak_dominance"] for s in result["seats"])
    print({k: f"{v / n:.0%} (end {sum(ends[k]) / len(ends[k]):.0f})"
           for k, v in victories.items()})
    print({k: round(v / n, 2) for k, v in sorted(kinds.items())})
    print(sorted(by_personality.items()))
    print("cities/match", cities / n, "peak dominance", sorted(peak_dominance.items()))


if __name__ == "__main__":
    main(sys.argv)

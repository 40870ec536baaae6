"""Cold and warm start and match speed of the engine for several versions of the code,
in one run.

    .venv/bin/python tools/start_times.py [REF ...] [--rounds N] [--matches M]

For each git REF (default: HEAD) a detached worktree is made, and a fresh process
imports the package from it and plays one standard match on the default tables: first
with an empty numba cache (cold: numba compiles the engine), then again with the cache
that run filled (warm: numba loads it), then (with --matches M) plays M more standard
matches in that warm process: matches per second. The refs take turns, round by
round, so a machine busy with other work slows each alike. Prints the figures per ref
and round, and the median of each.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIRST_MATCH = ("import sys, time; t0 = time.perf_counter(); "
               "from sim.rules.tables import load_tables; "
               "from sim.engine.match import play_match; "
               "tables = load_tables(); play_match(tables, 1); "
               "print(time.perf_counter() - t0); t0 = time.perf_counter(); "
               "n = int(sys.argv[1]); [play_match(tables, 20260101, i) for i in range(n)]; "
               "print(n / (time.perf_counter() - t0) if n else 0.0)")


def first_match_seconds(tree: Path, cache: Path, matches: int = 0) -> tuple[float, float]:
    """(seconds from a fresh interpreter's start to its first match result, then
    matches per second of `matches` more), the package imported from `tree` and
    numba's cache in `cache`."""
    env = {**os.environ, "SIM_CACHE_DIR": str(cache), "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", FIRST_MATCH, str(matches)], env=env,
                         cwd=tree, capture_output=True, text=True, check=True)
    first, rate = out.stdout.strip().splitlines()[-2:]
    return float(first), float(rate)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("refs", nargs="*", default=["HEAD"])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--matches", type=int, default=0,
                        help="standard matches to time in the warm process")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trees = {}
        for k, ref in enumerate(args.refs):
            trees[ref] = Path(tmp) / f"tree{k}"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach",
                            str(trees[ref]), ref], check=True)
        times: dict[str, dict[str, list[float]]] = {r: {"cold": [], "warm": [], "rate": []}
                                                    for r in args.refs}
        try:
            for round_ in range(args.rounds):
                for ref, tree in trees.items():
                    cache = Path(tmp) / f"cache-{ref.replace('/', '_')}-{round_}"
                    cold, _ = first_match_seconds(tree, cache)
                    warm, rate = first_match_seconds(tree, cache, args.matches)
                    times[ref]["cold"].append(cold)
                    times[ref]["warm"].append(warm)
                    times[ref]["rate"].append(rate)
                    print(f"round {round_ + 1} {ref}: cold {cold:.1f} s, warm {warm:.2f} s"
                          + (f", {rate:.1f} matches/s" if args.matches else ""), flush=True)
        finally:
            for tree in trees.values():
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                str(tree)], check=False)
    for ref, t in times.items():
        print(f"{ref}: cold start median {statistics.median(t['cold']):.1f} s, "
              f"warm start median {statistics.median(t['warm']):.2f} s"
              + (f", {statistics.median(t['rate']):.1f} matches/s" if args.matches else "")
              + f" ({len(t['cold'])} rounds)")


if __name__ == "__main__":
    main()

"""Cold and warm start of the engine for several versions of the code, in one run.

    .venv/bin/python tools/start_times.py [REF ...] [--rounds N]

For each git REF (default: HEAD) a detached worktree is made, and a fresh process
imports the package from it and plays one standard match on the default tables: first
with an empty numba cache (cold: numba compiles the engine), then again with the cache
that run filled (warm: numba loads it). The refs take turns, round by round, so a
machine busy with other work slows each alike. Prints seconds per ref and round, and
the median of each.
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
FIRST_MATCH = ("import time; t0 = time.perf_counter(); "
               "from sim.rules.tables import load_tables; "
               "from sim.engine.match import play_match; "
               "play_match(load_tables(), 1); print(time.perf_counter() - t0)")


def first_match_seconds(tree: Path, cache: Path) -> float:
    """Seconds from a fresh interpreter's start to its first match result, the package
    imported from `tree` and numba's cache in `cache`."""
    env = {**os.environ, "SIM_CACHE_DIR": str(cache), "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", FIRST_MATCH], env=env, cwd=tree,
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("refs", nargs="*", default=["HEAD"])
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trees = {}
        for k, ref in enumerate(args.refs):
            trees[ref] = Path(tmp) / f"tree{k}"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach",
                            str(trees[ref]), ref], check=True)
        times: dict[str, dict[str, list[float]]] = {r: {"cold": [], "warm": []}
                                                    for r in args.refs}
        try:
            for round_ in range(args.rounds):
                for ref, tree in trees.items():
                    cache = Path(tmp) / f"cache-{ref.replace('/', '_')}-{round_}"
                    cold = first_match_seconds(tree, cache)
                    warm = first_match_seconds(tree, cache)
                    times[ref]["cold"].append(cold)
                    times[ref]["warm"].append(warm)
                    print(f"round {round_ + 1} {ref}: cold {cold:.1f} s, warm {warm:.2f} s",
                          flush=True)
        finally:
            for tree in trees.values():
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                str(tree)], check=False)
    for ref, t in times.items():
        print(f"{ref}: cold start median {statistics.median(t['cold']):.1f} s, "
              f"warm start median {statistics.median(t['warm']):.2f} s "
              f"({len(t['cold'])} rounds)")


if __name__ == "__main__":
    main()

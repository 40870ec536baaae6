"""Calibrate the skill interaction test (issue 43) on real matches: how often it fires
with no interaction, and with a planted one.

Usage: .venv/bin/python tools/calibrate_interaction.py [--tries 200] [--matches 150]
           [--planted-tries 20] [--planted-matches 300] [--seats 4] [--length standard]
           [--jobs 2] [--out runs/calibrate-interaction] [--seed 43]

Each try is one report's question "does this change's effect on each victory share
depend on the level of play?": four arms (the change and the baseline's tables, at
level a and at level b) on the same `--matches` seeds, the interaction test of
sim.analysis.robustness (paired t on the per-match contrast) for the four victory
types, Holm over the four. The try fires when any adjusted p is below 0.05. Tries use
disjoint blocks of matches of one sweep, so they are independent.

- No interaction: the change is `techs.prosperity.cost` 500 -> 700 (a real effect:
  science -13 points at skill 0) and both levels are skill 0, on two disjoint blocks
  of seeds (level a on block 2k, level b on block 2k + 1, matched by position). The
  effects are equal in truth, so the test must fire in at most 5 % of tries. The old
  flag of issue 16 ("sign flips" or "significance changes": each level's own Holm
  verdict compared) is scored on the same tries.
- Planted: the change is `ai.lookahead.horizon_pct` 10 -> 0, which only a skill-1 seat
  reads (at 0 it plays as skill 0, match for match): nothing at skill 0, the
  lookahead's whole effect at skill 1. Levels: skill 0 and skill 1 on the same seeds.
  Its true interaction is the lookahead's effect on the mix, which today is small.
- Planted of a known size (`--plant 5,10,15`, points): the same tries with, in the
  change's arm at skill 1 alone, that many points of the matches (a seeded draw) moved
  from a conquest to a turn-limit win: an interaction of exactly that size on both
  types, in real matches' noise. The test must fire on the large ones.

Prints, per scenario, the tries, how many fired, the rate with its Wilson 95 %
interval, and per victory type how often its adjusted p was below 0.05.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

from sim.analysis._frames import VICTORIES
from sim.analysis.load import read_table
from sim.analysis.paired import paired_victory_tests
from sim.analysis.robustness import interaction_test
from sim.analysis.stats import holm, wilson
from sim.rules.tables import REPO_ROOT
from sim.runner.experiments import load_experiment
from sim.runner.sweep import run_sweep

ALPHA = 0.05
NULL_CHANGE = {"techs.prosperity.cost": 700}
PLANTED_CHANGE = {"ai.lookahead.horizon_pct": 0}


def _toml_value(value) -> str:
    return repr(value) if not isinstance(value, str) else f'"{value}"'


def _sweep(name: str, matches: int, seats: int, length: str, seed: int, change: dict,
           skills: list[int] | None, out: Path, jobs: int) -> pl.DataFrame:
    """Play baseline and `change` (at each of `skills`, or skill 0) for `matches`
    matches into out/name; its matches table."""
    sets = ", ".join(f'"{k}" = {_toml_value(v)}' for k, v in change.items())
    text = (f'name = "{name}"\ntables = "{REPO_ROOT / "tables/default.toml"}"\n'
            f"root_seed = {seed}\nmatches = {matches}\nseats = {seats}\n"
            f'length = "{length}"\nchunk_size = 50\nbaseline = "baseline"\n' +
            (f"skills = {skills}\n" if skills else "") +
            '[[variants]]\nname = "baseline"\n'
            f'[[variants]]\nname = "change"\nset = {{ {sets} }}\n')
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.toml"
        path.write_text(text, encoding="utf-8")
        experiment = load_experiment(path)
        folder = out / name
        run_sweep(experiment, folder, jobs, progress=True, replace_stale=True)
    return read_table(folder, "matches")


def _block(matches: pl.DataFrame, variant: str, start: int, n: int, name: str) -> pl.DataFrame:
    """Matches [start, start + n) of a variant, re-indexed from 0 and renamed."""
    return (matches.filter((pl.col("variant") == variant) & (pl.col("match_index") >= start)
                           & (pl.col("match_index") < start + n))
            .with_columns((pl.col("match_index") - start).alias("match_index"),
                          pl.lit(name).alias("variant")))


def _try(frame: pl.DataFrame) -> tuple[list[float], bool]:
    """(Holm-adjusted interaction p per victory type, whether the old flag fires) of one
    try's four arms named ca, ba, cb, bb."""
    ps = [interaction_test(frame, ("ca", "ba", "cb", "bb"), v)["p_value"] for v in VICTORIES]
    adjusted = holm(ps)
    changed = {}
    for level in ("a", "b"):  # the old flag: each level its own Holm family, compared
        pair = frame.filter(pl.col("variant").is_in([f"c{level}", f"b{level}"]))
        tests = paired_victory_tests(pair, f"b{level}")
        p = holm(tests["p_value"].to_list())
        changed[level] = {m: (pv < ALPHA, d > 0) for m, pv, d in
                          zip(tests["metric"], p, tests["difference"], strict=True)}
    old = False
    for m in set(changed["a"]) | set(changed["b"]):
        sa, da = changed["a"].get(m, (False, False))
        sb, db = changed["b"].get(m, (False, False))
        old |= (sa != sb) or (sa and sb and da != db)
    return [1.0 if p != p else p for p in adjusted], old


def _plant(frame: pl.DataFrame, points: float, rng: np.random.Generator) -> pl.DataFrame:
    """The try with `points` % of its matches moved from conquest to turn limit in the
    change's arm at level b ("cb") alone (matches drawn among its conquest wins)."""
    cb = frame.filter(pl.col("variant") == "cb")
    n = cb.height
    wins = cb.filter(pl.col("victory") == "conquest")["match_index"].to_numpy()
    moved = rng.choice(wins, size=min(round(points / 100 * n), wins.size), replace=False)
    return frame.with_columns(
        pl.when((pl.col("variant") == "cb") & pl.col("match_index").is_in(moved.tolist()))
        .then(pl.lit("turn_limit")).otherwise(pl.col("victory")).alias("victory"))


def _report(name: str, results: list[tuple[list[float], bool]], old: bool) -> None:
    fired = sum(any(p < ALPHA for p in ps) for ps, _ in results)
    n = len(results)
    lo, hi = wilson(fired, n)
    by_type = ", ".join(f"{v} {sum(ps[i] < ALPHA for ps, _ in results)}"
                        for i, v in enumerate(VICTORIES))
    print(f"{name}: the interaction test fired in {fired} of {n} tries = "
          f"{100 * fired / n:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}] (by type: {by_type})")
    if old:
        flagged = sum(f for _, f in results)
        lo, hi = wilson(flagged, n)
        print(f"{name}: the old flag fired in {flagged} of {n} tries = "
              f"{100 * flagged / n:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}]")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=200)
    parser.add_argument("--matches", type=int, default=150)
    parser.add_argument("--planted-tries", type=int, default=20)
    parser.add_argument("--planted-matches", type=int, default=300)
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--length", default="standard")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "runs" / "calibrate-interaction")
    parser.add_argument("--seed", type=int, default=43)
    parser.add_argument("--skip-null", action="store_true")
    parser.add_argument("--skip-planted", action="store_true")
    parser.add_argument("--plant", default="5,10,15",
                        help="sizes (points) of the interactions planted in the planted "
                        "sweep's tries")
    parser.add_argument("--no-play", action="store_true",
                        help="read the run folders under --out as they are; play nothing")
    args = parser.parse_args()
    n = args.matches
    if not args.skip_null:
        m = read_table(args.out / "null", "matches") if args.no_play else \
            _sweep("null", 2 * args.tries * n, args.seats, args.length, args.seed,
                   NULL_CHANGE, None, args.out, args.jobs)
        results = []
        for k in range(args.tries):
            a, b = 2 * k * n, (2 * k + 1) * n
            frame = pl.concat([_block(m, "change", a, n, "ca"), _block(m, "baseline", a, n, "ba"),
                               _block(m, "change", b, n, "cb"), _block(m, "baseline", b, n, "bb")])
            results.append(_try(frame))
        _report(f"no interaction ({args.tries} tries x {n} matches, both levels skill 0)",
                results, old=True)
    if not args.skip_planted:
        n = args.planted_matches
        m = read_table(args.out / "planted", "matches") if args.no_play else \
            _sweep("planted", args.planted_tries * n, args.seats, args.length, args.seed + 1,
                   PLANTED_CHANGE, [0, 1], args.out, args.jobs)
        frames = [pl.concat([_block(m, "change.skill-0", k * n, n, "ca"),
                             _block(m, "baseline.skill-0", k * n, n, "ba"),
                             _block(m, "change.skill-1", k * n, n, "cb"),
                             _block(m, "baseline.skill-1", k * n, n, "bb")])
                  for k in range(args.planted_tries)]
        _report(f"planted (ai.lookahead.horizon_pct 10 -> 0; {args.planted_tries} tries x "
                f"{n} matches, skill 0 and 1)", [_try(f) for f in frames], old=True)
        rng = np.random.default_rng(args.seed)
        for points in (float(p) for p in args.plant.split(",") if p):
            _report(f"planted {points:g} points (conquest -> turn limit at skill 1 only; "
                    f"{args.planted_tries} tries x {n} matches)",
                    [_try(_plant(f, points, rng)) for f in frames], old=True)
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())

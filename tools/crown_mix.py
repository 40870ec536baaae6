"""What a designer asks of Crown (../shared/RULES-crown.md, last section), measured.

Plays `--matches` Crown matches at each team-size pairing (`--sizes`), every player at
`--skill` (or `A,B`: side A's, side B's), on tables/crown/default.toml with `--set`
overrides, and prints:
- side A's and B's win rates and the draws by team size, each with its 95 % Wilson
  interval;
- the first-in-order edge (K05): how often the side whose player acted first in more
  of the match's waves wins;
- each lead type's share of the rolls and its attacks' win rate (K03, K07);
- each score term's share of all points (K10, K11);
- the fault-round leader's conversion (K12, L6): how often the side ahead after the
  fault round wins;
- how often Surge and the lead cycle decide an attack (K07): winning attacks that
  would have lost without the Surge bonus, without the cycle bonus.
The per-match figures beyond the win rates are pooled over every team-size pairing.

    .venv/bin/python tools/crown_mix.py --matches 2000
    .venv/bin/python tools/crown_mix.py --skill 1,0 --sizes 3v3
    .venv/bin/python tools/crown_mix.py --set core.faces.7=booster
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from sim.engine.crown import play_crown_match
from sim.rules.crown import (
    AC_ATTACKS,
    AC_CYCLE,
    AC_SURGE,
    AC_WINS,
    DRAW,
    NO_WINNER,
    SCORE_TERMS,
    SIDE_A,
    SIDE_B,
    WIDGETS,
    CrownTables,
    load_crown_tables,
)
from sim.rules.tables import TablesError, parse_overrides


def share(k: int, n: int) -> str:
    """`k / n` as a percentage with its 95 % Wilson interval."""
    if n == 0:
        return "–"
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    return f"{100 * k / n:5.1f} % [{100 * lo:4.1f}, {100 * hi:4.1f}]"


def parse_sizes(text: str) -> list[tuple[int, int]]:
    """`1v1,3v3,2v3` -> [(1, 1), (3, 3), (2, 3)]."""
    out = []
    for part in text.split(","):
        a, _, b = part.strip().partition("v")
        out.append((int(a), int(b)))
    return out


def crown_options(doc: str, seed: int, seed_help: str, sizes: str) -> argparse.ArgumentParser:
    """The options every Crown measuring tool takes (this one and tools/crown_early.py):
    --matches per pairing, --seed, --sizes (parse_sizes), --skill (every player's, or
    A,B) and --set overrides; the tool adds its own."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--matches", type=int, default=2000, help="matches per team-size pairing")
    ap.add_argument("--seed", type=int, default=seed, help=seed_help)
    ap.add_argument("--sizes", default=sizes, help="team-size pairings, side A's v side B's")
    ap.add_argument("--skill", default="0", help="every player's AI skill, or A,B")
    ap.add_argument("--set", dest="overrides", action="append", default=[],
                    metavar="KEY=VALUE", help="a table override (repeatable)")
    return ap


def crown_setup(ap: argparse.ArgumentParser, argv: list[str] | None
                ) -> tuple[argparse.Namespace, tuple[int, ...], CrownTables, float] | None:
    """The tool's options read from argv (crown_options' and the tool's own), the sides'
    skills (side A's, side B's), tables/crown/default.toml with the --set overrides and
    the perf_counter start, the run's header printed; None (the tables' reasons printed
    to stderr) when the tables refuse an override."""
    args = ap.parse_args(argv)
    skills = tuple(int(s) for s in args.skill.split(","))
    skills = skills * 2 if len(skills) == 1 else skills
    try:
        base = load_crown_tables(overrides=parse_overrides(args.overrides))
    except TablesError as exc:
        print("\n".join(exc.errors), file=sys.stderr)
        return None
    started = time.perf_counter()
    print(f"Crown: {args.matches} matches per pairing, seed {args.seed}, skills A {skills[0]} "
          f"B {skills[1]}, overrides {args.overrides or 'none'}, tables {base.hash}\n")
    return args, skills, base, started


def main(argv: list[str] | None = None) -> int:
    setup = crown_setup(crown_options(__doc__, 2026, "root seed", "1v1,2v2,3v3,4v4,2v3,3v4"),
                        argv)
    if setup is None:
        return 2
    args, skills, base, started = setup
    print("| teams A v B | side A wins | side B wins | draws |")
    print("|---|---|---|---|")
    first_edge = [0, 0]           # (matches where one side was first more often, it won)
    fault = [0, 0]                # (matches with a fault-round leader, it won)
    rolls = np.zeros(len(WIDGETS), dtype=np.int64)
    attacks = np.zeros((len(WIDGETS), 4), dtype=np.int64)
    terms = np.zeros(len(SCORE_TERMS), dtype=np.int64)
    decided_by = np.zeros(DRAW + 1, dtype=np.int64)
    for a_size, b_size in parse_sizes(args.sizes):
        tables = base.with_overrides({"match.team_sizes": [a_size, b_size]})
        wins = [0, 0]
        draws = 0
        for i in range(args.matches):
            out = play_crown_match(tables, args.seed, i, skills)
            if out.winner == NO_WINNER:
                draws += 1
            else:
                wins[out.winner] += 1
            decided_by[out.decided_by] += 1
            f_a, f_b = out.first_counts
            if f_a != f_b and out.winner != NO_WINNER:
                first_edge[0] += 1
                first_edge[1] += (SIDE_A if f_a > f_b else SIDE_B) == out.winner
            if out.fault_leader >= 0:
                fault[0] += 1
                fault[1] += out.fault_leader == out.winner
            rolls += out.lead_counts.sum(axis=0)
            attacks += out.attack_counts.sum(axis=0)
            terms += out.terms.sum(axis=0)
        n = args.matches
        print(f"| {a_size} v {b_size} | {share(wins[0], n)} | {share(wins[1], n)} | "
              f"{share(draws, n)} |")
    total = int(decided_by.sum())
    print(f"\ndecided on points {share(int(decided_by[0]), total)}, zones "
          f"{share(int(decided_by[1]), total)}, majorities {share(int(decided_by[2]), total)}")
    print(f"\nfirst-in-order edge (K05): the side first in more waves wins "
          f"{share(first_edge[1], first_edge[0])} of {first_edge[0]} decided matches")
    print(f"fault-round leader's conversion (L6): {share(fault[1], fault[0])} of "
          f"{fault[0]} matches with a leader after the fault round")
    wins_all = int(attacks[:, AC_WINS].sum())
    print(f"attacks decided by Surge (K07): {share(int(attacks[:, AC_SURGE].sum()), wins_all)}"
          f" of {wins_all} winning attacks; by the lead cycle: "
          f"{share(int(attacks[:, AC_CYCLE].sum()), wins_all)}")
    print("\n| lead type | share of rolls | attacks | attacks won |")
    print("|---|---|---|---|")
    for w, name in enumerate(WIDGETS):
        print(f"| {name} | {share(int(rolls[w]), int(rolls.sum()))} | "
              f"{int(attacks[w, AC_ATTACKS])} | "
              f"{share(int(attacks[w, AC_WINS]), int(attacks[w, AC_ATTACKS]))} |")
    print("\n| score term | share of all points |")
    print("|---|---|")
    points = int(terms.sum())
    for k, name in enumerate(SCORE_TERMS):
        print(f"| {name} | {100 * terms[k] / max(points, 1):5.1f} % |")
    print(f"\n({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

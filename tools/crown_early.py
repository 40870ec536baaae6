"""How early a Crown match is decided (docs/crown.md, "What a designer asks"), measured.

The demo's baseline showed one side holding no zone after round 2 in a third of its
matches. This plays `--matches` matches at each team-size pairing (`--sizes`), every
player at `--skill` (or `A,B`), on tables/crown/default.toml with `--set` overrides,
and prints per pairing, for rounds 1 to `--upto`, from the per-round rows (ROUND_FIELDS:
each side's total and zones held after the round's scoring):
- wiped: a side holds no zone after round r (L4: each side starts with its home);
- leader wins: of the matches with a side ahead on points after round r, how often
  that side wins (K13);
- decided: the match's winner is ahead after round r and after every later round (it
  never trails or is level again), of all matches;
- and how often a side holding no zone after round 2 still wins.
Each share with its 95 % Wilson interval. It changes no rule and no table value.

    .venv/bin/python tools/crown_early.py --matches 2000
    .venv/bin/python tools/crown_early.py --skill 1 --sizes 3v3
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from sim.engine.crown import play_crown_match
from sim.rules.crown import NO_WINNER, ROUND_FIELDS, SIDES, load_crown_tables
from sim.rules.tables import TablesError, parse_overrides

TOTAL = [ROUND_FIELDS.index(f"total_{s.lower()}") for s in SIDES]
ZONES = [ROUND_FIELDS.index(f"zones_{s.lower()}") for s in SIDES]


def share(k: int, n: int) -> str:
    """`k / n` as a percentage with its 95 % Wilson interval."""
    if n == 0:
        return "–"
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    return f"{100 * k / n:5.1f} % [{100 * lo:4.1f}, {100 * hi:4.1f}]"


def parse_sizes(text: str) -> list[tuple[int, int]]:
    """`1v1,3v3,2v3` -> [(1, 1), (3, 3), (2, 3)]."""
    return [(int(a), int(b)) for a, _, b in (p.strip().partition("v")
                                             for p in text.split(","))]


def early(rounds: np.ndarray, winner: int, upto: int) -> dict[str, list[int]]:
    """One match's per-round rows (rounds, N_ROUND_FIELDS) read for rounds 1..upto:
    wiped[r] (a side holds no zone after round r+1), led[r] (a side is ahead on
    points), leader_won[r], decided[r] (the winner ahead after round r+1 and every
    later round)."""
    totals = rounds[:, TOTAL]
    zones = rounds[:, ZONES]
    out: dict[str, list[int]] = {k: [] for k in ("wiped", "led", "leader_won", "decided")}
    for r in range(upto):
        lead = totals[r, 0] - totals[r, 1]
        leader = -1 if lead == 0 else (0 if lead > 0 else 1)
        out["wiped"].append(int((zones[r] == 0).any()))
        out["led"].append(int(leader >= 0))
        out["leader_won"].append(int(leader >= 0 and leader == winner))
        ahead = totals[r:, winner] > totals[r:, 1 - winner] if winner != NO_WINNER else [False]
        out["decided"].append(int(np.all(ahead)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--matches", type=int, default=2000, help="matches per team-size pairing")
    ap.add_argument("--seed", type=int, default=20261207,
                    help="root seed (default: experiments/crown/demo.toml's)")
    ap.add_argument("--sizes", default="1v1,2v2,3v3,4v4,2v3",
                    help="team-size pairings, side A's v side B's")
    ap.add_argument("--skill", default="0", help="every player's AI skill, or A,B")
    ap.add_argument("--upto", type=int, default=3, help="rounds read: 1 to this")
    ap.add_argument("--set", dest="overrides", action="append", default=[],
                    metavar="KEY=VALUE", help="a table override (repeatable)")
    args = ap.parse_args(argv)
    skills = tuple(int(s) for s in args.skill.split(","))
    skills = skills * 2 if len(skills) == 1 else skills
    try:
        base = load_crown_tables(overrides=parse_overrides(args.overrides))
    except TablesError as exc:
        print("\n".join(exc.errors), file=sys.stderr)
        return 2
    started = time.perf_counter()
    n = args.matches
    print(f"Crown: {n} matches per pairing, seed {args.seed}, skills A {skills[0]} "
          f"B {skills[1]}, overrides {args.overrides or 'none'}, tables {base.hash}\n")
    found = {}
    for a_size, b_size in parse_sizes(args.sizes):
        tables = base.with_overrides({"match.team_sizes": [a_size, b_size]})
        counts = {k: np.zeros(args.upto, dtype=np.int64)
                  for k in ("wiped", "led", "leader_won", "decided")}
        wiped_won = [0, 0]    # (a side with no zone after round 2, it won)
        for i in range(n):
            out = play_crown_match(tables, args.seed, i, skills)
            got = early(out.rounds, out.winner, args.upto)
            for k in counts:
                counts[k] += got[k]
            if args.upto >= 2 and got["wiped"][1]:
                empty = [s for s in range(len(SIDES)) if out.rounds[1, ZONES[s]] == 0]
                wiped_won[0] += 1
                wiped_won[1] += out.winner in empty
        found[(a_size, b_size)] = counts, wiped_won
    rounds_head = " | ".join(f"round {r + 1}" for r in range(args.upto))
    for title, key in (("a side holds no zone after", "wiped"),
                       ("the leader on points after it wins (of matches with a leader)",
                        "leader_won"),
                       ("decided: the winner ahead after it and every later round", "decided")):
        print(f"\n{title}\n\n| teams A v B | {rounds_head} |")
        print("|---|" + "---|" * args.upto)
        for (a_size, b_size), (counts, _) in found.items():
            denominators = counts["led"] if key == "leader_won" else [n] * args.upto
            cells = " | ".join(share(int(counts[key][r]), int(denominators[r]))
                               for r in range(args.upto))
            print(f"| {a_size} v {b_size} | {cells} |")
    if args.upto >= 2:
        print("\na side holding no zone after round 2 still wins\n\n| teams A v B | wins |")
        print("|---|---|")
        for (a_size, b_size), (_, wiped_won) in found.items():
            print(f"| {a_size} v {b_size} | {share(wiped_won[1], wiped_won[0])} of "
                  f"{wiped_won[0]} |")
    print(f"\n({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

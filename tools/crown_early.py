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

    PYTHONPATH=. .venv/bin/python tools/crown_early.py --matches 2000
    PYTHONPATH=. .venv/bin/python tools/crown_early.py --skill 1 --sizes 3v3
"""

from __future__ import annotations

import time

import numpy as np

from sim.engine.crown import play_crown_match
from sim.rules.crown import NO_WINNER, ROUND_FIELDS, SIDES
from tools.crown_mix import crown_options, crown_setup, parse_sizes, share

TOTAL = [ROUND_FIELDS.index(f"total_{s.lower()}") for s in SIDES]
ZONES = [ROUND_FIELDS.index(f"zones_{s.lower()}") for s in SIDES]


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
    ap = crown_options(__doc__, 20261207, "root seed (default: experiments/crown/demo.toml's)",
                       "1v1,2v2,3v3,4v4,2v3")
    ap.add_argument("--upto", type=int, default=3, help="rounds read: 1 to this")
    setup = crown_setup(ap, argv)
    if setup is None:
        return 2
    args, skills, base, started = setup
    n = args.matches
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

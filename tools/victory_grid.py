"""The victory mix and seat fairness over seat counts and match lengths, in one table.

    .venv/bin/python tools/victory_grid.py [--matches N] [--seats 2,3,4,6]
        [--lengths short,standard,long] [--jobs J] [--root-seed S] [--skill K]
        [--set key.path=value ...]

Plays N matches (default 300) of the default tables, with any `--set` overrides, for
every seat count × length preset, on `--jobs` worker processes (joblib), and prints
one row a cell: the share of each victory type with the mean end turn, the turn
limit's share, and the chi-square p-value of win rate by seat (D1) with each seat's
share of the wins. Matches use root seed 7100 (`--root-seed`: another sample of the
grid) and match indices 0..N-1 in every cell (common random numbers), personalities
rotating with the match index as in a sweep.
`--skill K` plays every seat at AI skill K (D11; default 0).
The balance tables of docs/balance.md come from it.
"""

from __future__ import annotations

import argparse
from collections import Counter

from joblib import Parallel, delayed
from scipy.stats import chisquare

from sim.rules.codes import VICTORY_NAMES

ROOT_SEED = 7100


def _play(overrides: dict, seats: int, length: str, indices: range,
          root_seed: int = ROOT_SEED, skill: int = 0) -> list[tuple]:
    from sim.engine.match import play_match
    from sim.rules.tables import load_tables

    tables = load_tables(overrides=overrides)
    names = tables.model.match.personalities
    out = []
    for i in indices:
        shift = i % len(names)
        order = [names[(s + shift) % len(names)] for s in range(seats)]
        st, _board, _log = play_match(tables, root_seed, i, n_seats=seats, length=length,
                                      personalities=order,
                                      seat_ai=[{"skill": skill}] * seats if skill else None)
        victory = int(st.victory[0])
        out.append((VICTORY_NAMES[victory] if victory >= 0 else None, int(st.winner[0]),
                    int(st.turn[0])))
    return out


def main() -> None:
    from sim.rules.tables import parse_overrides

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=300)
    parser.add_argument("--seats", default="2,3,4,6")
    parser.add_argument("--lengths", default="short,standard,long")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--root-seed", type=int, default=ROOT_SEED)
    parser.add_argument("--skill", type=int, default=0, help="every seat's AI skill (D11)")
    parser.add_argument("--set", action="append", default=[])
    args = parser.parse_args()
    overrides = parse_overrides(args.set)
    chunk = max(args.matches // (4 * args.jobs), 10)
    kinds = ("conquest", "science", "dominance", "turn_limit")
    print(f"{'seats':>5} {'length':>8} | " + " | ".join(f"{k:>15}" for k in kinds)
          + " | seat p (wins % by seat)")
    for seats in (int(s) for s in args.seats.split(",")):
        for length in args.lengths.split(","):
            parts = [range(a, min(a + chunk, args.matches))
                     for a in range(0, args.matches, chunk)]
            play = delayed(_play)
            rows = [r for part in Parallel(n_jobs=args.jobs)(
                play(overrides, seats, length, p, args.root_seed, args.skill) for p in parts)
                for r in part]
            mix = Counter(v for v, _w, _t in rows)
            ends: dict[str, list[int]] = {}
            for v, _w, t in rows:
                ends.setdefault(v, []).append(t)
            wins = Counter(w for _v, w, _t in rows if w >= 0)
            p = chisquare([wins[s] for s in range(seats)]).pvalue
            cells = []
            for k in kinds:
                share = 100 * mix[k] / len(rows)
                turn = sum(ends.get(k, [0])) / max(len(ends.get(k, [])), 1)
                cells.append(f"{share:5.1f}% (t {turn:5.1f})")
            by_seat = "/".join(f"{100 * wins[s] / len(rows):.1f}" for s in range(seats))
            print(f"{seats:>5} {length:>8} | " + " | ".join(cells) + f" | {p:.3g} ({by_seat})",
                  flush=True)


if __name__ == "__main__":
    main()

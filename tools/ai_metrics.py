"""What the AI does with the game (issue 11's measures), over N seeded matches.

    python tools/ai_metrics.py --matches 1000 --seats 4 --length standard [--tables F]
        [--compare F2] [--set score.w_region=2] [--jobs 2]

Prints: the share of matches in which each unit, building and tech is used;
Observatory announcements attacked / lost / completed; the share of seat-on-seat
captures that take a city in revolt; wins by personality and victory kind; and
with --compare (or --set) the share of matches whose play differs before the last
turn (event rows other than the final victory) and whose winner differs.
Personalities rotate as in experiments: seat s of match i plays order[(s + i) % n].
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sim.engine.match import play_match
from sim.rules import codes
from sim.rules.tables import load_tables, parse_overrides

EV = {name: i for i, name in enumerate(codes.EVENT_NAMES)}


@functools.lru_cache(maxsize=4)
def _load(path: str, sets: tuple[str, ...]):
    return load_tables(path, parse_overrides(list(sets)) if sets else None)


def _tables(path: str, sets: list[str]):
    """The tables at `path` with `key=value` overrides (sim.rules.tables.parse_overrides)."""
    return _load(path, tuple(sets))


def one(args):
    path, sets, seed, i, seats, length, compare_sets, compare_path = args
    tables = _tables(path, sets)
    order = list(tables.model.match.personalities)
    pers = [order[(s + i) % len(order)] for s in range(seats)]
    st, _board, log = play_match(tables, seed, i, n_seats=seats, length=length,
                                personalities=pers)
    ev = st.event_log[: st.n_events[0]].copy()
    out = {"winner": int(st.winner[0]), "victory": int(st.victory[0]),
           "end": int(st.turn[0]), "pers": pers}
    n_units = len(tables.unit_names)
    built = ev[ev[:, codes.COL_KIND] == codes.EV_BUILT][:, codes.COL_A]
    out["units"] = sorted({tables.unit_names[x] for x in built if x < n_units})
    out["buildings"] = sorted({tables.building_names[x - n_units] for x in built
                               if x >= n_units})
    techs = st.seat_techs[:seats].any(axis=0)
    out["techs"] = [t for k, t in enumerate(tables.tech_names) if techs[k]]
    out["kinds"] = sorted({codes.EVENT_NAMES[k] for k in ev[:, codes.COL_KIND]})
    # Observatory announcements: attacked afterwards, lost, completed
    obs = []
    attack = EV.get("attack")
    for row in ev[ev[:, codes.COL_KIND] == codes.EV_OBSERVATORY_QUEUED]:
        turn, seat, city = row[codes.COL_TURN], row[codes.COL_SEAT], row[codes.COL_CITY]
        later = ev[ev[:, codes.COL_TURN] >= turn]
        hit = attack is not None and bool(np.any((later[:, codes.COL_KIND] == attack) &
                                                 (later[:, codes.COL_CITY] == city)))
        lost = bool(np.any((later[:, codes.COL_KIND] == codes.EV_OBSERVATORY_LOST) &
                           (later[:, codes.COL_CITY] == city)))
        done = bool(np.any((later[:, codes.COL_KIND] == codes.EV_OBSERVATORY_COMPLETED) &
                           (later[:, codes.COL_SEAT] == seat)))
        obs.append((hit, lost, done))
    out["obs"] = obs
    out["alive"] = [bool(st.seat_alive[s]) for s in range(seats)]
    out["announced"] = [bool(np.any((ev[:, codes.COL_KIND] == codes.EV_OBSERVATORY_QUEUED) &
                                    (ev[:, codes.COL_SEAT] == s))) for s in range(seats)]
    out["cities_peak"] = [int(log[:, s, codes.TURN_LOG_FIELDS.index("cities")].max())
                          if "cities" in codes.TURN_LOG_FIELDS else 0 for s in range(seats)]
    # seat-on-seat captures of a city in revolt (V11: an open target)
    revolting: dict[int, bool] = {}
    caps = [0, 0]
    for row in ev:
        k, c = row[codes.COL_KIND], row[codes.COL_CITY]
        if k == codes.EV_REVOLT_START:
            revolting[c] = True
        elif k == codes.EV_REVOLT_END:
            revolting[c] = False
        elif k == codes.EV_CAPTURE:
            if row[codes.COL_SEAT] >= 0:
                caps[0] += 1
                caps[1] += int(revolting.get(c, False))
            revolting[c] = False
    out["caps"] = caps
    if compare_sets is not None:
        t2 = _tables(compare_path or path, compare_sets)
        st2, _b, _l = play_match(t2, seed, i, n_seats=seats, length=length, personalities=pers)
        ev2 = st2.event_log[: st2.n_events[0]]
        last = min(int(st.last_turn[0]), int(st2.last_turn[0]))
        a = ev[(ev[:, codes.COL_TURN] < last) & (ev[:, codes.COL_KIND] != codes.EV_VICTORY)]
        b = ev2[(ev2[:, codes.COL_TURN] < last) & (ev2[:, codes.COL_KIND] != codes.EV_VICTORY)]
        out["play_differs"] = a.shape != b.shape or not np.array_equal(a, b)
        out["winner_differs"] = int(st2.winner[0]) != out["winner"] or \
            int(st2.victory[0]) != out["victory"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--matches", type=int, default=200)
    ap.add_argument("--seats", type=int, default=4)
    ap.add_argument("--length", default="standard")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tables", default="tables/default.toml")
    ap.add_argument("--set", action="append", default=[], help="key=json value for the base")
    ap.add_argument("--compare", action="append", default=None,
                    help="key=json value for the compared tables")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    jobs = [(a.tables, a.set, a.seed, i, a.seats, a.length, a.compare, None)
            for i in range(a.matches)]
    with ProcessPoolExecutor(a.jobs) as ex:
        rows = list(ex.map(one, jobs, chunksize=8))
    n = len(rows)
    tables = load_tables(a.tables)
    print(f"{n} matches, {a.seats} seats, {a.length}")
    for label, names, key in (("unit", tables.unit_names, "units"),
                              ("building", tables.building_names, "buildings"),
                              ("tech", tables.tech_names, "techs")):
        line = ", ".join(f"{x} {100 * sum(x in r[key] for r in rows) / n:.0f}%" for x in names)
        print(f"{label}s built/researched: {line}")
    kinds = Counter(k for r in rows for k in r["kinds"])
    print("mechanics (share of matches):",
          ", ".join(f"{k} {100 * kinds[k] / n:.0f}%" for k in codes.EVENT_NAMES))
    obs = [o for r in rows for o in r["obs"]]
    if obs:
        hit = 100 * np.mean([o[0] for o in obs])
        print(f"observatory announcements {len(obs)}: attacked after {hit:.0f}%"
              f", lost {100 * np.mean([o[1] for o in obs]):.0f}%, completed "
              f"{100 * np.mean([o[2] for o in obs]):.0f}%")
    caps = np.sum([r["caps"] for r in rows], axis=0)
    print(f"seat-on-seat captures {caps[0]}, of a city in revolt {caps[1]} "
          f"({100 * caps[1] / max(caps[0], 1):.1f}%)")
    wins: Counter = Counter()
    seats_by: Counter = Counter()
    for r in rows:
        for p in r["pers"]:
            seats_by[p] += 1
        if r["winner"] >= 0:
            wins[(r["pers"][r["winner"]], codes.VICTORY_NAMES[r["victory"]])] += 1
    vk = codes.VICTORY_NAMES[:4]
    alive: Counter = Counter()
    announced: Counter = Counter()
    for r in rows:
        for s, p in enumerate(r["pers"]):
            alive[p] += r["alive"][s]
            announced[p] += r["announced"][s]
    print("wins by personality (seats played):", "  ".join(vk), " | survives  announces")
    for p in tables.personality_names:
        print(f"  {p:<10} ({seats_by[p]:>4}) " + "  ".join(f"{wins[(p, v)]:>5}" for v in vk) +
              f"   | {100 * alive[p] / max(seats_by[p], 1):5.0f}%  "
              f"{100 * announced[p] / max(seats_by[p], 1):5.0f}%")
    mix = Counter(codes.VICTORY_NAMES[r["victory"]] for r in rows)
    print("victory mix:", ", ".join(f"{v} {100 * mix[v] / n:.1f}%" for v in vk))
    if a.compare is not None:
        print(f"play differs before the last turn: "
              f"{100 * np.mean([r['play_differs'] for r in rows]):.1f}%, winner differs "
              f"{100 * np.mean([r['winner_differs'] for r in rows]):.1f}%")


if __name__ == "__main__":
    main()

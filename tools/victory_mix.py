"""Victory-mix diagnostic: play N standard matches and print how they ended.

Usage: .venv/bin/python tools/victory_mix.py N [key.path=value ...]
"""
import collections, sys
from sim.tables import load_tables, parse_overrides
from sim.match import play_match, outcome
sets = parse_overrides(sys.argv[2:]) if len(sys.argv) > 2 else {}
t = load_tables(overrides=sets)
N = int(sys.argv[1])
kinds = collections.Counter(); vic = collections.Counter(); wins_by_pers = collections.Counter(); ends = collections.defaultdict(list)
cities = []; peak_dom = collections.Counter()
for seed in range(N):
    st, b, tl = play_match(t, 5000 + seed)
    o = outcome(st, t, b, tl, 5000 + seed, 0)
    for e in o["events"]: kinds[e["kind"]] += 1
    vic[o["victory"]] += 1; ends[o["victory"]].append(o["end_turn"])
    if o["winner"] is not None: wins_by_pers[(o["victory"], o["seats"][o["winner"]]["personality"])] += 1
    cities.append(sum(s["cities"] for s in o["seats"]))
    for s in o["seats"]: peak_dom[s["peak_dominance"]] += 1
print({k: f"{v/N:.0%} (end {sum(ends[k])/len(ends[k]):.0f})" for k, v in vic.items()})
print({k: round(v / N, 2) for k, v in sorted(kinds.items())})
print(sorted(wins_by_pers.items()))
print("cities/match", sum(cities)/N, "peak dominance", sorted(peak_dom.items()))

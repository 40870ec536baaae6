"""Which orders a skill-1 lookahead adopts (issue 42 item 4: is there a small list of
orders worth a table prior?). Seat 0 at skill 1 against three skill-0 seats, standard
4-seat matches, personalities rotating by match; the orders of the lookahead at turn T
are read from the final state of the same matches played with stop_pct = T (its last
lookahead), for its first five decision turns.

    PYTHONPATH=. .venv/bin/python experiments/lookahead/picks.py N "every_pct=10,candidates=8"

Prints per decision turn: how often the seat keeps its own personality, which
personality it switches to, and its war order (own target, none, a rival city).
"""

from __future__ import annotations

import collections
import sys

from sim.engine.match import play_match
from sim.rules.codes import ORDER_NO_WAR, ORDER_OWN_TARGET
from sim.rules.record import item_names
from sim.rules.tables import load_tables

SEED = 777001


def main() -> None:
    n = int(sys.argv[1])
    pairs = [kv.split("=", 1) for kv in sys.argv[2].split(",") if kv]
    budget = {f"ai.lookahead.{k}": int(v) for k, v in pairs}
    base = load_tables(overrides=budget)
    rotation = list(base.model.match.personalities)
    plans = item_names(base.model.ai.personalities)  # plan index -> name (code order)
    every = budget.get("ai.lookahead.every_pct", 10)
    for k in range(5):
        stop = 1 + k * every
        tables = load_tables(overrides={**budget, "ai.lookahead.stop_pct": stop})
        kept, switched, wars = 0, collections.Counter(), collections.Counter()
        for i in range(n):
            seats = [rotation[(s + i) % len(rotation)] for s in range(4)]
            st, _board, _log = play_match(tables, SEED, i, personalities=seats,
                                          seat_ai=[{"skill": 1}, {}, {}, {}])
            plan = plans[int(st.seat_plan[0])]
            if plan == seats[0]:
                kept += 1
            else:
                switched[plan] += 1
            target = int(st.seat_target[0])
            wars[{ORDER_OWN_TARGET: "own", ORDER_NO_WAR: "none"}.get(target, "city")] += 1
        print(f"turn {stop}: own personality kept {kept} of {n}; switched to "
              f"{dict(switched.most_common())}; war order {dict(wars)}", flush=True)


if __name__ == "__main__":
    main()

"""What a turn-limit finish looks like, against a decided match, for one setup.

    .venv/bin/python tools/turn_limit_profile.py [--seats 6] [--length short]
        [--matches 120] [--root-seed 7300] [--set key.path=value ...]

Plays matches 0..N-1 of the setup (the personalities rotated by match index, as
tools/victory_grid.py does) and prints, separately for the matches that reached the
turn limit (V19) and for the decided ones: seats left, the largest seat's share of the
cities held by seats (V18's share), and per match the counts of Observatories queued
(V16), truces (D9), pacts, captures and eliminations, from each match's event log.
"""

from __future__ import annotations

import argparse
from collections import Counter

from sim.engine.match import play_match
from sim.rules.codes import EVENT_NAMES, TURN_LIMIT
from sim.rules.tables import load_tables

COUNTED = ("observatory_queued", "truce", "pact", "capture", "eliminated")


def _parse_set(items: list[str]) -> dict[str, int]:
    out = {}
    for item in items:
        key, _, value = item.partition("=")
        out[key] = int(value)
    return out


def profile(overrides: dict[str, int], seats: int, length: str, matches: int,
            root_seed: int) -> dict[str, tuple[int, dict[str, float]]]:
    """{"turn limit" | "decided": (matches, {figure: mean per match})}."""
    tables = load_tables(overrides=overrides)
    names = tables.model.match.personalities
    sums = {"turn limit": Counter(), "decided": Counter()}
    counts = Counter()
    for i in range(matches):
        order = [names[(s + i % len(names)) % len(names)] for s in range(seats)]
        st, _board, _log = play_match(tables, root_seed, i, n_seats=seats, length=length,
                                      personalities=order)
        events = st.event_log[:min(int(st.n_events[0]), st.event_log.shape[0])]
        kinds = Counter(EVENT_NAMES[k] for k in events[:, 1])
        owners = st.city_owner[:int(st.n_cities[0])]
        held = [int((owners == s).sum()) for s in range(seats)]
        group = "turn limit" if int(st.victory[0]) == TURN_LIMIT else "decided"
        counts[group] += 1
        sums[group]["seats left"] += int(st.seat_alive[:seats].sum())
        sums[group]["largest share"] += max(held) / max(1, sum(held))
        for kind in COUNTED:
            sums[group][kind] += kinds.get(kind, 0)
    return {g: (counts[g], {k: v / max(counts[g], 1) for k, v in sums[g].items()})
            for g in sums}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seats", type=int, default=6)
    ap.add_argument("--length", default="short")
    ap.add_argument("--matches", type=int, default=120)
    ap.add_argument("--root-seed", type=int, default=7300)
    ap.add_argument("--set", action="append", default=[])
    args = ap.parse_args()
    result = profile(_parse_set(args.set), args.seats, args.length, args.matches,
                     args.root_seed)
    figures = ("seats left", "largest share", *COUNTED)
    print(f"{'':12} {'matches':>8} " + " ".join(f"{f:>18}" for f in figures))
    for group, (n, means) in result.items():
        print(f"{group:12} {n:8d} " + " ".join(f"{means.get(f, 0.0):18.2f}" for f in figures))


if __name__ == "__main__":
    main()

"""Paired discordance of small nudges: how chaotic is one table step? (issue 44)

Usage: .venv/bin/python tools/discordance.py [--matches N] [--seed S] [--jobs J]

Plays match 0..N-1 (4 seats, standard, the tables' personalities) on the default
tables and on each of five one-step nudges, on the same seeds, and prints per nudge:
the share of matches whose winner changes, whose victory type changes, and the
variance of the paired differences of the four victory indicators (summed) against
what independent matches would give (the pairing's variance ratio; 1.0 = no gain).
A nudge that alters one draw should not shift every later draw (synchronised
streams, sim.world.rng), so these shares measure the game's own sensitivity.

`--control` plays instead the same +1 HP step on either side of the default: 99 -> 100
and 101 -> 102. At 100 HP two equal warriors kill each other in exactly two blows of
50 (damage_scale 100 × 4 / (4 + 4)), so 100 -> 101 crosses a blow-count boundary of
the rules (T16, deterministic combat: a cliff of the game itself) where neither
control does.
"""

from __future__ import annotations

import argparse

import numpy as np
from joblib import Parallel, delayed

from sim.engine.match import play_match
from sim.rules.codes import VICTORY_NAMES
from sim.rules.tables import load_tables

NUDGES = {
    "warrior hp +1": {"units.warrior.hp": "+1"},
    "granary cost +1": {"buildings.granary.cost": "+1"},
    "truce price +1": {"diplomacy.truce_price": "+1"},
    "prosperity cost +1 %": {"techs.prosperity.cost": "*1.01"},
    "dominance share +1 pt": {"dominance.share_pct": "+1"},
}


def _resolve(tables, nudge: dict[str, str]) -> dict[str, int]:
    out = {}
    for key, step in nudge.items():
        node = tables.data
        for part in key.split("."):
            node = node[part]
        out[key] = round(node * float(step[1:])) if step[0] == "*" else node + int(step[1:])
    return out


def _results(overrides: dict[str, int], seed: int, first: int, n: int) -> np.ndarray:
    tables = load_tables(overrides=overrides)
    out = np.empty((n, 2), dtype=np.int64)
    for k in range(n):
        state, _board, _log = play_match(tables, seed, first + k)
        out[k] = int(state.winner[0]), int(state.victory[0])
    return out


CONTROLS = [
    ("warrior hp 99 -> 100", {"units.warrior.hp": 99}, {"units.warrior.hp": "+1"}),
    ("warrior hp 101 -> 102", {"units.warrior.hp": 101}, {"units.warrior.hp": "+1"}),
]


def play(overrides: dict[str, int], seed: int, matches: int, jobs: int) -> np.ndarray:
    """(matches, 2) int64: winner seat (-1 none) and victory code per match index."""
    blocks = [(i, min(250, matches - i)) for i in range(0, matches, 250)]
    parts = Parallel(n_jobs=jobs)(delayed(_results)(overrides, seed, i, n) for i, n in blocks)
    return np.concatenate(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=4711)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--control", action="store_true",
                    help="only the control pairs: warrior 99 -> 100 and 101 -> 102 HP "
                         "(neither crosses a blow-count boundary)")
    args = ap.parse_args()
    cases = [(name, {}, nudge) for name, nudge in NUDGES.items()]
    if args.control:
        cases = CONTROLS
    print(f"{args.matches} matches, seed {args.seed}, 4 seats standard")
    print(f"{'nudge':24} {'winner changes':>15} {'victory changes':>16} {'var ratio':>10}")
    played: dict[str, np.ndarray] = {}
    for name, base_set, nudge in cases:
        key = repr(sorted(base_set.items()))
        if key not in played:
            played[key] = play(base_set, args.seed, args.matches, args.jobs)
        base = played[key]
        nudged = {**base_set, **_resolve(load_tables(overrides=base_set), nudge)}
        other = play(nudged, args.seed, args.matches, args.jobs)
        print(f"{name:24} " + _row(base, other))


def _row(base: np.ndarray, other: np.ndarray) -> str:
    winner = float(np.mean(base[:, 0] != other[:, 0]))
    victory = float(np.mean(base[:, 1] != other[:, 1]))
    paired = independent = 0.0
    for v in range(len(VICTORY_NAMES)):
        a, b = (base[:, 1] == v).astype(float), (other[:, 1] == v).astype(float)
        paired += np.var(b - a, ddof=1)
        independent += np.var(a, ddof=1) + np.var(b, ddof=1)
    ratio = paired / independent if independent else float("nan")
    return f"{winner:15.1%} {victory:16.1%} {ratio:10.2f}"


if __name__ == "__main__":
    main()

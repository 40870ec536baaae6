"""One whole match: run it (fast path or turn by turn with checks) and describe its outcome."""

from __future__ import annotations

from typing import Any

import numpy as np

from sim.board import Board
from sim.engine import state_report
from sim.engine_loop import new_path_table
from sim.kernels.match import begin_match, play_one_turn, run_match
from sim.kernels.setup import setup_match
from sim.setup import prepare
from sim.state import VICTORY_NAMES, State
from sim.tables import Tables

TURN_TERMS = ("region", "population", "cities", "gold", "monuments", "score", "dominance",
              "gold_stock")


class InvariantError(AssertionError):
    """The invariant checker found a violation during `--check`."""


def play_match(tables: Tables, seed: int, match_index: int = 0, n_seats: int | None = None,
               length: str | None = None, check: bool = False,
               personalities: list[str] | None = None):
    """Play one match; returns (state, board, turn_log). With `check`, the invariant
    checker runs after every turn and raises InvariantError on a violation.
    `personalities` names each seat's AI (default: the tables' match.personalities)."""
    st, board, turn_log, rng_map, n_seats = prepare(tables, seed, match_index, n_seats, length,
                                                    personalities)
    tb = tables.arrays()
    path = new_path_table(board.n_tiles)
    if not check:
        run_match(st, tb, board, rng_map, np.int64(n_seats), path, turn_log)
        return st, board, turn_log
    from sim.check import check_invariants

    setup_match(st, tb, board, rng_map, np.int64(n_seats))
    begin_match(st, tb, board)
    while not st.finished[0]:
        play_one_turn(st, tb, board, path, turn_log)
        problems = check_invariants(st, tables, board)
        if problems:
            raise InvariantError(f"seed {seed} match {match_index} turn {st.turn[0]}: "
                                 + "; ".join(problems))
    return st, board, turn_log


def outcome(state: State, tables: Tables, board: Board, turn_log: np.ndarray,
            seed: int, match_index: int) -> dict[str, Any]:
    """The outcome rows of one match: winner, victory, per-seat results, events, turns."""
    report = state_report(state, tables, board)
    events = report["events"]
    n_seats = int(state.n_seats[0])
    names = tables.personality_names
    seats = []
    for s in report["seats"]:
        i = s["seat"]
        mine = [e for e in events if e.get("seat") == i]
        by_me = [e for e in events if e.get("by") == i]
        seats.append({
            "seat": i,
            "personality": names[int(state.seat_personality[i])],
            "alive": s["alive"], "rank": s["rank"], "score": s["score"],
            **{f"{k}_points": v for k, v in s["score_terms"].items()},
            "gold_stock": s["gold"], "cities": len(s["cities"]),
            "population": sum(c["pop"] for c in report["cities"] if c["seat"] == i),
            "techs": len(s["techs"]),
            "eliminated_turn": s["eliminated_turn"],
            "capitals_lost": sum(1 for e in mine if e["kind"] == "capital_fall"),
            "cities_captured": sum(1 for e in by_me if e["kind"] == "capture")
            + sum(1 for e in by_me if e["kind"] == "transfer"),
            "observatory_queued_turn": next((e["turn"] for e in mine
                                             if e["kind"] == "observatory_queued"), None),
            "observatory_lost_turn": next((e["turn"] for e in mine
                                           if e["kind"] == "observatory_lost"), None),
            "observatory_completed_turn": next((e["turn"] for e in mine
                                                if e["kind"] == "observatory_completed"), None),
            "peak_dominance": int(turn_log[:, i, 6].max()) if turn_log.size else 0,
        })
    end_turn = int(state.turn[0])
    last = min(end_turn, turn_log.shape[0] - 1)
    rows = turn_log[1: last + 1, :n_seats].tolist()
    turns = [{"turn": t, "seat": s, **dict(zip(TURN_TERMS, rows[t - 1][s], strict=True))}
             for t in range(1, last + 1) for s in range(n_seats)]
    victory = int(state.victory[0])
    return {
        "seed": seed, "match_index": match_index, "tables_hash": tables.hash,
        "seats_n": n_seats, "length": int(state.last_turn[0]),
        "winner": int(state.winner[0]) if state.winner[0] >= 0 else None,
        "victory": VICTORY_NAMES[victory] if victory >= 0 else None,
        "end_turn": end_turn,
        "events_dropped": max(int(state.n_events[0]) - state.event_log.shape[0], 0),
        "seats": seats, "events": events, "turns": turns,
    }

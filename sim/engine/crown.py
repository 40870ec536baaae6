"""One Crown match from Python (../shared/RULES-crown.md): the start board (L4), the
match's stream (L7), the compiled match (`sim.kernels.crown.play_crown`) and its
outcome record."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.kernels.crown import play_crown
from sim.rules.crown import (
    ATTACK_COUNTS,
    CROWN_AI_LEVELS,
    EMPTY,
    MAX_ZONES,
    N_EVENT_FIELDS,
    N_RESULT_FIELDS,
    N_ROUND_FIELDS,
    N_SCORE_TERMS,
    N_SIDES,
    N_WIDGETS,
    RS_DECIDED_BY,
    RS_FAULT_LEADER,
    RS_MAJ_A,
    RS_MAJ_B,
    RS_N_EVENTS,
    RS_WINNER,
    RS_ZONES_A,
    RS_ZONES_B,
    WIDGETS,
    CrownTables,
)
from sim.world.rng import Purpose, stream_seed


@dataclass(frozen=True)
class CrownOutcome:
    """What one Crown match ended with.

    winner: SIDE_A, SIDE_B or NO_WINNER (a draw); decided_by: a RESULTS code (K13).
    totals (N_SIDES,); terms (N_SIDES, N_SCORE_TERMS) points by SCORE_TERMS;
    zones, majorities (N_SIDES,) at the end; fault_leader: the side ahead after the
    fault round (EMPTY: level, or no fault); first_counts (N_SIDES,): waves the side's
    player acted first (K05); lead_counts (N_SIDES, N_WIDGETS): rolls by lead (K03);
    attack_counts (N_SIDES, N_WIDGETS, ATTACK_COUNTS) by the attacker's lead;
    rounds (rounds, N_ROUND_FIELDS) per-round rows (ROUND_FIELDS); events (E,
    N_EVENT_FIELDS) the match's events (EVENT_FIELDS); owner, tokens (n_zones,) the
    final board."""

    seed: int
    match_index: int
    side_skill: tuple[int, int]
    winner: int
    decided_by: int
    totals: np.ndarray
    terms: np.ndarray
    zones: np.ndarray
    majorities: np.ndarray
    fault_leader: int
    first_counts: np.ndarray
    lead_counts: np.ndarray
    attack_counts: np.ndarray
    rounds: np.ndarray
    events: np.ndarray
    owner: np.ndarray
    tokens: np.ndarray


def crown_stream(seed: int, match_index: int) -> np.uint64:
    """L7: the key of match `match_index`'s stream: (root seed, match, Purpose.CROWN);
    each draw folds in its wave, purpose and player (sim.world.rng.draw_key)."""
    return np.uint64(stream_seed(seed, match_index, Purpose.CROWN))


def start_board(tables: CrownTables) -> tuple[np.ndarray, np.ndarray]:
    """L4: (owner, tokens), (MAX_ZONES,) int64 each: every zone empty but each side's
    home zone with 1 token."""
    owner = np.full(MAX_ZONES, EMPTY, dtype=np.int64)
    tokens = np.zeros(MAX_ZONES, dtype=np.int64)
    names = list(tables.model.map.zones)
    for side, home in enumerate(tables.model.map.homes):
        owner[names.index(home)], tokens[names.index(home)] = side, 1
    return owner, tokens


def event_capacity(tables: CrownTables) -> int:
    """Rows enough for every event of a match: per player and wave a roll, an order and
    an attack; per round a score row per side; per fault and eruption a row per zone."""
    m = tables.model
    players = sum(m.match.team_sizes)
    return (m.match.rounds * m.match.waves * players * 3 + m.match.rounds * N_SIDES
            + 2 * len(m.map.zones))


def play_crown_match(tables: CrownTables, seed: int, match_index: int = 0,
                     side_skill: tuple[int, int] = (0, 0),
                     board: tuple[np.ndarray, np.ndarray] | None = None) -> CrownOutcome:
    """Play match `match_index` of root `seed` on `tables`, side A's players at AI
    skill side_skill[0], side B's at side_skill[1] (K14: CROWN_AI_LEVELS, random legal
    play included); `board`
    (owner, tokens) replaces the start board (a scenario's)."""
    for skill in side_skill:
        if skill not in CROWN_AI_LEVELS:
            raise ValueError(f"a Crown AI skill is one of {CROWN_AI_LEVELS}, got {skill}")
    # the model's attributes, not the record's: a numpy record's field costs microseconds
    rounds_n, n_zones = tables.model.match.rounds, len(tables.model.map.zones)
    owner, tokens = start_board(tables) if board is None else (board[0].copy(),
                                                                 board[1].copy())
    events = np.zeros((event_capacity(tables), N_EVENT_FIELDS), dtype=np.int64)
    totals = np.zeros(N_SIDES, dtype=np.int64)
    terms = np.zeros((N_SIDES, N_SCORE_TERMS), dtype=np.int64)
    rounds = np.zeros((rounds_n, N_ROUND_FIELDS), dtype=np.int64)
    attack_counts = np.zeros((N_SIDES, N_WIDGETS, len(ATTACK_COUNTS)), dtype=np.int64)
    lead_counts = np.zeros((N_SIDES, N_WIDGETS), dtype=np.int64)
    first_counts = np.zeros(N_SIDES, dtype=np.int64)
    result = np.zeros(N_RESULT_FIELDS, dtype=np.int64)
    play_crown(tables.record, crown_stream(seed, match_index), np.array(side_skill, dtype=np.int64),
               owner, tokens, events, totals, terms, rounds, attack_counts, lead_counts,
               first_counts, result)
    return CrownOutcome(
        seed=seed, match_index=match_index, side_skill=(int(side_skill[0]), int(side_skill[1])),
        winner=int(result[RS_WINNER]), decided_by=int(result[RS_DECIDED_BY]), totals=totals,
        terms=terms,
        zones=np.array([result[RS_ZONES_A], result[RS_ZONES_B]]),
        majorities=np.array([result[RS_MAJ_A], result[RS_MAJ_B]]),
        fault_leader=int(result[RS_FAULT_LEADER]), first_counts=first_counts,
        lead_counts=lead_counts, attack_counts=attack_counts, rounds=rounds,
        events=events[: result[RS_N_EVENTS]], owner=owner[:n_zones], tokens=tokens[:n_zones])


def roll_scoring(tables: CrownTables, face: int) -> dict:
    """K15: how a roll of `face` (1–12) scored, as the app shows it: the top face, its
    widget and lead (K03), the lead's power × the multiplier, and the five touching
    faces, each with its widget and what it added (a Booster +booster_bonus, a widget of
    the lead's type +same_type_bonus, K02); `crown` is the sum, equal to the kernel's
    crown_of (tests/test_crown.py checks every face)."""
    from sim.kernels.crown import lead_of

    m, rec = tables.model, tables.record
    lead = WIDGETS[lead_of(rec, np.int64(face - 1))]
    widget = m.core.faces[face - 1]
    base = getattr(m.crown.power, widget) * m.crown.power_multiplier
    touching = []
    for other in m.core.touches[face - 1]:
        w = m.core.faces[other - 1]
        bonus = m.crown.booster_bonus if w == "booster" else 0
        same = w == lead or (w == "wildcard" and m.crown.wildcard.touching_wildcard_counts)
        if lead != "wildcard" and same:
            bonus += m.crown.same_type_bonus
        touching.append({"face": other, "widget": w, "adds": bonus})
    crown = base + sum(t["adds"] for t in touching)
    return {"face": face, "widget": widget, "lead": lead, "power_points": base,
            "touching": touching, "crown": crown}

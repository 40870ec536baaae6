"""A match recorded turn by turn for the replay viewer (sim.report.replay).

`record_match` steps the match with `iter_turns` (the kernels, streams and order of
`play_match`, so it ends in the same state) and keeps a small frame of each step:
the opening (frame 0) and the state after every whole turn (frame N: every standing
seat played turn N and, unless the match ended, turn N+1 opened with its opening
seat's flow, T12). The result is plain JSON-ready data (lists, ints, strings), the
only thing the HTML writer is given.

Frames are compact arrays rather than state reports: a tile-owner string per frame
(one character a tile), flat integer rows for cities and units, per-seat lists for
the score and the V18 counter. A 100-turn 4-seat match records in a few hundred KB.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sim.engine.match import iter_turns
from sim.engine.report import event_list, state_report
from sim.engine.transcript import event_words
from sim.kernels.rules.standings import territory_and_scores
from sim.rules.codes import (
    EVENT_NAMES,
    NODE_KINDS,
    SCORE_TERMS,
    TERRAINS,
    VICTORY_NAMES,
)
from sim.rules.tables import Tables
from sim.world.board import Board
from sim.world.state import State

# a tile's owner character in a frame's `owner` string
NO_OWNER = "."
RING = "abcdef"    # seat s's region ring (T01, T03): RING[s]
BOUGHT = "ABCDEF"  # a tile seat s's city bought (T04, T05): BOUGHT[s]
# fields of one city, of one unit, in a frame's flat rows
CITY_FIELDS = ("id", "tile", "owner", "pop", "hp", "hp_max", "capital", "revolt")
UNIT_FIELDS = ("tile", "owner", "type", "hp")


def record_match(tables: Tables, seed: int, match_index: int = 0, n_seats: int | None = None,
                 length: str | None = None, personalities: list[str] | None = None,
                 seat_ai: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Play one match with recording on (seat_ai: per-seat AI settings, as play_match);
    returns the recording (JSON-ready).

    Keys:
      meta: seed, match_index, seats, length (the preset or None for the tables'
        own), last_turn, end_turn, winner (seat or None), victory (VICTORY_NAMES or
        None), tables_hash, personalities (one name per seat), counter_to_win (V18).
      names: terrains, nodes, units (the tables' unit order: a unit's `type` indexes
        it, -1 a bandit), events (EVENT_NAMES), score_terms, victories.
      board: radius, q and r (T,) axial coordinates of each tile index, terrain (T,)
        terrain codes, node (T,) resource node codes or -1. Both are fixed all match.
      frames: F = end_turn + 1 frames, frame i the state after turn i (0: the
        opening). Each key is a list of F entries:
        turn: i;
        owner: a string of T characters, tile t's owner: "." none, RING[s] seat s's
          region, BOUGHT[s] a tile bought by a city of seat s (T08 resolved);
        cities: flat ints, CITY_FIELDS per standing city (owner -2 a neutral village;
          capital 0/1; revolt: turns left, V11);
        units: flat ints, UNIT_FIELDS per unit alive (owner -3 and type -1 a bandit);
        camps: tiles of the bandit camps still standing;
        score (S,), terms (S x len(SCORE_TERMS), row-major) T13 points,
        dominance (S,) V18 counters, gold (S,) and science (S,) stocks, alive (S,) 0/1.
      events: one [turn, kind, seat, by, city, words] per logged event, in log order:
        kind indexes names.events; seat and by are owners (-1 none, -2 neutral,
        -3 bandit); city -1 none; words as the golden transcripts say it.
    """
    tb = tables.arrays(length, n_seats)
    hp_base, hp_pop, building_hp = int(tb.hp_base), int(tb.hp_per_population), tb.building_hp
    frames: dict[str, list] = {k: [] for k in ("turn", "owner", "cities", "units", "camps",
                                               "score", "terms", "dominance", "gold",
                                               "science", "alive")}
    step = None
    for step in iter_turns(tables, seed, match_index, n_seats, length, personalities,
                           seat_ai):
        _frame(frames, step.played, step.state, tb, step.board, hp_base, hp_pop, building_hp)
    assert step is not None
    st, board = step.state, step.board
    n = int(st.n_seats[0])
    names = tables.personality_names
    report = state_report(st, tables, board)
    events = [[e["turn"], EVENT_NAMES.index(e["kind"]), *_raw_parties(st, e["row"]),
               event_words(e, report)] for e in event_list(st, tables, board)]
    winner, victory = int(st.winner[0]), int(st.victory[0])
    return {
        "meta": {"seed": seed, "match_index": match_index, "seats": n, "length": length,
                 "last_turn": int(st.last_turn[0]), "end_turn": int(st.turn[0]),
                 "winner": winner if winner >= 0 else None,
                 "victory": VICTORY_NAMES[victory] if victory >= 0 else None,
                 "tables_hash": tables.hash,
                 "personalities": [names[int(st.seat_personality[s])] for s in range(n)],
                 "counter_to_win": tables.model.dominance.counter_to_win},
        "names": {"terrains": list(TERRAINS), "nodes": list(NODE_KINDS),
                  "units": list(tables.unit_names), "events": list(EVENT_NAMES),
                  "score_terms": list(SCORE_TERMS), "victories": list(VICTORY_NAMES)},
        "board": {"radius": board.radius, "q": board.q.tolist(), "r": board.r.tolist(),
                  "terrain": st.tile_terrain[: board.n_tiles].tolist(),
                  "node": st.tile_node[: board.n_tiles].tolist()},
        "frames": frames,
        "events": events,
    }


def _raw_parties(st: State, row: int) -> list[int]:
    """seat, by and city of an event row as the kernel logged them (-1 none)."""
    return [int(x) for x in st.event_log[row, 2:5]]


def _frame(frames: dict[str, list], played: int, st: State, tb, board: Board, hp_base: int,
           hp_pop: int, building_hp: np.ndarray) -> None:
    """Append the frame of the state after turn `played` to `frames`."""
    n = int(st.n_seats[0])
    tile_city, terms, _counts, score, _rank = territory_and_scores(st, tb, board)
    n_tiles = board.n_tiles
    owner = np.full(n_tiles, -1, dtype=np.int64)
    held = tile_city[:n_tiles] >= 0
    owner[held] = st.city_owner[tile_city[:n_tiles][held]]
    bought = st.tile_bought_by[:n_tiles] >= 0
    chars = np.array([*RING, *BOUGHT, NO_OWNER])
    code = np.where(owner >= 0, owner + np.where(bought, len(RING), 0), len(chars) - 1)
    frames["owner"].append("".join(chars[code].tolist()))
    nc = int(st.n_cities[0])
    live = np.flatnonzero(st.city_tile[:nc] >= 0)
    hp_max = hp_base + hp_pop * st.city_pop[live] + (
        building_hp[None, :] * st.city_buildings[live, : building_hp.shape[0]]).sum(axis=1)
    cities = np.stack([live, st.city_tile[live], st.city_owner[live], st.city_pop[live],
                       st.city_hp[live], hp_max, st.city_capital[live].astype(np.int64),
                       st.city_revolt[live]], axis=1)
    nu = int(st.n_units[0])
    alive = np.flatnonzero(st.unit_tile[:nu] >= 0)
    units = np.stack([st.unit_tile[alive], st.unit_owner[alive], st.unit_type[alive],
                      st.unit_hp[alive]], axis=1)
    frames["turn"].append(played)
    frames["cities"].append(cities.ravel().tolist())
    frames["units"].append(units.ravel().tolist())
    frames["camps"].append([int(t) for t in st.camp_tile if t >= 0])
    frames["score"].append(score[:n].tolist())
    frames["terms"].append(terms[:n].ravel().tolist())
    frames["dominance"].append(st.seat_dominance[:n].tolist())
    frames["gold"].append(st.seat_gold[:n].tolist())
    frames["science"].append(st.seat_science[:n].tolist())
    frames["alive"].append(st.seat_alive[:n].astype(np.int64).tolist())

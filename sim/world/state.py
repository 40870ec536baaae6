"""Match state as structure-of-arrays over fixed capacities.

All numbers are int64 and all flags bool, so kernels never mix dtypes. `-1`
means "none" everywhere (no city, no unit, empty queue slot, unused slot).
IDs are slot indices and are never reused: a city or unit keeps its slot for
the whole match (cities are never destroyed; a dead unit's slot stays dead).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sim.rules.codes import (
    EVENT_FIELDS,
    MAX_SEATS,
    MAX_TILES,
    NONE,
    QUEUE_SLOTS,
    WATER,
)


class Capacity(NamedTuple):
    cities: int = 64
    units: int = 2048
    camps: int = 24
    pacts: int = 8
    events: int = 8192  # rows; the most a measured match logged is ~2,500 (docs/outcomes.md)


# State is one numpy record (a structured scalar) rather than a NamedTuple of
# arrays: numba passes a record as a single pointer, where a NamedTuple of 50
# arrays becomes ~350 machine arguments on every call between kernels and made
# compiling the engine take minutes. Every field is a fixed-size array, so the
# record's type (and numba's compiled code) does not depend on the board or
# the number of seats: tiles are padded to MAX_TILES and seats to MAX_SEATS,
# with n_tiles and n_seats saying how many are real.
STATE_DOC = """Everything that changes during a match, as one numpy record.

S = MAX_SEATS seat slots (n_seats real), T = MAX_TILES tile slots (n_tiles
real), C/U/M/P/E capacities, K techs and B buildings (from the tables).
Flags are uint8 (0/1); every other number is int64; -1 means none.

Match scalars, (1,) arrays updated in place:
  turn, active_seat, last_turn, finished (0/1), winner (seat or -1),
  victory (code or -1), n_tiles, n_seats, n_cities / n_units / n_events
  (slots used so far).
Random streams: rng_events: (1,) uint64 key of the event cards (V14); rng_ai: (S,)
  uint64, one key per seat (the AI's graded choices, D8); rng_random: (S,) uint64, a
  random-play seat's key of its decisions (sim.kernels.ai.random_play), 0 for the others.
  Keys, not counters: a play draw is sim.world.rng.draw_key(key, turn, purpose, subject),
  and nothing advances them.
Tiles (T,):
  tile_terrain: terrain code; tile_node: node code or -1;
  tile_bought_by: city that bought the tile (T04, T05) or -1;
  tile_unit: the unit standing there or -1 (one unit per tile);
  tile_site: the city standing there or -1.
Seats (S,):
  seat_alive, seat_human: flags; seat_gold, seat_science: stock;
  seat_techs: (S, K) flags; seat_dominance: V18 counter;
  seat_capital: city or -1; seat_personality: index;
  seat_eliminated_turn: -1 while standing; seat_lost_turn: last turn one of
  its cities was taken, -1 never (the AI reads it to sue for a truce);
  seat_forbid_units / _buildings / _techs / _mechanics: bit masks of what the
  experiment forbids the seat (bit i: item i in code order, mechanic i of
  sim.rules.codes.MECHANICS); seat_skill: its AI level (D11: 0 greedy, 1 lookahead,
  2 search; SKILL_RANDOM: random legal play);
  seat_plan: the personality index whose AI values the seat plays by, -1 for its
  own seat_personality; seat_target: the city its army marches on, -1
  (ORDER_OWN_TARGET) for the AI's own war target, ORDER_NO_WAR for none (a skill-1
  or skill-2 seat's orders set both, sim.kernels.lookahead / search; reports name
  seat_personality, the seat's real one); seat_playouts: copies of the match its
  lookahead or search has played out so far (telemetry).
Cities (C,):
  city_tile: tile, -1 for an unused slot; city_owner: seat or NEUTRAL;
  city_pop; city_hp; city_food (store); city_production (accumulated on the
  front queue item); city_capital: flag; city_revolt: turns left;
  city_revolt_cause: REVOLT_*; city_buildings: (C, B) flags;
  city_queue: (C, QUEUE_SLOTS) item codes front first, -1 empty (units
  0..U-1, buildings U..U+B-1).
Units (U,):
  unit_type (-1 for a bandit); unit_owner: seat or BANDIT; unit_tile: -1 once
  dead; unit_hp; unit_moves_left; unit_camp: a bandit's home camp, else -1.
Camps (M,): camp_tile (-1 cleared or unused); they spawn on a fixed schedule (D4).
Diplomacy: truce_turns (S, S) symmetric turns left; pact_target (P,) seat
  or -1; pact_members (P, S) flags; pact_turns (P,).
Events: event_log (E, EVENT_FIELDS) rows (sim.kernels.rules.events).
"""

State = np.record  # the type of a state; see STATE_DOC and state_dtype


def state_dtype(n_techs: int, n_buildings: int, capacity: Capacity | None = None) -> np.dtype:
    C, U, M, P, E = capacity or Capacity()
    S, T, K, B = MAX_SEATS, MAX_TILES, n_techs, n_buildings
    i8, u8, u64 = np.int64, np.uint8, np.uint64
    one = (1,)
    fields = [
        ("turn", i8, one), ("active_seat", i8, one), ("last_turn", i8, one),
        ("finished", i8, one), ("winner", i8, one), ("victory", i8, one),
        ("n_tiles", i8, one), ("n_seats", i8, one), ("n_cities", i8, one),
        ("n_units", i8, one), ("n_events", i8, one),
        ("rng_events", u64, one), ("rng_ai", u64, (S,)),
        # a random-play seat's key (Purpose.RANDOM_PLAY; 0 for every other seat)
        ("rng_random", u64, (S,)),
        ("tile_terrain", i8, (T,)), ("tile_node", i8, (T,)), ("tile_bought_by", i8, (T,)),
        ("tile_unit", i8, (T,)), ("tile_site", i8, (T,)),
        ("seat_gold", i8, (S,)), ("seat_science", i8, (S,)), ("seat_dominance", i8, (S,)),
        ("seat_capital", i8, (S,)), ("seat_personality", i8, (S,)),
        ("seat_eliminated_turn", i8, (S,)), ("seat_lost_turn", i8, (S,)),
        # restricted play (issue 16): bit i set = unit / building / tech / mechanic i
        # forbidden to the seat; the AI skill level
        ("seat_forbid_units", i8, (S,)), ("seat_forbid_buildings", i8, (S,)),
        ("seat_forbid_techs", i8, (S,)), ("seat_forbid_mechanics", i8, (S,)),
        ("seat_skill", i8, (S,)),
        # the personality the AI plays the seat by (-1: its own); the lookahead sets it
        ("seat_plan", i8, (S,)),
        # the war order of a skill-1 or skill-2 seat (-1: the AI's own target), and how
        # many copies its lookahead or search played out
        ("seat_target", i8, (S,)), ("seat_playouts", i8, (S,)),
        ("city_tile", i8, (C,)), ("city_owner", i8, (C,)), ("city_pop", i8, (C,)),
        ("city_hp", i8, (C,)), ("city_food", i8, (C,)), ("city_production", i8, (C,)),
        ("city_revolt", i8, (C,)), ("city_revolt_cause", i8, (C,)),
        ("city_queue", i8, (C, QUEUE_SLOTS)),
        ("unit_type", i8, (U,)), ("unit_owner", i8, (U,)), ("unit_tile", i8, (U,)),
        ("unit_hp", i8, (U,)), ("unit_moves_left", i8, (U,)), ("unit_camp", i8, (U,)),
        ("camp_tile", i8, (M,)),
        ("truce_turns", i8, (S, S)), ("pact_target", i8, (P,)), ("pact_turns", i8, (P,)),
        ("event_log", i8, (E, EVENT_FIELDS)),
        # flags last, so the int64 fields above stay 8-byte aligned
        ("seat_alive", u8, (S,)), ("seat_human", u8, (S,)), ("seat_techs", u8, (S, max(K, 1))),
        ("city_capital", u8, (C,)), ("city_buildings", u8, (C, max(B, 1))),
        ("pact_members", u8, (P, S)),
    ]
    return np.dtype(fields, align=True)


def empty_state(n_tiles: int, n_seats: int, n_techs: int, n_buildings: int,
                capacity: Capacity | None = None) -> State:
    """A state with every slot unused and `n_seats` seats standing with nothing."""
    if not 1 <= n_seats <= MAX_SEATS:
        raise ValueError(f"seats must be 1..{MAX_SEATS}, got {n_seats}")
    if not 1 <= n_tiles <= MAX_TILES:
        raise ValueError(f"tiles must be 1..{MAX_TILES}, got {n_tiles}")
    holder = np.zeros(1, dtype=state_dtype(n_techs, n_buildings, capacity)).view(np.recarray)
    st = holder[0]
    for name in ("winner", "victory", "tile_node", "tile_bought_by", "tile_unit", "tile_site",
                 "seat_capital", "seat_eliminated_turn", "seat_lost_turn", "seat_plan",
                 "seat_target",
                 "city_tile", "city_owner", "city_queue", "unit_type", "unit_owner",
                 "unit_tile", "unit_camp", "camp_tile", "pact_target"):
        st[name][...] = NONE
    st.turn[0] = 1
    st.last_turn[0] = 100
    st.n_tiles[0] = n_tiles
    st.n_seats[0] = n_seats
    st.seat_alive[:n_seats] = 1
    st.tile_terrain[n_tiles:] = WATER  # padding is never on the board
    return st


def copy_state(state: State) -> State:
    """A deep copy, byte for byte: numpy assigns a record field by field and would leave
    the dtype's alignment padding uninitialised, so two copies of one state could differ
    in `tobytes()` (a test comparing bytes failed on the padding of recycled memory)."""
    raw = np.frombuffer(state.tobytes(), dtype=np.uint8).copy()
    return raw.view(state.dtype).view(np.recarray)[0]


def states_equal(a: State, b: State) -> bool:
    """True when every field of `a` equals the same field of `b`."""
    return a.dtype == b.dtype and all(np.array_equal(a[n], b[n]) for n in a.dtype.names)


def arrays_of(state: State):
    """The state's fields as plain attributes of a namespace of numpy arrays (views).

    Reading a field of a numpy record goes through numpy's slow record attribute
    lookup; Python code that reads many fields (reports, outcome rows) takes the
    views once with this.
    """
    from types import SimpleNamespace

    return SimpleNamespace(**{name: state[name] for name in state.dtype.names})

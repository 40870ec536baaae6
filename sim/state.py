"""Match state as structure-of-arrays over fixed capacities.

All numbers are int64 and all flags bool, so kernels never mix dtypes. `-1`
means "none" everywhere (no city, no unit, empty queue slot, unused slot).
IDs are slot indices and are never reused: a city or unit keeps its slot for
the whole match (cities are never destroyed; a dead unit's slot stays dead).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

NONE = -1
NEUTRAL = -2  # city_owner of a neutral village (V06, T06)
BANDIT = -3   # unit_owner of a bandit (V06)

# terrain codes, in sim.tables.TERRAINS order
PLAINS, FOREST, HILLS, MOUNTAIN, WATER = 0, 1, 2, 3, 4
# node codes, in sim.tables.NODE_KINDS order
FOOD, PRODUCTION, GOLD = 0, 1, 2
SCIENCE = 3  # yields index after the three node kinds
# victory codes; V01 precedence is ascending code order
CONQUEST, SCIENCE_WIN, DOMINANCE, TURN_LIMIT, HUMAN_OUT = 0, 1, 2, 3, 4
VICTORY_NAMES = ("conquest", "science", "dominance", "turn_limit", "human_out")
# revolt causes (V11, V14)
REVOLT_NONE, REVOLT_TRANSFER, REVOLT_UNREST = 0, 1, 2
REVOLT_CAUSES = (None, "transfer", "unrest")

MAX_SEATS = 6
QUEUE_SLOTS = 8
EVENT_FIELDS = 8  # turn, kind, seat, by, city, a, b, c


class Capacity(NamedTuple):
    cities: int = 64
    units: int = 2048
    camps: int = 24
    pacts: int = 8
    events: int = 4096


class State(NamedTuple):
    """Everything that changes during a match. S seats, T tiles, C/U/M/P capacities.

    Match scalars are (1,) int64 arrays so kernels can update them in place:
      turn, active_seat, last_turn, finished (0/1), winner (seat or -1),
      victory (code or -1), n_cities / n_units / n_events (slots used so far).
    Tiles (T,):
      tile_terrain: terrain code; tile_node: node code or -1;
      tile_bought_by: city ID that bought the tile (T04, T05) or -1.
    Seats (S,):
      seat_alive, seat_human: bool; seat_gold, seat_science: stock;
      seat_techs: (S, K) bool; seat_dominance: V18 counter;
      seat_capital: city ID or -1; seat_personality: index;
      seat_eliminated_turn: -1 while standing.
    Cities (C,):
      city_tile: tile or -1 for an unused slot; city_owner: seat or NEUTRAL;
      city_pop, city_hp, city_food (food store), city_production (accumulated
      on the front queue item); city_capital: bool; city_revolt: turns left;
      city_revolt_cause: REVOLT_*; city_buildings: (C, B) bool;
      city_queue: (C, QUEUE_SLOTS) item codes front first, -1 empty (units
      0..U-1, buildings U..U+B-1).
    Units (U,):
      unit_type; unit_owner: seat or BANDIT; unit_tile: -1 once dead or unused;
      unit_hp; unit_moves_left; unit_camp: home camp of a bandit, else -1.
    Camps (M,): camp_tile (-1 cleared or unused), camp_timer.
    Diplomacy: truce_turns (S, S) symmetric turns left; pact_target (P,) seat
      or -1; pact_members (P, S) bool; pact_turns (P,).
    Events: event_log (E, EVENT_FIELDS) rows of int64.
    """

    turn: np.ndarray
    active_seat: np.ndarray
    last_turn: np.ndarray
    finished: np.ndarray
    winner: np.ndarray
    victory: np.ndarray
    n_cities: np.ndarray
    n_units: np.ndarray
    n_events: np.ndarray
    tile_terrain: np.ndarray
    tile_node: np.ndarray
    tile_bought_by: np.ndarray
    seat_alive: np.ndarray
    seat_human: np.ndarray
    seat_gold: np.ndarray
    seat_science: np.ndarray
    seat_techs: np.ndarray
    seat_dominance: np.ndarray
    seat_capital: np.ndarray
    seat_personality: np.ndarray
    seat_eliminated_turn: np.ndarray
    city_tile: np.ndarray
    city_owner: np.ndarray
    city_pop: np.ndarray
    city_hp: np.ndarray
    city_food: np.ndarray
    city_production: np.ndarray
    city_capital: np.ndarray
    city_revolt: np.ndarray
    city_revolt_cause: np.ndarray
    city_buildings: np.ndarray
    city_queue: np.ndarray
    unit_type: np.ndarray
    unit_owner: np.ndarray
    unit_tile: np.ndarray
    unit_hp: np.ndarray
    unit_moves_left: np.ndarray
    unit_camp: np.ndarray
    camp_tile: np.ndarray
    camp_timer: np.ndarray
    truce_turns: np.ndarray
    pact_target: np.ndarray
    pact_members: np.ndarray
    pact_turns: np.ndarray
    event_log: np.ndarray


def empty_state(n_tiles: int, n_seats: int, n_techs: int, n_buildings: int,
                capacity: Capacity = Capacity()) -> State:
    """A state with every slot unused and every seat standing with nothing."""
    if not 1 <= n_seats <= MAX_SEATS:
        raise ValueError(f"seats must be 1..{MAX_SEATS}, got {n_seats}")
    C, U, M, P, E = capacity

    def one(v: int) -> np.ndarray:
        return np.array([v], dtype=np.int64)

    def full(shape, v: int = NONE) -> np.ndarray:
        return np.full(shape, v, dtype=np.int64)

    return State(
        turn=one(1), active_seat=one(0), last_turn=one(100), finished=one(0),
        winner=one(NONE), victory=one(NONE), n_cities=one(0), n_units=one(0), n_events=one(0),
        tile_terrain=full(n_tiles, PLAINS), tile_node=full(n_tiles), tile_bought_by=full(n_tiles),
        seat_alive=np.ones(n_seats, dtype=np.bool_), seat_human=np.zeros(n_seats, dtype=np.bool_),
        seat_gold=full(n_seats, 0), seat_science=full(n_seats, 0),
        seat_techs=np.zeros((n_seats, n_techs), dtype=np.bool_),
        seat_dominance=full(n_seats, 0), seat_capital=full(n_seats),
        seat_personality=full(n_seats, 0), seat_eliminated_turn=full(n_seats),
        city_tile=full(C), city_owner=full(C), city_pop=full(C, 0), city_hp=full(C, 0),
        city_food=full(C, 0), city_production=full(C, 0),
        city_capital=np.zeros(C, dtype=np.bool_), city_revolt=full(C, 0),
        city_revolt_cause=full(C, 0), city_buildings=np.zeros((C, n_buildings), dtype=np.bool_),
        city_queue=full((C, QUEUE_SLOTS)),
        unit_type=full(U), unit_owner=full(U), unit_tile=full(U), unit_hp=full(U, 0),
        unit_moves_left=full(U, 0), unit_camp=full(U),
        camp_tile=full(M), camp_timer=full(M, 0),
        truce_turns=full((n_seats, n_seats), 0),
        pact_target=full(P), pact_members=np.zeros((P, n_seats), dtype=np.bool_),
        pact_turns=full(P, 0),
        event_log=full((E, EVENT_FIELDS), 0),
    )


def copy_state(state: State) -> State:
    """A deep copy (every array copied)."""
    return State(*(a.copy() for a in state))


def states_equal(a: State, b: State) -> bool:
    """True when every array of `a` equals the same array of `b`."""
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))

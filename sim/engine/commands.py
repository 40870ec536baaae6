"""Python face of the rules engine: command names, refusal texts, dispatch.

Rule logic lives in sim.kernels; this module only translates between the
kernels' integer codes and the words and JSON a designer reads.
"""

from __future__ import annotations

import numpy as np

from sim.kernels.rules.capture import capture_city, enter_check
from sim.kernels.rules.combat import resolve_attack
from sim.kernels.rules.commands import (
    buy_tile,
    buy_truce,
    disband_unit,
    found_city,
    move_unit,
    queue_item,
    repair,
    research,
    rush,
    set_seat,
)
from sim.kernels.rules.flow import end_turn
from sim.kernels.timing import no_ticks
from sim.rules import codes as R
from sim.rules.codes import (
    C_ATTACK,
    C_BUY_TILE,
    C_DISBAND,
    C_END_TURN,
    C_ENTER,
    C_FOUND,
    C_MOVE,
    C_QUEUE,
    C_REPAIR,
    C_RESEARCH,
    C_RUSH,
    C_SET_SEAT,
    C_TRUCE,
    OWNER_NAMES,
)
from sim.rules.tables import Tables
from sim.world.board import Board
from sim.world.state import (
    State,
)

# scenario `do` name -> (kernel code, required keys)
COMMANDS: dict[str, tuple[int, tuple[str, ...]]] = {
    "move": (C_MOVE, ("unit", "to")),
    "attack": (C_ATTACK, ("unit", "target")),
    "enter": (C_ENTER, ("unit", "city")),
    "found": (C_FOUND, ("unit",)),
    "buy_tile": (C_BUY_TILE, ("city", "at")),
    "queue": (C_QUEUE, ("city", "item")),
    "rush": (C_RUSH, ("city",)),
    "repair": (C_REPAIR, ("city", "hp")),
    "research": (C_RESEARCH, ("tech",)),
    "truce": (C_TRUCE, ("with",)),
    "end_turn": (C_END_TURN, ()),
    "disband": (C_DISBAND, ("unit",)),
    "play_turns": (-1, ("n",)),
    "set_seat": (C_SET_SEAT, ("seat",)),
}

REASON_TEXT: dict[int, str] = {
    R.R_FINISHED: "the match is over",
    R.R_NO_UNIT: "unit {unit} is not on the board",
    R.R_NOT_YOUR_UNIT: "unit {unit} belongs to {unit_owner}, not seat {seat}",
    R.R_NO_MOVES: "unit {unit} has no moves left this turn",
    R.R_CANNOT_ATTACK: "unit {unit} ({unit_type}) cannot attack",
    R.R_OUT_OF_RANGE: "the target is out of range of unit {unit} ({unit_type})",
    R.R_NO_TARGET: "there is nothing to attack on that tile",
    R.R_ATTACK_OWN: "seat {seat} cannot attack its own side",
    R.R_TRUCE: "truce with seat {other}: cannot attack it or enter its cities",
    R.R_PACT: "pact with seat {other}: cannot attack it or enter its cities",
    R.R_CITY_AT_ZERO: "city {city} is already at 0 HP; enter it to capture",
    R.R_NO_CITY: "city {city} does not exist",
    R.R_NOT_YOUR_CITY: "city {city} belongs to {city_owner}, not seat {seat}",
    R.R_CITY_HAS_HP: "city {city} still has {city_hp} HP; it must be at 0 to be entered",
    R.R_NOT_ADJACENT: "unit {unit} is not next to city {city}",
    R.R_NOT_MELEE: "unit {unit} ({unit_type}) cannot capture: only melee fighting units do",
    R.R_IMPASSABLE: "that tile is impassable (mountain or water)",
    R.R_OCCUPIED: "another unit stands on that tile",
    R.R_FOREIGN_CITY: "that tile is another side's city; use enter to capture it",
    R.R_NO_PATH: "no path within the unit's moves left",
    R.R_NOT_SETTLER: "unit {unit} ({unit_type}) cannot found cities",
    R.R_TOO_CLOSE: "too close to another city: cities stay at least {min_distance} steps apart",
    R.R_IN_REGION: "the tile lies inside a city's region",
    R.R_QUOTA: "seat {seat} already holds its quota of {quota} cities",
    R.R_CAPACITY: "no room for another city or unit in this match",
    R.R_BUY_NEUTRAL: "a neutral village has no region and cannot buy tiles",
    R.R_BUY_IN_REGION: "the tile already belongs to a region",
    R.R_BUY_NOT_ADJACENT: "the tile is not next to city {city}'s region",
    R.R_NO_GOLD: "not enough gold: {price} needed, seat {seat} has {gold}",
    R.R_QUEUE_FULL: "city {city}'s queue is full",
    R.R_TECH_MISSING: "seat {seat} does not know the tech {item} needs",
    R.R_ALREADY_BUILT: "city {city} already has {item}",
    R.R_ALREADY_QUEUED: "{item} is already in city {city}'s queue",
    R.R_ONE_PER_EMPIRE: "one {item} per empire: seat {seat} already holds or queues one",
    R.R_SETTLER_POP: "a settler needs a city of population {settler_pop} or more",
    R.R_QUEUE_EMPTY: "city {city}'s queue is empty",
    R.R_NOT_RUSHABLE: "{item} can never be bought or rushed with gold",
    R.R_NOTHING_TO_RUSH: "the front item is already paid for",
    R.R_HP_RANGE: "repair must be between 1 HP and the city's missing HP",
    R.R_TECH_KNOWN: "seat {seat} already knows {tech}",
    R.R_PREREQ: "{tech} needs its prerequisites first",
    R.R_NO_SCIENCE: "not enough science points for {tech}",
    R.R_BAD_SEAT: "no such seat to deal with",
    R.R_SEAT_OUT: "that seat is eliminated",
    R.R_TRUCE_EXISTS: "a truce with that seat is already running",
    R.R_BAD_ITEM: "unknown item",
    R.R_FORBIDDEN: "forbidden to this seat by the experiment (seat_ai forbid)",
    R.R_PRICE_LOW: "a truce offer below diplomacy.truce_price (D9)",
}


def _enter(st, tb, board, unit, city, seat):
    why = enter_check(st, tb, board, unit, city, seat)
    if why == R.OK:
        capture_city(st, tb, board, unit, city, seat)
    return why


def _end_turn(st, tb, board, _a, _b, _seat):
    end_turn(st, tb, board, no_ticks())
    return R.OK


# kernel per command code, called as f(state, tb, board, a, b, seat). Scenarios
# dispatch here in Python rather than through one jitted dispatcher, so a
# scenario compiles only the rules it exercises (a cold start stays short).
_KERNELS = {
    C_MOVE: move_unit,
    C_ATTACK: resolve_attack,
    C_ENTER: _enter,
    C_FOUND: lambda st, tb, board, a, _b, seat: found_city(st, tb, board, a, seat),
    C_BUY_TILE: buy_tile,
    C_QUEUE: lambda st, tb, _board, a, b, seat: queue_item(st, tb, a, b, seat),
    C_RUSH: lambda st, tb, _board, a, _b, seat: rush(st, tb, a, seat),
    C_REPAIR: lambda st, tb, _board, a, b, seat: repair(st, tb, a, b, seat),
    C_RESEARCH: lambda st, tb, _board, a, _b, seat: research(st, tb, a, seat),
    C_TRUCE: lambda st, tb, _board, a, _b, seat: buy_truce(st, tb, a, seat),
    C_END_TURN: _end_turn,
    C_SET_SEAT: lambda st, _tb, _board, a, _b, _seat: set_seat(st, a),
    C_DISBAND: lambda st, _tb, _board, a, _b, seat: disband_unit(st, a, seat),
}


def run_command(state: State, tb: np.record, board: Board, code: int, a: int, b: int) -> int:
    """Apply one command as the active seat through its rule kernel (the AI calls the same)."""
    if state.finished[0]:
        return R.R_FINISHED
    seat = np.int64(state.active_seat[0])
    return int(_KERNELS[code](state, tb, board, np.int64(a), np.int64(b), seat))


def owner_name(owner: int) -> int | str:
    """A seat index, or "neutral" / "bandit" (SCENARIOS.md)."""
    return OWNER_NAMES.get(int(owner), int(owner))


def item_name(tables: Tables, item: int) -> str:
    units = tables.unit_names
    return units[item] if item < len(units) else tables.building_names[item - len(units)]

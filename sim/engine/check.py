"""Invariant checker: plain Python, readable, run by tests after every command and
by `sim match --check` after every turn. Returns a list of violations (empty = fine).

Invariants: one owner per tile (T08), population within 1..ceiling (T15),
0 <= HP <= max, exactly one capital per standing seat and none for others,
eliminated seats own nothing (V02), counters within bounds (V18), revolt no
longer than its longest cause (V11, V14), tile lookups consistent with units
and cities, cities at least city_min_distance apart (T07).
"""

from __future__ import annotations

import numpy as np

from sim.kernels.rules.standings import regions
from sim.rules.codes import (
    BANDIT,
    NEUTRAL,
)
from sim.rules.record import TableArrays
from sim.rules.tables import Tables
from sim.world.board import Board
from sim.world.state import (
    State,
)


def check_invariants(state: State, tables: Tables, board: Board,
                     tb: TableArrays | None = None) -> list[str]:
    """Every violated invariant of `state`, in words. `tb` is the record the match
    plays with (its length preset's and seat count's scales, D6); by default the
    tables' own preset at the state's seat count."""
    n_seats = int(state.n_seats[0])
    if tb is None:
        tb = tables.arrays(None, n_seats)
    n_units = int(state.n_units[0])
    # the city slots in use whose city stands on a tile
    cities = [c for c in range(int(state.n_cities[0])) if state.city_tile[c] >= 0]
    return (_tile_problems(state, tb, board)
            + [p for c in cities for p in _city_problems(state, tb, board, n_seats, cities, c)]
            + [p for s in range(n_seats) for p in _seat_problems(state, tb, cities, n_units, s)]
            + _unit_problems(state, tb, board, n_seats, n_units)
            + _truce_problems(state, n_seats))


def _tile_problems(state: State, tb: TableArrays, board: Board) -> list[str]:
    """One owner per tile (T08): every tile of a region (kernels.rules.standings.regions,
    (T,) city or -1) belongs to a standing, owned city; a bought tile is passable."""
    out: list[str] = []
    tile_city = regions(state, tb, board)
    for t in range(board.n_tiles):
        c = tile_city[t]
        if c >= 0 and (state.city_tile[c] < 0 or state.city_owner[c] < 0):
            out.append(f"tile {board.axial(t)} owned by city {c}, which holds no region")
        b = state.tile_bought_by[t]
        if b >= 0 and not tb.terrain_passable[state.tile_terrain[t]]:
            out.append(f"bought tile {board.axial(t)} is impassable")
    return out


def _city_problems(state: State, tb: TableArrays, board: Board, n_seats: int,
                   cities: list[int], c: int) -> list[str]:
    """City `c`: population within 1..ceiling (T15), HP within 0..max, an owner that is
    a standing seat or neutral, its tile pointing back at it, a revolt no longer than
    its longest cause and only with a cause (V11, V14), the capital flag only on its
    seat's capital, and the cities before it at least city_min_distance away (T07)."""
    out: list[str] = []
    pop = int(state.city_pop[c])
    if not 1 <= pop <= tb.max_population:
        out.append(f"city {c} population {pop} outside 1..{tb.max_population}")
    hp_max = tb.hp_base + tb.hp_per_population * pop + int(
        (tb.building_hp * state.city_buildings[c]).sum())
    if not 0 <= state.city_hp[c] <= hp_max:
        out.append(f"city {c} HP {state.city_hp[c]} outside 0..{hp_max}")
    owner = int(state.city_owner[c])
    if owner != NEUTRAL and not 0 <= owner < n_seats:
        out.append(f"city {c} has owner {owner}")
    if owner >= 0 and not state.seat_alive[owner]:
        out.append(f"eliminated seat {owner} still owns city {c}")
    if state.tile_site[state.city_tile[c]] != c:
        out.append(f"tile_site does not point at city {c}")
    longest = max(tb.revolt_transfer_turns, tb.unrest_turns)
    if not 0 <= state.city_revolt[c] <= longest:
        out.append(f"city {c} revolt {state.city_revolt[c]} outside 0..{longest}")
    if (state.city_revolt[c] > 0) != (state.city_revolt_cause[c] > 0):
        out.append(f"city {c} revolt {state.city_revolt[c]} with cause "
                   f"{state.city_revolt_cause[c]}")
    if state.city_capital[c] and (owner < 0 or state.seat_capital[owner] != c):
        out.append(f"city {c} is flagged capital but is not its seat's capital")
    for o in cities:
        if o < c and board.distance[state.city_tile[c], state.city_tile[o]] < \
                tb.city_min_distance:
            out.append(f"cities {o} and {c} closer than {tb.city_min_distance} (T07)")
    return out


def _seat_problems(state: State, tb: TableArrays, cities: list[int], n_units: int,
                   s: int) -> list[str]:
    """Seat `s`: standing, exactly one capital and at least one city (V02); eliminated,
    no city and no unit on the board; its dominance counter below the win (V18: at it
    only once the match is over), gold and science not negative."""
    out: list[str] = []
    held = [c for c in cities if state.city_owner[c] == s]
    capitals = [c for c in held if state.city_capital[c]]
    if state.seat_alive[s]:
        if len(capitals) != 1 or state.seat_capital[s] != capitals[0]:
            out.append(f"seat {s} standing with capitals {capitals} "
                       f"(seat_capital {state.seat_capital[s]})")
        if not held:
            out.append(f"seat {s} standing with no city (V02)")
    else:
        if held:
            out.append(f"eliminated seat {s} owns cities {held}")
        if any(state.unit_owner[u] == s and state.unit_tile[u] >= 0 for u in range(n_units)):
            out.append(f"eliminated seat {s} still has units on the board")
    top = tb.dominance_to_win if state.finished[0] else tb.dominance_to_win - 1
    if not 0 <= state.seat_dominance[s] <= top:
        out.append(f"seat {s} dominance counter {state.seat_dominance[s]} out of bounds")
    if state.seat_gold[s] < 0:
        out.append(f"seat {s} gold {state.seat_gold[s]} below 0")
    if state.seat_science[s] < 0:
        out.append(f"seat {s} science {state.seat_science[s]} below 0")
    return out


def _unit_problems(state: State, tb: TableArrays, board: Board, n_seats: int,
                   n_units: int) -> list[str]:
    """Units on the board: one per tile, tile_unit pointing back at each and at no
    other tile, a seat or the bandits as owner, passable ground, no unit inside
    another side's city (a bandit in none: V06, D4), HP within 1..its full (D3)."""
    out: list[str] = []
    seen: dict[int, int] = {}  # tile -> the unit found standing there
    for u in range(n_units):
        t = int(state.unit_tile[u])
        if t < 0:
            continue
        if t in seen:
            out.append(f"units {seen[t]} and {u} share tile {board.axial(t)}")
        seen[t] = u
        if state.tile_unit[t] != u:
            out.append(f"tile_unit does not point at unit {u}")
        owner = int(state.unit_owner[u])
        if owner != BANDIT and not 0 <= owner < n_seats:
            out.append(f"unit {u} has owner {owner}")
        if not tb.terrain_passable[state.tile_terrain[t]]:
            out.append(f"unit {u} on impassable tile {board.axial(t)}")
        site = int(state.tile_site[t])
        if site >= 0 and int(state.city_owner[site]) != owner:
            out.append(f"unit {u} of {owner} inside city {site} of another side")
        if state.unit_hp[u] <= 0:
            out.append(f"unit {u} alive with {state.unit_hp[u]} HP")
        utype = int(state.unit_type[u])
        full = tb.bandit_hp if utype < 0 else tb.unit_hp[utype]
        if state.unit_hp[u] > full:
            out.append(f"unit {u} has {state.unit_hp[u]} HP, above its full {full} (D3)")
        if owner == BANDIT and site >= 0:
            out.append(f"bandit {u} stands in city {site} (V06, D4)")
    occupied = np.flatnonzero(state.tile_unit >= 0)
    for t in occupied:
        if int(t) not in seen:
            out.append(f"tile_unit of {board.axial(int(t))} points at a unit not there")
    return out


def _truce_problems(state: State, n_seats: int) -> list[str]:
    """The (S, S) truce table over the real seats: symmetric, never negative."""
    truce = state.truce_turns[:n_seats, :n_seats]
    if np.any(truce != truce.T) or np.any(truce < 0):
        return ["truce table not symmetric or negative"]
    return []

"""Plain-Python oracle for the rules engine: combat, capture and capital falls, a
seat's flow, the dominance check and the turn cycle's end (RULES.md V01–V20,
T01–T16, B1–B9 and part C).

Written loop by loop from the rule text and the formulas the kernels document
(the damage formula of sim.kernels.rules.combat's docstring), on plain dataclasses
keyed by axial coordinates and by the *names* of units, buildings, techs and
cards. It reads balance values from the validated tables model (`tables.model`),
never from the compiled arrays, and shares no code with sim/kernels: the only
engine imports are the state record's encoding (`empty_state`, STATE_DOC codes)
and the event row encoding of sim.rules.codes (kind names, the attack row's
DAMAGE_SPLIT, DISBAND_CAUSES), used by the converters `position_from_state` /
`state_from_position` and by `Position.log`'s callers, never in a rule's arithmetic.

Where the rules are silent and the engine documents a choice (which unit a
short treasury disbands, the order events are logged, the tile a new unit
appears on), the oracle follows the documented choice and says so in a comment
marked "engine choice".

Territory (T01, T03, T08, T09) and score ranking (T11, T13) come from the
sibling oracle tests/reference/territory.py.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from sim.rules.codes import (
    DAMAGE_SPLIT,
    DISBAND_CAUSES,
    DRAW_EVENT_CARD,
    DRAW_UNREST_CITY,
    EVENT_NAMES,
)

# the state record's encoding (STATE_DOC) and the event row layout: used by the two
# converters only, never by the rule functions
from sim.world.state import empty_state
from tests.reference.territory import City as TCity
from tests.reference.territory import Rules as TRules
from tests.reference.territory import board_tiles, hex_distance, score_table, tile_owners

Tile = tuple[int, int]
Owner = Any  # a seat index (int), "neutral" (villages) or "bandit" (bandit units)

# sim.world.board's docstring: the neighbour direction order (q, r) steps
NEIGHBOUR_STEPS: tuple[Tile, ...] = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))
# STATE_DOC codes, spelled out here so the oracle does not import them
VICTORIES = ("conquest", "science", "dominance", "turn_limit", "human_out")
REVOLT_CAUSES = (None, "transfer", "unrest")
TERRAINS = ("plains", "forest", "hills", "mountain", "water")
NODE_KINDS = ("food", "production", "gold")
NEUTRAL_CODE, BANDIT_CODE = -2, -3
MASK64 = (1 << 64) - 1


# ---------------------------------------------------------------- rules ----

@dataclass
class EngineRules:
    """Balance values by name, read from the validated tables model.

    Codes follow the tables' contract: units, buildings, techs and cards are
    numbered in the order of their sorted names (sim.rules.tables docstring).
    """

    m: Any
    territory: TRules
    unit_order: list[str]
    building_order: list[str]
    tech_order: list[str]
    card_order: list[str]

    @classmethod
    def from_tables(cls, tables) -> EngineRules:
        m = tables.model
        t, s = m.territory, m.score
        territory = TRules(
            ring_radius=t.ring_radius, grown_ring_radius=t.grown_ring_radius,
            grown_ring_population=t.grown_ring_population, w_region=s.w_region,
            w_population=s.w_population, w_city=s.w_city, gold_per_point=s.gold_per_point,
            tile_price_first=t.tile_price_first, tile_price_step=t.tile_price_step,
            monument_points={n: b.score_points for n, b in m.buildings.items()
                             if b.score_points})
        return cls(m, territory, sorted(m.units), sorted(m.buildings), sorted(m.techs),
                   sorted(m.events.cards))

    # --- names and codes
    def item_code(self, name: str) -> int:
        if name in self.m.units:
            return self.unit_order.index(name)
        return len(self.unit_order) + self.building_order.index(name)

    def unit_code(self, name: str) -> int:
        """A unit type's code in the event log; -1 for a bandit (bandits have no type)."""
        return -1 if name == "bandit" else self.unit_order.index(name)

    def item_name(self, code: int) -> str:
        n = len(self.unit_order)
        return self.unit_order[code] if code < n else self.building_order[code - n]

    def item_cost(self, name: str) -> int:
        if name in self.m.units:
            return self.m.units[name].cost
        return self.m.buildings[name].cost

    def is_science_building(self, name: str) -> bool:
        return name in self.m.buildings and self.m.buildings[name].science_victory

    # --- terrain
    def passable(self, terrain: str) -> bool:
        return getattr(self.m.terrain, terrain).passable

    def terrain_defence_pct(self, terrain: str) -> int:
        return getattr(self.m.terrain, terrain).defence_pct

    # --- units (a bandit takes its numbers from the neutrals table, C: Neutrals)
    def attack(self, utype: str) -> int:
        return self.m.neutrals.bandit_attack if utype == "bandit" else self.m.units[utype].attack

    def defence(self, utype: str) -> int:
        return self.m.neutrals.bandit_defence if utype == "bandit" \
            else self.m.units[utype].defence

    def full_hp(self, utype: str) -> int:
        return self.m.neutrals.bandit_hp if utype == "bandit" else self.m.units[utype].hp

    def moves(self, utype: str) -> int:
        return self.m.neutrals.bandit_moves if utype == "bandit" else self.m.units[utype].moves

    def range(self, utype: str) -> int:
        return 0 if utype == "bandit" else self.m.units[utype].range

    def founds_city(self, utype: str) -> bool:
        return utype != "bandit" and self.m.units[utype].founds_city

    def is_military(self, utype: str) -> bool:
        """C: Economy — upkeep counts fighting units: not settlers, attack > 0, not bandits."""
        return utype != "bandit" and not self.founds_city(utype) and self.attack(utype) > 0

    # --- cities
    def max_hp(self, pop: int, buildings: set[str]) -> int:
        """C: Cities — base + per population × pop, plus the HP of buildings (Walls)."""
        c = self.m.city
        return c.hp_base + c.hp_per_population * pop + sum(
            self.m.buildings[b].hp for b in buildings)

    def growth_cost(self, pop: int) -> int:
        return self.m.city.growth_base + self.m.city.growth_per_population * pop


# ------------------------------------------------------------- position ----

class Event(NamedTuple):
    """One row of the event log (sim.kernels.rules.events); kind by name, the rest ints."""

    turn: int
    kind: str
    seat: int
    by: int
    city: int
    a: int = 0
    b: int = 0
    c: int = 0


@dataclass
class Seat:
    alive: bool = True
    human: bool = False
    gold: int = 0
    science: int = 0
    techs: set[str] = field(default_factory=set)
    dominance: int = 0
    capital: int | None = None
    eliminated_turn: int | None = None
    personality: int = 0
    lost_turn: int | None = None   # engine bookkeeping: last turn it lost a city to capture


@dataclass
class City:
    id: int
    owner: Owner
    at: Tile
    pop: int
    hp: int
    food: int = 0
    production: int = 0
    capital: bool = False
    revolt: int = 0
    revolt_cause: str | None = None
    buildings: set[str] = field(default_factory=set)
    queue: list[str] = field(default_factory=list)


@dataclass
class Unit:
    id: int
    owner: Owner
    type: str          # a unit name, or "bandit"
    at: Tile | None    # None once dead
    hp: int
    moves_left: int
    camp: int | None = None


@dataclass
class Pact:
    target: int | None = None
    members: set[int] = field(default_factory=set)
    turns: int = 0


@dataclass
class Position:
    radius: int
    terrain: dict[Tile, str]
    nodes: dict[Tile, str]
    bought: dict[Tile, int]
    seats: list[Seat]
    cities: list[City]
    units: list[Unit]
    truce: list[list[int]]
    pacts: list[Pact]
    camps: list[Tile | None]
    turn: int = 1
    last_turn: int = 100
    active_seat: int = 0
    finished: bool = False
    winner: int | None = None
    victory: str | None = None
    events: list[Event] = field(default_factory=list)
    n_events: int = 0
    event_capacity: int = 8192
    unit_capacity: int = 2048
    rng_events: int = 0

    # --- lookups
    def city_at(self, tile: Tile) -> City | None:
        for c in self.cities:
            if c.at == tile:
                return c
        return None

    def unit_at(self, tile: Tile) -> Unit | None:
        for u in self.units:
            if u.at == tile:
                return u
        return None

    def cities_of(self, seat: int) -> list[City]:
        return [c for c in self.cities if c.owner == seat]

    def on_board(self, tile: Tile) -> bool:
        q, r = tile
        return abs(q) <= self.radius and abs(r) <= self.radius and abs(q + r) <= self.radius

    def log(self, kind: str, seat: int, by: int, city: int, a: int = 0, b: int = 0,
            c: int = 0) -> int:
        """Append an event; returns its row (rows past the capacity are only counted)."""
        row = self.n_events
        if row < self.event_capacity:
            self.events.append(Event(self.turn, kind, seat, by, city, a, b, c))
        self.n_events += 1
        return row


def owner_code(owner: Owner) -> int:
    if owner == "neutral":
        return NEUTRAL_CODE
    if owner == "bandit":
        return BANDIT_CODE
    return int(owner)


def owner_from_code(code: int) -> Owner:
    if code == NEUTRAL_CODE:
        return "neutral"
    if code == BANDIT_CODE:
        return "bandit"
    return int(code)


# ---------------------------------------------------------- splitmix64 ----

class Stream:
    """splitmix64 over a 64-bit counter, as sim.world.rng documents it."""

    GOLDEN = 0x9E3779B97F4A7C15
    MIX1 = 0xBF58476D1CE4E5B9
    MIX2 = 0x94D049BB133111EB

    def __init__(self, counter: int):
        self.counter = counter & MASK64

    def next_u64(self) -> int:
        self.counter = (self.counter + self.GOLDEN) & MASK64
        z = self.counter
        z = ((z ^ (z >> 30)) * self.MIX1) & MASK64
        z = ((z ^ (z >> 27)) * self.MIX2) & MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """Uniform in [0, n): draws at or above the largest multiple of n are rejected."""
        limit = MASK64 - (MASK64 % n)
        while True:
            x = self.next_u64()
            if x < limit:
                return x % n

    def weighted(self, weights: list[int]) -> int:
        x = self.below(sum(weights))
        for i, w in enumerate(weights):
            x -= w
            if x < 0:
                return i
        return len(weights) - 1


def _finalise(z: int) -> int:
    z = ((z ^ (z >> 30)) * Stream.MIX1) & MASK64
    z = ((z ^ (z >> 27)) * Stream.MIX2) & MASK64
    return z ^ (z >> 31)


def draw_key(stream: int, turn: int, purpose: int, subject: int) -> int:
    """A play draw's key (sim.world.rng.draw_key): the stream folded with the turn,
    the purpose and the subject through splitmix64's output function."""
    h = _finalise((stream + Stream.GOLDEN * (turn + 1)) & MASK64)
    h = _finalise((h + Stream.GOLDEN * (purpose + 1)) & MASK64)
    return _finalise((h + Stream.GOLDEN * (subject + 2)) & MASK64)


def keyed_below(key: int, n: int) -> int:
    """floor(u × n), u = the key's top 32 bits over 2^32 (sim.world.rng.keyed_below)."""
    return ((key >> 32) * n) >> 32


def keyed_weighted(key: int, weights: list[int]) -> int:
    x = keyed_below(key, sum(weights))
    for i, w in enumerate(weights):
        x -= w
        if x < 0:
            return i
    return len(weights) - 1


# --------------------------------------------------------- small helpers ----

def _kill(unit: Unit) -> None:
    """A dead unit leaves the board; its slot stays (STATE_DOC: hp 0, no moves)."""
    unit.at = None
    unit.hp = 0
    unit.moves_left = 0


def truce_between(pos: Position, a: Owner, b: Owner) -> bool:
    return isinstance(a, int) and isinstance(b, int) and a != b and pos.truce[a][b] > 0


def pact_together(pos: Position, a: Owner, b: Owner) -> bool:
    if not (isinstance(a, int) and isinstance(b, int)):
        return False
    return any(p.target is not None and a in p.members and b in p.members for p in pos.pacts)


def pact_against(pos: Position, seat: Owner, target: Owner) -> bool:
    """`seat` is a member of a live pact against `target`."""
    return any(p.target == target and seat in p.members for p in pos.pacts)


def protection_refusals(pos: Position, seat: Owner, owner: Owner) -> set[str]:
    """V07: what stops `seat` from attacking (or entering the cities of) `owner`.
    The pact's target is not protected (our reading: not by a truce with a member
    either, so a truce cannot shield an announced Observatory from the pact)."""
    out: set[str] = set()
    if owner == seat:
        out.add("R_ATTACK_OWN")
        return out
    if truce_between(pos, seat, owner) and not pact_against(pos, seat, owner):
        out.add("R_TRUCE")
    if pact_together(pos, seat, owner):
        out.add("R_PACT")
    return out


def _territory_cities(pos: Position) -> list[TCity]:
    return [TCity(c.id, c.owner, c.at, c.pop, sorted(c.buildings)) for c in pos.cities]


def region_owners(pos: Position, rules: EngineRules) -> dict[Tile, int]:
    """T01, T03, T05, T06, T08: the city owning each tile (territory oracle)."""
    return tile_owners(pos.radius, _territory_cities(pos), pos.bought, rules.territory)


def ranking(pos: Position, rules: EngineRules) -> list[int]:
    """T10–T13 scores and the T11 order (standing seats first): seats, best first."""
    rows = score_table(pos.radius, _territory_cities(pos), pos.bought,
                       [s.gold for s in pos.seats], [s.alive for s in pos.seats],
                       rules.territory)
    return [row["seat"] for row in sorted(rows, key=lambda row: row["rank"])]


def finish(pos: Position, victory: str, winner: int) -> None:
    """V01: the first victory to be declared ends the match; later ones are void."""
    if pos.finished:
        return
    pos.finished = True
    pos.victory = victory
    pos.winner = winner
    pos.log("victory", winner, -1, -1, VICTORIES.index(victory))


# --------------------------------------------------------------- combat ----

class AttackPreview(NamedTuple):
    refusals: frozenset[str]   # every reason the rules give to refuse; empty = legal
    kind: str | None           # "unit" or "city"
    target: int | None
    damage_to_target: int
    damage_to_attacker: int


def city_defence(pos: Position, rules: EngineRules, city: City) -> int:
    """Defence strength ×100 of a city (combat docstring, C: Combat, V11).

    Base = defence_base + defence_per_population × pop (a village: village_defence),
    times (100 + terrain % + Walls %) / 100, then × revolt defence % while in revolt.
    """
    m = rules.m
    if city.owner == "neutral":
        base = m.neutrals.village_defence
    else:
        base = m.city.defence_base + m.city.defence_per_population * city.pop
    pct = 100 + rules.terrain_defence_pct(pos.terrain[city.at])
    for b in city.buildings:
        pct += m.buildings[b].defence_pct
    strength = base * max(pct, 0)          # the ×100 scale and the percentage cancel
    if city.revolt > 0:
        strength = strength * m.revolt.defence_pct // 100
    return max(strength, 1)


def unit_defence(pos: Position, rules: EngineRules, unit: Unit) -> int:
    """Defence strength ×100 of a unit: defence × (100 + terrain %) / 100 (hills, forest)."""
    pct = 100 + rules.terrain_defence_pct(pos.terrain[unit.at])
    return max(rules.defence(unit.type) * max(pct, 0), 1)


def attack_preview(pos: Position, rules: EngineRules, unit_id: int, target_at: Tile,
                   seat: Owner) -> AttackPreview:
    """T16: the preview is the calculation. What `unit_id`, acting for `seat`, would do
    to whatever stands on `target_at`: a city (its garrison does not fight) or a unit.
    Neutrals never attack a city (V06): for a bandit only units are targets (engine
    choice: a bandit aimed at a city tile strikes the garrison unit standing there)."""
    none = AttackPreview(frozenset({"R_NO_UNIT"}), None, None, 0, 0)
    if not 0 <= unit_id < len(pos.units) or pos.units[unit_id].at is None:
        return none
    unit = pos.units[unit_id]
    refusals: set[str] = set()
    if unit.owner != seat:
        refusals.add("R_NOT_YOUR_UNIT")
    if rules.attack(unit.type) <= 0:
        refusals.add("R_CANNOT_ATTACK")
    if unit.moves_left <= 0:
        refusals.add("R_NO_MOVES")

    city = pos.city_at(target_at)
    victim = pos.unit_at(target_at)
    if city is not None and seat != "bandit":
        kind, target, owner = "city", city, city.owner
    elif victim is not None and victim is not unit:
        kind, target, owner = "unit", victim, victim.owner
    else:
        refusals.add("R_NO_TARGET")
        return AttackPreview(frozenset(refusals), None, None, 0, 0)

    reach = rules.range(unit.type) if rules.range(unit.type) > 0 else 1  # melee: adjacent
    if not 1 <= hex_distance(unit.at, target_at) <= reach:
        refusals.add("R_OUT_OF_RANGE")
    refusals |= protection_refusals(pos, seat, owner)
    if kind == "city" and city.hp <= 0:
        refusals.add("R_CITY_AT_ZERO")  # at 0 HP a city is entered, not attacked (V05)
    if refusals:
        return AttackPreview(frozenset(refusals), kind, target.id, 0, 0)

    m = rules.m
    a = rules.attack(unit.type) * 100
    if kind == "city":
        if unit.type != "bandit":
            a = a * m.units[unit.type].city_attack_pct // 100   # siege bonus (catapult)
        d = city_defence(pos, rules, city)
    else:
        d = unit_defence(pos, rules, victim)
    a = max(a, 1)
    scale, least = m.combat.damage_scale, m.combat.min_damage
    to_target = max(least, scale * a // (a + d))
    to_attacker = 0
    melee = rules.range(unit.type) == 0
    if melee and (kind == "unit" or m.combat.city_attack_retaliation):
        to_attacker = max(least, scale * d // (a + d))   # ranged attackers take none
    return AttackPreview(frozenset(), kind, target.id, to_target, to_attacker)


def attack(pos: Position, rules: EngineRules, unit_id: int, target_at: Tile,
           seat: Owner) -> tuple[AttackPreview, Position]:
    """Apply the preview (T16): units die at 0 HP, a city stops at 0 HP (V05).
    Engine choice: attacking spends the attacker's remaining moves."""
    out = copy.deepcopy(pos)
    return attack_in_place(out, rules, unit_id, target_at, seat), out


def attack_in_place(pos: Position, rules: EngineRules, unit_id: int, target_at: Tile,
                    seat: Owner) -> AttackPreview:
    preview = attack_preview(pos, rules, unit_id, target_at, seat)
    if preview.refusals:
        return preview
    attacker = pos.units[unit_id]
    damages = preview.damage_to_target + DAMAGE_SPLIT * preview.damage_to_attacker
    if preview.kind == "city":
        target = pos.cities[preview.target]
        pos.log("attack", owner_code(seat), owner_code(target.owner), target.id,
                rules.unit_code(attacker.type), -1, damages)
    else:
        target = pos.units[preview.target]
        pos.log("attack", owner_code(seat), owner_code(target.owner), -1,
                rules.unit_code(attacker.type), rules.unit_code(target.type), damages)
    if preview.kind == "city":
        city = pos.cities[preview.target]
        city.hp = max(city.hp - preview.damage_to_target, 0)
    else:
        victim = pos.units[preview.target]
        victim.hp -= preview.damage_to_target
        if victim.hp <= 0:
            _kill(victim)
    attacker.moves_left = 0
    if preview.damage_to_attacker > 0:
        attacker.hp -= preview.damage_to_attacker
        if attacker.hp <= 0:
            _kill(attacker)
    return preview


# -------------------------------------------------------------- capture ----

def enter_refusals(pos: Position, rules: EngineRules, unit_id: int, city_id: int,
                   seat: Owner) -> set[str]:
    """V05, V07: every reason `unit_id` of `seat` may not walk into `city_id`."""
    if not 0 <= unit_id < len(pos.units) or pos.units[unit_id].at is None:
        return {"R_NO_UNIT"}
    unit = pos.units[unit_id]
    out: set[str] = set()
    if unit.owner != seat:
        out.add("R_NOT_YOUR_UNIT")
    # C: Combat — only melee fighting units capture; settlers and bandits do not
    if (unit.type == "bandit" or rules.range(unit.type) > 0 or rules.attack(unit.type) <= 0
            or rules.founds_city(unit.type)):
        out.add("R_NOT_MELEE")
    if unit.moves_left <= 0:
        out.add("R_NO_MOVES")
    if not 0 <= city_id < len(pos.cities):
        out.add("R_NO_CITY")
        return out
    city = pos.cities[city_id]
    out |= protection_refusals(pos, seat, city.owner)      # V07: not even at 0 HP
    if hex_distance(unit.at, city.at) != 1:
        out.add("R_NOT_ADJACENT")
    if city.hp > 0:
        out.add("R_CITY_HAS_HP")                           # V05: HP must be at 0
    return out


def _lose_queue(pos: Position, rules: EngineRules, city: City, by: int) -> None:
    """V05, V09, V17: the queue and its accumulated production are wiped; an
    Observatory in it is lost, and every seat hears of it."""
    for item in city.queue:
        if rules.is_science_building(item):
            pos.log("observatory_lost", owner_code(city.owner), by, city.id)
    city.queue = []
    city.production = 0


def enter(pos: Position, rules: EngineRules, unit_id: int, city_id: int,
          seat: int) -> tuple[set[str], Position]:
    """The `enter` command: capture (V05, B7, V15, V17), a capital's fall (V08–V13),
    elimination (V02, V10) and the conquest check (V03, V06, V20, B6)."""
    refusals = enter_refusals(pos, rules, unit_id, city_id, seat)
    out = copy.deepcopy(pos)
    if refusals:
        return refusals, out
    unit = out.units[unit_id]
    city = out.cities[city_id]
    old = city.owner
    was_capital = city.capital

    _lose_queue(out, rules, city, seat)                       # V05, V17
    city.pop = max(city.pop - 1, 1)                           # V05, B7: never below 1
    city.food = 0                                             # B3: food store wiped
    city.owner = seat                                         # buildings stay (V05, T14)
    city.capital = False
    city.revolt, city.revolt_cause = 0, None                  # V15
    city.hp = rules.max_hp(city.pop, city.buildings)          # full HP for the new pop
    garrison = out.unit_at(city.at)
    if garrison is not None and garrison is not unit:
        _kill(garrison)                                       # engine choice: garrison dies
    unit.at = city.at
    unit.moves_left = 0
    row = out.log("capture", owner_code(old), seat, city.id, unit.id)

    if old == "neutral":
        return refusals, out                                  # V06: no seat to eliminate
    out.seats[old].lost_turn = out.turn                       # engine bookkeeping (AI)
    if was_capital:
        capital_fall(out, rules, city, old, seat)
    elif not out.cities_of(old):
        eliminate(out, old, seat, row)                        # V02
    conquest_check(out, rules)
    return refusals, out


def capital_fall(pos: Position, rules: EngineRules, fallen: City, old: int, by: int) -> None:
    """V08–V13: `old` lost its capital `fallen` to `by`.

    Cities of `old` within capital_fall_radius steps (inclusive) of the fallen
    capital pass to `by` at once (V12) with population, HP and food (V09), queue
    and production wiped (V09, V17), in revolt for transfer_turns minus the Divan's
    shortening (V11; V13: a Divan in the city or one the capturer held at the
    fall). The others stay. The most populous remaining city is the
    new capital, ties to the lowest ID; with none left, `old` is out (V10, V02).
    """
    m = rules.m
    row = pos.log("capital_fall", old, by, fallen.id, -1)
    pos.seats[old].capital = None
    # V13, our reading: the capturer's Divans at the fall count too (fallen capital included)
    capturer_held = {b for c in pos.cities if c.owner == by for b in c.buildings}
    for city in pos.cities:
        if city is fallen or city.owner != old:
            continue
        if hex_distance(city.at, fallen.at) <= m.revolt.capital_fall_radius:
            _lose_queue(pos, rules, city, by)
            city.owner = by
            city.capital = False
            turns = m.revolt.transfer_turns
            for b in set(city.buildings) | capturer_held:
                turns -= m.buildings[b].revolt_shorten            # V13: Divan
            turns = max(turns, 0)
            city.revolt = turns
            city.revolt_cause = "transfer" if turns > 0 else None
            pos.log("transfer", old, by, city.id, row)
            _step_out(pos, rules, city.at, old)
            if turns > 0:
                pos.log("revolt_start", by, old, city.id, turns, REVOLT_CAUSES.index("transfer"))
        else:
            pos.log("kept", old, by, city.id, row)
    remaining = pos.cities_of(old)
    if remaining:
        best = remaining[0]
        for city in remaining:                     # ascending IDs: ties keep the lower ID
            if city.pop > best.pop:
                best = city
        best.capital = True
        pos.seats[old].capital = best.id
        if row < pos.event_capacity:
            pos.events[row] = pos.events[row]._replace(a=best.id)
    else:
        eliminate(pos, old, by, row)                              # V10


def _step_out(pos: Position, rules: EngineRules, tile: Tile, old: int) -> None:
    """Engine choice (capture.capital_fall): a unit of the old owner in a transferred
    city steps out to the first free passable neighbour, in direction order, that is
    no other side's city; with none, it is lost."""
    unit = pos.unit_at(tile)
    if unit is None or unit.owner != old:
        return
    spot = free_tile_near(pos, rules, tile, old)  # a neighbour: the unit is on `tile`
    if spot is None:
        _kill(unit)
    else:
        unit.at = spot


def eliminate(pos: Position, seat: int, by: int, cause_row: int) -> None:
    """V02: the seat is out, its units leave the board, it takes no more turns.
    Engine choice: its truces end, pacts against it end, it leaves other pacts."""
    s = pos.seats[seat]
    s.alive = False
    s.eliminated_turn = pos.turn
    s.capital = None
    s.dominance = 0
    for unit in pos.units:
        if unit.owner == seat and unit.at is not None:
            _kill(unit)
    for other in range(len(pos.seats)):
        pos.truce[seat][other] = 0
        pos.truce[other][seat] = 0
    for slot, pact in enumerate(pos.pacts):
        if pact.target == seat:
            end_pact(pos, slot)
        elif pact.target is not None:
            pact.members.discard(seat)
    pos.log("eliminated", seat, by, -1, cause_row)


def end_pact(pos: Position, slot: int) -> None:
    pact = pos.pacts[slot]
    pos.log("pact_end", pact.target, -1, -1, slot)
    pos.pacts[slot] = Pact()


def conquest_check(pos: Position, rules: EngineRules) -> None:
    """V03: one seat left wins by conquest. V20: if the setup had human seats and none
    is left, the surviving seat ranked first (T11) wins. V06: neutrals never count."""
    if pos.finished:
        return
    standing = [i for i, s in enumerate(pos.seats) if s.alive]
    humans = [i for i, s in enumerate(pos.seats) if s.human]
    if len(standing) == 1:
        finish(pos, "conquest", standing[0])
    elif humans and not any(pos.seats[i].alive for i in humans) and len(standing) > 1:
        finish(pos, "human_out", ranking(pos, rules)[0])


# ----------------------------------------------------------------- flow ----

def city_income(pos: Position, rules: EngineRules, city: City,
                nodes: dict[int, list[int]]) -> list[int]:
    """C: Economy — normal food, production, gold, science of a city, revolt ignored:
    base + per population × pop + its region's nodes (each once, T09) + buildings."""
    e = rules.m.economy
    pop = city.pop
    y = [e.food_base + e.food_per_population * pop,
         e.production_base + e.production_per_population * pop,
         e.gold_base + e.gold_per_population * pop,
         e.science_base + e.science_per_population * pop]
    for k in range(3):
        y[k] += nodes[city.id][k]
    for b in city.buildings:
        stats = rules.m.buildings[b]
        y[0] += stats.food
        y[1] += stats.production
        y[2] += stats.gold
        y[3] += stats.science
    return y


def node_income(pos: Position, rules: EngineRules) -> dict[int, list[int]]:
    """T02, T06, T09: each node yields once, to the city that owns its tile."""
    e = rules.m.economy
    per_kind = {"food": e.node_food, "production": e.node_production, "gold": e.node_gold}
    owners = region_owners(pos, rules)
    out = {c.id: [0, 0, 0] for c in pos.cities}
    for tile, kind in pos.nodes.items():
        if tile in owners:
            out[owners[tile]][NODE_KINDS.index(kind)] += per_kind[kind]
    return out


def flow_income(pos: Position, rules: EngineRules, seat: int) -> None:
    """Income (C: Economy, V11, B4, B8), then upkeep (C: Economy).

    A revolting city yields nothing — no food, production, gold or science, its
    nodes and Madrasa included — except that an owner who knows Law gets
    law_share_pct % of its normal food and gold, rounded down (B4). Production only
    accumulates on a queue's front item. Military units beyond free_units_per_city
    per held city cost upkeep_per_unit each; a treasury that cannot pay disbands
    units (engine choice: the newest military units first) until it can.
    """
    m = rules.m
    nodes = node_income(pos, rules)
    s = pos.seats[seat]
    knows_law = m.revolt.law_tech in s.techs
    mine = pos.cities_of(seat)
    for city in mine:
        food, production, gold, science = city_income(pos, rules, city, nodes)
        if city.revolt > 0:
            if knows_law:
                city.food += food * m.revolt.law_share_pct // 100
                s.gold += gold * m.revolt.law_share_pct // 100
            continue
        city.food += food
        if city.queue:
            city.production += production
        s.gold += gold
        s.science += science
    military = [u for u in pos.units
                if u.at is not None and u.owner == seat and rules.is_military(u.type)]
    over = max(len(military) - m.economy.free_units_per_city * len(mine), 0)
    for unit in sorted(military, key=lambda u: -u.id):
        if over * m.economy.upkeep_per_unit <= s.gold:
            break
        _kill(unit)
        pos.log("unit_disbanded", seat, -1, -1, unit.id, rules.unit_code(unit.type),
                DISBAND_CAUSES.index("upkeep"))
        over -= 1
    s.gold -= over * m.economy.upkeep_per_unit


def free_tile_near(pos: Position, rules: EngineRules, tile: Tile, side: Owner) -> Tile | None:
    """Engine choice (documented in cities.free_tile_near): the tile itself when no unit
    stands there, else the first empty passable neighbour in direction order that is
    not another side's city."""
    if pos.unit_at(tile) is None:
        return tile
    for dq, dr in NEIGHBOUR_STEPS:
        n = (tile[0] + dq, tile[1] + dr)
        if not pos.on_board(n) or pos.unit_at(n) is not None:
            continue
        if not rules.passable(pos.terrain[n]):
            continue
        site = pos.city_at(n)
        if site is not None and site.owner != side:
            continue
        return n
    return None


def spawn(pos: Position, rules: EngineRules, utype: str, owner: Owner, tile: Tile, hp: int,
          camp: int | None) -> Unit | None:
    if len(pos.units) >= pos.unit_capacity:
        return None
    unit = Unit(len(pos.units), owner, utype, tile, hp, rules.moves(utype), camp)
    pos.units.append(unit)
    return unit


def flow_production(pos: Position, rules: EngineRules, seat: int) -> None:
    """C: Production queue, V11, V16: each city of the seat not in revolt completes at
    most its front item once the accumulated production covers its cost; the rest
    carries over. A unit needs a free tile on or beside the city; a settler needs
    population settler_min_population and costs the city settler_population_cost.
    Completing the Observatory wins the match at once (V16, B6)."""
    m = rules.m
    for city in list(pos.cities):
        if city.owner != seat or city.revolt > 0 or not city.queue:
            continue
        item = city.queue[0]
        cost = rules.item_cost(item)
        if city.production < cost:
            continue
        if item in m.units:
            if rules.founds_city(item) and city.pop < m.city.settler_min_population:
                continue
            tile = free_tile_near(pos, rules, city.at, seat)
            if tile is None:
                continue
            if spawn(pos, rules, item, seat, tile, rules.full_hp(item), None) is None:
                continue
            if rules.founds_city(item):
                city.pop -= m.city.settler_population_cost
                city.hp = min(city.hp, rules.max_hp(city.pop, city.buildings))
        else:
            city.buildings.add(item)
        city.production -= cost
        city.queue.pop(0)
        if not city.queue:
            city.production = 0
        pos.log("built", seat, -1, city.id, rules.item_code(item))
        if rules.is_science_building(item):
            pos.log("observatory_completed", seat, -1, city.id)
            finish(pos, "science", seat)
            return


def flow_growth_repair_revolt(pos: Position, rules: EngineRules, seat: int) -> None:
    """C: Cities — a city grows by one when its food store reaches the growth cost of
    its population (engine choice: at the ceiling the store is capped at that cost);
    repairs repair_per_turn HP unless in revolt (V11); then revolt counters tick
    down (B8), and a revolt that reaches 0 ends."""
    m = rules.m
    repaired = []
    for city in pos.cities_of(seat):
        need = rules.growth_cost(city.pop)
        if city.pop < m.city.max_population:
            if city.food >= need:
                city.food -= need
                city.pop += 1
        else:
            city.food = min(city.food, need)
        if city.revolt == 0:
            hp = min(city.hp + m.city.repair_per_turn, rules.max_hp(city.pop, city.buildings))
            if hp > city.hp:
                repaired.append(hp - city.hp)
            city.hp = hp
    if repaired:  # one row per flow: cities repaired, HP total
        pos.log("repairs", seat, -1, -1, len(repaired), sum(repaired))
    for city in pos.cities_of(seat):
        if city.revolt <= 0:
            continue
        city.revolt -= 1
        if city.revolt == 0:
            pos.log("revolt_end", seat, -1, city.id, 0, REVOLT_CAUSES.index(city.revolt_cause))
            city.revolt_cause = None


def flow_event_card(pos: Position, rules: EngineRules, seat: int) -> None:
    """C: Events, V14: one card from the weighted table (events stream). Public unrest
    puts one of the seat's cities not already in revolt, drawn uniformly in city ID
    order, in revolt for unrest_turns; no Divan shortens it."""
    m = rules.m
    turn = pos.turn
    cards = [m.events.cards[name] for name in rules.card_order]
    card = cards[keyed_weighted(draw_key(pos.rng_events, turn, DRAW_EVENT_CARD, seat),
                                [c.weight for c in cards])]
    s = pos.seats[seat]
    if card.kind == "public_unrest":
        calm = [c for c in pos.cities_of(seat) if c.revolt == 0]
        if calm and m.events.unrest_turns > 0:
            city = calm[keyed_below(draw_key(pos.rng_events, turn, DRAW_UNREST_CITY, seat),
                                    len(calm))]
            city.revolt = m.events.unrest_turns
            city.revolt_cause = "unrest"
            pos.log("unrest", seat, -1, city.id, m.events.unrest_turns)
            pos.log("revolt_start", seat, -1, city.id, m.events.unrest_turns,
                    REVOLT_CAUSES.index("unrest"))
    elif card.kind == "gold":
        s.gold += card.amount
    elif card.kind == "food":
        if s.capital is not None:
            pos.cities[s.capital].food += card.amount
    elif card.kind == "science":
        s.science += card.amount


def dominance_check(pos: Position, rules: EngineRules, seat: int) -> None:
    """V18, B5: share = the seat's cities / all cities held by seats (villages in
    neither). share ≥ share_pct adds 1 to the counter, else it returns to 0; reaching
    counter_to_win wins at once."""
    d = rules.m.dominance
    held = len(pos.cities_of(seat))
    total = sum(1 for c in pos.cities if c.owner != "neutral")
    s = pos.seats[seat]
    if total > 0 and held * 100 >= d.share_pct * total:
        s.dominance += 1
    else:
        s.dominance = 0
    if s.dominance >= d.counter_to_win:
        finish(pos, "dominance", seat)


def heal(pos: Position, rules: EngineRules, seat: int) -> None:
    """D3 — a damaged unit of `seat` still holding all its moves (it neither moved nor
    attacked in its seat's previous turn) heals heal_in_city in one of the seat's
    cities, heal_in_region in its region, heal_elsewhere elsewhere, up to full HP."""
    c = rules.m.combat
    owners = None
    healed = []
    for unit in pos.units:
        if unit.at is None or unit.owner != seat or unit.hp >= rules.full_hp(unit.type) \
                or unit.moves_left < rules.moves(unit.type):
            continue
        city = pos.city_at(unit.at)
        if city is not None and city.owner == seat:
            gain = c.heal_in_city
        else:
            owners = region_owners(pos, rules) if owners is None else owners
            holder = owners.get(unit.at)
            gain = c.heal_in_region if holder is not None and \
                pos.cities[holder].owner == seat else c.heal_elsewhere
        hp = min(unit.hp + gain, rules.full_hp(unit.type))
        if hp > unit.hp:
            healed.append(hp - unit.hp)
        unit.hp = hp
    if healed:  # one row per flow: units healed, HP total
        pos.log("heals", seat, -1, -1, len(healed), sum(healed))


def seat_turn_opens(pos: Position, rules: EngineRules, seat: int) -> Position:
    """C: Turn cycle — `seat` becomes active, its idle units heal (D3), its units get
    their moves back, its flow
    runs (income, production, growth, repair, revolt counters, event card: B8) and
    then its V18 check, before any action."""
    out = copy.deepcopy(pos)
    out.active_seat = seat
    heal(out, rules, seat)
    for unit in out.units:
        if unit.at is not None and unit.owner == seat:
            unit.moves_left = rules.moves(unit.type)
    flow_income(out, rules, seat)
    flow_production(out, rules, seat)
    if out.finished:
        return out                                  # V16 ended the match mid-flow
    flow_growth_repair_revolt(out, rules, seat)
    flow_event_card(out, rules, seat)
    dominance_check(out, rules, seat)
    return out


# ------------------------------------------------------------ turn cycle ----

def opening_seat(turn: int, n_seats: int) -> int:
    """T12: the opening seat rotates by one every turn; seat 0 opens turn 1."""
    return (turn - 1) % n_seats


def start_of_turn(pos: Position, rules: EngineRules) -> None:
    """C: Diplomacy, Neutrals — once per turn: truce and pact counters run down, then
    the neutral side's turn (neutral_turn: D3, D4)."""
    n = len(pos.seats)
    for a in range(n):
        for b in range(n):
            if pos.truce[a][b] > 0:
                pos.truce[a][b] -= 1
    for slot, pact in enumerate(pos.pacts):
        if pact.target is not None:
            pact.turns -= 1
            if pact.turns <= 0:
                end_pact(pos, slot)
    neutral_turn(pos, rules)


def neutral_turn(pos: Position, rules: EngineRules) -> None:
    """D3, D4, V06 — villages repair repair_per_turn HP; from bandit_first_spawn_turn,
    every bandit_spawn_interval turns, each live camp below its cap spawns a bandit
    beside it; then each bandit in unit ID order gets its moves and, while it has
    some, strikes the first seat unit next to it that is not on a city tile (direction
    order), else steps toward the nearest seat unit outside cities within
    bandit_chase_radius of its camp (of itself once the camp is cleared; ties to the
    lowest unit ID), else toward its camp; a step goes to the first free passable
    non-city neighbour (direction order) nearest the goal and nearer than where it
    stands."""
    m = rules.m
    repaired = []
    for city in pos.cities:
        if city.owner == "neutral":
            hp = min(city.hp + m.city.repair_per_turn, rules.max_hp(city.pop, city.buildings))
            if hp > city.hp:
                repaired.append(hp - city.hp)
            city.hp = hp
    if repaired:
        pos.log("repairs", owner_code("neutral"), -1, -1, len(repaired), sum(repaired))
    nm = m.neutrals
    if pos.turn >= nm.bandit_first_spawn_turn and \
            (pos.turn - nm.bandit_first_spawn_turn) % nm.bandit_spawn_interval == 0:
        for k, tile in enumerate(pos.camps):
            if tile is None:
                continue
            live = sum(1 for u in pos.units if u.at is not None and u.camp == k)
            if live >= nm.bandit_cap_per_camp:
                continue
            spot = free_tile_near(pos, rules, tile, "bandit")
            if spot is not None and pos.city_at(spot) is None:
                spawn(pos, rules, "bandit", "bandit", spot, nm.bandit_hp, k)
    for unit in pos.units:
        if unit.at is None or unit.owner != "bandit":
            continue
        unit.moves_left = rules.moves("bandit")
        while unit.moves_left > 0 and unit.at is not None:
            if bandit_strike(pos, rules, unit):
                break
            camp = pos.camps[unit.camp] if unit.camp is not None else None
            home = camp if camp is not None else unit.at
            prey = [v for v in pos.units if v.at is not None and isinstance(v.owner, int)
                    and pos.city_at(v.at) is None
                    and hex_distance(home, v.at) <= nm.bandit_chase_radius]
            if prey:
                goal = min(prey, key=lambda v: (hex_distance(unit.at, v.at), v.id)).at
            elif camp is not None:
                goal = camp
            else:
                break
            step = None
            best = hex_distance(unit.at, goal)
            for dq, dr in NEIGHBOUR_STEPS:
                n = (unit.at[0] + dq, unit.at[1] + dr)
                if not pos.on_board(n) or pos.unit_at(n) is not None or \
                        pos.city_at(n) is not None or not rules.passable(pos.terrain[n]):
                    continue
                if hex_distance(n, goal) < best:
                    step, best = n, hex_distance(n, goal)
            if step is None:
                break
            unit.at = step
            unit.moves_left -= 1


def bandit_strike(pos: Position, rules: EngineRules, bandit: Unit) -> bool:
    """True when `bandit` attacked the first seat unit next to it off city tiles."""
    for dq, dr in NEIGHBOUR_STEPS:
        n = (bandit.at[0] + dq, bandit.at[1] + dr)
        if not pos.on_board(n) or pos.city_at(n) is not None:
            continue
        victim = pos.unit_at(n)
        if victim is not None and isinstance(victim.owner, int):
            attack_in_place(pos, rules, bandit.id, n, "bandit")
            return True
    return False


def end_turn(pos: Position, rules: EngineRules) -> Position:
    """C: Turn cycle, T12, V19, B6: the next standing seat of this turn (in seating
    order from the turn's opening seat) opens its turn; after the last one, the next
    turn starts, unless this was the last turn: then the seat ranked first by T11 wins."""
    out = copy.deepcopy(pos)
    n = len(out.seats)
    first = opening_seat(out.turn, n)
    here = (out.active_seat - first) % n
    nxt = None
    for k in range(here + 1, n):
        s = (first + k) % n
        if out.seats[s].alive:
            nxt = s
            break
    if nxt is None:
        if out.turn >= out.last_turn:
            finish(out, "turn_limit", ranking(out, rules)[0])     # V19, T11
            return out
        out.turn += 1
        start_of_turn(out, rules)
        first = opening_seat(out.turn, n)
        for k in range(n):
            s = (first + k) % n
            if out.seats[s].alive:
                nxt = s
                break
        if nxt is None:
            return out
    return seat_turn_opens(out, rules, nxt)


# ------------------------------------------------------------ converters ----

def position_from_state(st, tables, board) -> Position:
    """Read an engine state record (STATE_DOC) into plain structures."""
    rules = EngineRules.from_tables(tables)
    n_tiles = int(st.n_tiles[0])

    def axial(t: int) -> Tile:
        return int(board.q[t]), int(board.r[t])

    terrain = {axial(t): TERRAINS[int(st.tile_terrain[t])] for t in range(n_tiles)}
    nodes = {axial(t): NODE_KINDS[int(st.tile_node[t])] for t in range(n_tiles)
             if st.tile_node[t] >= 0}
    bought = {axial(t): int(st.tile_bought_by[t]) for t in range(n_tiles)
              if st.tile_bought_by[t] >= 0}
    n_seats = int(st.n_seats[0])
    seats = []
    for s in range(n_seats):
        seats.append(Seat(
            alive=bool(st.seat_alive[s]), human=bool(st.seat_human[s]),
            gold=int(st.seat_gold[s]), science=int(st.seat_science[s]),
            techs={rules.tech_order[k] for k in range(len(rules.tech_order))
                   if st.seat_techs[s, k]},
            dominance=int(st.seat_dominance[s]),
            capital=int(st.seat_capital[s]) if st.seat_capital[s] >= 0 else None,
            eliminated_turn=int(st.seat_eliminated_turn[s])
            if st.seat_eliminated_turn[s] >= 0 else None,
            personality=int(st.seat_personality[s]),
            lost_turn=int(st.seat_lost_turn[s]) if st.seat_lost_turn[s] >= 0 else None))
    cities = []
    for c in range(int(st.n_cities[0])):
        cities.append(City(
            id=c, owner=owner_from_code(int(st.city_owner[c])),
            at=axial(int(st.city_tile[c])) if st.city_tile[c] >= 0 else None,
            pop=int(st.city_pop[c]), hp=int(st.city_hp[c]), food=int(st.city_food[c]),
            production=int(st.city_production[c]), capital=bool(st.city_capital[c]),
            revolt=int(st.city_revolt[c]),
            revolt_cause=REVOLT_CAUSES[int(st.city_revolt_cause[c])],
            buildings={rules.building_order[b] for b in range(len(rules.building_order))
                       if st.city_buildings[c, b]},
            queue=[rules.item_name(int(i)) for i in st.city_queue[c] if i >= 0]))
    units = []
    for u in range(int(st.n_units[0])):
        t = int(st.unit_tile[u])
        utype = int(st.unit_type[u])
        units.append(Unit(
            id=u, owner=owner_from_code(int(st.unit_owner[u])),
            type="bandit" if utype < 0 else rules.unit_order[utype],
            at=axial(t) if t >= 0 else None, hp=int(st.unit_hp[u]),
            moves_left=int(st.unit_moves_left[u]),
            camp=int(st.unit_camp[u]) if st.unit_camp[u] >= 0 else None))
    pacts = []
    for p in range(st.pact_target.shape[0]):
        target = int(st.pact_target[p])
        pacts.append(Pact(target if target >= 0 else None,
                          {s for s in range(n_seats) if st.pact_members[p, s]},
                          int(st.pact_turns[p])))
    n_events = int(st.n_events[0])
    events = []
    for i in range(min(n_events, st.event_log.shape[0])):
        row = [int(x) for x in st.event_log[i]]
        events.append(Event(row[0], EVENT_NAMES[row[1]], *row[2:]))
    return Position(
        radius=board.radius, terrain=terrain, nodes=nodes, bought=bought, seats=seats,
        cities=cities, units=units,
        truce=[[int(st.truce_turns[a, b]) for b in range(n_seats)] for a in range(n_seats)],
        pacts=pacts,
        camps=[axial(int(t)) if t >= 0 else None for t in st.camp_tile],
        turn=int(st.turn[0]), last_turn=int(st.last_turn[0]),
        active_seat=int(st.active_seat[0]), finished=bool(st.finished[0]),
        winner=int(st.winner[0]) if st.winner[0] >= 0 else None,
        victory=VICTORIES[int(st.victory[0])] if st.victory[0] >= 0 else None,
        events=events, n_events=n_events, event_capacity=int(st.event_log.shape[0]),
        unit_capacity=int(st.unit_tile.shape[0]),
        rng_events=int(st.rng_events[0]))


def state_from_position(pos: Position, tables, board):
    """Write a plain position into a fresh engine state record (STATE_DOC), with the
    tile_site / tile_unit lookups filled from the cities and units."""
    rules = EngineRules.from_tables(tables)
    st = empty_state(board.n_tiles, len(pos.seats), len(rules.tech_order),
                     len(rules.building_order))

    def index(tile: Tile) -> int:
        t = board.index(*tile)
        assert t >= 0, f"{tile} is off the board"
        return t

    for tile, name in pos.terrain.items():
        st.tile_terrain[index(tile)] = TERRAINS.index(name)
    for tile, kind in pos.nodes.items():
        st.tile_node[index(tile)] = NODE_KINDS.index(kind)
    for tile, city in pos.bought.items():
        st.tile_bought_by[index(tile)] = city
    for s, seat in enumerate(pos.seats):
        st.seat_alive[s] = seat.alive
        st.seat_human[s] = seat.human
        st.seat_gold[s] = seat.gold
        st.seat_science[s] = seat.science
        for tech in seat.techs:
            st.seat_techs[s, rules.tech_order.index(tech)] = 1
        st.seat_dominance[s] = seat.dominance
        st.seat_capital[s] = -1 if seat.capital is None else seat.capital
        st.seat_eliminated_turn[s] = -1 if seat.eliminated_turn is None else seat.eliminated_turn
        st.seat_personality[s] = seat.personality
        st.seat_lost_turn[s] = -1 if seat.lost_turn is None else seat.lost_turn
    st.n_cities[0] = len(pos.cities)
    for c, city in enumerate(pos.cities):
        assert city.id == c
        t = index(city.at)
        st.city_tile[c] = t
        st.tile_site[t] = c
        st.city_owner[c] = owner_code(city.owner)
        st.city_pop[c] = city.pop
        st.city_hp[c] = city.hp
        st.city_food[c] = city.food
        st.city_production[c] = city.production
        st.city_capital[c] = city.capital
        st.city_revolt[c] = city.revolt
        st.city_revolt_cause[c] = REVOLT_CAUSES.index(city.revolt_cause)
        for b in city.buildings:
            st.city_buildings[c, rules.building_order.index(b)] = 1
        for k, item in enumerate(city.queue):
            st.city_queue[c, k] = rules.item_code(item)
    st.n_units[0] = len(pos.units)
    for u, unit in enumerate(pos.units):
        assert unit.id == u
        st.unit_type[u] = -1 if unit.type == "bandit" else rules.unit_order.index(unit.type)
        st.unit_owner[u] = owner_code(unit.owner)
        st.unit_hp[u] = unit.hp
        st.unit_moves_left[u] = unit.moves_left
        st.unit_camp[u] = -1 if unit.camp is None else unit.camp
        if unit.at is not None:
            t = index(unit.at)
            st.unit_tile[u] = t
            st.tile_unit[t] = u
    for a, row in enumerate(pos.truce):
        for b, turns in enumerate(row):
            st.truce_turns[a, b] = turns
    for p, pact in enumerate(pos.pacts):
        st.pact_target[p] = -1 if pact.target is None else pact.target
        st.pact_turns[p] = pact.turns
        for s in pact.members:
            st.pact_members[p, s] = 1
    for k, tile in enumerate(pos.camps):
        st.camp_tile[k] = -1 if tile is None else index(tile)
    st.turn[0] = pos.turn
    st.last_turn[0] = pos.last_turn
    st.active_seat[0] = pos.active_seat
    st.finished[0] = pos.finished
    st.winner[0] = -1 if pos.winner is None else pos.winner
    st.victory[0] = -1 if pos.victory is None else VICTORIES.index(pos.victory)
    st.n_events[0] = pos.n_events
    for i, ev in enumerate(pos.events):
        st.event_log[i] = [ev.turn, EVENT_NAMES.index(ev.kind), ev.seat, ev.by, ev.city,
                           ev.a, ev.b, ev.c]
    st.rng_events[0] = np.uint64(pos.rng_events)
    return st


def differences(want: Position, got: Position) -> list[str]:
    """Field-by-field differences between the oracle's position and the engine's."""
    out: list[str] = []
    for name in Position.__dataclass_fields__:
        a, b = getattr(want, name), getattr(got, name)
        if a == b:
            continue
        if isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                out.append(f"{name}: oracle has {len(a)} entries, engine {len(b)}")
            for i, (x, y) in enumerate(zip(a, b, strict=False)):
                if x == y:
                    continue
                if hasattr(x, "__dataclass_fields__") and type(x) is type(y):
                    for f in x.__dataclass_fields__:
                        if getattr(x, f) != getattr(y, f):
                            out.append(f"{name}[{i}].{f}: oracle {getattr(x, f)!r}, "
                                       f"engine {getattr(y, f)!r}")
                else:
                    out.append(f"{name}[{i}]: oracle {x!r}, engine {y!r}")
            if len(a) != len(b):
                longer, who = (a, "oracle") if len(a) > len(b) else (b, "engine")
                for i in range(min(len(a), len(b)), len(longer)):
                    out.append(f"{name}[{i}]: only the {who} has {longer[i]!r}")
        elif isinstance(a, dict) and isinstance(b, dict):
            for k in sorted(set(a) | set(b)):
                if a.get(k) != b.get(k):
                    out.append(f"{name}[{k}]: oracle {a.get(k)!r}, engine {b.get(k)!r}")
        else:
            out.append(f"{name}: oracle {a!r}, engine {b!r}")
    return out


def all_tiles(radius: int) -> list[Tile]:
    return board_tiles(radius)

"""Property tests: the rule kernels against the plain-Python oracle of
tests/reference/engine.py on random legal positions.

Each property draws a random legal position (board radius 4–9, 2–6 seats, cities
4+ steps apart (T07), villages, populations, HP, buildings, revolts, queues and
production, units and bandits, camps, truces, pacts, gold, techs), writes it into
an engine state record, runs one kernel on it, runs the oracle on the plain
position read back from the same record, and asserts that the two resulting
positions agree field by field (seats, cities, units, events, ...). The invariant
checker must stay silent before and after every kernel call.

Default run: 300 examples per property. `-m slow` runs the `_slow` variants with
many more.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import sim.rules.codes as reasons
from sim.engine.check import check_invariants
from sim.kernels.rules.capture import capture_city, enter_check
from sim.kernels.rules.combat import attack_outcome, resolve_attack
from sim.kernels.rules.flow import dominance_check, end_turn, open_seat_turn
from sim.kernels.timing import no_ticks
from sim.rules.tables import load_tables
from sim.world.board import make_board
from tests.conftest import FIXTURE_TABLES
from tests.reference import engine as ref
from tests.reference.engine import (
    City,
    EngineRules,
    Event,
    Pact,
    Position,
    Seat,
    Unit,
    differences,
    hex_distance,
    position_from_state,
    state_from_position,
)

REASON_NAME = {getattr(reasons, n): n for n in dir(reasons) if n.startswith("R_") or n == "OK"}

# The frozen fixture tables, plus variants that move the numbers the rules leave to
# the tables (none changes an array shape, so the compiled kernels are shared).
_BASE = load_tables(FIXTURE_TABLES)
VARIANTS = [
    _BASE,
    _BASE.with_overrides({  # frequent event cards: V14 unrest, gold, food
        "events.cards.nothing.weight": 10, "events.cards.public_unrest.weight": 50,
        "events.cards.windfall.weight": 20, "events.cards.harvest.weight": 20}),
    _BASE.with_overrides({  # combat numbers
        "combat.city_attack_retaliation": False, "combat.min_damage": 3,
        "combat.damage_scale": 25, "revolt.defence_pct": 30,
        "terrain.forest.defence_pct": -40, "terrain.hills.defence_pct": 120,
        "buildings.walls.defence_pct": 75, "units.horseman.city_attack_pct": 40}),
    _BASE.with_overrides({  # economy and revolt numbers
        "revolt.law_share_pct": 75, "buildings.divan.revolt_shorten": 3,
        "revolt.transfer_turns": 4, "revolt.capital_fall_radius": 6,
        "economy.upkeep_per_unit": 3, "economy.free_units_per_city": 1,
        "economy.food_per_population": 2, "economy.gold_per_population": 1,
        "economy.science_per_population": 1, "city.repair_per_turn": 7,
        "dominance.share_pct": 50, "dominance.counter_to_win": 3,
        "events.unrest_turns": 3, "events.cards.public_unrest.weight": 30}),
    _BASE.with_overrides({  # edge values: zero damage, no revolts, every city in the radius
        "combat.min_damage": 0, "combat.damage_scale": 3, "units.warrior.city_attack_pct": 0,
        "revolt.defence_pct": 0, "revolt.capital_fall_radius": 60, "revolt.transfer_turns": 0,
        "events.unrest_turns": 0, "events.cards.public_unrest.weight": 60,
        "city.settler_min_population": 3, "city.settler_population_cost": 2,
        "economy.free_units_per_city": 0, "territory.grown_ring_population": 2,
        "neutrals.bandit_spawn_interval": 1, "neutrals.bandit_cap_per_camp": 3,
        "neutrals.bandit_first_spawn_turn": 1, "neutrals.bandit_chase_radius": 5}),
]
RULES = [EngineRules.from_tables(t) for t in VARIANTS]

DEFAULT = settings(max_examples=300, deadline=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SLOW = settings(max_examples=4000, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

TERRAIN_WEIGHTS = {"plains": 50, "forest": 20, "hills": 15, "mountain": 8, "water": 7}
MELEE = ("warrior", "spearman", "horseman", "swordsman")


# ------------------------------------------------------------ generator ----

class Case:
    """A drawn position with its tables, and the command to run on it."""

    def __init__(self, variant: int, pos: Position):
        self.variant = variant
        self.tables = VARIANTS[variant]
        self.rules = RULES[variant]
        self.pos = pos
        self.args: tuple = ()

    def __repr__(self) -> str:  # what hypothesis prints for a failing example
        p = self.pos
        lines = [f"Case(variant={self.variant}, radius={p.radius}, turn={p.turn}, "
                 f"last_turn={p.last_turn}, active_seat={p.active_seat}, args={self.args})"]
        for i, s in enumerate(p.seats):
            lines.append(f"  seat {i}: {s}")
        for c in p.cities:
            lines.append(f"  {c} terrain={p.terrain[c.at]}")
        for u in p.units:
            lines.append(f"  {u}" + (f" terrain={p.terrain[u.at]}" if u.at else ""))
        special = {t: k for t, k in p.terrain.items() if k != "plains"}
        lines.append(f"  non-plains tiles: {len(special)}; nodes: {p.nodes}; bought: {p.bought}")
        lines.append(f"  truce: {p.truce}; pacts: {[x for x in p.pacts if x.target is not None]}")
        lines.append(f"  camps: {[t for t in p.camps if t]}")
        lines.append(f"  rng_events={p.rng_events}, n_events={p.n_events}")
        return "\n".join(lines)


def _pick(draw, items, near: int | None = None):
    """One of `items`; shrinks towards the first. `near` biases to the first few."""
    if near is not None and len(items) > near and draw(st.booleans()):
        return items[draw(st.integers(0, near - 1))]
    return items[draw(st.integers(0, len(items) - 1))]


@st.composite
def positions(draw, focus: str = "any") -> Case:
    variant = draw(st.integers(0, len(VARIANTS) - 1))
    tables, rules = VARIANTS[variant], RULES[variant]
    m = tables.model
    radius = draw(st.integers(4, 9))
    n_seats = draw(st.integers(2, 6))
    tiles = ref.all_tiles(radius)

    # terrain and nodes: all plains (what shrinking heads for) or a random mix
    terrain = dict.fromkeys(tiles, "plains")
    nodes: dict = {}
    if draw(st.booleans()):
        rnd = draw(st.randoms(use_true_random=False))
        names, weights = list(TERRAIN_WEIGHTS), list(TERRAIN_WEIGHTS.values())
        for t in tiles:
            terrain[t] = rnd.choices(names, weights)[0]
        for t in tiles:
            if rules.passable(terrain[t]) and rnd.random() < 0.2:
                nodes[t] = rnd.choice(("food", "production", "gold"))
    passable = [t for t in tiles if rules.passable(terrain[t])]

    # city sites, T07: candidates sorted by distance to the previous site, so small
    # indices pack cities tightly (V08's radius boundary at 4 and 5 steps)
    min_gap = m.territory.city_min_distance
    sites: list = []
    for _ in range(draw(st.integers(2, 12))):
        anchor = sites[-1] if sites else (0, 0)
        cands = sorted((t for t in passable
                        if all(hex_distance(t, s) >= min_gap for s in sites)),
                       key=lambda t, a=anchor: (hex_distance(t, a), t))
        if not cands:
            break
        sites.append(_pick(draw, cands, near=8))
    if len(sites) < 2:  # a rough radius-4 board can leave no room; use plain land
        terrain = dict.fromkeys(tiles, "plains")
        nodes = {}
        passable = list(tiles)
        sites = [(0, -radius), (0, radius)]

    # owners: a seat index or "neutral"
    if focus in ("capital", "dominance"):
        pool = [0, 0, 0, 0, 0, *range(n_seats), "neutral"]
    else:
        pool = [*range(n_seats), "neutral"]
    owners = [_pick(draw, pool) for _ in sites]
    if len({o for o in owners if o != "neutral"}) < 2:
        owners[0], owners[1] = 0, 1
    alive = sorted({o for o in owners if o != "neutral"})

    turn = draw(st.integers(1, 100))
    last_turn = max(turn, draw(st.integers(1, 100)))
    to_win = m.dominance.counter_to_win

    seats = []
    for s in range(n_seats):
        mask = draw(st.integers(0, 2 ** len(rules.tech_order) - 1))
        techs = {t for k, t in enumerate(rules.tech_order) if mask >> k & 1}
        changed = True
        while changed:  # prerequisites of known techs are known (C: Research)
            changed = False
            for t in list(techs):
                for req in m.techs[t].requires:
                    if req not in techs:
                        techs.add(req)
                        changed = True
        standing = s in alive
        if focus == "dominance" and standing:
            dom = draw(st.sampled_from([to_win - 1, max(to_win - 2, 0), 0])) \
                if draw(st.booleans()) else draw(st.integers(0, to_win - 1))
        else:
            dom = draw(st.integers(0, to_win - 1)) if standing else 0
        seats.append(Seat(
            alive=standing, human=standing and draw(st.integers(0, 4)) == 0,
            gold=draw(st.integers(0, 12)) if draw(st.booleans()) else draw(st.integers(0, 200)),
            science=draw(st.integers(0, 60)), techs=techs, dominance=dom,
            capital=None, eliminated_turn=None if standing else draw(st.integers(1, turn)),
            personality=draw(st.integers(0, len(tables.personality_names) - 1)),
            lost_turn=_pick(draw, [None, turn, draw(st.integers(1, turn))])))

    # cities
    cities: list[City] = []
    one_per_empire = {n for n, b in m.buildings.items() if b.one_per_empire}
    held_once: dict[int, set] = {s: set() for s in range(n_seats)}  # B9 per seat
    for cid, (at, owner) in enumerate(zip(sites, owners, strict=True)):
        if owner == "neutral":
            pop = draw(st.integers(1, 3))
            full = rules.max_hp(pop, set())
            hp = draw(st.sampled_from([0, full, draw(st.integers(0, full))]))
            cities.append(City(cid, "neutral", at, pop, hp))
            continue
        pop = draw(st.integers(1, m.city.max_population))
        mask = draw(st.integers(0, 2 ** len(rules.building_order) - 1))
        buildings = {b for k, b in enumerate(rules.building_order) if mask >> k & 1}
        buildings.discard(m.science.observatory)  # a built Observatory has won already
        held_once[owner] |= buildings & one_per_empire
        full = rules.max_hp(pop, buildings)
        hp = draw(st.sampled_from([full, 0, draw(st.integers(0, full))]))
        cause = draw(st.sampled_from([None, None, "transfer", "unrest"]))
        longest = m.revolt.transfer_turns if cause == "transfer" else m.events.unrest_turns
        revolt = draw(st.integers(1, longest)) if cause and longest > 0 else 0
        cause = cause if revolt else None
        # queue: items the seat may queue (techs known, not built, B9, V16)
        queue: list[str] = []
        for _ in range(draw(st.integers(0, 4))):
            options = []
            for u in rules.unit_order:
                tech = m.units[u].tech
                if not tech or tech in seats[owner].techs:
                    options.append(u)
            for b in rules.building_order:
                stats = m.buildings[b]
                if b in buildings or b in queue or (stats.tech and stats.tech
                                                    not in seats[owner].techs):
                    continue
                if b in one_per_empire and b in held_once[owner]:
                    continue
                options.append(b)
            item = _pick(draw, options)
            queue.append(item)
            if item in one_per_empire:
                held_once[owner].add(item)
        production = 0
        if queue:
            cost = rules.item_cost(queue[0])
            production = max(0, cost + draw(st.integers(-3, 3))) if draw(st.booleans()) \
                else draw(st.integers(0, 60))
        need = rules.growth_cost(pop)
        food = max(0, need + draw(st.integers(-3, 3))) if draw(st.booleans()) \
            else draw(st.integers(0, 45))
        cities.append(City(cid, owner, at, pop, hp, food, production, False, revolt, cause,
                           buildings, queue))
    for s in alive:
        mine = [c for c in cities if c.owner == s]
        cap = _pick(draw, mine)
        cap.capital = True
        seats[s].capital = cap.id

    # bought tiles (T04, T05): passable, not a city, 2–3 steps from their city
    bought: dict = {}
    site_set = set(sites)
    for c in cities:
        if c.owner == "neutral":
            continue
        for _ in range(draw(st.integers(0, 2))):
            cands = [t for t in passable if 2 <= hex_distance(t, c.at) <= 3
                     and t not in site_set and t not in bought]
            if cands:
                bought[_pick(draw, cands)] = c.id

    # camps, away from cities (C: Neutrals)
    camps: list = [None] * 24
    for k in range(draw(st.integers(0, 2))):
        cands = [t for t in passable if t not in camps
                 and all(hex_distance(t, s) >= m.map.camp_min_distance for s in sites)]
        if cands:
            camps[k] = _pick(draw, cands)
    live_camps = [k for k, t in enumerate(camps) if t is not None]

    pos = Position(radius=radius, terrain=terrain, nodes=nodes, bought=bought, seats=seats,
                   cities=cities, units=[],
                   truce=[[0] * n_seats for _ in range(n_seats)],
                   pacts=[Pact() for _ in range(8)], camps=camps,
                   turn=turn, last_turn=last_turn)

    # units: seat units near cities (garrisons, neighbours), bandits, dead slots
    for _ in range(draw(st.integers(0, 14))):
        roll = draw(st.integers(0, 9))
        if roll == 0:
            owner = draw(st.integers(0, n_seats - 1))
            utype = _pick(draw, rules.unit_order)
            pos.units.append(Unit(len(pos.units), owner, utype, None, 0, 0))
            continue
        if roll == 1:
            owner, utype = "bandit", "bandit"
        else:
            owner, utype = _pick(draw, alive), _pick(draw, rules.unit_order)
        anchor = _pick(draw, sites)
        cands = [t for t in passable if pos.unit_at(t) is None and
                 (pos.city_at(t) is None or pos.city_at(t).owner == owner)]
        cands.sort(key=lambda t, a=anchor: (hex_distance(t, a), t))
        if not cands:
            continue
        at = _pick(draw, cands[:24])
        hp = draw(st.integers(1, rules.full_hp(utype)))
        moves = draw(st.integers(0, rules.moves(utype)))
        camp = _pick(draw, [None, *live_camps]) if owner == "bandit" else None
        pos.units.append(Unit(len(pos.units), owner, utype, at, hp, moves, camp))

    # diplomacy among standing seats (V07)
    for i, a in enumerate(alive):
        for b in alive[i + 1:]:
            turns = draw(st.integers(1, m.diplomacy.truce_turns)) \
                if draw(st.integers(0, 3)) == 0 else 0
            pos.truce[a][b] = pos.truce[b][a] = turns
    for p in range(draw(st.integers(0, 2))):
        target = _pick(draw, alive)
        others = [s for s in alive if s != target]
        members = {s for s in others if draw(st.booleans())} or {others[0]}
        pos.pacts[p] = Pact(target, members, draw(st.integers(1, m.diplomacy.pact_turns)))

    pos.active_seat = _pick(draw, alive)
    pos.rng_events = draw(st.integers(0, 2 ** 64 - 1))
    for _ in range(draw(st.integers(0, 3))):  # earlier rows, so cause rows are not 0
        pos.log("built", alive[0], -1, 0, 0)
    return Case(variant, pos)


# ---------------------------------------------------------------- running ----

def _engine(case: Case):
    board = make_board(case.pos.radius)
    state = state_from_position(case.pos, case.tables, board)
    assert check_invariants(state, case.tables, board) == [], "the drawn position is illegal"
    # the oracle reads the position back from the record, not the drawn one
    start = position_from_state(state, case.tables, board)
    assert not differences(case.pos, start), differences(case.pos, start)
    return board, state, start


def _lookup_problems(state, board) -> list[str]:
    """tile_site / tile_unit must be exactly what the cities and units say."""
    site = np.full(board.n_tiles, -1)
    for c in range(int(state.n_cities[0])):
        site[state.city_tile[c]] = c
    unit = np.full(board.n_tiles, -1)
    for u in range(int(state.n_units[0])):
        if state.unit_tile[u] >= 0:
            unit[state.unit_tile[u]] = u
    out = []
    if not np.array_equal(site, state.tile_site[: board.n_tiles]):
        out.append("tile_site does not match the cities")
    if not np.array_equal(unit, state.tile_unit[: board.n_tiles]):
        out.append("tile_unit does not match the units")
    return out


def _agree(case: Case, want: Position, state, board) -> None:
    problems = check_invariants(state, case.tables, board)
    assert problems == [], f"invariants broken after the kernel: {problems}"
    assert _lookup_problems(state, board) == []
    got = position_from_state(state, case.tables, board)
    diff = differences(want, got)
    assert not diff, "engine and oracle disagree:\n  " + "\n  ".join(diff)


def _label_events(start: Position, want: Position) -> None:
    """Statistics (`--hypothesis-show-statistics`): which rule paths the oracle took."""
    new = want.events[len(start.events):]
    for kind in sorted({e.kind for e in new}):
        event(f"event {kind}")
    for e in new:
        if e.kind == "built":
            item = RULES[0].item_name(e.a)
            event("built settler" if item == "settler" else
                  "built unit" if item in RULES[0].unit_order else "built building")
    if want.victory:
        event(f"victory {want.victory}")


def _seat_code(owner) -> np.int64:
    return np.int64(ref.owner_code(owner))


# ----------------------------------------------------------------- combat ----

@st.composite
def combat_cases(draw) -> Case:
    """An attack, mostly legal: a city (half the time) or a unit as the target, an
    attacker of a rival side placed within its reach. One in ten is any unit against
    any tile, for the refusals."""
    case = draw(positions())
    pos, rules = case.pos, case.rules
    live = [u for u in pos.units if u.at is not None]
    alive = [s for s, x in enumerate(pos.seats) if x.alive]
    if live and draw(st.integers(0, 9)) == 0:
        unit = _pick(draw, live)
        target = _pick(draw, ref.all_tiles(pos.radius))
        seat = unit.owner if draw(st.booleans()) else _pick(draw, [*alive, "bandit"])
        case.args = (unit.id, target, seat)
        return case
    if not live or draw(st.booleans()):
        city = _pick(draw, pos.cities)
        if city.hp == 0 and draw(st.integers(0, 3)):
            city.hp = draw(st.integers(1, rules.max_hp(city.pop, city.buildings)))
        target, held = city.at, city
    else:
        victim = _pick(draw, live)
        target, held = victim.at, victim
    rivals = [s for s in alive if s != held.owner]
    calm = [s for s in rivals if not ref.truce_between(pos, s, held.owner)
            and not ref.pact_together(pos, s, held.owner)]
    if not calm and isinstance(held.owner, int) and draw(st.integers(0, 3)):
        s = _pick(draw, rivals)  # every rival is protected: lift one truce (V07)
        pos.truce[s][held.owner] = pos.truce[held.owner][s] = 0
        calm = [s] if not ref.pact_together(pos, s, held.owner) else []
    calm = calm or rivals
    sides = calm if pos.city_at(target) else [*calm, "bandit"]
    if draw(st.integers(0, 7)) == 0:
        sides = [*alive, "bandit"]  # own side, truce, pact, bandit against a city tile
    owner = _pick(draw, sides)
    utype = "bandit" if owner == "bandit" else _pick(draw, rules.unit_order)
    reach = max(rules.range(utype), 1)
    spots = [t for t in ref.all_tiles(pos.radius)
             if 1 <= hex_distance(t, target) <= reach and rules.passable(pos.terrain[t])
             and pos.unit_at(t) is None
             and (pos.city_at(t) is None or pos.city_at(t).owner == owner)]
    if not spots:
        unit = _pick(draw, live) if live else None
    else:
        hp = draw(st.integers(1, rules.full_hp(utype)))
        moves = draw(st.integers(0, rules.moves(utype))) if draw(st.integers(0, 7)) == 0 \
            else rules.moves(utype)
        unit = Unit(len(pos.units), owner, utype, _pick(draw, spots), hp, moves)
        pos.units.append(unit)
    if unit is None:
        case.args = (0, target, owner)
        return case
    seat = unit.owner if draw(st.integers(0, 15)) else _pick(draw, [*alive, "bandit"])
    case.args = (unit.id, target, seat)
    return case


def _check_combat(case: Case) -> None:
    board, state, start = _engine(case)
    unit, target, seat = case.args
    tile = board.index(*target)
    want_preview, want = ref.attack(start, case.rules, unit, target, seat)

    preview = attack_outcome(state, case.tables.arrays(), board, np.int64(unit),
                             np.int64(tile), _seat_code(seat))
    why, kind, tid, to_target, to_attacker = (int(x) for x in preview)
    name = REASON_NAME[why]
    if want_preview.refusals:
        assert name in want_preview.refusals, (name, want_preview)
    else:
        assert name == "OK", (name, want_preview)
        got = ({1: "unit", 2: "city"}[kind], tid, to_target, to_attacker)
        assert got == (want_preview.kind, want_preview.target, want_preview.damage_to_target,
                       want_preview.damage_to_attacker), (got, want_preview)
    assert _lookup_problems(state, board) == []
    assert position_from_state(state, case.tables, board) == start, "the preview changed state"

    why2 = resolve_attack(state, case.tables.arrays(), board, np.int64(unit), np.int64(tile),
                          _seat_code(seat))
    assert int(why2) == why, "T16: resolution and preview differ"
    event(f"attack: {name}" + (f" on a {want_preview.kind}" if name == "OK" else ""))
    if name == "OK" and want_preview.kind == "city":
        city = start.cities[want_preview.target]
        event("attack: OK on a city with " + ("walls" if "walls" in city.buildings else
                                              "no walls") + (", in revolt" if city.revolt else ""))
    _label_events(start, want)
    _agree(case, want, state, board)


@pytest.mark.nojit
@DEFAULT
@given(combat_cases())
def test_t16_v07_v11_combat_matches_reference(case):
    """T16, V07, V11, C: Combat — preview = resolution = the documented damage formula
    (strengths, terrain and Walls, revolt defence for cities, siege %, melee
    retaliation, none for ranged, min damage); units die at 0 HP, cities stop at 0."""
    _check_combat(case)


@pytest.mark.slow
@SLOW
@given(combat_cases())
def test_t16_v07_v11_combat_matches_reference_slow(case):
    _check_combat(case)


# ---------------------------------------------------------------- capture ----

@st.composite
def enter_cases(draw, focus: str = "any") -> Case:
    case = draw(positions(focus))
    pos, rules = case.pos, case.rules
    alive = [s for s, x in enumerate(pos.seats) if x.alive]
    if focus == "capital":
        victim = 0 if pos.seats[0].alive else alive[0]
        city = pos.cities[pos.seats[victim].capital]
    else:
        city = _pick(draw, pos.cities)
    if draw(st.integers(0, 4)):
        city.hp = 0
    if city.owner != "neutral" and draw(st.integers(0, 3)) == 0:
        # V20: the city's owner is the only human seat still standing (hotseat: an
        # eliminated seat may have been human too)
        for k, x in enumerate(pos.seats):
            x.human = k == city.owner or (not x.alive and draw(st.booleans()))
    others = [s for s in alive if s != city.owner] or alive
    free = [s for s in others if not ref.truce_between(pos, s, city.owner)
            and not ref.pact_together(pos, s, city.owner)] or others
    owner = _pick(draw, free) if draw(st.integers(0, 7)) else _pick(draw, alive)
    utype = _pick(draw, MELEE) if draw(st.integers(0, 9)) else _pick(draw, rules.unit_order)
    spots = [t for t in ref.all_tiles(pos.radius)
             if hex_distance(t, city.at) == (1 if draw(st.integers(0, 9)) else 2)
             and rules.passable(pos.terrain[t]) and pos.unit_at(t) is None
             and pos.city_at(t) is None]
    live = [u for u in pos.units if u.at is not None]
    if spots:
        moves = rules.moves(utype) if draw(st.integers(0, 9)) else 0
        unit = Unit(len(pos.units), owner, utype, _pick(draw, spots),
                    draw(st.integers(1, rules.full_hp(utype))), moves)
        pos.units.append(unit)
    elif live:
        unit = _pick(draw, live)
    else:
        case.args = (0, city.id, owner)
        return case
    seat = unit.owner if isinstance(unit.owner, int) and draw(st.integers(0, 9)) \
        else _pick(draw, alive)  # commands always act for a seat
    case.args = (unit.id, city.id, seat)
    return case


def _check_enter(case: Case) -> None:
    board, state, start = _engine(case)
    unit, city, seat = case.args
    want_refusals, want = ref.enter(start, case.rules, unit, city, seat)
    tb = case.tables.arrays()
    why = int(enter_check(state, tb, board, np.int64(unit), np.int64(city), np.int64(seat)))
    name = REASON_NAME[why]
    if want_refusals:
        assert name in want_refusals, (name, want_refusals)
    else:
        assert name == "OK", (name, "the oracle allows this enter")
        capture_city(state, tb, board, np.int64(unit), np.int64(city), np.int64(seat))
    event(f"enter: {name}")
    _label_events(start, want)
    _agree(case, want, state, board)


@pytest.mark.nojit
@DEFAULT
@given(enter_cases())
def test_v05_b7_v15_v17_capture_matches_reference(case):
    """V05, B3, B7, V07, V15, V17, V02, V03, V06, V20 — `enter`: a melee unit walks into
    a city at 0 HP; population −1 (never below 1), queue/production/food wiped,
    buildings kept, full HP for the new population, revolt cleared, Observatory lost;
    elimination and the conquest / human-out check follow."""
    _check_enter(case)


@pytest.mark.nojit
@DEFAULT
@given(enter_cases(focus="capital"))
def test_v08_v09_v10_v13_capital_fall_matches_reference(case):
    """V08–V13, V12, V17, V02 — a capital falls: cities of its seat within
    capital_fall_radius (inclusive) pass to the capturer in revolt (minus the Divan),
    keeping population, HP and food, with queue and production wiped; the new capital
    is the most populous remaining city, ties to the lowest ID; nothing left = out."""
    _check_enter(case)


@pytest.mark.slow
@SLOW
@given(enter_cases())
def test_v05_b7_v15_v17_capture_matches_reference_slow(case):
    _check_enter(case)


@pytest.mark.slow
@SLOW
@given(enter_cases(focus="capital"))
def test_v08_v09_v10_v13_capital_fall_matches_reference_slow(case):
    _check_enter(case)


# ------------------------------------------------------------------- flow ----

@st.composite
def flow_cases(draw) -> Case:
    """Positions pushed towards the flow's rarer paths: a treasury too short for the
    upkeep of many military units, an Observatory about to complete (V16)."""
    case = draw(positions())
    pos, rules, m = case.pos, case.rules, case.tables.model
    seat = pos.active_seat
    mine = pos.cities_of(seat)
    if draw(st.integers(0, 2)) == 0:  # upkeep beyond the treasury
        pos.seats[seat].gold = draw(st.integers(0, 4))
        fighters = [u for u in rules.unit_order if rules.is_military(u)]
        for _ in range(draw(st.integers(1, 8))):
            home = _pick(draw, mine).at
            spots = [t for t in ref.all_tiles(pos.radius)
                     if 1 <= hex_distance(t, home) <= 2 and rules.passable(pos.terrain[t])
                     and pos.unit_at(t) is None and pos.city_at(t) is None]
            if spots:
                utype = _pick(draw, fighters)
                pos.units.append(Unit(len(pos.units), seat, utype, _pick(draw, spots),
                                      rules.full_hp(utype), 0))
    obs = m.science.observatory
    holds = any(obs in c.buildings or obs in c.queue for c in mine)
    if draw(st.integers(0, 3)) == 0 and not holds:  # V16: Observatory at the front
        city = _pick(draw, mine)
        pos.seats[seat].techs |= {"law", "philosophy", m.science.observatory_tech}
        city.queue = [obs, *city.queue[:3]]
        city.production = rules.item_cost(obs) + draw(st.integers(-2, 2))
    return case


def _check_flow(case: Case) -> None:
    board, state, start = _engine(case)
    seat = start.active_seat
    want = ref.seat_turn_opens(start, case.rules, seat)
    open_seat_turn(state, case.tables.arrays(), board, np.int64(seat), no_ticks())
    _label_events(start, want)
    _agree(case, want, state, board)


@pytest.mark.nojit
@DEFAULT
@given(flow_cases())
def test_b8_v11_v14_v16_seat_flow_matches_reference(case):
    """B8, B4, V11, V14, V16, T09, C: Economy / Production / Cities / Events — a seat's
    turn opens: income (base, population, region nodes once, buildings; revolt yields
    nothing but Law's rounded-down share of food and gold; production accumulates only
    on a queue front), upkeep and disbanding, one completed item per city (settler
    population cost, Observatory wins), growth, repair (not in revolt), revolt counters
    and their end, the event card from the same splitmix64 stream, then V18."""
    _check_flow(case)


@pytest.mark.slow
@SLOW
@given(flow_cases())
def test_b8_v11_v14_v16_seat_flow_matches_reference_slow(case):
    _check_flow(case)


# -------------------------------------------------------------- dominance ----

def _check_dominance(case: Case) -> None:
    board, state, start = _engine(case)
    seat = start.active_seat
    want = copy.deepcopy(start)
    ref.dominance_check(want, case.rules, seat)
    dominance_check(state, case.tables.arrays(), np.int64(seat))
    event(f"dominance counter {start.seats[seat].dominance} -> {want.seats[seat].dominance}")
    _label_events(start, want)
    _agree(case, want, state, board)


@pytest.mark.nojit
@DEFAULT
@given(positions(focus="dominance"))
def test_v18_b5_dominance_check_matches_reference(case):
    """V18, B5, V06 — share = the seat's cities / cities held by seats (villages in
    neither); share ≥ share_pct adds 1, else the counter resets; reaching the winning
    counter ends the match by dominance."""
    _check_dominance(case)


@pytest.mark.slow
@SLOW
@given(positions(focus="dominance"))
def test_v18_b5_dominance_check_matches_reference_slow(case):
    _check_dominance(case)


# --------------------------------------------------------------- end turn ----

@st.composite
def end_turn_cases(draw) -> Case:
    """Any seat ends its turn; most often the last standing seat of the rotation, on the
    last turn (V19) or before it (a new turn: truces, pacts, camps, bandit strikes)."""
    case = draw(positions())
    pos, rules = case.pos, case.rules
    mode = draw(st.integers(0, 2))
    if mode:
        n = len(pos.seats)
        first = ref.opening_seat(pos.turn, n)
        order = [(first + k) % n for k in range(n)]
        pos.active_seat = [s for s in order if pos.seats[s].alive][-1]
        if mode == 1:
            pos.last_turn = pos.turn
        else:
            pos.turn = min(pos.turn, 99)
            pos.last_turn = max(pos.last_turn, pos.turn + 1)
            for x in pos.seats:  # nothing can have happened after the current turn
                if x.eliminated_turn is not None:
                    x.eliminated_turn = min(x.eliminated_turn, pos.turn)
                if x.lost_turn is not None:
                    x.lost_turn = min(x.lost_turn, pos.turn)
    # bandits beside seat units (C: Neutrals: they strike at the start of a turn)
    live = [u for u in pos.units if u.at is not None and isinstance(u.owner, int)]
    for _ in range(draw(st.integers(0, 3)) if live else 0):
        victim = _pick(draw, live)
        spots = [t for t in ref.all_tiles(pos.radius) if hex_distance(t, victim.at) == 1
                 and rules.passable(pos.terrain[t]) and pos.unit_at(t) is None
                 and pos.city_at(t) is None]
        if spots:
            hp = draw(st.integers(1, rules.full_hp("bandit")))
            pos.units.append(Unit(len(pos.units), "bandit", "bandit", _pick(draw, spots), hp,
                                  draw(st.integers(0, 1))))
    return case


@st.composite
def turn_limit_ties(draw) -> Case:
    """V19, T11: the last seat ends the last turn on a point-symmetric plains board where
    seats 0 and 1 hold mirrored cities, so scores tie or nearly tie and the tiebreaks
    (population, region tiles, gold stock, seat order) decide."""
    variant = draw(st.integers(0, len(VARIANTS) - 1))
    tables, rules = VARIANTS[variant], RULES[variant]
    m = tables.model
    radius = draw(st.integers(4, 9))
    n_seats = draw(st.integers(2, 4))
    tiles = ref.all_tiles(radius)
    gap = m.territory.city_min_distance
    sites: list = []
    for _ in range(draw(st.integers(1, 3))):
        cands = [t for t in tiles if hex_distance(t, (-t[0], -t[1])) >= gap
                 and all(hex_distance(t, s) >= gap and hex_distance((-t[0], -t[1]), s) >= gap
                         for s in sites)]
        if not cands:
            break
        t = _pick(draw, cands)
        sites += [t, (-t[0], -t[1])]
    cities = []
    for i in range(0, len(sites), 2):
        pop = draw(st.integers(1, m.city.max_population))
        pop_b = pop if draw(st.integers(0, 2)) else draw(st.integers(1, m.city.max_population))
        mask = draw(st.integers(0, 2 ** len(rules.building_order) - 1))
        buildings = {b for k, b in enumerate(rules.building_order) if mask >> k & 1}
        buildings.discard(m.science.observatory)
        first, second = (0, 1) if draw(st.booleans()) else (1, 0)
        for seat, at, p in ((first, sites[i], pop), (second, sites[i + 1], pop_b)):
            hp = rules.max_hp(p, buildings)
            cities.append(City(len(cities), seat, at, p, hp, buildings=set(buildings)))
    seats = [Seat(alive=False, eliminated_turn=1) for _ in range(n_seats)]
    gold = draw(st.integers(0, 40))
    for s in (0, 1):
        mine = [c for c in cities if c.owner == s]
        seats[s] = Seat(gold=gold + draw(st.sampled_from([0, 0, 1, 4, 5, -1])) if gold else 0,
                        capital=mine[0].id)
        seats[s].gold = max(seats[s].gold, 0)
        mine[0].capital = True
    turn = draw(st.integers(1, 100))
    pos = Position(radius, dict.fromkeys(tiles, "plains"), {}, {}, seats, cities, [],
                   [[0] * n_seats for _ in range(n_seats)], [Pact() for _ in range(8)],
                   [None] * 24, turn=turn, last_turn=turn)
    first = ref.opening_seat(turn, n_seats)
    pos.active_seat = [s for s in ((first + k) % n_seats for k in range(n_seats))
                       if s in (0, 1)][-1]
    return Case(variant, pos)


def _check_end_turn(case: Case) -> None:
    board, state, start = _engine(case)
    want = ref.end_turn(start, case.rules)
    end_turn(state, case.tables.arrays(), board, no_ticks())
    event("new turn" if want.turn != start.turn else "same turn")
    if want.turn != start.turn and any(
            isinstance(u.owner, int) and u.hp != v.hp
            for u, v in zip(start.units, want.units, strict=False)):
        event("bandits struck")
    _label_events(start, want)
    _agree(case, want, state, board)


@pytest.mark.nojit
@DEFAULT
@given(end_turn_cases())
def test_v19_t11_t12_end_turn_matches_reference(case):
    """V19, T11, T12, B6, C: Turn cycle — ending a seat's turn opens the next standing
    seat's (rotation from the turn's opening seat); after the last seat a new turn
    starts (truces, pacts, bandit camps) unless it was the last turn: then the seat
    ranked first by T11 (score, population, region tiles, gold stock, seat order) wins."""
    _check_end_turn(case)


@pytest.mark.slow
@SLOW
@given(end_turn_cases())
def test_v19_t11_t12_end_turn_matches_reference_slow(case):
    _check_end_turn(case)


def _check_turn_limit(case: Case) -> None:
    _check_end_turn(case)
    board = make_board(case.pos.radius)
    rows = ref.score_table(board.radius, ref._territory_cities(case.pos), {},
                           [x.gold for x in case.pos.seats], [x.alive for x in case.pos.seats],
                           case.rules.territory)
    top = sorted((r for r in rows if r["alive"]), key=lambda r: r["rank"])[:2]
    keys = ("score", "population", "region_tiles", "gold")
    for k in keys:
        if top[0][k] != top[1][k]:
            event(f"turn limit decided by {k}")
            break
    else:
        event("turn limit decided by seat order")


@pytest.mark.nojit
@DEFAULT
@given(turn_limit_ties())
def test_v19_t11_turn_limit_tiebreaks_match_reference(case):
    """V19, T11 — near-tied seats at the end of the last turn: score, then population,
    region tiles, gold stock (not gold points), then seat order decide the winner."""
    _check_turn_limit(case)


@pytest.mark.slow
@SLOW
@given(turn_limit_ties())
def test_v19_t11_turn_limit_tiebreaks_match_reference_slow(case):
    _check_turn_limit(case)


# ----------------------------------------------------- oracle self-checks ----

def test_oracle_codes_follow_the_tables_contract():
    """Codes are positions in the sorted names (sim.rules.tables); the oracle relies on it."""
    for tables, rules in zip(VARIANTS, RULES, strict=True):
        assert rules.unit_order == list(tables.unit_names)
        assert rules.building_order == list(tables.building_names)
        assert rules.tech_order == list(tables.tech_names)
        assert rules.card_order == list(tables.card_names)


@pytest.mark.nojit
@DEFAULT
@given(st.integers(0, 2 ** 64 - 1), st.integers(1, 1000))
def test_oracle_splitmix64_replays_the_engine_stream(seed, n):
    """sim.world.rng documents splitmix64; the oracle's pure-Python copy gives the same draws."""
    from sim.world.rng import below

    counter = np.array([seed], dtype=np.uint64)
    stream = ref.Stream(seed)
    for _ in range(3):
        assert int(below(counter, np.int64(n))) == stream.below(n)
        assert int(counter[0]) == stream.counter


def test_oracle_known_cases():
    """Hand-worked numbers from the combat docstring and V08, on the fixture tables."""
    rules = RULES[0]
    terrain = dict.fromkeys(ref.all_tiles(6), "plains")
    terrain[(1, 0)] = "hills"
    seats = [Seat(capital=0), Seat(capital=2)]
    cities = [City(0, 0, (0, 0), 3, 22, capital=True, queue=["observatory"], production=9),
              City(1, 0, (4, 0), 2, 18, revolt=1, revolt_cause="unrest"),
              City(2, 1, (-5, 0), 1, 14, capital=True),
              City(3, 0, (0, 5), 4, 26, buildings={"divan"})]
    units = [Unit(0, 1, "warrior", (1, 0), 10, 1), Unit(1, 0, "spearman", (2, 0), 10, 1)]
    pos = Position(6, terrain, {}, {}, seats, cities, units, [[0, 0], [0, 0]],
                   [Pact() for _ in range(8)], [None] * 24, turn=7)
    # warrior (4) on hills attacks city 0 (pop 3, plains): A = 400, D = (4+3)×100 = 700
    preview = ref.attack_preview(pos, rules, 0, (0, 0), 1)
    assert preview == (frozenset(), "city", 0, 10 * 400 // 1100, 10 * 700 // 1100)
    # spearman (5) attacks the warrior on hills: D = 4 × 150 = 600, A = 500
    preview = ref.attack_preview(pos, rules, 1, (1, 0), 0)
    assert preview == (frozenset(), "unit", 0, 10 * 500 // 1100, 10 * 600 // 1100)
    # V08: capital 0 falls; city 1 (4 steps, unrest revolt) passes, revolt 3;
    # city 3 (5 steps) stays and becomes the capital
    pos.cities[0].hp = 0
    refusals, after = ref.enter(pos, rules, 0, 0, 1)
    assert not refusals
    c0, c1, c3 = after.cities[0], after.cities[1], after.cities[3]
    assert (c0.owner, c0.pop, c0.hp, c0.queue, c0.production) == (1, 2, 18, [], 0)
    assert (c1.owner, c1.revolt, c1.revolt_cause, c1.pop, c1.hp) == (1, 3, "transfer", 2, 18)
    assert (c3.owner, c3.capital, after.seats[0].capital) == (0, True, 3)
    assert [e.kind for e in after.events] == ["observatory_lost", "capture", "capital_fall",
                                              "transfer", "revolt_start", "kept"]
    assert after.events[2] == Event(7, "capital_fall", 0, 1, 0, 3)

"""D2: with the default tables every combat modifier counts.

Every default attacker (each fighting unit type and the bandit) strikes every kind of
target (each unit type; a seat's city at every population; a neutral village), with
and without each modifier that applies there (forest and hills for the defender,
Walls and revolt ×0.5 for a city, the attacker's siege bonus against cities); the
damage it deals must differ. The kernel's preview (T16) is checked against the
plain reference for every one of those positions, so the oracle follows the rule too.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from sim.kernels.rules.combat import attack_outcome
from sim.rules.codes import OK
from sim.rules.tables import load_tables
from sim.world.board import make_board
from tests.reference.engine import (
    City,
    EngineRules,
    Pact,
    Position,
    Seat,
    Unit,
    attack_preview,
    state_from_position,
)

TABLES = load_tables()  # the designers' default tables: D2 is a property of them
RULES = EngineRules.from_tables(TABLES)
RADIUS = 4
ATTACKER_AT, TARGET_AT = (0, 0), (1, 0)
FIGHTERS = [n for n in RULES.unit_order if RULES.is_military(n)]
ATTACKERS = [*FIGHTERS, "bandit"]
TERRAIN_MODIFIERS = [t for t in ("forest", "hills") if RULES.terrain_defence_pct(t) != 0]


def _position(attacker: str, target: str, terrain: str = "plains", pop: int = 1,
              walls: bool = False, revolt: bool = False) -> Position:
    """Attacker (seat 0, or a bandit) on plains next to `target`: a unit type of seat
    1, "city" (seat 1's capital of population `pop`) or "village" (neutral)."""
    m = TABLES.model
    tiles = [(q, r) for q in range(-RADIUS, RADIUS + 1) for r in range(-RADIUS, RADIUS + 1)
             if abs(q + r) <= RADIUS]
    terrain_map = dict.fromkeys(tiles, "plains")
    terrain_map[TARGET_AT] = terrain
    seats = [Seat(gold=0, capital=0), Seat(gold=0, capital=1)]
    far0, far1 = (-RADIUS, 0), (-RADIUS, RADIUS)
    cities = [City(0, 0, far0, 1, RULES.max_hp(1, set()), capital=True)]
    units = []
    if target in ("city", "village"):
        buildings = {"walls"} if walls else set()
        owner = 1 if target == "city" else "neutral"
        city_pop = pop if target == "city" else m.neutrals.village_population
        cities.append(City(1, owner, TARGET_AT, city_pop, RULES.max_hp(city_pop, buildings),
                           capital=target == "city", buildings=buildings,
                           revolt=3 if revolt else 0, revolt_cause="transfer" if revolt else None))
        if target == "village":
            cities.append(City(2, 1, far1, 1, RULES.max_hp(1, set()), capital=True))
            seats[1].capital = 2
    else:
        cities.append(City(1, 1, far1, 1, RULES.max_hp(1, set()), capital=True))
    owner = "bandit" if attacker == "bandit" else 0
    units.append(Unit(0, owner, attacker, ATTACKER_AT, RULES.full_hp(attacker),
                      RULES.moves(attacker)))
    if target not in ("city", "village"):
        units.append(Unit(1, 1, target, TARGET_AT, RULES.full_hp(target), RULES.moves(target)))
    return Position(radius=RADIUS, terrain=terrain_map, nodes={}, bought={}, seats=seats,
                    cities=cities, units=units, truce=[[0, 0], [0, 0]],
                    pacts=[Pact() for _ in range(8)], camps=[None] * 24)


def _damage(pos: Position, seat) -> int:
    """Damage the attack deals by the kernel's preview, checked against the reference."""
    board = make_board(RADIUS)
    state = state_from_position(pos, TABLES, board)
    side = -3 if seat == "bandit" else seat
    why, _kind, _tid, to_target, to_attacker = attack_outcome(
        state, TABLES.arrays(), board, np.int64(0), np.int64(board.index(*TARGET_AT)),
        np.int64(side))
    assert why == OK
    ref = attack_preview(pos, RULES, 0, TARGET_AT, seat)
    assert (ref.damage_to_target, ref.damage_to_attacker) == (to_target, to_attacker)
    return int(to_target)


def _cases():
    for attacker in ATTACKERS:
        seat = "bandit" if attacker == "bandit" else 0
        for target, terrain in itertools.product(RULES.unit_order, TERRAIN_MODIFIERS):
            yield (f"{attacker}>{target}:{terrain}", seat, _position(attacker, target),
                   _position(attacker, target, terrain=terrain))
        if attacker == "bandit":
            continue  # bandits never attack cities (V06)
        for pop in range(1, TABLES.model.city.max_population + 1):
            base = _position(attacker, "city", pop=pop)
            for terrain in TERRAIN_MODIFIERS:
                yield (f"{attacker}>city{pop}:{terrain}", seat, base,
                       _position(attacker, "city", terrain=terrain, pop=pop))
            yield (f"{attacker}>city{pop}:walls", seat, base,
                   _position(attacker, "city", pop=pop, walls=True))
            yield (f"{attacker}>city{pop}:revolt", seat, base,
                   _position(attacker, "city", pop=pop, revolt=True))
        for terrain in TERRAIN_MODIFIERS:
            yield (f"{attacker}>village:{terrain}", seat, _position(attacker, "village"),
                   _position(attacker, "village", terrain=terrain))


CASES = list(_cases())


@pytest.mark.parametrize("name, seat, without, with_modifier", CASES,
                         ids=[c[0] for c in CASES])
def test_d2_every_modifier_changes_the_damage_of_every_default_attacker(
        name, seat, without, with_modifier):
    assert _damage(without, seat) != _damage(with_modifier, seat), name


def test_d2_siege_bonus_counts_for_every_attacker_that_has_one():
    """An attacker whose city_attack_pct is not 100 deals other damage to a city than
    the same unit with the bonus set to 100 would (the siege modifier counts)."""
    plain = TABLES.with_overrides({f"units.{u}.city_attack_pct": 100 for u in FIGHTERS})
    plain_rules = EngineRules.from_tables(plain)
    checked = 0
    for attacker in FIGHTERS:
        if TABLES.model.units[attacker].city_attack_pct == 100:
            continue
        for pop in range(1, TABLES.model.city.max_population + 1):
            pos = _position(attacker, "city", pop=pop)
            with_bonus = attack_preview(pos, RULES, 0, TARGET_AT, 0).damage_to_target
            without = attack_preview(pos, plain_rules, 0, TARGET_AT, 0).damage_to_target
            assert with_bonus != without, (attacker, pop)
            checked += 1
    assert checked > 0


def test_d2_v11_a_revolting_city_takes_more_damage_from_every_default_attacker():
    for attacker, pop in itertools.product(FIGHTERS, range(1, 6)):
        calm = _damage(_position(attacker, "city", pop=pop), 0)
        revolting = _damage(_position(attacker, "city", pop=pop, revolt=True), 0)
        assert revolting > calm, (attacker, pop)

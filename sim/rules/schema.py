"""The schema of the balance tables: one pydantic model per TOML table, with bounds.

Every key a designer may set is declared here once, with the range validation
allows; `sim.rules.record` derives the record kernels receive from these same
declarations, and `sim.rules.tables` loads, cross-checks and hashes them.

Tables keyed by a code name (one key per terrain, node kind or personality
weight) are generated from the name tuples of `sim.rules.codes`, so a code and
its table keys cannot drift apart; so are the `Literal` choices of a tech's
focus and a card's kind.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from sim.rules.codes import (
    CARD_KINDS,
    MAX_DISC_RADIUS,
    NODE_KINDS,
    PERSONALITY_WEIGHTS,
    TERRAINS,
)

Count = Annotated[int, Field(ge=0, le=1_000_000)]
Positive = Annotated[int, Field(ge=1, le=1_000_000)]
Pct = Annotated[int, Field(ge=0, le=100)]
Weight = Annotated[int, Field(ge=0, le=1_000_000)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def _per_code(name: str, codes: tuple[str, ...], value: Any, doc: str) -> type[_Model]:
    """A model with one required key of type `value` per name of `codes`, in code order."""
    return create_model(name, __base__=_Model, __module__=__name__, __doc__=doc,
                        **{code: (value, ...) for code in codes})


class MatchT(_Model):
    seats: Annotated[int, Field(ge=2, le=6)]
    length: str
    personalities: Annotated[list[str], Field(min_length=1)]
    start_units: Annotated[list[str], Field(max_length=6)]
    lengths: dict[str, Annotated[int, Field(ge=1, le=10_000)]]


TerrainWeights = _per_code("TerrainWeights", TERRAINS, Weight,
                           "Relative weight of each terrain in the map draw (C: Map).")
NodeWeights = _per_code("NodeWeights", NODE_KINDS, Weight,
                        "Relative weight of each resource node kind (C: Map).")


class MapT(_Model):
    radius: Annotated[int, Field(ge=3, le=30)]
    node_share_pct: Pct
    villages_per_seat: Annotated[int, Field(ge=0, le=4)]
    camps_per_seat: Annotated[int, Field(ge=0, le=4)]
    camp_min_distance: Annotated[int, Field(ge=1, le=20)]
    camp_min_spacing: Annotated[int, Field(ge=1, le=20)]
    start_edge_margin: Annotated[int, Field(ge=0, le=10)]
    terrain_weights: TerrainWeights
    node_weights: NodeWeights


class TerrainStats(_Model):
    defence_pct: Annotated[int, Field(ge=-90, le=500)]
    passable: bool


TerrainT = _per_code("TerrainT", TERRAINS, TerrainStats,
                     "Defence bonus and passability of each terrain (C: Map, C: Combat).")


class TerritoryT(_Model):
    ring_radius: Annotated[int, Field(ge=0, le=MAX_DISC_RADIUS)]
    grown_ring_radius: Annotated[int, Field(ge=0, le=MAX_DISC_RADIUS)]
    grown_ring_population: Positive
    max_ring_tiles: Positive
    tile_price_first: Count
    tile_price_step: Count
    city_min_distance: Annotated[int, Field(ge=1, le=20)]


class ScoreT(_Model):
    w_region: Count
    w_population: Count
    w_city: Count
    gold_per_point: Positive


class CityT(_Model):
    quota: Annotated[int, Field(ge=1, le=20)]
    max_population: Annotated[int, Field(ge=1, le=20)]
    hp_base: Positive
    hp_per_population: Count
    repair_per_turn: Count
    gold_repair_price: Count
    growth_base: Positive
    growth_per_population: Count
    defence_base: Positive
    defence_per_population: Count
    settler_min_population: Positive
    settler_population_cost: Count
    start_population: Positive


class EconomyT(_Model):
    food_base: Count
    food_per_population: Count
    production_base: Count
    production_per_population: Count
    gold_base: Count
    gold_per_population: Count
    science_base: Count
    science_per_population: Count
    node_food: Count
    node_production: Count
    node_gold: Count
    free_units_per_city: Count
    upkeep_per_unit: Count
    rush_gold_per_production: Count
    start_gold: Count


class RevoltT(_Model):
    transfer_turns: Annotated[int, Field(ge=0, le=50)]
    capital_fall_radius: Annotated[int, Field(ge=0, le=60)]
    defence_pct: Annotated[int, Field(ge=0, le=100)]
    law_tech: str
    law_share_pct: Pct


class DominanceT(_Model):
    share_pct: Annotated[int, Field(ge=1, le=100)]
    counter_to_win: Annotated[int, Field(ge=1, le=1000)]


class ScienceT(_Model):
    observatory: str
    observatory_tech: str


class CombatT(_Model):
    damage_scale: Positive
    min_damage: Count
    city_attack_retaliation: bool


class NeutralsT(_Model):
    village_population: Annotated[int, Field(ge=1, le=20)]
    village_defence: Positive
    bandit_spawn_interval: Positive
    bandit_cap_per_camp: Count
    bandit_attack: Count
    bandit_defence: Positive
    bandit_hp: Positive
    bandit_moves: Annotated[int, Field(ge=1, le=10)]
    camp_clear_gold: Count


class DiplomacyT(_Model):
    truce_price: Count
    truce_turns: Positive
    pact_dominance_trigger: Positive
    pact_turns: Positive


class Card(_Model):
    weight: Weight
    kind: Literal[CARD_KINDS]
    amount: Count


class EventsT(_Model):
    unrest_turns: Annotated[int, Field(ge=0, le=50)]
    cards: Annotated[dict[str, Card], Field(min_length=1)]


class Tech(_Model):
    cost: Count
    focus: Literal[PERSONALITY_WEIGHTS] = "economy"
    requires: list[str] = []


class Unit(_Model):
    cost: Count
    hp: Positive
    attack: Count
    defence: Positive
    moves: Annotated[int, Field(ge=1, le=10)]
    range: Annotated[int, Field(ge=0, le=10)]
    tech: str = ""
    founds_city: bool = False
    city_attack_pct: Annotated[int, Field(ge=0, le=1000)] = 100


class Building(_Model):
    cost: Count
    tech: str = ""
    food: Count = 0
    production: Count = 0
    gold: Count = 0
    science: Count = 0
    defence_pct: Annotated[int, Field(ge=0, le=1000)] = 0
    hp: Count = 0
    revolt_shorten: Annotated[int, Field(ge=0, le=50)] = 0
    score_points: Count = 0
    one_per_empire: bool = False
    rushable: bool = True
    science_victory: bool = False


Personality = _per_code("Personality", PERSONALITY_WEIGHTS, Pct,
                        "The weights (0-100) a seat's utility AI multiplies its options by.")


class AIT(_Model):
    war_turn: Annotated[int, Field(ge=0, le=10_000)]
    defend_radius: Annotated[int, Field(ge=0, le=10)]
    defenders: Annotated[int, Field(ge=0, le=100)]
    army_base_pct: Annotated[int, Field(ge=0, le=1000)]
    army_military_pct: Annotated[int, Field(ge=0, le=1000)]
    siege_share_pct: Pct
    upkeep_share_pct: Annotated[int, Field(ge=0, le=1000)]
    muster_units: Annotated[int, Field(ge=0, le=100)]
    muster_radius: Annotated[int, Field(ge=1, le=10)]
    observatory_value: Annotated[int, Field(ge=0, le=10_000)]
    capital_value: Annotated[int, Field(ge=0, le=10_000)]
    transfer_value_pct: Annotated[int, Field(ge=0, le=1000)]
    finish_nearest: bool
    dominance_value: Annotated[int, Field(ge=0, le=10_000)]
    personalities: Annotated[dict[str, Personality], Field(min_length=1)]


class TablesModel(_Model):
    match: MatchT
    map: MapT
    terrain: TerrainT
    territory: TerritoryT
    score: ScoreT
    city: CityT
    economy: EconomyT
    revolt: RevoltT
    dominance: DominanceT
    science: ScienceT
    combat: CombatT
    neutrals: NeutralsT
    diplomacy: DiplomacyT
    events: EventsT
    techs: Annotated[dict[str, Tech], Field(min_length=1)]
    units: dict[str, Unit]
    buildings: dict[str, Building]
    ai: AIT

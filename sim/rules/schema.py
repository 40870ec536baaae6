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
    VALUE_FEATURES,
)

# The name of a unit, building, tech, personality, event card or length preset: a part
# of dotted keys (--set units.NAME.cost=...), of comma-separated lists (--personalities,
# the personalities column) and of the outcome tables, so no dot, comma, space, quote,
# markup or control character, and short (issue 47: names are data)
ItemName = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_\-]*$", max_length=40)]
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
    lengths: dict[ItemName, Annotated[int, Field(ge=1, le=10_000)]]
    # D6: research, production and growth costs of each preset, in % of the tables' own
    cost_scale_pct: dict[ItemName, Annotated[int, Field(ge=10, le=1000)]]
    # D6 too: the dominance counter to win (V18) of each preset, in % of the tables' own
    dominance_scale_pct: dict[ItemName, Annotated[int, Field(ge=10, le=1000)]] = {}
    # D6 too: the board radius of each preset, in % of map.radius (a preset not listed:
    # 100), so a short match is a whole game on a board it can cross in its turns
    radius_scale_pct: dict[ItemName, Annotated[int, Field(ge=10, le=1000)]] = {}
    # the seat-count adjustment: the same two scales per seat count ("2" … "6"), applied
    # on top of the preset's (a missing seat count: 100)
    seat_cost_scale_pct: dict[ItemName, Annotated[int, Field(ge=10, le=1000)]] = {}
    seat_dominance_scale_pct: dict[ItemName, Annotated[int, Field(ge=10, le=1000)]] = {}
    # and the preset's turns (V19's last turn) in % again per seat count: more rivals
    # to beat take more turns
    seat_length_scale_pct: dict[ItemName, Annotated[int, Field(ge=10, le=1000)]] = {}


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
    # D1: fair starts
    start_candidates: Annotated[int, Field(ge=1, le=64)]
    start_balance_radius: Annotated[int, Field(ge=1, le=10)]
    start_tolerance_pct: Pct
    start_land_weight: Weight
    start_node_weight: Weight
    start_food_weight: Weight
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
    # D3: HP an idle damaged unit heals at its seat's flow
    heal_in_city: Count
    heal_in_region: Count
    heal_elsewhere: Count


class NeutralsT(_Model):
    village_population: Annotated[int, Field(ge=1, le=20)]
    village_defence: Positive
    bandit_first_spawn_turn: Annotated[int, Field(ge=1, le=10_000)]
    bandit_spawn_interval: Positive
    bandit_chase_radius: Annotated[int, Field(ge=0, le=20)]
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
    cards: Annotated[dict[ItemName, Card], Field(min_length=1)]


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
    # the AI looks for targets in the board's disc table, which reaches MAX_DISC_RADIUS
    range: Annotated[int, Field(ge=0, le=MAX_DISC_RADIUS)]
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


# ---------------------------------------------------------------- the AI (C: AI)
# Every number the utility AI decides by, in one sub-table per part of sim/kernels/ai.
# `[ai.<part>]` is the shared default; a personality overrides any of them under
# `[ai.personalities.<name>.<part>]`, so each seat plays its own whole parameter set (D8).
Steps = Annotated[int, Field(ge=0, le=60)]             # a distance on the board (radius <= 30)
AIValue = Annotated[int, Field(ge=0, le=100_000)]     # a utility, bonus or cost
AIScale = Annotated[int, Field(ge=1, le=100_000)]     # a scale, divisor or offset under a division
AIPct = Annotated[int, Field(ge=0, le=10_000)]        # a share in percent (may exceed 100)
AICount = Annotated[int, Field(ge=0, le=100)]         # units or settlers


class AIResearchT(_Model):
    """sim/kernels/ai/research.py"""

    research_weight_base: AIValue
    research_value_scale: AIScale
    research_cost_offset: AIScale
    science_road_pct: AIPct


class AIDiplomacyT(_Model):
    """sim/kernels/ai/diplomacy.py"""

    war_memory: Annotated[int, Field(ge=1, le=1000)]
    peace_threat_radius: Steps
    peace_min_units: Annotated[int, Field(ge=1, le=100)]
    peace_from_prosperity: bool
    attack_per_city: AIScale
    loss_value_pct: AIPct
    conquest_value_pct: AIPct
    offer_margin_pct: AIPct
    retry_turns: Annotated[int, Field(ge=0, le=1000)]


class AIDefenceT(_Model):
    """sim/kernels/ai/threats.py, military.py: threats to the seat's cities"""

    threat_radius: Steps
    defend_radius: Annotated[int, Field(ge=0, le=10)]
    defenders: AICount
    defend_reach: Steps
    home_guard: AICount
    guard_pct: Pct


class AIArmyT(_Model):
    """sim/kernels/ai/production.py: how many and which fighting units"""

    army_base_pct: Annotated[int, Field(ge=0, le=1000)]
    army_military_pct: Annotated[int, Field(ge=0, le=1000)]
    war_army_pct: Annotated[int, Field(ge=0, le=1000)]
    war_army_extra: AICount
    threat_per_unit: AIScale
    siege_share_pct: Pct
    threat_ranged_max_pct: Pct
    upkeep_share_pct: Annotated[int, Field(ge=0, le=1000)]
    recruit_shortfall_value: AIValue
    recruit_threat_value: AIValue
    recruit_garrison_value: AIValue
    melee_attack_weight: AIValue
    melee_defence_weight: AIValue
    ranged_unit_attack_weight: AIValue
    ranged_defence_weight: AIValue
    pick_value_scale: AIScale
    pick_cost_offset: AIScale
    melee_moves_weight: AIValue
    melee_hp_weight: AIValue


class AIExpansionT(_Model):
    """sim/kernels/ai/production.py, sites.py: settlers and founding sites"""

    max_settlers: AICount
    settler_expansion_value: AIValue
    settler_city_cost: AIValue
    site_ring_radius: Annotated[int, Field(ge=0, le=MAX_DISC_RADIUS)]
    site_tile_value: AIValue
    site_node_value: AIValue
    site_distance_cost: AIValue
    site_search_radius: Steps
    found_here_slack: AIValue


class AIBuildingsT(_Model):
    """sim/kernels/ai/production.py: which building"""

    building_yield_value: AIValue
    defence_threat_value: AIValue
    defence_military_pct: AIPct
    score_building_value: AIValue
    score_building_late_value: AIValue
    late_game_pct: Pct
    revolt_building_value: AIValue
    revolt_war_value: AIValue
    science_victory_value: AIValue
    building_value_scale: AIScale
    building_cost_offset: AIScale
    value_horizon_pct: Annotated[int, Field(ge=1, le=100)]
    growth_room: Annotated[int, Field(ge=1, le=100)]


class AIGoldT(_Model):
    """sim/kernels/ai/gold.py"""

    rush_price_pct: AIPct
    rush_economy_base: AIScale
    rush_reserve: AIValue
    tile_buy_min_economy: Pct
    tile_buy_reserve: AIValue
    tile_margin_pct: AIPct


class AIWarT(_Model):
    """sim/kernels/ai/threats.py, military.py: when, where and how the army marches"""

    war_turn_pct: Pct
    early_war_units_per_city: AICount
    early_war_weight_step: AIScale
    village_min_army: AICount
    village_search_radius: Steps
    camp_search_radius: Steps
    muster_units: AICount
    muster_radius: Annotated[int, Field(ge=1, le=10)]
    finish_nearest: bool
    dominance_hold: bool
    target_military_base: AIScale
    target_value_scale: AIScale
    target_distance_offset: AIScale
    city_base_value: AIValue
    city_pop_value: AIValue
    village_value: AIValue
    capital_value: Annotated[int, Field(ge=0, le=10_000)]
    capital_finishing_factor: AICount
    transfer_value_pct: Annotated[int, Field(ge=0, le=1000)]
    city_building_value: AIValue
    revolt_value: AIValue
    dominance_value: Annotated[int, Field(ge=0, le=10_000)]
    observatory_value: Annotated[int, Field(ge=0, le=10_000)]
    prosperity_value: Annotated[int, Field(ge=0, le=10_000)]
    observatory_reach: Steps


class AICombatT(_Model):
    """sim/kernels/ai/military.py: which attack is worth it (T16 preview)"""

    reckless_military: Pct
    strike_city_value: AIValue
    strike_city_value_divisor: AIScale
    strike_city_cost: AIValue
    strike_zero_value: AIValue
    strike_unit_value: AIValue
    strike_unit_cost_base: AIValue
    strike_unit_cost_divisor: AIScale
    strike_kill_value: AIValue


class AIChoiceT(_Model):
    """sim/kernels/ai/choice.py: graded choices (production, units, research)"""

    band_pct: Annotated[int, Field(ge=0, le=100)]
    unit_band_pct: Annotated[int, Field(ge=0, le=100)]
    research_band_pct: Annotated[int, Field(ge=0, le=100)]


class AIScoreT(_Model):
    """sim/kernels/ai/threats.py, production.py, gold.py: reading the score (T10, T13, D8)"""

    score_phase_pct: Pct
    score_value_pct: AIPct
    score_phase_value_pct: AIPct
    lead_value: AIValue
    lead_scale: AIScale


class _AIDecisionT(_Model):
    """When a skill-1 or skill-2 seat decides its orders and how it values them (D11).
    Shared by every personality (a seat's skill is not a personality's), so not in
    AI_PARTS; timings are % of the match's turns (D6)."""

    every_pct: Annotated[int, Field(ge=1, le=100)]
    horizon_pct: Pct
    start_pct: Pct
    stop_pct: Pct
    keep_margin: AIValue
    targets: Annotated[int, Field(ge=0, le=16)]
    win_value: AIValue


class AILookaheadT(_AIDecisionT):
    """sim/kernels/lookahead.py: a skill-1 seat's lookahead (D11). Its budget:
    `candidates` orders, each played out once for `horizon_pct` % of the turns, every
    `every_pct` %; city_candidate and plan_candidate fix two of the candidates (the
    nearest rival city as war order, another plan on the same war order) instead of
    drawing them."""

    candidates: Annotated[int, Field(ge=1, le=64)]
    city_candidate: bool
    plan_candidate: bool


class AISearchT(_AIDecisionT):
    """sim/kernels/search.py: a skill-2 seat's search (D11). Its budget: `rollouts`
    sampled play-outs of `horizon_pct` % of the turns per decision, a decision every
    `every_pct` % of the match's turns."""

    rollouts: Annotated[int, Field(ge=1, le=10_000)]


ValueWeights = _per_code(
    "ValueWeights", VALUE_FEATURES, Annotated[int, Field(ge=-10_000_000, le=10_000_000)],
    "The learned value's weight of each feature (sim.rules.codes.VALUE_FEATURES), in "
    "1/VALUE_UNIT of a logit of the win chance per unit of the feature.")


class AIValueT(_Model):
    """sim/kernels/lookahead.py position_value: the value of a skill-1 seat's standing at
    a play-out's end (D11), a logistic model of its chance to win the match fitted on
    skill-0 matches (tools/fit_value.py). Tables without it value a play-out by the
    score margin."""

    weights: ValueWeights


AI_PARTS = {"research": AIResearchT, "diplomacy": AIDiplomacyT, "defence": AIDefenceT,
            "army": AIArmyT, "expansion": AIExpansionT, "buildings": AIBuildingsT,
            "gold": AIGoldT, "war": AIWarT, "combat": AICombatT, "choice": AIChoiceT,
            "score": AIScoreT}


def _override(part: type[_Model]) -> type[_Model]:
    """`part` with every key optional (None: the shared default applies); a module
    attribute, so tables pickle to worker processes."""
    model = create_model(f"{part.__name__}Override", __base__=_Model, __module__=__name__,
                         __doc__=f"A personality's overrides of {part.__doc__}",
                         **{k: (info.annotation | None, None)
                            for k, info in part.model_fields.items()})
    globals()[model.__name__] = model
    return model


PersonalityWeights = _per_code("PersonalityWeights", PERSONALITY_WEIGHTS, Pct,
                               "The weights (0-100) a seat's utility AI multiplies its "
                               "options by.")

Personality = create_model(
    "Personality", __base__=_Model, __module__=__name__,
    __doc__="One personality (D8): its weights and its overrides of any shared "
            "`[ai.<part>]` value.",
    weights=(PersonalityWeights, ...),
    **{part: (_override(model) | None, None) for part, model in AI_PARTS.items()})

AIT = create_model(
    "AIT", __base__=_Model, __module__=__name__,
    __doc__="The shared AI values and the personalities that override them (D8).",
    **{part: (model, ...) for part, model in AI_PARTS.items()},
    lookahead=(AILookaheadT, ...),
    search=(AISearchT, ...),
    value=(AIValueT | None, None),
    personalities=(Annotated[dict[ItemName, Personality], Field(min_length=1)], ...))


def personality_values(ai: Any, name: str) -> dict[str, dict[str, Any]]:
    """The whole AI parameter set of personality `name`: {part: {key: value}}, each
    value the personality's override or else the shared default (D8)."""
    own = ai.personalities[name]
    out: dict[str, dict[str, Any]] = {}
    for part in AI_PARTS:
        values = getattr(ai, part).model_dump()
        override = getattr(own, part)
        if override is not None:
            values.update({k: v for k, v in override.model_dump().items() if v is not None})
        out[part] = values
    return out


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
    techs: Annotated[dict[ItemName, Tech], Field(min_length=1)]
    units: dict[ItemName, Unit]
    buildings: dict[ItemName, Building]
    ai: AIT

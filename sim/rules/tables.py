"""Balance tables: load TOML, validate, apply variant overrides, hash, compile to arrays.

The flow is one way: `tables/*.toml` -> `Tables` (validated, with names) ->
`TableArrays` (plain numpy arrays and ints, the only thing kernels see).
Names of units, buildings, techs, personalities and event cards are ordered by
name, so the integer codes kernels use depend on the content of the tables only,
like the hash does.

Every validation error is collected and reported at once as
`file:line: key.path: reason` (`TablesError.errors`).
"""

from __future__ import annotations

import copy
import hashlib
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sim.rules.codes import (
    CARD_KINDS,
    NODE_KINDS,
    PERSONALITY_WEIGHTS,
    TERRAINS,
)
from sim.rules.tomlpos import key_lines, line_of

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_TABLES = REPO_ROOT / "tables" / "default.toml"

# Names the scenario contract (SCENARIOS.md) refers to; the tables must define them.
REQUIRED_UNITS = ("settler", "warrior", "spearman", "archer", "horseman", "catapult", "swordsman")
REQUIRED_BUILDINGS = ("granary", "workshop", "market", "walls", "madrasa", "divan", "monument",
                      "observatory")
REQUIRED_TECHS = ("law", "prosperity")

Count = Annotated[int, Field(ge=0, le=1_000_000)]
Positive = Annotated[int, Field(ge=1, le=1_000_000)]
Pct = Annotated[int, Field(ge=0, le=100)]
Weight = Annotated[int, Field(ge=0, le=1_000_000)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class MatchT(_Model):
    seats: Annotated[int, Field(ge=2, le=6)]
    length: str
    personalities: Annotated[list[str], Field(min_length=1)]
    start_units: Annotated[list[str], Field(max_length=6)]
    lengths: dict[str, Annotated[int, Field(ge=1, le=10_000)]]


class TerrainWeights(_Model):
    plains: Weight
    forest: Weight
    hills: Weight
    mountain: Weight
    water: Weight


class NodeWeights(_Model):
    food: Weight
    production: Weight
    gold: Weight


class MapT(_Model):
    radius: Annotated[int, Field(ge=3, le=30)]
    node_share_pct: Pct
    villages_per_seat: Annotated[int, Field(ge=0, le=4)]
    camps_per_seat: Annotated[int, Field(ge=0, le=4)]
    camp_min_distance: Annotated[int, Field(ge=1, le=20)]
    start_edge_margin: Annotated[int, Field(ge=0, le=10)]
    terrain_weights: TerrainWeights
    node_weights: NodeWeights


class TerrainStats(_Model):
    defence_pct: Annotated[int, Field(ge=-90, le=500)]
    passable: bool


class TerrainT(_Model):
    plains: TerrainStats
    forest: TerrainStats
    hills: TerrainStats
    mountain: TerrainStats
    water: TerrainStats


class TerritoryT(_Model):
    ring_radius: Annotated[int, Field(ge=0, le=5)]
    grown_ring_radius: Annotated[int, Field(ge=0, le=5)]
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
    camp_clear_gold: Count


class DiplomacyT(_Model):
    truce_price: Count
    truce_turns: Positive
    pact_dominance_trigger: Positive
    pact_turns: Positive


class Card(_Model):
    weight: Weight
    kind: Literal["nothing", "public_unrest", "gold", "food", "science"]
    amount: Count


class EventsT(_Model):
    unrest_turns: Annotated[int, Field(ge=0, le=50)]
    cards: Annotated[dict[str, Card], Field(min_length=1)]


class Tech(_Model):
    cost: Count
    focus: Literal["expansion", "military", "science", "economy"] = "economy"
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


class Personality(_Model):
    expansion: Pct
    military: Pct
    science: Pct
    economy: Pct


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


class TableArrays(NamedTuple):
    """Balance values as plain ints and numpy arrays: the fields of the record kernels receive.

    `compile_arrays` returns these fields packed in one numpy record (see
    `as_record`): numba passes a record as a single pointer, which keeps
    kernels quick to compile; field access reads the same (`tb.w_city`,
    `tb.unit_cost[u]`). In the record, flags are uint8 and scalars int64.

    Codes: terrain 0..4 in `TERRAINS` order, node kinds 0..2 in `NODE_KINDS`
    order, yields 0..3 in `YIELDS` order; units, buildings, techs, personalities
    and cards indexed by the sorted names kept on `Tables`.
    """

    # map generation and setup (C: Map)
    start_units: np.ndarray          # (N,) unit types each seat starts with
    radius: int
    node_share_pct: int
    villages_per_seat: int
    camps_per_seat: int
    camp_min_distance: int
    start_edge_margin: int
    terrain_weights: np.ndarray      # (5,) int64
    node_weights: np.ndarray         # (3,) int64
    terrain_defence_pct: np.ndarray  # (5,) int64
    terrain_passable: np.ndarray     # (5,) bool
    # territory (T01-T08)
    ring_radius: int
    grown_ring_radius: int
    grown_ring_population: int
    tile_price_first: int
    tile_price_step: int
    city_min_distance: int
    # score (T13)
    w_region: int
    w_population: int
    w_city: int
    gold_per_point: int
    # cities (T15, C: Cities)
    quota: int
    max_population: int
    hp_base: int
    hp_per_population: int
    repair_per_turn: int
    gold_repair_price: int
    growth_base: int
    growth_per_population: int
    city_defence_base: int
    city_defence_per_population: int
    settler_min_population: int
    settler_population_cost: int
    start_population: int
    # economy (C: Economy)
    yield_base: np.ndarray           # (4,) int64 per YIELDS
    yield_per_population: np.ndarray # (4,) int64
    node_yield: np.ndarray           # (3,) int64 per NODE_KINDS
    free_units_per_city: int
    upkeep_per_unit: int
    rush_gold_per_production: int
    start_gold: int
    # revolt (V08, V11, B4)
    revolt_transfer_turns: int
    capital_fall_radius: int
    revolt_defence_pct: int
    law_tech: int
    law_share_pct: int
    # dominance (V18) and science (V16)
    dominance_share_pct: int
    dominance_to_win: int
    observatory: int
    observatory_tech: int
    # combat (T16)
    damage_scale: int
    min_damage: int
    city_retaliation: bool
    # neutrals (V06, T06)
    village_population: int
    village_defence: int
    bandit_spawn_interval: int
    bandit_cap_per_camp: int
    bandit_attack: int
    bandit_defence: int
    bandit_hp: int
    camp_clear_gold: int
    # diplomacy (V07)
    truce_price: int
    truce_turns: int
    pact_dominance_trigger: int
    pact_turns: int
    # events (V14)
    unrest_turns: int
    card_weight: np.ndarray          # (E,) int64
    card_kind: np.ndarray            # (E,) int64, index into CARD_KINDS
    card_amount: np.ndarray          # (E,) int64
    # research
    tech_cost: np.ndarray            # (K,) int64
    tech_requires: np.ndarray        # (K, K) bool, [t, p] = t needs p
    tech_focus: np.ndarray           # (K,) index into PERSONALITY_WEIGHTS
    # units
    unit_cost: np.ndarray            # (U,) int64 production
    unit_hp: np.ndarray
    unit_attack: np.ndarray
    unit_defence: np.ndarray
    unit_moves: np.ndarray
    unit_range: np.ndarray           # 0 = melee
    unit_tech: np.ndarray            # tech index, -1 none
    unit_founds_city: np.ndarray     # (U,) bool
    unit_city_attack_pct: np.ndarray
    # buildings
    building_cost: np.ndarray        # (B,) int64 production
    building_tech: np.ndarray        # tech index, -1 none
    building_yield: np.ndarray       # (B, 4) int64 per YIELDS
    building_defence_pct: np.ndarray
    building_hp: np.ndarray
    building_revolt_shorten: np.ndarray
    building_score_points: np.ndarray
    building_one_per_empire: np.ndarray  # (B,) bool
    building_rushable: np.ndarray        # (B,) bool
    building_science_victory: np.ndarray # (B,) bool
    # AI
    war_turn: int
    defend_radius: int
    defenders: int
    army_base_pct: int
    army_military_pct: int
    siege_share_pct: int
    upkeep_share_pct: int
    muster_units: int
    muster_radius: int
    observatory_value: int
    capital_value: int
    transfer_value_pct: int
    finish_nearest: bool
    dominance_value: int
    personality_weights: np.ndarray  # (P, 4) int64 per PERSONALITY_WEIGHTS


@dataclass(frozen=True)
class Tables:
    """Validated balance tables of one variant, with names, hash and arrays."""

    model: TablesModel
    source: str
    overrides: dict[str, Any] = field(default_factory=dict)

    @property
    def data(self) -> dict[str, Any]:
        return self.model.model_dump(mode="json")

    @property
    def hash(self) -> str:
        cached = self.__dict__.get("_hash")
        if cached is None:
            cached = tables_hash(self.data)
            object.__setattr__(self, "_hash", cached)
        return cached

    @property
    def unit_names(self) -> list[str]:
        return sorted(self.model.units)

    @property
    def building_names(self) -> list[str]:
        return sorted(self.model.buildings)

    @property
    def tech_names(self) -> list[str]:
        return sorted(self.model.techs)

    @property
    def personality_names(self) -> list[str]:
        return sorted(self.model.ai.personalities)

    @property
    def card_names(self) -> list[str]:
        return sorted(self.model.events.cards)

    def match_length(self, preset: str | None = None) -> int:
        return self.model.match.lengths[preset or self.model.match.length]

    def arrays(self) -> np.record:
        """The compiled record kernels receive (built once per Tables)."""
        cached = self.__dict__.get("_arrays")
        if cached is None:
            cached = compile_arrays(self)
            object.__setattr__(self, "_arrays", cached)
        return cached

    def with_overrides(self, overrides: dict[str, Any], source: str = "<overrides>") -> Tables:
        """This variant with more dotted-key overrides applied and re-validated."""
        data = apply_overrides(self.data, overrides, source)
        merged = {**self.overrides, **overrides}
        return _validate(data, source, {}, merged)


class TablesError(Exception):
    """Validation failed; `errors` holds every message as `file:line: key: reason`."""

    def __init__(self, errors: list[str]):
        super().__init__("\n".join(errors))
        self.errors = errors


def tables_hash(data: dict[str, Any]) -> str:
    """Stable 16-hex sha256 of resolved tables (key order and formatting ignored)."""
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _fmt(source: str, lines: dict[tuple, int], path: tuple, reason: str) -> str:
    line = line_of(lines, path) if lines else None
    where = f"{source}:{line}" if line else source
    key = ".".join(str(p) for p in path) or "<root>"
    return f"{where}: {key}: {reason}"


def load_tables(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> Tables:
    """Load, validate and resolve tables from `path` (default tables/default.toml).

    Raises TablesError with every problem found, FileNotFoundError-free: a
    missing or unparsable file is a TablesError too.
    """
    path = Path(path) if path else DEFAULT_TABLES
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TablesError([f"{source}: cannot read: {exc.strerror or exc}"]) from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TablesError([f"{source}: not valid TOML: {exc}"]) from None
    tables = _validate(raw, source, key_lines(text), {})
    if overrides:
        tables = tables.with_overrides(overrides)
    return tables


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """`["score.gold_per_point=3", ...]` -> {"score.gold_per_point": 3}; values are TOML."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise TablesError([f"--set {item!r}: expected key.path=value"])
        try:
            out[key.strip()] = tomllib.loads(f"v = {value.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            out[key.strip()] = value.strip()  # a bare word is a string
    return out


def apply_overrides(data: dict[str, Any], overrides: dict[str, Any], source: str) -> dict[str, Any]:
    """A copy of `data` with dotted-key overrides set; unknown keys are errors."""
    out = copy.deepcopy(data)
    errors = []
    for dotted, value in overrides.items():
        parts = dotted.split(".")
        node = out
        for i, part in enumerate(parts):
            if not isinstance(node, dict) or part not in node:
                errors.append(f"{source}: {dotted}: unknown key "
                              f"{'.'.join(parts[: i + 1])!r} in the tables")
                break
            if i == len(parts) - 1:
                if isinstance(node[part], dict):
                    errors.append(f"{source}: {dotted}: is a table; override one of its keys")
                else:
                    node[part] = value
            else:
                node = node[part]
    if errors:
        raise TablesError(errors)
    return out


def _validate(raw: dict[str, Any], source: str, lines: dict[tuple, int],
              overrides: dict[str, Any]) -> Tables:
    errors: list[str] = []
    try:
        model = TablesModel.model_validate(raw)
    except ValidationError as exc:
        for err in exc.errors():
            errors.append(_fmt(source, lines, tuple(err["loc"]), _reason(err)))
        raise TablesError(errors) from None
    for path, reason in _cross_checks(model):
        errors.append(_fmt(source, lines, path, reason))
    if errors:
        raise TablesError(errors)
    return Tables(model=model, source=source, overrides=dict(overrides))


def _reason(err: dict[str, Any]) -> str:
    kind = err["type"]
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "missing key"
    got = err.get("input")
    if kind.endswith("_type"):
        return f"{err['msg'].lower()}, got {got!r}"
    return f"{err['msg'].lower()} (got {got!r})"


def _cross_checks(m: TablesModel) -> list[tuple[tuple, str]]:
    """Checks that span several keys; each returns (path, reason)."""
    out: list[tuple[tuple, str]] = []
    techs = set(m.techs)
    if m.match.length not in m.match.lengths:
        out.append((("match", "length"), f"unknown preset {m.match.length!r}; "
                    f"presets are {sorted(m.match.lengths)}"))
    for i, name in enumerate(m.match.personalities):
        if name not in m.ai.personalities:
            out.append((("match", "personalities", i), f"unknown personality {name!r}"))
    for i, name in enumerate(m.match.start_units):
        if name not in m.units:
            out.append((("match", "start_units", i), f"unknown unit {name!r}"))
    for name in REQUIRED_UNITS:
        if name not in m.units:
            out.append((("units",), f"unit {name!r} must be defined (scenario files name it)"))
    for name in REQUIRED_BUILDINGS:
        if name not in m.buildings:
            out.append((("buildings",), f"building {name!r} must be defined"))
    for name in REQUIRED_TECHS:
        if name not in techs:
            out.append((("techs",), f"tech {name!r} must be defined"))
    for name, tech in m.techs.items():
        for i, req in enumerate(tech.requires):
            if req not in techs:
                out.append((("techs", name, "requires", i), f"unknown tech {req!r}"))
            elif req == name:
                out.append((("techs", name, "requires", i), "a tech cannot require itself"))
    if not out and _has_cycle({n: t.requires for n, t in m.techs.items()}):
        out.append((("techs",), "prerequisites form a cycle"))
    for kind, items in (("units", m.units), ("buildings", m.buildings)):
        for name, item in items.items():
            if item.tech and item.tech not in techs:
                out.append(((kind, name, "tech"), f"unknown tech {item.tech!r}"))
    if not any(u.founds_city for u in m.units.values()):
        out.append((("units",), "no unit has founds_city = true"))
    if m.revolt.law_tech not in techs:
        out.append((("revolt", "law_tech"), f"unknown tech {m.revolt.law_tech!r}"))
    obs = m.buildings.get(m.science.observatory)
    if obs is None:
        out.append((("science", "observatory"), f"unknown building {m.science.observatory!r}"))
    elif not obs.science_victory:
        out.append((("buildings", m.science.observatory, "science_victory"),
                    "the science building must have science_victory = true"))
    if m.science.observatory_tech not in techs:
        out.append((("science", "observatory_tech"),
                    f"unknown tech {m.science.observatory_tech!r}"))
    if m.map.start_edge_margin * 2 >= m.map.radius:
        out.append((("map", "start_edge_margin"), "leaves no room for start tiles on this radius"))
    t = m.territory
    if t.grown_ring_radius < t.ring_radius:
        out.append((("territory", "grown_ring_radius"), "must be >= ring_radius (T03)"))
    ring_tiles = 3 * t.grown_ring_radius * (t.grown_ring_radius + 1) + 1
    if ring_tiles > t.max_ring_tiles:
        out.append((("territory", "grown_ring_radius"),
                    f"a ring of radius {t.grown_ring_radius} holds {ring_tiles} tiles, "
                    f"more than max_ring_tiles = {t.max_ring_tiles} (T15)"))
    c = m.city
    if c.start_population > c.max_population:
        out.append((("city", "start_population"), "must be <= max_population"))
    if c.settler_min_population <= c.settler_population_cost:
        out.append((("city", "settler_min_population"),
                    "must exceed settler_population_cost (a city keeps population >= 1)"))
    passable = [n for n in TERRAINS if getattr(m.terrain, n).passable]
    if not passable:
        out.append((("terrain",), "at least one terrain must be passable"))
    elif sum(getattr(m.map.terrain_weights, n) for n in passable) == 0:
        out.append((("map", "terrain_weights"), "passable terrains need a weight > 0"))
    if sum(card.weight for card in m.events.cards.values()) == 0:
        out.append((("events", "cards"), "card weights must not all be 0"))
    if sum(m.map.node_weights.model_dump().values()) == 0 and m.map.node_share_pct > 0:
        out.append((("map", "node_weights"), "node weights must not all be 0"))
    return out


def _has_cycle(graph: dict[str, list[str]]) -> bool:
    state: dict[str, int] = {}

    def visit(n: str) -> bool:
        if state.get(n) == 1:
            return True
        if state.get(n) == 2:
            return False
        state[n] = 1
        if any(visit(p) for p in graph.get(n, [])):
            return True
        state[n] = 2
        return False

    return any(visit(n) for n in sorted(graph))


def _i64(values) -> np.ndarray:
    return np.asarray(list(values), dtype=np.int64)


def as_record(fields: TableArrays) -> np.record:
    """Pack a TableArrays into one numpy record (bool -> uint8, ints -> int64)."""
    spec = []
    for name, value in zip(fields._fields, fields, strict=True):
        if isinstance(value, np.ndarray):
            dtype = np.uint8 if value.dtype == np.bool_ else np.int64
            spec.append((name, dtype, value.shape))
        else:
            spec.append((name, np.int64))
    holder = np.zeros(1, dtype=np.dtype(spec, align=True)).view(np.recarray)
    rec = holder[0]
    for name, value in zip(fields._fields, fields, strict=True):
        rec[name] = value
    return rec


def compile_arrays(t: Tables) -> np.record:
    """Flatten validated tables into the kernels' record (fields of `TableArrays`)."""
    return as_record(_compile_fields(t))


def _compile_fields(t: Tables) -> TableArrays:
    m = t.model
    techs = t.tech_names
    tech_index = {n: i for i, n in enumerate(techs)}
    units = [m.units[n] for n in t.unit_names]
    buildings = [m.buildings[n] for n in t.building_names]
    cards = [m.events.cards[n] for n in t.card_names]
    requires = np.zeros((len(techs), len(techs)), dtype=np.bool_)
    for i, name in enumerate(techs):
        for req in m.techs[name].requires:
            requires[i, tech_index[req]] = True
    e = m.economy
    unit_index = {n: i for i, n in enumerate(t.unit_names)}
    return TableArrays(
        start_units=_i64(unit_index[n] for n in m.match.start_units),
        radius=m.map.radius,
        node_share_pct=m.map.node_share_pct,
        villages_per_seat=m.map.villages_per_seat,
        camps_per_seat=m.map.camps_per_seat,
        camp_min_distance=m.map.camp_min_distance,
        start_edge_margin=m.map.start_edge_margin,
        terrain_weights=_i64(getattr(m.map.terrain_weights, n) for n in TERRAINS),
        node_weights=_i64(getattr(m.map.node_weights, n) for n in NODE_KINDS),
        terrain_defence_pct=_i64(getattr(m.terrain, n).defence_pct for n in TERRAINS),
        terrain_passable=np.array([getattr(m.terrain, n).passable for n in TERRAINS]),
        ring_radius=m.territory.ring_radius,
        grown_ring_radius=m.territory.grown_ring_radius,
        grown_ring_population=m.territory.grown_ring_population,
        tile_price_first=m.territory.tile_price_first,
        tile_price_step=m.territory.tile_price_step,
        city_min_distance=m.territory.city_min_distance,
        w_region=m.score.w_region,
        w_population=m.score.w_population,
        w_city=m.score.w_city,
        gold_per_point=m.score.gold_per_point,
        quota=m.city.quota,
        max_population=m.city.max_population,
        hp_base=m.city.hp_base,
        hp_per_population=m.city.hp_per_population,
        repair_per_turn=m.city.repair_per_turn,
        gold_repair_price=m.city.gold_repair_price,
        growth_base=m.city.growth_base,
        growth_per_population=m.city.growth_per_population,
        city_defence_base=m.city.defence_base,
        city_defence_per_population=m.city.defence_per_population,
        settler_min_population=m.city.settler_min_population,
        settler_population_cost=m.city.settler_population_cost,
        start_population=m.city.start_population,
        yield_base=_i64([e.food_base, e.production_base, e.gold_base, e.science_base]),
        yield_per_population=_i64([e.food_per_population, e.production_per_population,
                                   e.gold_per_population, e.science_per_population]),
        node_yield=_i64([e.node_food, e.node_production, e.node_gold]),
        free_units_per_city=e.free_units_per_city,
        upkeep_per_unit=e.upkeep_per_unit,
        rush_gold_per_production=e.rush_gold_per_production,
        start_gold=e.start_gold,
        revolt_transfer_turns=m.revolt.transfer_turns,
        capital_fall_radius=m.revolt.capital_fall_radius,
        revolt_defence_pct=m.revolt.defence_pct,
        law_tech=tech_index[m.revolt.law_tech],
        law_share_pct=m.revolt.law_share_pct,
        dominance_share_pct=m.dominance.share_pct,
        dominance_to_win=m.dominance.counter_to_win,
        observatory=t.building_names.index(m.science.observatory),
        observatory_tech=tech_index[m.science.observatory_tech],
        damage_scale=m.combat.damage_scale,
        min_damage=m.combat.min_damage,
        city_retaliation=m.combat.city_attack_retaliation,
        village_population=m.neutrals.village_population,
        village_defence=m.neutrals.village_defence,
        bandit_spawn_interval=m.neutrals.bandit_spawn_interval,
        bandit_cap_per_camp=m.neutrals.bandit_cap_per_camp,
        bandit_attack=m.neutrals.bandit_attack,
        bandit_defence=m.neutrals.bandit_defence,
        bandit_hp=m.neutrals.bandit_hp,
        camp_clear_gold=m.neutrals.camp_clear_gold,
        truce_price=m.diplomacy.truce_price,
        truce_turns=m.diplomacy.truce_turns,
        pact_dominance_trigger=m.diplomacy.pact_dominance_trigger,
        pact_turns=m.diplomacy.pact_turns,
        unrest_turns=m.events.unrest_turns,
        card_weight=_i64(c.weight for c in cards),
        card_kind=_i64(CARD_KINDS.index(c.kind) for c in cards),
        card_amount=_i64(c.amount for c in cards),
        tech_cost=_i64(m.techs[n].cost for n in techs),
        tech_requires=requires,
        tech_focus=_i64(PERSONALITY_WEIGHTS.index(m.techs[n].focus) for n in techs),
        unit_cost=_i64(u.cost for u in units),
        unit_hp=_i64(u.hp for u in units),
        unit_attack=_i64(u.attack for u in units),
        unit_defence=_i64(u.defence for u in units),
        unit_moves=_i64(u.moves for u in units),
        unit_range=_i64(u.range for u in units),
        unit_tech=_i64(tech_index[u.tech] if u.tech else -1 for u in units),
        unit_founds_city=np.array([u.founds_city for u in units], dtype=np.bool_),
        unit_city_attack_pct=_i64(u.city_attack_pct for u in units),
        building_cost=_i64(b.cost for b in buildings),
        building_tech=_i64(tech_index[b.tech] if b.tech else -1 for b in buildings),
        building_yield=np.array([[b.food, b.production, b.gold, b.science] for b in buildings],
                                dtype=np.int64).reshape(len(buildings), 4),
        building_defence_pct=_i64(b.defence_pct for b in buildings),
        building_hp=_i64(b.hp for b in buildings),
        building_revolt_shorten=_i64(b.revolt_shorten for b in buildings),
        building_score_points=_i64(b.score_points for b in buildings),
        building_one_per_empire=np.array([b.one_per_empire for b in buildings], dtype=np.bool_),
        building_rushable=np.array([b.rushable for b in buildings], dtype=np.bool_),
        building_science_victory=np.array([b.science_victory for b in buildings], dtype=np.bool_),
        war_turn=m.ai.war_turn,
        defend_radius=m.ai.defend_radius,
        defenders=m.ai.defenders,
        army_base_pct=m.ai.army_base_pct,
        army_military_pct=m.ai.army_military_pct,
        siege_share_pct=m.ai.siege_share_pct,
        upkeep_share_pct=m.ai.upkeep_share_pct,
        muster_units=m.ai.muster_units,
        muster_radius=m.ai.muster_radius,
        observatory_value=m.ai.observatory_value,
        capital_value=m.ai.capital_value,
        transfer_value_pct=m.ai.transfer_value_pct,
        finish_nearest=m.ai.finish_nearest,
        dominance_value=m.ai.dominance_value,
        personality_weights=np.array(
            [[getattr(m.ai.personalities[n], w) for w in PERSONALITY_WEIGHTS]
             for n in t.personality_names], dtype=np.int64),
    )

"""Crown, the second game (../shared/RULES-crown.md, issue 48): its codes, its tables'
schema and checks, and the record its kernels receive.

Codes are written once here (name tuples; a code is its name's position), like the
hex game's in `sim.rules.codes`. The tables (`tables/crown/default.toml`) are read with
the hex tables' machinery (`sim.rules.tomlpos` for lines, `sim.rules.tables` for the
`file:line: key: reason` wording and the error type), validated by the pydantic models
below, cross-checked, and compiled to one numpy record (`CrownTables.record`) with
fixed capacities, so one compiled engine serves every map and team size.

A variant overrides any value by dotted key, list positions included
(`core.faces.7=booster`: position 7 is face 8; `match.team_sizes.1=4`).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

# the hex tables' wording of a problem and its error type, reused so both games speak alike
from sim.rules.tables import (
    REPO_ROOT,
    TablesError,
    ValidatedTables,
    _fmt,
    _reason,
    read_tables_file,
)
from sim.rules.tomlpos import key_lines

DEFAULT_CROWN_TABLES = REPO_ROOT / "tables" / "crown" / "default.toml"

# ---------------------------------------------------------------- widgets and leads
# K01: the widgets on a Core's faces; a lead (K02, K03) is one of them too: a Wildcard
# lead that becomes a type leads as that type, one touching none stays a WILDCARD (L3)
WIDGETS = ("attacker", "defender", "producer", "wildcard", "booster")
ATTACKER, DEFENDER, PRODUCER, WILDCARD, BOOSTER = range(len(WIDGETS))
N_WIDGETS = len(WIDGETS)
WILDCARD_TYPES = ("attacker", "defender", "producer")  # K03: what a Wildcard may become

# ---------------------------------------------------------------- the Core and the board
N_FACES = 12          # K01: a dodecahedron
FACE_TOUCHES = 5      # K01: faces touching the top face
SIDES = ("A", "B")    # L4: two sides
SIDE_A, SIDE_B = range(len(SIDES))
N_SIDES = len(SIDES)
EMPTY = -1            # a zone's owner when it holds no tokens; also "none" in arrays
MAX_TEAM = 4          # L4: players per side, 1 to 4
MAX_PLAYERS = MAX_TEAM * N_SIDES
MAX_ZONES = 32        # capacity of the record's zone arrays (the default map has 15)
MAX_ZONE_TOUCHES = 8  # capacity of a zone's touching list
MAX_REGIONS = 8       # capacity of the record's region arrays (the default map has 3)
MAX_TOKENS = 9        # the largest orders.max_tokens the tables allow
MAX_ROUNDS = 100
MAX_WAVES = 10
PERCENT = 100         # every *_pct value is in percent of this

# ---------------------------------------------------------------- orders (K06)
ORDERS = ("pass", "claim", "reinforce", "attack")
PASS, CLAIM, REINFORCE, ATTACK = range(len(ORDERS))

# ---------------------------------------------------------------- results (K13)
# how a match was decided: on points, then zones held, then region majorities, or a draw
RESULTS = ("points", "zones", "majorities", "draw")
BY_POINTS, BY_ZONES, BY_MAJORITIES, DRAW = range(len(RESULTS))
NO_WINNER = -1        # the outcome's winner side of a draw

# ---------------------------------------------------------------- score terms (K10, K11)
SCORE_TERMS = ("zones", "capture", "majorities", "joined", "last_round_extra")
TERM_ZONES, TERM_CAPTURE, TERM_MAJORITIES, TERM_JOINED, TERM_LAST_EXTRA = range(len(SCORE_TERMS))
N_SCORE_TERMS = len(SCORE_TERMS)


def term_column(term: str, side: str) -> str:
    """The `matches` column of score term `term`'s points for `side` ("A"/"B"):
    `zones_points_a`, …, as the hex game's `{term}_points`. The bare `zones_a` and
    `majorities_a` are the zones and region majorities held at the end (K13's
    tie-breaks), which the terms `zones` and `majorities` (points) would otherwise
    share a name with."""
    return f"{term}_points_{side.lower()}"

# ---------------------------------------------------------------- events (K15's replay)
# one row per event: (kind, round, wave, player, zone, a, b); the meaning of a and b
EVENTS = ("roll", "order", "attack", "fault", "eruption", "round_score")
EV_ROLL, EV_ORDER, EV_ATTACK, EV_FAULT, EV_ERUPTION, EV_ROUND_SCORE = range(len(EVENTS))
EVENT_FIELDS = ("kind", "round", "wave", "player", "zone", "a", "b")
EF_KIND, EF_ROUND, EF_WAVE, EF_PLAYER, EF_ZONE, EF_A, EF_B = range(len(EVENT_FIELDS))
N_EVENT_FIELDS = len(EVENT_FIELDS)
EVENT_MEANING = {
    "roll": "player rolled face `zone` (0-based); a = Crown, b = lead type",
    "order": "player gave order a (ORDERS) on zone (pass: zone -1); b = its place in "
             "the wave's order",
    "attack": "player attacked zone: a = attack total, b = defence total",
    "fault": "the fault opened (L6) after round's scoring: zone lost a tokens, b left",
    "eruption": "the eruption (L6) before the last round's scoring: zone lost a, b left",
    "round_score": "round scored: player = side, a = the round's points (doubled in "
                   "the last round), b = the side's total",
}

# ---------------------------------------------------------------- per-round rows
ROUND_FIELDS = ("points_a", "points_b", "total_a", "total_b", "zones_a", "zones_b")
N_ROUND_FIELDS = len(ROUND_FIELDS)

# ---------------------------------------------------------------- attack counters
# per lead type of the attacker (N_WIDGETS rows): attacks, wins, wins Surge decided
# (lost without the Surge bonus), wins the lead cycle decided (lost without the +3)
ATTACK_COUNTS = ("attacks", "wins", "surge_decided", "cycle_decided")
AC_ATTACKS, AC_WINS, AC_SURGE, AC_CYCLE = range(len(ATTACK_COUNTS))

# ---------------------------------------------------------------- draws (L7)
# what a keyed draw of Crown's stream (sim.world.rng.Purpose.CROWN) is for; its turn is
# round × waves + wave and its subject the player
# (random_order is appended last: the others keep their codes, so every other draw of a
# match is unchanged)
CROWN_DRAWS = ("roll", "order_tie", "ai_tie", "random_order")
DRAW_ROLL, DRAW_ORDER_TIE, DRAW_AI_TIE, DRAW_RANDOM_ORDER = range(len(CROWN_DRAWS))

# ---------------------------------------------------------------- AI skills (K14)
CROWN_SKILLS = (0, 1)  # 0: best immediate gain; 1: also teammates' Surge and the next wave
# random legal play, the ladder's floor (issue 43): a legal order (the pass included)
# drawn uniformly (DRAW_RANDOM_ORDER, L7). Below every level, so a code below them; not
# in CROWN_SKILLS (no level of K14), but an AI level a side may play
CROWN_SKILL_RANDOM = -1
CROWN_SKILL_RANDOM_NAME = "random"
CROWN_AI_LEVELS = (CROWN_SKILL_RANDOM, *CROWN_SKILLS)

# ---------------------------------------------------------------- the schema
Widget = Literal["attacker", "defender", "producer", "wildcard", "booster"]
Face = Annotated[int, Field(ge=1, le=N_FACES)]
Small = Annotated[int, Field(ge=0, le=1000)]
ZoneName = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_\-]*$", max_length=40)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


# L2: a player named by side and place in its team ("A1": side A's first player,
# "B3": side B's third); the kernels' player index is side A's players, then side B's
PlayerName = Annotated[str, Field(pattern=f"^[{''.join(SIDES)}][1-{MAX_TEAM}]$")]
Faces = Annotated[list[Widget], Field(min_length=N_FACES, max_length=N_FACES)]


def player_index(name: str, team_sizes: list[int]) -> int:
    """The kernels' index of player `name` ("B2": team_sizes[0] + 1)."""
    side, place = SIDES.index(name[0]), int(name[1:]) - 1
    return sum(team_sizes[:side]) + place


class CoreT(_Model):
    """K01, L1, L2: each face's widget and the faces touching it (faces 1–12); L2's
    "unless a table gives a player another": `players`, a player's own widgets on
    faces 1–12 (the touches stay the Core's), none by default."""

    faces: Faces
    players: dict[PlayerName, Faces] = {}
    touches: Annotated[list[Annotated[list[Face], Field(min_length=FACE_TOUCHES,
                                                        max_length=FACE_TOUCHES)]],
                       Field(min_length=N_FACES, max_length=N_FACES)]


class PowerT(_Model):
    """K02: each widget's power (before crown.power_multiplier)."""

    attacker: Small
    defender: Small
    producer: Small
    wildcard: Small
    booster: Small


class WildcardT(_Model):
    """K03, L3: what a Wildcard lead may become (first wins a tie), and whether a
    touching Wildcard counts as a widget of the lead's type."""

    becomes: Annotated[list[Literal["attacker", "defender", "producer"]],
                       Field(min_length=1, max_length=len(WILDCARD_TYPES))]
    touching_wildcard_counts: bool


class CrownT(_Model):
    """K02: Crown = power × power_multiplier + bonuses."""

    power_multiplier: Small
    booster_bonus: Small
    same_type_bonus: Small
    power: PowerT
    wildcard: WildcardT


class MatchT(_Model):
    """K04, L4, K11."""

    rounds: Annotated[int, Field(ge=1, le=MAX_ROUNDS)]
    waves: Annotated[int, Field(ge=1, le=MAX_WAVES)]
    team_sizes: Annotated[list[Annotated[int, Field(ge=1, le=MAX_TEAM)]],
                          Field(min_length=N_SIDES, max_length=N_SIDES)]
    last_round_multiplier: Annotated[int, Field(ge=1, le=100)]


class OrdersT(_Model):
    """K06, K09."""

    max_tokens: Annotated[int, Field(ge=1, le=MAX_TOKENS)]
    attack_places: Annotated[int, Field(ge=1, le=MAX_TOKENS)]
    home_claim_without_land: bool


class AttackT(_Model):
    """K07."""

    surge_bonus: Small
    cycle_bonus: Small
    capture_point_bonus: Small
    beats: Annotated[list[Annotated[list[Widget], Field(min_length=2, max_length=2)]],
                     Field(max_length=N_WIDGETS * N_WIDGETS)]


class DefenceT(_Model):
    """K08."""

    token_bonus: Small
    defender_lead_bonus: Small


class ScoringT(_Model):
    """K10."""

    per_zone: Small
    majority_zones: Annotated[int, Field(ge=1, le=MAX_ZONES)]
    majority_bonus: Small
    joined_regions: Annotated[int, Field(ge=1, le=MAX_REGIONS)]
    joined_bonus: Small


class FaultT(_Model):
    """K12, L6: open_at_pct 0 switches the fault off."""

    open_at_pct: Annotated[int, Field(ge=0, le=PERCENT)]
    fault_tokens: Annotated[int, Field(ge=0, le=MAX_TOKENS)]
    eruption_tokens: Annotated[int, Field(ge=0, le=MAX_TOKENS)]
    zones: Annotated[list[str], Field(max_length=MAX_ZONES)]


class ZoneT(_Model):
    """L4: one zone's region and the zones it touches."""

    region: str
    touches: Annotated[list[str], Field(min_length=1, max_length=MAX_ZONE_TOUCHES)]


class MapT(_Model):
    """L4, K10: regions, zones, homes of side A and B, capture values."""

    regions: Annotated[list[ZoneName], Field(min_length=1, max_length=MAX_REGIONS)]
    homes: Annotated[list[str], Field(min_length=N_SIDES, max_length=N_SIDES)]
    capture: dict[str, Annotated[int, Field(ge=1, le=1000)]]
    zones: Annotated[dict[ZoneName, ZoneT], Field(min_length=2, max_length=MAX_ZONES)]


class AiT(_Model):
    """K14: skill 1's weights, in percent of a point."""

    surge_pct: Annotated[int, Field(ge=0, le=10 * PERCENT)]
    threat_pct: Annotated[int, Field(ge=0, le=10 * PERCENT)]
    reply_pct: Annotated[int, Field(ge=0, le=10 * PERCENT)]
    follow_pct: Annotated[int, Field(ge=0, le=10 * PERCENT)]


class CrownTablesModel(_Model):
    """The whole of tables/crown/default.toml."""

    core: CoreT
    crown: CrownT
    match: MatchT
    orders: OrdersT
    attack: AttackT
    defence: DefenceT
    scoring: ScoringT
    fault: FaultT
    map: MapT
    ai: AiT


# ---------------------------------------------------------------- the record
def _record_dtype() -> np.dtype:
    """The record's fields: int64 unless flagged uint8; fixed capacities."""
    i8, u1 = np.int64, np.uint8
    return np.dtype([
        ("face_widget", i8, (N_FACES,)),                # L2: widget code per face
        # L2: each player's widget per face (kernel player index): face_widget, or the
        # player's own Core of core.players
        ("player_face_widget", i8, (MAX_PLAYERS, N_FACES)),
        ("face_touch", i8, (N_FACES, FACE_TOUCHES)),    # L1: 0-based touching faces
        ("power", i8, (N_WIDGETS,)),                    # K02, by widget code
        ("power_multiplier", i8), ("booster_bonus", i8), ("same_type_bonus", i8),
        ("becomes", i8, (len(WILDCARD_TYPES),)),        # K03/L3: codes, EMPTY-padded
        ("touching_wildcard_counts", u1),
        ("rounds", i8), ("waves", i8), ("team_size", i8, (N_SIDES,)),
        ("last_round_multiplier", i8),
        ("max_tokens", i8), ("attack_places", i8), ("home_claim_without_land", u1),
        ("surge_bonus", i8), ("cycle_bonus", i8), ("capture_point_bonus", i8),
        ("beats", u1, (N_WIDGETS, N_WIDGETS)),          # K07: beats[winner, loser]
        ("token_bonus", i8), ("defender_lead_bonus", i8),
        ("per_zone", i8), ("majority_zones", i8), ("majority_bonus", i8),
        ("joined_regions", i8), ("joined_bonus", i8),
        ("fault_round", i8),                            # L6: 1-based; 0 = no fault
        ("fault_tokens", i8), ("eruption_tokens", i8),
        ("zone_fault", u1, (MAX_ZONES,)),
        ("n_zones", i8), ("n_regions", i8),
        ("zone_region", i8, (MAX_ZONES,)),
        ("zone_touch", i8, (MAX_ZONES, MAX_ZONE_TOUCHES)),  # EMPTY-padded zone indices
        ("zone_capture", i8, (MAX_ZONES,)),             # K10: 0 = not a capture point
        ("home", i8, (N_SIDES,)),
        ("surge_pct", i8), ("threat_pct", i8), ("reply_pct", i8), ("follow_pct", i8),
    ], align=True)


CROWN_RECORD_DTYPE = _record_dtype()


def fault_round(rounds: int, open_at_pct: int) -> int:
    """L6: the round (1-based) whose end opens the fault: ceil(rounds × pct / 100);
    0 when open_at_pct is 0 (no fault)."""
    return math.ceil(rounds * open_at_pct / PERCENT)


def compile_crown_record(m: CrownTablesModel) -> np.record:
    """The record of validated tables (fields: CROWN_RECORD_DTYPE)."""
    rec = np.zeros(1, dtype=CROWN_RECORD_DTYPE).view(np.recarray)[0]
    rec.face_widget[:] = [WIDGETS.index(w) for w in m.core.faces]
    rec.player_face_widget[:] = rec.face_widget
    for name, faces in m.core.players.items():
        rec.player_face_widget[player_index(name, m.match.team_sizes)] = \
            [WIDGETS.index(w) for w in faces]
    rec.face_touch[:] = np.array(m.core.touches, dtype=np.int64) - 1
    rec.power[:] = [getattr(m.crown.power, w) for w in WIDGETS]
    rec.power_multiplier = m.crown.power_multiplier
    rec.booster_bonus = m.crown.booster_bonus
    rec.same_type_bonus = m.crown.same_type_bonus
    rec.becomes[:] = EMPTY
    rec.becomes[:len(m.crown.wildcard.becomes)] = [WIDGETS.index(w)
                                                   for w in m.crown.wildcard.becomes]
    rec.touching_wildcard_counts = m.crown.wildcard.touching_wildcard_counts
    rec.rounds, rec.waves = m.match.rounds, m.match.waves
    rec.team_size[:] = m.match.team_sizes
    rec.last_round_multiplier = m.match.last_round_multiplier
    rec.max_tokens, rec.attack_places = m.orders.max_tokens, m.orders.attack_places
    rec.home_claim_without_land = m.orders.home_claim_without_land
    rec.surge_bonus, rec.cycle_bonus = m.attack.surge_bonus, m.attack.cycle_bonus
    rec.capture_point_bonus = m.attack.capture_point_bonus
    for winner, loser in m.attack.beats:
        rec.beats[WIDGETS.index(winner), WIDGETS.index(loser)] = 1
    rec.token_bonus, rec.defender_lead_bonus = m.defence.token_bonus, m.defence.defender_lead_bonus
    s = m.scoring
    rec.per_zone, rec.majority_zones, rec.majority_bonus = s.per_zone, s.majority_zones, \
        s.majority_bonus
    rec.joined_regions, rec.joined_bonus = s.joined_regions, s.joined_bonus
    rec.fault_round = fault_round(m.match.rounds, m.fault.open_at_pct)
    rec.fault_tokens, rec.eruption_tokens = m.fault.fault_tokens, m.fault.eruption_tokens
    names = list(m.map.zones)
    for z in m.fault.zones:
        rec.zone_fault[names.index(z)] = 1
    rec.n_zones, rec.n_regions = len(names), len(m.map.regions)
    rec.zone_touch[:] = EMPTY
    for i, (name, zone) in enumerate(m.map.zones.items()):
        rec.zone_region[i] = m.map.regions.index(zone.region)
        rec.zone_touch[i, :len(zone.touches)] = [names.index(t) for t in zone.touches]
        rec.zone_capture[i] = m.map.capture.get(name, 0)
    rec.home[:] = [names.index(h) for h in m.map.homes]
    rec.surge_pct, rec.threat_pct = m.ai.surge_pct, m.ai.threat_pct
    rec.reply_pct, rec.follow_pct = m.ai.reply_pct, m.ai.follow_pct
    return rec


# ---------------------------------------------------------------- cross-checks
def _cross_checks(m: CrownTablesModel) -> list[tuple[tuple, str]]:
    """Checks spanning several keys: (path, reason) each."""
    out: list[tuple[tuple, str]] = []
    touches = m.core.touches
    for i, row in enumerate(touches):
        face = i + 1
        if len(set(row)) != len(row):
            out.append((("core", "touches", i), f"face {face} lists a face twice"))
        for j, other in enumerate(row):
            if other == face:
                out.append((("core", "touches", i, j), f"face {face} cannot touch itself"))
            elif other == N_FACES + 1 - face:
                out.append((("core", "touches", i, j), f"face {face} cannot touch its "
                            f"opposite face {other} (opposite faces sum to {N_FACES + 1}, L1)"))
            elif face not in touches[other - 1]:
                out.append((("core", "touches", i, j), f"face {face} touches {other} but "
                            f"face {other} does not touch {face}"))
    for name in m.core.players:
        side, place = SIDES.index(name[0]), int(name[1:])
        if place > m.match.team_sizes[side]:
            out.append((("core", "players", name), f"side {SIDES[side]} has "
                        f"{m.match.team_sizes[side]} players (match.team_sizes), so no "
                        f"player {name}"))
    if len(set(m.crown.wildcard.becomes)) != len(m.crown.wildcard.becomes):
        out.append((("crown", "wildcard", "becomes"), "lists a type twice"))
    mp = m.map
    if len(set(mp.regions)) != len(mp.regions):
        out.append((("map", "regions"), "lists a region twice"))
    zones = mp.zones
    for name, zone in zones.items():
        if zone.region not in mp.regions:
            out.append((("map", "zones", name, "region"), f"unknown region {zone.region!r}; "
                        f"regions are {mp.regions}"))
        for j, other in enumerate(zone.touches):
            if other not in zones:
                out.append((("map", "zones", name, "touches", j), f"unknown zone {other!r}"))
            elif other == name:
                out.append((("map", "zones", name, "touches", j), "a zone cannot touch itself"))
            elif name not in zones[other].touches:
                out.append((("map", "zones", name, "touches", j), f"{name} touches {other} "
                            f"but {other} does not touch {name}"))
    for i, home in enumerate(mp.homes):
        if home not in zones:
            out.append((("map", "homes", i), f"unknown zone {home!r}"))
    if mp.homes[0] == mp.homes[1]:
        out.append((("map", "homes"), "the two sides need different home zones"))
    for name in mp.capture:
        if name not in zones:
            out.append((("map", "capture", name), f"unknown zone {name!r}"))
    for i, name in enumerate(m.fault.zones):
        if name not in zones:
            out.append((("fault", "zones", i), f"unknown zone {name!r}"))
    if m.orders.attack_places > m.orders.max_tokens:
        out.append((("orders", "attack_places"), "must be <= orders.max_tokens"))
    return out


# ---------------------------------------------------------------- loading
@dataclass(frozen=True)
class CrownTables(ValidatedTables):
    """Validated Crown tables of one variant, with their hash and record."""

    model: CrownTablesModel

    @property
    def record(self) -> np.record:
        """The record kernels receive (built once per tables)."""
        cached = self.__dict__.get("_record")
        if cached is None:
            cached = compile_crown_record(self.model)
            object.__setattr__(self, "_record", cached)
        return cached

    @property
    def zone_names(self) -> list[str]:
        return list(self.model.map.zones)

    @property
    def stored(self) -> dict[str, Any]:
        """`data` with `map.zones` as a list of {"zone": name, "region", "touches"} in
        map order: a zone's place in the map is its index in the kernels (L4's homes,
        the stream's draws by zone), and provenance.json and the tables hash sort a
        table's keys, which would lose it. stored_to_data reads it back."""
        data = self.data
        zones = [{"zone": name, **zone} for name, zone in data["map"]["zones"].items()]
        return {**data, "map": {**data["map"], "zones": zones}}

    def with_overrides(self, overrides: dict[str, Any]) -> CrownTables:
        """These tables with dotted-key overrides applied (list positions allowed)."""
        if not overrides:
            return self
        data = apply_crown_overrides(self.data, overrides, self.source)
        return _validate(data, self.source, {}, {**self.overrides, **overrides})


# tables whose keys an override may add, each with where a new entry starts from when
# an override sets one of its positions (`core.players.B2.7=booster`: player B2's Core is
# the common Core with a Booster on face 8)
OPEN_TABLES: dict[tuple[str, ...], Any] = {("core", "players"): lambda d: d["core"]["faces"]}


def apply_crown_overrides(data: dict[str, Any], overrides: dict[str, Any],
                          source: str) -> dict[str, Any]:
    """A copy of `data` with dotted-key overrides set; a part that is a number indexes a
    list (`core.faces.7`: position 7, face 8). Unknown keys and positions past a list's
    end are errors (TablesError, `source: key: reason`)."""
    out = copy.deepcopy(data)
    errors: list[str] = []
    for dotted, value in overrides.items():
        parts = dotted.split(".")
        node: Any = out
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            upto = ".".join(parts[: i + 1])
            if isinstance(node, list):
                if not part.isdigit() or int(part) >= len(node):
                    errors.append(f"{source}: {dotted}: {upto!r} is not a position of a "
                                  f"list of {len(node)} (0 to {len(node) - 1})")
                    break
                key: Any = int(part)
            elif isinstance(node, dict) and part in node:
                key = part
            elif isinstance(node, dict) and tuple(parts[:i]) in OPEN_TABLES:
                # a new entry (core.players.B2): a whole value, or, when a position of
                # it is set, one copied from the entry it stands in for (core.faces)
                key = part
                if not last:
                    node[key] = copy.deepcopy(OPEN_TABLES[tuple(parts[:i])](out))
            else:
                errors.append(f"{source}: {dotted}: unknown key {upto!r} in the tables")
                break
            if last:
                if isinstance(node, dict) and isinstance(node.get(key), dict):
                    errors.append(f"{source}: {dotted}: is a table; override one of its keys")
                else:
                    node[key] = value
            else:
                node = node[key]
    if errors:
        raise TablesError(errors)
    return out


def _validate(raw: dict[str, Any], source: str, lines: dict[tuple, int],
              overrides: dict[str, Any]) -> CrownTables:
    try:
        model = CrownTablesModel.model_validate(raw)
    except ValidationError as exc:
        raise TablesError([_fmt(source, lines, tuple(err["loc"]), _reason(err))
                           for err in exc.errors()]) from None
    errors = [_fmt(source, lines, path, reason) for path, reason in _cross_checks(model)]
    if errors:
        raise TablesError(errors)
    return CrownTables(model=model, source=source, overrides=dict(overrides))


def stored_to_data(stored: dict[str, Any]) -> dict[str, Any]:
    """The tables' data from their stored form (CrownTables.stored, as a run's
    provenance keeps them): `map.zones` back from its list to a table in the list's
    order. A table (a run written before the zones were stored as a list) is taken as
    it comes: alphabetical, its hash differs from the run's and a replay says so."""
    zones = stored["map"]["zones"]
    if isinstance(zones, dict):
        return stored
    table = {z["zone"]: {k: v for k, v in z.items() if k != "zone"} for z in zones}
    return {**stored, "map": {**stored["map"], "zones": table}}


def load_crown_tables(path: str | Path | None = None,
                      overrides: dict[str, Any] | None = None) -> CrownTables:
    """Load, validate and compile Crown tables from `path` (default
    tables/crown/default.toml). Every problem is a TablesError line
    `file:line: key: reason`, a missing or unparsable file included."""
    path = Path(path) if path else DEFAULT_CROWN_TABLES
    raw, text = read_tables_file(path)
    tables = _validate(raw, str(path), key_lines(text), {})
    return tables.with_overrides(overrides or {})


# ---------------------------------------------------------------- AI units (K14)
# skill 1's next-wave risk of a zone is a chance, held as an integer in parts of this
# (kernels stay in exact integer arithmetic, so the plain reference matches them)
RISK_SCALE = 10_000
# candidate orders a player weighs: one per zone, and the pass
MAX_CANDIDATES = MAX_ZONES + 1
# rows of the AI's candidate scratch: an order's kind, zone and value; then skill 1's
# view of a side's next order: the gain of each attack it could win and its zone
CANDIDATE_FIELDS = ("kind", "zone", "value", "reply_gain", "reply_zone")
(CF_KIND, CF_ZONE, CF_VALUE, CF_REPLY_GAIN, CF_REPLY_ZONE) = range(len(CANDIDATE_FIELDS))
N_CANDIDATE_FIELDS = len(CANDIDATE_FIELDS)
# skill 1's view of the next wave's rolls (sim.kernels.crown.next_wave_rolls), rows of
# (N_FACES,): each face's Crown and lead on top, then for each side the rolls of its
# whole team whose best (K08's defender) is that face
NEXT_WAVE_ROWS = ("crown", "lead", "best_of_a", "best_of_b")
NW_CROWN, NW_LEAD, NW_BEST = 0, 1, 2   # NW_BEST + side
N_NEXT_WAVE_ROWS = len(NEXT_WAVE_ROWS)
# the outcome's summary row (`result` of sim.kernels.crown.play_crown)
RESULT_FIELDS = ("winner", "decided_by", "zones_a", "zones_b", "majorities_a",
                 "majorities_b", "fault_leader", "n_events")
(RS_WINNER, RS_DECIDED_BY, RS_ZONES_A, RS_ZONES_B, RS_MAJ_A, RS_MAJ_B, RS_FAULT_LEADER,
 RS_N_EVENTS) = range(len(RESULT_FIELDS))
N_RESULT_FIELDS = len(RESULT_FIELDS)
# the kernels' scoring scratch: region counts, then the joined-area search's seen
# flags and stack (sim.kernels.crown.side_score)
WORK_SIZE = MAX_REGIONS + 2 * MAX_ZONES

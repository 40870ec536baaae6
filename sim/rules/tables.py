"""Balance tables: load TOML, validate, cross-check, apply variant overrides, hash.

The flow is one way: `tables/*.toml` -> `Tables` (validated against
`sim.rules.schema`, with names) -> `TableArrays` (one numpy record, the only
thing kernels see; built by `sim.rules.record` from the schema's field map).
Names of units, buildings, techs, personalities and event cards are ordered by
name (`record.item_names`), so the integer codes kernels use depend on the
content of the tables only, like the hash does.

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
from typing import Any

from pydantic import ValidationError

from sim.rules.codes import MAX_SEATS, TERRAINS
from sim.rules.record import TableArrays, compile_record, item_names, scaled_cost
from sim.rules.schema import TablesModel
from sim.rules.tomlpos import (
    InputLimit,
    key_lines,
    key_text,
    line_of,
    parse_input,
    read_input,
    shown,
    utf8_problem,
)

__all__ = ["DEFAULT_TABLES", "REPO_ROOT", "TableArrays", "Tables", "TablesError", "TablesModel",
           "apply_overrides", "board_problems", "board_shape_problems", "load_tables",
           "map_room_problems", "parse_overrides", "tables_hash"]

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_TABLES = REPO_ROOT / "tables" / "default.toml"

# Names the scenario contract (SCENARIOS.md) refers to; the tables must define them.
REQUIRED_UNITS = ("settler", "warrior", "spearman", "archer", "horseman", "catapult", "swordsman")
REQUIRED_BUILDINGS = ("granary", "workshop", "market", "walls", "madrasa", "divan", "monument",
                      "observatory")
REQUIRED_TECHS = ("law", "prosperity")


@dataclass(frozen=True)
class ValidatedTables:
    """A game's validated tables of one variant (its pydantic model), where they came
    from, the overrides applied, and their canonical data and hash: what every game's
    tables share (sim.rules.crown.CrownTables is the other)."""

    model: Any
    source: str
    overrides: dict[str, Any] = field(default_factory=dict)

    @property
    def data(self) -> dict[str, Any]:
        return self.model.model_dump(mode="json")

    @property
    def stored(self) -> dict[str, Any]:
        """The tables as a run's provenance.json keeps them and the hash reads them
        (both sort keys): `data`, for tables that order nothing by key (the hex game's:
        its items are ordered by name, record.item_names). A game with a table whose
        order is meaning stores that table as a list (sim.rules.crown.CrownTables)."""
        return self.data

    @property
    def hash(self) -> str:
        cached = self.__dict__.get("_hash")
        if cached is None:
            cached = tables_hash(self.stored)
            object.__setattr__(self, "_hash", cached)
        return cached


@dataclass(frozen=True)
class Tables(ValidatedTables):
    """Validated balance tables of one variant, with names, hash and arrays."""

    model: TablesModel

    @property
    def unit_names(self) -> list[str]:
        return item_names(self.model.units)

    @property
    def building_names(self) -> list[str]:
        return item_names(self.model.buildings)

    @property
    def tech_names(self) -> list[str]:
        return item_names(self.model.techs)

    @property
    def personality_names(self) -> list[str]:
        return item_names(self.model.ai.personalities)

    @property
    def card_names(self) -> list[str]:
        return item_names(self.model.events.cards)

    def match_length(self, preset: str | None = None, seats: int | None = None) -> int:
        """The last turn (V19) of a match of `preset` and `seats` (defaults: the tables'
        own): the preset's turns × the seat count's match.seat_length_scale_pct,
        rounded half up (D6)."""
        m = self.model.match
        turns = m.lengths[preset or m.length]
        return int(scaled_cost(turns, m.seat_length_scale_pct.get(str(seats or m.seats), 100)))

    def scales_pct(self, preset: str | None = None, seats: int | None = None,
                   ) -> tuple[int, int]:
        """(cost %, dominance counter %) of a match of `preset` and `seats` (defaults:
        the tables' own): the preset's game speed (D6) times the seat count's
        adjustment, each rounded half up (match.cost_scale_pct × seat_cost_scale_pct,
        match.dominance_scale_pct × seat_dominance_scale_pct)."""
        m = self.model.match
        preset = preset or m.length
        key = str(seats or m.seats)
        cost = (m.cost_scale_pct[preset] * m.seat_cost_scale_pct.get(key, 100) + 50) // 100
        dominance = (m.dominance_scale_pct.get(preset, 100)
                     * m.seat_dominance_scale_pct.get(key, 100) + 50) // 100
        return cost, dominance

    def board_radius(self, preset: str | None = None) -> int:
        """The board radius of a match of `preset` (default: the tables' own): map.radius
        × match.radius_scale_pct of the preset (D6, 100 when not listed), rounded half
        up."""
        m = self.model
        return scaled_cost(m.map.radius, m.match.radius_scale_pct.get(preset or m.match.length,
                                                                       100))

    def arrays(self, length: str | None = None, seats: int | None = None) -> TableArrays:
        """The compiled record kernels receive, its costs and dominance counter at the
        game speed of the length preset `length` and the seat count `seats` (defaults:
        the tables' own; D6, `scales_pct`) and its board radius at that preset's
        (`board_radius`). Built once per Tables, preset and seat count; see
        sim.rules.record."""
        preset = length or self.model.match.length
        seats = seats or self.model.match.seats
        cache = self.__dict__.setdefault("_arrays", {})
        if (preset, seats) not in cache:
            shape = board_shape_problems(self.model, preset)
            if shape:  # another preset than the tables' own: not checked at load
                raise TablesError([f"{self.source}: {'.'.join(path)}: {reason}"
                                   for path, reason in shape])
            cache[preset, seats] = compile_record(self.model, *self.scales_pct(preset, seats),
                                                  radius=self.board_radius(preset))
        return cache[preset, seats]

    def with_overrides(self, overrides: dict[str, Any], source: str = "<overrides>",
                       check_board: bool = True) -> Tables:
        """This variant with more dotted-key overrides applied and re-validated.

        `check_board=False` leaves out whether the tables' own default match fits the
        board, for a caller that checks the board at the seats and length it plays
        (board_problems: an experiment's `seats = 2`, `sim match --seats 2`), where a
        board too small for the default 4 seats is no error."""
        try:
            data = apply_overrides(self.data, overrides, source)
        except TablesError as exc:
            # the known keys' values are checked too: every problem of the overrides
            # at once, not the unknown keys alone
            known = {k: v for k, v in overrides.items()
                     if not any(e.startswith(f"{source}: {k}: ") for e in exc.errors)}
            more: list[str] = []
            try:
                _validate(apply_overrides(self.data, known, source), source, {},
                          {**self.overrides, **known}, check_board=check_board)
            except TablesError as checked:
                more = checked.errors
            raise TablesError(exc.errors + more) from None
        merged = {**self.overrides, **overrides}
        return _validate(data, source, {}, merged, check_board=check_board)


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
    key = key_text(path) or "<root>"
    return f"{where}: {key}: {reason}"


def read_tables_file(path: Path) -> tuple[dict[str, Any], str]:
    """A game's tables file parsed, and its text (for key_lines); every problem
    reading or parsing it (missing, not UTF-8, over the input limits, not TOML) is a
    TablesError line `file: reason`. Both games' loaders start here."""
    source = str(path)
    try:
        text = read_input(path)
    except OSError as exc:
        raise TablesError([f"{source}: cannot read: {exc.strerror or exc}"]) from None
    except UnicodeDecodeError as exc:
        raise TablesError([f"{source}: {utf8_problem(path, exc)}"]) from None
    except InputLimit as exc:
        raise TablesError([exc.where(source)]) from None
    try:
        return parse_input(text), text
    except tomllib.TOMLDecodeError as exc:
        raise TablesError([f"{source}: not valid TOML: {exc}"]) from None
    except InputLimit as exc:
        raise TablesError([exc.where(source)]) from None


def load_tables(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> Tables:
    """Load, validate and resolve tables from `path` (default tables/default.toml).

    Raises TablesError with every problem found, FileNotFoundError-free: a
    missing or unparsable file is a TablesError too.
    """
    path = Path(path) if path else DEFAULT_TABLES
    raw, text = read_tables_file(path)
    tables = _validate(raw, str(path), key_lines(text), {})
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
            out[key.strip()] = parse_input(f"v = {value.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            out[key.strip()] = value.strip()  # a bare word is a string
        except InputLimit as exc:
            raise TablesError([f"--set {key.strip()}: {exc.reason.split(' (')[0]}"]) from None
    return out


def apply_overrides(data: dict[str, Any], overrides: dict[str, Any], source: str) -> dict[str, Any]:
    """A copy of `data` with dotted-key overrides set; unknown keys are errors, except
    that a personality may override any shared AI key it does not yet override (D8:
    `ai.personalities.<name>.<part>.<key>` for a key of `[ai.<part>]`)."""
    out = copy.deepcopy(data)
    errors = []
    for dotted, value in overrides.items():
        parts = dotted.split(".")
        node = out
        ai = out.get("ai", {})
        new_override = len(parts) == 5 and parts[:2] == ["ai", "personalities"] and \
            parts[2] in ai.get("personalities", {}) and isinstance(ai.get(parts[3]), dict) and \
            parts[4] in ai[parts[3]]
        if new_override and not isinstance(ai["personalities"][parts[2]].get(parts[3]), dict):
            ai["personalities"][parts[2]][parts[3]] = {}
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            if not isinstance(node, dict) or (part not in node and not (new_override and last)):
                errors.append(f"{source}: {dotted}: unknown key "
                              f"{'.'.join(parts[: i + 1])!r} in the tables")
                break
            if last:
                if isinstance(node.get(part), dict):
                    errors.append(f"{source}: {dotted}: is a table; override one of its keys")
                else:
                    node[part] = value
            else:
                node = node[part]
    if errors:
        raise TablesError(errors)
    return out


def _validate(raw: dict[str, Any], source: str, lines: dict[tuple, int],
              overrides: dict[str, Any], check_board: bool = True) -> Tables:
    errors: list[str] = []
    try:
        model = TablesModel.model_validate(raw)
    except ValidationError as exc:
        for err in exc.errors():
            errors.append(_fmt(source, lines, tuple(err["loc"]), _reason(err)))
        raise TablesError(errors) from None
    for path, reason in _cross_checks(model, check_board):
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
    got = shown(err.get("input"))
    if kind == "string_pattern_mismatch" and err["loc"][-1:] == ("[key]",):
        return f"a name: letters, digits, _ - only, at most 40 (got {got})"
    if kind.endswith("_type"):
        return f"{err['msg'].lower()}, got {got}"
    return f"{err['msg'].lower()} (got {got})"


def _cross_checks(m: TablesModel, check_board: bool = True) -> list[tuple[tuple, str]]:
    """Checks that span several keys; each returns (path, reason). `check_board`: also
    whether the tables' own default match (match.seats, match.length) fits its board."""
    out = _match_problems(m) + _required_name_problems(m) + _prerequisite_problems(m)
    # looked for only when every check above passed (a tech that requires itself,
    # already reported, is a cycle too)
    if not out and _has_cycle({n: t.requires for n, t in m.techs.items()}):
        out.append((("techs",), "prerequisites form a cycle"))
    out += _name_reference_problems(m)
    if m.map.start_edge_margin * 2 >= m.map.radius:
        out.append((("map", "start_edge_margin"), "leaves no room for start tiles on this radius"))
    # the tables' own preset's board here; another preset's where a match of it is asked
    # for (an experiment, `sim match --length`, Tables.arrays): a designer who shrinks
    # map.radius for standard matches is not refused over a short board never played
    out += board_shape_problems(m, m.match.length)
    out += _city_problems(m) + _weight_problems(m)
    # only for tables every other check passed: placing the starts reads the radius,
    # margin, spacing and terrain weights checked above
    if not out and check_board:
        out += board_problems(m, m.match.seats, m.match.length)
    return out


def _match_problems(m: TablesModel) -> list[tuple[tuple, str]]:
    """The [match] table against itself and the tables it names: one scale per length
    preset (D6), seat scales keyed by seat counts, and a known preset, personalities
    and start units."""
    out: list[tuple[tuple, str]] = []
    if set(m.match.cost_scale_pct) != set(m.match.lengths):
        out.append((("match", "cost_scale_pct"), "needs one value per length preset "
                    f"{sorted(m.match.lengths)}, got {sorted(m.match.cost_scale_pct)}"))
    for name in ("dominance_scale_pct", "radius_scale_pct"):
        extra = set(getattr(m.match, name)) - set(m.match.lengths)
        if extra:
            out.append((("match", name), f"unknown length preset "
                        f"{sorted(extra)[0]!r}; presets are {sorted(m.match.lengths)}"))
    for name in ("seat_cost_scale_pct", "seat_dominance_scale_pct", "seat_length_scale_pct"):
        extra = set(getattr(m.match, name)) - {str(n) for n in range(2, MAX_SEATS + 1)}
        if extra:
            out.append((("match", name, sorted(extra)[0]), "not a seat count: keys are "
                        f"the seat counts 2 to {MAX_SEATS}"))
    if m.match.length not in m.match.lengths:
        out.append((("match", "length"), f"unknown preset {m.match.length!r}; "
                    f"presets are {sorted(m.match.lengths)}"))
    for i, name in enumerate(m.match.personalities):
        if name not in m.ai.personalities:
            out.append((("match", "personalities", i), f"unknown personality {name!r}"))
    for i, name in enumerate(m.match.start_units):
        if name not in m.units:
            out.append((("match", "start_units", i), f"unknown unit {name!r}"))
    return out


def _required_name_problems(m: TablesModel) -> list[tuple[tuple, str]]:
    """The units, buildings and techs the scenario contract (SCENARIOS.md) names."""
    out: list[tuple[tuple, str]] = []
    for name in REQUIRED_UNITS:
        if name not in m.units:
            out.append((("units",), f"unit {name!r} must be defined (scenario files name it)"))
    for name in REQUIRED_BUILDINGS:
        if name not in m.buildings:
            out.append((("buildings",), f"building {name!r} must be defined"))
    for name in REQUIRED_TECHS:
        if name not in m.techs:
            out.append((("techs",), f"tech {name!r} must be defined"))
    return out


def _prerequisite_problems(m: TablesModel) -> list[tuple[tuple, str]]:
    """Each tech's `requires`: known techs, never itself."""
    out: list[tuple[tuple, str]] = []
    for name, tech in m.techs.items():
        for i, req in enumerate(tech.requires):
            if req not in m.techs:
                out.append((("techs", name, "requires", i), f"unknown tech {req!r}"))
            elif req == name:
                out.append((("techs", name, "requires", i), "a tech cannot require itself"))
    return out


def _name_reference_problems(m: TablesModel) -> list[tuple[tuple, str]]:
    """The names other keys refer to: each unit's and building's tech, a unit that
    founds cities, the law tech of revolts (V11), and the science victory's
    Observatory and its tech (V16)."""
    out: list[tuple[tuple, str]] = []
    techs = set(m.techs)
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
    return out


def _city_problems(m: TablesModel) -> list[tuple[tuple, str]]:
    """A city's region rings (T03, T15) and its population bounds."""
    out: list[tuple[tuple, str]] = []
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
    return out


def _weight_problems(m: TablesModel) -> list[tuple[tuple, str]]:
    """The weights maps and events are drawn with: a passable terrain with a weight,
    a card and a resource node that can be drawn."""
    out: list[tuple[tuple, str]] = []
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


def board_shape_problems(m: TablesModel, preset: str) -> list[tuple[tuple, str]]:
    """Is the board of a `preset` match (map.radius × match.radius_scale_pct, D6) a
    board at all: radius 3 or more, with start tiles inside map.start_edge_margin?
    (path, reason) for each way it is not; none when the preset plays on map.radius
    (the map's own check covers it)."""
    pct = m.match.radius_scale_pct.get(preset, 100)
    radius = scaled_cost(m.map.radius, pct)
    if radius == m.map.radius or (radius >= 3 and m.map.start_edge_margin * 2 < radius):
        return []
    return [(("match", "radius_scale_pct", preset),
             f"makes the {preset} board radius {radius}: "
             + ("below 3" if radius < 3 else "no room for start tiles inside "
                f"map.start_edge_margin = {m.map.start_edge_margin}"))]


def setup_problems(m: TablesModel, length: str | None,
                   personalities: list[str] | None) -> list[tuple[tuple, str]]:
    """A file's `length` and `personalities` against the tables' presets (an
    experiment's, a tune's, a sensitivity's): (key path in the file, reason) each."""
    out: list[tuple[tuple, str]] = []
    if length is not None and length not in m.match.lengths:
        out.append((("length",), f"unknown length {length!r}; presets: "
                    f"{', '.join(m.match.lengths)}"))
    out += [(("personalities", i), f"unknown personality {name!r}")
            for i, name in enumerate(personalities or []) if name not in m.ai.personalities]
    return out


def board_problems(m: TablesModel, n_seats: int, preset: str) -> list[tuple[tuple, str]]:
    """Can a match of `preset` at `n_seats` be played on its board (D1, D6, T07)?
    board_shape_problems, then map_room_problems on the preset's radius; a scaled
    board's problems name match.radius_scale_pct.<preset>, the key that sized it."""
    shape = board_shape_problems(m, preset)
    if shape:
        return shape
    radius = scaled_cost(m.map.radius, m.match.radius_scale_pct.get(preset, 100))
    room = map_room_problems(m, n_seats, radius)
    if radius == m.map.radius:
        return room
    return [(("match", "radius_scale_pct", preset),
             f"the {preset} board (radius {radius}): {reason}") for _path, reason in room]


def _disc(radius: int) -> int:
    """Tiles within `radius` steps of a tile: 3r(r+1) + 1."""
    return 3 * radius * (radius + 1) + 1


def map_room_problems(m: TablesModel, n_seats: int, radius: int | None = None,
                      ) -> list[tuple[tuple, str]]:
    """Can the map (of `radius`, default map.radius) hold `n_seats` starts (D1, T07)?
    (path, reason) for each way it cannot.

    Spacing: starts must lie city_min_distance apart inside the disc that
    start_edge_margin leaves; greedy farthest-point placement on the bare board (all
    land) tells whether `n_seats` of them fit. Land: each start needs the tiles
    within city_min_distance // 2 steps of it to itself, so the expected passable
    tiles of the terrain draw must cover n_seats such discs. Map generation checks
    the drawn map itself as well (an unplayable one is an error row, never a match).
    """
    out: list[tuple[tuple, str]] = []
    radius = radius or m.map.radius
    inner = radius - m.map.start_edge_margin
    spacing = m.territory.city_min_distance
    tiles = [(q, r) for q in range(-inner, inner + 1) for r in range(-inner, inner + 1)
             if abs(q + r) <= inner]

    def dist(a: tuple[int, int], b: tuple[int, int]) -> int:
        return (abs(a[0] - b[0]) + abs(a[1] - b[1]) + abs(a[0] + a[1] - b[0] - b[1])) // 2

    starts = [max(tiles, key=lambda t: (dist(t, (0, 0)), t))]
    while len(starts) < n_seats:
        best = max(tiles, key=lambda t: (min(dist(t, s) for s in starts), t))
        if min(dist(best, s) for s in starts) < spacing:
            break
        starts.append(best)
    if len(starts) < n_seats:
        out.append((("map", "radius"),
                    f"no room for {n_seats} starts {spacing} steps apart (territory."
                    f"city_min_distance) within {inner} steps of the centre (radius {radius} "
                    f"less start_edge_margin {m.map.start_edge_margin})"))
    weights = m.map.terrain_weights.model_dump()
    passable = sum(w for name, w in weights.items() if getattr(m.terrain, name).passable)
    expected = _disc(radius) * passable / max(sum(weights.values()), 1)
    need = n_seats * _disc(spacing // 2)
    if expected < need:
        out.append((("map", "terrain_weights"),
                    f"too little passable land: about {expected:.0f} passable tiles expected, "
                    f"{n_seats} seats need at least {need} ({_disc(spacing // 2)} each)"))
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

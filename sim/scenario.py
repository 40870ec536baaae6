"""Scenario files (../shared/SCENARIOS.md): a position, commands, the resulting state.

`load_scenario` parses and validates the whole file before anything runs; a
malformed file raises ScenarioError with one message naming the file, the line
and the key. `run_scenario` applies the commands through the same rule
kernels a full match uses and returns the report.
"""

from __future__ import annotations

import contextlib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sim.board import Board, make_board
from sim.engine import COMMANDS, REASON_TEXT, item_name, owner_name, run_command, state_report
from sim.kernels import reasons as R
from sim.kernels.common import max_hp
from sim.rng import Purpose, stream_seed
from sim.state import (
    BANDIT,
    NEUTRAL,
    REVOLT_TRANSFER,
    REVOLT_UNREST,
    State,
    copy_state,
    empty_state,
)
from sim.tables import NODE_KINDS, TERRAINS, Tables, TablesError, load_tables
from sim.tomlpos import key_lines, line_of

Coord = Annotated[list[int], Field(min_length=2, max_length=2)]
Count = Annotated[int, Field(ge=0)]


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class TileSpec(_M):
    at: Coord
    terrain: Literal["plains", "forest", "hills", "mountain", "water"] | None = None
    node: Literal["food", "production", "gold"] | None = None


class BoardSpec(_M):
    radius: Annotated[int, Field(ge=1, le=30)]
    terrain: Literal["plains", "forest", "hills", "mountain", "water"] = "plains"
    tiles: list[TileSpec] = []


class SeatSpec(_M):
    gold: int | None = None
    science: Count = 0
    techs: list[str] = []
    dominance_counter: Count = 0
    human: bool = False
    personality: str | None = None


class CitySpec(_M):
    seat: int | Literal["neutral"]
    at: Coord
    pop: Annotated[int, Field(ge=1)] | None = None
    hp: Count | None = None
    capital: bool | None = None
    buildings: list[str] = []
    bought: list[Coord] = []
    revolt: Count = 0
    revolt_cause: Literal["transfer", "unrest"] | None = None
    food: Count = 0
    production: Count = 0
    queue: list[str] = []


class UnitSpec(_M):
    seat: int | Literal["bandit"]
    type: str
    at: Coord
    hp: Annotated[int, Field(ge=1)] | None = None
    moves_left: Count | None = None


class TruceSpec(_M):
    seats: Annotated[list[int], Field(min_length=2, max_length=2)]
    turns: Annotated[int, Field(ge=1)]


class PactSpec(_M):
    members: Annotated[list[int], Field(min_length=1)]
    target: int
    turns: Annotated[int, Field(ge=1)]


class CampSpec(_M):
    at: Coord


class CommandSpec(_M):
    do: str
    unit: int | None = None
    to: Coord | None = None
    target: Coord | None = None
    city: int | None = None
    at: Coord | None = None
    item: str | None = None
    hp: int | None = None
    tech: str | None = None
    with_: int | None = Field(default=None, alias="with")
    n: Annotated[int, Field(ge=0)] | None = None
    seat: int | None = None


class ScenarioSpec(_M):
    name: str = ""
    description: str = ""
    seed: Annotated[int, Field(ge=0)] = 0
    turn: Annotated[int, Field(ge=1)] = 1
    active_seat: Count = 0
    match_length: Annotated[int, Field(ge=1)] | None = None
    overrides: dict[str, Any] = {}
    board: BoardSpec
    seats: Annotated[list[SeatSpec], Field(min_length=1, max_length=6)]
    cities: list[CitySpec] = []
    units: list[UnitSpec] = []
    truces: list[TruceSpec] = []
    pacts: list[PactSpec] = []
    camps: list[CampSpec] = []
    commands: list[CommandSpec] = []
    expect: dict[str, Any] = {}


class ScenarioError(Exception):
    """A malformed scenario: one message naming file, line and key."""


@dataclass
class Scenario:
    path: str
    spec: ScenarioSpec
    tables: Tables
    board: Board
    state: State
    lines: dict[tuple, int] = field(default_factory=dict)


def _where(path: str, lines: dict[tuple, int], loc: tuple) -> str:
    line = line_of(lines, loc)
    key = ".".join(str(p) for p in loc) if loc else "<file>"
    return f"{path}:{line}: {key}" if line else f"{path}: {key}"


def load_scenario(path: str | Path, tables_path: str | Path | None = None) -> Scenario:
    """Parse and validate a scenario file and build its starting state."""
    path = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(_toml_error(path, text, exc)) from None
    lines = key_lines(text)
    try:
        spec = ScenarioSpec.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = _trim_loc(raw, tuple("with" if p == "with_" else p for p in err["loc"]))
        reason = "unknown key" if err["type"] == "extra_forbidden" else (
            "missing key" if err["type"] == "missing" else err["msg"].lower())
        raise ScenarioError(f"{_where(path, lines, loc)}: {reason}") from None
    try:
        tables = load_tables(tables_path)
    except TablesError as exc:
        raise ScenarioError(exc.errors[0]) from None
    # one override at a time first, so a bad one is reported at its own line
    for key, value in spec.overrides.items():
        try:
            tables.with_overrides({key: value})
        except TablesError as exc:
            reason = exc.errors[0].split(": ", 2)[-1]
            raise ScenarioError(f"{_where(path, lines, ('overrides', key))}: {reason}") from None
    if spec.overrides:
        try:
            tables = tables.with_overrides(spec.overrides, source=f"{path}: overrides")
        except TablesError as exc:
            raise ScenarioError(exc.errors[0]) from None
    builder = _Builder(path, lines, spec, tables)
    state = builder.build()
    return Scenario(path, spec, tables, builder.board, state, lines)


def _toml_error(path: str, text: str, exc: tomllib.TOMLDecodeError) -> str:
    """`file:line: key: not valid TOML: ...`, naming the key written on the bad line."""
    line = getattr(exc, "lineno", None)
    if line is None:
        m = re.search(r"line (\d+)", str(exc))
        line = int(m.group(1)) if m else None
    if not line:
        return f"{path}: not valid TOML: {exc}"
    source = text.splitlines()[line - 1] if line <= len(text.splitlines()) else ""
    key = source.split("=", 1)[0].strip().strip("[]\"' ") if "=" in source or "[" in source \
        else ""
    reason = getattr(exc, "msg", None) or str(exc)
    return f"{path}:{line}: {key or '<line>'}: not valid TOML: {reason}"


def _trim_loc(raw: Any, loc: tuple) -> tuple:
    """Drop the parts of a pydantic error location that are not keys of the file
    (pydantic appends union branch names such as 'int')."""
    out: list = []
    node = raw
    for i, p in enumerate(loc):
        if isinstance(node, dict):
            if p in node:
                out.append(p)
                node = node[p]
                continue
            if i == len(loc) - 1 and isinstance(p, str):
                out.append(p)  # a missing key
            break
        if isinstance(node, list) and isinstance(p, int) and 0 <= p < len(node):
            out.append(p)
            node = node[p]
            continue
        break
    return tuple(out)


class _Builder:
    """Turns a validated spec into a State, failing on the first illegal position."""

    def __init__(self, path: str, lines: dict[tuple, int], spec: ScenarioSpec, tables: Tables):
        self.path, self.lines, self.spec, self.tables = path, lines, spec, tables
        self.board = make_board(spec.board.radius)
        self.tb = tables.arrays()

    def fail(self, loc: tuple, reason: str) -> None:
        raise ScenarioError(f"{_where(self.path, self.lines, loc)}: {reason}")

    def tile(self, at: list[int], loc: tuple) -> int:
        t = self.board.index(at[0], at[1])
        if t < 0:
            self.fail(loc, f"tile {at} is off the board (radius {self.board.radius})")
        return t

    def seat_index(self, seat: int, loc: tuple) -> int:
        if not 0 <= seat < len(self.spec.seats):
            self.fail(loc, f"seat {seat} is not in [[seats]] (0..{len(self.spec.seats) - 1})")
        return seat

    def name_index(self, names: list[str], name: str, what: str, loc: tuple) -> int:
        if name not in names:
            self.fail(loc, f"unknown {what} {name!r}; known: {', '.join(names)}")
        return names.index(name)

    def build(self) -> State:
        spec, tables, tb, board = self.spec, self.tables, self.tb, self.board
        n_seats = len(spec.seats)
        st = empty_state(board.n_tiles, n_seats, len(tables.tech_names),
                         len(tables.building_names))
        st.turn[0] = spec.turn
        st.last_turn[0] = spec.match_length or tables.match_length()
        if spec.turn > st.last_turn[0]:
            self.fail(("turn",), f"turn {spec.turn} is past the match length {st.last_turn[0]}")
        st.active_seat[0] = self.seat_index(spec.active_seat, ("active_seat",))
        st.rng_ai[0] = stream_seed(spec.seed, 0, Purpose.AI)
        st.rng_events[0] = stream_seed(spec.seed, 0, Purpose.EVENTS)

        st.tile_terrain[: board.n_tiles] = TERRAINS.index(spec.board.terrain)
        for i, ts in enumerate(spec.board.tiles):
            t = self.tile(ts.at, ("board", "tiles", i, "at"))
            if ts.terrain is not None:
                st.tile_terrain[t] = TERRAINS.index(ts.terrain)
            if ts.node is not None:
                if not tb.terrain_passable[st.tile_terrain[t]]:
                    self.fail(("board", "tiles", i, "node"),
                              "resource nodes sit on passable tiles only")
                st.tile_node[t] = NODE_KINDS.index(ts.node)

        personalities = tables.personality_names
        default_pers = tables.model.match.personalities
        for s, ss in enumerate(spec.seats):
            st.seat_gold[s] = tb.start_gold if ss.gold is None else ss.gold
            st.seat_science[s] = ss.science
            for k, tech in enumerate(ss.techs):
                st.seat_techs[s, self.name_index(tables.tech_names, tech, "tech",
                                                 ("seats", s, "techs", k))] = True
            if ss.dominance_counter >= tb.dominance_to_win:
                self.fail(("seats", s, "dominance_counter"),
                          f"must be below the winning counter {tb.dominance_to_win}")
            st.seat_dominance[s] = ss.dominance_counter
            st.seat_human[s] = ss.human
            pers = ss.personality or default_pers[s % len(default_pers)]
            st.seat_personality[s] = self.name_index(personalities, pers, "personality",
                                                     ("seats", s, "personality"))

        self._cities(st)
        self._units(st)
        for i, tr in enumerate(spec.truces):
            a = self.seat_index(tr.seats[0], ("truces", i, "seats"))
            b = self.seat_index(tr.seats[1], ("truces", i, "seats"))
            if a == b:
                self.fail(("truces", i, "seats"), "a truce needs two different seats")
            st.truce_turns[a, b] = st.truce_turns[b, a] = tr.turns
        if len(spec.pacts) > st.pact_target.shape[0]:
            self.fail(("pacts",), f"at most {st.pact_target.shape[0]} pacts")
        for i, pact in enumerate(spec.pacts):
            target = self.seat_index(pact.target, ("pacts", i, "target"))
            for m in pact.members:
                self.seat_index(m, ("pacts", i, "members"))
                if m == target:
                    self.fail(("pacts", i, "members"), "a pact's target cannot be a member")
                st.pact_members[i, m] = True
            st.pact_target[i] = target
            st.pact_turns[i] = pact.turns
        if len(spec.camps) > st.camp_tile.shape[0]:
            self.fail(("camps",), f"at most {st.camp_tile.shape[0]} camps")
        for i, camp in enumerate(spec.camps):
            t = self.tile(camp.at, ("camps", i, "at"))
            if st.tile_site[t] >= 0:
                self.fail(("camps", i, "at"), "a camp cannot stand on a city")
            st.camp_tile[i] = t
        for i, cmd in enumerate(spec.commands):
            self._check_command(i, cmd)
        return st

    def _cities(self, st: State) -> None:
        spec, tables, tb, board = self.spec, self.tables, self.tb, self.board
        if len(spec.cities) > st.city_tile.shape[0]:
            self.fail(("cities",), f"at most {st.city_tile.shape[0]} cities")
        for c, cs in enumerate(spec.cities):
            loc = ("cities", c)
            owner = NEUTRAL if cs.seat == "neutral" else self.seat_index(cs.seat, (*loc, "seat"))
            t = self.tile(cs.at, (*loc, "at"))
            if not tb.terrain_passable[st.tile_terrain[t]]:
                self.fail((*loc, "at"), f"city on impassable tile {cs.at}")
            for o in range(c):
                d = int(board.distance[t, st.city_tile[o]])
                if d < tb.city_min_distance:
                    self.fail((*loc, "at"), f"city {c} at {cs.at} is {d} steps from city {o}; "
                              f"cities stay at least {tb.city_min_distance} apart (T07)")
            st.n_cities[0] = c + 1
            st.city_tile[c] = t
            st.tile_site[t] = c
            st.city_owner[c] = owner
            default_pop = tb.village_population if owner == NEUTRAL else tb.start_population
            pop = cs.pop if cs.pop is not None else default_pop
            if pop > tb.max_population:
                self.fail((*loc, "pop"), f"population {pop} is above the ceiling "
                          f"{tb.max_population} (T15)")
            st.city_pop[c] = pop
            for k, b in enumerate(cs.buildings):
                st.city_buildings[c, self.name_index(tables.building_names, b, "building",
                                                     (*loc, "buildings", k))] = True
            hp_max = int(max_hp(st, tb, c))
            if cs.hp is not None and cs.hp > hp_max:
                self.fail((*loc, "hp"), f"hp {cs.hp} is above the city's max {hp_max}")
            st.city_hp[c] = hp_max if cs.hp is None else cs.hp
            st.city_revolt[c] = cs.revolt
            if cs.revolt:
                st.city_revolt_cause[c] = REVOLT_UNREST if cs.revolt_cause == "unrest" \
                    else REVOLT_TRANSFER
            st.city_food[c] = cs.food
            st.city_production[c] = cs.production
            if len(cs.queue) > st.city_queue.shape[1]:
                self.fail((*loc, "queue"), f"at most {st.city_queue.shape[1]} items")
            names = tables.unit_names + tables.building_names
            for k, item in enumerate(cs.queue):
                st.city_queue[c, k] = self.name_index(names, item, "unit or building",
                                                      (*loc, "queue", k))
            if owner == NEUTRAL:
                for key in ("capital", "bought", "queue"):
                    if getattr(cs, key):
                        self.fail((*loc, key), "a neutral village has no capital, region "
                                  "or queue (T06)")
            elif cs.capital:
                if st.seat_capital[owner] >= 0:
                    self.fail((*loc, "capital"), f"seat {owner} already has capital "
                              f"city {st.seat_capital[owner]}")
                st.seat_capital[owner] = c
        # a seat's first listed city is its capital unless one says capital = true
        for c, cs in enumerate(spec.cities):
            owner = st.city_owner[c]
            if owner >= 0 and st.seat_capital[owner] < 0 and cs.capital is not False:
                st.seat_capital[owner] = c
        for s in range(len(spec.seats)):
            if st.seat_capital[s] >= 0:
                st.city_capital[st.seat_capital[s]] = True
            elif any(st.city_owner[c] == s for c in range(st.n_cities[0])):
                self.fail(("cities",), f"seat {s} has cities but none may be its capital")
            else:
                st.seat_alive[s] = False  # V02: a seat with no city is out
        for c, cs in enumerate(spec.cities):
            for k, at in enumerate(cs.bought):
                t = self.tile(at, ("cities", c, "bought", k))
                if not tb.terrain_passable[st.tile_terrain[t]]:
                    self.fail(("cities", c, "bought", k), f"bought tile {at} is impassable (T04)")
                if st.tile_site[t] >= 0:
                    self.fail(("cities", c, "bought", k), f"bought tile {at} is a city's tile")
                if st.tile_bought_by[t] >= 0:
                    self.fail(("cities", c, "bought", k),
                              f"tile {at} is already bought by city {st.tile_bought_by[t]}")
                st.tile_bought_by[t] = c
        if not st.seat_alive[st.active_seat[0]]:
            self.fail(("active_seat",), f"seat {st.active_seat[0]} holds no city")

    def _units(self, st: State) -> None:
        spec, tables, tb = self.spec, self.tables, self.tb
        if len(spec.units) > st.unit_tile.shape[0]:
            self.fail(("units",), f"at most {st.unit_tile.shape[0]} units")
        for u, us in enumerate(spec.units):
            loc = ("units", u)
            if us.seat == "bandit":
                owner, utype = BANDIT, -1
                if us.type != "bandit":
                    self.fail((*loc, "type"), "a bandit's type is \"bandit\"")
                full = tb.bandit_hp
                moves = 1
            else:
                owner = self.seat_index(us.seat, (*loc, "seat"))
                if not st.seat_alive[owner]:
                    self.fail((*loc, "seat"), f"seat {owner} holds no city (eliminated)")
                utype = self.name_index(tables.unit_names, us.type, "unit type", (*loc, "type"))
                full = int(tb.unit_hp[utype])
                moves = int(tb.unit_moves[utype])
            t = self.tile(us.at, (*loc, "at"))
            if not tb.terrain_passable[st.tile_terrain[t]]:
                self.fail((*loc, "at"), f"unit on impassable tile {us.at}")
            if st.tile_unit[t] >= 0:
                self.fail((*loc, "at"), f"unit {st.tile_unit[t]} already stands on {us.at} "
                          "(one unit per tile)")
            site = st.tile_site[t]
            if site >= 0 and st.city_owner[site] != owner:
                self.fail((*loc, "at"), f"unit inside city {site} of another side")
            if us.hp is not None and us.hp > full:
                self.fail((*loc, "hp"), f"hp {us.hp} is above the unit's max {full}")
            st.n_units[0] = u + 1
            st.unit_type[u] = utype
            st.unit_owner[u] = owner
            st.unit_tile[u] = t
            st.tile_unit[t] = u
            st.unit_hp[u] = full if us.hp is None else us.hp
            st.unit_moves_left[u] = moves if us.moves_left is None else us.moves_left

    def _check_command(self, i: int, cmd: CommandSpec) -> None:
        loc = ("commands", i)
        if cmd.do not in COMMANDS:
            self.fail((*loc, "do"), f"unknown command {cmd.do!r}; known: {', '.join(COMMANDS)}")
        _code, needed = COMMANDS[cmd.do]
        given = {("with" if k == "with_" else k) for k, v in cmd if v is not None and k != "do"}
        for key in needed:
            if key not in given:
                self.fail(loc, f"{cmd.do} needs key {key!r}")
        for key in sorted(given - set(needed)):
            takes = ", ".join(needed) or "no keys"
            self.fail((*loc, key), f"unknown key for {cmd.do} (it takes {takes})")
        for key in ("to", "target", "at"):
            value = getattr(cmd, key)
            if value is not None:
                self.tile(value, (*loc, key))
        if cmd.item is not None:
            self.name_index(self.tables.unit_names + self.tables.building_names, cmd.item,
                            "unit or building", (*loc, "item"))
        if cmd.tech is not None:
            self.name_index(self.tables.tech_names, cmd.tech, "tech", (*loc, "tech"))


def command_args(scn: Scenario, cmd: CommandSpec) -> tuple[int, int, int]:
    """(kernel code, a, b) for one validated command."""
    code, _ = COMMANDS[cmd.do]
    board, tables = scn.board, scn.tables
    if cmd.do in ("move", "attack"):
        where = cmd.to if cmd.do == "move" else cmd.target
        return code, cmd.unit, board.index(*where)
    if cmd.do == "enter":
        return code, cmd.unit, cmd.city
    if cmd.do == "found":
        return code, cmd.unit, 0
    if cmd.do == "buy_tile":
        return code, cmd.city, board.index(*cmd.at)
    if cmd.do == "queue":
        return code, cmd.city, (tables.unit_names + tables.building_names).index(cmd.item)
    if cmd.do == "rush":
        return code, cmd.city, 0
    if cmd.do == "repair":
        return code, cmd.city, cmd.hp
    if cmd.do == "research":
        return code, tables.tech_names.index(cmd.tech), 0
    if cmd.do == "truce":
        return code, cmd.with_, 0
    if cmd.do == "set_seat":
        return code, cmd.seat, 0
    return code, 0, 0


def refusal_text(scn: Scenario, state: State, cmd: CommandSpec, reason: int) -> str:
    """The designer's words for a refused command, e.g. `truce with seat 1: cannot ...`."""
    tables, tb = scn.tables, scn.tables.arrays()
    seat = int(state.active_seat[0])
    ctx: dict[str, Any] = {"seat": seat, "unit": cmd.unit, "city": cmd.city, "item": cmd.item,
                           "tech": cmd.tech, "quota": tb.quota, "gold": int(state.seat_gold[seat]),
                           "min_distance": tb.city_min_distance,
                           "settler_pop": tb.settler_min_population, "price": "?"}
    if cmd.unit is not None and 0 <= cmd.unit < state.n_units[0]:
        ut = int(state.unit_type[cmd.unit])
        ctx["unit_type"] = "bandit" if ut < 0 else tables.unit_names[ut]
        ctx["unit_owner"] = f"seat {owner_name(int(state.unit_owner[cmd.unit]))}"
    other = None
    if cmd.city is not None and 0 <= cmd.city < state.n_cities[0]:
        owner = int(state.city_owner[cmd.city])
        ctx["city_owner"] = "the neutral side" if owner == NEUTRAL else f"seat {owner}"
        ctx["city_hp"] = int(state.city_hp[cmd.city])
        other = owner
    target = cmd.target or cmd.to
    if target is not None:
        t = scn.board.index(*target)
        if state.tile_site[t] >= 0:
            other = int(state.city_owner[state.tile_site[t]])
        elif state.tile_unit[t] >= 0:
            other = int(state.unit_owner[state.tile_unit[t]])
    ctx["other"] = other
    if cmd.do == "buy_tile" and cmd.city is not None and 0 <= cmd.city < state.n_cities[0]:
        n = int((state.tile_bought_by == cmd.city).sum())
        ctx["price"] = tb.tile_price_first + tb.tile_price_step * n
    elif cmd.do == "truce":
        ctx["price"] = tb.truce_price
    elif cmd.do == "repair" and cmd.hp is not None:
        ctx["price"] = cmd.hp * tb.gold_repair_price
    elif cmd.do == "rush" and cmd.city is not None and 0 <= cmd.city < state.n_cities[0]:
        from sim.kernels.commands import rush_price
        if state.city_queue[cmd.city, 0] >= 0:
            ctx["price"] = int(rush_price(state, tb, cmd.city))
            ctx["item"] = item_name(tables, int(state.city_queue[cmd.city, 0]))
    text = REASON_TEXT.get(reason, f"refused (code {reason})")
    if reason in (R.R_TRUCE, R.R_PACT) and cmd.do in ("enter", "attack"):
        text = text.split(":")[0] + (": cannot enter its cities" if cmd.do == "enter"
                                     else ": cannot attack it")
    with contextlib.suppress(KeyError, IndexError):
        text = text.format(**ctx)
    if cmd.do == "truce" and reason != R.R_TRUCE:
        return f"truce with seat {cmd.with_}: {text}"
    return text


def run_scenario(scn: Scenario, check: bool = True) -> dict[str, Any]:
    """Apply every command in order and return the SCENARIOS.md report.

    A refused command leaves the state as it was and is reported with its
    reason; with `check`, the invariant checker runs after every command.
    """
    from sim.check import check_invariants
    from sim.engine_loop import play_turns

    state = scn.state
    tb = scn.tables.arrays()
    results = []
    for i, cmd in enumerate(scn.spec.commands):
        before = copy_state(state)
        if cmd.do == "play_turns":
            reason = play_turns(state, tb, scn.board, int(cmd.n))
        else:
            code, a, b = command_args(scn, cmd)
            reason = run_command(state, tb, scn.board, code, a, b)
        error = None
        if reason != 0:
            error = refusal_text(scn, before, cmd, reason)
        results.append({"index": i, "do": cmd.do, "ok": reason == 0, "error": error})
        if check:
            problems = check_invariants(state, scn.tables, scn.board)
            if problems:
                raise AssertionError(f"{scn.path}: after command {i} ({cmd.do}): "
                                     + "; ".join(problems))
    report = state_report(state, scn.tables, scn.board)
    report["name"] = scn.spec.name
    report["commands"] = results
    return report

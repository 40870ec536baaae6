"""Scenario files (../shared/SCENARIOS.md): the file's schema and its parsing.

A malformed file raises ScenarioError with one message naming the file, the line
and the key, before anything runs.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sim.rules.tables import Tables, TablesError, load_tables
from sim.rules.tomlpos import (
    InputLimit,
    key_lines,
    key_text,
    line_of,
    parse_input,
    read_input,
    utf8_problem,
)
from sim.world.board import Board
from sim.world.state import (
    State,
)

# Every integer has a bound, so nothing a file says can overflow the engine's int64
# arithmetic (prices times counts, stocks plus incomes over thousands of turns).
AMOUNT_MAX = 10**9        # a stock, store, HP or count
TURNS_MAX = 10_000        # a turn number or a duration in turns (the tables' own bound)
INDEX_MAX = 100_000       # an ID or a seat index (far above every capacity)
SEED_MAX = 2**63 - 1      # seeds are stored as Int64 in the outcome tables

Coord = Annotated[list[Annotated[int, Field(ge=-100, le=100)]], Field(min_length=2, max_length=2)]
Count = Annotated[int, Field(ge=0, le=AMOUNT_MAX)]
Turns = Annotated[int, Field(ge=1, le=TURNS_MAX)]
Index = Annotated[int, Field(ge=0, le=INDEX_MAX)]


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
    gold: Count | None = None
    science: Count = 0
    techs: list[str] = []
    dominance_counter: Count = 0
    human: bool = False
    personality: str | None = None


class CitySpec(_M):
    seat: Index | Literal["neutral"]
    at: Coord
    pop: Annotated[int, Field(ge=1, le=AMOUNT_MAX)] | None = None
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
    seat: Index | Literal["bandit"]
    type: str
    at: Coord
    hp: Annotated[int, Field(ge=1, le=AMOUNT_MAX)] | None = None
    moves_left: Count | None = None


class TruceSpec(_M):
    seats: Annotated[list[Index], Field(min_length=2, max_length=2)]
    turns: Turns


class PactSpec(_M):
    members: Annotated[list[Index], Field(min_length=1)]
    target: Index
    turns: Turns


class CampSpec(_M):
    at: Coord


class CommandSpec(_M):
    do: str
    unit: Index | None = None
    to: Coord | None = None
    target: Coord | None = None
    city: Index | None = None
    at: Coord | None = None
    item: str | None = None
    hp: Annotated[int, Field(ge=-AMOUNT_MAX, le=AMOUNT_MAX)] | None = None
    tech: str | None = None
    with_: Index | None = Field(default=None, alias="with")
    n: Annotated[int, Field(ge=0, le=TURNS_MAX)] | None = None
    seat: Index | None = None


class ScenarioSpec(_M):
    name: str = ""
    description: str = ""
    seed: Annotated[int, Field(ge=0, le=SEED_MAX)] = 0
    turn: Turns = 1
    active_seat: Index = 0
    match_length: Turns | None = None
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


def key_location(path: str, lines: dict[tuple, int], loc: tuple) -> str:
    line = line_of(lines, loc)
    key = key_text(loc) if loc else "<file>"
    return f"{path}:{line}: {key}" if line else f"{path}: {key}"


def parse_scenario(path: str | Path, tables_path: str | Path | None = None,
                   ) -> tuple[ScenarioSpec, dict[tuple, int], Tables]:
    """Parse and validate a scenario file: (spec, key lines, tables with its overrides)."""
    path = str(path)
    try:
        text = read_input(path)
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{path}: {utf8_problem(Path(path), exc)}") from None
    except InputLimit as exc:
        raise ScenarioError(exc.where(path)) from None
    try:
        raw = parse_input(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(_toml_error(path, text, exc)) from None
    except InputLimit as exc:
        raise ScenarioError(exc.where(path)) from None
    lines = key_lines(text)
    try:
        spec = ScenarioSpec.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = _trim_loc(raw, tuple("with" if p == "with_" else p for p in err["loc"]))
        reason = "unknown key" if err["type"] == "extra_forbidden" else (
            "missing key" if err["type"] == "missing" else err["msg"].lower())
        raise ScenarioError(f"{key_location(path, lines, loc)}: {reason}") from None
    try:
        tables = load_tables(tables_path)
    except TablesError as exc:
        raise ScenarioError(exc.errors[0]) from None
    # one override at a time first, so a bad one is reported at its own line. A
    # scenario plays on its own [board] with its own cities: whether a generated map
    # of the tables' default match would hold its starts (D1) is no concern of it
    for key, value in spec.overrides.items():
        try:
            tables.with_overrides({key: value}, check_board=False)
        except TablesError as exc:
            reason = exc.errors[0].split(": ", 2)[-1]
            where = key_location(path, lines, ("overrides", key))
            raise ScenarioError(f"{where}: {reason}") from None
    if spec.overrides:
        try:
            tables = tables.with_overrides(spec.overrides, source=f"{path}: overrides",
                                           check_board=False)
        except TablesError as exc:
            raise ScenarioError(exc.errors[0]) from None
    return spec, lines, tables


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



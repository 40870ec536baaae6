"""Experiment files: a sweep over balance variants, expanded into frozen run specs.

An experiment (`experiments/*.toml`) names base tables, variants (named
dotted-key overrides) and grids (axes whose every combination is a variant),
the matches per variant, the root seed, seats, match length and the AI
personality of each seat. `expand` is a pure function from the parsed file to
`Variant`s and `ChunkSpec`s; nothing runs here.

Match i of every variant uses the same streams (root seed, i): variants are
compared on identical maps and draws (common random numbers). Personalities
rotate with i (seat s of match i plays personalities[(s + i) % n]) so over
any n consecutive matches every personality sits in every seat once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sim.engine.seat_ai import SeatAIError, check_seat_ai, is_default
from sim.outputs.folders import name_problem
from sim.outputs.games import GAME_NAMES, Game, game_of
from sim.outputs.schemas import WRITTEN
from sim.outputs.settings import AnomalySettings, GateSettings
from sim.rules.codes import SKILLS, VICTORY_NAMES
from sim.rules.tables import (
    REPO_ROOT,
    Tables,
    TablesError,
    board_problems,
    load_tables,
    setup_problems,
)
from sim.rules.tomlpos import key_lines, key_text, line_of, read_toml, validation_problems


def run_name_problem(name: str, what: str) -> str | None:
    """Why `name` cannot name a run folder (the default one is runs/NAME, so a path
    there would write elsewhere), or None. `what`: experiment, sensitivity, tune."""
    return name_problem(name, what)


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class VariantSpec(_M):
    name: str
    set: dict[str, Any] = {}
    description: str = ""
    # seat index -> {skill, forbid} (issue 16, sim.engine.seat_ai); [] all defaults
    seat_ai: list[dict[str, Any]] = []
    # a game with sides (Crown): side A's and side B's AI skill (K14), default [0, 0]
    side_skill: list[int] = []


class GridSpec(_M):
    name: str
    axes: Annotated[dict[str, Annotated[list[Any], Field(min_length=1)]], Field(min_length=1)]
    set: dict[str, Any] = {}
    seat_ai: list[dict[str, Any]] = []


class SweepLimit(_M):
    """The most a sweep plays unless told `--yes` (issue 47): grid axes multiply fast,
    and 2,303 variants of 200 matches are most of a day on two cores. Over either
    limit, `sim sweep` stops before playing and says how much and how long."""

    matches: Annotated[int, Field(ge=1)] = 100_000  # variants × matches per variant
    variants: Annotated[int, Field(ge=1)] = 500


class ExperimentSpec(_M):
    name: str
    description: str = ""
    # the game played (sim.outputs.games): hex, the 4X game, unless it says crown
    game: Literal[GAME_NAMES] = "hex"  # type: ignore[valid-type]
    tables: str = "tables/default.toml"
    # seeds are stored as Int64 columns: 2**63 and above cannot be written
    root_seed: Annotated[int, Field(ge=0, lt=2**63)]
    matches: Annotated[int, Field(ge=1, le=10_000_000)]
    seats: Annotated[int, Field(ge=2, le=6)] | None = None
    length: str | None = None
    personalities: list[str] | None = None
    rotate_personalities: bool = True
    chunk_size: Annotated[int, Field(ge=1, le=100_000)] = 100
    baseline: str | None = None
    # conclusions at two levels of play (issue 43): every variant is played with every
    # seat at each of these skills, on the same seeds (`expand`: NAME.skill-K); the
    # report tests each change's interaction with skill (sim.analysis.robustness)
    skills: Annotated[list[int], Field(min_length=2, max_length=2)] | None = None
    variants: list[VariantSpec] = []
    grids: list[GridSpec] = []
    # a precision-targeted sweep (issue 13): `matches` is then the first look, and the
    # sweep grows by `block` matches per look until the target is met or max_matches
    precision: Annotated[float, Field(gt=0.0, lt=0.5)] | None = None
    detect: Annotated[float, Field(gt=0.0, lt=1.0)] | None = None
    confidence: Annotated[float, Field(gt=0.5, lt=1.0)] = 0.95
    power: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.8
    max_matches: Annotated[int, Field(ge=1, le=10_000_000)] | None = None
    block: Annotated[int, Field(ge=1, le=10_000_000)] | None = None
    # how the run is read (sim.outputs.settings): the gate's margins, the anomaly flags
    gate: GateSettings = GateSettings()
    anomalies: AnomalySettings = AnomalySettings()
    # how much `sim sweep` plays without --yes
    limit: SweepLimit = SweepLimit()
    # the tables the sweep writes (default: all of sim.outputs.schemas.WRITTEN);
    # matches and errors always, since they count the run
    tables_out: list[Literal[WRITTEN]] | None = None  # type: ignore[valid-type]
    # (a game other than hex writes every one of its own tables: sim.outputs.games)

    @field_validator("tables_out")
    @classmethod
    def _counted(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and not {"matches", "errors"} <= set(value):
            raise ValueError("must list matches and errors: they count the run's matches "
                             "(drop the key to write every table)")
        return value

    @property
    def written(self) -> tuple[str, ...]:
        """The tables the sweep writes, in the game's order (the hex game's:
        sim.outputs.schemas.WRITTEN)."""
        return tuple(t for t in game_of(self.game).written
                     if self.tables_out is None or t in self.tables_out)

    @property
    def sequential(self) -> bool:
        return self.precision is not None or self.detect is not None


class ExperimentError(Exception):
    """A malformed experiment: one message naming file, line and key."""


@dataclass(frozen=True)
class Variant:
    """One resolved variant: a stable ID, its overrides and its tables hash."""

    id: str
    overrides: dict[str, Any]
    tables_hash: str
    # the tables as provenance.json keeps them (the game's tables' `.stored`)
    resolved: dict[str, Any] = field(repr=False, compare=False, hash=False,
                                     default_factory=dict)
    # the validated tables themselves, resolved once here and shipped to every worker,
    # so an edit to the tables file during a sweep cannot reach its chunks
    tables: Tables | None = field(repr=False, compare=False, hash=False, default=None)
    # per-seat AI settings, normalised (sim.engine.seat_ai); () when every seat plays
    # the defaults
    seat_ai: tuple[dict[str, Any], ...] = ()
    # a game with sides (Crown): (side A's skill, side B's)
    side_skill: tuple[int, int] = (0, 0)


@dataclass(frozen=True)
class ChunkSpec:
    """Matches [start, stop) of one variant: the unit of parallel work and of resume."""

    variant: str
    chunk: int
    start: int
    stop: int


@dataclass(frozen=True)
class Experiment:
    path: str
    spec: ExperimentSpec
    tables_path: str
    variants: tuple[Variant, ...]
    text_hash: str

    @property
    def seats(self) -> int:
        return self.spec.seats or self.base_seats

    base_seats: int = 4
    # the tables' match.personalities: what rotates when the file names none (D1: every
    # seat then plays every personality equally often)
    base_personalities: tuple[str, ...] = ()

    @property
    def personalities(self) -> tuple[str, ...]:
        return tuple(self.spec.personalities or self.base_personalities)

    def chunks(self, chunk_size: int | None = None) -> list[ChunkSpec]:
        size = chunk_size or self.spec.chunk_size
        return [ChunkSpec(v.id, k, start, min(start + size, self.spec.matches))
                for v in self.variants
                for k, start in enumerate(range(0, self.spec.matches, size))]

    def prefix(self, matches: int) -> Experiment:
        """The same experiment over matches [0, matches): one look of a sequential sweep
        (same text hash, so it runs in, and resumes, the same folder)."""
        return dataclasses.replace(self, spec=self.spec.model_copy(update={"matches": matches}))

    def looks(self) -> list[int]:
        """The prefix lengths at which a sequential sweep looks: matches, then every
        block more, the last one max_matches."""
        spec = self.spec
        if not spec.sequential:
            return [spec.matches]
        step, cap = spec.block or spec.matches, spec.max_matches or spec.matches
        return [*range(spec.matches, cap, step), cap]

    def variant(self, variant_id: str) -> Variant:
        return next(v for v in self.variants if v.id == variant_id)

    @property
    def baseline(self) -> str:
        return self.spec.baseline or self.variants[0].id


def _slug(value: Any) -> str:
    return re.sub(r"[^A-Za-z0-9_.\-]", "", str(value).replace("/", "-")) or "x"


def grid_variants(grid: GridSpec) -> list[VariantSpec]:
    """One variant per combination of the axes, in axis order; named grid.key-value."""
    keys = list(grid.axes)
    out = []
    for values in itertools.product(*(grid.axes[k] for k in keys)):
        label = "_".join(f"{k.split('.')[-1]}-{_slug(v)}" for k, v in zip(keys, values,
                                                                             strict=True))
        out.append(VariantSpec(name=f"{grid.name}.{label}",
                               set={**grid.set, **dict(zip(keys, values, strict=True))},
                               seat_ai=grid.seat_ai))
    return out


def skill_name(variant: str, skill: int) -> str:
    """The name of a variant played at `skill` by an experiment's `skills`."""
    return f"{variant}.skill-{skill}"


def _at_skills(spec: ExperimentSpec, specs: list[tuple[tuple, VariantSpec]], base_seats: int,
               fail) -> list[tuple[tuple, VariantSpec]]:
    """Each variant once per skill of `spec.skills`, every seat at that skill (a seat's
    forbid kept), named skill_name(...); fail(loc, reason) on a variant that sets a skill
    itself or skills that are not two distinct levels."""
    skills = spec.skills or []
    if len(set(skills)) != len(skills) or any(k not in SKILLS for k in skills):
        fail(("skills",), f"{skills}: two distinct skills of {', '.join(map(str, SKILLS))}")
    seats = spec.seats or base_seats
    out = []
    for loc, v in specs:
        if any("skill" in entry for entry in v.seat_ai):
            fail((*loc, "seat_ai"), f"variant {v.name}: sets a skill, but `skills` plays "
                 "every variant at each of its skills")
        for k in skills:
            given = list(v.seat_ai) + [{}] * (seats - len(v.seat_ai))
            out.append((loc, v.model_copy(update={
                "name": skill_name(v.name, k),
                "seat_ai": [{**entry, "skill": k} for entry in given]})))
    return out


def sequential_problems(spec: ExperimentSpec, variants: int, fail) -> None:
    """Refuse a sequential sweep that cannot stop on whole chunks, or keys that only a
    sequential sweep reads (fail(loc, reason) raises)."""
    if not spec.sequential:
        for key in ("max_matches", "block"):
            if getattr(spec, key) is not None:
                fail((key,), "only a precision-targeted sweep reads it: add precision = … "
                     "or detect = …")
        return
    if spec.max_matches is None:
        fail(("max_matches",), "a precision-targeted sweep needs max_matches (the most "
             "matches per variant it may run)")
    if spec.max_matches < spec.matches:
        fail(("max_matches",), f"{spec.max_matches} is below matches = {spec.matches} "
             "(the first look)")
    for key in ("matches", "block"):
        value = getattr(spec, key)
        if value is not None and value % spec.chunk_size:
            fail((key,), f"{value} is not a multiple of chunk_size = {spec.chunk_size}: "
                 "every look must end on a whole chunk")
    if spec.detect is not None and variants < 2:
        fail(("detect",), "needs a variant besides the baseline to compare with it")


def parse_experiment(path: str | Path) -> tuple[ExperimentSpec, str, dict[tuple, int]]:
    """Parse and validate an experiment file without expanding it: (spec, text, key
    lines); ExperimentError naming every key at fault."""
    path = Path(path)
    text, raw = read_toml(path, ExperimentError)
    lines = key_lines(text)
    try:
        spec = ExperimentSpec.model_validate(raw)
    except ValidationError as exc:  # a line per key at fault, as `sim tables check`
        raise ExperimentError("\n".join(validation_problems(exc.errors(), path, lines))
                              ) from None
    return spec, text, lines


def load_experiment(path: str | Path) -> Experiment:
    """Parse, validate and expand an experiment file."""
    spec, text, lines = parse_experiment(path)
    return expand(spec, Path(path), text, lines)


def planned_size(spec: ExperimentSpec) -> tuple[int, int]:
    """(variants, matches) the sweep of `spec` plays at most (a sequential sweep up to
    max_matches per variant), counted without expanding its grids: a grid of a
    million combinations is refused before a million tables are validated."""
    variants = len(spec.variants) + sum(math.prod(len(values) for values in g.axes.values())
                                        for g in spec.grids)
    variants *= len(spec.skills or [0])
    per_variant = spec.max_matches if spec.sequential and spec.max_matches else spec.matches
    return max(variants, 1), max(variants, 1) * per_variant


def match_turns(spec: ExperimentSpec, path: str | Path) -> int | None:
    """The turns of one match of `spec` (its length preset in its base tables), for an
    estimate of a sweep's time; None when its tables do not load (expand says why)."""
    try:
        return load_tables(_resolve_tables_path(spec, Path(path))).match_length(spec.length,
                                                                                spec.seats)
    except (TablesError, KeyError):
        return None


def _resolve_tables_path(spec: ExperimentSpec, path: Path) -> Path:
    # a game's own default tables unless the file names some
    game = game_of(getattr(spec, "game", None))
    candidate = Path(spec.tables if "tables" in spec.model_fields_set
                     else game.default_tables)
    if candidate.is_absolute():
        return candidate
    # absolute, so replay commands work from any directory
    beside = (path.parent / candidate).absolute()
    return beside if beside.exists() else REPO_ROOT / candidate


def _check_whole(spec: ExperimentSpec, seen: set[str], n_variants: int,
                 fail) -> ExperimentSpec:
    """What is checked of the experiment once its variants are known (`seen`: their
    names, lower case): the baseline (named at the first skill of `skills`), the
    sequential settings and the gate's margins. Returns the spec with that baseline."""
    if spec.baseline is not None and spec.skills is not None:  # the baseline at skill a
        spec = spec.model_copy(update={"baseline": skill_name(spec.baseline,
                                                              spec.skills[0])})
    if spec.baseline is not None and spec.baseline.lower() not in seen:
        fail(("baseline",), f"no variant named {spec.baseline!r}")
    sequential_problems(spec, n_variants, fail)
    for victory in spec.gate.margins:
        if victory not in VICTORY_NAMES:
            fail(("gate", "margins", victory), f"unknown victory type {victory!r}; one of "
                 f"{', '.join(VICTORY_NAMES)}")
    return spec


def expand(spec: ExperimentSpec, path: Path, text: str = "",
           lines: dict[tuple, int] | None = None) -> Experiment:
    """The variants of an experiment with IDs and hashes (pure: no matches run)."""
    lines = lines or {}

    def fail(loc: tuple, reason: str) -> None:
        line = line_of(lines, loc)
        where = f"{path}:{line}" if line else str(path)
        raise ExperimentError(f"{where}: {key_text(loc)}: {reason}")

    if (why := run_name_problem(spec.name, "experiment")) is not None:
        fail(("name",), why)
    tables_path = _resolve_tables_path(spec, path)
    if (game := game_of(spec.game)).sides:  # a game of sides, not of seats
        return _expand_sided(game, spec, path, text, tables_path, fail)
    try:
        base = load_tables(tables_path)
    except TablesError as exc:
        fail(("tables",), exc.errors[0])
    for loc, reason in setup_problems(base.model, spec.length, spec.personalities)[:1]:
        fail(loc, reason)
    specs: list[tuple[tuple, VariantSpec]] = [(("variants", i), v)
                                              for i, v in enumerate(spec.variants)]
    for g, grid in enumerate(spec.grids):
        specs += [(("grids", g), v) for v in grid_variants(grid)]

    def set_loc(loc: tuple, v: VariantSpec, message: str) -> tuple:
        """Where in the file the override `message` names was written: the variant's
        `set`, or a grid's `axes` or `set`, at that key."""
        key = next((k for k in v.set if f": {k}: " in f": {message}"), None)
        if key is None:
            return (*loc, "set")
        if loc[0] == "grids" and key in spec.grids[loc[1]].axes:
            return (*loc, "axes", key)
        return (*loc, "set", key)
    if not specs:
        specs = [(("variants",), VariantSpec(name="baseline"))]
    if spec.skills is not None:
        specs = _at_skills(spec, specs, base.model.match.seats, fail)
    variants: list[Variant] = []
    seen: set[str] = set()
    for loc, v in specs:
        if (why := name_problem(v.name, "variant")) is not None:
            fail((*loc, "name"), why)
        if v.name.lower() in seen:  # one folder on a case-insensitive file system
            fail((*loc, "name"), f"two variants are named {v.name!r} (letter case aside)")
        seen.add(v.name.lower())
        try:
            tables = base.with_overrides(v.set, source=f"{path}: variant {v.name}",
                                         check_board=False) \
                if v.set else base
        except TablesError as exc:
            fail(set_loc(loc, v, exc.errors[0]), exc.errors[0].split(": ", 1)[-1])
        seats = spec.seats or tables.model.match.seats
        for where, reason in board_problems(tables.model, seats,
                                            spec.length or tables.model.match.length):
            # D1: refuse before any match runs, not one error row per match
            fail((*loc, "set") if v.set else ("seats",),
                 f"variant {v.name}: {'.'.join(where)}: {reason}")
        seat_ai: tuple[dict[str, Any], ...] = ()
        if v.seat_ai:
            try:
                normal = check_seat_ai(tables, v.seat_ai, seats)
            except SeatAIError as exc:
                fail((*loc, "seat_ai"), f"variant {v.name}: {exc}")
            seat_ai = () if is_default(normal) else tuple(normal)
        variants.append(Variant(v.name, dict(v.set), tables.hash, tables.stored, tables,
                                seat_ai))
    spec = _check_whole(spec, seen, len(variants), fail)
    return Experiment(str(path), spec, str(tables_path), tuple(variants),
                      hashlib.sha256(text.encode()).hexdigest()[:16],
                      base_seats=base.model.match.seats,
                      base_personalities=tuple(base.model.match.personalities))


def _sides_at_skills(game: Game, spec: ExperimentSpec, specs: list[tuple[tuple, VariantSpec]],
                     fail) -> list[tuple[tuple, VariantSpec]]:
    """A two-sided game's `skills` (issue 48: Crown's two-skill report): each variant
    once per skill, every player of both sides at it (side_skill [k, k]), named
    skill_name(...), on the same seeds; fail(loc, reason) on a variant that sets its
    side skills itself, or skills that are not two distinct AI levels of the game
    (random play is no level: sim.analysis.robustness)."""
    skills = spec.skills or []
    levels = [k for k in game.ai_levels if k >= 0]
    if len(set(skills)) != len(skills) or any(k not in levels for k in skills):
        fail(("skills",), f"{skills}: two distinct skills of {', '.join(map(str, levels))}")
    out = []
    for loc, v in specs:
        if "side_skill" in v.model_fields_set:
            fail((*loc, "side_skill"), f"variant {v.name}: sets its side skills, but "
                 "`skills` plays every variant at each of its skills")
        out += [(loc, v.model_copy(update={"name": skill_name(v.name, k),
                                           "side_skill": [k, k]})) for k in skills]
    return out


# keys only the hex game reads: a Crown experiment that sets one is refused, not ignored
HEX_ONLY = ("seats", "length", "personalities")


def _expand_sided(game: Game, spec: ExperimentSpec, path: Path, text: str,
                  tables_path: Path, fail) -> Experiment:
    """The variants of an experiment of a two-sided game (Crown): its tables loaded and
    each variant's `set` validated by the game's rules (sim.rules.crown), an error
    naming this file's line of the key; side skills checked against the game's AI
    levels. Grids expand as for the hex game."""
    for key in HEX_ONLY:
        if getattr(spec, key) is not None:
            fail((key,), f"the {game.name} game does not read it (the hex game's)")
    for key in ("precision", "detect"):  # the sequential looks read victory types
        if getattr(spec, key) is not None:
            fail((key,), f"a precision-targeted sweep of the {game.name} game is not "
                 "supported yet: give a fixed number of matches")
    try:
        base = game.load(tables_path, {})
    except TablesError as exc:
        fail(("tables",), exc.errors[0])
    specs: list[tuple[tuple, VariantSpec]] = [(("variants", i), v)
                                              for i, v in enumerate(spec.variants)]
    for g, grid in enumerate(spec.grids):
        specs += [(("grids", g), v) for v in grid_variants(grid)]
    if not specs:
        specs = [(("variants",), VariantSpec(name="baseline"))]
    if spec.skills is not None:
        specs = _sides_at_skills(game, spec, specs, fail)
    variants: list[Variant] = []
    seen: set[str] = set()
    for loc, v in specs:
        if (why := name_problem(v.name, "variant")) is not None:
            fail((*loc, "name"), why)
        if v.name.lower() in seen:
            fail((*loc, "name"), f"two variants are named {v.name!r} (letter case aside)")
        seen.add(v.name.lower())
        if v.seat_ai:
            fail((*loc, "seat_ai"), f"the {game.name} game has sides: use side_skill")
        skills = tuple(v.side_skill) or (0, 0)
        if len(skills) != 2 or any(s not in game.ai_levels for s in skills):
            fail((*loc, "side_skill"), f"two AI skills, side A's and side B's, each one of "
                 f"{', '.join(map(str, game.ai_levels))}; got {list(v.side_skill)}")
        tables = base
        for key, value in v.set.items():  # one at a time: the error names its own line
            try:
                tables = tables.with_overrides({key: value})
            except TablesError as exc:
                where = (*loc, "axes", key) if loc[0] == "grids" and \
                    key in spec.grids[loc[1]].axes else (*loc, "set", key)
                fail(where, f"variant {v.name}: " + exc.errors[0].split(": ", 1)[-1])
        variants.append(Variant(v.name, dict(v.set), tables.hash, tables.stored, tables,
                                side_skill=(int(skills[0]), int(skills[1]))))
    if spec.baseline is not None and spec.skills is not None:  # the baseline at skill a
        spec = spec.model_copy(update={"baseline": skill_name(spec.baseline,
                                                              spec.skills[0])})
    if spec.baseline is not None and spec.baseline.lower() not in seen:
        fail(("baseline",), f"no variant named {spec.baseline!r}")
    sequential_problems(spec, len(variants), fail)
    return Experiment(str(path), spec, str(tables_path), tuple(variants),
                      hashlib.sha256(text.encode()).hexdigest()[:16],
                      base_seats=sum(base.model.match.team_sizes))

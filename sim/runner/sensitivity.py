"""Sensitivity files: which table values matter, as one paired sweep (issue 13).

A sensitivity file (`experiments/sensitivity/*.toml`) names the parameters
(dotted keys, globs such as `units.*.attack`, or `all` for every numeric table
value), the relative step (default 0.2: ±20 %) and the match settings of an
experiment. `design` turns it into one low and one high value per parameter:
integers are rounded and moved by at least 1, every value is validated with the
tables (a side whose value the tables refuse stays at the base value; a
parameter with both sides refused is skipped with the reason). `write_experiment`
writes the equivalent experiment file (a `baseline` variant and `<key>-lo` /
`<key>-hi` variants) into the sensitivity folder and the sweep runs in its
`sweep/` subfolder as an ordinary one:
resumable, Dask-capable, the same Parquet layout and provenance, and every
variant plays match i on the same streams (common random numbers). The design
itself goes to `sensitivity.json` beside it, which is what the analysis reads.

A side plays only when its match differs from every earlier one's: `play_key` is
everything a match reads from the tables (the compiled record at the sweep's seat
count and length, the number of turns, the seats' personalities). A side whose key
equals the baseline's (a value these matches never read, such as another length's
cost scale) plays as the baseline, and a side equal to an earlier parameter's (the
dominance counter and the game speed's dominance scale, both 8 ± 2 after rounding)
plays as that one: the design's `plays` maps such variant names to the variant
that ran, and a parameter whose two sides both equal an earlier one's names it in
`same_as`, one lever under two keys. The matches are the same ones either way
(tests/test_sensitivity.py plays both); on `all`, 37 of the 705 moved variants
play as another.

`morris_top = K` (default 0: off), `morris_trajectories` (8) and `morris_levels`
(4, even) ask for the Morris screen of interactions among the K strongest
parameters after this sweep, balance values first
(sim.analysis.sensitivity.top_parameters): sim.runner.morris.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sim.outputs.folders import SENSITIVITY_DESIGN_FILE, SWEEP_DIR
from sim.outputs.games import HEX, game_of
from sim.outputs.storage import absolute, is_remote, local_copy
from sim.rules.tables import (
    REPO_ROOT,
    Tables,
    TablesError,
    board_problems,
    setup_problems,
)
from sim.rules.tomlpos import key_lines, line_of, read_toml, validation_problems
from sim.runner.experiments import Experiment, load_experiment, run_name_problem

EXPERIMENT_FILE = "sensitivity-experiment.toml"
BASELINE = "baseline"


class SensitivitySpec(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    name: str
    description: str = ""
    # the game (sim.outputs.games; None: the hex game) and its tables (None: its default)
    game: str | None = None
    tables: str | None = None
    root_seed: Annotated[int, Field(ge=0, lt=2**63)]
    matches: Annotated[int, Field(ge=2, le=10_000_000)]
    seats: Annotated[int, Field(ge=2, le=6)] | None = None
    length: str | None = None
    personalities: list[str] | None = None
    # a game with sides (Crown): each side's AI skill, the same in every variant
    side_skill: list[int] | None = None
    chunk_size: Annotated[int, Field(ge=1, le=100_000)] = 100
    parameters: Annotated[list[str], Field(min_length=1)]
    exclude: list[str] = []
    # overrides of the tables every point plays with (a sensitivity around a variant, or a
    # planted inert value): the parameters move from these values
    base_set: dict[str, Any] = Field(default={}, alias="set")
    step: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.2
    # the Morris screen of interactions among the strongest parameters (sim.runner.morris):
    # off by default, since it plays trajectories x (top + 1) more variants
    morris_top: Annotated[int, Field(ge=0, le=50)] = 0
    morris_trajectories: Annotated[int, Field(ge=2, le=1000)] = 8
    morris_levels: Annotated[int, Field(ge=2, le=100)] = 4

    @field_validator("morris_top")
    @classmethod
    def _two_or_none(cls, value: int) -> int:
        if value == 1:
            raise ValueError("0 (no Morris screen) or at least 2: one parameter cannot "
                             "interact")
        return value

    @field_validator("morris_levels")
    @classmethod
    def _even(cls, value: int) -> int:
        if value % 2:
            raise ValueError("must be even (the Morris grid steps by half the levels)")
        return value


class SensitivityError(Exception):
    """A malformed sensitivity file: one message naming file, line and key."""


@dataclass(frozen=True)
class Parameter:
    """One table value and the two values it is moved to (low <= base <= high)."""

    key: str
    base: float
    low: float
    high: float
    low_variant: str
    high_variant: str
    # the earlier parameter whose two sides play the same matches as this one's
    same_as: str | None = None
    # "setup" (a key of SETUP_KEYS) or "balance"
    group: str = "balance"


@dataclass(frozen=True)
class Design:
    spec: SensitivitySpec
    tables_path: str
    parameters: tuple[Parameter, ...]
    skipped: tuple[tuple[str, str], ...]   # (key, why)
    # variant name -> the variant whose matches it plays (only those not played)
    plays: dict[str, str] = field(default_factory=dict)
    # (key, why) of parameters moved on one side only: the other side's value was
    # refused, so that side plays the base value
    one_sided: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        game = game_of(self.spec.game)
        return {"name": self.spec.name, "step": self.spec.step, "baseline": BASELINE,
                "tables": self.tables_path,
                "parameters": [asdict(p) for p in self.parameters],
                "skipped": [{"key": k, "why": w} for k, w in self.skipped],
                "plays": dict(self.plays), "setup_keys": list(game.setup_keys),
                **({"game": game.name} if self.spec.game is not None else {})}


# Keys that set the match up rather than balance one piece of content: its length, the
# board's size, and the game-speed and seat-count scales (RULES.md D6), each of which
# moves many values at once (a cost scale is every cost). Their effects are ranked
# apart from the balance values' (`group`): "a longer match gives more science wins"
# is worth knowing, but it must not push the single values a designer tunes out of the
# tornado they read.
SETUP_KEYS = HEX.setup_keys   # ("match.*", "map.radius"), written once in sim.outputs.games


def group_of(key: str, setup_keys: tuple[str, ...] = SETUP_KEYS) -> str:
    """"setup" for a key of `setup_keys` (the game's: Game.setup_keys; SETUP_KEYS is
    the hex game's), "balance" for any other table value."""
    return "setup" if any(fnmatch.fnmatchcase(key, p) for p in setup_keys) else "balance"


def numeric_values(data: dict[str, Any], prefix: str = "") -> dict[str, float]:
    """Every numeric leaf of resolved tables (`Tables.data`) by dotted key; booleans,
    strings and lists are not parameters."""
    out: dict[str, float] = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(numeric_values(value, dotted + "."))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out[dotted] = value
    return out


def select(values: dict[str, float], patterns: list[str], exclude: list[str]) -> list[str]:
    """Keys matching any pattern (`all`, an exact key or an fnmatch glob), in table
    order, minus those matching an `exclude` pattern. A pattern (of either list) that
    matches no table value is an error: a typo must not silently shrink the design,
    nor silently leave in what it meant to leave out."""
    chosen: list[str] = []
    for pattern in patterns:
        hits = list(values) if pattern == "all" else \
            [k for k in values if k == pattern or fnmatch.fnmatchcase(k, pattern)]
        if not hits:
            raise SensitivityError(f"parameters: {pattern!r} matches no numeric table value")
        chosen += [k for k in hits if k not in chosen]
    for pattern in exclude:
        if not any(fnmatch.fnmatchcase(k, pattern) for k in values):
            raise SensitivityError(f"exclude: {pattern!r} matches no numeric table value")
    return [k for k in chosen if not any(fnmatch.fnmatchcase(k, x) for x in exclude)]


def moved(base: float, step: float, up: bool) -> float:
    """`base` moved by the relative step; integers rounded and moved by at least 1
    (a 20 % step of 3 is 1, not 0); a base of 0 moves by 1 (an integer) or `step`."""
    if isinstance(base, int):
        delta = max(1, round(abs(base) * step))
        return base + delta if up else base - delta
    delta = abs(base) * step if base != 0 else step
    return base + delta if up else base - delta


def play_key(tables: Tables, seats: int | None, length: str | None,
             personalities: list[str] | None) -> str:
    """A digest of everything a match of `tables` reads from them at the sweep's seat
    count and length (None: the tables' own): the compiled record kernels receive
    (sim.rules.record), the number of turns, the seats' personalities and the item
    name lists the outcome rows use (sim.engine.match.prepare reads nothing else).
    Equal digests play equal matches from the same streams."""
    n_seats = seats or tables.model.match.seats
    preset = length or tables.model.match.length
    digest = hashlib.sha256(tables.arrays(preset, n_seats).tobytes())
    digest.update(json.dumps([n_seats, tables.match_length(preset, n_seats),
                              personalities or tables.model.match.personalities,
                              tables.personality_names, tables.unit_names,
                              tables.building_names, tables.tech_names]).encode())
    return digest.hexdigest()


def overrides_at(base: Tables, overrides: dict[str, Any], seats: int | None,
                 length: str | None) -> tuple[Tables | None, str | None]:
    """(the tables `base` with `overrides`, None) or (None, why the tables refuse them),
    the board checked at the seats and length the matches are played with (None: the
    tables' own), not the tables' default match: a 2-seat sensitivity or tune may
    shrink a board a 4-seat match needs, and a 6-seat one may need more land."""
    try:
        tables = base.with_overrides(overrides, check_board=False)
    except TablesError as exc:
        return None, exc.errors[0].split(": ", 1)[-1] if exc.errors else str(exc)
    problems = board_problems(tables.model, seats or tables.model.match.seats,
                              length or tables.model.match.length)
    if problems:
        where, reason = problems[0]
        return None, f"{'.'.join(where)}: {reason}"
    return tables, None


def spec_problems(spec: Any, tables: Tables) -> list[tuple[tuple, str]]:
    """The hex game's check of a sensitivity or tune file's match settings against
    its tables (the length preset and personalities exist; sim.rules.tables); a
    file's `side_skill` is for a game with sides."""
    if spec.side_skill is not None:
        return [(("side_skill",), "the hex game has seats, not sides: use an experiment's "
                 "seat_ai")]
    return setup_problems(tables.model, spec.length, spec.personalities)


def design(spec: SensitivitySpec, tables_path: Path, tables: Tables) -> Design:
    """The low and high value of every selected parameter (pure: `tables`, with the
    file's `set` applied, validates each candidate value), and which sides play matches
    of their own (`play_key`; the module's docstring). The game's hooks
    (Game.study_runner: this module for the hex game) check a value and key a match."""
    game = game_of(spec.game)
    hooks = game.hooks("runner")
    overrides_at = hooks.overrides_at
    values = numeric_values(tables.data)

    def key_of(t: Tables) -> str:
        return hooks.play_key(t, spec.seats, spec.length, spec.personalities)

    played = {key_of(tables): BASELINE}       # play key -> the variant that plays it
    params, skipped, plays, one_sided = [], [], {}, []
    pairs: dict[tuple[str, str], str] = {}     # (low, high) played variants -> first key
    for key in select(values, spec.parameters, spec.exclude):
        base = values[key]
        sides, names = {}, {}
        reasons = []
        for up in (False, True):
            value = moved(base, spec.step, up)
            moved_tables, why = overrides_at(tables, {key: value}, spec.seats, spec.length)
            if why is None:
                sides[up] = value
                names[up] = f"{key}-{'hi' if up else 'lo'}"
                runs_as = played.setdefault(key_of(moved_tables), names[up])
                if runs_as != names[up]:
                    plays[names[up]] = runs_as
            else:
                sides[up], names[up] = base, BASELINE
                reasons.append(f"{value!r}: {why}")
        if sides[False] == sides[True]:
            skipped.append((key, "; ".join(reasons)))
            continue
        if reasons:
            one_sided.append((key, "; ".join(reasons)))
        pair = (plays.get(names[False], names[False]), plays.get(names[True], names[True]))
        same_as = pairs.setdefault(pair, key)
        params.append(Parameter(key, base, sides[False], sides[True], names[False],
                                names[True], None if same_as == key else same_as,
                                group_of(key, game.setup_keys)))
    return Design(spec, str(tables_path), tuple(params), tuple(skipped), plays,
                  tuple(one_sided))


def _toml_value(value: Any) -> str:
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else "nan"
    return json.dumps(value)


def _inline_table(overrides: dict[str, Any]) -> str:
    return "{ " + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}"
                            for k, v in overrides.items()) + " }"


def experiment_text(d: Design) -> str:
    """The experiment file of the design's sweep (sim.runner.experiments format)."""
    s = d.spec
    lines = [f"# written by `sim sensitivity` from the sensitivity file {s.name!r}: do not edit",
             f"name = {json.dumps(s.name)}",
             *([f"game = {json.dumps(s.game)}"] if s.game is not None else []),
             f"description = {json.dumps(s.description or 'sensitivity of ' + s.name)}",
             f"tables = {json.dumps(d.tables_path)}",
             f"root_seed = {s.root_seed}", f"matches = {s.matches}",
             f"chunk_size = {s.chunk_size}", f"baseline = {json.dumps(BASELINE)}"]
    if s.seats is not None:
        lines.append(f"seats = {s.seats}")
    if s.length is not None:
        lines.append(f"length = {json.dumps(s.length)}")
    if s.personalities is not None:
        lines.append(f"personalities = {json.dumps(s.personalities)}")
    skills = [] if s.side_skill is None else [f"side_skill = {json.dumps(s.side_skill)}"]
    lines += ["", "[[variants]]", f"name = {json.dumps(BASELINE)}", *skills]
    if s.base_set:
        lines.append(f"set = {_inline_table(s.base_set)}")
    for p in d.parameters:
        for variant, value in ((p.low_variant, p.low), (p.high_variant, p.high)):
            if variant == BASELINE or variant in d.plays:
                continue
            lines += ["", "[[variants]]", f"name = {json.dumps(variant)}", *skills,
                      f"set = {_inline_table({**s.base_set, p.key: value})}"]
    return "\n".join(lines) + "\n"


def folder_conflict(d: Design, out: Path) -> str | None:
    """Why `out` must not take this design's files: it holds the sweep of another
    sensitivity (another file, parameters, step, seeds or tables), whose design the
    files would overwrite while the sweep refuses the folder. None when it may."""
    old = out / EXPERIMENT_FILE
    if not (out / SWEEP_DIR / "provenance.json").exists() or not old.exists():
        return None
    if old.read_text(encoding="utf-8") == experiment_text(d) and \
            (out / SENSITIVITY_DESIGN_FILE).exists():
        return None
    return (f"{out}: holds a sensitivity run of another design (file, parameters, step, "
            "seeds or tables); --replace-stale starts afresh (or choose another --out)")


def write_experiment(d: Design, out: Path) -> Path:
    """Write the experiment file and sensitivity.json into `out`; returns the former
    (its local copy for a folder at a URL: experiment_file). The same design writes the
    same bytes, so a rerun resumes the sweep."""
    out.mkdir(parents=True, exist_ok=True)
    (out / SENSITIVITY_DESIGN_FILE).write_text(json.dumps(d.to_json(), indent=1) + "\n",
                                               encoding="utf-8")
    return experiment_file(out, EXPERIMENT_FILE, experiment_text(d))


def experiment_file(out: Path, name: str, text: str) -> Path:
    """Write the experiment file `name` with `text` into the folder `out` and return the
    path to load it from: that file, or for a folder at a URL (sim.outputs.storage) its
    local_copy, since an experiment is read and recorded (provenance) from a file here.
    A sweep resumes by the experiment's text (its fingerprint), never its path, so a
    resume on another machine finds the same experiment."""
    path = out / name
    path.write_text(text, encoding="utf-8")
    if not is_remote(out):
        return path
    local = local_copy(path)
    local.parent.mkdir(parents=True, exist_ok=True)
    local.write_text(text, encoding="utf-8")
    return local


def load_sensitivity(path: str | Path) -> Design:
    """Parse and validate a sensitivity file and design its parameters."""
    path = Path(path)
    text, raw = read_toml(path, SensitivityError)
    try:
        spec = SensitivitySpec.model_validate(raw)
    except ValidationError as exc:  # a line per key at fault
        raise SensitivityError("\n".join(validation_problems(exc.errors(), path,
                                                              key_lines(text)))) from None
    try:
        game = game_of(spec.game)
    except KeyError as exc:
        line = line_of(key_lines(text), ("game",))
        raise SensitivityError(f"{path}:{line}: game: {exc.args[0]}") from None
    if game.study_runner != __name__ and spec.morris_top:
        raise SensitivityError(f"{path}: morris_top: the Morris screen reads the hex game's "
                               f"outcomes; give 0 for a {game.name} sensitivity")
    candidate = Path(spec.tables or game.default_tables)
    if not candidate.is_absolute():
        beside = (path.parent / candidate).absolute()
        candidate = beside if beside.exists() else REPO_ROOT / candidate
    try:
        tables = game.load(candidate, {})
    except TablesError as exc:
        raise SensitivityError(f"{path}: tables: {exc.errors[0]}") from None
    for loc, reason in game.hooks("runner").spec_problems(spec, tables)[:1]:
        line = line_of(key_lines(text), loc)
        raise SensitivityError(f"{path}:{line}: {'.'.join(map(str, loc))}: {reason}"
                               if line else f"{path}: {'.'.join(map(str, loc))}: {reason}")
    if spec.base_set:
        with_set, why = game.hooks("runner").overrides_at(tables, spec.base_set, spec.seats,
                                                          spec.length)
        if with_set is None:
            raise SensitivityError(f"{path}: set: {why}")
        tables = with_set
    try:
        return design(spec, candidate, tables)
    except SensitivityError as exc:
        raise SensitivityError(f"{path}: {exc}") from None


def open_sensitivity(path: str | Path, out: Path | None, replace_stale: bool,
                     say: Callable[[str], None]) -> tuple[Design, Path, Experiment]:
    """What `sim sensitivity` plays: the design of the file at `path`, its folder (`out`,
    default runs/<name>, absolute; a path or a URL) and the experiment of its sweep,
    written into the folder. Raises SensitivityError when no parameter can move, the
    name cannot name a folder or, unless replace_stale, the folder holds another
    design's run, and ExperimentError when the written experiment does not load. Says
    (`say`) which parameters move only one way first."""
    design = load_sensitivity(path)
    if not design.parameters:
        why = "; ".join(f"{k}: {why}" for k, why in design.skipped) or \
            "the exclude patterns leave none"
        raise SensitivityError(f"{path}: no parameter can move: {why}")
    if (why := run_name_problem(design.spec.name, "sensitivity")) is not None:
        raise SensitivityError(f"{path}: name: {why}")
    for key, why in design.one_sided:
        say(f"note: {key}: one side stays at the base value, the other was refused ({why})")
    folder = absolute(out or REPO_ROOT / "runs" / design.spec.name)  # a path or a URL
    if not replace_stale and (why := folder_conflict(design, folder)) is not None:
        raise SensitivityError(why)
    return design, folder, load_experiment(write_experiment(design, folder))

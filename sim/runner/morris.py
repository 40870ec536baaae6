"""The Morris screen of a sensitivity file: interactions among its strongest parameters.

After the one-at-a-time sweep (sim.runner.sensitivity) the `morris_top` strongest
parameters (chosen by sim.analysis.sensitivity.top_parameters) get a Morris
elementary-effects design: SALib's `sample.morris.sample` draws
`morris_trajectories` trajectories of K + 1 points on a `morris_levels` grid over
each parameter's one-at-a-time range [low, high]; consecutive points of a
trajectory differ in one parameter. The generator is seeded from the file's root
seed (`SeedSequence(root_seed, spawn_key=(MORRIS_STREAM,))`; the match streams'
keys have two words, so it is no match's stream), so the same file and the same
chosen parameters give the same design.

Every distinct point is one variant of a second ordinary sweep (in `morris/`,
its experiment file `morris-experiment.toml` and the design `morris.json` beside
it), on the same root seed and match indices as the first: common random
numbers across both sweeps. Integer parameters are rounded to the nearest
integer (so two grid levels may play the same value; points that play the same
tables are one variant); every point is validated with the tables.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from SALib.sample import morris as morris_sample

from sim.outputs.folders import MORRIS_DESIGN_FILE
from sim.rules.tables import Tables, load_tables
from sim.runner.experiments import Experiment, load_experiment
from sim.runner.sensitivity import (
    Design,
    Parameter,
    SensitivityError,
    _toml_value,
    experiment_file,
    overrides_at,
)

MORRIS_EXPERIMENT_FILE = "morris-experiment.toml"
MORRIS_STREAM = 0x4D4F52               # "MOR": the design's spawn key, one word
VARIANT_PREFIX = "morris-"


@dataclass(frozen=True)
class MorrisDesign:
    """A Morris design over K parameters, R trajectories, on a `levels` grid.

    parameters: the K parameters in design column order (their one-at-a-time
    low, high are the bounds). x: SALib's sample, R * (K + 1) rows of K floats
    in [low, high], trajectory r being rows r*(K+1) .. r*(K+1)+K; what the
    analysis hands back to SALib. values: the same rows as played (integer
    parameters rounded). rows: the variant that plays each row (rows with equal
    values share one). seed: the 64-bit seed SALib's generator was built from.
    """

    design: Design
    parameters: tuple[Parameter, ...]
    trajectories: int
    levels: int
    seed: int
    x: tuple[tuple[float, ...], ...]
    values: tuple[tuple[float, ...], ...]
    rows: tuple[str, ...]

    @property
    def variants(self) -> dict[str, dict[str, float]]:
        """Variant name -> its overrides, in order of first appearance."""
        out: dict[str, dict[str, float]] = {}
        for name, row in zip(self.rows, self.values, strict=True):
            out.setdefault(name, {p.key: v for p, v in zip(self.parameters, row, strict=True)})
        return out

    def to_json(self) -> dict[str, Any]:
        return {"name": self.design.spec.name, "trajectories": self.trajectories,
                "levels": self.levels, "seed": self.seed,
                "parameters": [{"key": p.key, "base": p.base, "low": p.low, "high": p.high}
                               for p in self.parameters],
                "x": [list(r) for r in self.x], "values": [list(r) for r in self.values],
                "rows": list(self.rows)}


def design_seed(root_seed: int) -> int:
    """The seed of the design's generator: its own stream of the root seed."""
    seq = np.random.SeedSequence(root_seed, spawn_key=(MORRIS_STREAM,))
    return int(seq.generate_state(1, dtype=np.uint64)[0])


def _played(p: Parameter, value: float) -> float:
    """A design value as the tables get it: an integer parameter rounded (and kept in
    [low, high]), a float as drawn."""
    if isinstance(p.base, int) and isinstance(p.low, int) and isinstance(p.high, int):
        return int(min(max(round(value), p.low), p.high))
    return float(value)


def morris_design(d: Design, keys: list[str], tables: Tables | None = None) -> MorrisDesign:
    """The Morris design of the parameters `keys` (at least two, each a parameter of
    `d`), with the file's morris_trajectories and morris_levels. Raises
    SensitivityError naming the first point the tables refuse."""
    by_key = {p.key: p for p in d.parameters}
    unknown = [k for k in keys if k not in by_key]
    if unknown or len(keys) < 2 or len(set(keys)) != len(keys):
        raise ValueError(f"a Morris design needs two or more distinct parameters of the "
                         f"design: {keys}")
    params = tuple(by_key[k] for k in keys)
    spec = d.spec
    seed = design_seed(spec.root_seed)
    problem = {"num_vars": len(params), "names": list(keys),
               "bounds": [[float(p.low), float(p.high)] for p in params]}
    x = morris_sample.sample(problem, spec.morris_trajectories, num_levels=spec.morris_levels,
                             seed=np.random.default_rng(seed))
    values = [tuple(_played(p, v) for p, v in zip(params, row, strict=True)) for row in x]
    names: dict[tuple[float, ...], str] = {}
    for row in values:
        names.setdefault(row, f"{VARIANT_PREFIX}{len(names):03d}")
    base = tables if tables is not None else load_tables(d.tables_path)
    for row, name in names.items():
        overrides = {p.key: v for p, v in zip(params, row, strict=True)}
        _tables, why = overrides_at(base, overrides, spec.seats, spec.length)
        if why is not None:
            raise SensitivityError(f"the Morris point {name} {overrides} is refused by the "
                                   f"tables: {why} (leave one of its parameters out)")
    return MorrisDesign(d, params, spec.morris_trajectories, spec.morris_levels, seed,
                        tuple(tuple(float(v) for v in r) for r in x), tuple(values),
                        tuple(names[r] for r in values))


def morris_experiment_text(m: MorrisDesign) -> str:
    """The experiment file of the Morris sweep (sim.runner.experiments format): the same
    tables, root seed, matches and seats as the one-at-a-time sweep; one variant per
    distinct point, the first being the experiment's baseline."""
    s = m.design.spec
    variants = m.variants
    keys = ", ".join(p.key for p in m.parameters)
    lines = [f"# written by `sim sensitivity` from the sensitivity file {s.name!r} (its "
             "Morris screen): do not edit",
             f"name = {json.dumps(s.name + '-morris')}",
             f"description = {json.dumps('Morris screen of ' + keys)}",
             f"tables = {json.dumps(m.design.tables_path)}",
             f"root_seed = {s.root_seed}", f"matches = {s.matches}",
             f"chunk_size = {s.chunk_size}", f"baseline = {json.dumps(next(iter(variants)))}"]
    if s.seats is not None:
        lines.append(f"seats = {s.seats}")
    if s.length is not None:
        lines.append(f"length = {json.dumps(s.length)}")
    if s.personalities is not None:
        lines.append(f"personalities = {json.dumps(s.personalities)}")
    for name, overrides in variants.items():
        cells = ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in overrides.items())
        lines += ["", "[[variants]]", f"name = {json.dumps(name)}", f"set = {{ {cells} }}"]
    return "\n".join(lines) + "\n"


def write_morris_experiment(m: MorrisDesign, out: Path) -> Path:
    """Write morris-experiment.toml and morris.json into the sensitivity folder `out`;
    returns the former (experiment_file). The same design writes the same bytes, so a
    rerun resumes."""
    out.mkdir(parents=True, exist_ok=True)
    (out / MORRIS_DESIGN_FILE).write_text(json.dumps(m.to_json(), indent=1) + "\n",
                                          encoding="utf-8")
    # for a folder at a URL, its local copy (the experiment is loaded from a file here)
    return experiment_file(out, MORRIS_EXPERIMENT_FILE, morris_experiment_text(m))


def open_morris(d: Design, keys: list[str], out: Path) -> tuple[MorrisDesign, Experiment]:
    """The Morris screen of `keys` after the sensitivity `d`: its design, and the
    experiment of its sweep written into the sensitivity folder `out`. Raises
    SensitivityError (a point the tables refuse) or ExperimentError."""
    m = morris_design(d, keys)
    return m, load_experiment(write_morris_experiment(m, out))

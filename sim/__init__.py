"""hexsim: a balance-simulation workbench for a turn-based hex 4X game.

The front door for notebooks and scripts::

    import sim
    tables = sim.load_tables()                       # tables/default.toml, validated
    state, board, turn_log = sim.play_match(tables, seed=7)
    row = sim.outcome(state, tables, board, turn_log, seed=7, match_index=0)
    run = sim.load_run("runs/demo")                  # a sweep's Parquet tables
    sim.metrics.victory_frequencies(run.matches)

The package's folders are its layers, each importing only those before it:
rules (tables -> validated ruleset -> one numpy record; every code in rules.codes)
-> world (board, state record, rng streams) -> kernels (@njit rule functions,
map generation, the AI, the match loop) -> engine (one match, commands, state
report, checker, scenarios) -> outputs (outcome schemas, Parquet store,
provenance) -> runner (experiments, chunks, the local/Dask sweep) -> analysis
(polars and statsmodels over outputs; never the engine) -> report (HTML report,
replay viewer, map drawing) -> cli. Names here are loaded on first use, so importing one layer
never pulls in the layers above it.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from typing import Any

__version__ = importlib.metadata.version("hexsim")

# name -> module that defines it (a module name alone: the module itself)
_FRONT_DOOR = {
    # balance tables and the kernels' argument types
    "Tables": "sim.rules.tables",
    "TablesError": "sim.rules.tables",
    "load_tables": "sim.rules.tables",
    "parse_overrides": "sim.rules.tables",
    "TableArrays": "sim.rules.tables",
    "State": "sim.world.state",
    "Board": "sim.world.board",
    "codes": "sim.rules.codes",
    # one match, one scenario
    "play_match": "sim.engine.match",
    "new_match": "sim.engine.match",
    "outcome": "sim.engine.match",
    "state_report": "sim.engine.report",
    "record_match": "sim.engine.replay",
    "load_scenario": "sim.engine.scenario",
    "run_scenario": "sim.engine.scenario",
    # sweeps and their outputs
    "load_experiment": "sim.runner.experiments",
    "run_sweep": "sim.runner.sweep",
    "load_run": "sim.analysis.load",
    "metrics": "sim.analysis.metrics",
    "write_report": "sim.report.html",
    "write_replay": "sim.report.replay",
}

__all__ = ["__version__", *_FRONT_DOOR]


def __getattr__(name: str) -> Any:
    where = _FRONT_DOOR.get(name)
    if where is None:
        raise AttributeError(f"module 'sim' has no attribute {name!r}")
    module = importlib.import_module(where)
    value = module if where.rsplit(".", 1)[-1] == name else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

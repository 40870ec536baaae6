"""Scenario files (../shared/SCENARIOS.md): a position, commands, the resulting state.

`load_scenario` parses and validates the whole file before anything runs; a
malformed file raises ScenarioError with one message naming the file, the line
and the key. `run_scenario` applies the commands through the same rule
kernels a full match uses and returns the report.
"""

from sim.engine.scenario.build import load_scenario
from sim.engine.scenario.run import command_args, refusal_text, run_scenario
from sim.engine.scenario.spec import Scenario, ScenarioError, ScenarioSpec, parse_scenario

__all__ = ["Scenario", "ScenarioError", "ScenarioSpec", "command_args", "load_scenario",
           "parse_scenario", "refusal_text", "run_scenario"]

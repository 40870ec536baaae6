"""Every scenario under tests/scenarios/ runs with the invariant checker after each
command and matches its `[expect]` table; each file names the rules it covers."""

from __future__ import annotations

import tomllib

import pytest

from sim.engine.scenario import load_scenario, run_scenario
from tests.conftest import FIXTURE_TABLES, SCENARIOS
from tests.scenario_expect import mismatches

FILES = sorted(SCENARIOS.glob("*.toml"))


def test_there_are_scenarios():
    assert len(FILES) >= 10


@pytest.mark.nojit
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_scenario(path):
    expect = tomllib.loads(path.read_text())["expect"]
    assert expect, f"{path.name} has an empty [expect]"
    report = run_scenario(load_scenario(path, FIXTURE_TABLES), check=True)
    problems = mismatches(report, expect)
    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems)

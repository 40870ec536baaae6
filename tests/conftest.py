"""Shared fixtures. Tests run against a frozen copy of the tables
(tests/fixtures/tables.toml) so designers' edits to tables/ never break them."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.rules.tables import Tables, load_tables

TESTS = Path(__file__).resolve().parent
FIXTURE_TABLES = TESTS / "fixtures" / "tables.toml"
SCENARIOS = TESTS / "scenarios"


@pytest.fixture(scope="session")
def tables() -> Tables:
    return load_tables(FIXTURE_TABLES)


@pytest.fixture(scope="session")
def tb(tables):
    return tables.arrays()

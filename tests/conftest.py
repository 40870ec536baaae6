"""Shared fixtures. Tests run against a frozen copy of the tables
(tests/fixtures/tables.toml) so designers' edits to tables/ never break them.

Under `NUMBA_DISABLE_JIT=1` (the `-m nojit` run of `make test`) every kernel runs as
plain Python, so tracebacks and coverage reach kernel bodies; it is about a hundred
times slower, so hypothesis draws at most NOJIT_EXAMPLES examples per property there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from sim.rules.tables import Tables, load_tables

TESTS = Path(__file__).resolve().parent
FIXTURE_TABLES = TESTS / "fixtures" / "tables.toml"
SCENARIOS = TESTS / "scenarios"

# numba reads the variable as an integer; "0" or unset means compiled
JIT_DISABLED = os.environ.get("NUMBA_DISABLE_JIT", "0").strip() not in ("", "0")
NOJIT_EXAMPLES = 50

settings.register_profile("nojit", max_examples=NOJIT_EXAMPLES, deadline=None)
if JIT_DISABLED:
    settings.load_profile("nojit")


def pytest_collection_modifyitems(config, items):
    """No slow test is marked nojit (`-m nojit` replaces addopts' `-m "not slow"`, so it
    would run). Under NUMBA_DISABLE_JIT: cap the example count of every hypothesis test
    and let the rng's uint64 arithmetic wrap quietly."""
    both = [item.nodeid for item in items
            if item.get_closest_marker("slow") and item.get_closest_marker("nojit")]
    if both:
        raise pytest.UsageError("slow tests marked nojit: " + ", ".join(both))
    if not JIT_DISABLED:
        return
    # splitmix64 (sim.world.rng) relies on uint64 wrap-around, which compiled code does
    # silently; numpy scalars warn on it, and filterwarnings=error would fail the test
    wrap = pytest.mark.filterwarnings(
        r"ignore:overflow encountered in scalar \w+:RuntimeWarning:sim\.world\.rng")
    for item in items:
        item.add_marker(wrap)
        test = getattr(item, "obj", None)
        # an explicit @settings(max_examples=300) outranks any profile, so the cap is set
        # on the settings hypothesis reads from the wrapped test when it is called
        current = getattr(test, "_hypothesis_internal_use_settings", None)
        if current is not None and current.max_examples > NOJIT_EXAMPLES:
            test._hypothesis_internal_use_settings = settings(
                current, max_examples=NOJIT_EXAMPLES)


@pytest.fixture(scope="session")
def tables() -> Tables:
    return load_tables(FIXTURE_TABLES)


@pytest.fixture(scope="session")
def tb(tables):
    return tables.arrays()

"""Telemetry in the outcome (issue 11): the event log's new kinds and its overflow, and
the per-turn rows' cities, science and units by type. Scenario files check the event
rows of single commands (T16, D3, D4, D5, V11, V16, C: Economy); these tests check
whole matches."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from sim.engine.match import outcome, play_match
from sim.engine.report import state_report
from sim.kernels.rules.events import log_event
from sim.rules.codes import COL_A, DAMAGE_SPLIT, EV_ATTACK, EVENT_FIELDS
from sim.rules.tables import load_tables
from sim.world.state import copy_state
from tests.conftest import FIXTURE_TABLES


@pytest.fixture(scope="module")
def match():
    tables = load_tables(FIXTURE_TABLES)
    st, board, log = play_match(tables, 1, 0, n_seats=4, length="short")
    return tables, st, board, log, outcome(st, tables, board, log, 1, 0)


def test_log_event_counts_rows_past_capacity_without_storing_them():
    log = np.zeros((2, EVENT_FIELDS), dtype=np.int64)
    n = np.zeros(1, dtype=np.int64)
    rows = [log_event(log, n, np.int64(3), np.int64(EV_ATTACK), np.int64(0), np.int64(1),
                      np.int64(-1), np.int64(k), np.int64(-1), np.int64(0)) for k in range(5)]
    assert rows == [0, 1, 2, 3, 4] and n[0] == 5
    assert log[:, COL_A].tolist() == [0, 1]  # the first two are kept, the rest counted


def test_an_overflowing_log_shows_in_the_outcome(match):
    tables, st, board, log, _ = match
    full = copy_state(st)
    full.n_events[0] = full.event_log.shape[0] + 7
    result = outcome(full, tables, board, log, 1, 0)
    assert result["events_dropped"] == 7
    assert len(result["events"]) == full.event_log.shape[0]


def test_a_match_logs_every_new_kind_with_its_documented_fields(match):
    """C: Combat, Production queue, Research, Cities, D3: a whole match shows attacks,
    rushes, research, gold and turn-start repairs and heals, each row as EVENT_KINDS
    documents it."""
    tables, _st, _board, _log, result = match
    assert result["events_dropped"] == 0
    kinds = Counter(e["kind"] for e in result["events"])
    for kind in ("attack", "rush", "research", "repair", "repairs", "heals", "built"):
        assert kinds[kind] > 0, kind
    units = tables.unit_names
    for e in result["events"]:
        if e["kind"] == "attack":
            assert e["a"] == (units.index(e["attacker"]) if e["attacker"] != "bandit" else -1)
            assert (e.get("city") is None) == (e["target"] != "city")
            assert e["c"] == e["damage"] + DAMAGE_SPLIT * e["taken"] and e["damage"] > 0
            if e["seat"] != "bandit":
                assert isinstance(e["seat"], int) and e["seat"] != e["by"]
        elif e["kind"] == "research":
            assert e["b"] == e["cost"] > 0 and e["a"] == tables.tech_names.index(e["tech"])
        elif e["kind"] in ("repairs", "heals"):
            assert e["a"] > 0 and e["b"] >= e["a"]
        elif e["kind"] == "rush":
            assert e["gold"] > 0 and e["item"] in (*units, *tables.building_names)


def test_research_rows_spend_what_the_seat_had_and_science_gained_adds_up(match):
    """C: Research, D7: over the whole match each seat's science gained equals its stock
    at the end plus what its research rows spent."""
    _tables, st, _board, _log, result = match
    for s in range(int(st.n_seats[0])):
        gained = sum(r["science_gained"] for r in result["turns"] if r["seat"] == s)
        spent = sum(e["cost"] for e in result["events"]
                    if e["kind"] == "research" and e["seat"] == s)
        assert gained == int(st.seat_science[s]) + spent
        assert all(r["science_gained"] >= 0 for r in result["turns"] if r["seat"] == s)


def test_the_last_turn_row_counts_the_units_and_cities_left(match):
    tables, st, board, _log, result = match
    report = state_report(st, tables, board)
    last = max(r["turn"] for r in result["turns"])
    for s in range(int(st.n_seats[0])):
        row = next(r for r in result["turns"] if r["turn"] == last and r["seat"] == s)
        alive = Counter(u["type"] for u in report["units"] if u["alive"] and u["seat"] == s)
        assert row["units"] == [alive[name] for name in tables.unit_names]
        assert row["cities_held"] == len(report["seats"][s]["cities"])
        assert row["science_stock"] == report["seats"][s]["science"]
    assert len({(r["turn"], r["seat"]) for r in result["turns"]}) == len(result["turns"])

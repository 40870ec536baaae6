"""The sweep's columnar outcome rows (sim.engine.columns, sim.runner.chunk.ChunkColumns)
equal the plain rows built from `outcome`'s dicts (tests/reference/rows.py), table by
table, on matches of every seat count and length, with restricted and skill-1 seats,
and with an event log that overflowed."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from sim.engine.columns import match_columns
from sim.engine.match import outcome, play_match
from sim.outputs.schemas import TABLES
from sim.runner.chunk import ChunkColumns, empty_columns, frames
from tests.reference.rows import add_match

CASES = [  # (seed, first match, matches, seats, length, seat_ai)
    (11, 0, 6, 4, "standard", None),
    (12, 3, 4, 2, "short", None),
    (13, 0, 3, 6, "long", None),
    (14, 0, 3, 3, "standard", [{"forbid": ["observatory", "attack_cities"]}]),
    (15, 0, 2, 4, "short", [{}, {"skill": 1}]),
]


def _both(tables, seed, first, n, seats, length, seat_ai):
    cols = {name: empty_columns(name) for name in TABLES}
    columns = ChunkColumns()
    for i in range(first, first + n):
        st, board, log = play_match(tables, seed, i, seats, length,
                                    **({"seat_ai": seat_ai} if seat_ai else {}))
        match_id, replay, pers = f"v:{i}", f"sim replay x v:{i}", ["balanced"]
        add_match(cols, outcome(st, tables, board, log, seed, i), match_id, replay, pers)
        columns.add(match_columns(st, tables, board, log, seed, i), match_id, replay, pers)
    return frames(cols), columns.frames(empty_columns("errors"))


@pytest.fixture(scope="module")
def played():
    from sim.rules.tables import load_tables

    tables = load_tables()  # the default tables: their wars reach every event kind
    return {k: _both(tables, *case) for k, case in enumerate(CASES)}


@pytest.mark.parametrize("k", range(len(CASES)), ids=[f"{c[3]}-seats-{c[4]}" for c in CASES])
def test_columnar_rows_equal_the_dict_rows(played, k):
    case = CASES[k]
    want, got = played[k]
    for table in TABLES:
        assert got[table].schema == want[table].schema, table
        assert_frame_equal(got[table], want[table])
    assert want["events"].height > 100 * case[2]
    assert want["turns"].height >= case[2] * case[3]


def test_the_cases_fill_every_generic_column_and_event_kind_that_has_one(played):
    """So each mapping of kind to `cause`, `value` and `detail` was compared above."""
    events = pl.concat([want["events"] for want, _got in played.values()])
    for name in ("seat", "by", "city", "cause", "value", "detail"):
        assert events[name].null_count() < events.height, name
    kinds = set(events["kind"].unique())
    assert {"capital_fall", "transfer", "eliminated", "victory", "revolt_start", "attack",
            "research", "built", "unit_disbanded", "capture", "truce"} <= kinds, kinds


def test_an_overflowed_event_log_keeps_its_rows_and_counts_the_dropped(tables):
    from sim.rules.tables import load_tables
    from tests.conftest import FIXTURE_TABLES

    small = load_tables(FIXTURE_TABLES)
    st, board, log = play_match(small, 11, 0)
    st["n_events"][0] = st["event_log"].shape[0] + 7  # as the kernels count a full log
    columns = ChunkColumns()
    columns.add(match_columns(st, small, board, log, 11, 0), "v:0", "r", ["x"])
    got = columns.frames(empty_columns("errors"))
    assert got["matches"]["events_dropped"].to_list() == [7]
    assert got["events"].height == st["event_log"].shape[0]


def test_no_matches_make_empty_typed_frames():
    got = ChunkColumns().frames(empty_columns("errors"))
    want = frames({name: empty_columns(name) for name in TABLES})
    for table in TABLES:
        assert_frame_equal(got[table], want[table])
        assert isinstance(got[table], pl.DataFrame)

"""Skill 1 (issue 16, D8): a seat that plays its candidate plans out on a copy of the
match and adopts the best (sim.kernels.lookahead).

Skill-0 matches are untouched by it: the golden transcripts (tests/test_golden.py)
and every other match test run without a skill-1 seat and must not change.
"""

from __future__ import annotations

import numpy as np
import pytest

from sim.engine.match import iter_turns, lookahead_scratch, play_match
from sim.kernels.lookahead import choose_plan
from sim.rules.codes import SKILL_LOOKAHEAD
from sim.world.state import copy_state, states_equal
from tests.conftest import JIT_DISABLED

SKILL1 = [{"skill": 1}]
# NUMBA_DISABLE_JIT plays every kernel as Python, ~100x slower: short matches there
LENGTH = "short"


def _diff_fields(a, b) -> set[str]:
    return {n for n in a.dtype.names if not np.array_equal(a[n], b[n])}


def test_a_skill1_match_is_deterministic(tables):
    a, _b, log_a = play_match(tables, 5, 0, length=LENGTH, seat_ai=SKILL1)
    b, _b, log_b = play_match(tables, 5, 0, length=LENGTH, seat_ai=SKILL1)
    assert states_equal(a, b)
    assert np.array_equal(log_a, log_b)
    assert a.seat_skill[0] == SKILL_LOOKAHEAD and a.seat_plan[0] >= 0
    assert (a.seat_plan[1:] == -1).all()  # skill-0 seats never get a plan


def test_the_fast_path_and_the_stepped_match_agree_with_a_skill1_seat(tables):
    """iter_turns (the --check path) looks ahead at the same points as the compiled
    loop, with the same scratch, and ends in the same state."""
    fast, _b, _l = play_match(tables, 6, 1, length=LENGTH, seat_ai=SKILL1)
    *_, last = iter_turns(tables, 6, 1, length=LENGTH, seat_ai=SKILL1)
    assert states_equal(fast, last.state)


def test_horizon_zero_plays_exactly_as_skill0(tables):
    """With no horizon the lookahead never runs: no draw, no plan, the skill-0 match."""
    flat = tables.with_overrides({"ai.lookahead.horizon_pct": 0})
    greedy, _b, _l = play_match(flat, 7, 0, length=LENGTH)
    skill1, _b, _l = play_match(flat, 7, 0, length=LENGTH, seat_ai=SKILL1)
    assert _diff_fields(greedy, skill1) == {"seat_skill"}


def test_the_lookahead_changes_the_plan_and_so_the_match(tables):
    """Over a few matches the lookahead adopts a plan other than the seat's own
    personality at some point, and the match differs from the greedy one."""
    changed = 0
    differs = 0
    for match in range(3):
        greedy, _b, _l = play_match(tables, 8, match, length=LENGTH)
        plans = set()
        for step in iter_turns(tables, 8, match, length=LENGTH, seat_ai=SKILL1):
            plans.add(int(step.state.seat_plan[0]))
        own = int(step.state.seat_personality[0])
        changed += bool(plans - {-1, own})
        differs += bool(_diff_fields(greedy, step.state) - {"seat_skill", "seat_plan"})
    assert changed >= 1
    assert differs >= 1


def _mid_match(tables, seed: int, turns: int):
    """A copy of match (seed, 0) after `turns` turns, skill 0 throughout."""
    for step in iter_turns(tables, seed, 0, length=LENGTH):
        if step.played == turns:
            return copy_state(step.state), step.board
    raise AssertionError("the match ended early")


@pytest.mark.nojit
@pytest.mark.parametrize("seed", [3, 11])
def test_the_lookahead_leaves_the_real_state_as_it_was(tables, seed):
    """choose_plan on a mid-match state: every field byte for byte as before (its
    one draw is keyed, issue 44, so no stream moves; the plan is the caller's to set)."""
    st, board = _mid_match(tables, seed, 12)
    seat = int(st.active_seat[0])
    st.seat_skill[seat] = SKILL_LOOKAHEAD
    before = copy_state(st)
    tb = tables.arrays(LENGTH)
    path = np.full((board.n_tiles, board.n_tiles), -1, dtype=np.int64)
    plan = choose_plan(st, tb, board, path, np.int64(seat), lookahead_scratch(st))
    assert 0 <= plan < len(tables.personality_names)
    assert st.tobytes() == before.tobytes()


def test_choose_plan_is_a_pure_function_of_the_state(tables):
    st, board = _mid_match(tables, 4, 10)
    seat = int(st.active_seat[0])
    st.seat_skill[seat] = SKILL_LOOKAHEAD
    tb = tables.arrays(LENGTH)
    picks = []
    for _ in range(2):
        again = copy_state(st)
        path = np.full((board.n_tiles, board.n_tiles), -1, dtype=np.int64)
        picks.append(int(choose_plan(again, tb, board, path, np.int64(seat),
                                     lookahead_scratch(again))))
    assert picks[0] == picks[1]


@pytest.mark.nojit
def test_without_a_skill1_seat_the_scratch_is_empty(tables):
    st, _board = _mid_match(tables, 2, 1)
    scratch, state_bytes, scratch_bytes, _uncopied = lookahead_scratch(st)
    assert scratch.shape == (0,) and state_bytes.shape == (0,) and scratch_bytes.shape == (0,)
    assert scratch.dtype == st.dtype
    st.seat_skill[2] = SKILL_LOOKAHEAD
    scratch, state_bytes, scratch_bytes, (lo, hi) = lookahead_scratch(st)
    assert scratch.shape == (1,) and state_bytes.shape == scratch_bytes.shape == \
        (st.dtype.itemsize,)
    assert np.shares_memory(state_bytes, st.seat_skill)
    # the span left out of the copy is exactly the event log
    st.event_log[0, 0] = 12345
    assert state_bytes[lo:lo + 8].view(np.int64)[0] == 12345
    assert hi - lo == st.event_log.nbytes


def test_keep_margin_keeps_the_current_plan(tables):
    """A keep_margin no score margin reaches keeps the seat on its own personality
    unless a candidate wins outright (or the current plan loses)."""
    sticky = tables.with_overrides({"ai.lookahead.keep_margin": 100_000})
    plans = set()
    for step in iter_turns(sticky, 8, 0, length=LENGTH, seat_ai=SKILL1):
        plans.add(int(step.state.seat_plan[0]))
    own = int(step.state.seat_personality[0])
    loose = set()
    for step in iter_turns(tables, 8, 0, length=LENGTH, seat_ai=SKILL1):
        loose.add(int(step.state.seat_plan[0]))
    assert len(plans - {-1}) <= len(loose - {-1})
    assert own in plans


@pytest.mark.skipif(JIT_DISABLED, reason="a sweep of whole matches; the compiled run covers it")
def test_a_sweep_records_the_skill1_seat(tmp_path):
    from sim.outputs.store import scan
    from sim.runner.experiments import load_experiment
    from sim.runner.sweep import run_sweep
    from tests.conftest import FIXTURE_TABLES

    path = tmp_path / "exp.toml"
    path.write_text(f"""
name = "lookahead"
tables = "{FIXTURE_TABLES}"
root_seed = 31
matches = 2
seats = 4
length = "short"
personalities = ["balanced", "conqueror", "scholar", "merchant"]
chunk_size = 2

[[variants]]
name = "skill1"
seat_ai = [{{ skill = 1 }}, {{}}, {{}}, {{}}]
""")
    out = tmp_path / "out"
    run_sweep(load_experiment(path), out, jobs=1, progress=False)
    seats = scan(out, "seats").collect().sort(["match_index", "seat"])
    assert seats.filter(seats["seat"] == 0)["skill"].to_list() == [1, 1]
    assert set(seats.filter(seats["seat"] != 0)["skill"].to_list()) == {0}
    # the seats table names the seat's real personality, not its lookahead's plan
    assert seats.filter(seats["seat"] == 0)["personality"].to_list() == ["balanced",
                                                                         "conqueror"]

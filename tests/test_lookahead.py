"""D11: skill 1 (a lookahead of orders, sim.kernels.lookahead) and skill 2 (a search
player, sim.kernels.search). Both only pick a seat's orders (State.seat_plan,
seat_target); every action is the skill-0 AI's, through the same rule functions.

Skill-0 matches are untouched by them: the golden transcripts (tests/test_golden.py)
and every other match test run without a skill-1 or skill-2 seat and must not change.
"""

from __future__ import annotations

import numpy as np
import pytest

from sim.engine.match import iter_turns, lookahead_scratch, play_match
from sim.kernels.loop import play_one_turn
from sim.kernels.search import decide_orders
from sim.rules.codes import ORDER_NO_WAR, ORDER_OWN_TARGET, SKILL_LOOKAHEAD, SKILL_SEARCH
from sim.world.state import copy_state, states_equal
from tests.conftest import JIT_DISABLED

SKILL1 = [{"skill": 1}]
SKILL2 = [{"skill": 2}]
# NUMBA_DISABLE_JIT plays every kernel as Python, ~100x slower: short matches there
LENGTH = "short"
# a small search, so that a short match with a skill-2 seat takes a moment
SMALL_SEARCH = {"ai.search.rollouts": 6, "ai.search.horizon_pct": 5, "ai.search.every_pct": 10}
# every turn a decision, of one turn's horizon: what the nojit tests can afford
EVERY_TURN = {"ai.lookahead.every_pct": 1, "ai.lookahead.horizon_pct": 2,
              "ai.search.every_pct": 1, "ai.search.horizon_pct": 2, "ai.search.rollouts": 5}
compiled_only = pytest.mark.skipif(JIT_DISABLED, reason="whole matches with playouts: the "
                                   "compiled run covers them")


def _diff_fields(a, b) -> set[str]:
    return {n for n in a.dtype.names if not np.array_equal(a[n], b[n])}


@compiled_only
@pytest.mark.parametrize("seat_ai", [SKILL1, SKILL2, [{}, {"skill": 2}, {"skill": 1}]])
def test_d11_a_skill1_or_skill2_match_is_deterministic(tables, seat_ai):
    small = tables.with_overrides(SMALL_SEARCH)
    a, _b, log_a = play_match(small, 5, 0, length=LENGTH, seat_ai=seat_ai)
    b, _b, log_b = play_match(small, 5, 0, length=LENGTH, seat_ai=seat_ai)
    assert states_equal(a, b)
    assert np.array_equal(log_a, log_b)
    for s, entry in enumerate(seat_ai):
        if entry.get("skill"):
            assert a.seat_plan[s] >= 0 and a.seat_playouts[s] > 0
    skill0 = [s for s in range(4) if s >= len(seat_ai) or not seat_ai[s].get("skill")]
    assert (a.seat_plan[skill0] == -1).all() and (a.seat_playouts[skill0] == 0).all()
    assert (a.seat_target[skill0] == ORDER_OWN_TARGET).all()


@compiled_only
@pytest.mark.parametrize("seat_ai", [SKILL1, [{}, {"skill": 2}]])
def test_the_fast_path_and_the_stepped_match_agree(tables, seat_ai):
    """iter_turns (the --check path) decides at the same points as the compiled loop,
    with the same scratch, and ends in the same state."""
    small = tables.with_overrides(SMALL_SEARCH)
    fast, _b, _l = play_match(small, 6, 1, length=LENGTH, seat_ai=seat_ai)
    *_, last = iter_turns(small, 6, 1, length=LENGTH, seat_ai=seat_ai)
    assert states_equal(fast, last.state)


@pytest.mark.parametrize("key", ["ai.lookahead.horizon_pct", "ai.search.horizon_pct"])
def test_horizon_zero_plays_exactly_as_skill0(tables, key):
    """With no horizon the level never decides: no draw, no orders, the skill-0 match."""
    flat = tables.with_overrides({key: 0})
    seat_ai = SKILL1 if "lookahead" in key else SKILL2
    greedy, _b, _l = play_match(flat, 7, 0, length=LENGTH)
    other, _b, _l = play_match(flat, 7, 0, length=LENGTH, seat_ai=seat_ai)
    assert _diff_fields(greedy, other) == {"seat_skill"}


@compiled_only
def test_the_lookahead_changes_the_orders_and_so_the_match(tables):
    """Over a few matches the lookahead adopts orders other than the seat's own
    personality and war target at some point, and the match differs from the greedy one."""
    loose = tables.with_overrides({"ai.lookahead.keep_margin": 0,
                                   "ai.lookahead.horizon_pct": 10})
    changed = 0
    differs = 0
    for match in range(3):
        greedy, _b, _l = play_match(loose, 8, match, length=LENGTH)
        orders = set()
        for step in iter_turns(loose, 8, match, length=LENGTH, seat_ai=SKILL1):
            orders.add((int(step.state.seat_plan[0]), int(step.state.seat_target[0])))
        own = (int(step.state.seat_personality[0]), ORDER_OWN_TARGET)
        changed += bool(orders - {(-1, ORDER_OWN_TARGET), own})
        differs += bool(_diff_fields(greedy, step.state) -
                        {"seat_skill", "seat_plan", "seat_target", "seat_playouts"})
    assert changed >= 1
    assert differs >= 1


def _mid_match(tables, seed: int, turns: int):
    """A copy of match (seed, 0) after `turns` turns, skill 0 throughout."""
    for step in iter_turns(tables, seed, 0, length=LENGTH):
        if step.played == turns:
            return copy_state(step.state), step.board
    raise AssertionError("the match ended early")


def _decide(tables, st, board, seat: int):
    tb = tables.arrays(LENGTH)
    path = np.full((board.n_tiles, board.n_tiles), -1, dtype=np.int64)
    decide_orders(st, tb, board, path, np.int64(seat), lookahead_scratch(st))


def _one_decision(tables, skill: int):
    """(the state before, after, board, seat): the seat to move in match (3, 0) after 12
    turns, given `skill`, decides its orders once; only its orders and playouts moved."""
    st, board = _mid_match(tables, 3, 12)
    seat = int(st.active_seat[0])
    st.seat_skill[seat] = skill
    before = copy_state(st)
    _decide(tables, st, board, seat)
    assert _diff_fields(before, st) <= {"seat_plan", "seat_target", "seat_playouts"}
    return before, st, board, seat


@pytest.mark.nojit
@pytest.mark.parametrize(("skill", "budget_key", "budget"),
                         [(SKILL_LOOKAHEAD, "ai.lookahead.candidates", 4),
                          (SKILL_SEARCH, "ai.search.rollouts", 7)])
def test_d11_a_decision_changes_only_the_orders_and_spends_its_budget(tables, skill,
                                                                   budget_key, budget):
    """decide_orders on a mid-match state: every field byte for byte as before (its one
    draw is keyed, issue 44, so no stream moves), except the seat's orders and its
    playout count, which grows by exactly the table's budget (candidates; rollouts)."""
    small = tables.with_overrides({**EVERY_TURN, budget_key: budget})
    before, st, board, seat = _one_decision(small, skill)
    assert st.seat_playouts[seat] == budget
    assert 0 <= st.seat_plan[seat] < len(small.personality_names)
    assert st.seat_target[seat] in (ORDER_OWN_TARGET, ORDER_NO_WAR) or \
        st.city_owner[st.seat_target[seat]] not in (seat, -1)
    # the same state decides the same orders
    again = copy_state(before)
    _decide(small, again, board, seat)
    assert states_equal(again, st)


@compiled_only
@pytest.mark.parametrize(("skill", "budget_key"),
                         [(SKILL_LOOKAHEAD, "ai.lookahead.candidates"),
                          (SKILL_SEARCH, "ai.search.rollouts")])
def test_every_decision_spends_the_tables_budget(tables, skill, budget_key):
    """Over a whole match each decision of the seat plays exactly its budget's playouts,
    at the table's decision points (every every_pct % of the turns, up to stop_pct %)."""
    budget = 3
    part = "lookahead" if skill == SKILL_LOOKAHEAD else "search"
    small = tables.with_overrides({**SMALL_SEARCH, budget_key: budget,
                                   f"ai.{part}.every_pct": 10, f"ai.{part}.stop_pct": 60})
    grown = []
    prev = 0
    for step in iter_turns(small, 9, 0, length=LENGTH, seat_ai=[{}, {"skill": skill}]):
        now = int(step.state.seat_playouts[1])
        grown.append(now - prev)
        prev = now
    assert set(grown) <= {0, budget}
    last = int(step.state.last_turn[0])
    every = max(last * 10 // 100, 1)
    decided = [t for t, g in enumerate(grown) if g]
    assert decided and all((t - 1) % every == 0 and t <= last * 60 // 100 for t in decided)
    if step.state.seat_alive[1]:  # a seat out of the match decides nothing
        assert len(decided) == len(range(1, min(len(grown) - 1, last * 60 // 100) + 1, every))


@pytest.mark.nojit
def test_order_options_list_the_current_orders_first_and_each_pair_once(tables):
    from sim.kernels.lookahead import order_options

    st, board = _mid_match(tables, 4, 10)
    seat = int(st.active_seat[0])
    tb = tables.arrays(LENGTH)
    st.seat_plan[seat] = 2
    st.seat_target[seat] = ORDER_NO_WAR
    plans, targets = order_options(st, tb, board, np.int64(seat), np.int64(2))
    pairs = list(zip(plans.tolist(), targets.tolist(), strict=True))
    assert pairs[0] == (2, ORDER_NO_WAR)
    assert len(set(pairs)) == len(pairs)
    cities = {t for t in targets.tolist() if t >= 0}
    assert len(cities) <= 2
    assert all(st.city_owner[c] >= 0 and st.city_owner[c] != seat for c in cities)
    n_wars = 2 + len(cities)
    assert len(pairs) == len(tables.personality_names) * n_wars


@compiled_only
@pytest.mark.parametrize("skill", [SKILL_LOOKAHEAD, SKILL_SEARCH])
def test_d11_every_level_plays_the_skill0_ai_under_its_orders(tables, skill):
    """The same rules through the same rule functions: in every turn a skill-1 or
    skill-2 seat opens, its turn equals the skill-0 AI's turn played after its orders
    were set (decide_orders, then the seat at skill 0): the levels differ only in the
    orders they give."""
    small = tables.with_overrides(EVERY_TURN)
    tb = small.arrays(LENGTH)
    checked = 0
    previous = None
    for step in iter_turns(small, 12, 0, length=LENGTH, seat_ai=[{"skill": skill}]):
        if previous is not None:
            assert states_equal(previous, step.state)
            checked += 1
            previous = None
        st = step.state
        if st.finished[0] or st.active_seat[0] != 0:
            continue
        twin = copy_state(st)
        _decide(small, twin, step.board, 0)
        twin.seat_skill[0] = 0
        path = np.full((step.board.n_tiles, step.board.n_tiles), -1, dtype=np.int64)
        play_one_turn(twin, tb, step.board, path, step.turn_log.copy(),
                      lookahead_scratch(twin), np.zeros(0, dtype=np.int64))
        twin.seat_skill[0] = skill
        previous = twin
    assert checked >= 3


@pytest.mark.nojit
def test_without_a_skill1_or_skill2_seat_the_scratch_is_empty(tables):
    st, _board = _mid_match(tables, 2, 1)
    scratch, state_bytes, scratch_bytes, _uncopied = lookahead_scratch(st)
    assert scratch.shape == (0,) and state_bytes.shape == (0,) and scratch_bytes.shape == (0,)
    assert scratch.dtype == st.dtype
    for skill in (SKILL_LOOKAHEAD, SKILL_SEARCH):
        st.seat_skill[2] = skill
        scratch, state_bytes, scratch_bytes, (lo, hi) = lookahead_scratch(st)
        assert scratch.shape == (1,) and state_bytes.shape == scratch_bytes.shape == \
            (st.dtype.itemsize,)
        assert np.shares_memory(state_bytes, st.seat_skill)
        # the span left out of the copy is exactly the event log
        st.event_log[0, 0] = 12345
        assert state_bytes[lo:lo + 8].view(np.int64)[0] == 12345
        assert hi - lo == st.event_log.nbytes


@compiled_only
def test_keep_margin_keeps_the_current_orders(tables):
    """A keep_margin no value reaches keeps the seat on its own personality and war
    target throughout."""
    sticky = tables.with_overrides({"ai.lookahead.keep_margin": 100_000})
    orders = set()
    for step in iter_turns(sticky, 8, 0, length=LENGTH, seat_ai=SKILL1):
        orders.add((int(step.state.seat_plan[0]), int(step.state.seat_target[0])))
    own = int(step.state.seat_personality[0])
    assert orders <= {(-1, ORDER_OWN_TARGET), (own, ORDER_OWN_TARGET)}


@compiled_only
def test_d11_a_sweep_records_each_seats_skill_and_is_the_same_in_any_chunking(tmp_path):
    """Match i of a sweep with skill-1 and skill-2 seats is the same, bit for bit, in
    chunks of 1 and of 3 matches and alone (`play_match`), and the seats table records
    each seat's skill and its real personality."""
    from sim.outputs.store import scan
    from sim.rules.tables import load_tables
    from sim.runner.experiments import load_experiment
    from sim.runner.sweep import run_sweep
    from tests.conftest import FIXTURE_TABLES

    runs = {}
    for chunk in (1, 3):
        path = tmp_path / f"exp{chunk}.toml"
        path.write_text(f"""
name = "skills"
tables = "{FIXTURE_TABLES}"
root_seed = 31
matches = 3
seats = 4
length = "short"
personalities = ["balanced", "conqueror", "scholar", "merchant"]
chunk_size = {chunk}

[[variants]]
name = "skills"
set = {{ "ai.search.rollouts" = 6, "ai.search.horizon_pct" = 5 }}
seat_ai = [{{ skill = 2 }}, {{ skill = 1 }}, {{}}, {{}}]
""")
        out = tmp_path / f"out{chunk}"
        run_sweep(load_experiment(path), out, jobs=1, progress=False)
        runs[chunk] = scan(out, "seats").collect().sort(["match_index", "seat"])
    seats = runs[1]
    assert seats.drop("chunk", strict=False).equals(runs[3].drop("chunk", strict=False))
    assert seats.filter(seats["seat"] == 0)["skill"].to_list() == [2, 2, 2]
    assert seats.filter(seats["seat"] == 1)["skill"].to_list() == [1, 1, 1]
    assert set(seats.filter(seats["seat"] >= 2)["skill"].to_list()) == {0}
    # the seats table names the seat's real personality, not its orders' plan
    assert seats.filter(seats["seat"] == 0)["personality"].to_list() == [
        "balanced", "conqueror", "scholar"]
    tables = load_tables(FIXTURE_TABLES).with_overrides(
        {"ai.search.rollouts": 6, "ai.search.horizon_pct": 5})
    # match 2: the personalities rotated by 2 (sim.runner.experiments)
    alone, _b, _l = play_match(tables, 31, 2, length="short",
                               personalities=["scholar", "merchant", "balanced", "conqueror"],
                               seat_ai=[{"skill": 2}, {"skill": 1}])
    row = seats.filter((seats["match_index"] == 2) & (seats["seat"] == 0)).to_dicts()[0]
    from sim.kernels.rules.standings import scores

    _t, _c, score, _r = scores(alone, tables.arrays("short", 4), _b)
    assert row["score"] == int(score[0])


def test_d11_the_value_reads_what_the_turns_table_holds(tables):
    """seat_standing, the numbers the learned value reads at a play-out's end, are
    the numbers a skill-0 match's turns table holds (tools/fit_value.py fits [ai.value]
    on that table): score, cities held, army (units of the types that can attack, by
    cost), gold stock and V18 counter as the turn record reads them from the same state
    (sim.kernels.loop.record_turn), and science earned as the sum of the table's
    science_gained up to the turn just played, for every seat whose turn has not opened
    since (no income or research of its own in between)."""
    from sim.engine.match import turn_rows
    from sim.kernels.lookahead import seat_standing
    from sim.kernels.loop import record_turn
    from sim.rules.codes import (
        F_ARMY,
        F_CITIES,
        F_DOMINANCE,
        F_GOLD,
        F_SCIENCE,
        F_SCORE,
        LOG_CITIES_HELD,
        LOG_DOMINANCE,
        LOG_GOLD_STOCK,
        LOG_SCORE,
        TURN_FIELDS,
    )

    tb = tables.arrays(LENGTH, 4)
    army = np.where(tb.unit_attack > 0, tb.unit_cost, 0)
    science = {}
    checked = 0
    for step in iter_turns(tables, 9, 0, length=LENGTH):
        st = step.state
        if step.played < 1 or st.finished[0]:
            continue
        own = seat_standing(st, tb, step.board)
        log = np.zeros_like(step.turn_log)
        record_turn(st, tb, step.board, log)
        row = log[st.turn[0]]
        for s in range(4):
            if not st.seat_alive[s]:
                continue
            assert own[s, F_SCORE] == row[s, LOG_SCORE]
            assert own[s, F_CITIES] == row[s, LOG_CITIES_HELD]
            assert own[s, F_GOLD] == row[s, LOG_GOLD_STOCK]
            assert own[s, F_DOMINANCE] == row[s, LOG_DOMINANCE]
            assert own[s, F_ARMY] == int(np.dot(army, row[s, TURN_FIELDS:]))
            if s != st.active_seat[0]:
                science[(step.played, s)] = own[s, F_SCIENCE]
            checked += 1
    assert checked > 40 and any(v > 20 for v in science.values())
    assert any(own[s, F_ARMY] > 0 for s in range(4))
    earned = np.zeros(4, dtype=np.int64)
    for r in turn_rows(st, step.turn_log, int(st.turn[0])):
        earned[r["seat"]] += r["science_gained"]
        if (r["turn"], r["seat"]) in science:
            assert science[(r["turn"], r["seat"])] == earned[r["seat"]]


def test_d11_a_value_of_the_score_alone_is_the_score_margin(tables):
    """position_value with a weight on the score lead only is that weight × the score
    margin plan_outcome gives (the value skill 1 had before [ai.value]); the other
    features count by their weights (bias 1, progress in % of the turns played)."""
    from sim.kernels.lookahead import plan_outcome, position_value, value_features
    from sim.rules.codes import F_BIAS, F_PROGRESS, F_SCORE, N_VALUE_FEATURES

    tb = tables.arrays(LENGTH, 4)
    for step in iter_turns(tables, 10, 0, length=LENGTH):
        if step.played in (3, 12) and not step.state.finished[0]:
            st = step.state
            weights = np.zeros(N_VALUE_FEATURES, dtype=np.int64)
            weights[F_SCORE] = 3
            for seat in range(4):
                _result, margin = plan_outcome(st, tb, step.board, np.int64(seat))
                assert position_value(st, tb, step.board, np.int64(seat), weights) == 3 * margin
            weights[:] = 0
            weights[F_BIAS], weights[F_PROGRESS] = 7, 2
            x = value_features(st, tb, step.board, np.int64(0))
            assert x[F_PROGRESS] == step.played * 100 // st.last_turn[0]
            assert position_value(st, tb, step.board, np.int64(0), weights) == 7 + 2 * x[F_PROGRESS]


def test_d11_a_playout_starts_from_the_matchs_event_log_not_the_scratchs(tables):
    """The copy a skill-1 seat plays out holds the match's logged event rows: the AI
    reads the log back (ai.diplomacy.war_record: a war's captures and declined truces),
    so rows an earlier playout left in the scratch must not stand in for the real past
    (before this, a copy read the previous candidates' futures as its war history)."""
    from sim.kernels.lookahead import play_out

    st, board = _mid_match(tables, 3, 12)
    seat = int(st.active_seat[0])
    st.seat_skill[seat] = SKILL_LOOKAHEAD
    logged = int(st.n_events[0])
    assert logged > 0
    scratch = lookahead_scratch(st)
    scratch.holder[0]["event_log"][:] = -7  # what an earlier playout might have left
    tb = tables.arrays(LENGTH)
    path = np.full((board.n_tiles, board.n_tiles), -1, dtype=np.int64)
    play_out(st, tb, board, path, np.int64(seat), np.int64(st.seat_plan[seat]),
             np.int64(st.seat_target[seat]), np.uint64(11), np.int64(0), np.int64(0),
             np.zeros(0, dtype=np.int64), scratch)
    assert np.array_equal(scratch.holder[0]["event_log"][:logged], st.event_log[:logged])


@pytest.mark.nojit
def test_fixed_candidates_are_the_nearest_city_and_another_plan_on_the_same_war_order(tables):
    """city_candidate and plan_candidate ([ai.lookahead]): after the current orders the
    lookahead plays the same plan marching on the nearest rival city (order_options
    lists the cities nearest first), then another plan on the current war order; the
    others stay drawn from the neighbours. Off, the candidates are all drawn."""
    from sim.kernels.lookahead import draw_candidates, order_options

    st, board = _mid_match(tables, 4, 10)
    seat = int(st.active_seat[0])
    st.seat_plan[seat] = 2
    st.seat_target[seat] = ORDER_NO_WAR
    base = {"ai.lookahead.targets": 2, "ai.lookahead.candidates": 4}
    plans, targets = order_options(st, tables.arrays(LENGTH), board, np.int64(seat), np.int64(2))
    nearest = next(t for p, t in zip(plans.tolist(), targets.tolist(), strict=True)
                   if p == 2 and t >= 0)
    fixed = tables.with_overrides({**base, "ai.lookahead.city_candidate": True,
                                   "ai.lookahead.plan_candidate": True}).arrays(LENGTH)
    drawn = tables.with_overrides(base).arrays(LENGTH)
    seconds, thirds = set(), set()
    for key in range(20):
        stream = np.array([key], dtype=np.uint64)
        p, t, picks = draw_candidates(st, fixed, board, np.int64(seat), stream)
        pairs = [(int(p[o]), int(t[o])) for o in picks]
        assert len(pairs) == 4 and len(set(pairs)) == 4
        assert pairs[0] == (2, ORDER_NO_WAR) and pairs[1] == (2, nearest)
        assert pairs[2][1] == ORDER_NO_WAR and pairs[2][0] != 2
        assert all(q == 2 or w == ORDER_NO_WAR for q, w in pairs)  # neighbours only
        thirds.add(pairs[2])
        p, t, picks = draw_candidates(st, drawn, board, np.int64(seat),
                                      np.array([key], dtype=np.uint64))
        seconds.add((int(p[picks[1]]), int(t[picks[1]])))
    assert len(thirds) > 1  # the plan change is drawn among the plans
    assert len(seconds) > 2  # off: the second candidate is drawn too

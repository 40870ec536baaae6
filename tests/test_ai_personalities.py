"""D8: a personality is a whole AI parameter set (shared `[ai.<part>]` defaults it
overrides), each seat plays its own, and the AI reads the score (T10, T13)."""

from __future__ import annotations

import numpy as np
import pytest

from sim.engine.match import play_match
from sim.rules.codes import COL_KIND, COL_TURN, EV_VICTORY, PERSONALITY_WEIGHTS
from sim.rules.record import AI_KEYS
from sim.rules.schema import AI_PARTS
from sim.rules.tables import DEFAULT_TABLES, TablesError, load_tables


@pytest.fixture(scope="module")
def defaults():
    return load_tables(DEFAULT_TABLES)


def test_d8_each_personality_is_the_shared_values_with_its_own_overrides(defaults):
    m = defaults.model
    tb = defaults.arrays()
    names = defaults.personality_names
    overridden = 0
    for p, name in enumerate(names):
        own = m.ai.personalities[name]
        assert list(tb.ai[p]["weights"]) == [getattr(own.weights, w) for w in PERSONALITY_WEIGHTS]
        for part, key, _flag in AI_KEYS:
            override = getattr(own, part)
            mine = None if override is None else getattr(override, key)
            expected = getattr(getattr(m.ai, part), key) if mine is None else mine
            assert tb.ai[p][key] == int(expected), (name, part, key)
            overridden += mine is not None
    assert overridden > 0   # the default personalities differ by more than their weights


def test_d8_a_shared_value_moves_every_personality_that_does_not_override_it(defaults):
    key = "war_turn_pct"
    variant = defaults.with_overrides({"ai.war.war_turn_pct": 5}).arrays()
    for p, name in enumerate(defaults.personality_names):
        war = defaults.model.ai.personalities[name].war
        own = None if war is None else war.war_turn_pct
        assert variant.ai[p][key] == (5 if own is None else own), name


def test_d8_an_unknown_override_names_its_key(defaults):
    with pytest.raises(TablesError, match="no_such_key"):
        defaults.with_overrides({"ai.personalities.conqueror.war.no_such_key": 1})
    with pytest.raises(TablesError, match="personalities"):
        defaults.with_overrides({"ai.personalities.conqueror.nowhere": {"x": 1}})


def test_d8_every_ai_part_can_be_overridden():
    assert {part for part, _key, _flag in AI_KEYS} == set(AI_PARTS)


def _events(tables, personalities, match_index=0):
    st, _board, _log = play_match(tables, 5, match_index, n_seats=2, length="short",
                                  personalities=personalities)
    return st, st.event_log[: st.n_events[0]].copy()


def test_d8_a_seat_plays_its_own_personality(defaults):
    """A change to one personality's values changes play only where a seat plays it."""
    variant = defaults.with_overrides({"ai.personalities.hegemon.war.war_turn_pct": 5,
                                       "ai.personalities.hegemon.army.army_base_pct": 900})
    changed = 0
    for i in range(4):
        _a, base = _events(defaults, ["balanced", "scholar"], i)
        _b, same = _events(variant, ["balanced", "scholar"], i)
        assert np.array_equal(base, same)         # no seat plays the hegemon: inert
        _c, with_h = _events(defaults, ["balanced", "hegemon"], i)
        _d, with_h2 = _events(variant, ["balanced", "hegemon"], i)
        changed += not np.array_equal(with_h, with_h2)
    assert changed >= 3


def test_d8_t13_score_weights_change_play_before_the_last_turn(defaults):
    """The AI reads the score: a region weight change moves what happens during the
    match, not only the final count (issue 11)."""
    variant = defaults.with_overrides({"score.w_region": 2})
    differs = 0
    for i in range(6):
        st, base = _events(defaults, ["merchant", "balanced"], i)
        _st2, other = _events(variant, ["merchant", "balanced"], i)
        last = int(st.last_turn[0])

        def before_end(ev, last=last):
            return ev[(ev[:, COL_TURN] < last) & (ev[:, COL_KIND] != EV_VICTORY)]

        a, b = before_end(base), before_end(other)
        differs += a.shape != b.shape or not np.array_equal(a, b)
    assert differs >= 3
